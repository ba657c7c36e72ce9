package adapters

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Cline is the Cline CLI adapter (npm `cline`, 3.0.x).
//
// A session is ~/.cline/data/sessions/<id>/<id>.messages.json, one JSON
// document {"version","sessionId","messages":[…]} rewritten whole after
// every step, beside a manifest <id>.json (cwd, prompt, status, pid).
// Messages are Anthropic-like: role user|assistant, content blocks text,
// tool_use {id,name,input}, tool_result {tool_use_id,name,content,is_error};
// a run_commands result is an array of {query,result,error,success}. Rows
// are keyed by the message id plus the block index, which survive the
// rewrites. Seen with 3.0.65 run headless against a fake Chat Completions
// server.
//
// Hooks are executable files named after events in ~/.cline/hooks; the JSON
// on stdin carries sessionContext.rootSessionId and workspaceRoots but no
// transcript path, and TaskStart's output does not reach the model: restore
// goes through the AGENTS.md pointer block (specs row pointer = true).
var Cline Adapter = cline{}

var clineAgent = &Agent{
	Name:     "cline",
	Display:  "Cline CLI",
	Aliases:  []string{"cline-cli"},
	Adapter:  Cline,
	Lister:   clineLister{},
	Envelope: EnvelopeNone,
	Format: Format{Newest: "3.0.65", Version: JSONVersion, Shapes: []string{
		"Cline CLI 3.0.x sessions/<id>/<id>.messages.json (one document, Anthropic-like content blocks) + <id>.json manifest",
	}},
	// Hook file names of 3.0.65 (hookName in the payload: agent_start,
	// tool_call, tool_result, agent_end, …).
	Events: map[string]Class{
		"TaskStart": ClassStart, "TaskResume": ClassStart, "UserPromptSubmit": ClassPrompt,
		"PreToolUse": ClassTool, "PostToolUse": ClassTool,
		"TaskComplete": ClassStop, "TaskCancel": ClassEnd, "PreCompact": ClassCompact,
	},
	Sniff: func(b []byte) bool {
		return containsAll(b, `"sessionId"`, `"messages"`) && containsAny(b, `"source":"cli"`, `"source": "cli"`) &&
			containsAny(b, `"agent":"lead"`, `"agent": "lead"`, `<user_input mode=`)
	},
	MemoryFile: "", // Cline reads AGENTS.md (and .clinerules)
}

var (
	_ StoreReader = cline{}
	_ Lister      = clineLister{}
)

type cline struct{}

func (cline) Name() string { return "cline" }

func (cline) ParseHook(event string, b []byte, env Env) (Hook, error) {
	p, err := decodePayload(b)
	if err != nil {
		return Hook{}, err
	}
	h := Hook{Tool: "cline", Event: event, SessionID: p.obj("sessionContext").str("rootSessionId")}
	if h.SessionID == "" {
		h.SessionID = p.str("taskId")
	}
	var roots []string
	if raw, ok := p["workspaceRoots"]; ok && json.Unmarshal(raw, &roots) == nil && len(roots) > 0 {
		h.Cwd = roots[0]
	}
	if h.Cwd == "" {
		h.Cwd = p.obj("workspaceInfo").str("rootPath")
	}
	if h.Event == "" {
		h.Event = p.str("hookName")
	}
	return h, nil
}

// clineHome is Cline's data folder: CLINE_DATA_DIR, else ~/.cline/data.
func clineHome(env Env) string {
	return envOr(env, "CLINE_DATA_DIR", filepath.Join(env.Home, ".cline", "data"))
}

// clineDocMax bounds a document read whole (a planted huge file must not
// exhaust memory; real sessions are well under a few MB).
const clineDocMax = 256 << 20

// ReadStore reads the session document: h.TranscriptPath when given
// (`handoff --transcript`), else sessions/<id>/<id>.messages.json.
func (cline) ReadStore(h Hook, env Env) ([]Row, error) {
	path := h.TranscriptPath
	if path == "" {
		if !safeID(h.SessionID) {
			return nil, fmt.Errorf("session id is not a Cline session id")
		}
		path = filepath.Join(clineHome(env), "sessions", h.SessionID, h.SessionID+".messages.json")
	}
	b, err := readClineDoc(path)
	if err != nil {
		return nil, err
	}
	return parseClineDoc(b)
}

func readClineDoc(path string) ([]byte, error) { return readDocument(path, clineDocMax) }

type clineDoc struct {
	SessionID string         `json:"sessionId"`
	UpdatedAt string         `json:"updated_at"`
	Messages  []clineMessage `json:"messages"`
}

type clineMessage struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	TS      int64           `json:"ts"`
	Metrics *struct {
		Input int64 `json:"inputTokens"`
	} `json:"metrics"`
}

type clineBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// parseClineDoc turns a document into rows; a document that is not JSON is
// an error (it may be mid-rewrite: the next event reads it again).
func parseClineDoc(b []byte) ([]Row, error) {
	var d clineDoc
	if json.Unmarshal(b, &d) != nil {
		return nil, errorString("the Cline session document is not JSON (caught mid-rewrite, or not Cline's); run the command again")
	}
	var rows []Row
	for i, m := range d.Messages {
		key := m.ID
		if key == "" {
			key = "m" + strconv.Itoa(i) // older or foreign shapes: position
		}
		rows = append(rows, clineRows(m, key)...)
	}
	return rows, nil
}

func clineBlocks(raw json.RawMessage) []clineBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []clineBlock{{Type: "text", Text: s}}
	}
	var bs []clineBlock
	_ = json.Unmarshal(raw, &bs)
	return bs
}

func clineRows(m clineMessage, key string) []Row {
	t := time.Time{}
	if m.TS > 0 {
		t = time.UnixMilli(m.TS).UTC()
	}
	blocks := clineBlocks(m.Content)
	anyWrapped := slices.ContainsFunc(blocks, func(b clineBlock) bool {
		_, w := clineUnwrap(b.Text)
		return w && b.Type == "text"
	})
	var rows []Row
	for i, b := range blocks {
		if r, ok := clineBlockRow(m.Role, b, key+"."+strconv.Itoa(i), t, anyWrapped); ok {
			rows = append(rows, r)
		}
	}
	if m.Metrics != nil && m.Metrics.Input > 0 {
		rows = append(rows, Row{Key: key + ".usage", Time: t, Role: "system", Kind: KindUsage, TokensUsed: m.Metrics.Input})
	}
	return rows
}

// clineBlockRow is the row of one content block (key k) of a message by
// role; anyWrapped says whether the message holds a <user_input> prompt.
func clineBlockRow(role string, b clineBlock, k string, t time.Time, anyWrapped bool) (Row, bool) {
	switch {
	case b.Type == "text" && role == "user":
		return clineUserText(b.Text, k, t, anyWrapped)
	case b.Type == "text" && role == "assistant" && strings.TrimSpace(b.Text) != "":
		return Row{Key: k, Time: t, Role: "assistant", Kind: KindText, Text: clip(b.Text, maxText)}, true
	case b.Type == "tool_use" && b.Name != "":
		r := Row{Key: k, Time: t, Role: "assistant", Kind: KindToolCall, ToolName: b.Name, CallID: firstNonEmpty(b.ID, k)}
		r.Command, r.FilePath = clineToolArgs(b.Name, b.Input)
		return r, true
	case b.Type == "tool_result":
		return clineResult(b, k, t), true
	}
	return Row{}, false
}

// clineUserText reads a user's text block. A message holding the
// <user_input> wrapper is a typed prompt and its other text blocks are
// what Cline adds beside it (environment details, mode notices: context,
// not the request); a message without one (older shapes) is taken as
// typed.
func clineUserText(text, k string, t time.Time, anyWrapped bool) (Row, bool) {
	s, wrapped := clineUnwrap(text)
	kind, n := KindPrompt, maxPrompt
	switch {
	case strings.TrimSpace(s) == "":
		return Row{}, false
	case IsCarryoverText(s):
		kind, n = KindInjection, maxText
	case anyWrapped && !wrapped:
		kind, n = KindHarness, maxText
	}
	return Row{Key: k, Time: t, Role: "user", Kind: kind, Text: clip(s, n)}, true
}

// clineUnwrap strips <user_input mode="…">…</user_input>, the wrapper every
// prompt typed by the user arrives in (3.0.65), and reports whether it was
// there.
func clineUnwrap(s string) (string, bool) {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "<user_input") {
		return s, false
	}
	end := strings.IndexByte(t, '>')
	if end < 0 {
		return s, false
	}
	t = t[end+1:]
	if i := strings.LastIndex(t, "</user_input>"); i >= 0 {
		t = t[:i]
	}
	return strings.TrimSpace(t), true
}

// clineToolArgs reads the command a run_commands call runs (its commands,
// joined by newlines) and the file an editor or apply_patch call writes.
func clineToolArgs(name string, raw json.RawMessage) (cmd, file string) {
	var in struct {
		Commands json.RawMessage `json:"commands"`
		Path     string          `json:"path"`
		Input    string          `json:"input"`
	}
	_ = json.Unmarshal(raw, &in)
	switch name {
	case "run_commands":
		var cs []json.RawMessage
		if json.Unmarshal(in.Commands, &cs) != nil {
			cs = []json.RawMessage{in.Commands}
		}
		var parts []string
		for _, c := range cs {
			var s string
			var o struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			}
			switch {
			case json.Unmarshal(c, &s) == nil:
				parts = append(parts, s)
			case json.Unmarshal(c, &o) == nil && o.Command != "":
				parts = append(parts, strings.Join(append([]string{o.Command}, o.Args...), " "))
			}
		}
		cmd = clip(strings.Join(parts, "\n"), maxResult)
	case "editor":
		file = in.Path
	case "apply_patch":
		// "*** Add File: p" / "*** Update File: p": the first file named
		for _, ln := range strings.Split(in.Input, "\n") {
			for _, pre := range []string{"*** Add File: ", "*** Update File: "} {
				if strings.HasPrefix(ln, pre) && file == "" {
					file = strings.TrimSpace(ln[len(pre):])
				}
			}
		}
	}
	return cmd, file
}

