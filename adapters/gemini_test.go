package adapters_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryover/carryover/adapters"
)

func geminiLP(t testing.TB) adapters.LineParser {
	t.Helper()
	lp, ok := adapters.Gemini.(adapters.LineParser)
	if !ok {
		t.Fatal("gemini adapter is not a LineParser")
	}
	return lp
}

const geminiHeader = "# [CARRYOVER] Last updated 2026-11-21T08:00:00Z from codex"

// geminiUserLine is a live user record with one text part.
func geminiUserLine(id, text string) string {
	b, _ := json.Marshal(map[string]any{"id": id, "timestamp": "2026-11-21T08:46:11.533Z", "type": "user",
		"content": []map[string]string{{"text": text}}})
	return string(b)
}

// geminiFinal folds rows the way the ledger does: the last row of a key
// wins, in first-seen order.
func geminiFinal(rows []adapters.Row) []adapters.Row {
	idx := map[string]int{}
	var out []adapters.Row
	for _, r := range rows {
		if i, ok := idx[r.Key]; ok {
			out[i] = r
			continue
		}
		idx[r.Key] = len(out)
		out = append(out, r)
	}
	return out
}

func TestGeminiParseLine(t *testing.T) {
	lp := geminiLP(t)
	shellOut := func(code string) string {
		return `{"id":"m1","timestamp":"2026-11-21T08:46:13.688Z","type":"user","content":[{"functionResponse":{"id":"run_1","name":"run_shell_command","response":{"output":"<untrusted_context>\nOutput: ERROR: not found\nExit Code: ` + code + `\nProcess Group PGID: 24006\n</untrusted_context>"}}}]}`
	}
	type want struct {
		kind                 adapters.Kind
		key, text, file, cmd string
		exit                 int
	}
	const none = -99
	cases := []struct {
		name string
		line string
		want []want
	}{
		{"plain prompt", geminiUserLine("u1", "Add backoff"), []want{{kind: adapters.KindPrompt, key: "u1", text: "Add backoff", exit: none}}},
		{"headless injection is prepended to the prompt",
			geminiUserLine("u2", "<hook_context>"+geminiHeader+"\n\n## Task\nx</hook_context>\n\nAdd exponential backoff"),
			[]want{
				{kind: adapters.KindInjection, key: "u2#injection", text: geminiHeader, exit: none},
				{kind: adapters.KindPrompt, key: "u2", text: "Add exponential backoff", exit: none},
			}},
		{"interactive injection is its own record",
			geminiUserLine("u3", "<hook_context>"+geminiHeader+"\nmore</hook_context>"),
			[]want{{kind: adapters.KindInjection, key: "u3#injection", text: geminiHeader, exit: none}}},
		{"someone else's hook context is stripped, prompt kept",
			geminiUserLine("u4", "<hook_context>CARRYOVER-HANDOFF: other tool</hook_context>\n\nContinue"),
			[]want{{kind: adapters.KindPrompt, key: "u4", text: "Continue", exit: none}}},
		{"session context is not a prompt", geminiUserLine("d04923d38bb0f6017037e74183378ef4", "<session_context>\nThis is the Gemini CLI.\n<loaded_context>GEMINI.md</loaded_context>\n</session_context>"), nil},
		{"shell exit 4 recorded as success is a failure", shellOut("4"),
			[]want{{kind: adapters.KindError, key: "result:run_1", text: "ERROR: not found\nExit Code: 4\nProcess Group PGID: 24006", exit: 4}}},
		{"shell exit 0", shellOut("0"), []want{{kind: adapters.KindToolResult, key: "result:run_1", exit: 0}}},
		{"tool error response",
			`{"id":"m2","timestamp":"2026-11-21T08:46:13.172Z","type":"user","content":[{"functionResponse":{"id":"replace_1","name":"replace","response":{"error":"Could not find an exact match"}}}]}`,
			[]want{{kind: adapters.KindError, key: "result:replace_1", text: "Could not find an exact match", exit: none}}},
		{"model text with tokens",
			`{"id":"g1","timestamp":"2026-11-21T08:46:12.106Z","type":"gemini","content":"I'll add a helper.","thoughts":[{"subject":"s","description":"d"}],"tokens":{"input":1200,"output":40,"cached":0,"thoughts":12,"tool":0,"total":1252},"model":"gemini-3.8-flash"}`,
			[]want{{kind: adapters.KindText, key: "g1", text: "I'll add a helper.", exit: none}, {kind: adapters.KindUsage, key: "usage:g1", exit: none}}},
		{"tool calls with embedded results",
			`{"id":"g2","timestamp":"2026-11-21T08:46:12.106Z","type":"gemini","content":"","toolCalls":[` +
				`{"id":"w1","name":"write_file","args":{"file_path":"/p/backoff.py","content":"x = 1  # TODO: tune\n"},"result":[{"functionResponse":{"id":"w1","name":"write_file","response":{"output":"Successfully created"}}}],"status":"success","timestamp":"2026-11-21T08:46:12.263Z"},` +
				`{"id":"r1","name":"replace","args":{"file_path":"/p/retry.py","old_string":"a","new_string":"b"},"result":[{"functionResponse":{"id":"r1","name":"replace","response":{"error":"no match"}}}],"status":"error"},` +
				`{"id":"s1","name":"run_shell_command","args":{"command":"./run_tests.sh","description":"Run tests"},"result":[{"functionResponse":{"id":"s1","name":"run_shell_command","response":{"output":"Output: fail\nExit Code: 2"}}}],"status":"success"}]}`,
			[]want{
				{kind: adapters.KindToolCall, key: "call:w1", file: "/p/backoff.py", text: "x = 1  # TODO: tune\n", exit: none},
				{kind: adapters.KindToolResult, key: "result:w1", text: "Successfully created", exit: none},
				{kind: adapters.KindToolCall, key: "call:r1", file: "/p/retry.py", text: "b", exit: none},
				{kind: adapters.KindError, key: "result:r1", text: "no match", exit: none},
				{kind: adapters.KindToolCall, key: "call:s1", cmd: "./run_tests.sh", text: "Run tests", exit: none},
				{kind: adapters.KindError, key: "result:s1", exit: 2},
			}},
		{"cancelled call without a result",
			`{"id":"g3","timestamp":"2026-11-21T08:46:12.106Z","type":"gemini","content":"","toolCalls":[{"id":"c1","name":"write_file","args":{"file_path":"/p/a"},"status":"cancelled"}]}`,
			[]want{{kind: adapters.KindToolCall, key: "call:c1", file: "/p/a", exit: none}, {kind: adapters.KindInterrupted, key: "result:c1", text: "tool call cancelled", exit: none}}},
		{"a call the user denied, and one interrupted while it ran",
			`{"id":"g4","timestamp":"2026-11-21T08:46:13.106Z","type":"gemini","content":"","toolCalls":[` +
				`{"id":"d1","name":"run_shell_command","args":{"command":"rm -rf build"},"status":"cancelled","result":[{"functionResponse":{"id":"d1","name":"run_shell_command","response":{"error":"[Operation Cancelled] Reason: User denied execution."}}}]},` +
				`{"id":"d2","name":"run_shell_command","args":{"command":"make all"},"status":"cancelled","result":[{"functionResponse":{"id":"d2","name":"run_shell_command","response":{"error":"[Operation Cancelled] Reason: User cancelled tool execution."}}}]}]}`,
			[]want{{kind: adapters.KindToolCall, key: "call:d1", cmd: "rm -rf build", exit: none}, {kind: adapters.KindRefused, key: "result:d1", text: "[Operation Cancelled] Reason: User denied execution.", exit: none},
				{kind: adapters.KindToolCall, key: "call:d2", cmd: "make all", exit: none}, {kind: adapters.KindInterrupted, key: "result:d2", text: "[Operation Cancelled] Reason: User cancelled tool execution.", exit: none}}},
		{"rewrite shape: Part[] with thought and functionCall",
			`{"$set":{"messages":[{"id":"g2","timestamp":"2026-11-21T08:46:38.697Z","type":"gemini","content":[{"text":"**Plan** think","thought":true},{"text":"I'll add a helper."},{"functionCall":{"id":"w1","name":"write_file","args":{"file_path":"/p/backoff.py","content":"x = 1  # TODO: tune\n"}}}]},` +
				`{"id":"g2_response","timestamp":"2026-11-21T08:46:38.697Z","type":"user","content":[{"functionResponse":{"id":"w1","name":"write_file","response":{"output":"Successfully created"}}}]}]}}`,
			[]want{
				{kind: adapters.KindText, key: "g2", text: "I'll add a helper.", exit: none},
				{kind: adapters.KindToolCall, key: "call:w1", file: "/p/backoff.py", text: "x = 1  # TODO: tune\n", exit: none},
				{kind: adapters.KindToolResult, key: "result:w1", text: "Successfully created", exit: none},
			}},
		{"compress rewrite: summary is a compaction, ack dropped",
			`{"$set":{"messages":[{"id":"d04923d38bb0f6017037e74183378ef4","type":"user","content":[{"text":"<session_context>x</session_context>"}]},` +
				`{"id":"s1","timestamp":"2026-11-21T08:51:18.380Z","type":"user","content":[{"text":"<state_snapshot>goal: add backoff</state_snapshot>"}]},` +
				`{"id":"s2","timestamp":"2026-11-21T08:51:18.380Z","type":"gemini","content":[{"text":"Got it. Thanks for the additional context!"}]},` +
				`{"id":"k1","timestamp":"2026-11-21T08:51:18.380Z","type":"user","content":[{"text":"kept prompt"}]}]}}`,
			[]want{
				{kind: adapters.KindCompaction, key: "s1", text: "<state_snapshot>goal: add backoff</state_snapshot>", exit: none},
				{kind: adapters.KindPrompt, key: "k1", text: "kept prompt", exit: none},
			}},
		{"API error record", `{"id":"e1","timestamp":"2026-11-21T08:51:27.751Z","type":"error","content":"[API Error: 400]"}`,
			[]want{{kind: adapters.KindError, key: "e1", text: "[API Error: 400]", exit: none}}},
		{"info record", `{"id":"i1","timestamp":"2026-11-21T08:51:27.751Z","type":"info","content":"This request failed."}`, nil},
		{"header", `{"sessionId":"60778a0a","projectHash":"76","startTime":"2026-11-21T08:46:11.316Z","kind":"main"}`, nil},
		{"lastUpdated patch", `{"$set":{"lastUpdated":"2026-11-21T08:46:11.533Z"}}`, nil},
		{"summary patch", `{"$set":{"summary":"OK.","memoryScratchpad":{"version":1,"touchedPaths":["messages"]}}}`, nil},
		{"rewind: the message u1 and the rest abandoned", `{"$rewindTo":"u1"}`, []want{{kind: adapters.KindRewind, key: "rewind:7", text: "u1", exit: none}}},
		{"not json", `{"id":"x","content":`, nil},
		{"content of the wrong type", `{"id":"x","type":"gemini","content":42,"toolCalls":"no"}`, nil},
		{"odd toolCalls and tokens do not lose the text", `{"id":"x","type":"gemini","content":"hi","toolCalls":"no","tokens":"many"}`,
			[]want{{kind: adapters.KindText, key: "x", text: "hi", exit: none}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows, err := lp.ParseLine([]byte(c.line), 7)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(c.want) {
				t.Fatalf("got %d rows, want %d: %+v", len(rows), len(c.want), rows)
			}
			for i, w := range c.want {
				r := rows[i]
				if r.Kind != w.kind || r.Key != w.key {
					t.Errorf("row %d = %s %q, want %s %q", i, r.Kind, r.Key, w.kind, w.key)
				}
				if w.text != "" && r.Text != w.text {
					t.Errorf("row %d text %q, want %q", i, r.Text, w.text)
				}
				if r.FilePath != w.file || r.Command != w.cmd {
					t.Errorf("row %d file/cmd %q/%q, want %q/%q", i, r.FilePath, r.Command, w.file, w.cmd)
				}
				if w.exit == none && r.ExitCode != nil {
					t.Errorf("row %d exit %d, want none", i, *r.ExitCode)
				}
				if w.exit != none && (r.ExitCode == nil || *r.ExitCode != w.exit) {
					t.Errorf("row %d exit %v, want %d", i, r.ExitCode, w.exit)
				}
				if r.Kind == adapters.KindUsage && (r.TokensUsed != 1252 || r.TokensMax <= r.TokensUsed) {
					t.Errorf("usage %d/%d", r.TokensUsed, r.TokensMax)
				}
				if (r.Kind == adapters.KindToolResult || r.Kind == adapters.KindError) && strings.HasPrefix(r.Key, "result:") && r.CallID != strings.TrimPrefix(r.Key, "result:") {
					t.Errorf("result %q has call id %q", r.Key, r.CallID)
				}
			}
		})
	}
}

