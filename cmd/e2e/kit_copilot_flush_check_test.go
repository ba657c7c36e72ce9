package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCopilotEventsFlush checks when Copilot CLI -p writes events.jsonl
// relative to its hooks. copilot-cli.md §4 says the file is written only
// after the sessionEnd hooks return; in fact the writer lags behind by
// about a second: a run whose hooks are quick ends before anything is
// flushed, but a slow postToolUse hook lets earlier events reach the disk.
// Whether agentStop and sessionEnd see the end of their own session depends
// on how far that lagging writer got, i.e. on the machine's load: on an idle
// machine they never do, on a busy one they sometimes do (seen in CI-like runs
// with load 15 on 2 cores). So that is logged, not asserted — carryover's
// catch-up at the next event covers both — and the test asserts only what
// holds at any speed: every hook saw a prefix of the final file.
func TestCopilotEventsFlush(t *testing.T) {
	bin := Install(t, "copilot-cli")
	home := t.TempDir()
	copilotHome := filepath.Join(home, ".copilot")
	proj := filepath.Join(t.TempDir(), "flushq")
	gcGitRepo(t, proj, map[string]string{"a.txt": "x\n"})
	hookLog := filepath.Join(t.TempDir(), "hooks.jsonl")
	hooks := copilotHookSet(hookLog, copilotHome)
	hooks["postToolUse"] += "; sleep 2"
	if err := WriteCopilotHooks(home, hooks); err != nil {
		t.Fatal(err)
	}
	srv := NewChatServer(t, []Turn{
		{Text: "Step one.", Calls: []Call{{Name: "bash", Args: map[string]any{"command": "echo one", "description": "one"}}}},
		{Text: "Step two.", Calls: []Call{{Name: "bash", Args: map[string]any{"command": "echo two", "description": "two"}}}},
		{Text: "All done. " + gcNext},
	})
	out := RunCopilot(t, CopilotOpts{Bin: bin, Home: home, Dir: proj, BaseURL: srv.URL(), Prompt: "Run two steps"})
	if out.ExitCode != 0 {
		t.Fatalf("copilot exited %d\nstderr:\n%s", out.ExitCode, out.Stderr)
	}
	entries := gcReadHookLog(t, hookLog)
	if len(entries) == 0 {
		t.Fatal("no hook ran")
	}
	final := gcReadFile(t, CopilotEventsPath(copilotHome, gcField(entries[0], "sessionId")))
	lastMsg := int64(strings.LastIndex(final, gcJSONEscape(gcNext)))
	var maxSeen int64 = -1
	for _, e := range entries {
		t.Logf("%s: events.jsonl size %s of %d", e.Event, copilotSize(e), len(final))
		if e.EventsSize == nil {
			t.Fatalf("%s: hook log has no events_size", e.Event)
		}
		if *e.EventsSize > int64(len(final)) {
			t.Errorf("%s saw events.jsonl at size %d, larger than the final file (%d)", e.Event, *e.EventsSize, len(final))
		}
		if (e.Event == "agentStop" || e.Event == "sessionEnd") && *e.EventsSize >= lastMsg {
			t.Logf("%s saw events.jsonl at size %d, which already holds the final assistant message (at %d): the writer caught up on this run", e.Event, *e.EventsSize, lastMsg)
		}
		if e.Event != "sessionEnd" && *e.EventsSize > maxSeen {
			maxSeen = *e.EventsSize
		}
	}
	if maxSeen <= 0 {
		t.Errorf("events.jsonl never reached the disk before sessionEnd despite a 2 s postToolUse hook; the doc's claim (written only after sessionEnd) would hold after all")
	}
}
