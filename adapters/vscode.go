package adapters

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// VSCode is the VS Code GitHub Copilot Chat adapter.
//
// Two stores hold a session, both under a VS Code User dir's
// workspaceStorage/<hash>/:
//
//   - chatSessions/<sessionId>.jsonl, a mutation log VS Code compacts by
//     rewriting the whole file (or the flat chatSessions/<sessionId>.json of
//     1.99–1.108). It must be replayed from the start, so it is read whole by
//     ReadStore on every event; keys are request ids and tool call ids, so
//     the ledger's upsert makes re-reading harmless.
//   - GitHub.copilot-chat/transcripts/<sessionId>.jsonl, the extension's
//     append-only event log (the hooks' transcript_path), in the Copilot CLI
//     vocabulary. It is tailed (LineParser) only while the session has no
//     chatSessions file, so one session is not recorded twice.
//
// Rows the two stores share use the same keys (prompt text hash, bare tool
// call id), so a session read first from its transcript and later from
// chatSessions keeps one copy of its prompts and tool calls.
var VSCode Adapter = vscode{}

// vscodeAgent is what carryover knows about the agent besides its files.
var vscodeAgent = &Agent{
	Name:     "vscode-copilot",
	Display:  "VS Code Copilot Chat",
	Adapter:  VSCode,
	Lister:   vscodeLister{},
	Envelope: EnvelopeHookSpecific,
	Format: Format{Shapes: []string{
		"VS Code Copilot Chat chatSessions/*.json and *.jsonl (replayed mutations)",
		"VS Code \"Chat: Export Chat…\" JSON (requests, responderUsername; no sessionId), anywhere",
	}},
	Sniff: vscodeStoreHead,
	Events: map[string]Class{
		"SessionStart": ClassStart, "UserPromptSubmit": ClassPrompt,
		"PreToolUse": ClassTool, "PostToolUse": ClassTool,
		"Stop": ClassStop, "PreCompact": ClassCompact,
	},
	// Copilot CLI reads every file in ~/.copilot/hooks/ too.
	ForeignHost: func(getenv func(string) string) string {
		if getenv("COPILOT_CLI") == "1" {
			return "VS Code Copilot stub running inside Copilot CLI (COPILOT_CLI=1); Copilot CLI's own stub handles it"
		}
		return ""
	},
	CreateTools: []string{"create_file"},
	PlanTools:   []string{"manage_todo_list"},
}

var (
	_ LineParser  = vscode{}
	_ StoreReader = vscode{}
)

type vscode struct{}

func (vscode) Name() string { return "vscode-copilot" }

// ParseHook accepts the documented camelCase common fields (sessionId,
// hookEventName) and the snake_case ones of later builds (session_id,
// hook_event_name), and a session id given as a chat session resource URI.
func (vscode) ParseHook(event string, b []byte, env Env) (Hook, error) {
	p, err := decodePayload(b)
	if err != nil {
		return Hook{}, err
	}
	h := Hook{
		Tool:           "vscode-copilot",
		Event:          event,
		SessionID:      vscodeSessionID(p.str("sessionId", "session_id", "sessionID")),
		TranscriptPath: p.str("transcript_path", "transcriptPath"),
		Cwd:            p.str("cwd"),
		Source:         copilotSource(p.str("source")),
		Prompt:         p.str("prompt"),
	}
	if h.Event == "" {
		h.Event = p.str("hookEventName", "hook_event_name")
	}
	return h, nil
}

// vscodeSessionID turns vscode-chat-session://local/<base64url(id)> into
// the bare id; anything else is returned as is.
func vscodeSessionID(s string) string {
	const scheme = "vscode-chat-session://"
	if !strings.HasPrefix(s, scheme) {
		return s
	}
	rest := strings.TrimPrefix(s, scheme)
	if i := strings.LastIndexByte(rest, '/'); i >= 0 {
		rest = rest[i+1:]
	}
	rest = strings.TrimRight(rest, "=")
	if b, err := base64.RawURLEncoding.DecodeString(rest); err == nil && plainID(string(b)) {
		return string(b)
	}
	if b, err := base64.RawStdEncoding.DecodeString(rest); err == nil && plainID(string(b)) {
		return string(b)
	}
	return rest
}