// TestGeminiUpsertsAgree: every copy of a key — the re-appended message,
// the embedded result and the user record, a resume's rewrite and its
// "<id>_response" duplicates — says the same thing, so whichever copy the
// ledger keeps last, and whatever offset a tail starts from, the row is
// the same (and its original timestamp is not replaced).
func TestGeminiUpsertsAgree(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(fixtureDir, "gemini", "*.jsonl"))
	for _, f := range files {
		first := map[string]adapters.Row{}
		for _, r := range ParseFile(t, geminiLP(t), f) {
			p, ok := first[r.Key]
			if !ok {
				first[r.Key] = r
				continue
			}
			if p.Kind != r.Kind || p.Text != r.Text || p.FilePath != r.FilePath || p.Command != r.Command ||
				(p.ExitCode == nil) != (r.ExitCode == nil) || (p.ExitCode != nil && *p.ExitCode != *r.ExitCode) {
				t.Errorf("%s: key %q disagrees between copies:\n%+v\n%+v", filepath.Base(f), r.Key, p, r)
			}
		}
	}
}

// TestGeminiResumeStory: after the resume (second header + rewrite +
// new turn) the ledger holds each event once and the real prompts survive
// even though the rewrite dropped the <hook_context> prompt.
func TestGeminiResumeStory(t *testing.T) {
	rows := geminiFinal(ParseFile(t, geminiLP(t), filepath.Join(fixtureDir, "gemini", "transcript-after-resume.jsonl")))
	count := map[adapters.Kind]int{}
	var prompts, files []string
	for _, r := range rows {
		count[r.Kind]++
		switch r.Kind {
		case adapters.KindPrompt:
			prompts = append(prompts, r.Text)
		case adapters.KindToolCall:
			if r.FilePath != "" {
				files = append(files, filepath.Base(r.FilePath))
			}
		}
	}
	if strings.Join(prompts, "|") != "Add exponential backoff to retry() and run the tests|Continue" {
		t.Errorf("prompts %q", prompts)
	}
	if strings.Join(files, ",") != "backoff.py,retry.py,retry.py" {
		t.Errorf("files %q", files)
	}
	if count[adapters.KindToolCall] != 4 || count[adapters.KindToolResult] != 2 || count[adapters.KindError] != 2 {
		t.Errorf("counts %v: want 4 calls, 2 results, 2 errors (replace mismatch, shell exit 4)", count)
	}
	for _, r := range rows {
		if r.Kind == adapters.KindError && strings.HasPrefix(r.CallID, "run_shell_command") && (r.ExitCode == nil || *r.ExitCode != 4) {
			t.Errorf("shell failure exit %v, want 4", r.ExitCode)
		}
	}
}

