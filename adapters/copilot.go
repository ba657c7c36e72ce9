package adapters

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CopilotCLI is the GitHub Copilot CLI adapter.
//
// Its transcript is ~/.copilot/session-state/<sessionId>/events.jsonl
// ($COPILOT_HOME replaces ~/.copilot), an append-only event log. Copilot CLI
// 1.0.102 writes it on its own schedule, behind its hooks: measured with the
// real binary (-p, idle 2-core machine), a hook starts while the file still
// lacks the turn's last events, and the file reaches the hook's own
// hook.start line 0.1–0.15 s later (a loaded machine: up to about 1 s); it
// does not wait for the hooks to return. Nothing is on disk at a new
// session's sessionStart (Transcripts registers the path, MaybeMissing).
// So agentStop, preCompact and sessionEnd wait for their own hook.start
// line (copilotAwaitFlush, bounded by FlushWait) before reading: the
// handoff written when the session ends holds its last turn.
var CopilotCLI Adapter = copilotCLI{}

// copilotCLIAgent is what carryover knows about the agent besides its files.
var copilotCLIAgent = &Agent{
	Name:     "copilot-cli",
	Display:  "GitHub Copilot CLI",
	Aliases:  []string{"copilot"},
	Adapter:  CopilotCLI,
	Lister:   copilotLister{},
	Envelope: EnvelopeFlatCamel,
	Format: Format{Newest: "1.0.102", Version: `"copilotVersion"\s*:\s*"(\d+\.\d+\.\d+)`, Shapes: []string{
		"GitHub Copilot CLI 1.0.x session-state/<id>/events.jsonl (session.start, user.message, tool.execution_*)",
	}},
	Events: map[string]Class{
		"sessionStart": ClassStart, "userPromptSubmitted": ClassPrompt,
		"preToolUse": ClassTool, "postToolUse": ClassTool, "postToolUseFailure": ClassTool,
		"agentStop": ClassStop, "preCompact": ClassCompact, "sessionEnd": ClassEnd,
	},
	Sniff:         func(b []byte) bool { return containsAll(b, `"type":"session.start"`) },
	Launch:        []string{"copilot", "-i"},
	ContextWindow: 128_000,
	AwaitFlush:    copilotAwaitFlush,
	// 1.5 s: the measured lag is 0.1–1 s; carryover registers these hooks
	// with a 10 s timeout (specs/tools.toml) and the wait ends as soon as
	// the line is there.
	FlushWait: 1500 * time.Millisecond,
	// VS Code Copilot reads every file in ~/.copilot/hooks/ too.
	ForeignHost: func(getenv func(string) string) string {
		if getenv("COPILOT_CLI") != "1" && (getenv("VSCODE_PID") != "" || getenv("VSCODE_IPC_HOOK") != "" || getenv("TERM_PROGRAM") == "vscode") {
			return "Copilot CLI stub running inside VS Code; the VS Code Copilot stub handles it"
		}
		return ""
	},
	CreateTools:  []string{"create"},
	PlanTools:    []string{"update_todo"},
	Instructions: []string{".github/copilot-instructions.md"},
	ProjectEnv:   "COPILOT_PROJECT_DIR",
}

var (
	_ LineParser = copilotCLI{}
	_ Lister     = copilotLister{}
)

type copilotCLI struct{}

func (copilotCLI) Name() string { return "copilot-cli" }

