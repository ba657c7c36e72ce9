package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestResponsesShellCall(t *testing.T) {
	for _, tc := range []struct {
		name, tools string
		args        map[string]any
		wantName    string
		wantArgs    string
	}{
		{"exec_command from string", `[{"type":"function","name":"exec_command"}]`, map[string]any{"command": "ls tests/"}, "exec_command", `{"cmd":"ls tests/","yield_time_ms":10000}`},
		{"exec_command from argv", `[{"type":"function","name":"exec_command"}]`, map[string]any{"command": []any{"bash", "-lc", "echo hi"}}, "exec_command", `{"cmd":"echo hi","yield_time_ms":10000}`},
		{"exec_command from cmd", `[{"type":"function","name":"exec_command"}]`, map[string]any{"cmd": "pwd", "workdir": "/x"}, "exec_command", `{"cmd":"pwd","workdir":"/x","yield_time_ms":10000}`},
		{"shell_command", `[{"type":"function","name":"shell_command"}]`, map[string]any{"command": "pwd"}, "shell_command", `{"command":"pwd"}`},
		{"shell argv", `[{"type":"function","name":"shell"}]`, map[string]any{"command": "pwd"}, "shell", `{"command":["bash","-lc","pwd"]}`},
	} {
		var q responsesRequest
		if err := json.Unmarshal([]byte(`{"tools":`+tc.tools+`}`), &q); err != nil {
			t.Fatal(err)
		}
		it := responsesShellCall(q, "call_1", tc.args)
		if it["name"] != tc.wantName || it["arguments"] != tc.wantArgs || it["type"] != "function_call" || it["call_id"] != "call_1" {
			t.Errorf("%s: got %v", tc.name, it)
		}
	}
}

func TestResponsesApplyPatch(t *testing.T) {
	r := &Responses{}
	patch := "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n"
	turn := Turn{Calls: []Call{{Name: "apply_patch", Args: map[string]any{"input": patch}}}}
	for _, tc := range []struct{ tools, wantType string }{
		{`[{"type":"custom","name":"apply_patch"}]`, "custom_tool_call"},
		{`[{"type":"function","name":"apply_patch"}]`, "function_call"},
	} {
		var q responsesRequest
		_ = json.Unmarshal([]byte(`{"tools":`+tc.tools+`}`), &q)
		items := r.items(1, q, turn)
		if len(items) != 1 || items[0]["type"] != tc.wantType {
			t.Fatalf("%s: %v", tc.wantType, items)
		}
		got, _ := items[0]["input"].(string)
		if tc.wantType == "function_call" {
			var a map[string]string
			_ = json.Unmarshal([]byte(items[0]["arguments"].(string)), &a)
			got = a["input"]
		}
		if got != patch {
			t.Errorf("%s: patch = %q", tc.wantType, got)
		}
	}
}

func TestResponsesRouting(t *testing.T) {
	r := NewResponses(t, []Turn{
		{Text: "Checking.", Calls: []Call{{Name: "shell", Args: map[string]any{"command": "ls"}}}, InputTokens: 30000},
		{Text: "Done."},
	})
	tools := `"tools":[{"type":"function","name":"exec_command"},{"type":"custom","name":"apply_patch"}]`
	compactMeta := `"client_metadata":{"x-codex-turn-metadata":"{\"request_kind\":\"compaction\"}"}`
	for i, tc := range []struct{ body, wantKind, wantText string }{
		{`{"model":"gpt-5.5",` + tools + `,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}]}`, KindMain, "Checking."},
		{`{` + tools + `,` + compactMeta + `,"input":[]}`, KindCompact, r.Summary},
		{`{` + tools + `,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"You are performing a ` + ResponsesCompactionMarker + `."}]}]}`, KindCompact, r.Summary},
		{`{"input":[]}`, KindSide, "Scripted session"},
		{`{` + tools + `,"input":[]}`, KindMain, "Done."},
		{`{` + tools + `,"input":[]}`, KindMain, "OK."},
	} {
		ev := ccParseSSE(t, ccPost(t, r.URL(), "/v1/responses", tc.body))
		if len(ev) < 2 || ev[0].Name != "response.created" || ev[len(ev)-1].Name != "response.completed" {
			t.Fatalf("%d: events %v", i, ev)
		}
		var text strings.Builder
		for _, e := range ev {
			if e.Name == "response.output_text.delta" {
				text.WriteString(e.Data["delta"].(string))
			}
		}
		if text.String() != tc.wantText {
			t.Errorf("%d: text %q, want %q", i, text.String(), tc.wantText)
		}
		if all := r.All(); all[len(all)-1].Kind != tc.wantKind {
			t.Errorf("%d: kind %s, want %s", i, all[len(all)-1].Kind, tc.wantKind)
		}
		if i == 0 {
			usage := ev[len(ev)-1].Data["response"].(map[string]any)["usage"].(map[string]any)
			if usage["input_tokens"] != float64(30000) || usage["total_tokens"] != float64(30040) {
				t.Errorf("usage = %v", usage)
			}
			var types []string
			for _, e := range ev {
				if e.Name == "response.output_item.done" {
					types = append(types, e.Data["item"].(map[string]any)["type"].(string))
				}
			}
			if strings.Join(types, ",") != "message,function_call" {
				t.Errorf("items = %v", types)
			}
		}
	}
	if r.Played() != 2 {
		t.Errorf("played %d", r.Played())
	}
	resp, err := http.Get(r.URL() + "/v1/models")
	if err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /v1/models: %v %v", resp, err)
	}
	resp.Body.Close()
}

func FuzzResponsesServe(f *testing.F) {
	f.Add([]byte(`{"tools":[{"name":"exec_command"}],"input":[{"content":[{"text":"x"}]}],"client_metadata":{"x-codex-turn-metadata":"{}"}}`))
	f.Add([]byte(`{"input":[1,2],"client_metadata":{"x-codex-turn-metadata":5}}`))
	f.Add([]byte(`[]`))
	r := &Responses{turns: []Turn{{Calls: []Call{{Name: "shell", Args: map[string]any{"command": []any{1, nil}}}}}}, Summary: "s", Fallback: "f"}
	f.Fuzz(func(t *testing.T, body []byte) {
		w := httptest.NewRecorder()
		r.serve(w, httptest.NewRequest(http.MethodPost, "/v1/responses", bytes.NewReader(body)))
		if w.Code != http.StatusOK && w.Code != http.StatusBadRequest {
			t.Fatalf("status %d", w.Code)
		}
	})
}
