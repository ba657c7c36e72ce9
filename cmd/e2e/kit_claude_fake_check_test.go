package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

type ccSSEEvent struct {
	Name string
	Data map[string]any
}

// ccParseSSE splits an event stream into events with JSON data.
func ccParseSSE(t *testing.T, body []byte) []ccSSEEvent {
	t.Helper()
	var out []ccSSEEvent
	var name string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("data is not JSON: %q", line)
			}
			out = append(out, ccSSEEvent{name, d})
			name = ""
		}
	}
	return out
}

func ccPost(t *testing.T, url, path, body string) []byte {
	t.Helper()
	resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return b.Bytes()
}

const ccTools = `"tools":[{"name":"Bash","input_schema":{}}]`

func TestAnthropicStream(t *testing.T) {
	a := NewAnthropic(t, []Turn{
		{Text: "Running it.", Calls: []Call{{Name: "Bash", Args: map[string]any{"command": "ls tests/", "description": "list"}}}, InputTokens: 90000},
		{Text: "Done. Next I will add the retry test."},
	})
	body := ccPost(t, a.URL(), "/v1/messages", `{"model":"claude-x","stream":true,`+ccTools+`,"messages":[{"role":"user","content":"go"}]}`)
	ev := ccParseSSE(t, body)
	var names []string
	for _, e := range ev {
		names = append(names, e.Name)
	}
	want := "message_start ping content_block_start content_block_delta content_block_delta content_block_delta content_block_stop content_block_start content_block_delta content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	var text, js strings.Builder
	for _, e := range ev {
		if d, ok := e.Data["delta"].(map[string]any); ok {
			if s, ok := d["text"].(string); ok {
				text.WriteString(s)
			}
			if s, ok := d["partial_json"].(string); ok {
				js.WriteString(s)
			}
		}
	}
	if text.String() != "Running it." {
		t.Errorf("text = %q", text.String())
	}
	var input map[string]any
	if err := json.Unmarshal([]byte(js.String()), &input); err != nil || input["command"] != "ls tests/" {
		t.Errorf("tool input = %q (%v)", js.String(), err)
	}
	md := ev[len(ev)-2].Data
	if md["delta"].(map[string]any)["stop_reason"] != "tool_use" || md["usage"].(map[string]any)["input_tokens"] != float64(90000) {
		t.Errorf("message_delta = %v", md)
	}
	if ev[0].Data["message"].(map[string]any)["model"] != "claude-x" {
		t.Errorf("message_start does not echo the model: %v", ev[0].Data)
	}
}

func TestAnthropicRouting(t *testing.T) {
	a := NewAnthropic(t, []Turn{{Text: "first"}, {Text: "second"}})
	post := func(body string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(ccPost(t, a.URL(), "/v1/messages", body), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	text := func(m map[string]any) string {
		return m["content"].([]any)[0].(map[string]any)["text"].(string)
	}
	for i, tc := range []struct {
		body, wantText, wantKind string
	}{
		{`{"stream":false,` + ccTools + `,"messages":[{"role":"user","content":"hi"}]}`, "first", KindMain},
		{`{"stream":false,"messages":[{"role":"user","content":"make a title"}]}`, "Scripted session", KindSide},
		{`{"stream":false,` + ccTools + `,"messages":[{"role":"user","content":[{"type":"text","text":"` + AnthropicCompactionMarker + `."}]}]}`, a.Summary, KindCompact},
		{`{"stream":false,` + ccTools + `,"messages":[{"role":"user","content":"again"}]}`, "second", KindMain},
		{`{"stream":false,` + ccTools + `,"messages":[{"role":"user","content":"more"}]}`, "OK.", KindMain},
	} {
		m := post(tc.body)
		if got := text(m); got != tc.wantText {
			t.Errorf("%d: text = %q, want %q", i, got, tc.wantText)
		}
		if m["stop_reason"] != "end_turn" {
			t.Errorf("%d: stop_reason = %v", i, m["stop_reason"])
		}
		if all := a.All(); all[len(all)-1].Kind != tc.wantKind {
			t.Errorf("%d: kind = %s, want %s", i, all[len(all)-1].Kind, tc.wantKind)
		}
	}
	if a.Played() != 2 || len(a.MainRequests()) != 3 || !a.Contains("make a title") || a.FirstRequestContaining("again") == nil {
		t.Errorf("played %d, main %d", a.Played(), len(a.MainRequests()))
	}
	if b := ccPost(t, a.URL(), "/v1/messages/count_tokens", `{}`); !strings.Contains(string(b), "input_tokens") {
		t.Errorf("count_tokens = %s", b)
	}
}

func FuzzAnthropicServe(f *testing.F) {
	f.Add([]byte(`{"stream":true,"tools":[{}],"messages":[{"role":"user","content":[{"type":"tool_result","content":[{"type":"text","text":"x"}]}]}]}`))
	f.Add([]byte(`{"messages":[{"content":null}]}`))
	f.Add([]byte(`not json`))
	a := &Anthropic{turns: []Turn{{Calls: []Call{{Name: "Bash"}}}}, Summary: "s", Fallback: "f"}
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest(http.MethodPost, "/v1/messages", bytes.NewReader(body))
		w := httptest.NewRecorder()
		a.serve(w, req)
		if w.Code != http.StatusOK && w.Code != http.StatusBadRequest {
			t.Fatalf("status %d", w.Code)
		}
	})
}
