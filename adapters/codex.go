package adapters

import (
	"bytes"
	"cmp"
	"encoding/json"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Codex is the Codex CLI adapter.
//
// A rollout is append-only JSONL; resume appends to the same file and a
// fork starts a new file that only references its parent (by thread id and
// byte offset), so the parent's history is never read as the fork's own.
// Lines carry no uuid: calls and results are keyed by call_id, everything
// else by byte offset, which is stable because the file only grows.
var Codex Adapter = codex{}

// codexAgent is what carryover knows about the agent besides its files.
var codexAgent = &Agent{
	Name:     "codex",
	Display:  "Codex CLI",
	Adapter:  Codex,
	Lister:   codexLister{},
	Envelope: EnvelopeHookSpecific,
	Format: Format{Newest: "0.171.0", Version: `"cli_version"\s*:\s*"(\d+\.\d+\.\d+)`, Shapes: []string{
		"Codex CLI 0.1x–0.2x rollout (bare {id,timestamp,instructions} header, bare response items, record_type state)",
		"Codex CLI 0.4x rollout JSONL (session_meta, response_item messages and function calls)",
		"Codex CLI 0.7x rollout (event_msg user_message / patch_apply_end / turn_aborted, compacted)",
		"Codex CLI 0.169 rollout (content_item_kinds, item_completed, world_state, thread_spawn subagents)",
	}},
	Events: map[string]Class{
		"SessionStart": ClassStart, "UserPromptSubmit": ClassPrompt,
		"PreToolUse": ClassTool, "PostToolUse": ClassTool,
		"Stop": ClassStop, "Interrupt": ClassFailure, "PreCompact": ClassCompact, "SessionEnd": ClassEnd,
	},
	Sniff: func(b []byte) bool {
		return containsAll(b, `"type":"session_meta"`) || // the oldest rollouts: a bare header + bare items
			containsAll(b, `"instructions"`, `"record_type"`) || containsAll(b, `"instructions"`, `"type":"message"`, `"role"`)
	},
	Launch:        []string{"codex"},
	ContextWindow: 200_000,
	// PostToolUse additionalContext lands as a developer message [V].
	ToolContextEvent: "PostToolUse",
	PlanTools:        []string{"update_plan"},
	KnownTypes: set("session_meta", "response_item", "event_msg", "turn_context", "compacted", "world_state",
		"token_usage_record",
		// payload types
		"message", "reasoning", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output",
		"local_shell_call", "local_shell_call_output", "web_search_call", "task_started", "task_complete", "token_count",
		"user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content", "item_started", "item_completed",
		"thread_settings_applied", "turn_aborted", "patch_apply_begin", "patch_apply_end", "exec_command_begin",
		"exec_command_end", "exec_command_output_delta", "error", "stream_error", "web_search_begin", "web_search_end",
		"context_compacted", "sub_agent_activity", "image_generation_end", "mcp_tool_call_begin", "mcp_tool_call_end",
		"plan_update", "turn_diff", "entered_review_mode", "exited_review_mode", "view_image_tool_call", "ghost_snapshot",
		// 0.17x persisted items (rollout policy.rs)
		"inter_agent_communication", "image_generation_call", "tool_search_call", "tool_search_output", "compaction",
		"context_compaction", "agent_message", "turn_started", "turn_complete", "thread_goal_updated", "thread_rolled_back",
		// 0.171.0's other rollout items (bookkeeping: tool lists, risk scores, realtime audio, id ranges)
		"dynamic_tools_updated", "security_risk_score", "realtime_item", "id_allocation", "inter_agent_communication_metadata"),
	Instructions: []string{"AGENTS.md"},
}

var (
	_ LineParser = codex{}
	_ Lister     = codexLister{}
)

type codex struct{}

func (codex) Name() string { return "codex" }

func (codex) ParseHook(event string, b []byte, env Env) (Hook, error) {
	h, _, err := claudeShapedHook("codex", event, b) // transcript_path is null with --ephemeral
	return h, err
}

// Transcripts is the hook's transcript_path. Without one (an old build, or
// --ephemeral where no rollout exists) the rollout is looked up by thread id
// under $CODEX_HOME/sessions; an ephemeral session finds nothing.
func (codex) Transcripts(h Hook, env Env) []Transcript {
	if h.TranscriptPath != "" {
		ts := []Transcript{{Path: h.TranscriptPath, SessionID: h.SessionID, MaybeMissing: true}}
		return append(ts, codexSubagents(h.TranscriptPath, h.SessionID)...)
	}
	if !safeID(h.SessionID) {
		return nil
	}
	home := ""
	if env.Getenv != nil {
		home = env.Getenv("CODEX_HOME")
	}
	if home == "" {
		if env.Home == "" {
			return nil
		}
		home = filepath.Join(env.Home, ".codex")
	}
	m, _ := filepath.Glob(filepath.Join(globEscape(home), "sessions", "*", "*", "*", "rollout-*-"+h.SessionID+".jsonl"))
	if len(m) == 0 {
		return nil
	}
	return []Transcript{{Path: m[len(m)-1], SessionID: h.SessionID}}
}

// codexSubagents finds the rollouts of subagents this thread spawned
// (session_meta source {"subagent":{"thread_spawn":{"parent_thread_id":…}}}):
// they are written in the same day directory as the parent. Only each
// file's first 16 KB is read, and at most 128 of the newest files, so the
// hook path stays bounded on a busy day.
func codexSubagents(main, thread string) []Transcript {
	if !safeID(thread) {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(globEscape(filepath.Dir(main)), "rollout-*.jsonl"))
	if len(files) > 128 {
		sort.Strings(files) // names start with the creation time
		files = files[len(files)-128:]
	}
	var out []Transcript
	buf := make([]byte, 16<<10)
	for _, f := range files {
		if f == main {
			continue
		}
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		n, _ := io.ReadFull(fh, buf)
		fh.Close()
		head := buf[:n]
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			head = head[:i]
		}
		if bytes.Contains(head, []byte(`"thread_spawn"`)) && bytes.Contains(head, []byte(`"parent_thread_id":"`+thread+`"`)) {
			out = append(out, Transcript{Path: f, SessionID: thread, Sidechain: true})
		}
	}
	return out
}