// ParseHook accepts both payload dialects: camelCase events (sessionId,
// transcriptPath, epoch-ms timestamp) and PascalCase events (session_id,
// transcript_path, hook_event_name).
func (copilotCLI) ParseHook(event string, b []byte, env Env) (Hook, error) {
	p, err := decodePayload(b)
	if err != nil {
		return Hook{}, err
	}
	h := Hook{
		Tool:           "copilot-cli",
		Event:          event,
		SessionID:      p.str("sessionId", "session_id"),
		TranscriptPath: p.str("transcriptPath", "transcript_path"),
		Cwd:            p.str("cwd"),
		Source:         copilotSource(p.str("source")),
		Prompt:         p.str("prompt", "initialPrompt", "initial_prompt"),
		FlushMark:      copilotFlushMark(p["timestamp"]),
	}
	if h.Event == "" {
		h.Event = p.str("hook_event_name", "hookEventName")
	}
	if env.Getenv != nil {
		h.Project = env.Getenv("COPILOT_PROJECT_DIR")
		if h.Project == "" {
			h.Project = env.Getenv("CLAUDE_PROJECT_DIR")
		}
	}
	return h, nil
}

// copilotFlushMark is the text the hook's own hook.start line holds: its
// input is this payload, whose "timestamp" (epoch ms in the camelCase
// dialect, an ISO string in the PascalCase one) is written compactly.
func copilotFlushMark(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || len(raw) > 64 || bytes.ContainsAny(raw, "\\\n{[") {
		return ""
	}
	return `"timestamp":` + string(raw)
}

// copilotHookStart begins every hook.start line of events.jsonl.
var copilotHookStart = []byte(`{"type":"hook.start"`)