func TestGeminiCompressAndAPIError(t *testing.T) {
	rows := geminiFinal(ParseFile(t, geminiLP(t), filepath.Join(fixtureDir, "gemini", "transcript-interactive-tool-compress-error.jsonl")))
	var kinds []string
	for _, r := range rows {
		if r.Kind != adapters.KindUsage {
			kinds = append(kinds, string(r.Kind))
		}
		if r.Kind == adapters.KindText && strings.Contains(r.Text, "Thanks for the additional context") {
			t.Error("compress acknowledgement recorded as assistant text")
		}
	}
	want := "prompt,text,tool_call,tool_result,text,compaction,prompt,error"
	if strings.Join(kinds, ",") != want {
		t.Errorf("kinds %s, want %s", strings.Join(kinds, ","), want)
	}
}

func TestGeminiHook(t *testing.T) {
	a := adapters.Gemini
	env := adapters.Env{Getenv: func(k string) string {
		if k == "GEMINI_PROJECT_DIR" {
			return "/home/dev-c/src/retryq"
		}
		return ""
	}}
	h, err := a.ParseHook("BeforeAgent", []byte(`{"session_id":"60778a0a-142e","transcript_path":"/t/chats/session-x.jsonl","cwd":"/p","hook_event_name":"BeforeAgent","timestamp":"2026-11-21T08:46:11Z","prompt":"<hook_context>`+geminiHeader+`</hook_context>\n\nAdd backoff"}`), env)
	if err != nil {
		t.Fatal(err)
	}
	if h.Tool != "gemini" || h.SessionID != "60778a0a-142e" || h.Prompt != "Add backoff" || h.Project != "/home/dev-c/src/retryq" || h.Event != "BeforeAgent" {
		t.Errorf("hook %+v", h)
	}
	h, _ = a.ParseHook("", []byte(`{"session_id":"s","hook_event_name":"SessionStart","source":"resume"}`), adapters.Env{})
	if h.Event != "SessionStart" || h.Source != "resume" {
		t.Errorf("hook %+v", h)
	}
	if _, err := a.ParseHook("SessionEnd", []byte(`["secret"]`), env); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("bad payload error %v", err)
	}
}

