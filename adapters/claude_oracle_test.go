package adapters

// This file freezes the Claude line parser as it was before the hand-rolled
// decoder (claude.go at commit 64e4689: pickFields + encoding/json). It is
// the oracle the differential tests and FuzzClaudeDifferential compare the
// fast parser against: both must yield reflect.DeepEqual rows for every
// line. Do not "fix" it; its quirks are the specification.

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"
)

type oracleLine struct {
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
	Message          *oracleMessage  `json:"message"`
	Attachment       json.RawMessage `json:"attachment"`
	Origin           json.RawMessage `json:"origin"`
	CompactMetadata  *struct {
		Trigger   string `json:"trigger"`
		PreTokens int64  `json:"preTokens"`
	} `json:"compactMetadata"`
}

type oracleMessage struct {
	ID    string `json:"id"`
	Role  string `json:"role"`
	Model string `json:"model"`
	// Blocks is the content when it is a list (one pass decodes it);
	// a string content leaves it empty and lands in Text.
	Blocks []oracleBlock `json:"content"`
	Text   string        `json:"-"`
	IsText bool          `json:"-"`
	Usage  *struct {
		Input         int64 `json:"input_tokens"`
		Output        int64 `json:"output_tokens"`
		CacheCreation int64 `json:"cache_creation_input_tokens"`
		CacheRead     int64 `json:"cache_read_input_tokens"`
	} `json:"usage"`
}

type oracleBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     oracleInput     `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// oracleSkip are line types that never carry rows; checked on raw bytes
// before decoding so big metadata lines cost nothing.
var oracleSkip = [][]byte{
	[]byte(`"type":"queue-operation"`), []byte(`"type":"last-prompt"`), []byte(`"type":"file-history-snapshot"`),
	[]byte(`"type":"mode"`), []byte(`"type":"permission-mode"`),
}

// oracleKeep are the top-level fields ParseLine decodes; the rest
// (toolUseResult, which repeats whole files, and metadata) is skipped.
var oracleKeep = map[string]bool{
	"type": true, "subtype": true, "uuid": true, "timestamp": true, "isSidechain": true, "isMeta": true,
	"isCompactSummary": true, "isApiErrorMessage": true, "promptSource": true, "agentId": true,
	"parentUuid": true, "message": true, "attachment": true, "compactMetadata": true, "origin": true,
}

var oracleExitCodeRE = regexp.MustCompile(`(?i)exit(?:ed with)? code:? (-?\d+)`)

// oracleContextWindow is the context size used for used/max figures.
const oracleContextWindow = 200000

func oracleParseLine(line []byte, off int64) ([]Row, error) {
	rows, err := oracleParseLineRaw(line, off)
	if rows == nil {
		return rows, err
	}
	return claudeScrub(rows), err
}

func oracleParseLineRaw(line []byte, off int64) ([]Row, error) {
	head := line
	if len(head) > 64 {
		head = head[:64]
	}
	for _, s := range oracleSkip {
		if bytes.Contains(head, s) {
			return claudeQueue(line, off), nil
		}
	}
	// Attachments (skill listings, re-attached files: kilobytes each) matter
	// only when they carry carryover's own injection. Their "attachment"
	// key comes before the "type" key, within the envelope's first fields.
	head = line
	if len(head) > 400 {
		head = head[:400]
	}
	if bytes.Contains(head, []byte(`"attachment":{`)) && !bytes.Contains(line, []byte("[CARRYOVER]")) &&
		!bytes.Contains(head, []byte(`"queued_command"`)) {
		return nil, nil
	}
	var l oracleLine
	picked := oraclePickFields(line, oracleKeep)
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
		return oracleUser(l, key, base), nil
	case "assistant":
		return oracleAssistant(l, key, base), nil
	case "attachment":
		return oracleAttachment(l, key, base), nil
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

func oracleUser(l oracleLine, key string, base Row) []Row {
	if l.Message == nil || l.IsMeta {
		return nil
	}
	harness := claudeOriginHarness(l.Origin)
	if s := l.Message.Text; l.Message.IsText {
		switch {
		case harness:
			r := base
			r.Key, r.Role, r.Kind, r.Text = key, "user", KindHarness, clip(s, maxText)
			return []Row{r}
		case l.IsCompactSummary:
			r := base
			r.Key, r.Role, r.Kind, r.Text = key, "system", KindCompaction, clip(s, maxText)
			return []Row{r}
		case strings.HasPrefix(s, "<command-"):
			if req, ok := claudeCommandPrompt(s); ok {
				r := base
				r.Key, r.Role, r.Kind, r.Text = key, "user", KindPrompt, promptText(req)
				return []Row{r}
			}
			return nil
		case strings.HasPrefix(s, "[Request interrupted by user for tool use"):
			return nil
		case strings.HasPrefix(s, "[Request interrupted by user"):
			return oracleStop(l, key, base, s)
		case claudeTaskNotification([]byte(s)):
			r := base
			r.Key, r.Role, r.Kind, r.Text = key, "user", KindHarness, clip(s, maxText)
			return []Row{r}
		case strings.HasPrefix(s, "<local-command-") || strings.HasPrefix(s, "<bash-") || strings.HasPrefix(s, "<user-memory-input>"):
			return nil
		case l.PromptSource == "" && l.IsSidechain && l.ParentUUID != nil:
			return nil // a subagent's only prompt is its first line (its task)
		case IsCarryoverText(s):
			r := base
			r.Key, r.Role, r.Kind, r.Text = key, "user", KindInjection, oracleFirstLine(s)
			return []Row{r}
		}
		r := base
		r.Key, r.Role, r.Kind, r.Text = key, "user", KindPrompt, promptText(s)
		return []Row{r}
	}
	var rows []Row
	image := -1
	for i, b := range l.Message.Blocks {
		r := base
		r.Key = key + "#" + strconv.Itoa(i)
		switch b.Type {
		case "image":
			image = i
			continue
		case "tool_result":
			text := oracleBlockText(b.Content)
			r.Role, r.CallID = "tool", b.ToolUseID
			if b.IsError {
				r.Kind = KindError
				if k := claudeStopped([]byte(text)); k != "" {
					r.Kind = k
				} else if m := oracleExitCodeRE.FindStringSubmatch(text); m != nil {
					n, _ := strconv.Atoi(m[1])
					r.ExitCode = intPtr(n)
				}
			}
			r.Text = clip(text, maxResult)
			if !b.IsError {
				r.ExitCode, r.Kind = shellExit(r.Text)
			}
		case "text":
			if l.IsCompactSummary {
				r.Role, r.Kind, r.Text = "system", KindCompaction, clip(b.Text, maxText)
				break
			}
			if l.PromptSource == "" && (oracleHasToolResult(l.Message.Blocks) || (l.IsSidechain && l.ParentUUID != nil)) {
				continue
			}
			if strings.HasPrefix(b.Text, "[Request interrupted by user for tool use") {
				continue
			} else if strings.HasPrefix(b.Text, "[Request interrupted by user") {
				rows = append(rows, oracleStop(l, r.Key, base, b.Text)...)
				continue
			} else if harness || claudeTaskNotification([]byte(b.Text)) {
				r.Role, r.Kind, r.Text = "user", KindHarness, clip(b.Text, maxText)
				break
			}
			r.Role, r.Kind, r.Text = "user", KindPrompt, promptText(b.Text)
		default:
			continue
		}
		rows = append(rows, r)
	}
	if image >= 0 && len(rows) == 0 && !harness && !oracleHasToolResult(l.Message.Blocks) && !l.IsSidechain {
		r := base
		r.Key, r.Role, r.Kind, r.Text = key+"#"+strconv.Itoa(image), "user", KindPrompt, imageOnly
		rows = append(rows, r)
	}
	return rows
}

func oracleStop(l oracleLine, key string, base Row, s string) []Row {
	if l.IsSidechain {
		return nil
	}
	r := base
	r.Key, r.Role, r.Kind, r.Text = key, "user", KindInterrupted, oracleFirstLine(s)
	return []Row{r}
}

func oracleHasToolResult(bs []oracleBlock) bool {
	for _, b := range bs {
		if b.Type == "tool_result" {
			return true
		}
	}
	return false
}

// oracleBlockText flattens a tool_result content (string or list of text blocks).
func oracleBlockText(raw json.RawMessage) string {
	var s string
	if p := oracleStringPrefix(raw, 2*maxResult); p != nil && json.Unmarshal(p, &s) == nil {
		return s // the row keeps maxResult bytes: no need to unquote a whole file
	}
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []oracleBlock
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

// oracleStringPrefix returns a JSON string literal holding about the first n
// bytes of the long string literal raw, cut between escapes; nil when raw
// is not a string or is short.
func oracleStringPrefix(raw []byte, n int) []byte {
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

func oracleAssistant(l oracleLine, key string, base Row) []Row {
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
			r.TokensUsed, r.TokensMax = used, oracleContextWindow
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
				r.Limit = LimitFromError(r.Text, APIErrorStatus(r.Text), r.Time)
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
			if id := clip(in.BashID, 80) + clip(in.TaskID, 80); id != "" {
				r.Text = id
			}
			r.Text += oracleEditText(b.Name, in)
		default:
			continue
		}
		rows = append(rows, r)
	}
	return rows
}

// oracleInput is the part of a tool_use input carryover reads (decoding a
// typed struct instead of a map keeps big Write contents cheap).
type oracleInput struct {
	FilePath     string `json:"file_path"`
	NotebookPath string `json:"notebook_path"`
	Command      string `json:"command"`
	Description  string `json:"description"`
	BashID       string `json:"bash_id"`
	TaskID       string `json:"task_id"`
	Content      string `json:"content"`
	NewString    string `json:"new_string"`
	Edits        []struct {
		NewString string `json:"new_string"`
	} `json:"edits"`
	// Todos is TodoWrite's list, kept raw (issue 13: the plan gives the
	// next action); not part of the frozen oracle before then.
	Todos json.RawMessage `json:"todos"`
}

// oracleEditText keeps the new text of an edit (bounded) so distill can see
// TODO/FIXME lines it added.
func oracleEditText(name string, in oracleInput) string {
	var s string
	switch name {
	case "TodoWrite":
		s = string(in.Todos)
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

func oracleAttachment(l oracleLine, key string, base Row) []Row {
	var a struct {
		Type    string          `json:"type"`
		Content json.RawMessage `json:"content"`
		Stdout  string          `json:"stdout"`
		Hook    string          `json:"hookEvent"`
		Prompt  json.RawMessage `json:"prompt"`
		Mode    string          `json:"commandMode"`
		Origin  json.RawMessage `json:"origin"`
	}
	if json.Unmarshal(l.Attachment, &a) != nil {
		return nil
	}
	var text string
	switch a.Type {
	case "queued_command":
		return oracleQueued(a.Prompt, a.Mode, a.Origin, key, base)
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
	r.Text = oracleCarryoverHeader(text) + " via " + a.Hook
	return []Row{r}
}

func oracleQueued(prompt json.RawMessage, mode string, origin json.RawMessage, key string, base Row) []Row {
	harness := mode == "task-notification" || claudeOriginHarness(origin)
	if !harness && mode != "" && mode != "prompt" {
		return nil
	}
	var text string
	if json.Unmarshal(prompt, &text) == nil {
		if !harness && claudeNotRequest([]byte(text)) {
			return nil
		}
	} else {
		text = claudeBlocksText(prompt)
		if text == "" && !harness && bytes.Contains(prompt, []byte(`"image"`)) {
			text = imageOnly
		}
	}
	if strings.TrimSpace(text) == "" {
		return nil
	}
	r := base
	r.Key, r.Role, r.Kind, r.Text = key, "user", KindPrompt, promptText(text)
	if harness {
		r.Kind, r.Text = KindHarness, clip(text, maxText)
	}
	return []Row{r}
}

// oracleCarryoverHeader returns the "# [CARRYOVER] Last updated …" line of an
// injected handoff (the delivery receipt's identity).
func oracleCarryoverHeader(text string) string {
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

func oracleFirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return clip(s, 200)
}

func oracleTopLevel(b []byte, fn func(key, val []byte)) {
	i := oracleSkipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return
	}
	i++
	for {
		i = oracleSkipWS(b, i)
		if i >= len(b) || b[i] != '"' {
			return
		}
		ks := i + 1
		i = oracleSkipString(b, i)
		if i < 0 {
			return
		}
		key := b[ks : i-1]
		i = oracleSkipWS(b, i)
		if i >= len(b) || b[i] != ':' {
			return
		}
		i = oracleSkipWS(b, i+1)
		vs := i
		i = oracleSkipValue(b, i)
		if i < 0 {
			return
		}
		fn(key, b[vs:i])
		i = oracleSkipWS(b, i)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i++
	}
}

func oracleSkipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// oracleSkipString returns the index after the string starting at b[i] == '"'.
func oracleSkipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// oracleSkipValue returns the index after the value starting at b[i].
func oracleSkipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return oracleSkipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				j := oracleSkipString(b, i)
				if j < 0 {
					return -1
				}
				i = j - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	default:
		for ; i < len(b); i++ {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
		}
		return i
	}
}

// oraclePickFields builds a small JSON object from the top-level fields of b
// whose keys are in keep, for a single json.Unmarshal.
func oraclePickFields(b []byte, keep map[string]bool) []byte {
	out := make([]byte, 0, 256)
	out = append(out, '{')
	oracleTopLevel(b, func(k, v []byte) {
		if !keep[string(k)] {
			return
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, '"')
		out = append(out, k...)
		out = append(out, '"', ':')
		out = append(out, v...)
	})
	return append(out, '}')
}
