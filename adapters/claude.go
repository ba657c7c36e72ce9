package adapters

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Claude is the Claude Code adapter (../shared/agents/claude-code.md).
var Claude = register(claude{})

type claude struct{}

func (claude) Name() string { return "claude" }

func (claude) ParseHook(event string, b []byte, env Env) (Hook, error) {
	p, err := decodePayload(b)
	if err != nil {
		return Hook{}, err
	}
	h := Hook{
		Tool:           "claude",
		Event:          event,
		SessionID:      p.str("session_id"),
		TranscriptPath: p.str("transcript_path"),
		Cwd:            p.str("cwd"),
		Source:         p.str("source"),
		Prompt:         p.str("prompt"),
	}
	if h.Event == "" {
		h.Event = p.str("hook_event_name")
	}
	if env.Getenv != nil {
		h.Project = env.Getenv("CLAUDE_PROJECT_DIR")
	}
	return h, nil
}

// Transcripts is the main transcript plus any subagent files next to it
// (<dir>/<session>/subagents/agent-*.jsonl).
func (claude) Transcripts(h Hook, env Env) []Transcript {
	if h.TranscriptPath == "" {
		return nil
	}
	ts := []Transcript{{Path: h.TranscriptPath, SessionID: h.SessionID, MaybeMissing: true}}
	base := strings.TrimSuffix(h.TranscriptPath, ".jsonl")
	subs, _ := filepath.Glob(filepath.Join(base, "subagents", "agent-*.jsonl"))
	for _, s := range subs {
		ts = append(ts, Transcript{Path: s, SessionID: h.SessionID, Sidechain: true})
	}
	return ts
}

type claudeLine struct {
	Type             string          `json:"type"`
	Subtype          string          `json:"subtype"`
	UUID             string          `json:"uuid"`
	Timestamp        string          `json:"timestamp"`
	IsSidechain      bool            `json:"isSidechain"`
	IsMeta           bool            `json:"isMeta"`
	IsCompactSummary bool            `json:"isCompactSummary"`
	IsAPIError       bool            `json:"isApiErrorMessage"`
	PromptSource     string          `json:"promptSource"`
	AgentID          string          `json:"agentId"`
	ParentUUID       *string         `json:"parentUuid"`
	Message          *claudeMessage  `json:"message"`
	Attachment       json.RawMessage `json:"attachment"`
	CompactMetadata  *struct {
		Trigger   string `json:"trigger"`
		PreTokens int64  `json:"preTokens"`
	} `json:"compactMetadata"`
}

type claudeMessage struct {
	ID    string `json:"id"`
	Role  string `json:"role"`
	Model string `json:"model"`
	// Blocks is the content when it is a list (one pass decodes it);
	// a string content leaves it empty and lands in Text.
	Blocks []claudeBlock `json:"content"`
	Text   string        `json:"-"`
	IsText bool          `json:"-"`
	Usage  *struct {
		Input         int64 `json:"input_tokens"`
		Output        int64 `json:"output_tokens"`
		CacheCreation int64 `json:"cache_creation_input_tokens"`
		CacheRead     int64 `json:"cache_read_input_tokens"`
	} `json:"usage"`
}