func TestGeminiTranscripts(t *testing.T) {
	home := filepath.Join(t.TempDir(), "odd*[home]?") // glob characters are literal
	sid := "60778a0a-142e-4582-8b6f-ddd95163b3ed"
	chats := filepath.Join(home, ".gemini", "tmp", "retryq", "chats")
	main := filepath.Join(chats, "session-2026-11-21T08-46-60778a0a.jsonl")
	sub := filepath.Join(chats, sid, "b1c2.jsonl")
	if err := os.MkdirAll(filepath.Dir(sub), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{main, sub} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	lp := geminiLP(t)
	env := adapters.Env{Home: home, Getenv: func(string) string { return "" }}
	for _, h := range []adapters.Hook{{SessionID: sid, TranscriptPath: main}, {SessionID: sid}} {
		ts := lp.Transcripts(h, env)
		if len(ts) != 2 || ts[0].Path != main || ts[0].Sidechain || ts[1].Path != sub || !ts[1].Sidechain || ts[1].SessionID != sid {
			t.Errorf("transcripts for %+v: %+v", h, ts)
		}
	}
	if ts := lp.Transcripts(adapters.Hook{SessionID: "../../*"}, env); ts != nil {
		t.Errorf("unsafe id matched %+v", ts)
	}
}

// TestGeminiTranscriptsAfterLateResume: a resume in a later minute starts
// a file the payload names, while the turns go on in the session's first
// file; both are read, the named one first, and another session's are not.
func TestGeminiTranscriptsAfterLateResume(t *testing.T) {
	sid := "e65e8656-ffcd-4cba-97f1-c5b14c0800f1"
	chats := filepath.Join(t.TempDir(), ".gemini", "tmp", "retryq", "chats")
	os.MkdirAll(chats, 0o755)
	first := filepath.Join(chats, "session-2026-11-24T01-19-e65e8656.jsonl")
	later := filepath.Join(chats, "session-2026-11-24T01-20-e65e8656.jsonl")
	other := filepath.Join(chats, "session-2026-11-24T01-19-0badc0de.jsonl")
	for _, p := range []string{first, later, other} {
		os.WriteFile(p, nil, 0o600)
	}
	ts := geminiLP(t).Transcripts(adapters.Hook{SessionID: sid, TranscriptPath: later}, adapters.Env{Getenv: func(string) string { return "" }})
	if len(ts) != 2 || ts[0].Path != later || ts[1].Path != first || ts[1].SessionID != sid || ts[1].Sidechain {
		t.Fatalf("transcripts: %+v", ts)
	}
}
