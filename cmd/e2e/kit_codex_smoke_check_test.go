package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCodexSmoke(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	dir := filepath.Join(root, "src", "retry-lib")
	hookLog := filepath.Join(root, "hook-payloads.jsonl")
	InitGitRepo(t, dir)

	hooks := map[string]string{}
	for _, ev := range CodexEvents() {
		hooks[ev] = LogHookCommand(hookLog, "")
	}
	hooks["SessionStart"] = LogHookCommand(hookLog, ccSessionStartMarker)
	if err := WriteCodexHooks(home, hooks); err != nil {
		t.Fatal(err)
	}

	// 1. A new session: add a file, edit it, a failing command, a decision, a next step.
	fake := NewResponses(t, []Turn{
		{Text: "I'll add a retry helper in retry.py.", Calls: []Call{{Name: "apply_patch", Args: map[string]any{"input": "*** Begin Patch\n*** Add File: retry.py\n+def retry(fn, attempts=3):\n+    for i in range(attempts):\n+        try:\n+            return fn()\n+        except Exception:\n+            pass\n*** End Patch\n"}}}},
		{Calls: []Call{{Name: "apply_patch", Args: map[string]any{"input": "*** Begin Patch\n*** Update File: retry.py\n@@\n         except Exception:\n-            pass\n+            if i == attempts - 1:\n+                raise\n*** End Patch\n"}}}},
		{Text: "We decided to use a plain loop because the helper must stay dependency-free.", Calls: []Call{{Name: "shell", Args: map[string]any{"command": "ls tests/ && python3 -m unittest"}}}},
		{Text: "The test run failed: there is no tests/ directory yet. Next I will add the retry test."},
	})
	res := RunCodex(t, CodexOpts{Home: home, Dir: dir, BaseURL: fake.URL(), Prompt: "Add a retry helper in retry.py and run the tests"})
	if res.ExitCode != 0 {
		t.Fatalf("codex exec failed: %s\nrequests: %v", res, fake.Kinds())
	}
	if got := fake.Played(); got != 4 {
		t.Fatalf("fake played %d of 4 turns; requests: %v\n%s", got, fake.Kinds(), res)
	}
	if !strings.Contains(res.Stdout, "Next I will add the retry test.") {
		t.Errorf("stdout lacks the final sentence: %s", res)
	}
	b, err := os.ReadFile(filepath.Join(dir, "retry.py"))
	if err != nil || !strings.Contains(string(b), "raise") || strings.Contains(string(b), "pass") {
		t.Fatalf("retry.py was not added and updated (err %v):\n%s", err, b)
	}
	mainReqs := fake.MainRequests()
	if len(mainReqs) == 0 || !strings.Contains(string(mainReqs[0]), "MARKER-123") {
		t.Errorf("SessionStart additionalContext MARKER-123 did not reach the first main request")
	}
	if !strings.Contains(string(mainReqs[len(mainReqs)-1]), "Process exited with code 2") {
		t.Errorf("the failing command's exit code did not reach the model")
	}
	payloads := ccPayloads(t, hookLog)
	events := HookEvents(payloads)
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"} {
		if !slices.Contains(events, ev) {
			t.Errorf("hook %s did not run in codex exec; ran: %v", ev, events)
		}
	}
	sessionID, _ := payloads[0]["session_id"].(string)
	rollout, _ := payloads[0]["transcript_path"].(string)
	if sessionID == "" || rollout == "" {
		t.Fatalf("hook payloads lack session_id/transcript_path: %v", payloads[0])
	}
	rb, err := os.ReadFile(rollout)
	if err != nil {
		t.Fatalf("rollout %s: %v (rollouts: %v)", rollout, err, CodexRollouts(home))
	}
	for _, want := range []string{`"custom_tool_call"`, `"exit_code":2`, "We decided to use a plain loop", "Next I will add the retry test.", "MARKER-123"} {
		if !strings.Contains(string(rb), want) {
			t.Errorf("rollout lacks %q", want)
		}
	}
	if ccRecording() {
		ccRecordFile(t, "codex", root, rollout, "session-tools.jsonl")
	}

	// 2. Resume the newest session in this directory.
	n0 := len(payloads)
	fake2 := NewResponses(t, []Turn{
		{Calls: []Call{{Name: "apply_patch", Args: map[string]any{"input": "*** Begin Patch\n*** Add File: tests/test_retry.py\n+import unittest\n*** End Patch\n"}}}},
		{Text: "Added tests/test_retry.py. Next I will fill in the failure-path assertions."},
	})
	res = RunCodex(t, CodexOpts{Home: home, Dir: dir, BaseURL: fake2.URL(), Args: []string{"resume", "--last"}, Prompt: "Now add the retry test file"})
	if res.ExitCode != 0 || fake2.Played() != 2 {
		t.Fatalf("codex exec resume --last: played %d/2: %s\nrequests: %v", fake2.Played(), res, fake2.Kinds())
	}
	if _, err := os.Stat(filepath.Join(dir, "tests", "test_retry.py")); err != nil {
		t.Errorf("resumed session did not add tests/test_retry.py")
	}
	if m := fake2.MainRequests(); len(m) == 0 || !strings.Contains(string(m[0]), "We decided to use a plain loop") {
		t.Errorf("resumed request does not carry the earlier conversation")
	}
	payloads = ccPayloads(t, hookLog)
	if p := ccFirstEvent(payloads[n0:], "SessionStart"); p == nil || p["source"] != "resume" || p["session_id"] != sessionID {
		t.Errorf("resume SessionStart payload = %v", p)
	}
	if got := CodexRollouts(home); len(got) != 1 {
		t.Errorf("resume should append to the same rollout; rollouts: %v", got)
	}
	if ccRecording() {
		ccRecordFile(t, "codex", root, rollout, "session-resumed.jsonl")
	}

	// 3. Automatic compaction: a turn reports more input tokens than the limit.
	n1 := len(payloads)
	fake3 := NewResponses(t, []Turn{
		{Calls: []Call{{Name: "shell", Args: map[string]any{"command": "echo step-one"}}}, InputTokens: 9000},
		{Calls: []Call{{Name: "shell", Args: map[string]any{"command": "echo step-two"}}}, InputTokens: 30000},
		{Text: "Both steps ran. Next I will add the retry test.", InputTokens: 3000},
	})
	res = RunCodex(t, CodexOpts{Home: home, Dir: dir, BaseURL: fake3.URL(), Args: []string{"resume", "--last"}, Prompt: "run two steps",
		Config: []string{"model_auto_compact_token_limit=20000"}})
	if res.ExitCode != 0 || fake3.Played() != 3 || len(fake3.RequestsOfKind(KindCompact)) != 1 {
		t.Fatalf("codex auto-compaction: played %d/3, compactions %d: %s\nrequests: %v", fake3.Played(), len(fake3.RequestsOfKind(KindCompact)), res, fake3.Kinds())
	}
	rb, _ = os.ReadFile(rollout)
	if !strings.Contains(string(rb), `"type":"compacted"`) || !strings.Contains(string(rb), fake3.Summary) {
		t.Errorf("rollout has no compacted line with the summary")
	}
	payloads = ccPayloads(t, hookLog)
	late := payloads[n1:]
	if p := ccFirstEvent(late, "PreCompact"); p == nil || p["trigger"] != "auto" {
		t.Errorf("PreCompact(auto) did not run: %v", HookEvents(late))
	}
	if ccFirstEvent(late, "PostCompact") == nil {
		t.Errorf("PostCompact did not run: %v", HookEvents(late))
	}
	found := false
	for _, p := range late {
		found = found || (p["hook_event_name"] == "SessionStart" && p["source"] == "compact")
	}
	if !found {
		t.Errorf("SessionStart(compact) did not run: %v", HookEvents(late))
	}
	if ccRecording() {
		ccRecordFile(t, "codex", root, rollout, "session-compact.jsonl")
		ccRecordBytes(t, "codex", root, ccCompactJSONL(t, payloads), "hook-payloads.jsonl")
		ccRecordReadme(t, "codex", ccCodexReadme)
	}
}
