package adapters

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "github.com/mattn/go-sqlite3" // read-only access to Cursor's state.vscdb
)

// CursorIDE is the Cursor IDE / cursor-agent adapter.
//
// Cursor ≥ ~Feb 2026 writes an agent transcript JSONL (messages and tool
// calls, no tool results, no ids, no timestamps): that is tailed
// (LineParser). Older IDE builds keep chats only in SQLite (state.vscdb,
// cursorDiskKV composerData:<id> / bubbleId:<id>:<bubble>): ReadStore reads
// those, but only for projects Cursor writes no transcripts for, so the two
// stores never both land in the ledger. Tool results, exit codes and edits
// come from the hook payloads themselves (Hook.Rows).
var CursorIDE Adapter = cursor{}

// cursorAgent is what carryover knows about the agent besides its files.
var cursorAgent = &Agent{
	Name:     "cursor",
	Display:  "Cursor",
	Aliases:  []string{"cursor-agent"},
	Adapter:  CursorIDE,
	Lister:   cursorLister{},
	Envelope: EnvelopeFlatSnake,
	Format: Format{Newest: "3.18.25", Shapes: []string{
		"Cursor agent-transcripts/*.jsonl (<user_query>, tool_use)",
		"Cursor state.vscdb (cursorDiskKV composerData + bubbleId rows, read-only)",
	}},
	Events: map[string]Class{
		"sessionStart": ClassStart, "beforeSubmitPrompt": ClassPrompt,
		"preToolUse": ClassTool, "postToolUse": ClassTool, "postToolUseFailure": ClassTool,
		"afterFileEdit": ClassTool, "afterShellExecution": ClassTool, "afterMCPExecution": ClassTool,
		"stop": ClassStop, "preCompact": ClassCompact, "sessionEnd": ClassEnd,
	},
	// An agent transcript (its prompts wrapped in <user_query>), or a state.vscdb whose schema has Cursor's table.
	Sniff: func(b []byte) bool {
		return containsAll(b, `"role":"user"`, `<user_query>`) || containsAll(b, "SQLite format 3\x00", "cursorDiskKV")
	},
	Launch:        []string{"cursor-agent"},
	ContextWindow: 64_000,
	CreateTools:   []string{"Write"},
	Instructions:  []string{".cursorrules"},
	ProjectEnv:    "CURSOR_PROJECT_DIR",
}

var (
	_ LineParser  = cursor{}
	_ StoreReader = cursor{}
)

type cursor struct{}

func (cursor) Name() string { return "cursor" }

func (cursor) ParseHook(event string, b []byte, env Env) (Hook, error) {
	p, err := decodePayload(b)
	if err != nil {
		return Hook{}, err
	}
	h := Hook{
		Tool:           "cursor",
		Event:          event,
		SessionID:      p.str("conversation_id", "session_id"),
		TranscriptPath: p.str("transcript_path"),
		Cwd:            p.str("cwd"),
		Prompt:         p.str("prompt"),
	}
	if h.Event == "" {
		h.Event = p.str("hook_event_name")
	}
	var roots []string
	_ = json.Unmarshal(p["workspace_roots"], &roots)
	if len(roots) > 0 && roots[0] != "" {
		h.Project = roots[0]
	} else if env.Getenv != nil {
		h.Project = env.Getenv("CURSOR_PROJECT_DIR")
	}
	if h.Cwd == "" {
		h.Cwd = h.Project
	}
	native := p.str("hook_event_name")
	if native == "" {
		native = h.Event
	}
	h.Rows = cursorHookRows(native, p)
	return h, nil
}

// cursorEditTools are tool names (hooks, transcript, SQLite) that change a file.
var cursorEditTools = map[string]bool{
	"Write": true, "StrReplace": true, "Edit": true, "MultiEdit": true, "Delete": true, "EditNotebook": true,
	"ApplyPatch": true, "edit_file": true, "edit_file_v2": true, "search_replace": true, "write": true,
	"reapply": true, "edit_notebook": true, "delete_file": true, "apply_patch": true,
}