// vscodeLocation is where one session's files are.
type vscodeLocation struct {
	Workspace  string // workspaceStorage/<hash>
	Store      string // chatSessions/<id>.jsonl or .json, "" when none
	Transcript string // GitHub.copilot-chat/transcripts/<id>.jsonl (may not exist)
}

// vscodeMaxStore is the largest chatSessions file replayed; over it the
// transcript is used instead.
const vscodeMaxStore = 256 << 20

// locate finds the session's workspace dir: from the hook's transcript_path
// when it has one, else by looking for the session id under every VS Code
// User dir (Code, Insiders, VSCodium, remote servers).
func (vscode) locate(h Hook, env Env) vscodeLocation {
	var loc vscodeLocation
	var ids []string
	if plainID(h.SessionID) {
		ids = append(ids, h.SessionID)
	}
	if tp := h.TranscriptPath; tp != "" {
		var isStore bool
		if ids, isStore = loc.fromTranscript(tp, h.SessionID, ids); isStore {
			return loc
		}
	}
	if loc.Workspace == "" && len(ids) > 0 {
		loc.Workspace = vscodeFindWorkspace(env, ids[0])
	}
	if loc.Workspace == "" {
		return loc
	}
	loc.Store = vscodeStoreIn(loc.Workspace, ids)
	if loc.Transcript == "" && len(ids) > 0 {
		loc.Transcript = filepath.Join(loc.Workspace, "GitHub.copilot-chat", "transcripts", ids[0]+".jsonl")
	}
	return loc
}

// fromTranscript takes what the transcript path tp says: the workspace
// dir it lies in and the session id its name holds, added to ids.
// isStore is true when tp is itself a chat session store: a chatSessions
// file or a "Chat: Export Chat…" file, wherever it is (copied, attached
// to a bug, exported to ~/Downloads), read as it is, recognised by its
// content.
func (loc *vscodeLocation) fromTranscript(tp, sessionID string, ids []string) (_ []string, isStore bool) {
	loc.Transcript = tp
	dir := filepath.Dir(tp)
	switch filepath.Base(dir) {
	case "transcripts":
		if strings.EqualFold(filepath.Base(filepath.Dir(dir)), "GitHub.copilot-chat") {
			loc.Workspace = filepath.Dir(filepath.Dir(dir))
		}
	case "chatSessions": // handoff --transcript …/chatSessions/<id>.jsonl
		loc.Workspace = filepath.Dir(dir)
		if base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(tp), ".jsonl"), ".json"); plainID(base) && base != sessionID {
			ids = append([]string{base}, ids...)
		}
	}
	if vscodeIsStore(tp) {
		loc.Store, loc.Transcript = tp, ""
		return ids, true
	}
	if base := strings.TrimSuffix(filepath.Base(tp), ".jsonl"); plainID(base) && base != sessionID {
		ids = append(ids, base)
	}
	return ids, false
}

// vscodeFindWorkspace is the workspace dir, under every VS Code User dir,
// of the newest chat session store or transcript of session id.
func vscodeFindWorkspace(env Env, id string) string {
	var ms []string
	for _, root := range vscodeUserDirs(env) {
		stores, _ := filepath.Glob(filepath.Join(root, "workspaceStorage", "*", "chatSessions", id+".json*"))
		transcripts, _ := filepath.Glob(filepath.Join(root, "workspaceStorage", "*", "GitHub.copilot-chat", "transcripts", id+".jsonl"))
		ms = append(append(ms, stores...), transcripts...)
	}
	ws, best := "", time.Time{}
	for _, m := range ms {
		fi, err := os.Stat(m)
		if err != nil || !fi.Mode().IsRegular() || ws != "" && !fi.ModTime().After(best) {
			continue
		}
		best, ws = fi.ModTime(), filepath.Dir(filepath.Dir(m))
		if filepath.Base(filepath.Dir(m)) == "transcripts" {
			ws = filepath.Dir(ws)
		}
	}
	return ws
}

// vscodeStoreIn is the chat session store of the first of ids that has
// one in the workspace dir ws, "" if none.
func vscodeStoreIn(ws string, ids []string) string {
	for _, id := range ids {
		for _, ext := range []string{".jsonl", ".json"} {
			p := filepath.Join(ws, "chatSessions", id+ext)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Size() <= vscodeMaxStore {
				return p
			}
		}
	}
	return ""
}

