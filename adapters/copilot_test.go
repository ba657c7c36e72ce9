package adapters_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
)

const copilotFixtures = fixtureDir + "/copilot-cli"

func copilotLP(t testing.TB) adapters.LineParser {
	t.Helper()
	lp, ok := adapters.CopilotCLI.(adapters.LineParser)
	if !ok {
		t.Fatal("copilot-cli is not a LineParser")
	}
	return lp
}

func mapEnv(home string, kv ...string) adapters.Env {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return adapters.Env{Home: home, Getenv: func(k string) string { return m[k] }}
}

func TestCopilotParseHook(t *testing.T) {
	const sid = "2c94e85f-254c-4088-8f51-8b079790e77f"
	tests := []struct {
		name    string
		event   string
		payload string
		env     adapters.Env
		want    adapters.Hook
	}{
		{"camelCase sessionStart has no transcript; new is startup", "sessionStart",
			`{"sessionId":"` + sid + `","timestamp":1795251218157,"cwd":"/p","source":"new","initialPrompt":"Add backoff"}`,
			mapEnv("/h", "COPILOT_PROJECT_DIR", "/p"),
			adapters.Hook{Tool: "copilot-cli", Event: "sessionStart", SessionID: sid, Cwd: "/p", Project: "/p", Source: "startup", Prompt: "Add backoff",
				FlushMark: `"timestamp":1795251218157`}},
		{"resume source kept", "sessionStart",
			`{"sessionId":"` + sid + `","cwd":"/p","source":"resume","initialPrompt":"Continue"}`,
			mapEnv("/h"),
			adapters.Hook{Tool: "copilot-cli", Event: "sessionStart", SessionID: sid, Cwd: "/p", Source: "resume", Prompt: "Continue"}},
		{"agentStop carries transcriptPath", "agentStop",
			`{"sessionId":"` + sid + `","cwd":"/p","transcriptPath":"/h/.copilot/session-state/` + sid + `/events.jsonl","stopReason":"end_turn"}`,
			mapEnv("/h", "CLAUDE_PROJECT_DIR", "/claude"),
			adapters.Hook{Tool: "copilot-cli", Event: "agentStop", SessionID: sid, Cwd: "/p", Project: "/claude", TranscriptPath: "/h/.copilot/session-state/" + sid + "/events.jsonl"}},
		{"PascalCase dialect is snake_case", "Stop",
			`{"hook_event_name":"Stop","session_id":"` + sid + `","cwd":"/p","transcript_path":"/t/events.jsonl"}`,
			mapEnv("/h"),
			adapters.Hook{Tool: "copilot-cli", Event: "Stop", SessionID: sid, Cwd: "/p", TranscriptPath: "/t/events.jsonl"}},
		{"event name from payload when not given", "",
			`{"hook_event_name":"UserPromptSubmit","session_id":"` + sid + `","prompt":"Run the tests"}`,
			mapEnv("/h"),
			adapters.Hook{Tool: "copilot-cli", Event: "UserPromptSubmit", SessionID: sid, Prompt: "Run the tests"}},
		{"nil Getenv is fine", "sessionEnd", `{"sessionId":"x","reason":"complete"}`, adapters.Env{},
			adapters.Hook{Tool: "copilot-cli", Event: "sessionEnd", SessionID: "x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := adapters.CopilotCLI.ParseHook(tc.event, []byte(tc.payload), tc.env)
			if err != nil {
				t.Fatal(err)
			}
			if !equalJSON(h, tc.want) {
				t.Errorf("got %+v\nwant %+v", h, tc.want)
			}
		})
	}
	_, err := adapters.CopilotCLI.ParseHook("sessionStart", []byte(`["secret prompt"]`), adapters.Env{})
	if !errors.Is(err, adapters.ErrBadPayload) || strings.Contains(err.Error(), "secret") {
		t.Errorf("bad payload: err = %v", err)
	}
}