var cursorShellTools = map[string]bool{
	"Shell": true, "run_terminal_cmd": true, "run_terminal_command": true, "run_terminal_command_v2": true,
}

// cursorCallID makes Cursor's tool_use_id (which contains a newline) safe.
func cursorCallID(id string) string {
	return strings.NewReplacer("\r", "", "\n", "|").Replace(strings.TrimSpace(id))
}

// cursorPayloadKey is stable for the same payload and differs between two
// tool runs that carry no id of their own.
func cursorPayloadKey(event string, b ...string) string {
	h := sha256.New()
	for _, s := range b {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return "hook:" + event + ":" + hex.EncodeToString(h.Sum(nil)[:8])
}

// cursorEditText is the new text an edit input carries (for TODO lines).
func cursorEditText(in map[string]any) string {
	var parts []string
	for _, k := range []string{"content", "contents", "new_string", "code_edit", "patch"} {
		if s, ok := in[k].(string); ok && s != "" {
			parts = append(parts, s)
		}
	}
	if edits, ok := in["edits"].([]any); ok {
		for _, e := range edits {
			if m, ok := e.(map[string]any); ok {
				if s, ok := m["new_string"].(string); ok {
					parts = append(parts, s)
				}
			}
		}
	}
	return clip(strings.Join(parts, "\n"), maxResult)
}

func cursorInputPath(in map[string]any) string {
	for _, k := range []string{"file_path", "path", "target_file", "relativeWorkspacePath", "target_notebook"} {
		if s, ok := in[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// cursorCall fills a tool call row from a tool name and its input.
func cursorCall(r Row, name string, in map[string]any) Row {
	r.Role, r.Kind, r.ToolName = "assistant", KindToolCall, name
	switch {
	case cursorEditTools[name]:
		r.FilePath = cursorInputPath(in)
		r.Text = cursorEditText(in)
	case cursorShellTools[name]:
		r.Command, _ = in["command"].(string)
		r.Command = clip(r.Command, maxResult)
		if d, ok := in["description"].(string); ok {
			r.Text = clip(d, 200)
		}
	}
	return r
}

// cursorHooks reads each hook event's payload into rows.
var cursorHooks = map[string]func(event string, p payload) []Row{
	"postToolUse":         cursorToolHook,
	"postToolUseFailure":  cursorToolHook,
	"afterShellExecution": cursorShellHook,
	"afterFileEdit":       cursorEditHook,
	"preCompact":          cursorCompactHook,
}

func cursorHookRows(event string, p payload) []Row {
	if read := cursorHooks[event]; read != nil {
		return read(event, p)
	}
	return nil
}

func cursorToolHook(event string, p payload) []Row {
	name := p.str("tool_name")
	if name == "" {
		return nil
	}
	id := cursorCallID(p.str("tool_use_id"))
	if id == "" {
		id = cursorPayloadKey(event, p.str("generation_id"), name, string(p["tool_input"]))
	}
	var in map[string]any
	_ = json.Unmarshal(p["tool_input"], &in)
	call := cursorCall(Row{Key: "hook:" + id, CallID: id}, name, in)
	res := Row{Key: "hook:" + id + "#result", Role: "tool", Kind: KindToolResult, ToolName: name, CallID: id}
	text := cursorHookOutput(&res, p.str("tool_output"))
	if event == "postToolUseFailure" {
		res.Kind = KindError
		text = firstNonEmpty(p.str("error_message", "error"), text)
	}
	if res.Kind == KindError {
		exitFromText(&res, text)
	}
	res.Text = clip(text, maxResult)
	return []Row{call, res}
}

// cursorHookOutput reads a tool's output, a JSON object ({output, stdout,
// error or message; exitCode; success}) or plain text, into res's exit
// code and failure, and returns its text.
func cursorHookOutput(res *Row, out string) string {
	var o payload
	if json.Unmarshal([]byte(out), &o) != nil || o == nil {
		return out
	}
	text := firstNonEmpty(o.str("output", "stdout", "error", "message"), out)
	if n, ok := o.num("exitCode", "exit_code"); ok {
		exitWith(res, n)
	}
	if raw, ok := o["success"]; ok && strings.TrimSpace(string(raw)) == "false" {
		res.Kind = KindError
	}
	return text
}

func cursorShellHook(event string, p payload) []Row {
	cmd := p.str("command")
	if cmd == "" {
		return nil
	}
	id := cursorPayloadKey(event, p.str("conversation_id"), p.str("generation_id"), cmd, p.str("output"), string(p["duration"]))
	call := Row{Key: id, CallID: id, Role: "assistant", Kind: KindToolCall, ToolName: "Shell", Command: clip(cmd, maxResult)}
	res := Row{Key: id + "#result", CallID: id, Role: "tool", Kind: KindToolResult, ToolName: "Shell", Text: clip(p.str("output"), maxResult)}
	if n, ok := p.num("exit_code", "exitCode"); ok {
		exitWith(&res, n)
	}
	return []Row{call, res}
}

func cursorEditHook(event string, p payload) []Row {
	path := p.str("file_path")
	if path == "" {
		return nil
	}
	id := cursorPayloadKey(event, p.str("conversation_id"), p.str("generation_id"), path, string(p["edits"]))
	var in map[string]any
	_ = json.Unmarshal([]byte(`{"edits":`+string(orNull(p["edits"]))+`}`), &in)
	return []Row{{Key: id, CallID: id, Role: "assistant", Kind: KindToolCall, ToolName: "afterFileEdit", FilePath: path, Text: cursorEditText(in)}}
}

func cursorCompactHook(event string, p payload) []Row {
	id := cursorPayloadKey(event, p.str("conversation_id"), p.str("generation_id"), string(p["context_tokens"]), p.str("trigger"))
	r := Row{Key: id, Role: "system", Kind: KindCompaction, Text: "context compacted"}
	if t := p.str("trigger"); t != "" {
		r.Text += " (" + t + ")"
	}
	return []Row{r}
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// cursorSlug is Cursor's project directory name: the absolute workspace
// path without its leading "/", every non-alphanumeric byte replaced by "-".
func cursorSlug(project string) string {
	s := strings.TrimPrefix(filepath.ToSlash(project), "/")
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

func cursorSafeID(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, "/\\\x00\n")
}

// cursorTranscriptDir is ~/.cursor/projects/<slug>/agent-transcripts.
func cursorTranscriptDir(h Hook, env Env) string {
	if h.Project == "" || env.Home == "" {
		return ""
	}
	return filepath.Join(env.Home, ".cursor", "projects", cursorSlug(h.Project), "agent-transcripts")
}

// Transcripts is the hook's transcript_path, else the IDE layout
// (<id>/<id>.jsonl) or the CLI one (<id>.jsonl; the CLI never sends a
// path), plus subagent transcripts below the parent.
func (cursor) Transcripts(h Hook, env Env) []Transcript {
	var main []string
	if h.TranscriptPath != "" {
		main = []string{h.TranscriptPath}
	} else if dir := cursorTranscriptDir(h, env); dir != "" && cursorSafeID(h.SessionID) {
		ide := filepath.Join(dir, h.SessionID, h.SessionID+".jsonl")
		cli := filepath.Join(dir, h.SessionID+".jsonl")
		switch {
		case fileExistsRegular(ide):
			main = []string{ide}
		case fileExistsRegular(cli):
			main = []string{cli}
		default:
			main = []string{ide, cli}
		}
	}
	var ts []Transcript
	for _, m := range main {
		ts = append(ts, Transcript{Path: m, SessionID: h.SessionID, MaybeMissing: true})
		subs, _ := filepath.Glob(filepath.Join(filepath.Dir(m), "subagents", "*.jsonl"))
		for _, s := range subs {
			ts = append(ts, Transcript{Path: s, SessionID: h.SessionID, Sidechain: true})
		}
	}
	return ts
}

func fileExistsRegular(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

type cursorLine struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Status  string `json:"status"`
	Error   string `json:"error"`
	Message *struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

type cursorBlock struct {
	Type  string         `json:"type"`
	Text  string         `json:"text"`
	Name  string         `json:"name"`
	Input map[string]any `json:"input"`
}

// The regexps are compiled at first use, not at process start: the hook
// process of every other agent never needs them.
var (
	cursorQueryRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?s)<user_query>\s*(.*?)\s*</user_query>`)
	})
	cursorStampRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)<timestamp>.*?</timestamp>`) })
)

// ParseLine reads one agent-transcript line. Lines carry no ids and no
// timestamps: keys are byte offsets (the file is append-only).
func (cursor) ParseLine(line []byte, off int64) ([]Row, error) {
	var l cursorLine
	if json.Unmarshal(line, &l) != nil {
		return nil, nil
	}
	key := "off:" + strconv.FormatInt(off, 10)
	if l.Type == "turn_ended" {
		return cursorTurnEnded(&l, key), nil
	}
	if l.Message == nil || (l.Role != "user" && l.Role != "assistant") {
		return nil, nil
	}
	var blocks []cursorBlock
	if json.Unmarshal(l.Message.Content, &blocks) != nil {
		var s string
		if json.Unmarshal(l.Message.Content, &s) != nil {
			return nil, nil
		}
		blocks = []cursorBlock{{Type: "text", Text: s}}
	}
	var rows []Row
	for i := range blocks {
		k := key
		if i > 0 {
			k = key + "#" + strconv.Itoa(i)
		}
		rows = cursorBlockRows(rows, l.Role, k, &blocks[i])
	}
	return rows, nil
}

// cursorTurnEnded is the error a turn ended with, if it did.
func cursorTurnEnded(l *cursorLine, key string) []Row {
	if l.Status != "error" {
		return nil
	}
	text := firstNonEmpty(l.Error, "turn ended with an error")
	return []Row{{Key: key, Role: "system", Kind: KindError, Text: clip(text, maxResult)}}
}

// cursorBlockRows appends the rows of one content block to rows.
func cursorBlockRows(rows []Row, role, k string, b *cursorBlock) []Row {
	switch {
	case role == "user" && b.Type == "text":
		return append(rows, cursorUserText(k, b.Text)...)
	case role == "assistant" && b.Type == "text" && strings.TrimSpace(b.Text) != "":
		return append(rows, Row{Key: k, Role: "assistant", Kind: KindText, Text: clip(b.Text, maxText)})
	case role == "assistant" && b.Type == "tool_use" && b.Name != "":
		return append(rows, cursorTranscriptCall(k, b))
	}
	return rows
}

// cursorTranscriptCall is a transcript's tool call. A transcript has no results, so a call that edits or runs nothing
// (a read, a search) keeps what it was about, its path or query: else it leaves no trace in the conversation.
func cursorTranscriptCall(k string, b *cursorBlock) Row {
	r := cursorCall(Row{Key: k}, b.Name, b.Input)
	if r.Text != "" || r.FilePath != "" || r.Command != "" {
		return r
	}
	q, _ := b.Input["query"].(string)
	p, _ := b.Input["pattern"].(string)
	r.Text = cmp.Or(q, p)
	if path := cursorInputPath(b.Input); path != "" {
		r.Text = strings.TrimPrefix(r.Text+" in "+path, " in ")
	}
	r.Text = clip(r.Text, 200)
	return r
}

// cursorUserText splits a user message into carryover's own handoff (an
// injection receipt) and the real request inside <user_query>.
func cursorUserText(key, text string) []Row {
	var rows []Row
	query, wrapped := "", false
	if m := cursorQueryRE().FindStringSubmatch(text); m != nil {
		query, wrapped = m[1], true
	}
	if IsCarryoverText(text) && !IsCarryoverText(query) {
		rows = append(rows, Row{Key: key + "#inj", Role: "system", Kind: KindInjection, Text: carryoverHeader(text)})
	}
	if !wrapped {
		query = strings.TrimSpace(cursorStampRE().ReplaceAllString(text, ""))
		if strings.HasPrefix(query, "<") || IsCarryoverText(query) {
			return rows // injected context blocks, not a request
		}
	}
	if strings.TrimSpace(query) == "" {
		return rows
	}
	if IsCarryoverText(query) {
		return append(rows, Row{Key: key, Role: "user", Kind: KindInjection, Text: carryoverHeader(query)})
	}
	return append(rows, Row{Key: key, Role: "user", Kind: KindPrompt, Text: promptText(query)})
}

// cursorUserDir is Cursor's VS Code-style "User" directory.
func cursorUserDir(env Env) string {
	get := func(k string) string {
		if env.Getenv == nil {
			return ""
		}
		return env.Getenv(k)
	}
	switch runtime.GOOS {
	case "darwin":
		return filepath.Join(env.Home, "Library", "Application Support", "Cursor", "User")
	case "windows":
		if a := get("APPDATA"); a != "" {
			return filepath.Join(a, "Cursor", "User")
		}
		return filepath.Join(env.Home, "AppData", "Roaming", "Cursor", "User")
	}
	if x := get("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "Cursor", "User")
	}
	return filepath.Join(env.Home, ".config", "Cursor", "User")
}

// cursorStoreTimeout bounds a read of Cursor's database (it may be locked
// by Cursor, and it can be gigabytes: reads go by key only).
const cursorStoreTimeout = 1200 * time.Millisecond

// ReadStore reads the conversation from the IDE's global state.vscdb when
// Cursor writes no agent transcripts for the project (older builds).
func (cursor) ReadStore(h Hook, env Env) ([]Row, error) {
	if h.SessionID == "" {
		return nil, nil
	}
	if strings.HasSuffix(h.TranscriptPath, ".vscdb") { // handoff --transcript state.vscdb
		return ReadCursorDB(h.TranscriptPath, h.SessionID)
	}
	if h.TranscriptPath != "" {
		return nil, nil
	}
	if dir := cursorTranscriptDir(h, env); dir != "" {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return nil, nil
		}
	}
	if env.Home == "" {
		return nil, nil
	}
	return ReadCursorDB(filepath.Join(cursorUserDir(env), "globalStorage", "state.vscdb"), h.SessionID)
}

// ReadCursorDB returns the rows of composer id in the state.vscdb at path,
// opened read-only. A missing database is fs.ErrNotExist; a conversation
// not yet flushed to it is no rows.
func ReadCursorDB(path, id string) ([]Row, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("cursor database: %w", fs.ErrNotExist)
	}
	if strings.ContainsAny(id, "\x00") {
		return nil, nil
	}
	// mode=ro, not immutable=1: Cursor keeps the database open and recent
	// rows may still sit in the WAL.
	db, err := openSQLite(path, sqliteRO)
	if err != nil {
		return nil, fmt.Errorf("open Cursor's database read-only: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithTimeout(context.Background(), cursorStoreTimeout)
	defer cancel()
	var raw []byte
	err = db.QueryRowContext(ctx, `SELECT value FROM cursorDiskKV WHERE key = ?`, "composerData:"+id).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read Cursor's database (locked or not a Cursor state.vscdb; `carryover handoff` retries later): %w", err)
	}
	var comp cursorComposer
	if json.Unmarshal(raw, &comp) != nil {
		return nil, nil
	}
	bubbles := map[string]cursorBubble{}
	for _, b := range comp.Conversation { // composers before bubbles moved out
		if b.BubbleID != "" {
			bubbles[b.BubbleID] = b
		}
	}
	if err := cursorReadBubbles(ctx, db, id, bubbles); err != nil {
		return nil, fmt.Errorf("read Cursor's messages: %w", err)
	}
	return cursorComposerRows(comp, bubbles), nil
}

// cursorReadBubbles adds composer id's bubbleId:<id>:<bubble> rows to
// bubbles.
func cursorReadBubbles(ctx context.Context, db *sql.DB, id string, bubbles map[string]cursorBubble) error {
	prefix := "bubbleId:" + id + ":"
	rs, err := db.QueryContext(ctx, `SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ? AND value IS NOT NULL`, prefix, "bubbleId:"+id+";")
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
		var k string
		var v []byte
		var b cursorBubble
		if rs.Scan(&k, &v) != nil || json.Unmarshal(v, &b) != nil {
			continue
		}
		b.BubbleID = firstNonEmpty(b.BubbleID, strings.TrimPrefix(k, prefix))
		bubbles[b.BubbleID] = b
	}
	return rs.Err()
}

