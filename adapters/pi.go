package adapters

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Pi is the Pi coding agent adapter (@mariozechner/pi-coding-agent).
//
// A session is append-only JSONL at
// $PI_CODING_AGENT_DIR|~/.pi/agent/sessions/--<cwd with / as ->--/<ts>_<uuid>.jsonl:
// a header line {"type":"session","version":3,"id":<uuid>,"cwd":…} then
// entries forming a tree by id/parentId (type message, compaction,
// branch_summary, custom_message, model_change, …). A message entry carries
// an AgentMessage: role user|assistant|toolResult|bashExecution|custom|
// branchSummary|compactionSummary. Rows are keyed by the entry id plus the
// content block's index. Every entry is read in file order, abandoned
// branches included (a line parser sees no leaf). Format from 0.73.1's
// docs/session-format.md and dist/core/tools (bash, edit, write).
var Pi Adapter = pi{}

var piAgent = &Agent{
	Name:    "pi",
	Display: "Pi",
	Aliases: []string{"pi-coding-agent"},
	Adapter: Pi,
	Lister:  piLister{},
	// Pi has no command hooks: install writes a TS extension
	// (specs/hookfiles/pi-extension.ts) relaying Pi's events to `carryover
	// snapshot`. Its before_agent_start, at a session's first prompt, is
	// "SessionStart": it reads {"additionalContext": T} and returns
	// {message:{customType:"carryover",content:T,display:false}}, which
	// reaches the model and is stored as a custom_message entry (the
	// receipt); checked with 0.73.1 -p against a fake server.
	Envelope: EnvelopeFlatCamel,
	Format: Format{Newest: "0.73.1", Shapes: []string{
		"Pi 0.73.x session JSONL v3 (session header, id/parentId entry tree, message roles user/assistant/toolResult/bashExecution/custom)",
	}},
	// Claude Code's names on carryover's side for the extension's relays:
	// before_agent_start (first prompt) is SessionStart, agent_end is Stop,
	// session_before_compact is PreCompact and session_shutdown is
	// SessionEnd (the payload's "pi_event" keeps Pi's name).
	Events: map[string]Class{
		"SessionStart": ClassStart, "Stop": ClassStop, "PreCompact": ClassCompact, "SessionEnd": ClassEnd,
	},
	Sniff: func(b []byte) bool {
		return containsAll(b, `"type":"session"`, `"version":`, `"cwd":`) || containsAll(b, `"type":"message"`, `"parentId":`, `"message":{"role":`)
	},
	Launch:        []string{"pi"},
	ContextWindow: 128_000,
	MemoryFile:    "AGENTS.md",
	CreateTools:   []string{"write"},
}

var (
	_ LineParser = pi{}
	_ Lister     = piLister{}
)

type pi struct{}

func (pi) Name() string { return "pi" }

// ParseHook reads the JSON carryover's Pi extension writes on stdin:
// session_id, session_file, cwd, pi_event (Pi's own event name), reason
// and, for before_agent_start, prompt.
func (pi) ParseHook(event string, b []byte, env Env) (Hook, error) {
	p, err := decodePayload(b)
	if err != nil {
		return Hook{}, err
	}
	h := Hook{Tool: "pi", Event: event, SessionID: p.str("session_id"), TranscriptPath: p.str("session_file"),
		Cwd: p.str("cwd"), Source: p.str("reason"), Prompt: p.str("prompt")}
	if h.Event == "" {
		h.Event = p.str("event")
	}
	return h, nil
}

// piHome is Pi's agent folder: PI_CODING_AGENT_DIR, else ~/.pi/agent.
func piHome(env Env) string {
	return envOr(env, "PI_CODING_AGENT_DIR", filepath.Join(env.Home, ".pi", "agent"))
}

// Transcripts is the payload's session file; without one the session is
// looked up by id (files are named <timestamp>_<id>.jsonl).
func (pi) Transcripts(h Hook, env Env) []Transcript {
	if h.TranscriptPath != "" {
		return []Transcript{{Path: h.TranscriptPath, SessionID: h.SessionID, MaybeMissing: true}}
	}
	if !safeID(h.SessionID) || (env.Home == "" && env.Getenv == nil) {
		return nil
	}
	m, _ := filepath.Glob(filepath.Join(globEscape(piHome(env)), "sessions", "*", "*_"+h.SessionID+".jsonl"))
	if len(m) == 0 {
		return nil
	}
	return []Transcript{{Path: m[len(m)-1], SessionID: h.SessionID}}
}

