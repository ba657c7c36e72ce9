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

// Qwen is the Qwen Code adapter (@qwen-code/qwen-code, a Gemini CLI fork).
//
// A session is append-only JSONL at
// $QWEN_RUNTIME_DIR|$QWEN_HOME|~/.qwen/projects/<cwd slug>/chats/<session>.jsonl:
// Claude-like lines (uuid, parentUuid, sessionId, type user|assistant|
// tool_result|system) whose message carries Gemini-style parts (text,
// functionCall, functionResponse). Rows are keyed by the line's uuid plus the
// part's index. Seen with 0.24.4 run headless against a fake Chat Completions
// server (cmd/e2e/qwen_test.go).
var Qwen Adapter = qwen{}

// qwenAgent is what carryover knows about the agent besides its files.
var qwenAgent = &Agent{
	Name:     "qwen",
	Display:  "Qwen Code",
	Aliases:  []string{"qwen-code"},
	Adapter:  Qwen,
	Lister:   qwenLister{},
	Envelope: EnvelopeHookSpecific,
	Format: Format{Newest: "0.24.4", Version: JSONVersion, Shapes: []string{
		"Qwen Code 0.24.x chats JSONL (uuid/parentUuid lines, Gemini parts, toolCallResult, system subtypes)",
	}},
	// Claude Code's names. In headless runs SessionEnd does not fire and
	// UserPromptSubmit fires again, with an empty prompt, before every model
	// call that follows a tool result (0.24.4).
	Events: map[string]Class{
		"SessionStart": ClassStart, "UserPromptSubmit": ClassPrompt,
		"PreToolUse": ClassTool, "PostToolUse": ClassTool, "PostToolUseFailure": ClassTool,
		"Stop": ClassStop, "StopFailure": ClassFailure, "PreCompact": ClassCompact, "SessionEnd": ClassEnd,
	},
	// Claude's sniff is broad and accepts these files too ("sessionId",
	// "type":"user"); Gemini-style parts inside uuid-chained lines are Qwen's.
	Sniff: func(b []byte) bool {
		return containsAll(b, `"parentUuid"`, `"sessionId"`) && containsAny(b, `"role":"user","parts":`, `"role":"model","parts":`)
	},
	// PostToolUse additionalContext is appended to the tool's output the
	// model reads (0.24.4).
	ToolContextEvent: "PostToolUse",
	// Qwen Code queues its chat writes (appendRecord → enqueueRecordWrite)
	// and runs Stop meanwhile: a Stop hook has been seen reading the file
	// two records short (the failing command's result and the last reply,
	// 0.24.4). Stop waits until the last reply the payload names is on disk:
	// 0 s to 1.4 s over five runs on the shared 2-core CI machine kind, so 3 s
	// (well inside the 10 s hook timeout install sets).
	AwaitFlush:    qwenAwaitFlush,
	FlushWait:     3 * time.Second,
	Launch:        []string{"qwen", "-i"},
	ContextWindow: 131_072, // contextWindowSize of the OpenAI-compatible default (0.24.4)
	MemoryFile:    "QWEN.md",
	CreateTools:   []string{"write_file"},
	PlanTools:     []string{"todo_write"},
}

var (
	_ LineParser = qwen{}
	_ Lister     = qwenLister{}
)

type qwen struct{}

func (qwen) Name() string { return "qwen" }

func (qwen) ParseHook(event string, b []byte, env Env) (Hook, error) {
	h, p, err := claudeShapedHook("qwen", event, b)
	if err != nil {
		return Hook{}, err
	}
	h.FlushMark = qwenFlushMark(p.str("last_assistant_message"))
	return h, nil
}

// qwenFlushMark is how the start of Stop's last_assistant_message appears in
// the chat file: `{"text":"` and the message's leading run of characters
// that JavaScript's JSON.stringify and Go encode alike (printable ASCII
// other than a quote, a backslash and <>&), at most 80 bytes. "" when the
// message is empty or starts with anything else: then nothing is awaited.
func qwenFlushMark(msg string) string {
	n := 0
	for n < len(msg) && n < 80 {
		c := msg[n]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			break
		}
		n++
	}
	if n == 0 {
		return ""
	}
	return `{"text":"` + msg[:n]
}