type cursorComposer struct {
	Status  string `json:"status"`
	Headers []struct {
		BubbleID string `json:"bubbleId"`
		Grouping *struct {
			IsRenderable *bool `json:"isRenderable"`
		} `json:"grouping"`
	} `json:"fullConversationHeadersOnly"`
	Conversation  []cursorBubble `json:"conversation"`
	LastUpdatedAt int64          `json:"lastUpdatedAt"`
	Capabilities  []struct {
		Data struct {
			BubbleDataMap string `json:"bubbleDataMap"`
		} `json:"data"`
	} `json:"capabilities"`
}

type cursorBubble struct {
	BubbleID       string          `json:"bubbleId"`
	Type           json.RawMessage `json:"type"`
	Text           string          `json:"text"`
	RawText        string          `json:"rawText"`
	Content        string          `json:"content"`
	Message        string          `json:"message"`
	CreatedAt      json.RawMessage `json:"createdAt"`
	Timestamp      json.RawMessage `json:"timestamp"`
	CapabilityType int             `json:"capabilityType"`
	TimingInfo     *struct {
		ClientStartTime  float64 `json:"clientStartTime"`
		ClientRPCSend    float64 `json:"clientRpcSendTime"`
		ClientSettleTime float64 `json:"clientSettleTime"`
		ClientEndTime    float64 `json:"clientEndTime"`
	} `json:"timingInfo"`
	ToolFormerData *cursorTool `json:"toolFormerData"`
}