// globEscape quotes the glob metacharacters of a literal path.
func globEscape(p string) string {
	var b strings.Builder
	for _, c := range p {
		switch c {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// safeID reports whether id can be put in a glob pattern as a literal.
func safeID(id string) bool {
	const idChars = "-_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	return id != "" && len(id) <= 128 && strings.Trim(id, idChars) == ""
}

type codexLine struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
	Metadata  *struct {
		CompactionOutput bool `json:"compaction_output"`
	} `json:"metadata"`
}

type codexItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Name      string          `json:"name"`
	CallID    string          `json:"call_id"`
	Arguments json.RawMessage `json:"arguments"` // a JSON string holding an object (or, leniently, the object)
	Input     string          `json:"input"`
	Output    json.RawMessage `json:"output"`
	Content   []codexContent  `json:"content"`
	Action    json.RawMessage `json:"action"`
	Query     string          `json:"query"` // web_search_end
	Meta      *struct {
		Kinds []string `json:"content_item_kinds"`
	} `json:"internal_chat_message_metadata_passthrough"`
	// event_msg fields
	Message string                     `json:"message"`
	Images  []json.RawMessage          `json:"images"`       // user_message: pasted images (data URLs)
	Local   []json.RawMessage          `json:"local_images"` // user_message: attached image files
	Reason  string                     `json:"reason"`       // turn_aborted: interrupted, replaced, …
	Changes map[string]json.RawMessage `json:"changes"`      // patch_apply_end
	Status  string                     `json:"status"`
	Success *bool                      `json:"success"`
	Stdout  string                     `json:"stdout"`
	Stderr  string                     `json:"stderr"`
	Info    *struct {
		Last *struct {
			Total int64 `json:"total_tokens"`
		} `json:"last_token_usage"`
		Window int64 `json:"model_context_window"`
	} `json:"info"`
	RateLimits *codexRateLimits `json:"rate_limits"`
	// error event: codex_error_info says which error ("usage_limit_exceeded", …)
	ErrorInfo json.RawMessage `json:"codex_error_info"`
	Namespace string          `json:"namespace"` // function_call: the tool's namespace (0.17x)
	ID        string          `json:"id"`        // image_generation_call: its call id
	// mcp_tool_call_end: the server and tool, and result {"Ok":CallToolResult} or {"Err":"…"}
	// (image_generation_end's result is the image, base64: never read)
	Invocation *struct{ Server, Tool string } `json:"invocation"`
	Result     json.RawMessage                `json:"result"`
	Prompt     string                         `json:"revised_prompt"` // image generation
	SavedPath  string                         `json:"saved_path"`
	// sub_agent_activity: which sub-agent, and started | interacted | interrupted | completed
	AgentPath string `json:"agent_path"`
	AgentID   string `json:"agent_thread_id"`
	EventID   string `json:"event_id"`
	Activity  string `json:"kind"`
	NumTurns  int    `json:"num_turns"` // thread_rolled_back: the last user turns dropped
}

type codexContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// codexSkip are line types that never carry rows; checked on the line's
// head so the big ones (session_meta, world_state) are not decoded.
var codexSkip = [][]byte{
	[]byte(`"type":"session_meta"`), []byte(`"type":"world_state"`), []byte(`"type":"turn_context"`),
	[]byte(`"type":"token_usage_record"`),
}

func (codex) ParseLine(line []byte, off int64) ([]Row, error) {
	head := line
	if len(head) > 96 {
		head = head[:96]
	}
	for _, s := range codexSkip {
		if bytes.Contains(head, s) {
			return nil, nil
		}
	}
	var l codexLine
	if json.Unmarshal(line, &l) != nil {
		return nil, nil
	}
	var it codexItem
	if len(l.Payload) == 0 && codexBareItems[l.Type] {
		// Rollouts before session_meta (codex-rs 0.1x–0.2x, spring 2025)
		// wrote response items bare: the line is the item, with no time.
		if json.Unmarshal(line, &it) != nil {
			return nil, nil
		}
		return codexResponseItem(it, Row{Key: "off:" + strconv.FormatInt(off, 10)}, false), nil
	}
	if json.Unmarshal(l.Payload, &it) != nil {
		return nil, nil
	}
	ts, _ := time.Parse(time.RFC3339Nano, l.Timestamp)
	base := Row{Time: ts, Key: "off:" + strconv.FormatInt(off, 10)}
	switch l.Type {
	case "response_item":
		compaction := l.Metadata != nil && l.Metadata.CompactionOutput
		return codexResponseItem(it, base, compaction), nil
	case "event_msg":
		return codexEvent(it, base), nil
	case "compacted":
		r := base
		r.Role, r.Kind, r.Text = "system", KindCompaction, "context compacted"
		if s := codexSummary(it.Message); s != "" {
			r.Text = clip(s, maxText)
		}
		return []Row{r}, nil
	}
	return nil, nil
}

// codexBareItems are the response item types the oldest rollouts wrote
// without the {"type":"response_item","payload":…} envelope.
var codexBareItems = map[string]bool{
	"message": true, "function_call": true, "function_call_output": true, "local_shell_call": true,
	"custom_tool_call": true, "custom_tool_call_output": true,
}

// codexSummary strips Codex's fixed preamble from a compaction message.
func codexSummary(msg string) string {
	const marker = "assist with your own analysis:\n"
	if i := strings.Index(msg, marker); i >= 0 {
		msg = msg[i+len(marker):]
	}
	return strings.TrimSpace(msg)
}

func codexResponseItem(it codexItem, base Row, compactionOutput bool) []Row {
	switch it.Type {
	case "message":
		return codexMessage(it, base, compactionOutput)
	case "function_call":
		return codexFunctionCall(it, base)
	case "custom_tool_call":
		if it.Name == "apply_patch" {
			return codexPatchRows(it.CallID, it.Input, base)
		}
		return []Row{codexCallRow(it.Name, it.CallID, base)}
	case "local_shell_call":
		r := codexCallRow("local_shell", it.CallID, base)
		var a struct {
			Command []string `json:"command"`
		}
		if json.Unmarshal(it.Action, &a) == nil {
			r.Command = clip(shellArgv(a.Command), maxResult)
		}
		return []Row{r}
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		return []Row{codexOutput(it, base)}
	case "web_search_call":
		return codexSearch(it, base)
	case "image_generation_call":
		r := codexCallRow("image_generation", it.ID, base)
		r.Text = clip(it.Prompt, 200)
		return []Row{r}
	}
	return nil
}

// codexSearch is a web search the model ran (a web_search_call item, or the web_search_end event some builds write
// as well): a call row whose text is the query or the page, keyed like codexSayKey (second + text) so the two copies
// are one row. It has no result row: Codex keeps the results in the model's context only.
func codexSearch(it codexItem, base Row) []Row {
	var a struct {
		Type, Query, URL, Pattern string
		Queries                   []string
	}
	_ = json.Unmarshal(it.Action, &a)
	text := cmp.Or(a.Query, it.Query, strings.Join(a.Queries, "; "))
	switch {
	case a.Type == "open_page" && a.URL != "":
		text = "open " + a.URL
	case a.Type == "find_in_page" && a.URL != "":
		text = "find \"" + a.Pattern + "\" in " + a.URL
	}
	r := codexCallRow("web_search", "", base)
	r.Text = clip(text, 200)
	if !r.Time.IsZero() {
		r.Key = "search:" + r.Time.UTC().Truncate(time.Second).Format(time.RFC3339) + ":" + textHash(text)
	}
	return []Row{r}
}

// Texts Codex feeds the model as user or developer input that are not the
// user's request; used only when content_item_kinds is absent.
var codexInjectedPrefixes = []string{
	"# AGENTS.md instructions", "<environment_context>", "<user_instructions>", "<INSTRUCTIONS>",
	"<turn_aborted>", "<hook_prompt", "<skills_instructions>", "<permissions instructions>",
	"Another language model started to solve this problem",
}

func codexMessage(it codexItem, base Row, compactionOutput bool) []Row {
	var kinds []string
	if it.Meta != nil {
		kinds = it.Meta.Kinds
	}
	var rows []Row
	for i, c := range it.Content {
		if !codexTextContent(c.Type) || strings.TrimSpace(c.Text) == "" || codexImageTag(it.Role, c.Text) {
			continue
		}
		kind := ""
		if i < len(kinds) {
			kind = kinds[i]
		}
		r := base
		if i > 0 {
			r.Key = base.Key + "#" + strconv.Itoa(i)
		}
		if codexContentRow(&r, it.Role, kind, c.Text, compactionOutput) {
			rows = append(rows, r)
		}
	}
	return codexImagePrompt(it, rows, base)
}

// codexImagePrompt notes a user message's pasted or attached image in its prompt; an image sent alone is a prompt of
// its own.
func codexImagePrompt(it codexItem, rows []Row, base Row) []Row {
	if it.Role != "user" || !slices.ContainsFunc(it.Content, func(c codexContent) bool { return c.Type == "input_image" }) {
		return rows
	}
	if n := len(rows) - 1; n >= 0 && rows[n].Kind == KindPrompt {
		rows[n].Text = codexImageNote(rows[n].Text, nil)
	} else if len(rows) == 0 {
		r := base
		if !r.Time.IsZero() {
			r.Key = codexPromptKey(r.Time, "")
		}
		r.Role, r.Kind, r.Text = "user", KindPrompt, codexImageNote("", nil)
		rows = append(rows, r)
	}
	return rows
}

// codexImageTag reports the texts Codex wraps a prompt's image in ("<image name=[Image #1]>", "</image>"): markup,
// never the user's words.
func codexImageTag(role, t string) bool {
	t = strings.TrimSpace(t)
	return role == "user" && (t == "</image>" || strings.HasPrefix(t, "<image") && strings.HasSuffix(t, ">"))
}

// codexImageNote is a prompt's text with its images noted, unless its words already point at them ("[Image #1]"):
// the files attached, or "[image]" for pasted ones, whose bytes the handoff cannot carry.
func codexImageNote(text string, local []json.RawMessage) string {
	if strings.Contains(text, "[Image #") {
		return text
	}
	note := imageOnly
	if files := codexStrings(local); len(files) > 0 {
		note = "[image: " + strings.Join(files, ", ") + "]"
	}
	return strings.TrimSpace(text + " " + note)
}

// codexStrings are the non-empty strings of a list (its other values skipped).
func codexStrings(raws []json.RawMessage) []string {
	var out []string
	for _, raw := range raws {
		var p string
		if json.Unmarshal(raw, &p) == nil && p != "" {
			out = append(out, p)
		}
	}
	return out
}

func codexTextContent(typ string) bool {
	return typ == "input_text" || typ == "output_text" || typ == "text"
}

// codexContentRow makes r the row of one text content of a message by
// role (kind is its metadata's); false for text that makes no row.
func codexContentRow(r *Row, role, kind, text string, compactionOutput bool) bool {
	switch {
	case strings.HasPrefix(kind, "agents_md.") || strings.HasPrefix(kind, "environments."):
		return false // project instructions and environment, never a request or a receipt
	case IsCarryoverText(text) && role != "assistant":
		// carryover's own handoff (hooks.additional_context) or a
		// copy of it anywhere in the model input: a delivery receipt.
		r.Role, r.Kind, r.Text = "system", KindInjection, carryoverHeader(text)
	case role == "assistant":
		if compactionOutput {
			return false // the compacted line records the summary
		}
		if !r.Time.IsZero() {
			r.Key = codexSayKey(r.Time, text)
		}
		r.Role, r.Kind, r.Text = "assistant", KindText, clip(text, maxText)
	case role == "user" && codexRealPrompt(kind, text):
		if !r.Time.IsZero() { // the oldest rollouts have no times: offsets keep repeats apart
			r.Key = codexPromptKey(r.Time, text)
		}
		r.Role, r.Kind, r.Text = "user", KindPrompt, promptText(text)
	default:
		return false // developer instructions, AGENTS.md, environment, hook prompts
	}
	return true
}

func codexRealPrompt(kind, text string) bool {
	if kind != "" {
		return kind == "user.text"
	}
	t := strings.TrimLeft(text, " \t\r\n")
	for _, p := range codexInjectedPrefixes {
		if strings.HasPrefix(t, p) {
			return false
		}
	}
	return true
}

func codexCallRow(name, callID string, base Row) Row {
	r := base
	if callID != "" {
		r.Key = "call:" + callID
	}
	if name == "" {
		name = "unknown"
	}
	r.Role, r.Kind, r.ToolName, r.CallID = "assistant", KindToolCall, name, callID
	return r
}

func codexFunctionCall(it codexItem, base Row) []Row {
	var args map[string]json.RawMessage
	var s string
	if json.Unmarshal(it.Arguments, &s) == nil {
		_ = json.Unmarshal([]byte(s), &args)
	} else {
		_ = json.Unmarshal(it.Arguments, &args)
	}
	argStr := func(k string) string {
		var s string
		if json.Unmarshal(args[k], &s) == nil {
			return s
		}
		return ""
	}
	if it.Name == "apply_patch" {
		if in := argStr("input"); in != "" {
			return codexPatchRows(it.CallID, in, base)
		}
	}
	r := codexCallRow(codexToolName(it.Namespace, it.Name), it.CallID, base)
	if t := planText(it.Name, it.Arguments); t != "" {
		r.Text = t
		return []Row{r}
	}
	cmd := argStr("cmd")
	if cmd == "" {
		cmd = argStr("command")
	}
	if cmd == "" {
		var argv []string
		if json.Unmarshal(args["command"], &argv) == nil {
			cmd = shellArgv(argv)
		}
	}
	if cmd == "" {
		return []Row{r}
	}
	// Older models ran apply_patch as a shell heredoc.
	if i := strings.Index(cmd, "*** Begin Patch"); i >= 0 && strings.HasPrefix(strings.TrimSpace(cmd), "apply_patch") {
		return codexPatchRows(it.CallID, cmd[i:], base)
	}
	r.Command = clip(cmd, maxResult)
	return []Row{r}
}

// codexToolName is a function call's tool name, qualified by its namespace (0.17x writes a namespaced tool, an MCP
// server's or a plugin's, as {"namespace":…,"name":…}) the way MCP tools are named elsewhere: ns__name.
func codexToolName(ns, name string) string {
	if ns == "" || name == "" {
		return name
	}
	return strings.TrimSuffix(ns, "__") + "__" + name
}

// shellArgv turns ["bash","-lc","cmd"] into "cmd" and other argv into a
// space-joined line.
func shellArgv(argv []string) string {
	if len(argv) == 3 && (argv[1] == "-lc" || argv[1] == "-c") {
		return argv[2]
	}
	return strings.Join(argv, " ")
}

// codexPatchRows is one tool-call row per file named in an apply_patch
// patch (Add/Update/Delete File headers, Move to targets); Text is the
// file's header plus its added lines, so TODOs it introduces are visible.
func codexPatchRows(callID, patch string, base Row) []Row {
	files := parsePatch(patch)
	if len(files) == 0 {
		return []Row{codexCallRow("apply_patch", callID, base)}
	}
	rows := make([]Row, 0, len(files))
	for i, f := range files {
		r := codexCallRow("apply_patch", callID, base)
		if i > 0 {
			r.Key += "#" + strconv.Itoa(i)
		}
		r.FilePath = f.path
		r.Text = clip(f.header+"\n"+f.added.String(), maxResult)
		rows = append(rows, r)
	}
	return rows
}

type patchFile struct {
	path, header string
	added        strings.Builder
}

func parsePatch(patch string) []*patchFile {
	var files []*patchFile
	var cur *patchFile
	for _, ln := range strings.Split(patch, "\n") {
		ln = strings.TrimRight(ln, "\r")
		if strings.HasPrefix(ln, "*** ") {
			for _, h := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
				if strings.HasPrefix(ln, h) {
					p := strings.TrimSpace(ln[len(h):])
					if p == "" {
						break
					}
					if h == "*** Move to: " && cur != nil {
						cur.path, cur.header = p, cur.header+"\n"+ln
						break
					}
					cur = &patchFile{path: p, header: ln}
					files = append(files, cur)
				}
			}
			continue
		}
		if cur != nil && strings.HasPrefix(ln, "+") && cur.added.Len() < maxResult {
			cur.added.WriteString(ln[1:])
			cur.added.WriteByte('\n')
		}
	}
	return files
}