// qwenAwaitFlush polls the chat file (every 20 ms, until deadline) for an
// assistant line holding h.FlushMark, reading only what was appended since
// the last poll (at first its last 256 KB).
func qwenAwaitFlush(h Hook, env Env, deadline time.Time) bool {
	if h.FlushMark == "" || h.TranscriptPath == "" {
		return false
	}
	mark, from := []byte(h.FlushMark), int64(-1)
	for {
		f, err := os.Open(h.TranscriptPath)
		if err == nil {
			if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
				if from < 0 || from > fi.Size() {
					from = max(0, fi.Size()-256<<10)
				}
				b := make([]byte, min(fi.Size()-from, 1<<20))
				n, _ := f.ReadAt(b, from)
				b = b[:n]
				if end := bytes.LastIndexByte(b, '\n'); end >= 0 {
					for _, ln := range bytes.Split(b[:end], []byte{'\n'}) {
						if bytes.Contains(ln, []byte(`"type":"assistant"`)) && bytes.Contains(ln, mark) {
							f.Close()
							return true
						}
					}
					from += int64(end) + 1
				}
			}
			f.Close()
		}
		if time.Until(deadline) < 20*time.Millisecond {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// qwenHome is where Qwen Code keeps session data: QWEN_RUNTIME_DIR, else
// QWEN_HOME, else ~/.qwen.
func qwenHome(env Env) string {
	return envOr(env, "QWEN_RUNTIME_DIR", envOr(env, "QWEN_HOME", filepath.Join(env.Home, ".qwen")))
}

// Transcripts is the hook's transcript_path; without one the chat is looked
// up by session id under every project.
func (qwen) Transcripts(h Hook, env Env) []Transcript {
	if h.TranscriptPath != "" {
		return []Transcript{{Path: h.TranscriptPath, SessionID: h.SessionID, MaybeMissing: true}}
	}
	if !safeID(h.SessionID) || (env.Home == "" && env.Getenv == nil) {
		return nil
	}
	m, _ := filepath.Glob(filepath.Join(globEscape(qwenHome(env)), "projects", "*", "chats", h.SessionID+".jsonl"))
	if len(m) == 0 {
		return nil
	}
	return []Transcript{{Path: m[0], SessionID: h.SessionID}}
}

type qwenPart struct {
	Text         string `json:"text"`
	Thought      bool   `json:"thought"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		Response struct {
			Output json.RawMessage `json:"output"`
			Error  json.RawMessage `json:"error"`
		} `json:"response"`
	} `json:"functionResponse"`
}

type qwenLine struct {
	UUID       string `json:"uuid"`
	Timestamp  string `json:"timestamp"`
	Type       string `json:"type"`
	Subtype    string `json:"subtype"`
	Provenance string `json:"provenance"`
	Cwd        string `json:"cwd"`
	SessionID  string `json:"sessionId"`
	Message    struct {
		Role  string     `json:"role"`
		Parts []qwenPart `json:"parts"`
	} `json:"message"`
	SystemPayload struct {
		DisplayText string          `json:"displayText"`
		HookContext json.RawMessage `json:"hookContext"`
		UIEvent     *struct {
			Name      string          `json:"event.name"`
			ErrorType string          `json:"error_type"`
			Error     string          `json:"error_message"`
			Status    json.RawMessage `json:"status_code"`
		} `json:"uiEvent"`
		Info json.RawMessage `json:"info"`
	} `json:"systemPayload"`
	ToolCallResult *struct {
		CallID        string          `json:"callId"`
		Status        string          `json:"status"`
		ResultDisplay json.RawMessage `json:"resultDisplay"`
		ErrorType     string          `json:"errorType"`
	} `json:"toolCallResult"`
	UsageMetadata *struct {
		Prompt int64 `json:"promptTokenCount"`
	} `json:"usageMetadata"`
	ContextWindowSize int64 `json:"contextWindowSize"`
}

// qwenHookWrapper starts the parts Qwen Code adds to a prompt for hook
// output (<qwen:user-prompt-submit-context>…): context, not the request.
const qwenHookWrapper = "<qwen:"

// ParseLine decodes one chats line. Lines without a uuid fall back to the
// byte offset.
func (qwen) ParseLine(line []byte, off int64) ([]Row, error) {
	var l qwenLine
	if json.Unmarshal(line, &l) != nil {
		return nil, nil
	}
	t, _ := time.Parse(time.RFC3339Nano, l.Timestamp)
	key := l.UUID
	if key == "" {
		key = strconv.FormatInt(off, 10)
	}
	switch l.Type {
	case "user":
		return qwenUser(l, key, t), nil
	case "assistant":
		return qwenAssistant(l, key, t), nil
	case "tool_result":
		return qwenToolResult(l, key, t), nil
	case "system":
		switch l.Subtype {
		case "chat_compression":
			return []Row{{Key: key, Time: t, Role: "system", Kind: KindCompaction, Text: "context compressed"}}, nil
		case "ui_telemetry":
			// An API error is recorded only as telemetry (the model's
			// reply never arrives).
			if e := l.SystemPayload.UIEvent; e != nil && e.Name == "qwen-code.api_error" {
				text := e.Error
				if text == "" {
					text = e.ErrorType
				}
				status, _ := strconv.Atoi(strings.Trim(string(e.Status), `"`))
				return []Row{{Key: key, Time: t, Role: "system", Kind: KindError, ToolName: "model API", Text: clip(text, maxResult),
					Limit: LimitFromError(text, status, t)}}, nil
			}
		}
	}
	return nil, nil
}