// piExitRe is the status line Pi's bash tool appends to a failing
// command's output (dist/core/tools/bash.js, 0.73.1).
var piExitRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\nCommand exited with code (\d+)\s*$`) })

type piBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type piMessage struct {
	Role         string          `json:"role"`
	Content      json.RawMessage `json:"content"`
	StopReason   string          `json:"stopReason"`
	ErrorMessage string          `json:"errorMessage"`
	Usage        *struct {
		Input     int64 `json:"input"`
		CacheRead int64 `json:"cacheRead"`
	} `json:"usage"`
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
	IsError    bool   `json:"isError"`
	// bashExecution (a `!command` the user ran)
	Command   string `json:"command"`
	Output    string `json:"output"`
	ExitCode  *int   `json:"exitCode"`
	Cancelled bool   `json:"cancelled"`
	// branchSummary, compactionSummary
	Summary string `json:"summary"`
}

type piEntry struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	Cwd       string          `json:"cwd"`
	Message   *piMessage      `json:"message"`
	Content   json.RawMessage `json:"content"` // custom_message
	Summary   string          `json:"summary"` // compaction, branch_summary
}

// piContent is a content field that is a string or a list of blocks.
func piContent(raw json.RawMessage) []piBlock {
	if len(raw) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []piBlock{{Type: "text", Text: s}}
	}
	var bs []piBlock
	_ = json.Unmarshal(raw, &bs)
	return bs
}

func piText(raw json.RawMessage) string {
	var out []string
	for _, b := range piContent(raw) {
		if b.Type == "text" && b.Text != "" {
			out = append(out, b.Text)
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// ParseLine decodes one session line. Entries without an id (the header,
// foreign lines) fall back to the byte offset.
func (pi) ParseLine(line []byte, off int64) ([]Row, error) {
	var e piEntry
	if json.Unmarshal(line, &e) != nil {
		return nil, nil
	}
	t, _ := time.Parse(time.RFC3339Nano, e.Timestamp)
	key := e.ID
	if key == "" {
		key = strconv.FormatInt(off, 10)
	}
	switch e.Type {
	case "message":
		if e.Message != nil {
			return piMessageRows(*e.Message, key, t), nil
		}
	case "compaction":
		return []Row{{Key: key, Time: t, Role: "system", Kind: KindCompaction, Text: "context compacted"}}, nil
	case "branch_summary":
		// the user moved to another branch of the tree; what was left is summarised
		return []Row{{Key: key, Time: t, Role: "system", Kind: KindCompaction, Text: clip(e.Summary, maxText)}}, nil
	case "custom_message":
		return piCustom(piText(e.Content), key, t), nil
	}
	return nil, nil
}

// piCustom is a message an extension added to the context: carryover's own
// handoff is the delivery receipt, anything else is the harness speaking.
func piCustom(s, key string, t time.Time) []Row {
	switch {
	case s == "":
		return nil
	case IsCarryoverText(s):
		return []Row{{Key: key, Time: t, Role: "user", Kind: KindInjection, Text: clip(s, maxText)}}
	default:
		return []Row{{Key: key, Time: t, Role: "user", Kind: KindHarness, Text: clip(s, maxText)}}
	}
}

func piMessageRows(m piMessage, key string, t time.Time) []Row {
	if read := piRoles[m.Role]; read != nil {
		return read(m, key, t)
	}
	return nil
}

// piRoles reads a message of each role into rows.
var piRoles = map[string]func(m piMessage, key string, t time.Time) []Row{
	"user":              piUser,
	"custom":            func(m piMessage, key string, t time.Time) []Row { return piCustom(piText(m.Content), key, t) },
	"assistant":         piAssistant,
	"toolResult":        piToolResult,
	"bashExecution":     piBash,
	"compactionSummary": piSummary,
	"branchSummary":     piSummary,
}

func piUser(m piMessage, key string, t time.Time) []Row {
	s := piText(m.Content)
	switch {
	case s == "":
		return nil
	case IsCarryoverText(s):
		return []Row{{Key: key, Time: t, Role: "user", Kind: KindInjection, Text: clip(s, maxText)}}
	}
	return []Row{{Key: key, Time: t, Role: "user", Kind: KindPrompt, Text: clip(s, maxPrompt)}}
}

func piToolResult(m piMessage, key string, t time.Time) []Row {
	r := Row{Key: key, Time: t, Role: "tool", Kind: KindToolResult, ToolName: m.ToolName, CallID: m.ToolCallID,
		Text: clip(piText(m.Content), maxResult)}
	if m.IsError {
		// bash throws "…\n\nCommand exited with code N" for a non-zero
		// exit, so a failing command is isError (0.73.1)
		r.Kind = KindError
		if m := piExitRe().FindStringSubmatch(r.Text); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil {
				r.ExitCode = &n
			}
		}
	}
	return []Row{r}
}

// piBash is a bashExecution message: the command, then its outcome.
func piBash(m piMessage, key string, t time.Time) []Row {
	call := Row{Key: key + ".call", Time: t, Role: "user", Kind: KindToolCall, ToolName: "bash", CallID: key, Command: clip(m.Command, maxResult)}
	res := Row{Key: key, Time: t, Role: "tool", Kind: KindToolResult, ToolName: "bash", CallID: key, ExitCode: m.ExitCode, Text: clip(m.Output, maxResult)}
	switch {
	case m.Cancelled:
		res.Kind = KindInterrupted
	case m.ExitCode != nil && *m.ExitCode != 0:
		res.Kind = KindError
	}
	return []Row{call, res}
}

func piSummary(m piMessage, key string, t time.Time) []Row {
	return []Row{{Key: key, Time: t, Role: "system", Kind: KindCompaction, Text: clip(m.Summary, maxText)}}
}

func piAssistant(m piMessage, key string, t time.Time) []Row {
	var rows []Row
	for i, b := range piContent(m.Content) {
		k := key + "." + strconv.Itoa(i)
		switch {
		case b.Type == "toolCall" && b.Name != "":
			rows = append(rows, piToolCall(b, k, t))
		case b.Type == "text" && strings.TrimSpace(b.Text) != "":
			rows = append(rows, Row{Key: k, Time: t, Role: "assistant", Kind: KindText, Text: clip(b.Text, maxText)})
		}
	}
	switch m.StopReason {
	case "error":
		text := firstNonEmpty(m.ErrorMessage, "model error")
		rows = append(rows, Row{Key: key + ".err", Time: t, Role: "system", Kind: KindError, ToolName: "model API",
			Text: clip(text, maxResult), Limit: LimitFromError(text, 0, t)})
	case "aborted":
		rows = append(rows, Row{Key: key + ".abort", Time: t, Role: "system", Kind: KindInterrupted, Text: "aborted"})
	}
	if u := m.Usage; u != nil && u.Input+u.CacheRead > 0 {
		rows = append(rows, Row{Key: key + ".usage", Time: t, Role: "system", Kind: KindUsage, TokensUsed: u.Input + u.CacheRead})
	}
	return rows
}

// piToolCall is the row of a toolCall block; edit and write name their
// file.
func piToolCall(b piBlock, k string, t time.Time) Row {
	var args struct {
		Command string `json:"command"`
		Path    string `json:"path"`
	}
	_ = json.Unmarshal(b.Arguments, &args)
	r := Row{Key: k, Time: t, Role: "assistant", Kind: KindToolCall, ToolName: b.Name, CallID: firstNonEmpty(b.ID, k), Command: clip(args.Command, maxResult)}
	if b.Name == "edit" || b.Name == "write" {
		r.FilePath = args.Path
	}
	return r
}

// piLister lists <pi agent dir>/sessions/*/*.jsonl.
type piLister struct{}

func (piLister) Stores(env Env) []string { return []string{filepath.Join(piHome(env), "sessions")} }

func (l piLister) ListSessions(env Env, project string) ([]NativeSession, error) {
	files, _ := filepath.Glob(filepath.Join(globEscape(piHome(env)), "sessions", "*", "*.jsonl"))
	return describeAll(env, "pi", files, project, l.Describe), nil
}

// Describe recognises a Pi session by its header line (type session with
// an id and a cwd), whatever the file is called.
func (piLister) Describe(path string) (NativeSession, error) {
	fs, err := sampleFile(path)
	if err != nil {
		return NativeSession{}, err
	}
	s := NativeSession{Tool: "pi", Path: path}
	for i, ln := range lines(fs.head) {
		var e piEntry
		if !jsonLine(ln, &e) {
			continue
		}
		if i == 0 {
			if e.Type != "session" || e.ID == "" {
				return s, errNoSession
			}
			s.ID, s.Project = e.ID, e.Cwd
			continue
		}
		if e.Type == "message" && e.Message != nil && e.Message.Role == "user" {
			if rows := piMessageRows(*e.Message, "", time.Time{}); len(rows) > 0 && rows[0].Kind == KindPrompt {
				s.Preview = preview(rows[0].Text)
				break
			}
		}
	}
	if s.ID == "" {
		return s, errNoSession
	}
	s.LastActive = fs.lastActive()
	s.MessageCount, s.CountEstimated = countMessages(path, fs, []byte(`"role":"user"`), []byte(`"role":"assistant"`))
	return s, nil
}
