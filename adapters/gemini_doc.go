package adapters

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Gemini CLI session shapes carryover reads (testdata/adapters/gemini/):
//
//   - before 0.39: one JSON document per session, chats/session-<time>-<id8>.json,
//     {"sessionId","projectHash","startTime","lastUpdated","messages":[…]},
//     rewritten whole on every turn; messages are the same records the later
//     JSONL appends (content a string or Part[], toolCalls with results).
//   - 0.39 and later: chats/session-*.jsonl, a header line then upserted
//     messages and "$set" rewrites (gemini.go). Early JSONL headers lack
//     projectHash.
//
// The document shape is read whole through ReadStore (it is not tailable:
// every write replaces it); the ledger's upsert by message id makes the
// re-read harmless.

// geminiDocMax bounds a document read whole (the biggest real chat files
// are a few MB; a planted huge file must not exhaust memory).
const geminiDocMax = 256 << 20

type geminiDoc struct {
	SessionID   string            `json:"sessionId"`
	ProjectHash string            `json:"projectHash"`
	StartTime   string            `json:"startTime"`
	LastUpdated string            `json:"lastUpdated"`
	Messages    []json.RawMessage `json:"messages"`
}

// isGeminiDoc reports whether path names a pre-0.39 document.
func isGeminiDoc(path string) bool { return strings.HasSuffix(path, ".json") }

// ReadStore reads a pre-0.39 single-document session (nothing for the
// JSONL shape, which is tailed).
func (gemini) ReadStore(h Hook, env Env) ([]Row, error) {
	if !isGeminiDoc(h.TranscriptPath) {
		return nil, nil
	}
	d, err := readGeminiDoc(h.TranscriptPath)
	if err != nil {
		return nil, err
	}
	return geminiRewrite(d.Messages), nil
}

func readGeminiDoc(path string) (geminiDoc, error) {
	b, err := readDocument(path, geminiDocMax)
	if err != nil {
		return geminiDoc{}, err
	}
	return parseGeminiDoc(path, b)
}

// parseGeminiDoc decodes a document's bytes (path names a /chat save).
func parseGeminiDoc(path string, b []byte) (geminiDoc, error) {
	var d geminiDoc
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		return geminiArrayDoc(path, t)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("not a Gemini CLI session document (JSON: %v)", jsonErrWhere(err))
	}
	if d.Messages == nil {
		return d, errNoSession
	}
	if d.SessionID == "" {
		// A chat exported or saved without its header: its messages say it
		// is Gemini's, its file name names it.
		if !geminiHasMessage(d.Messages) {
			return d, errNoSession
		}
		d.SessionID = strings.TrimSuffix(filepath.Base(path), ".json")
	}
	return d, nil
}

// geminiHasMessage reports whether msgs holds a user or gemini message.
func geminiHasMessage(msgs []json.RawMessage) bool {
	for _, raw := range msgs {
		var m geminiMessage
		if json.Unmarshal(raw, &m) == nil && (m.Type == "user" || m.Type == "gemini") && len(m.Content) > 0 {
			return true
		}
	}
	return false
}

// jsonErrWhere keeps a JSON error's position, never the content.
func jsonErrWhere(err error) string {
	if se, ok := err.(*json.SyntaxError); ok {
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	}
	return "unexpected value"
}

// describeGeminiDoc is Describe for the document shape.
func describeGeminiDoc(path string) (NativeSession, error) {
	d, err := readGeminiDoc(path)
	if err != nil {
		return NativeSession{Tool: "gemini", Path: path}, err
	}
	s := NativeSession{Tool: "gemini", Path: path, ID: d.SessionID}
	s.LastActive = newerTime(newerTime(s.LastActive, d.LastUpdated), d.StartTime)
	for _, raw := range d.Messages {
		var m geminiMessage
		if json.Unmarshal(raw, &m) != nil || (m.ID == "" && !geminiMessageType(m.Type)) {
			continue
		}
		s.noteGeminiMessage(m)
	}
	if s.LastActive.IsZero() {
		if fi, err := os.Stat(path); err == nil {
			s.LastActive = fi.ModTime()
		}
	}
	return s, nil
}

