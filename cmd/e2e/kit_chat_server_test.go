package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// ChatServer is a fake OpenAI Chat Completions API on 127.0.0.1 that plays a
// script of turns, as used by Copilot CLI in BYOK mode
// (COPILOT_PROVIDER_BASE_URL=URL()+"/v1", COPILOT_OFFLINE=true).
//
// A request is a main request, and consumes one turn, when it offers tools
// and is not a compaction request (its last user message asks to "create a
// detailed summary of the conversation"). Side requests get a short summary.
type ChatServer struct {
	srv *httptest.Server
	rec gcRecorder
}

// ChatModel is the model id the fake lists and answers as.
const ChatModel = "gpt-4.1"

// NewChatServer starts a fake Chat Completions API that answers main requests
// with turns in order. It is closed when the test ends.
func NewChatServer(t testing.TB, turns []Turn) *ChatServer {
	t.Helper()
	s := &ChatServer{rec: gcRecorder{turns: turns}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the server root (no /v1 suffix, no trailing slash).
func (s *ChatServer) URL() string { return s.srv.URL }

// Requests returns every request body received, side requests included.
func (s *ChatServer) Requests() [][]byte { return s.rec.bodies(false) }

// MainRequests returns the bodies of the requests that consumed a turn.
func (s *ChatServer) MainRequests() [][]byte { return s.rec.bodies(true) }

// Paths returns the URL path of every request received, in order.
func (s *ChatServer) Paths() []string { return s.rec.paths() }

// Contains reports whether any request body contains s, either verbatim or
// JSON-escaped.
func (s *ChatServer) Contains(str string) bool { return s.rec.contains(str) }

// TurnsUsed is the number of main requests answered so far.
func (s *ChatServer) TurnsUsed() int { return s.rec.used() }

type chatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []json.RawMessage `json:"tools"`
}

// chatCompactionPrefix starts the last user message of Copilot CLI's
// compaction request.
const chatCompactionPrefix = "Please create a detailed summary of the conversation"

func (s *ChatServer) serve(w http.ResponseWriter, req *http.Request) {
	body, err := gcReadBody(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p := strings.TrimSuffix(req.URL.Path, "/")
	switch {
	case req.Method == http.MethodGet && strings.HasSuffix(p, "/models"):
		s.rec.add(req.URL.Path, body, false)
		gcWriteJSON(w, map[string]any{"object": "list", "data": []any{map[string]any{
			"id": ChatModel, "object": "model", "created": 1700000000, "owned_by": "fake"}}})
		return
	case req.Method == http.MethodPost && strings.HasSuffix(p, "/chat/completions"):
	default:
		s.rec.add(req.URL.Path, body, false)
		http.Error(w, fmt.Sprintf("fake chat server: no handler for %s %s", req.Method, req.URL.Path), http.StatusNotFound)
		return
	}
	var cr chatRequest
	if err := json.Unmarshal(body, &cr); err != nil {
		s.rec.add(req.URL.Path, body, false)
		http.Error(w, "fake chat server: request is not JSON: "+err.Error(), http.StatusBadRequest)
		return
	}
	main := len(cr.Tools) > 0 && !chatIsCompaction(cr)
	var turn Turn
	idx := -1
	if main {
		var ok bool
		turn, idx, ok = s.rec.add(req.URL.Path, body, true)
		if !ok {
			turn = Turn{Text: "Done."}
		}
		if turn.RateLimited {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("x-ratelimit-remaining-requests", "0")
			w.Header().Set("retry-after", "3600")
			w.WriteHeader(http.StatusTooManyRequests)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"type": "rate_limit_exceeded", "code": "rate_limit_exceeded",
				"message": "Sorry, you have exceeded your rate limit. Please try again later."}})
			return
		}
	} else {
		s.rec.add(req.URL.Path, body, false)
		turn = Turn{Text: "<overview>Summary of the conversation so far.</overview>"}
	}
	model := cr.Model
	if model == "" {
		model = ChatModel
	}
	inTokens := 100
	if turn.InputTokens > 0 {
		inTokens = turn.InputTokens
	}
	outTokens := 10 + len(turn.Text)/4
	usage := map[string]any{"prompt_tokens": inTokens, "completion_tokens": outTokens, "total_tokens": inTokens + outTokens}
	id := fmt.Sprintf("chatcmpl-fake-%d", len(s.rec.paths()))
	finish := "stop"
	var calls []map[string]any
	for i, c := range turn.Calls {
		args := c.Args
		if args == nil {
			args = map[string]any{}
		}
		a, _ := json.Marshal(args)
		calls = append(calls, map[string]any{
			"index": i, "id": fmt.Sprintf("call_%d_%d", idx, i), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": string(a)},
		})
		finish = "tool_calls"
	}
	created := time.Now().Unix()
	if !cr.Stream {
		msg := map[string]any{"role": "assistant", "content": turn.Text}
		if len(calls) > 0 {
			for _, c := range calls {
				delete(c, "index")
			}
			msg["tool_calls"] = calls
		}
		gcWriteJSON(w, map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(choices []any, extra map[string]any) {
		m := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model, "choices": choices}
		for k, v := range extra {
			m[k] = v
		}
		b, _ := json.Marshal(m)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	delta := map[string]any{"role": "assistant", "content": turn.Text}
	chunk([]any{map[string]any{"index": 0, "delta": delta, "finish_reason": nil}}, nil)
	if len(calls) > 0 {
		chunk([]any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": calls}, "finish_reason": nil}}, nil)
	}
	chunk([]any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}, nil)
	chunk([]any{}, map[string]any{"usage": usage})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// chatIsCompaction reports whether the last user message is Copilot CLI's
// request to summarise the conversation.
func chatIsCompaction(cr chatRequest) bool {
	for i := len(cr.Messages) - 1; i >= 0; i-- {
		m := cr.Messages[i]
		if m.Role != "user" {
			continue
		}
		var text string
		if json.Unmarshal(m.Content, &text) != nil {
			var parts []struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(m.Content, &parts)
			for _, p := range parts {
				text += p.Text
			}
		}
		return strings.Contains(text, chatCompactionPrefix)
	}
	return false
}