// codexFailurePrefixes mark outputs of calls that never ran.
var codexFailurePrefixes = []string{
	"Command blocked by PreToolUse hook", "approval policy is Never", "apply_patch verification failed",
	"Failed to apply patch", "exec_command failed", "execution error:",
}

// codexStopped classifies the output codex-rs writes for a call the user
// did not let run: "exec command rejected by user" / "patch rejected by
// user" (ReviewDecision::Denied) is a refusal, "aborted by user" (Abort, or
// Ctrl-C while it waited) an interruption; "" otherwise.
func codexStopped(t string) Kind {
	first, _, _ := strings.Cut(t, "\n")
	switch low := strings.ToLower(first); {
	case strings.Contains(low, "rejected by user"), strings.Contains(low, "denied by user"), strings.Contains(low, "declined by user"):
		return KindRefused
	case strings.HasPrefix(low, "aborted by user"), strings.HasPrefix(low, "command aborted by user"):
		return KindInterrupted
	}
	return ""
}

func codexOutput(it codexItem, base Row) Row {
	r := base
	if it.CallID != "" {
		r.Key = "out:" + it.CallID
	}
	r.Role, r.CallID = "tool", it.CallID
	text, exit := codexOutputText(it.Output)
	head, body := codexSplitOutput(text)
	if exit == nil {
		if m := exitCodeRE().FindStringSubmatch(head); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil {
				exit = intPtr(n)
			}
		}
	}
	r.Kind, r.ExitCode = KindToolResult, exit
	if exit != nil && *exit != 0 {
		r.Kind = KindError
	}
	if exit == nil {
		kind, said, stopped := codexNoExit(text)
		if stopped {
			r.Kind, r.Text = kind, clip(said, maxResult)
			return r
		}
		r.Kind = cmp.Or(kind, r.Kind)
	}
	r.Text = clip(body, maxResult)
	return r
}