// noteGeminiMessage counts a document's message, takes the first prompt
// that is no command as the preview and the newest time as the last
// activity.
func (s *NativeSession) noteGeminiMessage(m geminiMessage) {
	s.LastActive = newerTime(s.LastActive, m.Timestamp)
	if m.Type == "user" || m.Type == "gemini" {
		s.MessageCount++
	}
	if m.Type != "user" || s.Preview != "" {
		return
	}
	if t := strings.TrimSpace(geminiText(m.Content)); t != "" && !strings.HasPrefix(t, "/") && !IsCarryoverText(t) {
		s.Preview = preview(t)
	}
}

// geminiArrayDoc reads the two array-shaped files of Gemini CLI before
// 0.39: logs.json (every prompt typed in the project, all sessions:
// [{sessionId, messageId, type:"user", message, timestamp}], of which the
// newest session is taken) and a /chat save checkpoint-<tag>.json (the
// model history: [{role:"user"|"model", parts:[…]}], named by its file).
func geminiArrayDoc(path string, b []byte) (geminiDoc, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return geminiDoc{}, fmt.Errorf("not a Gemini CLI session document (JSON: %v)", jsonErrWhere(err))
	}
	var newest, newestAt string
	entries := make([]geminiLogEntry, 0, len(items))
	for _, it := range items {
		var e geminiLogEntry
		if json.Unmarshal(it, &e) != nil {
			continue
		}
		entries = append(entries, e)
		if e.SessionID != "" && e.Timestamp >= newestAt {
			newest, newestAt = e.SessionID, e.Timestamp
		}
	}
	d := geminiDoc{SessionID: newest, LastUpdated: newestAt}
	setup := false // the CLI's opening "setting up the context" exchange
	for i, e := range entries {
		var skip bool
		if skip, setup = geminiSetupExchange(e, setup); skip {
			continue
		}
		if m, ok := e.message(i, newest); ok {
			raw, _ := json.Marshal(m)
			d.Messages = append(d.Messages, raw)
		}
	}
	if d.SessionID == "" {
		d.SessionID = strings.TrimSuffix(filepath.Base(path), ".json")
	}
	if len(d.Messages) == 0 {
		return d, errNoSession
	}
	return d, nil
}

// geminiLogEntry is an item of logs.json or of a /chat save.
type geminiLogEntry struct {
	SessionID string          `json:"sessionId"`
	MessageID json.RawMessage `json:"messageId"`
	Type      string          `json:"type"`
	Message   string          `json:"message"`
	Timestamp string          `json:"timestamp"`
	Role      string          `json:"role"`
	Parts     json.RawMessage `json:"parts"`
}

// geminiSetupExchange skips the CLI's opening "setting up the context"
// user entry and the model's "Thanks for the context" answer; setup says
// whether the first was seen and the second not yet.
func geminiSetupExchange(e geminiLogEntry, setup bool) (skip, stillSetup bool) {
	if e.Role == "user" && strings.Contains(string(e.Parts), "We are setting up the context for our chat") {
		return true, true
	}
	if setup && e.Role == "model" {
		return strings.Contains(string(e.Parts), "Thanks for the context"), false
	}
	return false, setup
}

// message is entry i as a session message: a prompt of the newest
// session in logs.json (a bare command is none), or a turn of a /chat
// save (when there is no session id).
func (e geminiLogEntry) message(i int, newest string) (geminiMessage, bool) {
	switch {
	case newest != "" && e.SessionID == newest && e.Type == "user" && e.Message != "" && !geminiBareCommand(e.Message):
		content, _ := json.Marshal(e.Message)
		return geminiMessage{ID: "log:" + e.SessionID + ":" + string(e.MessageID), Timestamp: e.Timestamp, Type: "user", Content: content}, true
	case newest == "" && (e.Role == "user" || e.Role == "model") && len(e.Parts) > 0:
		typ := "user"
		if e.Role == "model" {
			typ = "gemini"
		}
		return geminiMessage{ID: "cp:" + strconv.Itoa(i), Type: typ, Content: e.Parts}, true
	}
	return geminiMessage{}, false
}

// geminiBareCommand reports a slash command without arguments.
func geminiBareCommand(s string) bool {
	return strings.HasPrefix(s, "/") && !strings.ContainsAny(strings.TrimSpace(s), " \n")
}

// geminiArraySniff recognises logs.json and a /chat save: a JSON array
// (a JSONL transcript never starts with '[').
func geminiArraySniff(b []byte) bool {
	t := bytes.TrimLeft(b, " \t\r\n")
	if len(t) == 0 || t[0] != '[' {
		return false
	}
	return containsAll(t, `"sessionId"`, `"messageId"`) || containsAll(t, `"role":"model"`, `"parts"`)
}