func TestCopilotTranscripts(t *testing.T) {
	const sid = "2c94e85f-254c-4088-8f51-8b079790e77f"
	lp := copilotLP(t)
	tests := []struct {
		name string
		h    adapters.Hook
		env  adapters.Env
		want string // "" = none
	}{
		{"built from the session id", adapters.Hook{SessionID: sid}, mapEnv("/home/u"),
			"/home/u/.copilot/session-state/" + sid + "/events.jsonl"},
		{"COPILOT_HOME overrides ~/.copilot", adapters.Hook{SessionID: sid}, mapEnv("/home/u", "COPILOT_HOME", "/data/cop"),
			"/data/cop/session-state/" + sid + "/events.jsonl"},
		{"payload transcriptPath wins", adapters.Hook{SessionID: sid, TranscriptPath: "/x/events.jsonl"}, mapEnv("/home/u"),
			"/x/events.jsonl"},
		{"a session id that is a path is refused", adapters.Hook{SessionID: "../../etc"}, mapEnv("/home/u"), ""},
		{"no home, no path", adapters.Hook{SessionID: sid}, adapters.Env{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := lp.Transcripts(tc.h, tc.env)
			if tc.want == "" {
				if len(ts) != 0 {
					t.Fatalf("got %+v, want none", ts)
				}
				return
			}
			if len(ts) != 1 || ts[0].Path != tc.want || !ts[0].MaybeMissing || ts[0].SessionID != tc.h.SessionID {
				t.Fatalf("got %+v, want %s (MaybeMissing)", ts, tc.want)
			}
		})
	}
}

