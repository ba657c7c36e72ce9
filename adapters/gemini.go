package adapters

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Gemini is the Gemini CLI adapter.
//
// The session file is a log of upserts, not of events: a message is
// re-appended whole whenever it gains tool calls or tokens, "$set.messages"
// replaces the message list (resume, /compress, a failed model call), and a
// resume appends a second header plus a full rewrite in another shape
// (Part[] content, no toolCalls, extra "<id>_response" records). Rows are
// therefore keyed by what survives every shape — the message id for text,
// the tool call id for calls and results — so the ledger's upsert keeps one
// row each and the last copy wins. Rows never depend on a line's shape for
// their text, kind or exit code, so a rewrite changes nothing.
var Gemini Adapter = gemini{}

// geminiAgent is what carryover knows about the agent besides its files.
var geminiAgent = &Agent{
	Name:     "gemini",
	Display:  "Gemini CLI",
	Adapter:  Gemini,
	Lister:   geminiLister{},
	Envelope: EnvelopeHookSpecificNoEvent,
	Format: Format{Newest: "0.61.0", Shapes: []string{
		"Gemini CLI before 0.39: chats/session-*.json, one JSON document with messages[]",
		"Gemini CLI before 0.39: logs.json (prompts of every session; the newest is read) and /chat save checkpoint-*.json",
		"Gemini CLI 0.39+: chats/session-*.jsonl, header (projectHash optional) + upserted messages + $set rewrites",
	}},
	Events: map[string]Class{
		"SessionStart": ClassStart, "BeforeAgent": ClassPrompt,
		"BeforeTool": ClassTool, "AfterTool": ClassTool,
		"AfterAgent": ClassStop, "SessionEnd": ClassEnd,
	},
	Sniff: func(b []byte) bool { // early JSONL headers have no projectHash
		return containsAll(b, `"projectHash"`) || containsAll(b, `"sessionId"`, `"startTime"`, `"lastUpdated"`) ||
			geminiArraySniff(b)
	},
	Launch:        []string{"gemini", "-i"},
	ContextWindow: geminiContextWindow,
	MemoryFile:    "GEMINI.md",
	CreateTools:   []string{"write_file"},
	PlanTools:     []string{"write_todos"},
	DocumentStore: isGeminiDoc,
	ProjectEnv:    "GEMINI_PROJECT_DIR",
}

var (
	_ LineParser = gemini{}
	_ Lister     = geminiLister{}
)

type gemini struct{}

func (gemini) Name() string { return "gemini" }

func (gemini) ParseHook(event string, b []byte, env Env) (Hook, error) {
	h, p, err := claudeShapedHook("gemini", event, b)
	if err != nil {
		return Hook{}, err
	}
	// BeforeAgent/AfterAgent prompts carry the headless injection prefix.
	_, h.Prompt = splitHookContext(p.str("prompt"))
	if env.Getenv != nil {
		h.Project = env.Getenv("GEMINI_PROJECT_DIR")
	}
	return h, nil
}

// Transcripts is the hook's transcript_path (or, without one, the session
// file found by its id under ~/.gemini/tmp/*/chats/), plus subagent chats
// stored in chats/<session id>/.
func (gemini) Transcripts(h Hook, env Env) []Transcript {
	path := h.TranscriptPath
	if path == "" && safeID(h.SessionID) && len(h.SessionID) >= 8 && env.Home != "" {
		m, _ := filepath.Glob(filepath.Join(globEscape(env.Home), ".gemini", "tmp", "*", "chats", "session-*-"+h.SessionID[:8]+".jsonl"))
		if len(m) > 0 {
			path = m[len(m)-1]
		}
	}
	if path == "" {
		return nil
	}
	ts := []Transcript{{Path: path, SessionID: h.SessionID, MaybeMissing: true}}
	if safeID(h.SessionID) && len(h.SessionID) >= 8 {
		// A file is named after the minute it was started in. A resume in a
		// later minute (Gemini CLI 0.61) starts a new file holding only a
		// header and the session context, which the payload names, and goes
		// on appending the turns to the session's first file: read them all.
		m, _ := filepath.Glob(filepath.Join(globEscape(filepath.Dir(path)), "session-*-"+h.SessionID[:8]+".jsonl"))
		for _, p := range m {
			if p != path {
				ts = append(ts, Transcript{Path: p, SessionID: h.SessionID})
			}
		}
	}
	if safeID(h.SessionID) {
		subs, _ := filepath.Glob(filepath.Join(globEscape(filepath.Dir(path)), h.SessionID, "*.jsonl"))
		for _, s := range subs {
			ts = append(ts, Transcript{Path: s, SessionID: h.SessionID, Sidechain: true})
		}
	}
	return ts
}