// codexSplitOutput splits an exec output at its "Output:" line into the
// header (exit code, wall time) and the command's output; both are the
// whole text without one.
func codexSplitOutput(text string) (head, body string) {
	if i := strings.Index(text, "\nOutput:\n"); i >= 0 {
		return text[:i], text[i+len("\nOutput:\n"):]
	}
	if i := strings.Index(text, "\nOutput:"); i >= 0 {
		return text[:i], text[i+len("\nOutput:"):]
	}
	return text, text
}

// codexNoExit reads an output without an exit code: stopped is true for a
// call the user stopped (said is then what it says); else kind is
// KindError for a failure Codex reported, "" otherwise.
func codexNoExit(text string) (kind Kind, said string, stopped bool) {
	t := strings.TrimSpace(text)
	if w, rest, ok := strings.Cut(t, "\n"); ok && strings.HasPrefix(w, "Wall time:") {
		// Codex 0.169 writes an interrupted exec_command as "Wall
		// time: 0.7 seconds\naborted by user" (seen in the Ctrl-C e2e).
		t = strings.TrimSpace(rest)
	}
	if k := codexStopped(t); k != "" {
		return k, t, true
	}
	for _, p := range codexFailurePrefixes {
		if strings.HasPrefix(t, p) {
			return KindError, "", false
		}
	}
	return "", "", false
}

