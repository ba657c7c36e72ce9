package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// AnthropicCompactionMarker is the sentence of Claude Code's compaction
// request ("/compact" and auto-compaction) that the fake answers with Summary.
const AnthropicCompactionMarker = "Your task is to create a detailed summary of the conversation so far"

// Anthropic is a fake Anthropic Messages API (POST /v1/messages, streaming
// SSE or plain JSON, and /v1/messages/count_tokens) on 127.0.0.1.
type Anthropic struct {
	Recorder
	// Summary answers compaction requests. Set it before the agent runs.
	Summary string
	// Fallback answers main requests once the script is exhausted.
	Fallback string
	// CarryUsage makes a Fallback that answers a tool result report the
	// input tokens of the turn before it, as a real model's usage does
	// within a conversation (the context only grows until it is compacted
	// or a new session starts).
	CarryUsage bool

	srv   *httptest.Server
	mu    sync.Mutex
	turns []Turn
	next  int
	// lastInput is the input tokens the last turn reported (CarryUsage).
	lastInput int
}

// NewAnthropic starts the fake; it is closed when the test ends.
func NewAnthropic(t testing.TB, turns []Turn) *Anthropic {
	t.Helper()
	a := &Anthropic{
		turns:    turns,
		Summary:  "<analysis>Reviewed the conversation.</analysis>\n<summary>\n1. Primary Request and Intent: scripted end-to-end session.\n2. Pending Tasks: add the retry test.\n</summary>",
		Fallback: "OK.",
	}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

// URL is the base URL to put in ANTHROPIC_BASE_URL.
func (a *Anthropic) URL() string { return a.srv.URL }

// Played reports how many scripted turns were consumed.
func (a *Anthropic) Played() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.next
}