// copilotAwaitFlush polls the session's events.jsonl (every 20 ms, until
// deadline) for the hook.start line that holds h.FlushMark: Copilot writes
// events in order, so once it is there so is everything before the hook.
// Only complete lines of the file's last 256 KB (when first seen) and what
// is appended later are looked at.
func copilotAwaitFlush(h Hook, env Env, deadline time.Time) bool {
	path := h.TranscriptPath
	if path == "" {
		path = CopilotEventsPath(h.SessionID, env)
	}
	if path == "" || h.FlushMark == "" {
		return false
	}
	mark := []byte(h.FlushMark)
	var from int64 = -1
	var buf []byte
	for {
		found, next := copilotScanFrom(path, from, mark, &buf)
		if found {
			return true
		}
		from = next
		if time.Until(deadline) < 20*time.Millisecond {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// copilotScanFrom reads path's complete lines from offset from (-1: the
// last 256 KB) and reports whether one is a hook.start line holding mark;
// next is where the next scan starts (the first incomplete line).
func copilotScanFrom(path string, from int64, mark []byte, buf *[]byte) (found bool, next int64) {
	const window = 256 << 10
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false, from
	}
	size := fi.Size()
	if from < 0 {
		from = max(0, size-window)
	}
	if size <= from {
		return false, min(from, size) // not grown (or replaced: rescan its end)
	}
	f, err := openRegular(path) // never blocks on a FIFO swapped in after the stat
	if err != nil {
		return false, from
	}
	defer f.Close()
	n := min(size-from, 4*window) // bounded per poll; the rest on the next
	if int64(cap(*buf)) < n {
		*buf = make([]byte, n)
	}
	b := (*buf)[:n]
	m, _ := f.ReadAt(b, from)
	b = b[:m]
	end := bytes.LastIndexByte(b, '\n')
	if end < 0 {
		return false, from
	}
	for _, ln := range bytes.Split(b[:end], []byte{'\n'}) {
		if bytes.HasPrefix(ln, copilotHookStart) && bytes.Contains(ln, mark) {
			return true, from + int64(end) + 1
		}
	}
	return false, from + int64(end) + 1
}

// copilotSource maps sessionStart's "new" to the common "startup".
func copilotSource(s string) string {
	if s == "new" {
		return "startup"
	}
	return s
}

// Transcripts is the session's events.jsonl: the payload's transcriptPath
// when given (agentStop, preCompact), else built from the session id.
func (copilotCLI) Transcripts(h Hook, env Env) []Transcript {
	path := h.TranscriptPath
	if path == "" {
		path = CopilotEventsPath(h.SessionID, env)
	}
	if path == "" {
		return nil
	}
	return []Transcript{{Path: path, SessionID: h.SessionID, MaybeMissing: true}}
}

// CopilotEventsPath is where Copilot CLI keeps a session's event log, or ""
// when the id is not a plain id or no home is known.
func CopilotEventsPath(sessionID string, env Env) string {
	if !plainID(sessionID) {
		return ""
	}
	home := ""
	if env.Getenv != nil {
		home = env.Getenv("COPILOT_HOME")
	}
	if home == "" {
		if env.Home == "" {
			return ""
		}
		home = filepath.Join(env.Home, ".copilot")
	}
	return filepath.Join(home, "session-state", sessionID, "events.jsonl")
}

// plainID reports whether s can name a directory safely.
func plainID(s string) bool {
	if s == "" || len(s) > 128 || s == "." || s == ".." {
		return false
	}
	return strings.IndexFunc(s, func(c rune) bool { return !idChar(c) }) < 0
}

// idChar reports a letter, digit, '-', '_' or '.' of ASCII.
func idChar(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
}

func (copilotCLI) ParseLine(line []byte, off int64) ([]Row, error) {
	return copilotEvent(line, off), nil
}

// copilotEventLine is one events.jsonl line (Copilot CLI, and the Copilot
// Chat extension's transcripts in VS Code, which use the same vocabulary).
type copilotEventLine struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

type copilotToolRequest struct {
	ToolCallID string          `json:"toolCallId"`
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
}

// copilotSkip are event types that never carry rows; checked on the line's
// first bytes so the ~25 KB system.message and ~32 KB model snapshots cost
// nothing.
var copilotSkip = [][]byte{
	[]byte(`"type":"system.message"`), []byte(`"type":"model.`), []byte(`"type":"assistant.turn_`),
	[]byte(`"type":"tool.execution_start"`), []byte(`"type":"permission.`), []byte(`"type":"session.shutdown"`),
	[]byte(`"type":"session.start"`), []byte(`"type":"session.resume"`), []byte(`"type":"session.model_change"`),
	[]byte(`"type":"session.compaction_start"`),
}

// copilotExitCode finds the exit code in a shell tool's result text: the
// number of the first "completed with exit code <n>>", n an optional '-' and
// ASCII digits (what `completed with exit code (-?\d+)>` matched).
func copilotExitCode(text string) (string, bool) {
	const lead = "completed with exit code "
	for from := 0; ; {
		i := strings.Index(text[from:], lead)
		if i < 0 {
			return "", false
		}
		start := from + i + len(lead)
		j := start
		if j < len(text) && text[j] == '-' {
			j++
		}
		digits := j
		for j < len(text) && '0' <= text[j] && text[j] <= '9' {
			j++
		}
		if j > digits && j < len(text) && text[j] == '>' {
			return text[start:j], true
		}
		from += i + 1
	}
}

func copilotEvent(line []byte, off int64) []Row {
	if copilotSkipped(line) {
		return nil
	}
	var l copilotEventLine
	if err := json.Unmarshal(line, &l); err != nil || len(l.Data) == 0 {
		return nil
	}
	read := copilotEvents[l.Type]
	if read == nil {
		return nil
	}
	d, err := decodePayload(l.Data)
	if err != nil {
		return nil
	}
	key := l.ID
	if key == "" {
		key = "off:" + strconv.FormatInt(off, 10)
	}
	ts, _ := time.Parse(time.RFC3339Nano, l.Timestamp)
	return read(d, Row{Key: key, Time: ts, Sidechain: d.str("parentToolCallId") != ""})
}

// copilotSkipped reports an event line whose type (within its first 48
// bytes) carries no row: the copilotSkip types, and hook events that do
// not hold carryover's context.
func copilotSkipped(line []byte) bool {
	head := line
	if len(head) > 48 {
		head = head[:48]
	}
	for _, s := range copilotSkip {
		if bytes.Contains(head, s) {
			return true
		}
	}
	return bytes.Contains(head, []byte(`"type":"hook.`)) && !bytes.Contains(line, []byte("[CARRYOVER]"))
}

// copilotEvents reads each event type's data into rows.
var copilotEvents = map[string]func(d payload, base Row) []Row{
	"user.message":                copilotUserMessage,
	"assistant.message":           copilotAssistant,
	"tool.execution_complete":     copilotToolDone,
	"session.compaction_complete": copilotCompaction,
	"session.usage_record":        copilotUsage,
	"session.error":               copilotSessionError,
	"abort":                       copilotAbort,
	"hook.end":                    copilotHookEnd,
}

func copilotUserMessage(d payload, r Row) []Row {
	text := d.str("content")
	if strings.TrimSpace(text) == "" {
		return nil
	}
	if IsCarryoverText(text) {
		// Not seen in 1.0.102 (sessionStart context is not logged as a
		// user.message) but kept should a version log it.
		r.Kind, r.Role, r.Text = KindInjection, "system", carryoverHeader(text)+" via user.message"
		return []Row{r}
	}
	r.Role, r.Kind, r.Text = "user", KindPrompt, promptText(text)
	return []Row{r}
}

func copilotCompaction(d payload, base Row) []Row {
	if raw, ok := d["success"]; ok && string(bytes.TrimSpace(raw)) == "false" {
		return nil
	}
	r := base
	r.Role, r.Kind = "system", KindCompaction
	r.Text = "context compacted"
	if t := d.str("trigger"); t != "" {
		r.Text += " (" + t + ")"
	}
	if s := stripTag(d.str("summaryContent"), "summary"); s != "" {
		r.Text += ": " + clip(s, maxText)
	}
	r.TokensUsed, _ = d.num("preCompactionTokens")
	rows := []Row{r}
	post, ok1 := d.num("postCompactionTokens")
	limit, ok2 := d.num("tokenLimit")
	if ok1 && ok2 && post > 0 {
		u := base
		u.Key, u.Role, u.Kind, u.TokensUsed, u.TokensMax = base.Key+"#usage", "system", KindUsage, post, limit
		rows = append(rows, u)
	}
	return rows
}

func copilotUsage(d payload, r Row) []Row {
	u := d.obj("usage")
	if u == nil {
		return nil
	}
	in, _ := u.num("inputTokens")
	out, _ := u.num("outputTokens")
	if in+out <= 0 {
		return nil
	}
	r.Role, r.Kind, r.TokensUsed = "assistant", KindUsage, in+out
	r.TokensMax, _ = u.num("maxPromptTokens")
	return []Row{r}
}

func copilotSessionError(d payload, r Row) []Row {
	r.Role, r.Kind, r.ToolName = "system", KindError, "model API"
	r.Text = firstNonEmpty(clip(d.str("message", "errorType"), maxResult), "session error")
	status, _ := d.num("statusCode")
	r.Limit = LimitFromError(d.str("message")+" "+d.str("errorType"), int(status), r.Time)
	return []Row{r}
}

// copilotAbort: the user stopped the turn (data.reason "user_initiated").
func copilotAbort(d payload, r Row) []Row {
	r.Role, r.Kind, r.Text = "user", KindInterrupted, "turn aborted"
	if why := d.str("reason"); why != "" {
		r.Text += " (" + clip(why, 80) + ")"
	}
	return []Row{r}
}

// copilotHookEnd: carryover's own sessionStart context is recorded only
// here.
func copilotHookEnd(d payload, r Row) []Row {
	out := d.obj("output")
	if out == nil {
		return nil
	}
	text := out.str("additionalContext", "additional_context")
	if hso := out.obj("hookSpecificOutput"); text == "" && hso != nil {
		text = hso.str("additionalContext")
	}
	if !IsCarryoverText(text) {
		return nil
	}
	r.Role, r.Kind = "system", KindInjection
	r.Text = carryoverHeader(text) + " via " + firstNonEmpty(d.str("hookType"), "hook")
	return []Row{r}
}

// copilotStopped classifies a failed tool call. Copilot CLI 1.0.102 writes
// the call's result type as error.code: "rejected" (the user said no at
// the permission prompt) and "denied" (a rule, policy or hook denied it)
// are refusals; a failure logged "Operation aborted by user" (Esc or
// Ctrl-C while it ran) an interruption; anything else an error.
func copilotStopped(code, msg string) Kind {
	switch {
	case code == "rejected" || code == "denied":
		return KindRefused
	case strings.HasPrefix(strings.TrimSpace(msg), "Operation aborted by user"):
		return KindInterrupted
	}
	return KindError
}

// stripTag trims s and removes one <tag>…</tag> wrapper around it.
func stripTag(s, tag string) string {
	s = strings.TrimSpace(s)
	open, end := "<"+tag+">", "</"+tag+">"
	if strings.HasPrefix(s, open) && strings.HasSuffix(s, end) {
		s = strings.TrimSpace(s[len(open) : len(s)-len(end)])
	}
	return s
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func copilotAssistant(d payload, base Row) []Row {
	var rows []Row
	if text := d.str("content"); strings.TrimSpace(text) != "" {
		r := base
		r.Role, r.Kind, r.Text = "assistant", KindText, clip(text, maxText)
		rows = append(rows, r)
	}
	var reqs []copilotToolRequest
	if raw, ok := d["toolRequests"]; ok {
		_ = json.Unmarshal(raw, &reqs)
	}
	for i, tr := range reqs {
		if tr.Name == "" {
			continue
		}
		r := base
		r.Key = base.Key + "#" + strconv.Itoa(i)
		r.Role, r.Kind, r.ToolName, r.CallID = "assistant", KindToolCall, tr.Name, tr.ToolCallID
		rows = append(rows, copilotToolRows(r, tr.Name, tr.Arguments)...)
	}
	return rows
}

// copilotToolRows fills a tool call row from its arguments: the file(s)
// written, the shell command and the new text. Tools of both the Copilot
// CLI (create, edit, bash) and VS Code (create_file, replace_string_in_file,
// run_in_terminal, apply_patch, …) are known. A call touching several files
// becomes one row per file.
func copilotToolRows(r Row, name string, rawArgs json.RawMessage) []Row {
	if t := planText(name, rawArgs); t != "" {
		r.Text = t
		return []Row{r}
	}
	var args map[string]any
	if json.Unmarshal(rawArgs, &args) != nil {
		// VS Code rounds carry arguments as a JSON string.
		var s string
		if json.Unmarshal(rawArgs, &s) == nil {
			_ = json.Unmarshal([]byte(s), &args)
		}
	}
	str := func(k string) string { v, _ := args[k].(string); return v }
	switch name {
	case "bash", "powershell", "run_in_terminal", "shell":
		r.Command = clip(str("command"), maxResult)
		r.Text = clip(firstNonEmpty(str("description"), str("explanation")), 200)
	case "create", "create_file":
		r.FilePath = firstNonEmpty(str("path"), str("filePath"))
		r.Text = editText(firstNonEmpty(str("file_text"), str("content")))
	case "edit", "str_replace", "insert":
		r.FilePath = firstNonEmpty(str("path"), str("filePath"))
		r.Text = editText(firstNonEmpty(str("new_str"), str("insert_text")))
	case "replace_string_in_file", "insert_edit_into_file", "edit_file", "edit_notebook_file":
		r.FilePath = firstNonEmpty(str("filePath"), str("path"))
		r.Text = editText(firstNonEmpty(str("newString"), str("code"), str("newCode")))
	case "multi_replace_string_in_file":
		reps, _ := args["replacements"].([]any)
		byFile := map[string]string{}
		var order []string
		for _, x := range reps {
			m, _ := x.(map[string]any)
			fp, _ := m["filePath"].(string)
			if fp == "" {
				continue
			}
			ns, _ := m["newString"].(string)
			if _, ok := byFile[fp]; !ok {
				order = append(order, fp)
			}
			byFile[fp] += ns + "\n"
		}
		return perFile(r, order, byFile)
	case "apply_patch":
		patch := firstNonEmpty(str("input"), str("patch"))
		files, adds := patchFiles(patch)
		return perFile(r, files, adds)
	}
	return []Row{r}
}

func editText(s string) string {
	if s == "" {
		return ""
	}
	return clip(s, maxResult)
}

// perFile turns one call into a row per file (first row keeps the key).
func perFile(r Row, files []string, text map[string]string) []Row {
	if len(files) == 0 {
		return []Row{r}
	}
	rows := make([]Row, 0, len(files))
	for i, f := range files {
		x := r
		if i > 0 {
			x.Key = r.Key + "@" + strconv.Itoa(i)
		}
		x.FilePath, x.Text = f, editText(text[f])
		rows = append(rows, x)
	}
	return rows
}

// patchFiles lists the files of an apply_patch envelope ("*** Update File:
// p", "*** Add File: p", "*** Delete File: p") with each file's added lines.
func patchFiles(patch string) ([]string, map[string]string) {
	var files []string
	adds := map[string]string{}
	cur := ""
	for _, ln := range strings.Split(patch, "\n") {
		ln = strings.TrimRight(ln, "\r")
		switch {
		case strings.HasPrefix(ln, "*** Update File: "), strings.HasPrefix(ln, "*** Add File: "), strings.HasPrefix(ln, "*** Delete File: "):
			cur = strings.TrimSpace(ln[strings.Index(ln, ":")+1:])
			if _, ok := adds[cur]; !ok && cur != "" {
				files = append(files, cur)
				adds[cur] = ""
			}
		case strings.HasPrefix(ln, "*** Move to: "):
			// the rename target is the file that now exists
			to := strings.TrimSpace(strings.TrimPrefix(ln, "*** Move to: "))
			if _, ok := adds[to]; !ok && to != "" {
				files = append(files, to)
				adds[to] = ""
			}
		case cur != "" && strings.HasPrefix(ln, "+") && len(adds[cur]) < maxResult:
			adds[cur] += ln[1:] + "\n"
		}
	}
	return files, adds
}

func copilotToolDone(d payload, base Row) []Row {
	r := base
	r.Role, r.CallID = "tool", d.str("toolCallId")
	if r.CallID == "" {
		return nil
	}
	var text string
	if res := d.obj("result"); res != nil {
		text = res.str("content")
	}
	r.Kind = KindToolResult
	if raw, ok := d["success"]; ok && string(bytes.TrimSpace(raw)) == "false" {
		r.Kind, text = copilotFailure(d, text)
	}
	r.ExitCode = copilotExit(d, text)
	if r.ExitCode != nil && *r.ExitCode != 0 {
		r.Kind = KindError
	}
	r.Text = clip(text, maxResult)
	return []Row{r}
}

// copilotFailure is the kind and text of a call that did not succeed:
// its error's message or code.
func copilotFailure(d payload, text string) (Kind, string) {
	kind := KindError
	if e := d.obj("error"); e != nil {
		text = firstNonEmpty(e.str("message"), e.str("code"), text)
		kind = copilotStopped(e.str("code"), text)
	} else if s := d.str("error"); s != "" {
		text = s
		kind = copilotStopped("", text)
	}
	return kind, firstNonEmpty(text, "tool failed")
}

// copilotExit is a shell call's exit code. A shell exit != 0 is
// success:true; the code is in shellExecution, else in the text.
func copilotExit(d payload, text string) *int {
	if sh := d.obj("shellExecution"); sh != nil {
		if n, ok := sh.num("exitCode"); ok {
			return intPtr(int(n))
		}
	}
	if code, ok := copilotExitCode(text); ok {
		if n, err := strconv.Atoi(code); err == nil {
			return intPtr(n)
		}
	}
	return nil
}