// vscodeStoreHead recognises a chat session store by its first bytes: a
// mutation log whose first entry is the whole state ({"kind":0,"v":{…}}),
// or one JSON object with "requests" and the chat model's own fields
// (responderUsername, requesterUsername, initialLocation), which the flat
// chatSessions/<id>.json and the "Chat: Export Chat…" file both have.
func vscodeStoreHead(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n\ufeff")
	if !bytes.HasPrefix(b, []byte("{")) {
		return false
	}
	own := containsAny(b, `"responderUsername"`, `"requesterUsername"`, `"initialLocation"`)
	head := bytes.Join(bytes.Fields(b[:min(len(b), 32)]), nil)
	if bytes.HasPrefix(head, []byte(`{"kind":0,`)) {
		return own || bytes.Contains(b, []byte(`"requests"`))
	}
	return own && bytes.Contains(b, []byte(`"requests"`))
}

// vscodeIsStore reads path's first 64 KiB and reports vscodeStoreHead.
func vscodeIsStore(path string) bool {
	f, err := openRegular(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() > vscodeMaxStore {
		return false
	}
	b := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, b)
	return vscodeStoreHead(b[:n])
}

// vscodeStoreIsLog reports whether a store file is a mutation log (else
// one JSON object), by its content: an export may be named anything.
func vscodeStoreIsLog(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return strings.HasSuffix(path, ".jsonl")
	}
	defer f.Close()
	b := make([]byte, 64)
	n, _ := io.ReadFull(f, b)
	head := bytes.Join(bytes.Fields(bytes.TrimLeft(b[:n], "\ufeff")), nil)
	return bytes.HasPrefix(head, []byte(`{"kind":`))
}

// vscodeUserDirs lists the VS Code User dirs that may exist for env.
func vscodeUserDirs(env Env) []string {
	get := func(k string) string {
		if env.Getenv == nil {
			return ""
		}
		return env.Getenv(k)
	}
	flavors := []string{"Code", "Code - Insiders", "VSCodium", "Code - OSS"}
	var dirs []string
	if p := get("VSCODE_PORTABLE"); p != "" {
		dirs = append(dirs, filepath.Join(p, "user-data", "User"))
	}
	cfg := get("XDG_CONFIG_HOME")
	if cfg == "" && env.Home != "" {
		cfg = filepath.Join(env.Home, ".config")
	}
	for _, f := range flavors {
		if cfg != "" {
			dirs = append(dirs, filepath.Join(cfg, f, "User"))
		}
		if env.Home != "" {
			dirs = append(dirs, filepath.Join(env.Home, "Library", "Application Support", f, "User"))
		}
		if a := get("APPDATA"); a != "" {
			dirs = append(dirs, filepath.Join(a, f, "User"))
		}
	}
	if env.Home != "" {
		for _, s := range []string{".vscode-server", ".vscode-server-insiders", ".vscodium-server"} {
			dirs = append(dirs, filepath.Join(env.Home, s, "data", "User"))
		}
	}
	return dirs
}

// Transcripts is the Copilot transcript, only while the session has no
// chatSessions file (ReadStore covers it then).
func (v vscode) Transcripts(h Hook, env Env) []Transcript {
	loc := v.locate(h, env)
	if loc.Store != "" || loc.Transcript == "" {
		return nil
	}
	return []Transcript{{Path: loc.Transcript, SessionID: h.SessionID, MaybeMissing: true}}
}

// ParseLine reads a Copilot Chat transcript line (the Copilot CLI event
// vocabulary) with keys shared with the chatSessions store.
func (vscode) ParseLine(line []byte, off int64) ([]Row, error) {
	rows := copilotEvent(line, off)
	for i := range rows {
		r := &rows[i]
		r.CallID = vscodeCallID(r.CallID)
		switch {
		case r.Kind == KindPrompt:
			r.Key = vscodePromptKey(r.Text)
		case r.Kind == KindToolCall && r.CallID != "":
			suffix := ""
			if j := strings.LastIndexByte(r.Key, '@'); j >= 0 {
				suffix = r.Key[j:]
			}
			r.Key = "call:" + r.CallID + suffix
		case (r.Kind == KindToolResult || r.Kind == KindError) && r.CallID != "":
			r.Key = "result:" + r.CallID
		}
	}
	return rows, nil
}