func TestCopilotParseLine(t *testing.T) {
	lp := copilotLP(t)
	const hdr = `# [CARRYOVER] Last updated 2026-11-21T08:50:00Z from claude`
	tests := []struct {
		name string
		line string
		want []adapters.Row // compared on Key, Kind, Role, CallID, FilePath, Command, ExitCode, Text
	}{
		{"real prompt", `{"type":"user.message","data":{"content":"Add backoff","transformedContent":"<current_datetime>x</current_datetime>\n\nAdd backoff"},"id":"u1","timestamp":"2026-11-21T08:53:38.266Z"}`,
			[]adapters.Row{{Key: "u1", Role: "user", Kind: adapters.KindPrompt, Text: "Add backoff"}}},
		{"handoff as a user message is an injection", `{"type":"user.message","data":{"content":"` + hdr + `\n\n## Task\nx"},"id":"u2"}`,
			[]adapters.Row{{Key: "u2", Role: "system", Kind: adapters.KindInjection, Text: hdr + " via user.message"}}},
		{"sessionStart additionalContext is the receipt", `{"type":"hook.end","data":{"hookType":"sessionStart","success":true,"output":{"additionalContext":"` + hdr + `\n\nrest"}},"id":"h1"}`,
			[]adapters.Row{{Key: "h1", Role: "system", Kind: adapters.KindInjection, Text: hdr + " via sessionStart"}}},
		{"other hook output is skipped", `{"type":"hook.end","data":{"hookType":"sessionStart","output":{"additionalContext":"CARRYOVER-HANDOFF: x"}},"id":"h2"}`, nil},
		{"hook input quoting the handoff is skipped", `{"type":"hook.start","data":{"hookType":"userPromptSubmitted","input":{"prompt":"` + hdr + `"}},"id":"h3"}`, nil},
		{"system prompt skipped", `{"type":"system.message","data":{"role":"system","content":"You are the GitHub Copilot CLI [CARRYOVER]"},"id":"s1"}`, nil},
		{"shell exit != 0 is success:true but an error", `{"type":"tool.execution_complete","data":{"toolCallId":"c9","shellExecution":{"exitCode":4},"success":true,"result":{"content":"no tests ran\n<shellId: 0 completed with exit code 4>"}},"id":"t1"}`,
			[]adapters.Row{{Key: "t1", Role: "tool", Kind: adapters.KindError, CallID: "c9", ExitCode: intp(4), Text: "no tests ran\n<shellId: 0 completed with exit code 4>"}}},
		{"shell exit 0", `{"type":"tool.execution_complete","data":{"toolCallId":"c1","shellExecution":{"exitCode":0},"success":true,"result":{"content":"ok"}},"id":"t2"}`,
			[]adapters.Row{{Key: "t2", Role: "tool", Kind: adapters.KindToolResult, CallID: "c1", ExitCode: intp(0), Text: "ok"}}},
		{"exit code from the result text", `{"type":"tool.execution_complete","data":{"toolCallId":"c2","success":true,"result":{"content":"x\n<shellId: 3 completed with exit code 127>"}},"id":"t3"}`,
			[]adapters.Row{{Key: "t3", Role: "tool", Kind: adapters.KindError, CallID: "c2", ExitCode: intp(127), Text: "x\n<shellId: 3 completed with exit code 127>"}}},
		{"tool failure", `{"type":"tool.execution_complete","data":{"toolCallId":"c8","success":false,"error":{"message":"No match found","code":"failure"}},"id":"t4"}`,
			[]adapters.Row{{Key: "t4", Role: "tool", Kind: adapters.KindError, CallID: "c8", Text: "No match found"}}},
		{"edit and create name their file; bash its command", `{"type":"assistant.message","data":{"content":"","toolRequests":[` +
			`{"toolCallId":"a","name":"edit","arguments":{"path":"/p/r.py","old_str":"x","new_str":"# TODO y"}},` +
			`{"toolCallId":"b","name":"create","arguments":{"path":"/p/n.py","file_text":"z"}},` +
			`{"toolCallId":"c","name":"bash","arguments":{"command":"make test","description":"Run"}}]},"id":"m1"}`,
			[]adapters.Row{
				{Key: "m1#0", Role: "assistant", Kind: adapters.KindToolCall, CallID: "a", FilePath: "/p/r.py", Text: "# TODO y"},
				{Key: "m1#1", Role: "assistant", Kind: adapters.KindToolCall, CallID: "b", FilePath: "/p/n.py", Text: "z"},
				{Key: "m1#2", Role: "assistant", Kind: adapters.KindToolCall, CallID: "c", Command: "make test", Text: "Run"},
			}},
		{"apply_patch is one row per file", `{"type":"assistant.message","data":{"toolRequests":[{"toolCallId":"p","name":"apply_patch","arguments":{"input":"*** Begin Patch\n*** Update File: /p/a.go\n+x\n*** Add File: /p/b.go\n+y\n*** End Patch"}}]},"id":"m2"}`,
			[]adapters.Row{
				{Key: "m2#0", Role: "assistant", Kind: adapters.KindToolCall, CallID: "p", FilePath: "/p/a.go", Text: "x\n"},
				{Key: "m2#0@1", Role: "assistant", Kind: adapters.KindToolCall, CallID: "p", FilePath: "/p/b.go", Text: "y\n"},
			}},
		{"model API error", `{"type":"session.error","data":{"errorType":"query","message":"400 Bad","statusCode":400},"id":"e1"}`,
			[]adapters.Row{{Key: "e1", Role: "system", Kind: adapters.KindError, Text: "400 Bad"}}},
		{"failed compaction is not a compaction", `{"type":"session.compaction_complete","data":{"success":false,"outcome":"failed"},"id":"k1"}`, nil},
		{"usage", `{"type":"session.usage_record","data":{"usage":{"inputTokens":1200,"outputTokens":40,"maxPromptTokens":64000}},"id":"us"}`,
			[]adapters.Row{{Key: "us", Role: "assistant", Kind: adapters.KindUsage}}},
		{"no id falls back to the offset", `{"type":"user.message","data":{"content":"hi"}}`,
			[]adapters.Row{{Key: "off:42", Role: "user", Kind: adapters.KindPrompt, Text: "hi"}}},
		{"unknown type", `{"type":"session.new_thing","data":{"content":"x"},"id":"z"}`, nil},
		{"not JSON", `{"type":"user.message",`, nil},
		{"data not an object", `{"type":"user.message","data":[1],"id":"z"}`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := lp.ParseLine([]byte(tc.line), 42)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(tc.want) {
				t.Fatalf("got %d rows %+v, want %d", len(rows), rows, len(tc.want))
			}
			for i, w := range tc.want {
				g := rows[i]
				if g.Key != w.Key || g.Kind != w.Kind || g.Role != w.Role || g.CallID != w.CallID || g.FilePath != w.FilePath ||
					g.Command != w.Command || !sameExit(g.ExitCode, w.ExitCode) || g.Text != w.Text {
					t.Errorf("row %d:\n got %+v\nwant %+v", i, g, w)
				}
			}
		})
	}
}

func intp(n int) *int { return &n }

