package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// gcRecorder keeps every request a fake server received, in arrival order,
// and plays a script of turns. It is shared by the Gemini and chat servers.
type gcRecorder struct {
	mu    sync.Mutex
	all   []gcRequest
	turns []Turn
	next  int
}

type gcRequest struct {
	Path string
	Body []byte
	Main bool
}

// add records one request. When main is true it also consumes the next turn
// of the script and returns it; ok is false once the script is exhausted.
func (r *gcRecorder) add(path string, body []byte, main bool) (turn Turn, index int, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, gcRequest{Path: path, Body: body, Main: main})
	if !main {
		return Turn{}, -1, false
	}
	index = r.next
	if index < len(r.turns) && r.turns[index].RateLimited {
		return r.turns[index], index, true // a limit, once hit, stays
	}
	r.next++
	if index < len(r.turns) {
		return r.turns[index], index, true
	}
	return Turn{}, index, false
}

func (r *gcRecorder) bodies(mainOnly bool) [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out [][]byte
	for _, q := range r.all {
		if mainOnly && !q.Main {
			continue
		}
		out = append(out, append([]byte(nil), q.Body...))
	}
	return out
}

func (r *gcRecorder) paths() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.all))
	for i, q := range r.all {
		out[i] = q.Path
	}
	return out
}

func (r *gcRecorder) contains(s string) bool {
	for _, b := range r.bodies(false) {
		if bytes.Contains(b, []byte(s)) || bytes.Contains(b, []byte(gcJSONEscape(s))) {
			return true
		}
	}
	return false
}

func (r *gcRecorder) used() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.next
}

// gcJSONEscape returns s as it appears inside a JSON string literal.
func gcJSONEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// gcReadBody reads a request body, undoing gzip when the client used it.
func gcReadBody(req *http.Request) ([]byte, error) {
	var rd io.Reader = req.Body
	if strings.EqualFold(req.Header.Get("Content-Encoding"), "gzip") {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		rd = zr
	}
	return io.ReadAll(rd)
}

// GeminiServer is a fake Gemini API (generativelanguage v1beta) on
// 127.0.0.1 that plays a script of turns. Point the CLI at it with
// GOOGLE_GEMINI_BASE_URL=URL() and any GEMINI_API_KEY.
//
// A request is a main request, and consumes one turn, when it declares
// tools; the CLI's side requests (model router, next-speaker and loop
// checks, session summaries, chat compression) declare none and get a
// canned answer that fits their response schema.
type GeminiServer struct {
	srv *httptest.Server
	rec gcRecorder
}

