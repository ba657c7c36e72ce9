package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func geminiPost(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestGeminiServer(t *testing.T) {
	srv := NewGeminiServer(t, []Turn{
		{Text: "Writing it.", InputTokens: 4242, Calls: []Call{{Name: "write_file", Args: map[string]any{"file_path": "/p/a.txt", "content": "x"}}}},
		{Text: "Done here."},
	})
	const tools = `"tools":[{"functionDeclarations":[{"name":"write_file"}]}]`
	tests := []struct {
		name, path, body string
		want             []string // substrings of the response
	}{
		{"router side request", "/v1beta/models/lite:generateContent",
			`{"contents":[{"role":"user","parts":[{"text":"MAIN-1"}]}],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"OBJECT","properties":{"complexity_reasoning":{"type":"STRING"},"complexity_score":{"type":"INTEGER"}}}}}`,
			[]string{`"complexity_score\":10`, `"candidates"`}},
		{"main turn 1 streamed", "/v1beta/models/flash:streamGenerateContent?alt=sse",
			`{"contents":[{"role":"user","parts":[{"text":"MAIN-1"}]}],` + tools + `}`,
			[]string{"data: {", `"functionCall":{"args":{"content":"x","file_path":"/p/a.txt"}`, `"promptTokenCount":4242`, `"text":"Writing it."`}},
		{"next speaker side request", "/v1beta/models/flash:generateContent",
			`{"contents":[],"generationConfig":{"responseJsonSchema":{"type":"object","properties":{"reasoning":{"type":"string"},"next_speaker":{"type":"string","enum":["user","model"]}}}}}`,
			[]string{`next_speaker\":\"user\"`}},
		{"summary side request", "/v1beta/models/flash:generateContent",
			`{"contents":[{"role":"user","parts":[{"text":"summarise"}]}]}`,
			[]string{"state_snapshot"}},
		{"main turn 2 unary", "/v1beta/models/flash:generateContent",
			`{"contents":[],` + tools + `}`,
			[]string{`"text":"Done here."`, `"finishReason":"STOP"`}},
		{"script exhausted", "/v1beta/models/flash:streamGenerateContent?alt=sse",
			`{"contents":[],` + tools + `}`,
			[]string{`"text":"Done."`}},
		{"count tokens", "/v1beta/models/flash:countTokens", `{"contents":[]}`, []string{`"totalTokens"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, got := geminiPost(t, srv.URL()+tc.path, tc.body)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("response lacks %s:\n%s", w, got)
				}
			}
		})
	}
	if n := srv.TurnsUsed(); n != 3 {
		t.Errorf("TurnsUsed = %d, want 3", n)
	}
	if n := len(srv.Requests()); n != len(tests) {
		t.Errorf("Requests = %d, want %d", n, len(tests))
	}
	if !srv.Contains("MAIN-1") || srv.Contains("NOT-SENT") {
		t.Errorf("Contains is wrong")
	}
	if n := len(srv.MainRequests()); n != 3 {
		t.Errorf("MainRequests = %d, want 3", n)
	}
	if code, _ := geminiPost(t, srv.URL()+"/v1beta/models/flash:embedContent", `{}`); code != http.StatusNotFound {
		t.Errorf("unknown method: status %d, want 404", code)
	}
}

func FuzzGeminiSchemaValue(f *testing.F) {
	f.Add(`{"type":"OBJECT","properties":{"next_speaker":{"type":"STRING"},"n":{"type":"INTEGER"}}}`)
	f.Add(`{"type":"array","items":{"type":"string"}}`)
	f.Add(`{"enum":[1,2]}`)
	f.Fuzz(func(t *testing.T, schema string) {
		if _, err := json.Marshal(geminiSchemaValue(json.RawMessage(schema), "")); err != nil {
			t.Fatal(err)
		}
	})
}