func sameExit(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// TestCopilotResumeAppends: --resume appends to the same file, so the rows
// of the resumed file start with exactly the rows of the original one
// (stable keys: re-reading adds nothing) and session.resume's
// eventsFileSizeBytes is where the appended part starts.
func TestCopilotResumeAppends(t *testing.T) {
	lp := copilotLP(t)
	before := ParseFile(t, lp, filepath.Join(copilotFixtures, "events-headless-tools.jsonl"))
	after := ParseFile(t, lp, filepath.Join(copilotFixtures, "events-headless-tools-after-resume.jsonl"))
	if len(after) <= len(before) || !equalJSON(after[:len(before)], before) {
		t.Fatalf("resumed file does not start with the original rows (%d vs %d rows)", len(after), len(before))
	}
	var prompts []string
	for _, r := range after[len(before):] {
		if r.Kind == adapters.KindPrompt {
			prompts = append(prompts, r.Text)
		}
	}
	if len(prompts) != 1 || prompts[0] != "Continue" {
		t.Errorf("appended prompts = %q, want [Continue]", prompts)
	}
	fi, err := os.Stat(filepath.Join(copilotFixtures, "events-headless-tools.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(copilotFixtures, "events-headless-tools-after-resume.jsonl"))
	if !strings.Contains(string(data[fi.Size():fi.Size()+40]), `"type":"session.resume"`) {
		t.Errorf("session.resume does not start at byte %d", fi.Size())
	}
}

// TestCopilotFlushContract documents how a -p session is recorded although
// Copilot CLI writes events.jsonl only after its sessionEnd hooks return:
// the session's own hooks find no file, but Transcripts registers the path
// (MaybeMissing) at sessionStart, and the next session's hook catches it up.
func TestCopilotFlushContract(t *testing.T) {
	home := t.TempDir()
	env := mapEnv(home)
	l, err := ledger.Open(filepath.Join(home, "carryover"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const project = "/home/dev-c/src/retryq"
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	hook := func(event, payload string) (ledger.IngestReport, []ledger.FileReport) {
		t.Helper()
		h, err := adapters.CopilotCLI.ParseHook(event, []byte(payload), env)
		if err != nil {
			t.Fatal(err)
		}
		o := ledger.IngestOptions{Adapter: adapters.CopilotCLI, Hook: h, Env: env, Project: project, Now: now}
		rep, err := ledger.Ingest(l, o)
		if err != nil {
			t.Fatal(err)
		}
		skip := map[string]bool{}
		for _, f := range rep.Files {
			skip[f.Path] = true
		}
		caught, err := ledger.CatchUp(l, project, skip, o)
		if err != nil {
			t.Fatal(err)
		}
		return rep, caught
	}
	const a = "2c94e85f-254c-4088-8f51-8b079790e77f"
	// Session A's hooks: events.jsonl does not exist yet.
	rep, _ := hook("sessionStart", `{"sessionId":"`+a+`","cwd":"`+project+`","source":"new","initialPrompt":"Add exponential backoff to retry() and run the tests"}`)
	if len(rep.Files) != 1 || !errors.Is(rep.Files[0].Err, fs.ErrNotExist) || rep.Added != 0 {
		t.Fatalf("sessionStart of A: %+v", rep)
	}
	hook("sessionEnd", `{"sessionId":"`+a+`","cwd":"`+project+`","reason":"complete"}`)
	// Copilot exits and writes the whole file.
	path := adapters.CopilotEventsPath(a, env)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(copilotFixtures, "events-headless-tools.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	// The next session's sessionStart catches A up.
	_, caught := hook("sessionStart", `{"sessionId":"e323daa6-ebfe-416a-907e-cc8fe441281c","cwd":"`+project+`","source":"new","initialPrompt":"Hello again"}`)
	added := 0
	for _, f := range caught {
		if f.Path == path {
			added += f.Added
		}
	}
	want := len(ParseFile(t, copilotLP(t), filepath.Join(copilotFixtures, "events-headless-tools.jsonl")))
	if added != want {
		t.Fatalf("catch-up added %d rows of session A, want %d", added, want)
	}
	s, err := l.Session("copilot-cli", a)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := l.Rows(s.ID, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != want || rows[0].Kind != adapters.KindPrompt {
		t.Errorf("session A has %d rows, want %d starting with the prompt", len(rows), want)
	}
}

// TestCopilotAwaitFlush: a stop or end hook waits until events.jsonl holds
// its own hook.start line (Copilot writes behind its hooks), and no longer
// than its deadline when the line never comes. The writer here appends the
// turn's last events and the hook.start line on another goroutine after the
// wait has begun, the way Copilot CLI 1.0.102 does.
func TestCopilotAwaitFlush(t *testing.T) {
	home := t.TempDir()
	const sid = "5b0c1d2e-0000-4000-8000-00000000aaaa"
	a, _ := adapters.ByName("copilot-cli")
	env := mapEnv(home)
	path := adapters.CopilotEventsPath(sid, env)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	head := `{"type":"session.start","data":{"sessionId":"` + sid + `"},"id":"e1","timestamp":"2026-11-27T10:00:00.000Z","parentId":null}` + "\n" +
		// an earlier hook of the same event, another timestamp: not this one
		`{"type":"hook.start","data":{"hookInvocationId":"h0","hookType":"agentStop","input":{"sessionId":"` + sid + `","timestamp":1795797400000}},"id":"e2","timestamp":"2026-11-27T10:00:01.000Z","parentId":"e1"}` + "\n"
	if err := os.WriteFile(path, []byte(head), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := a.Adapter.ParseHook("sessionEnd", []byte(`{"sessionId":"`+sid+`","timestamp":1795797499403,"cwd":"/p","reason":"complete"}`), env)
	if err != nil {
		t.Fatal(err)
	}
	if h.FlushMark != `"timestamp":1795797499403` {
		t.Fatalf("FlushMark = %q", h.FlushMark)
	}
	if w := a.FlushWaitFor(a.Class("sessionEnd")); w <= 0 {
		t.Fatalf("sessionEnd does not wait for Copilot's writer (FlushWait %s)", w)
	}
	if w := a.FlushWaitFor(a.Class("postToolUse")); w != 0 {
		t.Errorf("postToolUse waits %s; a tool event must not", w)
	}
	// Nothing written: the wait ends at its deadline, reporting false.
	if a.AwaitFlush(h, env, time.Now().Add(60*time.Millisecond)) {
		t.Fatal("AwaitFlush reported the hook's line before it was written")
	}
	started := make(chan struct{})
	go func() {
		<-started
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		// the final reply, then the hook's own line written in two pieces
		f.WriteString(`{"type":"assistant.message","data":{"messageId":"m1","content":"Done. Next I will add docs."},"id":"e3","timestamp":"2026-11-27T10:00:02.000Z","parentId":"e2"}` + "\n")
		line := `{"type":"hook.start","data":{"hookInvocationId":"h1","hookType":"sessionEnd","input":{"sessionId":"` + sid + `","timestamp":1795797499403,"cwd":"/p"}},"id":"e4","timestamp":"2026-11-27T10:00:03.000Z","parentId":"e3"}` + "\n"
		f.WriteString(line[:40])
		f.Sync()
		time.Sleep(30 * time.Millisecond)
		f.WriteString(line[40:])
	}()
	close(started)
	if !a.AwaitFlush(h, env, time.Now().Add(time.Minute)) {
		t.Fatal("AwaitFlush did not see the hook's own hook.start line")
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), "Next I will add docs.") {
		t.Error("AwaitFlush returned before the events written ahead of the hook's line")
	}
	// The PascalCase dialect's ISO timestamp is a mark too; a payload
	// without one waits for nothing.
	h2, _ := a.Adapter.ParseHook("SessionEnd", []byte(`{"session_id":"`+sid+`","timestamp":"2026-11-27T10:00:03.000Z"}`), env)
	if h2.FlushMark != `"timestamp":"2026-11-27T10:00:03.000Z"` {
		t.Errorf("PascalCase FlushMark = %q", h2.FlushMark)
	}
	h3, _ := a.Adapter.ParseHook("sessionEnd", []byte(`{"sessionId":"`+sid+`"}`), env)
	if h3.FlushMark != "" || a.AwaitFlush(h3, env, time.Now().Add(time.Minute)) {
		t.Errorf("a payload without a timestamp waited (mark %q)", h3.FlushMark)
	}
}
