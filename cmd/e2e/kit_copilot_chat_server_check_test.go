package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestChatServer(t *testing.T) {
	srv := NewChatServer(t, []Turn{
		{Text: "Creating it.", InputTokens: 5151, Calls: []Call{{Name: "create", Args: map[string]any{"path": "/p/a.txt", "file_text": "x"}}}},
		{Text: "All done."},
	})
	const tools = `"tools":[{"type":"function","function":{"name":"create"}}]`
	tests := []struct {
		name, method, path, body string
		want                     []string
	}{
		{"models", "GET", "/v1/models", "", []string{`"id":"gpt-4.1"`}},
		{"main turn 1 streamed", "POST", "/v1/chat/completions",
			`{"model":"gpt-4.1","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"MAIN-1"}],` + tools + `}`,
			[]string{`"delta":{"content":"Creating it.","role":"assistant"}`, `"name":"create"`, `"arguments":"{\"file_text\":\"x\",\"path\":\"/p/a.txt\"}"`,
				`"finish_reason":"tool_calls"`, `"prompt_tokens":5151`, "data: [DONE]"}},
		{"compaction side request", "POST", "/v1/chat/completions",
			`{"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"Please create a detailed summary of the conversation so far."}]}],` + tools + `}`,
			[]string{"Summary of the conversation", `"finish_reason":"stop"`}},
		{"no tools side request", "POST", "/chat/completions",
			`{"messages":[{"role":"user","content":"title please"}]}`,
			[]string{`"object":"chat.completion"`, "Summary of the conversation"}},
		{"main turn 2 unary", "POST", "/v1/chat/completions",
			`{"messages":[{"role":"user","content":"go"}],` + tools + `}`,
			[]string{`"content":"All done."`, `"finish_reason":"stop"`}},
		{"script exhausted", "POST", "/v1/chat/completions",
			`{"stream":true,"messages":[],` + tools + `}`,
			[]string{`"content":"Done."`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, srv.URL()+tc.path, strings.NewReader(tc.body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("response lacks %s:\n%s", w, b)
				}
			}
		})
	}
	if n := srv.TurnsUsed(); n != 3 {
		t.Errorf("TurnsUsed = %d, want 3", n)
	}
	if n := len(srv.MainRequests()); n != 3 {
		t.Errorf("MainRequests = %d, want 3", n)
	}
	if !srv.Contains("MAIN-1") || srv.Contains("NOT-SENT") {
		t.Errorf("Contains is wrong")
	}
}