func qwenUser(l qwenLine, key string, t time.Time) []Row {
	var text []string
	for _, p := range l.Message.Parts {
		if p.Text != "" && !strings.HasPrefix(strings.TrimSpace(p.Text), qwenHookWrapper) {
			text = append(text, p.Text)
		}
	}
	s := strings.TrimSpace(strings.Join(text, "\n"))
	if d := strings.TrimSpace(l.SystemPayload.DisplayText); d != "" {
		s = d // what the user typed, before @file expansion
	}
	var rows []Row
	// UserPromptSubmit's additionalContext is kept beside the prompt: when
	// it is carryover's handoff it is the delivery receipt.
	var ctx string
	if json.Unmarshal(l.SystemPayload.HookContext, &ctx) == nil && IsCarryoverText(ctx) {
		rows = append(rows, Row{Key: key + ".ctx", Time: t, Role: "user", Kind: KindInjection, Text: clip(ctx, maxText)})
	}
	switch {
	case s == "":
	case IsCarryoverText(s):
		rows = append(rows, Row{Key: key, Time: t, Role: "user", Kind: KindInjection, Text: clip(s, maxText)})
	case l.Subtype != "" || (l.Provenance != "" && l.Provenance != "real_user"):
		// cron prompts, slash commands, goal runtime: the harness spoke
		rows = append(rows, Row{Key: key, Time: t, Role: "user", Kind: KindHarness, Text: clip(s, maxText)})
	default:
		rows = append(rows, Row{Key: key, Time: t, Role: "user", Kind: KindPrompt, Text: clip(s, maxPrompt)})
	}
	return rows
}

func qwenAssistant(l qwenLine, key string, t time.Time) []Row {
	var rows []Row
	for i, p := range l.Message.Parts {
		k := key + "." + strconv.Itoa(i)
		switch {
		case p.FunctionCall != nil && p.FunctionCall.Name != "":
			var args struct {
				Command  string `json:"command"`
				FilePath string `json:"file_path"`
				Path     string `json:"notebook_path"`
			}
			_ = json.Unmarshal(p.FunctionCall.Args, &args)
			r := Row{Key: k, Time: t, Role: "assistant", Kind: KindToolCall, ToolName: p.FunctionCall.Name, CallID: p.FunctionCall.ID,
				Command: clip(args.Command, maxResult)}
			switch p.FunctionCall.Name {
			case "write_file", "edit", "replace":
				r.FilePath = args.FilePath
			case "notebook_edit":
				r.FilePath = args.Path
			}
			if r.CallID == "" {
				r.CallID = k
			}
			rows = append(rows, r)
		case p.Text != "" && !p.Thought:
			rows = append(rows, Row{Key: k, Time: t, Role: "assistant", Kind: KindText, Text: clip(p.Text, maxText)})
		}
	}
	if u := l.UsageMetadata; u != nil && u.Prompt > 0 {
		rows = append(rows, Row{Key: key + ".usage", Time: t, Role: "system", Kind: KindUsage, TokensUsed: u.Prompt, TokensMax: l.ContextWindowSize})
	}
	return rows
}

