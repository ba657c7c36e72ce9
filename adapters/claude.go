package adapters

import (
	"bytes"
	"encoding/json"
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
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
	Usage   *struct {
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
	Input     json.RawMessage `json:"input"`
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
	if err := json.Unmarshal(pickFields(line, claudeKeep), &l); err != nil {
		return nil, nil // a line we cannot read is skipped, never fatal
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
	var s string
	if json.Unmarshal(l.Message.Content, &s) == nil {
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
	var blocks []claudeBlock
	if json.Unmarshal(l.Message.Content, &blocks) != nil {
		return nil
	}
	var rows []Row
	for i, b := range blocks {
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
	var blocks []claudeBlock
	if json.Unmarshal(m.Content, &blocks) != nil {
		return rows
	}
	for i, b := range blocks {
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
			var in map[string]any
			_ = json.Unmarshal(b.Input, &in)
			switch b.Name {
			case "Write", "Edit", "MultiEdit":
				r.FilePath, _ = in["file_path"].(string)
			case "NotebookEdit":
				r.FilePath, _ = in["notebook_path"].(string)
			case "Bash":
				r.Command, _ = in["command"].(string)
				r.Command = clip(r.Command, maxResult)
			}
			if d, ok := in["description"].(string); ok {
				r.Text = clip(d, 200)
			}
			if b.Name == "Agent" || b.Name == "Task" {
				if d, ok := in["description"].(string); ok {
					r.Text = clip(d, 200)
				}
			}
			r.Text += claudeEditText(b.Name, in)
		default:
			continue
		}
		rows = append(rows, r)
	}
	return rows
}

// claudeEditText keeps the new text of an edit (bounded) so distill can see
// TODO/FIXME lines it added.
func claudeEditText(name string, in map[string]any) string {
	var s string
	switch name {
	case "Write":
		s, _ = in["content"].(string)
	case "Edit":
		s, _ = in["new_string"].(string)
	case "MultiEdit":
		if edits, ok := in["edits"].([]any); ok {
			for _, e := range edits {
				if m, ok := e.(map[string]any); ok {
					ns, _ := m["new_string"].(string)
					s += ns + "\n"
				}
			}
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
