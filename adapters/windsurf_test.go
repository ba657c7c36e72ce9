package adapters_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryover/carryover/adapters"
)

func windsurfHooks(t *testing.T) []adapters.Hook {
	t.Helper()
	f, err := os.Open(filepath.Join(fixtureDir, "windsurf", "hooks.payloads"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var hs []adapters.Hook
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec struct {
			Event   string          `json:"event"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		h, err := adapters.Windsurf.ParseHook(rec.Event, rec.Payload, adapters.Env{})
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	return hs
}

func TestWindsurfHookRows(t *testing.T) {
	hs := windsurfHooks(t)
	got := map[string][]adapters.Row{}
	for _, h := range hs {
		if h.SessionID != "3f0d9c1e-7a52-4b8e-9d61-2c4a8b7e5f10" {
			t.Errorf("%s: session %q", h.Event, h.SessionID)
		}
		got[h.Event] = h.Rows
	}
	tests := []struct {
		event string
		kinds []adapters.Kind
		check func(rs []adapters.Row) bool
	}{
		{"pre_user_prompt", []adapters.Kind{adapters.KindPrompt}, func(rs []adapters.Row) bool {
			return rs[0].Text == "can you run the echo hello command" && !rs[0].Time.IsZero()
		}},
		{"pre_read_code", nil, nil},
		{"post_read_code", nil, nil},
		{"pre_write_code", nil, nil},
		{"post_write_code", []adapters.Kind{adapters.KindToolCall, adapters.KindToolResult}, func(rs []adapters.Row) bool {
			return rs[0].FilePath == "/Users/yourname/project/file.py" && strings.Contains(rs[0].Text, "import sys") && rs[0].CallID == rs[1].CallID
		}},
		{"pre_run_command", nil, nil},
		{"post_run_command", []adapters.Kind{adapters.KindToolCall, adapters.KindToolResult}, func(rs []adapters.Row) bool {
			return rs[0].Command == "npm install package-name" && rs[1].ExitCode == nil && rs[0].CallID == rs[1].CallID
		}},
		{"post_mcp_tool_use", []adapters.Kind{adapters.KindToolCall, adapters.KindToolResult}, func(rs []adapters.Row) bool {
			return rs[0].ToolName == "mcp:github/list_commits"
		}},
		{"post_cascade_response", []adapters.Kind{adapters.KindText}, func(rs []adapters.Row) bool {
			return strings.Contains(rs[0].Text, "Planner Response")
		}},
		{"post_cascade_response_with_transcript", nil, nil},
		{"post_setup_worktree", nil, nil},
	}
	for _, tc := range tests {
		rs := got[tc.event]
		if len(rs) != len(tc.kinds) {
			t.Errorf("%s: %d rows, want %d", tc.event, len(rs), len(tc.kinds))
			continue
		}
		for i, k := range tc.kinds {
			if rs[i].Kind != k || rs[i].Key == "" {
				t.Errorf("%s row %d: %+v", tc.event, i, rs[i])
			}
		}
		if tc.check != nil && !tc.check(rs) {
			t.Errorf("%s: %+v", tc.event, rs)
		}
	}
	if hs[len(hs)-2].TranscriptPath != "/Users/yourname/.windsurf/transcripts/3f0d9c1e-7a52-4b8e-9d61-2c4a8b7e5f10.jsonl" {
		t.Errorf("transcript path %q", hs[len(hs)-2].TranscriptPath)
	}
	again := windsurfHooks(t)
	for i := range hs {
		if !equalJSON(hs[i].Rows, again[i].Rows) {
			t.Errorf("%s: keys not stable", hs[i].Event)
		}
	}
}

func TestWindsurfQuirks(t *testing.T) {
	lp := adapters.Windsurf.(adapters.LineParser)
	hook := func(action string, ti string) []adapters.Row {
		b := `{"agent_action_name":"` + action + `","trajectory_id":"t1","execution_id":"e1","timestamp":"2026-09-03T08:15:00Z","tool_info":` + ti + `}`
		h, err := adapters.Windsurf.ParseHook(action, []byte(b), adapters.Env{})
		if err != nil {
			t.Fatal(err)
		}
		return h.Rows
	}
	// The prompt from the hook and from the transcript share a key.
	p := hook("pre_user_prompt", `{"user_prompt":"Add a --dry-run flag to the sync command"}`)
	tr, _ := lp.ParseLine([]byte(`{"status":"done","type":"user_input","user_input":{"user_response":"Add a --dry-run flag to the sync command"}}`), 0)
	if len(p) != 1 || len(tr) != 1 || p[0].Key != tr[0].Key {
		t.Errorf("prompt keys differ: %+v %+v", p, tr)
	}
	// Two commands in one turn get two keys; a failing exit code (should a
	// build send one) is an error.
	a := hook("post_run_command", `{"command_line":"make","cwd":"/p"}`)
	b := hook("post_run_command", `{"command_line":"make test","cwd":"/p","exit_code":2}`)
	if a[0].Key == b[0].Key || b[1].Kind != adapters.KindError || *b[1].ExitCode != 2 {
		t.Errorf("commands: %+v %+v", a, b)
	}
	// carryover's own handoff is a receipt, not a prompt.
	inj := hook("pre_user_prompt", `{"user_prompt":"# [CARRYOVER] Last updated 2026-09-03 08:00 from claude\nrest"}`)
	if inj[0].Kind != adapters.KindInjection || inj[0].Text != "# [CARRYOVER] Last updated 2026-09-03 08:00 from claude" {
		t.Errorf("injection: %+v", inj)
	}
	// Pending steps are superseded; unknown types are skipped; timestamps are read.
	for _, l := range []string{
		`{"status":"pending","type":"planner_response","planner_response":{"response":"draft"}}`,
		`{"status":"done","type":"grep_search","grep_search":{"query":"x"}}`,
		`{"status":"done","type":"planner_response"}`,
		`not json`,
	} {
		if rs, err := lp.ParseLine([]byte(l), 7); len(rs) != 0 || err != nil {
			t.Errorf("%s: %+v %v", l, rs, err)
		}
	}
	rs, _ := lp.ParseLine([]byte(`{"status":"done","type":"planner_response","timestamp":1788416100000,"planner_response":{"response":"ok"}}`), 0)
	if len(rs) != 1 || rs[0].Time.UnixMilli() != 1788416100000 {
		t.Errorf("epoch timestamp: %+v", rs)
	}
	// Default transcript location when the hook gives none.
	ts := lp.Transcripts(adapters.Hook{SessionID: "t1"}, adapters.Env{Home: "/h"})
	if len(ts) != 1 || ts[0].Path != filepath.Join("/h", ".windsurf", "transcripts", "t1.jsonl") || !ts[0].MaybeMissing {
		t.Errorf("transcripts: %+v", ts)
	}
	if ts := lp.Transcripts(adapters.Hook{SessionID: "../x"}, adapters.Env{Home: "/h"}); len(ts) != 0 {
		t.Errorf("unsafe id: %+v", ts)
	}
}
