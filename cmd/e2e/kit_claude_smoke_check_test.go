package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const ccSessionStartMarker = `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"MARKER-123"}}`

// ccClaudeLoggedEvents are the events the smoke test logs.
var ccClaudeLoggedEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
	"PostToolUseFailure", "Stop", "SessionEnd", "PreCompact", "PostCompact"}

func TestClaudeSmoke(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	dir := filepath.Join(root, "src", "retrylib")
	hookLog := filepath.Join(root, "hook-payloads.jsonl")
	InitGitRepo(t, dir)

	hooks := map[string]string{}
	for _, ev := range ccClaudeLoggedEvents {
		hooks[ev] = LogHookCommand(hookLog, "")
	}
	hooks["SessionStart"] = LogHookCommand(hookLog, ccSessionStartMarker)
	if err := WriteClaudeHooks(home, hooks); err != nil {
		t.Fatal(err)
	}

	// 1. A new session: write, edit, a failing command, a decision, a next step.
	retry := filepath.Join(dir, "retry.py")
	fake := NewAnthropic(t, []Turn{
		{Text: "I'll create the retry helper first.", Calls: []Call{{Name: "Write", Args: map[string]any{
			"file_path": retry, "content": "def retry(fn, attempts=3):\n    for i in range(attempts):\n        try:\n            return fn()\n        except Exception:\n            pass\n"}}}},
		{Calls: []Call{{Name: "Edit", Args: map[string]any{"file_path": retry,
			"old_string": "            pass\n", "new_string": "            if i == attempts - 1:\n                raise\n"}}}},
		{Text: "We decided to use a plain loop because the helper must stay dependency-free.", Calls: []Call{{Name: "Bash", Args: map[string]any{
			"command": "ls tests/ && python3 -m unittest", "description": "Run the unit tests"}}}},
		{Text: "The test run failed: there is no tests/ directory yet. Next I will add the retry test."},
	})
	res := RunClaude(t, ClaudeOpts{Home: home, Dir: dir, BaseURL: fake.URL(), Prompt: "Add a retry helper in retry.py and run the tests"})
	if res.ExitCode != 0 {
		t.Fatalf("claude -p failed: %s\nrequests: %v", res, fake.Kinds())
	}
	if got := fake.Played(); got != 4 {
		t.Fatalf("fake played %d of 4 turns; requests: %v\n%s", got, fake.Kinds(), res)
	}
	if testing.Verbose() {
		t.Logf("requests: %v", fake.Kinds())
	}
	if !strings.Contains(res.Stdout, "Next I will add the retry test.") {
		t.Errorf("stdout lacks the final sentence: %s", res)
	}
	b, err := os.ReadFile(retry)
	if err != nil || !strings.Contains(string(b), "raise") || strings.Contains(string(b), "pass") {
		t.Fatalf("retry.py was not written and edited (err %v):\n%s", err, b)
	}
	mainReqs := fake.MainRequests()
	if len(mainReqs) == 0 || !strings.Contains(string(mainReqs[0]), "MARKER-123") {
		t.Errorf("SessionStart additionalContext MARKER-123 did not reach the first main request")
	}
	if !strings.Contains(string(mainReqs[len(mainReqs)-1]), "cannot access") {
		t.Errorf("the failing command's output did not reach the model")
	}
	payloads := ccPayloads(t, hookLog)
	events := HookEvents(payloads)
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd"} {
		if !slices.Contains(events, ev) {
			t.Errorf("hook %s did not fire; fired: %v", ev, events)
		}
	}
	sessionID, _ := payloads[0]["session_id"].(string)
	transcript, _ := payloads[len(payloads)-1]["transcript_path"].(string)
	if sessionID == "" || transcript == "" {
		t.Fatalf("hook payloads lack session_id/transcript_path: %v", payloads[0])
	}
	tb, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatalf("transcript %s: %v (transcripts: %v)", transcript, err, ClaudeTranscripts(home))
	}
	for _, want := range []string{`"name":"Write"`, `"name":"Edit"`, `"is_error":true`, "We decided to use a plain loop", "Next I will add the retry test."} {
		if !strings.Contains(string(tb), want) {
			t.Errorf("transcript lacks %q", want)
		}
	}
	if ccRecording() {
		ccRecordFile(t, "claude", root, transcript, "session-tools.jsonl")
	}

	// 2. Resume the same session headlessly.
	n0 := len(payloads)
	testFile := filepath.Join(dir, "tests", "test_retry.py")
	fake2 := NewAnthropic(t, []Turn{
		{Calls: []Call{{Name: "Write", Args: map[string]any{"file_path": testFile, "content": "import unittest\n"}}}},
		{Text: "Added tests/test_retry.py. Next I will fill in the failure-path assertions."},
	})
	res = RunClaude(t, ClaudeOpts{Home: home, Dir: dir, BaseURL: fake2.URL(), Prompt: "Now add the retry test file", Args: []string{"--resume", sessionID}})
	if res.ExitCode != 0 || fake2.Played() != 2 {
		t.Fatalf("claude -p --resume: played %d/2: %s\nrequests: %v", fake2.Played(), res, fake2.Kinds())
	}
	if _, err := os.Stat(testFile); err != nil {
		t.Errorf("resumed session did not write %s", testFile)
	}
	if m := fake2.MainRequests(); len(m) == 0 || !strings.Contains(string(m[0]), "We decided to use a plain loop") {
		t.Errorf("resumed request does not carry the earlier conversation")
	}
	payloads = ccPayloads(t, hookLog)
	if p := ccFirstEvent(payloads[n0:], "SessionStart"); p == nil || p["source"] != "resume" || p["session_id"] != sessionID {
		t.Errorf("resume SessionStart payload = %v", p)
	}
	if ccRecording() {
		ccRecordFile(t, "claude", root, transcript, "session-resumed.jsonl")
	}

	// 3. Manual compaction of the same session.
	n1 := len(payloads)
	fake3 := NewAnthropic(t, nil)
	res = RunClaude(t, ClaudeOpts{Home: home, Dir: dir, BaseURL: fake3.URL(), Prompt: "/compact", Args: []string{"--resume", sessionID}})
	if res.ExitCode != 0 || len(fake3.RequestsOfKind(KindCompact)) != 1 {
		t.Fatalf("claude -p /compact: %s\nrequests: %v", res, fake3.Kinds())
	}
	tb, _ = os.ReadFile(transcript)
	if !strings.Contains(string(tb), `"compact_boundary"`) || !strings.Contains(string(tb), `"isCompactSummary":true`) {
		t.Errorf("transcript has no compact_boundary / compact summary after /compact")
	}
	payloads = ccPayloads(t, hookLog)
	if p := ccFirstEvent(payloads[n1:], "PreCompact"); p == nil || p["trigger"] != "manual" {
		t.Errorf("PreCompact(manual) did not fire: %v", HookEvents(payloads[n1:]))
	}
	if ccRecording() {
		ccRecordFile(t, "claude", root, transcript, "session-compact.jsonl")
		ccRecordBytes(t, "claude", root, ccCompactJSONL(t, payloads), "hook-payloads.jsonl")
		ccRecordReadme(t, "claude", ccClaudeReadme)
	}
}

func ccPayloads(t *testing.T, path string) []map[string]any {
	t.Helper()
	p, err := ReadJSONValues(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(p) == 0 {
		t.Fatalf("no hook fired: %s is empty or missing", path)
	}
	return p
}

func ccCompactJSONL(t *testing.T, values []map[string]any) []byte {
	t.Helper()
	f := filepath.Join(t.TempDir(), "c.jsonl")
	if err := WriteCompactJSONL(f, values); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ccFirstEvent(payloads []map[string]any, event string) map[string]any {
	for _, p := range payloads {
		if p["hook_event_name"] == event {
			return p
		}
	}
	return nil
}