type cursorTool struct {
	Tool       *int   `json:"tool"`
	Name       string `json:"name"`
	RawArgs    string `json:"rawArgs"`
	Params     string `json:"params"`
	Result     string `json:"result"`
	Status     string `json:"status"`
	Error      string `json:"error"`
	Additional *struct {
		Codeblock *struct {
			Content string `json:"content"`
		} `json:"codeblock"`
	} `json:"additionalData"`
}

// role is 1 / "user" for the user, 2 / "ai" for the assistant.
func (b cursorBubble) role() string {
	switch strings.Trim(string(b.Type), `"`) {
	case "1", "user":
		return "user"
	case "2", "ai", "assistant":
		return "assistant"
	}
	return ""
}

// when is the bubble's time: createdAt (ISO, or ms in older data), then
// timestamp, then absolute timingInfo fields (clientStartTime is sometimes
// relative to process start).
func (b cursorBubble) when() time.Time {
	for _, raw := range []json.RawMessage{b.CreatedAt, b.Timestamp} {
		if t := flexTime(raw); !t.IsZero() {
			return t
		}
	}
	if ti := b.TimingInfo; ti != nil {
		for _, v := range []float64{ti.ClientStartTime, ti.ClientRPCSend, ti.ClientSettleTime, ti.ClientEndTime} {
			if v >= 946684800000 && v < 1e15 {
				return time.UnixMilli(int64(v)).UTC()
			}
		}
	}
	return time.Time{}
}