// clineResult reads a tool_result: content a string (a JSON {"error":…}
// when the call was rejected), or run_commands' array of
// {query,result,error,success}.
func clineResult(b clineBlock, k string, t time.Time) Row {
	r := Row{Key: k, Time: t, Role: "tool", Kind: KindToolResult, ToolName: b.Name, CallID: b.ToolUseID}
	var s string
	var items []clineResultItem
	failed := b.IsError
	switch {
	case json.Unmarshal(b.Content, &s) == nil:
		r.Text = s
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal([]byte(s), &e) == nil && e.Error != "" {
			failed, r.Text = true, e.Error
		}
	case json.Unmarshal(b.Content, &items) == nil:
		if clineItems(&r, items) {
			failed = true
		}
	default:
		for _, blk := range clineBlocks(b.Content) {
			r.Text += blk.Text
		}
	}
	if failed {
		r.Kind = KindError
	}
	r.Text = clip(r.Text, maxResult)
	return r
}

// clineResultItem is one command's or query's result in a tool result.
type clineResultItem struct {
	Query   string `json:"query"`
	Result  string `json:"result"`
	Error   string `json:"error"`
	Success *bool  `json:"success"`
}

// clineItems gives r the items' results (or errors) and the first exit
// code, and reports whether one failed.
func clineItems(r *Row, items []clineResultItem) (failed bool) {
	var parts []string
	for _, it := range items {
		if it.Success != nil && !*it.Success || it.Error != "" {
			failed = true
		}
		parts = append(parts, firstNonEmpty(it.Result, it.Error))
		// "[Command exited with code 2]" heads a failing command's result
		if n, ok := clineExit(it.Error + "\n" + it.Result); ok && r.ExitCode == nil {
			r.ExitCode = &n
		}
	}
	r.Text = strings.Join(parts, "\n")
	return failed
}

// clineExit finds "exited with code N" in a command result.
func clineExit(s string) (int, bool) {
	const m = "exited with code "
	i := strings.Index(s, m)
	if i < 0 {
		return 0, false
	}
	j := i + len(m)
	k := j
	for k < len(s) && (s[k] >= '0' && s[k] <= '9' || k == j && s[k] == '-') {
		k++
	}
	n, err := strconv.Atoi(s[j:k])
	return n, err == nil
}

// clineLister lists <data>/sessions/*/*.messages.json, recognised by
// content (a document with sessionId and messages), the project from the
// manifest beside it.
type clineLister struct{}

func (clineLister) Stores(env Env) []string {
	return []string{filepath.Join(clineHome(env), "sessions")}
}

func (l clineLister) ListSessions(env Env, project string) ([]NativeSession, error) {
	files, _ := filepath.Glob(filepath.Join(globEscape(clineHome(env)), "sessions", "*", "*.messages.json"))
	return describeAll(env, "cline", files, project, l.Describe), nil
}

type clineManifest struct {
	SessionID string `json:"session_id"`
	Cwd       string `json:"cwd"`
	Workspace string `json:"workspace_root"`
	Prompt    string `json:"prompt"`
	StartedAt string `json:"started_at"`
	EndedAt   string `json:"ended_at"`
}

func (clineLister) Describe(path string) (NativeSession, error) {
	b, err := readClineDoc(path)
	if err != nil {
		return NativeSession{}, err
	}
	var d clineDoc
	if json.Unmarshal(b, &d) != nil || d.SessionID == "" || d.Messages == nil {
		return NativeSession{}, errNoSession
	}
	s := NativeSession{Tool: "cline", Path: path, ID: d.SessionID}
	for _, m := range d.Messages {
		clineNoteMessage(&s, m)
	}
	var mf clineManifest
	if mb, err := readClineDoc(filepath.Join(filepath.Dir(path), d.SessionID+".json")); err == nil && json.Unmarshal(mb, &mf) == nil {
		s.Project = firstNonEmpty(mf.Workspace, mf.Cwd)
	}
	if s.LastActive.IsZero() {
		if t, err := time.Parse(time.RFC3339Nano, d.UpdatedAt); err == nil {
			s.LastActive = t
		} else if fi, err := os.Stat(path); err == nil {
			s.LastActive = fi.ModTime()
		}
	}
	return s, nil
}

// clineNoteMessage counts a message, takes the first prompt as the
// preview and the newest time as the last activity.
func clineNoteMessage(s *NativeSession, m clineMessage) {
	if m.Role == "user" || m.Role == "assistant" {
		s.MessageCount++
	}
	if s.Preview == "" && m.Role == "user" {
		if p, ok := firstPrompt(clineRows(m, "")); ok {
			s.Preview = preview(p)
		}
	}
	if t := time.UnixMilli(m.TS).UTC(); m.TS > 0 && t.After(s.LastActive) {
		s.LastActive = t
	}
}