// vscodeCallID strips the __vscode-<n> suffix that tool call rounds and
// hook tool_use_id add to the provider's call id: a trailing "__vscode-"
// and one or more ASCII digits (what `__vscode-\d+$` matched).
func vscodeCallID(id string) string {
	const tag = "__vscode-"
	i := len(id)
	for i > 0 && '0' <= id[i-1] && id[i-1] <= '9' {
		i--
	}
	if i < len(id) && strings.HasSuffix(id[:i], tag) {
		return id[:i-len(tag)]
	}
	return id
}

func vscodePromptKey(text string) string {
	s := sha256.Sum256([]byte(text))
	return "prompt:" + hex.EncodeToString(s[:8])
}

// ReadStore replays the session's chatSessions file into rows. No file
// (a session only in the transcript, or not written yet) is not an error.
func (v vscode) ReadStore(h Hook, env Env) ([]Row, error) {
	loc := v.locate(h, env)
	if loc.Store == "" {
		return nil, nil
	}
	f, err := os.Open(loc.Store)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("open VS Code chat session file: %w", err)
	}
	defer f.Close()
	var reqs []vscodeRequest
	if vscodeStoreIsLog(loc.Store) {
		reqs, err = vscodeReplay(f)
	} else {
		reqs, err = vscodeFlat(f)
	}
	if err != nil {
		return nil, fmt.Errorf("read VS Code chat session file %s: %w", loc.Store, err)
	}
	return vscodeRows(reqs), nil
}

// vscodeOp is one mutation log entry: kind 0 whole state, 1 set v at path k,
// 2 push the items of v onto the array at k (truncated to i first), 3
// delete the property at k.
type vscodeOp struct {
	Kind *int            `json:"kind"`
	K    []any           `json:"k"`
	V    json.RawMessage `json:"v"`
	I    *int            `json:"i"`
}

// vscodeMaxPath bounds a mutation path (real ones are 2–4 long).
const vscodeMaxPath = 32

// vscodeReplay replays a chatSessions mutation log and returns its
// requests. Undecodable lines, half-written last lines and unknown kinds
// are skipped; two objects on one line are both applied.
func vscodeReplay(r io.Reader) ([]vscodeRequest, error) {
	state := any(map[string]any{})
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			dec := json.NewDecoder(bytes.NewReader(line))
			for {
				var op vscodeOp
				if dec.Decode(&op) != nil {
					break
				}
				state = vscodeApply(state, op)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return vscodeRequestsOf(state)
}

func vscodeApply(state any, op vscodeOp) any {
	if op.Kind == nil || len(op.K) > vscodeMaxPath || *op.Kind < 0 || *op.Kind >= len(vscodeOps) {
		return state
	}
	return vscodeOps[*op.Kind](state, op)
}

// vscodeOps apply each kind of mutation; a malformed one leaves the
// state alone.
var vscodeOps = [...]func(state any, op vscodeOp) any{vscodeReplace, vscodeSetAt, vscodePush, vscodeDelete}

// vscodeReplace (kind 0) is the whole state, an object.
func vscodeReplace(state any, op vscodeOp) any {
	var v any
	if json.Unmarshal(op.V, &v) != nil {
		return state
	}
	if _, ok := v.(map[string]any); !ok {
		return state
	}
	return v
}

// vscodeSetAt (kind 1) sets v at path k.
func vscodeSetAt(state any, op vscodeOp) any {
	var v any
	if json.Unmarshal(op.V, &v) != nil || len(op.K) == 0 {
		return state
	}
	return vscodeSet(state, op.K, func(any) any { return v })
}

// vscodePush (kind 2) pushes the items of v onto the array at k,
// truncated to i first.
func vscodePush(state any, op vscodeOp) any {
	var items []any
	if len(op.V) > 0 && json.Unmarshal(op.V, &items) != nil {
		return state
	}
	return vscodeSet(state, op.K, func(old any) any {
		arr, _ := old.([]any)
		if op.I != nil && *op.I >= 0 && *op.I < len(arr) {
			arr = arr[:*op.I]
		}
		return append(arr, items...)
	})
}

// vscodeDelete (kind 3) deletes the property at k.
func vscodeDelete(state any, op vscodeOp) any {
	if len(op.K) == 0 {
		return state
	}
	parent, _ := vscodeGet(state, op.K[:len(op.K)-1]).(map[string]any)
	if k, ok := op.K[len(op.K)-1].(string); ok && parent != nil {
		delete(parent, k)
	}
	return state
}

// vscodeSet replaces the value at path with f(old), creating objects on the
// way; an array index may address one past the end (append). Invalid paths
// leave the state alone.
func vscodeSet(node any, path []any, f func(any) any) any {
	if len(path) == 0 {
		return f(node)
	}
	switch k := path[0].(type) {
	case string:
		m, ok := node.(map[string]any)
		if !ok {
			if node != nil {
				return node
			}
			m = map[string]any{}
		}
		m[k] = vscodeSet(m[k], path[1:], f)
		return m
	case float64:
		arr, ok := node.([]any)
		if !ok || k < 0 || k != float64(int(k)) || int(k) > len(arr) {
			return node
		}
		i := int(k)
		if i == len(arr) {
			return append(arr, vscodeSet(nil, path[1:], f))
		}
		arr[i] = vscodeSet(arr[i], path[1:], f)
		return arr
	}
	return node
}

func vscodeGet(node any, path []any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := node.(map[string]any)
			if !ok {
				return nil
			}
			node = m[k]
		case float64:
			arr, ok := node.([]any)
			if !ok || k < 0 || int(k) >= len(arr) {
				return nil
			}
			node = arr[int(k)]
		default:
			return nil
		}
	}
	return node
}

