package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

const (
	gcMarker   = "MARKER-123"
	gcDecision = "We decided to use exponential backoff because fixed delays overload the server."
	gcNext     = "Next I will add the retry test."
	gcPrompt   = "Add exponential backoff to retry() and run the tests"
	gcFailCmd  = "ls tests/ && python3 -m unittest"
)

var geminiLoggedEvents = []string{"SessionStart", "BeforeAgent", "PreCompress", "BeforeTool", "AfterTool", "AfterAgent", "SessionEnd"}

// geminiHookSet logs every event into logPath; SessionStart also injects
// gcMarker.
func geminiHookSet(logPath string) map[string]string {
	hooks := map[string]string{}
	for _, ev := range geminiLoggedEvents {
		hooks[ev] = gcLogHook(logPath, ev, "")
	}
	hooks["SessionStart"] += `; echo '{"hookSpecificOutput":{"additionalContext":"` + gcMarker + `"}}'`
	return hooks
}

func TestGeminiSmoke(t *testing.T) {
	bin := Install(t, "gemini")
	home := t.TempDir()
	proj := filepath.Join(t.TempDir(), "retryq")
	gcGitRepo(t, proj, map[string]string{"retry.py": "def retry(fn, n=3):\n    for i in range(n):\n        try:\n            return fn()\n        except Exception:\n            pass\n"})
	backoff := filepath.Join(proj, "backoff.py")
	logDir := t.TempDir()
	hookLog := filepath.Join(logDir, "hooks.jsonl")
	if err := WriteGeminiHooks(home, geminiHookSet(hookLog)); err != nil {
		t.Fatal(err)
	}

	srv := NewGeminiServer(t, []Turn{
		{Text: "I'll add a backoff helper first.", InputTokens: 1200, Calls: []Call{{Name: "write_file", Args: map[string]any{
			"file_path": backoff, "content": "def backoff(i):\n    return 0.1 * (2 ** i)\n"}}}},
		{Calls: []Call{{Name: "replace", Args: map[string]any{
			"file_path": backoff, "instruction": "Double the base delay",
			"old_string": "return 0.1 * (2 ** i)", "new_string": "return 0.2 * (2 ** i)"}}}},
		{Text: gcDecision, Calls: []Call{{Name: "run_shell_command", Args: map[string]any{
			"command": gcFailCmd, "description": "Run the test suite"}}}},
		{Text: "The test run failed because tests/ does not exist yet. " + gcNext},
	})
	out := RunGemini(t, GeminiOpts{Bin: bin, Home: home, Dir: proj, BaseURL: srv.URL(), Prompt: gcPrompt})
	if out.ExitCode != 0 {
		t.Fatalf("gemini exited %d\nstdout:\n%s\nstderr:\n%s", out.ExitCode, out.Stdout, out.Stderr)
	}
	if !strings.Contains(out.Stdout, gcNext) {
		t.Errorf("stdout lacks the final reply:\n%s", out.Stdout)
	}
	t.Logf("fake server requests: %q", srv.Paths())
	if got := srv.TurnsUsed(); got != 4 {
		t.Errorf("main requests = %d, want 4 (paths %q)", got, srv.Paths())
	}
	if got := gcReadFile(t, backoff); got != "def backoff(i):\n    return 0.2 * (2 ** i)\n" {
		t.Errorf("backoff.py was not written and edited: %q", got)
	}
	main := srv.MainRequests()
	if len(main) == 0 || !strings.Contains(string(main[0]), gcMarker) {
		t.Errorf("the first main request does not carry the SessionStart context %s", gcMarker)
	}

	hooks := gcReadHookLog(t, hookLog)
	seen := strings.Join(gcEvents(hooks), " ")
	for _, ev := range []string{"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent", "SessionEnd"} {
		if !strings.Contains(seen, ev) {
			t.Errorf("hook %s did not fire; fired: %s", ev, seen)
		}
	}
	ss, _ := gcFirst(hooks, "SessionStart")
	if src := gcField(ss, "source"); src != "startup" {
		t.Errorf("SessionStart source = %q, want startup", src)
	}
	shellFailed := false
	for _, e := range hooks {
		if e.Event == "AfterTool" && strings.Contains(string(e.Stdin), "run_shell_command") && strings.Contains(string(e.Stdin), "Exit Code: 2") {
			shellFailed = true
		}
	}
	if !shellFailed {
		t.Errorf("no AfterTool payload shows the failed shell command (Exit Code: 2)")
	}
	transcript := gcField(ss, "transcript_path")
	if transcript == "" || !strings.HasPrefix(transcript, home) {
		t.Fatalf("SessionStart transcript_path = %q, want a file under HOME %s", transcript, home)
	}
	first := gcReadFile(t, transcript)
	for _, want := range []string{gcDecision, gcNext, "<hook_context>" + gcMarker + "</hook_context>", "Exit Code: 2"} {
		if !strings.Contains(first, want) && !strings.Contains(first, gcJSONEscape(want)) {
			t.Errorf("transcript lacks %q", want)
		}
	}
	firstCopy := gcWriteTemp(t, "transcript.jsonl", []byte(first))

	// Resume the same session with --resume latest.
	resumeLog := filepath.Join(logDir, "hooks-resume.jsonl")
	if err := WriteGeminiHooks(home, geminiHookSet(resumeLog)); err != nil {
		t.Fatal(err)
	}
	srv2 := NewGeminiServer(t, []Turn{{Text: "Resumed where we left off. " + gcNext}})
	out2 := RunGemini(t, GeminiOpts{Bin: bin, Home: home, Dir: proj, BaseURL: srv2.URL(), Prompt: "Continue", Args: []string{"--resume", "latest"}})
	if out2.ExitCode != 0 {
		t.Fatalf("gemini --resume exited %d\nstdout:\n%s\nstderr:\n%s", out2.ExitCode, out2.Stdout, out2.Stderr)
	}
	rhooks := gcReadHookLog(t, resumeLog)
	rss, ok := gcFirst(rhooks, "SessionStart")
	if !ok || gcField(rss, "source") != "resume" || gcField(rss, "session_id") != gcField(ss, "session_id") {
		t.Errorf("resumed SessionStart: source %q session %q, want resume and %q", gcField(rss, "source"), gcField(rss, "session_id"), gcField(ss, "session_id"))
	}
	rmain := srv2.MainRequests()
	if len(rmain) == 0 || !strings.Contains(string(rmain[0]), gcJSONEscape(gcDecision)) || !strings.Contains(string(rmain[0]), gcMarker) {
		t.Errorf("the resumed main request lacks the old history or the new SessionStart context")
	}
	// Gemini names a session file after the minute it was written in: a
	// resume within the same minute appends to the file. One in a later
	// minute starts a new file, which the hook payload names, holding only
	// a header and a $set of the session context, and appends the history
	// and the new turn to the first file (seen with 0.61 on a minute
	// boundary): carryover reads every file of the session.
	resumed := gcField(rss, "transcript_path")
	if resumed == "" || resumed == transcript {
		if ts := GeminiTranscripts(home); len(ts) != 1 || ts[0] != transcript {
			t.Errorf("resume should append to %s, transcripts now %q", transcript, ts)
		}
		after := gcReadFile(t, transcript)
		if !strings.HasPrefix(after, first) {
			t.Errorf("resume rewrote the transcript instead of appending to it")
		}
		if n := geminiHeaderLines(after); n != 2 {
			t.Errorf("header lines after resume = %d, want 2", n)
		}
	} else {
		t.Logf("resume wrote a new file for the same session: %s", resumed)
		after := gcReadFile(t, resumed)
		both := after + gcReadFile(t, transcript)
		if geminiHeaderLines(after) < 1 || !strings.Contains(both, gcJSONEscape(gcDecision)) || !strings.Contains(both, `\n\nContinue"`) {
			t.Errorf("the resumed session's files lack a header, its history or the new turn")
		}
	}

	gcRecord(t, "gemini", geminiRecordReadme, map[string]string{
		"transcript.jsonl":              firstCopy,
		"transcript-after-resume.jsonl": transcript,
		"hooks.jsonl":                   hookLog,
		"hooks-resume.jsonl":            resumeLog,
		"stdout.txt":                    gcWriteTemp(t, "stdout.txt", []byte(out.Stdout)),
		"stdout-resume.txt":             gcWriteTemp(t, "stdout-resume.txt", []byte(out2.Stdout)),
	})
}