// codexOutputText flattens a tool output: a plain string, a JSON string
// holding {"output":…,"metadata":{"exit_code":N}} (older builds), a list of
// content items, or an object with content/output.
func codexOutputText(raw json.RawMessage) (string, *int) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		var legacy struct {
			Output   *string `json:"output"`
			Metadata *struct {
				ExitCode *int `json:"exit_code"`
			} `json:"metadata"`
		}
		if strings.HasPrefix(s, "{") && json.Unmarshal([]byte(s), &legacy) == nil && legacy.Output != nil {
			var exit *int
			if legacy.Metadata != nil {
				exit = legacy.Metadata.ExitCode
			}
			return *legacy.Output, exit
		}
		var parts []codexContent // an MCP tool's content blocks, serialized: their text
		if strings.HasPrefix(s, `[{"type":`) && json.Unmarshal([]byte(s), &parts) == nil {
			return joinCodexText(parts), nil
		}
		return s, nil
	}
	var parts []codexContent
	if json.Unmarshal(raw, &parts) == nil {
		return joinCodexText(parts), nil
	}
	var obj struct {
		Content json.RawMessage `json:"content"`
		Output  string          `json:"output"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		if obj.Output != "" {
			return obj.Output, nil
		}
		if json.Unmarshal(obj.Content, &s) == nil {
			return s, nil
		}
		if json.Unmarshal(obj.Content, &parts) == nil {
			return joinCodexText(parts), nil
		}
	}
	return "", nil
}

func joinCodexText(parts []codexContent) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

// codexEvent keeps what response_items do not already say: token figures,
// API errors, stops. item_completed duplicates response_items and is skipped;
// user_message and agent_message share their copy's key (one ledger row),
// as some builds write a message only as the event (an aborted turn's
// "Working on it.", a commentary before a tool call).
func codexEvent(it codexItem, base Row) []Row {
	if read := codexEvents[it.Type]; read != nil {
		return read(it, base)
	}
	return nil
}

var codexEvents = map[string]func(it codexItem, base Row) []Row{
	"token_count":     codexTokenCount,
	"error":           codexError,
	"user_message":    codexUserMessage,
	"agent_message":   codexAgentMessage,
	"patch_apply_end": codexPatchEnd,
	"web_search_end":  codexSearch,
	"turn_aborted":    codexTurnAborted,
	// Codex persists these ends, never their begins: each is the call and its outcome.
	"mcp_tool_call_end":    codexMCPEnd,
	"image_generation_end": codexImageEnd,
	"sub_agent_activity":   codexSubAgent,
	"thread_rolled_back":   codexRolledBack,
}

// codexRolledBack: the user rolled the thread back (its last num_turns user turns dropped from the context): those
// turns' rows are abandoned (KindRewind).
func codexRolledBack(it codexItem, r Row) []Row {
	if it.NumTurns <= 0 {
		return nil
	}
	r.Role, r.Kind, r.Text = "user", KindRewind, "turns:"+strconv.Itoa(it.NumTurns)
	return []Row{r}
}

// codexCallEnd is a call (name, id, what it was asked) and its outcome: an error row when failed, else a result
// row keyed like the function_call_output that may follow, so the two are one row.
func codexCallEnd(base Row, name, id, asked, text string, failed bool) []Row {
	call := codexCallRow(name, id, base)
	call.Text = clip(asked, 200)
	out := base
	out.Role, out.Kind, out.ToolName, out.CallID, out.Text = "tool", KindToolResult, name, id, clip(text, maxResult)
	out.Key = "out:" + id
	if failed {
		// Keyed apart: the function_call_output Codex writes after it does not say the call failed.
		out.Kind, out.Key = KindError, "failed:"+id
	}
	return []Row{call, out}
}

// codexMCPEnd reads mcp_tool_call_end: the only record of whether an MCP tool call failed ({"Err":…}, or a result
// with isError), since the function_call_output keeps only the content.
func codexMCPEnd(it codexItem, base Row) []Row {
	if it.CallID == "" || it.Invocation == nil {
		return nil
	}
	var res struct {
		Ok *struct {
			Content      []codexContent  `json:"content"`
			Structured   json.RawMessage `json:"structuredContent"`
			IsError      bool            `json:"isError"`
			IsErrorSnake bool            `json:"is_error"`
		} `json:"Ok"`
		Err *string `json:"Err"`
	}
	_ = json.Unmarshal(it.Result, &res)
	text, failed := "", res.Err != nil
	switch {
	case res.Err != nil:
		text = *res.Err
	case res.Ok != nil:
		text, failed = cmp.Or(joinCodexText(res.Ok.Content), string(res.Ok.Structured)), res.Ok.IsError || res.Ok.IsErrorSnake
	}
	name := "mcp__" + it.Invocation.Server + "__" + it.Invocation.Tool
	return codexCallEnd(base, name, it.CallID, "", text, failed)
}

// codexImageEnd reads image_generation_end: the prompt the image was made from and where it was saved; a status
// other than completed is a failure.
func codexImageEnd(it codexItem, base Row) []Row {
	if it.CallID == "" {
		return nil
	}
	failed := it.Status != "" && it.Status != "completed"
	text := "image generation " + it.Status
	if it.SavedPath != "" {
		text = "saved " + it.SavedPath
	}
	return codexCallEnd(base, "image_generation", it.CallID, it.Prompt, text, failed)
}

// codexSubAgent reads sub_agent_activity (the sub-agent's own work is in its rollout, read as a subagent file): its
// start is a call, its completion the result, an interruption stops it; a message sent to it adds nothing.
func codexSubAgent(it codexItem, base Row) []Row {
	if it.AgentID == "" {
		return nil
	}
	id, what := "agent:"+it.AgentID, "sub-agent "+cmp.Or(it.AgentPath, it.AgentID)
	r := base
	r.Role, r.ToolName, r.CallID, r.Key = "tool", "sub_agent", id, id+":"+cmp.Or(it.EventID, base.Key)
	switch it.Activity {
	case "started":
		c := codexCallRow("sub_agent", id, base)
		c.Text = what
		return []Row{c}
	case "completed":
		r.Kind, r.Text = KindToolResult, what+" completed"
	case "interrupted":
		r.Kind, r.Text = KindInterrupted, what+" interrupted"
	default:
		return nil
	}
	return []Row{r}
}

func codexTokenCount(it codexItem, r Row) []Row {
	lim := it.RateLimits.limit()
	if it.Info == nil || it.Info.Last == nil || it.Info.Last.Total <= 0 {
		if lim == nil {
			return nil
		}
		r.Role, r.Kind, r.Text, r.Limit = "system", KindLimit, lim.Phrase(), lim
		return []Row{r}
	}
	r.Role, r.Kind = "assistant", KindUsage
	r.TokensUsed, r.TokensMax = it.Info.Last.Total, it.Info.Window
	r.Limit = lim
	return []Row{r}
}

func codexError(it codexItem, r Row) []Row {
	if it.Message == "" {
		return nil
	}
	r.Role, r.Kind, r.Text = "system", KindError, clip(it.Message, maxResult)
	status := 0
	if bytes.Contains(it.ErrorInfo, []byte("usage_limit")) || bytes.Contains(it.ErrorInfo, []byte("rate_limit")) {
		status = 429
	}
	r.Limit = LimitFromError(it.Message, status, r.Time)
	return []Row{r}
}

// codexUserMessage: some versions write the prompt only here (no
// response_item user message); where both exist they share
// codexPromptKey, so the ledger keeps one row.
func codexUserMessage(it codexItem, r Row) []Row {
	images := len(it.Images) + len(it.Local)
	if strings.TrimSpace(it.Message) == "" && images == 0 || !codexRealPrompt("", it.Message) {
		return nil
	}
	r.Key = codexPromptKey(r.Time, it.Message)
	if IsCarryoverText(it.Message) {
		r.Role, r.Kind, r.Text = "system", KindInjection, carryoverHeader(it.Message)
		return []Row{r}
	}
	r.Role, r.Kind, r.Text = "user", KindPrompt, promptText(it.Message)
	if images > 0 {
		r.Text = codexImageNote(r.Text, it.Local)
	}
	return []Row{r}
}

func codexAgentMessage(it codexItem, r Row) []Row {
	if strings.TrimSpace(it.Message) == "" || r.Time.IsZero() {
		return nil // no time, no key shared with its response_item copy
	}
	r.Key = codexSayKey(r.Time, it.Message)
	r.Role, r.Kind, r.Text = "assistant", KindText, clip(it.Message, maxText)
	return []Row{r}
}

// codexTurnAborted: the user stopped the turn (Ctrl-C, Esc, or a new
// prompt sent while it ran: reason "replaced"). The <turn_aborted> user
// message Codex also writes is skipped as injected text.
func codexTurnAborted(it codexItem, r Row) []Row {
	r.Role, r.Kind, r.Text = "user", KindInterrupted, "turn aborted"
	if it.Reason != "" {
		r.Text += " (" + clip(it.Reason, 80) + ")"
	}
	return []Row{r}
}

// codexRateLimits is token_count's rate_limits: the plan's usage windows
// as the API reported them in its x-codex-* headers.
type codexRateLimits struct {
	Primary   *codexWindow    `json:"primary"`
	Secondary *codexWindow    `json:"secondary"`
	Reached   json.RawMessage `json:"rate_limit_reached_type"`
}

type codexWindow struct {
	UsedPercent   float64 `json:"used_percent"`
	WindowMinutes int64   `json:"window_minutes"`
	ResetsAt      int64   `json:"resets_at"`         // unix seconds
	ResetsIn      int64   `json:"resets_in_seconds"` // older builds
}

// codexNear is the used share from which a window is reported at all (the
// policy decides what to do with it; 90 % by default).
const codexNear = 50

// limit is the fullest window as a Limit (nil when no window is reported
// or none is past codexNear).
func (rl *codexRateLimits) limit() *Limit {
	if rl == nil {
		return nil
	}
	reached := len(rl.Reached) > 0 && string(rl.Reached) != "null"
	var w *codexWindow
	for _, c := range []*codexWindow{rl.Primary, rl.Secondary} {
		if c != nil && (w == nil || c.UsedPercent > w.UsedPercent) {
			w = c
		}
	}
	if w == nil || (!reached && w.UsedPercent < codexNear) {
		return nil
	}
	l := &Limit{Kind: LimitUsage, Reached: reached || w.UsedPercent >= 100, UsedPercent: min(w.UsedPercent, 100)}
	l.Window = codexWindowName(w.WindowMinutes)
	if w.ResetsAt > 0 {
		l.ResetsAt = time.Unix(w.ResetsAt, 0).UTC()
	}
	return l
}

// codexWindowName names a usage window of m minutes ("5h", "weekly").
func codexWindowName(m int64) string {
	switch {
	case m == 0:
		return ""
	case m%(7*24*60) == 0:
		return "weekly"
	case m%60 == 0:
		return strconv.FormatInt(m/60, 10) + "h"
	}
	return strconv.FormatInt(m, 10) + "m"
}

// codexPromptKey keys a prompt by its time and text, so the copy Codex
// writes as a response_item and the one it writes as an event_msg
// user_message (same timestamp) are one row.
func codexPromptKey(t time.Time, text string) string {
	return "prompt:" + t.UTC().Format(time.RFC3339Nano) + ":" + textHash(text)
}

// codexSayKey keys an assistant message by its second and text, a function of the line alone: Codex writes the
// agent_message event and its response_item copy one after the other (ms apart), so both take one key, and an
// incremental read that stops between them gives the rows a whole read does. A pair that straddles a second
// boundary (a gap of g ms: g/1000 of pairs) stays two rows of the same words side by side; pairing them by the
// lines before would make a read's keys depend on where it started, and a wider bucket would merge a later
// turn's same words into the first's row.
func codexSayKey(t time.Time, text string) string {
	return "say:" + t.UTC().Truncate(time.Second).Format(time.RFC3339) + ":" + textHash(text)
}

func textHash(text string) string {
	h := fnv.New64a()
	h.Write([]byte(text))
	return strconv.FormatUint(h.Sum64(), 16)
}

// codexPatchEnd reads the older patch_apply_end event: one edit row per
// changed file (sorted), an error row when the patch failed.
func codexPatchEnd(it codexItem, base Row) []Row {
	var paths []string
	for p := range it.Changes {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var rows []Row
	for _, p := range paths {
		r := codexCallRow("apply_patch", it.CallID, base)
		r.Key = "patch:" + it.CallID + ":" + p
		r.FilePath = p
		rows = append(rows, r)
	}
	failed := (it.Success != nil && !*it.Success) || it.Status == "failed" || it.Status == "declined"
	if failed {
		r := base
		r.Key = "patch:" + it.CallID + ":end"
		r.Role, r.Kind, r.ToolName, r.CallID = "tool", KindError, "apply_patch", it.CallID
		r.Text = clip(strings.TrimSpace(it.Stderr+"\n"+it.Stdout), maxResult)
		rows = append(rows, r)
	}
	return rows
}
