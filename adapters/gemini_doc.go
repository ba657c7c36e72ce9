package adapters

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
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
	var d geminiDoc
	f, err := os.Open(path)
	if err != nil {
		return d, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return d, err
	}
	if !fi.Mode().IsRegular() {
		return d, fmt.Errorf("%s is not a regular file", filepath.Base(path))
	}
	b, err := io.ReadAll(io.LimitReader(f, geminiDocMax+1))
	if err != nil {
		return d, err
	}
	if len(b) > geminiDocMax {
		return d, fmt.Errorf("session document over %d MB", geminiDocMax>>20)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("not a Gemini CLI session document (JSON: %v)", jsonErrWhere(err))
	}
	if d.SessionID == "" || d.Messages == nil {
		return d, errNoSession
	}
	return d, nil
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
	for _, v := range []string{d.LastUpdated, d.StartTime} {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil && t.After(s.LastActive) {
			s.LastActive = t
		}
	}
	for _, raw := range d.Messages {
		var m geminiMessage
		if json.Unmarshal(raw, &m) != nil || m.ID == "" {
			continue
		}
		if t, err := time.Parse(time.RFC3339Nano, m.Timestamp); err == nil && t.After(s.LastActive) {
			s.LastActive = t
		}
		if m.Type == "user" || m.Type == "gemini" {
			s.MessageCount++
		}
		if m.Type == "user" && s.Preview == "" {
			if t := strings.TrimSpace(geminiText(m.Content)); t != "" && !strings.HasPrefix(t, "/") && !IsCarryoverText(t) {
				s.Preview = preview(t)
			}
		}
	}
	if s.LastActive.IsZero() {
		if fi, err := os.Stat(path); err == nil {
			s.LastActive = fi.ModTime()
		}
	}
	return s, nil
}

// looksLikeGeminiDoc is a cheap check of a file's first bytes.
func looksLikeGeminiDoc(head []byte) bool {
	head = bytes.TrimLeft(head, " \t\r\n")
	return bytes.HasPrefix(head, []byte("{")) && bytes.Contains(head, []byte(`"messages"`)) && bytes.Contains(head, []byte(`"sessionId"`))
}