func cursorComposerRows(comp cursorComposer, bubbles map[string]cursorBubble) []Row {
	cursorCapabilityTools(comp, bubbles)
	var rows []Row
	for _, id := range cursorBubbleOrder(comp, bubbles) {
		if b, ok := bubbles[id]; ok {
			rows = append(rows, cursorBubbleRows(id, b)...)
		}
	}
	// A user bubble without a time takes the next timed row's.
	for i := len(rows) - 2; i >= 0; i-- {
		if rows[i].Time.IsZero() {
			rows[i].Time = rows[i+1].Time
		}
	}
	if comp.Status == "error" {
		r := Row{Key: "composer:status", Role: "system", Kind: KindError, Text: "the conversation stopped with an error"}
		if comp.LastUpdatedAt > 0 {
			r.Time = time.UnixMilli(comp.LastUpdatedAt).UTC()
		}
		rows = append(rows, r)
	}
	return rows
}

// cursorCapabilityTools gives bubbles the tool data old composers keep in
// capabilities[].data.bubbleDataMap.
func cursorCapabilityTools(comp cursorComposer, bubbles map[string]cursorBubble) {
	for _, c := range comp.Capabilities {
		var m map[string]cursorTool
		if c.Data.BubbleDataMap == "" || json.Unmarshal([]byte(c.Data.BubbleDataMap), &m) != nil {
			continue
		}
		for id, t := range m {
			if b, ok := bubbles[id]; ok && b.ToolFormerData == nil {
				b.ToolFormerData = &t
				bubbles[id] = b
			}
		}
	}
}