func qwenToolResult(l qwenLine, key string, t time.Time) []Row {
	o := qwenCallOutcome(l)
	var rows []Row
	for i, p := range l.Message.Parts {
		fr := p.FunctionResponse
		if fr == nil {
			continue
		}
		r := Row{Key: key + "." + strconv.Itoa(i), Time: t, Role: "tool", ToolName: fr.Name, CallID: fr.ID}
		if o.exit != nil {
			r.ExitCode = intPtr(*o.exit)
		}
		var text string
		r.Kind, text = o.result(qwenString(fr.Response.Output), qwenString(fr.Response.Error))
		r.Text = clip(text, maxResult)
		rows = append(rows, r)
	}
	return rows
}

// qwenOutcome is what a line's toolCallResult says of its calls.
type qwenOutcome struct {
	status, errType string
	exit            *int
	shellOut        string // a shell's own output
}

func qwenCallOutcome(l qwenLine) qwenOutcome {
	tr := l.ToolCallResult
	if tr == nil {
		return qwenOutcome{}
	}
	o := qwenOutcome{status: tr.Status, errType: tr.ErrorType}
	var d struct {
		Type     string `json:"type"`
		ExitCode *int   `json:"exitCode"`
		Output   string `json:"output"`
	}
	if json.Unmarshal(tr.ResultDisplay, &d) != nil {
		return o
	}
	o.exit = d.ExitCode
	// A shell result's text for the model is a form ("Command:
	// …\nOutput: …\nError: (none)\nExit Code: 2"); its display keeps
	// the command's own output.
	if d.Type == "shell_result" && strings.TrimSpace(d.Output) != "" {
		o.shellOut = d.Output
	}
	return o
}

// result is the kind and text of a call's result, given its output and
// error text.
func (o qwenOutcome) result(out, errText string) (Kind, string) {
	switch {
	case o.errType == "execution_denied":
		// a permission rule or the user declined the call; it never ran
		// (executionStatus "not_started", 0.24.4)
		return KindRefused, errText + out
	case o.status == "cancelled":
		// the scheduler's cancelled state (an interrupt), from Gemini CLI's
		// core; not produced in a headless run here
		return KindInterrupted, errText + out
	case o.status == "error" || errText != "":
		return KindError, firstNonEmpty(o.shellOut, errText, out)
	case o.exit != nil && *o.exit != 0:
		return KindError, firstNonEmpty(o.shellOut, out)
	}
	return KindToolResult, out
}

// qwenString reads a response field that is a string or any other JSON.
func qwenString(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// qwenLister lists <qwen home>/projects/*/chats/*.jsonl.
type qwenLister struct{}

func (qwenLister) Stores(env Env) []string { return []string{filepath.Join(qwenHome(env), "projects")} }

func (l qwenLister) ListSessions(env Env, project string) ([]NativeSession, error) {
	files, _ := filepath.Glob(filepath.Join(globEscape(qwenHome(env)), "projects", "*", "chats", "*.jsonl"))
	return describeAll(env, "qwen", files, project, l.Describe), nil
}

func (qwenLister) Describe(path string) (NativeSession, error) {
	fs, err := sampleFile(path)
	if err != nil {
		return NativeSession{}, err
	}
	s := NativeSession{Tool: "qwen", Path: path}
	for _, ln := range lines(fs.head) {
		var l qwenLine
		if !jsonLine(ln, &l) || l.SessionID == "" {
			continue
		}
		if s.ID == "" {
			s.ID, s.Project = l.SessionID, l.Cwd
		}
		if s.Preview == "" && l.Type == "user" {
			for _, r := range qwenUser(l, "", time.Time{}) {
				if r.Kind == KindPrompt {
					s.Preview = preview(r.Text)
				}
			}
		}
		if s.Preview != "" {
			break
		}
	}
	if s.ID == "" {
		return s, errNoSession
	}
	s.LastActive = fs.lastActive()
	s.MessageCount, s.CountEstimated = countMessages(path, fs, []byte(`"type":"user"`), []byte(`"type":"assistant"`))
	return s, nil
}
