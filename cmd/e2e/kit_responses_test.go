package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// ResponsesCompactionMarker is the start of the prompt Codex sends when it
// compacts a thread (request_kind "compaction" in client_metadata).
const ResponsesCompactionMarker = "CONTEXT CHECKPOINT COMPACTION"

// Responses is a fake OpenAI Responses API (POST /v1/responses, SSE) on
// 127.0.0.1, shaped the way Codex 0.169 consumes it.
type Responses struct {
	Recorder
	// Summary answers compaction requests.
	Summary string
	// Fallback answers main requests once the script is exhausted.
	Fallback string

	srv   *httptest.Server
	mu    sync.Mutex
	turns []Turn
	next  int
}

// NewResponses starts the fake; it is closed when the test ends.
func NewResponses(t testing.TB, turns []Turn) *Responses {
	t.Helper()
	r := &Responses{
		turns:    turns,
		Summary:  "HANDOFF SUMMARY: scripted end-to-end session; next add the retry test.",
		Fallback: "OK.",
	}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

// URL is the server root; Codex's provider base_url is URL()+"/v1".
func (r *Responses) URL() string { return r.srv.URL }

// Played reports how many scripted turns were consumed.
func (r *Responses) Played() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.next
}

type responsesRequest struct {
	Model string `json:"model"`
	Tools []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
	Input          []json.RawMessage `json:"input"`
	ClientMetadata map[string]any    `json:"client_metadata"`
}

// requestKind returns the x-codex-turn-metadata request_kind ("turn",
// "compaction", …) or "".
func (q *responsesRequest) requestKind() string {
	s, _ := q.ClientMetadata["x-codex-turn-metadata"].(string)
	var m struct {
		Kind string `json:"request_kind"`
	}
	_ = json.Unmarshal([]byte(s), &m)
	return m.Kind
}

func (q *responsesRequest) lastInputText() string {
	if len(q.Input) == 0 {
		return ""
	}
	var item struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	_ = json.Unmarshal(q.Input[len(q.Input)-1], &item)
	var b strings.Builder
	for _, c := range item.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// offered returns the type of the tool named name in the request ("" if absent).
func (q *responsesRequest) offered(name string) string {
	for _, t := range q.Tools {
		if t.Name == name {
			return t.Type
		}
	}
	return ""
}

func (r *Responses) serve(w http.ResponseWriter, req *http.Request) {
	body := readBody(req)
	path := req.URL.Path
	if req.Method != http.MethodPost || !strings.HasSuffix(path, "/responses") {
		r.Record(req.Method, path, KindOther, body)
		WriteJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"message": "fake responses: no route " + req.Method + " " + path, "type": "invalid_request_error"}})
		return
	}
	var q responsesRequest
	if err := json.Unmarshal(body, &q); err != nil {
		r.Record(req.Method, path, KindOther, body)
		WriteJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "fake responses: body is not JSON", "type": "invalid_request_error"}})
		return
	}
	kind := KindMain
	var turn Turn
	r.mu.Lock()
	switch {
	case q.requestKind() == "compaction" || strings.Contains(q.lastInputText(), ResponsesCompactionMarker):
		kind, turn = KindCompact, Turn{Text: r.Summary}
	case len(q.Tools) == 0:
		kind, turn = KindSide, Turn{Text: "Scripted session"}
	case r.next < len(r.turns):
		turn = r.turns[r.next]
		if !turn.RateLimited {
			r.next++ // a limit, once hit, stays
		}
	default:
		turn = Turn{Text: r.Fallback}
	}
	id := nextFakeID()
	r.mu.Unlock()
	r.Record(req.Method, path, kind, body)
	used := turn.UsedPercent
	if turn.RateLimited && kind == KindMain {
		used = 100
	}
	if used > 0 {
		// What Codex reads into token_count's rate_limits.
		w.Header().Set("x-codex-primary-used-percent", strconv.FormatFloat(used, 'f', 1, 64))
		w.Header().Set("x-codex-primary-window-minutes", "300")
		w.Header().Set("x-codex-primary-reset-at", strconv.Itoa(RateLimitReset))
		w.Header().Set("x-codex-primary-reset-after-seconds", "3600")
	}
	if turn.RateLimited && kind == KindMain {
		w.Header().Set("x-ratelimit-limit-requests", "100")
		w.Header().Set("x-ratelimit-remaining-requests", "0")
		w.Header().Set("x-ratelimit-reset-requests", "1h")
		w.Header().Set("retry-after", "3600")
		WriteJSON(w, http.StatusTooManyRequests, map[string]any{"error": map[string]any{
			"type": "usage_limit_reached", "code": "rate_limit_exceeded", "message": "You've hit your usage limit.",
			"plan_type": "plus", "resets_at": RateLimitReset, "resets_in_seconds": 3600}})
		return
	}
	r.stream(w, id, q, turn)
}