// cursorBubbleOrder is the order the headers give, without bubbles
// Cursor does not render, then the bubbles no header names, by time.
func cursorBubbleOrder(comp cursorComposer, bubbles map[string]cursorBubble) []string {
	var order []string
	seen := map[string]bool{}
	for _, h := range comp.Headers {
		if h.BubbleID == "" || seen[h.BubbleID] {
			continue
		}
		seen[h.BubbleID] = true
		if g := h.Grouping; g == nil || g.IsRenderable == nil || *g.IsRenderable {
			order = append(order, h.BubbleID)
		}
	}
	var extra []string
	for id := range bubbles {
		if !seen[id] {
			extra = append(extra, id)
		}
	}
	sort.Slice(extra, func(i, j int) bool {
		ti, tj := bubbles[extra[i]].when(), bubbles[extra[j]].when()
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return extra[i] < extra[j]
	})
	return append(order, extra...)
}

func (b cursorBubble) text() string {
	for _, s := range []string{b.Text, b.RawText, b.Content, b.Message} {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

func cursorBubbleRows(id string, b cursorBubble) []Row {
	base := Row{Time: b.when()}
	text := b.text()
	switch b.role() {
	case "user":
		if strings.TrimSpace(text) == "" {
			return nil
		}
		r := base
		r.Key, r.Role = id, "user"
		if IsCarryoverText(text) {
			r.Kind, r.Text = KindInjection, carryoverHeader(text)
		} else {
			r.Kind, r.Text = KindPrompt, promptText(text)
		}
		return []Row{r}
	case "assistant":
	default:
		return nil
	}
	var rows []Row
	if strings.TrimSpace(text) != "" {
		r := base
		r.Key, r.Role, r.Kind, r.Text = id, "assistant", KindText, clip(text, maxText)
		rows = append(rows, r)
	}
	if t := b.ToolFormerData; t != nil && (t.Name != "" || t.Tool != nil) {
		rows = append(rows, cursorToolRows(id, base, t)...)
	}
	return rows
}

func jsonString(s string) map[string]any {
	var m map[string]any
	_ = json.Unmarshal([]byte(s), &m)
	return m
}

func cursorToolRows(id string, base Row, t *cursorTool) []Row {
	result := jsonString(t.Result)
	name := t.Name
	if name == "" {
		name = "tool_" + strconv.Itoa(*t.Tool)
	}
	call := cursorCall(Row{Key: id + "#call", CallID: id, Time: base.Time}, name, cursorToolInput(t))
	if cursorEditTools[name] {
		cursorEditAdded(&call, t, result)
	}
	res := Row{Key: id + "#result", CallID: id, Time: base.Time, Role: "tool", Kind: KindToolResult, ToolName: name}
	out := cursorToolOutput(&res, t, result)
	switch {
	case t.Status == "error" || (t.Tool != nil && *t.Tool == 0):
		res.Kind = KindError
		out = cursorToolError(&res, t, out)
	case t.Status == "cancelled":
		res.Kind = KindError
		out = "cancelled"
	case t.Status != "completed" && t.Status != "":
		return []Row{call} // still running: the result comes with a later read
	}
	res.Text = clip(out, maxResult)
	return []Row{call, res}
}

// cursorToolInput is a tool's raw arguments overlaid with its params.
func cursorToolInput(t *cursorTool) map[string]any {
	in := map[string]any{}
	for k, v := range jsonString(t.RawArgs) {
		in[k] = v
	}
	for k, v := range jsonString(t.Params) {
		in[k] = v
	}
	return in
}

// cursorEditAdded gives an edit call the code it wrote: the code block
// and the diff's added lines.
func cursorEditAdded(call *Row, t *cursorTool, result map[string]any) {
	var add []string
	if t.Additional != nil && t.Additional.Codeblock != nil {
		add = append(add, t.Additional.Codeblock.Content)
	}
	add = append(add, cursorDiffAdded(result)...)
	if len(add) > 0 {
		call.Text = clip(strings.Join(add, "\n"), maxResult)
	}
}

// cursorToolOutput reads a tool's result (JSON: output, exitCode,
// applyFailed; else the text as it is) into res and returns its text.
func cursorToolOutput(res *Row, t *cursorTool, result map[string]any) string {
	if result == nil {
		return t.Result
	}
	out, _ := result["output"].(string)
	if n, ok := result["exitCode"].(float64); ok {
		res.ExitCode = intPtr(int(n))
		if n != 0 {
			res.Kind = KindError
		}
	}
	if f, ok := result["applyFailed"].(bool); ok && f {
		res.Kind = KindError
		out = "edit failed to apply"
	}
	return out
}

// cursorToolError puts a failed tool's error message before its output.
func cursorToolError(res *Row, t *cursorTool, out string) string {
	msg := ""
	if e := jsonString(t.Error); e != nil {
		msg, _ = e["clientVisibleErrorMessage"].(string)
	}
	msg = firstNonEmpty(msg, t.Error)
	exitFromText(res, msg)
	switch {
	case msg != "" && out != "":
		return msg + "\n" + out
	case msg != "":
		return msg
	}
	return out
}

// cursorDiffAdded returns the added lines of result.diff.chunks.
func cursorDiffAdded(result map[string]any) []string {
	diff, _ := result["diff"].(map[string]any)
	chunks, _ := diff["chunks"].([]any)
	var out []string
	for _, c := range chunks {
		m, _ := c.(map[string]any)
		s, _ := m["diffString"].(string)
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
				out = append(out, l[1:])
			}
		}
	}
	return out
}

// exitFromText takes the exit code a failed call's text names ("exit
// code 2", "exited with code: 1") when no field gave one.
func exitFromText(r *Row, text string) {
	if r.ExitCode != nil {
		return
	}
	if m := exitCodeRE().FindStringSubmatch(text); m != nil {
		n, _ := strconv.Atoi(m[1])
		r.ExitCode = intPtr(n)
	}
}