func vscodeRequestsOf(state any) ([]vscodeRequest, error) {
	m, _ := state.(map[string]any)
	raw, err := json.Marshal(m["requests"])
	if err != nil {
		return nil, err
	}
	var reqs []vscodeRequest
	_ = json.Unmarshal(raw, &reqs) // a malformed request list yields none
	return reqs, nil
}

// vscodeFlat reads the flat chatSessions/<id>.json of VS Code 1.99–1.108.
func vscodeFlat(r io.Reader) ([]vscodeRequest, error) {
	var s struct {
		Requests []vscodeRequest `json:"requests"`
	}
	b, err := io.ReadAll(io.LimitReader(r, vscodeMaxStore))
	if err != nil {
		return nil, err
	}
	if json.Unmarshal(b, &s) != nil {
		return nil, errors.New("not a chat session JSON object (half-written or another format); it is read again at the next event")
	}
	return s.Requests, nil
}

type vscodeRequest struct {
	RequestID  string            `json:"requestId"`
	Timestamp  float64           `json:"timestamp"`
	Message    json.RawMessage   `json:"message"`
	Response   []json.RawMessage `json:"response"`
	IsCanceled bool              `json:"isCanceled"` // the export's and 1.99–1.108's flag
	ModelState *struct {
		Value       int     `json:"value"`
		CompletedAt float64 `json:"completedAt"`
	} `json:"modelState"`
	Result *struct {
		ErrorDetails *struct {
			Message string `json:"message"`
		} `json:"errorDetails"`
		Metadata *struct {
			ToolCallRounds []struct {
				ToolCalls []struct {
					ID        string          `json:"id"`
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"toolCalls"`
			} `json:"toolCallRounds"`
		} `json:"metadata"`
	} `json:"result"`
}

type vscodeURI struct {
	FsPath string `json:"fsPath"`
	Path   string `json:"path"`
}

func (u *vscodeURI) file() string {
	if u == nil {
		return ""
	}
	return firstNonEmpty(u.FsPath, u.Path)
}

type vscodePart struct {
	Kind                 string          `json:"kind"`
	Value                json.RawMessage `json:"value"`
	ToolID               string          `json:"toolId"`
	ToolCallID           string          `json:"toolCallId"`
	IsComplete           bool            `json:"isComplete"`
	SubAgentInvocationID string          `json:"subAgentInvocationId"`
	ToolSpecificData     *struct {
		Kind        string `json:"kind"`
		CommandLine *struct {
			Original string `json:"original"`
		} `json:"commandLine"`
		TerminalCommandState *struct {
			ExitCode *int `json:"exitCode"`
		} `json:"terminalCommandState"`
		RawInput    json.RawMessage `json:"rawInput"`
		Description string          `json:"description"`
	} `json:"toolSpecificData"`
	ResultDetails    json.RawMessage `json:"resultDetails"`
	PastTenseMessage json.RawMessage `json:"pastTenseMessage"`
	URI              *vscodeURI      `json:"uri"`
	IsEdit           bool            `json:"isEdit"`
	Edits            [][]struct {
		Text string `json:"text"`
	} `json:"edits"`
}

// vscodeToolNames maps a part's toolId to the function name used by the
// transcript, tool call rounds and hooks.
var vscodeToolNames = map[string]string{
	"copilot_readFile":           "read_file",
	"copilot_replaceString":      "replace_string_in_file",
	"copilot_multiReplaceString": "multi_replace_string_in_file",
	"copilot_createFile":         "create_file",
	"copilot_applyPatch":         "apply_patch",
	"copilot_findTextInFiles":    "grep_search",
	"copilot_insertEdit":         "insert_edit_into_file",
}

// vscodeRows turns replayed requests into rows. A tool call id seen more
// than once (live re-serialization) keeps its first position and its last
// data.
func vscodeRows(reqs []vscodeRequest) []Row {
	var out keyedRows
	for n := range reqs {
		q := &reqs[n]
		rk := q.RequestID
		if rk == "" {
			rk = "request#" + strconv.Itoa(n)
		}
		ts := msTime(q.Timestamp)
		if r, ok := vscodePromptRow(q.Message, rk, ts); ok {
			out.put(r)
		}
		b := vscodeResponse{rk: rk, ts: ts, calls: vscodeRoundCalls(q), edited: map[string]bool{}}
		for i, raw := range q.Response {
			b.part(i, raw)
		}
		b.flush()
		b.putInto(&out)
		if r, ok := vscodeEndRow(q, rk, ts); ok {
			out.put(r)
		}
	}
	return out.rows
}

// keyedRows keeps rows in the order their key was first seen, each with
// the data it was last put with.
type keyedRows struct {
	rows []Row
	at   map[string]int // key -> index in rows
}

func (k *keyedRows) put(r Row) {
	if i, ok := k.at[r.Key]; ok {
		k.rows[i] = r
		return
	}
	if k.at == nil {
		k.at = map[string]int{}
	}
	k.at[r.Key] = len(k.rows)
	k.rows = append(k.rows, r)
}

// vscodePromptRow is the request's user message: a prompt, or a
// carryover injection the user pasted or the hook sent.
func vscodePromptRow(msg json.RawMessage, rk string, ts time.Time) (Row, bool) {
	text := vscodeMessageText(msg)
	if strings.TrimSpace(text) == "" {
		return Row{}, false
	}
	if IsCarryoverText(text) {
		return Row{Key: rk + "#injection", Time: ts, Role: "system", Kind: KindInjection, Text: carryoverHeader(text) + " via prompt"}, true
	}
	r := Row{Time: ts, Role: "user", Kind: KindPrompt, Text: promptText(text)}
	r.Key = vscodePromptKey(r.Text)
	return r, true
}

// vscodeCall is a function name and its arguments from a tool call round.
type vscodeCall struct {
	name string
	args json.RawMessage
}

// vscodeRoundCalls maps bare call ids to the function name and arguments
// the request's tool call rounds recorded.
func vscodeRoundCalls(q *vscodeRequest) map[string]vscodeCall {
	calls := map[string]vscodeCall{}
	if q.Result == nil || q.Result.Metadata == nil {
		return calls
	}
	for _, rd := range q.Result.Metadata.ToolCallRounds {
		for _, tc := range rd.ToolCalls {
			calls[vscodeCallID(tc.ID)] = vscodeCall{tc.Name, tc.Arguments}
		}
	}
	return calls
}

// vscodeResponse collects the rows of one request's response parts in
// order; edit parts (textEditGroup, codeblockUri) are dropped afterwards
// for files a tool call names.
type vscodeResponse struct {
	rk     string
	ts     time.Time
	calls  map[string]vscodeCall
	local  []Row
	isEdit map[int]bool    // index in local of an edit part's row
	edited map[string]bool // files a tool call names
	md     strings.Builder // consecutive markdown parts
	mdKey  string
}

func (b *vscodeResponse) emit(r Row) { b.local = append(b.local, r) }

// flush ends a run of markdown parts as one text row.
func (b *vscodeResponse) flush() {
	if s := strings.TrimSpace(b.md.String()); s != "" {
		b.emit(Row{Key: b.mdKey, Time: b.ts, Role: "assistant", Kind: KindText, Text: clip(s, maxText)})
	}
	b.md.Reset()
	b.mdKey = ""
}

func (b *vscodeResponse) part(i int, raw json.RawMessage) {
	var p vscodePart
	if json.Unmarshal(raw, &p) != nil {
		return
	}
	pk := b.rk + "#" + strconv.Itoa(i)
	if p.Kind == "" {
		b.markdown(pk, p.Value)
		return
	}
	b.flush()
	switch p.Kind {
	case "toolInvocationSerialized":
		b.toolInvocation(&p, pk)
	case "textEditGroup", "codeblockUri":
		b.editPart(&p)
	case "thinking":
	default:
		if bytes.Contains(raw, []byte("[CARRYOVER]")) {
			b.emit(Row{Key: pk, Time: b.ts, Role: "system", Kind: KindInjection, Text: carryoverHeader(string(raw)) + " via " + p.Kind})
		}
	}
}

func (b *vscodeResponse) markdown(pk string, value json.RawMessage) {
	var s string
	if json.Unmarshal(value, &s) != nil || s == "" {
		return
	}
	if b.mdKey == "" {
		b.mdKey = pk
	}
	b.md.WriteString(s)
}

func (b *vscodeResponse) toolInvocation(p *vscodePart, pk string) {
	id := firstNonEmpty(vscodeCallID(p.ToolCallID), pk)
	c := b.calls[id]
	name := firstNonEmpty(c.name, vscodeToolNames[p.ToolID], p.ToolID, "tool")
	side := p.SubAgentInvocationID != ""
	base := Row{Key: "call:" + id, Time: b.ts, Role: "assistant", Kind: KindToolCall, ToolName: name, CallID: id, Sidechain: side}
	for _, r := range copilotToolRows(base, name, vscodeArgs(p, c.args)) {
		vscodeTerminalDetails(&r, p)
		if r.FilePath != "" {
			b.edited[r.FilePath] = true
		}
		b.emit(r)
	}
	if p.IsComplete {
		b.emit(vscodeResult(*p, id, b.ts, side))
	}
}

// vscodeArgs are a call's arguments: from its tool call round, else the
// result details' input, else the tool specific raw input.
func vscodeArgs(p *vscodePart, args json.RawMessage) json.RawMessage {
	if len(args) == 0 {
		args = vscodeResultInput(p.ResultDetails)
	}
	if len(args) == 0 && p.ToolSpecificData != nil {
		args = p.ToolSpecificData.RawInput
	}
	return args
}

// vscodeTerminalDetails adds the command line a terminal tool ran and a
// subagent's description from the part's tool specific data.
func vscodeTerminalDetails(r *Row, p *vscodePart) {
	td := p.ToolSpecificData
	if td == nil {
		return
	}
	if td.CommandLine != nil && td.CommandLine.Original != "" {
		r.Command = clip(td.CommandLine.Original, maxResult)
	}
	if td.Kind == "subagent" && td.Description != "" && r.Text == "" {
		r.Text = clip(td.Description, 200)
	}
}

func (b *vscodeResponse) editPart(p *vscodePart) {
	f := p.URI.file()
	if f == "" || (p.Kind == "codeblockUri" && !p.IsEdit) {
		return
	}
	var sb strings.Builder
	for _, group := range p.Edits {
		for _, e := range group {
			sb.WriteString(e.Text)
		}
	}
	if b.isEdit == nil {
		b.isEdit = map[int]bool{}
	}
	b.isEdit[len(b.local)] = true
	b.emit(Row{Key: b.rk + "#edit:" + f, Time: b.ts, Role: "assistant", Kind: KindToolCall, ToolName: "edit", FilePath: f, Text: editText(sb.String())})
}

// putInto hands the response's rows on. Edit parts name files edited
// outside a recorded tool call (edit mode); one row per file.
func (b *vscodeResponse) putInto(out *keyedRows) {
	for i, r := range b.local {
		if b.isEdit[i] {
			if b.edited[r.FilePath] {
				continue
			}
			b.edited[r.FilePath] = true
		}
		out.put(r)
	}
}

// errorMessage is the message of the request's error, if any.
func (q *vscodeRequest) errorMessage() string {
	if q.Result == nil || q.Result.ErrorDetails == nil {
		return ""
	}
	return q.Result.ErrorDetails.Message
}

// vscodeEndRow is how the request ended when it did not complete: the
// user cancelled it (ResponseModelState Cancelled, 2) or it failed (3, or
// an error in the result of data without a model state).
func vscodeEndRow(q *vscodeRequest, rk string, ts time.Time) (Row, bool) {
	ms := q.ModelState
	var r Row
	switch {
	case q.IsCanceled || ms != nil && ms.Value == 2:
		r = Row{Key: rk + "#interrupted", Time: ts, Role: "user", Kind: KindInterrupted, Text: "request cancelled"}
	case ms != nil && ms.Value == 3 || ms == nil && q.Result != nil && q.Result.ErrorDetails != nil:
		r = Row{Key: rk + "#error", Time: ts, Role: "system", Kind: KindError, ToolName: "model API", Text: "request failed"}
		if msg := q.errorMessage(); msg != "" {
			r.Text = clip(msg, maxResult)
		}
	default:
		return Row{}, false
	}
	if ms != nil && ms.CompletedAt > 0 {
		r.Time = msTime(ms.CompletedAt)
	}
	return r, true
}

func msTime(ms float64) time.Time {
	if ms <= 0 || ms > 1e15 {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms)).UTC()
}

// vscodeMessageText is message.text, or the message itself in the oldest
// data where it is a plain string.
func vscodeMessageText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var m struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &m)
	return m.Text
}

// vscodeResultInput is resultDetails.input (the tool's JSON arguments).
func vscodeResultInput(raw json.RawMessage) json.RawMessage {
	var rd struct {
		Input string `json:"input"`
	}
	if json.Unmarshal(raw, &rd) != nil || rd.Input == "" {
		return nil
	}
	return json.RawMessage(strconv.Quote(rd.Input))
}

// vscodeResult is the result row of a completed tool invocation.
func vscodeResult(p vscodePart, id string, ts time.Time, side bool) Row {
	r := Row{Key: "result:" + id, Time: ts, Role: "tool", Kind: KindToolResult, CallID: id, Sidechain: side}
	var rd struct {
		Output  json.RawMessage `json:"output"`
		IsError bool            `json:"isError"`
	}
	var uris []vscodeURI
	switch {
	case json.Unmarshal(p.ResultDetails, &uris) == nil && len(uris) > 0:
		fs := make([]string, len(uris))
		for i := range uris {
			fs[i] = uris[i].file()
		}
		r.Text = clip(strings.Join(fs, "\n"), maxResult)
	case json.Unmarshal(p.ResultDetails, &rd) == nil && len(p.ResultDetails) > 0:
		r.Text = clip(vscodeOutputText(rd.Output), maxResult)
		if rd.IsError {
			r.Kind = KindError
		}
	}
	if r.Text == "" {
		var m struct {
			Value string `json:"value"`
		}
		if json.Unmarshal(p.PastTenseMessage, &m) == nil {
			r.Text = clip(m.Value, maxResult)
		}
	}
	if td := p.ToolSpecificData; td != nil && td.TerminalCommandState != nil && td.TerminalCommandState.ExitCode != nil {
		exitWith(&r, int64(*td.TerminalCommandState.ExitCode))
	}
	return r
}

// vscodeOutputText joins the text items of a result's output.
func vscodeOutputText(raw json.RawMessage) string {
	var outs []struct {
		Value  string `json:"value"`
		IsText bool   `json:"isText"`
		Type   string `json:"type"`
	}
	if json.Unmarshal(raw, &outs) != nil {
		return ""
	}
	var sb strings.Builder
	for _, o := range outs {
		if !o.IsText && o.Type != "text" {
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(o.Value)
	}
	return sb.String()
}