// geminiHeaderLines counts transcript lines that are session headers.
func geminiHeaderLines(transcript string) int {
	n := 0
	for _, line := range strings.Split(transcript, "\n") {
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		if _, ok := m["sessionId"]; ok {
			if _, ok := m["projectHash"]; ok {
				n++
			}
		}
	}
	return n
}

const geminiRecordReadme = `# Recorded Gemini CLI 0.61.0 session (real CLI, fake model)

Written by ` + "`go test ./cmd/e2e -run TestGeminiSmoke -record`" + ` (cmd/e2e/kit_gemini_smoke_check_test.go).
The real ` + "`@google/gemini-cli@0.61.0`" + ` ran headless (` + "`gemini --approval-mode yolo -p \"" + gcPrompt + "\"`" + `)
in a temp git repo named ` + "`retryq`" + ` (one file, retry.py) with a temp HOME, against NewGeminiServer on
127.0.0.1 (GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY=test, GEMINI_CLI_TRUST_WORKSPACE=true). Paths in the files are the
test's temp dirs. The scripted model: write_file backoff.py; replace in backoff.py; text "` + gcDecision + `" plus
run_shell_command ` + "`" + gcFailCmd + "`" + ` (exits 2: tests/ missing); final text ending "` + gcNext + `".

User-level hooks (~/.gemini/settings.json, written by WriteGeminiHooks) log SessionStart, BeforeAgent, PreCompress,
BeforeTool, AfterTool, AfterAgent and SessionEnd as ` + "`{\"event\":E,\"stdin\":PAYLOAD}`" + ` lines. SessionStart also prints
` + "`{\"hookSpecificOutput\":{\"additionalContext\":\"" + gcMarker + "\"}}`" + `, which the CLI prepends to the prompt as <hook_context>.

| File | What |
|---|---|
| transcript.jsonl | ~/.gemini/tmp/retryq/chats/session-*.jsonl after the first run |
| transcript-after-resume.jsonl | the same file after ` + "`gemini --approval-mode yolo -p Continue --resume latest`" + ` (second header, $set rewrites, new turn) |
| hooks.jsonl, hooks-resume.jsonl | hook payloads of the first and the resumed run |
| stdout.txt, stdout-resume.txt | the CLI's stdout for both runs |
`