type geminiLine struct {
	geminiMessage
	Set *struct {
		Messages []json.RawMessage `json:"messages"`
	} `json:"$set"`
}

type geminiMessage struct {
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	// ToolCalls and Tokens are decoded on their own so that one odd field
	// does not lose the message's text.
	ToolCalls json.RawMessage `json:"toolCalls"`
	Tokens    json.RawMessage `json:"tokens"`
}

type geminiTokens struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
	Total  float64 `json:"total"`
}

type geminiCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Args      json.RawMessage `json:"args"`
	Result    json.RawMessage `json:"result"`
	Status    string          `json:"status"`
	Timestamp string          `json:"timestamp"`
}

type geminiPart struct {
	Text         string              `json:"text"`
	Thought      bool                `json:"thought"`
	FunctionCall *geminiFunctionCall `json:"functionCall"`
	FunctionResp *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

type geminiFunctionCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// geminiContextWindow is the input window of the Gemini models the CLI
// uses (1M tokens); the transcript does not record it.
const geminiContextWindow = 1048576

// geminiCompressAck is the model turn /compress writes after its summary.
const geminiCompressAck = "Got it. Thanks for the additional context!"

// geminiExitRE is compiled at first use, not at process start.
var geminiExitRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^Exit Code: (-?\d+)`) })

func (gemini) ParseLine(line []byte, off int64) ([]Row, error) {
	head := line
	if len(head) > 64 {
		head = head[:64]
	}
	// Headers and "$set" without messages (lastUpdated, summary…) carry no
	// rows; the cheap check avoids decoding them.
	if bytes.HasPrefix(head, []byte(`{"sessionId"`)) ||
		(bytes.HasPrefix(head, []byte(`{"$set"`)) && !bytes.Contains(line, []byte(`"messages"`))) {
		return nil, nil
	}
	if bytes.HasPrefix(head, []byte(`{"$rewindTo"`)) {
		return geminiRewind(line, off), nil
	}
	var l geminiLine
	if json.Unmarshal(line, &l) != nil {
		return nil, nil
	}
	if l.Set != nil {
		return geminiRewrite(l.Set.Messages), nil
	}
	if l.ID == "" {
		if !geminiMessageType(l.Type) {
			return nil, nil // header or unknown record
		}
		l.ID = geminiDerivedID(l.geminiMessage, 1) // a message written without an id
	}
	return geminiRows(l.geminiMessage, false), nil
}

// geminiRewind reads /rewind's {"$rewindTo": id}: that message and everything after it are gone, so their rows are
// abandoned from the one keyed id (KindRewind).
func geminiRewind(line []byte, off int64) []Row {
	var r struct {
		To string `json:"$rewindTo"`
	}
	if json.Unmarshal(line, &r) != nil || r.To == "" {
		return nil
	}
	return []Row{{Key: "rewind:" + strconv.FormatInt(off, 10), Role: "user", Kind: KindRewind, Text: r.To}}
}

// geminiMessageType reports the message types that carry rows.
func geminiMessageType(t string) bool { return t == "user" || t == "gemini" || t == "error" }

// geminiDerivedID keys a message that has no id (some writers and hand
// exports leave it out) by a hash of its type, time and content, and its
// occurrence among identical messages (nth, from 1): stable across re-reads
// and rewrites of the same history, unlike a position or an offset.
func geminiDerivedID(m geminiMessage, nth int) string {
	h := fnv.New64a()
	h.Write([]byte(m.Type))
	h.Write([]byte{0})
	h.Write([]byte(m.Timestamp))
	h.Write([]byte{0})
	// compacted: a rewrite may indent what the record wrote on one line
	var b bytes.Buffer
	for _, raw := range []json.RawMessage{m.Content, m.ToolCalls} {
		b.Reset()
		if json.Compact(&b, raw) == nil {
			h.Write(b.Bytes())
		} else {
			h.Write(raw)
		}
	}
	id := "h:" + strconv.FormatUint(h.Sum64(), 16)
	if nth > 1 {
		id += "#" + strconv.Itoa(nth)
	}
	return id
}

// geminiRewrite turns a "$set.messages" list into rows. A /compress
// rewrite is [session_context, user(summary), gemini(ack), kept…]: the
// summary becomes a compaction row and the ack is dropped.
func geminiRewrite(raw []json.RawMessage) []Row {
	msgs := make([]geminiMessage, 0, len(raw))
	var seen map[string]int
	for _, r := range raw {
		var m geminiMessage
		if json.Unmarshal(r, &m) != nil {
			continue
		}
		if m.ID == "" {
			if !geminiMessageType(m.Type) {
				continue
			}
			if seen == nil {
				seen = map[string]int{}
			}
			k := geminiDerivedID(m, 1)
			seen[k]++
			m.ID = geminiDerivedID(m, seen[k])
		}
		msgs = append(msgs, m)
	}
	var rows []Row
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Type == "user" && i+1 < len(msgs) && msgs[i+1].Type == "gemini" &&
			strings.TrimSpace(geminiText(msgs[i+1].Content)) == geminiCompressAck {
			rows = append(rows, geminiRows(m, true)...)
			i++
			continue
		}
		rows = append(rows, geminiRows(m, false)...)
	}
	return rows
}

func geminiRows(m geminiMessage, summary bool) []Row {
	ts, _ := time.Parse(time.RFC3339Nano, m.Timestamp)
	base := Row{Time: ts, Key: m.ID}
	switch m.Type {
	case "user":
		if summary {
			r := base
			r.Role, r.Kind, r.Text = "system", KindCompaction, "context compressed"
			if s := strings.TrimSpace(geminiText(m.Content)); s != "" {
				r.Text = clip(s, maxText)
			}
			return []Row{r}
		}
		return geminiUser(m, base)
	case "gemini":
		return geminiModel(m, base)
	case "error":
		text := geminiText(m.Content)
		if strings.TrimSpace(text) == "" {
			return nil
		}
		r := base
		r.Role, r.Kind, r.Text = "system", KindError, clip(text, maxResult)
		// "[API Error: {"error":{"code":429,"status":"RESOURCE_EXHAUSTED",…}}]"
		r.Limit = LimitFromError(text, geminiErrorCode(text), ts)
		return []Row{r}
	}
	return nil // info, warning: UI notices
}

// geminiParts decodes content that is a Part[] or a plain string.
func geminiParts(raw json.RawMessage) []geminiPart {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []geminiPart{{Text: s}}
	}
	var ps []geminiPart
	_ = json.Unmarshal(raw, &ps)
	return ps
}

// geminiText is the visible text of content: the string, or the non-thought
// text parts concatenated (streamed chunks were concatenated the same way).
func geminiText(raw json.RawMessage) string {
	var b strings.Builder
	for _, p := range geminiParts(raw) {
		if !p.Thought && p.FunctionCall == nil && p.FunctionResp == nil {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func geminiUser(m geminiMessage, base Row) []Row {
	var rows []Row
	var text strings.Builder
	for _, p := range geminiParts(m.Content) {
		if fr := p.FunctionResp; fr != nil {
			rows = append(rows, geminiResult(fr.ID, fr.Name, fr.Response, "", base))
			continue
		}
		if !p.Thought {
			text.WriteString(p.Text)
		}
	}
	t := text.String()
	trimmed := strings.TrimLeft(t, " \t\r\n")
	if trimmed == "" || strings.HasPrefix(trimmed, "<session_context>") {
		return rows // tool results only, or the environment + GEMINI.md block
	}
	injected, prompt := splitHookContext(trimmed)
	if IsCarryoverText(injected) {
		r := base
		r.Key, r.Role, r.Kind, r.Text = m.ID+"#injection", "system", KindInjection, carryoverHeader(injected)
		rows = append(rows, r)
	}
	if strings.TrimSpace(prompt) == "" {
		return rows
	}
	r := base
	r.Role, r.Kind = "user", KindPrompt
	if IsCarryoverText(prompt) {
		r.Kind, r.Role, r.Text = KindInjection, "system", carryoverHeader(prompt)
	} else {
		r.Text = promptText(prompt)
	}
	return append(rows, r)
}

// splitHookContext separates a SessionStart injection from the prompt:
// headless runs send "<hook_context>TEXT</hook_context>\n\nPROMPT",
// interactive ones record "<hook_context>TEXT</hook_context>" alone.
func splitHookContext(s string) (injected, prompt string) {
	t := strings.TrimLeft(s, " \t\r\n")
	if !strings.HasPrefix(t, "<hook_context>") {
		return "", s
	}
	t = t[len("<hook_context>"):]
	end := strings.Index(t, "</hook_context>")
	if end < 0 {
		return t, ""
	}
	return t[:end], strings.TrimLeft(t[end+len("</hook_context>"):], "\r\n")
}

func geminiModel(m geminiMessage, base Row) []Row {
	var rows []Row
	if t := geminiText(m.Content); strings.TrimSpace(t) != "" {
		r := base
		r.Role, r.Kind, r.Text = "assistant", KindText, clip(t, maxText)
		rows = append(rows, r)
	}
	if r, ok := geminiUsage(m, base); ok {
		rows = append(rows, r)
	}
	// Live records list calls in toolCalls (with results); rewrites hold
	// them as functionCall parts and the results as separate user records.
	var calls []geminiCall
	_ = json.Unmarshal(m.ToolCalls, &calls)
	seen := map[string]bool{}
	for i, c := range calls {
		seen[c.ID] = true
		rows = append(rows, geminiCallRow(c.ID, c.Name, c.Args, base, i))
		rows = geminiCallResults(rows, c, base)
	}
	for i, p := range geminiParts(m.Content) {
		if fc := p.FunctionCall; fc != nil && !(fc.ID != "" && seen[fc.ID]) {
			rows = append(rows, geminiCallRow(fc.ID, fc.Name, fc.Args, base, len(calls)+i))
		}
	}
	return rows
}

// geminiUsage is the usage row of a model message with token figures.
func geminiUsage(m geminiMessage, base Row) (Row, bool) {
	var tok geminiTokens
	if json.Unmarshal(m.Tokens, &tok) != nil || m.ID == "" {
		return Row{}, false
	}
	used := int64(tok.Total)
	if used <= 0 {
		used = int64(tok.Input + tok.Output)
	}
	r := base
	r.Key, r.Role, r.Kind = "usage:"+m.ID, "assistant", KindUsage
	r.TokensUsed, r.TokensMax = used, geminiContextWindow
	return r, used > 0
}

// geminiCallResults appends the result rows of a live record's call: its
// function responses, or its failure when it has none.
func geminiCallResults(rows []Row, c geminiCall, base Row) []Row {
	ct := base
	if t, err := time.Parse(time.RFC3339Nano, c.Timestamp); err == nil {
		ct.Time = t
	}
	var result []geminiPart
	_ = json.Unmarshal(c.Result, &result)
	n := 0
	for _, p := range result {
		if fr := p.FunctionResp; fr != nil {
			rows = append(rows, geminiResult(fr.ID, fr.Name, fr.Response, c.Status, ct))
			n++
		}
	}
	if n == 0 && (c.Status == "error" || c.Status == "cancelled") {
		rows = append(rows, geminiResult(c.ID, c.Name, nil, c.Status, ct))
	}
	return rows
}

func geminiCallRow(id, name string, rawArgs json.RawMessage, base Row, idx int) Row {
	r := base
	r.Key = base.Key + "#call" + strconv.Itoa(idx)
	if id != "" {
		r.Key = "call:" + id
	}
	if name == "" {
		name = "unknown"
	}
	r.Role, r.Kind, r.ToolName, r.CallID = "assistant", KindToolCall, name, id
	var args payload
	_ = json.Unmarshal(rawArgs, &args)
	switch name {
	case "write_file", "replace", "edit", "write_new_file", "smart_edit":
		r.FilePath = args.str("file_path", "absolute_path", "path")
		if s := args.str("content", "new_string"); s != "" {
			r.Text = clip(s, maxResult)
		}
	case "run_shell_command":
		r.Command = clip(args.str("command"), maxResult)
		r.Text = clip(args.str("description"), 200)
	default:
		r.Text = planText(name, rawArgs)
	}
	return r
}

// geminiResult is a tool result row keyed by the call id. Its kind comes
// from the response alone ("error" key, or "Exit Code: N" ≠ 0 in a shell's
// output — Gemini marks failed shell commands "success"), so the embedded
// result, the user record and a rewrite's "<id>_response" copy all agree.
func geminiResult(id, name string, resp json.RawMessage, status string, base Row) Row {
	r := base
	if id != "" {
		r.Key = "result:" + id
	} else {
		r.Key = base.Key + "#result"
	}
	r.Role, r.CallID, r.ToolName, r.Kind = "tool", id, name, KindToolResult
	var p payload
	_ = json.Unmarshal(resp, &p)
	out, errText := p.str("output", "llmContent"), p.str("error")
	if m := geminiExitRE().FindStringSubmatch(out); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			r.ExitCode = intPtr(n)
			if n != 0 {
				r.Kind = KindError
			}
		}
	}
	text := geminiUnwrap(out)
	if errText != "" {
		r.Kind, text = geminiStopped(errText), errText
	} else if resp == nil && status == "cancelled" {
		r.Kind, text = KindInterrupted, "tool call cancelled"
	} else if resp == nil && status != "" {
		r.Kind, text = KindError, "tool call "+status
	}
	r.Text = clip(text, maxResult)
	return r
}

// geminiStopped classifies a tool response's error: Gemini CLI answers a
// call the user did not let run with "[Operation Cancelled] Reason: <why>"
// (status cancelled) — a refusal when the user denied it ("User denied
// execution.", "did not allow"), an interruption otherwise (Esc or Ctrl-C
// while it ran); any other error is an error.
func geminiStopped(errText string) Kind {
	t := strings.TrimSpace(errText)
	if !strings.HasPrefix(t, "[Operation Cancelled]") {
		return KindError
	}
	low := strings.ToLower(t)
	for _, w := range []string{"denied", "did not allow", "reject", "declined"} {
		if strings.Contains(low, w) {
			return KindRefused
		}
	}
	return KindInterrupted
}

// geminiUnwrap strips the <untrusted_context> wrapper and "Output: "
// label of shell output.
func geminiUnwrap(s string) string {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "<untrusted_context>") && strings.HasSuffix(t, "</untrusted_context>") {
		t = strings.TrimSpace(t[len("<untrusted_context>") : len(t)-len("</untrusted_context>")])
		t = strings.TrimPrefix(t, "Output: ")
		return t
	}
	return s
}

// geminiErrorCode is the "code" of the API error JSON inside an error
// message (0 when there is none).
func geminiErrorCode(text string) int {
	i := strings.Index(text, `"code":`)
	if i < 0 {
		return 0
	}
	s := strings.TrimSpace(text[i+len(`"code":`):])
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' || n > 999 {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}