// items turns a scripted turn into Responses output items, choosing tool
// names and argument shapes from what the request offers.
func (r *Responses) items(id int, q responsesRequest, turn Turn) []map[string]any {
	var out []map[string]any
	if turn.Text != "" || len(turn.Calls) == 0 {
		out = append(out, map[string]any{
			"type": "message", "id": fmt.Sprintf("msg_%d", id), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": turn.Text, "annotations": []any{}}},
		})
	}
	for i, c := range turn.Calls {
		callID := fmt.Sprintf("call_%d_%d", id, i)
		switch c.Name {
		case "shell", "exec_command", "shell_command", "local_shell":
			out = append(out, responsesShellCall(q, callID, c.Args))
		case "apply_patch":
			patch, _ := c.Args["input"].(string)
			if patch == "" {
				patch, _ = c.Args["patch"].(string)
			}
			if q.offered("apply_patch") == "function" {
				args, _ := json.Marshal(map[string]any{"input": patch})
				out = append(out, map[string]any{"type": "function_call", "id": "fc_" + callID, "call_id": callID, "name": "apply_patch", "arguments": string(args), "status": "completed"})
			} else {
				out = append(out, map[string]any{"type": "custom_tool_call", "id": "ctc_" + callID, "call_id": callID, "name": "apply_patch", "input": patch, "status": "completed"})
			}
		default:
			args, _ := json.Marshal(orEmpty(c.Args))
			out = append(out, map[string]any{"type": "function_call", "id": "fc_" + callID, "call_id": callID, "name": c.Name, "arguments": string(args), "status": "completed"})
		}
	}
	return out
}

// shellCall builds a shell tool call for whichever shell tool the request
// offers: exec_command {cmd} (Codex 0.169 default), shell_command {command:
// string} or shell {command: argv}. Args may give "cmd" or "command" (string
// or argv; ["bash","-lc",X] is unwrapped to X).
func responsesShellCall(q responsesRequest, callID string, a map[string]any) map[string]any {
	cmd, _ := a["cmd"].(string)
	if cmd == "" {
		switch v := a["command"].(type) {
		case string:
			cmd = v
		case []any:
			var parts []string
			for _, p := range v {
				parts = append(parts, fmt.Sprint(p))
			}
			if len(parts) == 3 && (parts[1] == "-lc" || parts[1] == "-c") {
				cmd = parts[2]
			} else {
				cmd = strings.Join(parts, " ")
			}
		}
	}
	name, args := "exec_command", map[string]any{"cmd": cmd, "yield_time_ms": 10000}
	switch {
	case q.offered("exec_command") != "":
	case q.offered("shell_command") != "":
		name, args = "shell_command", map[string]any{"command": cmd}
	case q.offered("shell") != "":
		name, args = "shell", map[string]any{"command": []string{"bash", "-lc", cmd}}
	}
	if wd, ok := a["workdir"]; ok {
		args["workdir"] = wd
	}
	js, _ := json.Marshal(args)
	return map[string]any{"type": "function_call", "id": "fc_" + callID, "call_id": callID, "name": name, "arguments": string(js), "status": "completed"}
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// stream plays the turn as response.created, per item output_item.added /
// output_text.delta / output_item.done, then response.completed with usage.
func (r *Responses) stream(w http.ResponseWriter, id int, q responsesRequest, turn Turn) {
	s := NewSSE(w)
	respID := fmt.Sprintf("resp_%d", id)
	model := q.Model
	if model == "" {
		model = "gpt-5.5"
	}
	s.Event("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": respID, "object": "response", "status": "in_progress", "model": model, "output": []any{}}})
	items := r.items(id, q, turn)
	for i, it := range items {
		added := map[string]any{}
		for k, v := range it {
			added[k] = v
		}
		added["status"] = "in_progress"
		if it["type"] == "message" {
			added["content"] = []any{}
		}
		s.Event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": i, "item": added})
		if it["type"] == "message" {
			text := it["content"].([]any)[0].(map[string]any)["text"].(string)
			for _, chunk := range splitChunks(text, 3) {
				s.Event("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": it["id"], "output_index": i, "content_index": 0, "delta": chunk})
			}
		}
		s.Event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": i, "item": it})
	}
	in := turn.InputTokens
	if in == 0 {
		in = 1200
	}
	out := 40
	s.Event("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
		"id": respID, "object": "response", "status": "completed", "model": model, "output": items,
		"usage": map[string]any{
			"input_tokens": in, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": out, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": in + out,
		},
	}})
}