// NewGeminiServer starts a fake Gemini API that answers main requests with
// turns in order. It is closed when the test ends.
func NewGeminiServer(t testing.TB, turns []Turn) *GeminiServer {
	t.Helper()
	s := &GeminiServer{rec: gcRecorder{turns: turns}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the base URL for GOOGLE_GEMINI_BASE_URL (no trailing slash).
func (s *GeminiServer) URL() string { return s.srv.URL }

// Requests returns every request body received, side requests included.
func (s *GeminiServer) Requests() [][]byte { return s.rec.bodies(false) }

// MainRequests returns the bodies of the requests that consumed a turn.
func (s *GeminiServer) MainRequests() [][]byte { return s.rec.bodies(true) }

// Paths returns the URL path (with query) of every request received.
func (s *GeminiServer) Paths() []string { return s.rec.paths() }

// Contains reports whether any request body contains s, either verbatim or
// JSON-escaped.
func (s *GeminiServer) Contains(str string) bool { return s.rec.contains(str) }

// TurnsUsed is the number of main requests answered so far.
func (s *GeminiServer) TurnsUsed() int { return s.rec.used() }

// geminiRequest is the part of a generateContent request the fake reads.
type geminiRequest struct {
	Contents []json.RawMessage `json:"contents"`
	Tools    []struct {
		FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseMimeType   string          `json:"responseMimeType"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
		ResponseSchema     json.RawMessage `json:"responseSchema"`
	} `json:"generationConfig"`
}

func (s *GeminiServer) serve(w http.ResponseWriter, req *http.Request) {
	body, err := gcReadBody(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	path := req.URL.Path
	if req.URL.RawQuery != "" {
		path += "?" + req.URL.RawQuery
	}
	method := req.URL.Path[strings.LastIndex(req.URL.Path, ":")+1:]
	switch {
	case req.Method == http.MethodPost && method == "countTokens":
		s.rec.add(path, body, false)
		gcWriteJSON(w, map[string]any{"totalTokens": len(body)/4 + 1})
		return
	case req.Method == http.MethodPost && (method == "generateContent" || method == "streamGenerateContent"):
	default:
		s.rec.add(path, body, false)
		http.Error(w, fmt.Sprintf("fake gemini server: no handler for %s %s", req.Method, req.URL.Path), http.StatusNotFound)
		return
	}
	var gr geminiRequest
	if err := json.Unmarshal(body, &gr); err != nil {
		s.rec.add(path, body, false)
		http.Error(w, "fake gemini server: request is not JSON: "+err.Error(), http.StatusBadRequest)
		return
	}
	main := false
	for _, tl := range gr.Tools {
		if len(tl.FunctionDeclarations) > 0 {
			main = true
		}
	}
	var parts []map[string]any
	inTokens, outTokens := 100, 10
	if main {
		turn, idx, ok := s.rec.add(path, body, true)
		if !ok {
			turn = Turn{Text: "Done."}
		}
		if turn.RateLimited {
			// "limit: 0" makes Gemini CLI treat it as a terminal quota error
			// (no retries with backoff).
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": 429, "status": "RESOURCE_EXHAUSTED",
				"message": "Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_requests, limit: 0, model: gemini-fake"}})
			return
		}
		if turn.InputTokens > 0 {
			inTokens = turn.InputTokens
		}
		if turn.Text != "" {
			parts = append(parts, map[string]any{"text": turn.Text})
			outTokens += len(turn.Text) / 4
		}
		for i, c := range turn.Calls {
			args := c.Args
			if args == nil {
				args = map[string]any{}
			}
			parts = append(parts, map[string]any{"functionCall": map[string]any{
				"id": fmt.Sprintf("fake_call_%d_%d", idx, i), "name": c.Name, "args": args}})
		}
	} else {
		s.rec.add(path, body, false)
		schema := gr.GenerationConfig.ResponseJSONSchema
		if len(schema) == 0 {
			schema = gr.GenerationConfig.ResponseSchema
		}
		if len(schema) > 0 || gr.GenerationConfig.ResponseMimeType == "application/json" {
			b, _ := json.Marshal(geminiSchemaValue(schema, ""))
			parts = []map[string]any{{"text": string(b)}}
		} else {
			parts = []map[string]any{{"text": "<state_snapshot>Summary of the conversation so far.</state_snapshot>"}}
		}
	}
	if len(parts) == 0 {
		parts = []map[string]any{{"text": ""}}
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": parts},
			"finishReason": "STOP",
			"index":        0,
		}},
		"usageMetadata": map[string]any{
			"promptTokenCount":     inTokens,
			"candidatesTokenCount": outTokens,
			"totalTokenCount":      inTokens + outTokens,
		},
		"modelVersion": "fake-gemini",
		"responseId":   "fake-response",
	}
	if method == "streamGenerateContent" {
		b, _ := json.Marshal(resp)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		return
	}
	gcWriteJSON(w, resp)
}

// geminiSchemaValue builds a value that satisfies a (Gemini or JSON) schema.
// Known side-request fields get answers that keep the CLI on its main path:
// the router sees a simple task and the next-speaker check hands back to the
// user.
func geminiSchemaValue(raw json.RawMessage, name string) any {
	var sc struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Items      json.RawMessage            `json:"items"`
		Enum       []any                      `json:"enum"`
	}
	_ = json.Unmarshal(raw, &sc)
	switch name {
	case "next_speaker":
		return "user"
	case "complexity_score":
		return 10
	case "is_stuck", "isStuck":
		return false
	}
	if len(sc.Enum) > 0 {
		return sc.Enum[0]
	}
	switch strings.ToLower(sc.Type) {
	case "object", "":
		obj := map[string]any{}
		for k, v := range sc.Properties {
			obj[k] = geminiSchemaValue(v, k)
		}
		return obj
	case "array":
		return []any{}
	case "integer", "number":
		return 1
	case "boolean":
		return false
	default:
		return "ok"
	}
}

func gcWriteJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