type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     claudeInput     `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// claudeSkip are line types that never carry rows; checked on raw bytes
// before decoding so big metadata lines cost nothing.
var claudeSkip = [][]byte{
	[]byte(`"type":"queue-operation"`), []byte(`"type":"last-prompt"`), []byte(`"type":"file-history-snapshot"`),
	[]byte(`"type":"mode"`), []byte(`"type":"permission-mode"`),
}

// claudeKeep are the top-level fields ParseLine decodes; the rest
// (toolUseResult, which repeats whole files, and metadata) is skipped.
var claudeKeep = map[string]bool{
	"type": true, "subtype": true, "uuid": true, "timestamp": true, "isSidechain": true, "isMeta": true,
	"isCompactSummary": true, "isApiErrorMessage": true, "promptSource": true, "agentId": true,
	"parentUuid": true, "message": true, "attachment": true, "compactMetadata": true,
}

var exitCodeRE = regexp.MustCompile(`(?i)exit(?:ed with)? code:? (-?\d+)`)

// claudeContextWindow is the context size used for used/max figures.
const claudeContextWindow = 200000

func (claude) ParseLine(line []byte, off int64) ([]Row, error) {
	head := line
	if len(head) > 64 {
		head = head[:64]
	}
	for _, s := range claudeSkip {
		if bytes.Contains(head, s) {
			return nil, nil
		}
	}
	// Attachments (skill listings, re-attached files: kilobytes each) matter
	// only when they carry carryover's own injection. Their "attachment"
	// key comes before the "type" key, within the envelope's first fields.
	head = line
	if len(head) > 400 {
		head = head[:400]
	}
	if bytes.Contains(head, []byte(`"attachment":{`)) && !bytes.Contains(line, []byte("[CARRYOVER]")) {
		return nil, nil
	}
	var l claudeLine
	picked := pickFields(line, claudeKeep)
	if err := json.Unmarshal(picked, &l); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return nil, nil // a line we cannot read is skipped, never fatal
		}
		// A string content (prompts, meta lines) does not fit Blocks; the
		// rest of the line was decoded. Any other misfit field is skipped.
		if te.Value == "string" && te.Field == "message.content" && l.Message != nil {
			var sc struct {
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			}
			if json.Unmarshal(picked, &sc) == nil {
				l.Message.Text, l.Message.IsText = sc.Message.Content, true
			}
		}
	}
	key := l.UUID
	if key == "" {
		key = "off:" + strconv.FormatInt(off, 10)
	}
	ts, _ := time.Parse(time.RFC3339Nano, l.Timestamp)
	base := Row{Time: ts, Sidechain: l.IsSidechain}
	switch l.Type {
	case "user":
		return claudeUser(l, key, base), nil
	case "assistant":
		return claudeAssistant(l, key, base), nil
	case "attachment":
		return claudeAttachment(l, key, base), nil
	case "system":
		if l.Subtype == "compact_boundary" {
			r := base
			r.Key, r.Role, r.Kind = key, "system", KindCompaction
			r.Text = "context compacted"
			if l.CompactMetadata != nil {
				r.Text = "context compacted (" + l.CompactMetadata.Trigger + ")"
				r.TokensUsed = l.CompactMetadata.PreTokens
			}
			return []Row{r}, nil
		}
	}
	return nil, nil
}

func claudeUser(l claudeLine, key string, base Row) []Row {
	if l.Message == nil || l.IsMeta {
		return nil
	}
	if s := l.Message.Text; l.Message.IsText {
		switch {
		case l.IsCompactSummary:
			r := base
			r.Key, r.Role, r.Kind, r.Text = key, "system", KindCompaction, clip(s, maxText)
			return []Row{r}
		case strings.HasPrefix(s, "<command-") || strings.HasPrefix(s, "<local-command-"):
			return nil
		case l.PromptSource == "" && !(l.IsSidechain && l.ParentUUID == nil):
			return nil // not a real prompt (the subagent's task prompt is the exception)
		case IsCarryoverText(s):
			r := base
			r.Key, r.Role, r.Kind, r.Text = key, "user", KindInjection, firstLine(s)
			return []Row{r}
		}
		r := base
		r.Key, r.Role, r.Kind, r.Text = key, "user", KindPrompt, clip(s, maxPrompt)
		return []Row{r}
	}
	var rows []Row
	for i, b := range l.Message.Blocks {
		r := base
		r.Key = key + "#" + strconv.Itoa(i)
		switch b.Type {
		case "tool_result":
			text := blockText(b.Content)
			r.Role, r.CallID = "tool", b.ToolUseID
			if b.IsError {
				r.Kind = KindError
				if m := exitCodeRE.FindStringSubmatch(text); m != nil {
					n, _ := strconv.Atoi(m[1])
					r.ExitCode = intPtr(n)
				}
			} else {
				r.Kind = KindToolResult
			}
			r.Text = clip(text, maxResult)
		case "text":
			if l.PromptSource == "" {
				continue
			}
			r.Role, r.Kind, r.Text = "user", KindPrompt, clip(b.Text, maxPrompt)
		default:
			continue
		}
		rows = append(rows, r)
	}
	return rows
}

// blockText flattens a tool_result content (string or list of text blocks).
func blockText(raw json.RawMessage) string {
	var s string
	if p := stringPrefix(raw, 2*maxResult); p != nil && json.Unmarshal(p, &s) == nil {
		return s // the row keeps maxResult bytes: no need to unquote a whole file
	}
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []claudeBlock
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// stringPrefix returns a JSON string literal holding about the first n
// bytes of the long string literal raw, cut between escapes; nil when raw
// is not a string or is short.
func stringPrefix(raw []byte, n int) []byte {
	if len(raw) <= n+64 || raw[0] != '"' {
		return nil
	}
	i := 1
	for i < n {
		switch raw[i] {
		case '\\':
			i += 2
		case '"':
			return nil // ends early: the whole literal is short after all
		default:
			i++
		}
	}
	out := make([]byte, 0, i+1)
	return append(append(out, raw[:i]...), '"')
}

func claudeAssistant(l claudeLine, key string, base Row) []Row {
	m := l.Message
	if m == nil {
		return nil
	}
	var rows []Row
	if m.Usage != nil && m.Model != "<synthetic>" && m.ID != "" {
		used := m.Usage.Input + m.Usage.CacheCreation + m.Usage.CacheRead + m.Usage.Output
		if used > 0 {
			r := base
			r.Key, r.Role, r.Kind = "usage:"+m.ID, "assistant", KindUsage
			r.TokensUsed, r.TokensMax = used, claudeContextWindow
			rows = append(rows, r)
		}
	}
	for i, b := range m.Blocks {
		r := base
		r.Key, r.Role = key, "assistant"
		if i > 0 {
			r.Key = key + "#" + strconv.Itoa(i)
		}
		switch b.Type {
		case "text":
			if strings.TrimSpace(b.Text) == "" {
				continue
			}
			r.Kind, r.Text = KindText, clip(b.Text, maxText)
			if l.IsAPIError {
				r.Kind, r.ToolName = KindError, "model API"
			}
		case "tool_use":
			r.Kind, r.ToolName, r.CallID = KindToolCall, b.Name, b.ID
			in := b.Input
			switch b.Name {
			case "Write", "Edit", "MultiEdit":
				r.FilePath = in.FilePath
			case "NotebookEdit":
				r.FilePath = in.NotebookPath
			case "Bash":
				r.Command = clip(in.Command, maxResult)
			}
			r.Text = clip(in.Description, 200)
			r.Text += claudeEditText(b.Name, in)
		default:
			continue
		}
		rows = append(rows, r)
	}
	return rows
}

// claudeInput is the part of a tool_use input carryover reads (decoding a
// typed struct instead of a map keeps big Write contents cheap).
type claudeInput struct {
	FilePath     string `json:"file_path"`
	NotebookPath string `json:"notebook_path"`
	Command      string `json:"command"`
	Description  string `json:"description"`
	Content      string `json:"content"`
	NewString    string `json:"new_string"`
	Edits        []struct {
		NewString string `json:"new_string"`
	} `json:"edits"`
}

// claudeEditText keeps the new text of an edit (bounded) so distill can see
// TODO/FIXME lines it added.
func claudeEditText(name string, in claudeInput) string {
	var s string
	switch name {
	case "Write":
		s = in.Content
	case "Edit":
		s = in.NewString
	case "MultiEdit":
		for _, e := range in.Edits {
			s += e.NewString + "\n"
		}
	default:
		return ""
	}
	if s == "" {
		return ""
	}
	return "\n" + clip(s, maxResult)
}

func claudeAttachment(l claudeLine, key string, base Row) []Row {
	var a struct {
		Type    string          `json:"type"`
		Content json.RawMessage `json:"content"`
		Stdout  string          `json:"stdout"`
		Hook    string          `json:"hookEvent"`
	}
	if json.Unmarshal(l.Attachment, &a) != nil {
		return nil
	}
	var text string
	switch a.Type {
	case "hook_additional_context":
		var parts []string
		if json.Unmarshal(a.Content, &parts) == nil {
			text = strings.Join(parts, "\n")
		}
	case "hook_success":
		text = a.Stdout
	}
	if !IsCarryoverText(text) {
		return nil
	}
	r := base
	r.Key, r.Role, r.Kind = key, "system", KindInjection
	r.Text = carryoverHeader(text) + " via " + a.Hook
	return []Row{r}
}

// carryoverHeader returns the "# [CARRYOVER] Last updated …" line of an
// injected handoff (the delivery receipt's identity).
func carryoverHeader(text string) string {
	i := strings.Index(text, "[CARRYOVER]")
	if i < 0 {
		return ""
	}
	// The envelope may have been JSON-escaped in a hook's stdout.
	rest := text[i:]
	if j := strings.IndexAny(rest, "\n\\\""); j >= 0 {
		rest = rest[:j]
	}
	return "# " + strings.TrimSpace(rest)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return clip(s, 200)
}