type anthropicRequest struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	Tools    []json.RawMessage `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

func (a *Anthropic) serve(w http.ResponseWriter, r *http.Request) {
	body := readBody(r)
	path := r.URL.Path
	switch {
	case path == "/" && (r.Method == http.MethodHead || r.Method == http.MethodGet):
		// Claude Code probes the base URL with HEAD / before the first request.
		a.Record(r.Method, path, KindOther, body)
		w.WriteHeader(http.StatusOK)
		return
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/v1/messages/count_tokens"):
		a.Record(r.Method, path, KindCount, body)
		WriteJSON(w, http.StatusOK, map[string]any{"input_tokens": 1000})
		return
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/v1/messages"):
	default:
		a.Record(r.Method, path, KindOther, body)
		WriteJSON(w, http.StatusNotFound, map[string]any{"type": "error", "error": map[string]any{"type": "not_found_error", "message": "fake anthropic: no route " + path}})
		return
	}
	var req anthropicRequest
	if err := json.Unmarshal(body, &req); err != nil {
		a.Record(r.Method, path, KindOther, body)
		WriteJSON(w, http.StatusBadRequest, map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": "fake anthropic: body is not JSON"}})
		return
	}
	var turn Turn
	kind := KindMain
	last := ""
	afterTool := false
	if n := len(req.Messages); n > 0 {
		last = contentText(req.Messages[n-1].Content)
		afterTool = bytes.Contains(req.Messages[n-1].Content, []byte(`"tool_result"`))
	}
	a.mu.Lock()
	switch {
	case strings.Contains(last, AnthropicCompactionMarker):
		kind, turn = KindCompact, Turn{Text: a.Summary}
	case len(req.Tools) == 0:
		// Title generation and other tool-less helper calls.
		kind, turn = KindSide, Turn{Text: "Scripted session"}
	case a.next < len(a.turns):
		turn = a.turns[a.next]
		if !turn.RateLimited {
			a.next++ // a limit, once hit, stays
		}
	default:
		turn = Turn{Text: a.Fallback}
		if a.CarryUsage && afterTool {
			turn.InputTokens = a.lastInput
		}
	}
	if kind == KindMain {
		a.lastInput = turn.InputTokens
	}
	id := nextFakeID()
	a.mu.Unlock()
	a.Record(r.Method, path, kind, body)
	if turn.RateLimited && kind == KindMain {
		w.Header().Set("retry-after", "3600")
		w.Header().Set("anthropic-ratelimit-requests-remaining", "0")
		w.Header().Set("anthropic-ratelimit-requests-reset", time.Unix(RateLimitReset, 0).UTC().Format(time.RFC3339))
		WriteJSON(w, http.StatusTooManyRequests, map[string]any{"type": "error", "error": map[string]any{
			"type": "rate_limit_error", "message": "Number of request tokens has exceeded your per-minute rate limit"}})
		return
	}

	model := req.Model
	if model == "" {
		model = "claude-fake"
	}
	msg := a.message(id, model, turn)
	if !req.Stream {
		WriteJSON(w, http.StatusOK, msg)
		return
	}
	a.stream(w, msg)
}

// message builds the complete (non-streaming) Messages API response.
func (a *Anthropic) message(id int, model string, turn Turn) map[string]any {
	var content []map[string]any
	if turn.Text != "" || len(turn.Calls) == 0 {
		content = append(content, map[string]any{"type": "text", "text": turn.Text})
	}
	for i, c := range turn.Calls {
		args := c.Args
		if args == nil {
			args = map[string]any{}
		}
		content = append(content, map[string]any{
			"type": "tool_use", "id": fmt.Sprintf("toolu_fake_%04d_%d", id, i), "name": c.Name, "input": args,
		})
	}
	stop := "end_turn"
	if len(turn.Calls) > 0 {
		stop = "tool_use"
	}
	in := turn.InputTokens
	if in == 0 {
		in = 1200
	}
	return map[string]any{
		"id": fmt.Sprintf("msg_fake_%04d", id), "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": in, "output_tokens": 40, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
	}
}

// stream plays msg as the SSE event sequence of the Messages API.
func (a *Anthropic) stream(w http.ResponseWriter, msg map[string]any) {
	s := NewSSE(w)
	usage := msg["usage"].(map[string]any)
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"] = []any{}
	start["stop_reason"] = nil
	start["usage"] = map[string]any{"input_tokens": usage["input_tokens"], "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	s.Event("message_start", map[string]any{"type": "message_start", "message": start})
	s.Event("ping", map[string]any{"type": "ping"})
	for i, block := range msg["content"].([]map[string]any) {
		switch block["type"] {
		case "text":
			s.Event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			for _, chunk := range splitChunks(block["text"].(string), 3) {
				s.Event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": chunk}})
			}
		case "tool_use":
			s.Event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}})
			js, _ := json.Marshal(block["input"])
			for _, chunk := range splitChunks(string(js), 2) {
				s.Event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": chunk}})
			}
		}
		s.Event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	s.Event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": msg["stop_reason"], "stop_sequence": nil},
		"usage": map[string]any{"input_tokens": usage["input_tokens"], "output_tokens": usage["output_tokens"], "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}})
	s.Event("message_stop", map[string]any{"type": "message_stop"})
}

// splitChunks cuts s into at most n pieces on rune boundaries.
func splitChunks(s string, n int) []string {
	r := []rune(s)
	if len(r) == 0 {
		return []string{""}
	}
	size := (len(r) + n - 1) / n
	var out []string
	for i := 0; i < len(r); i += size {
		j := min(i+size, len(r))
		out = append(out, string(r[i:j]))
	}
	return out
}

// contentText flattens a Messages API content value (string or blocks) to text.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type    string          `json:"type"`
		Text    string          `json:"text"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var b strings.Builder
	for _, bl := range blocks {
		b.WriteString(bl.Text)
		if len(bl.Content) > 0 {
			b.WriteString(contentText(bl.Content))
		}
		b.WriteByte('\n')
	}
	return b.String()
}
