package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Chains: session A ends (a compaction, a rate limit, a Stop), session B
// (the same agent after a compaction, or another agent) does part of the
// work, and session C starts: C's SessionStart injection must still carry
// A's goal, unfinished requests, decisions and refusals, and must not tell C
// to redo what B fixed. Each scenario writes its own transcripts (minimal
// Claude Code JSONL and Codex rollout lines) and runs the real hook path.

// chainLine is one transcript line under construction.
type chainTx struct {
	tool, id, path string
	t              time.Time
	lines          []string
	n              int
}

func newChainTx(t *testing.T, le *lifecycleEnv, tool, id string, start time.Time) *chainTx {
	tx := &chainTx{tool: tool, id: id, path: filepath.Join(t.TempDir(), id+".jsonl"), t: start}
	if tool == "codex" {
		tx.add(map[string]any{"type": "session_meta", "payload": map[string]any{"id": id, "cwd": le.project, "cli_version": "0.169.0", "source": "cli"}})
	}
	return tx
}

func (tx *chainTx) add(v map[string]any) {
	tx.t = tx.t.Add(2 * time.Second)
	tx.n++
	v["timestamp"] = tx.t.Format(time.RFC3339Nano)
	b, _ := json.Marshal(v)
	tx.lines = append(tx.lines, string(b))
}

// claude adds a Claude Code line: a user or assistant message with content.
func (tx *chainTx) claude(typ string, content any, extra ...any) {
	v := map[string]any{"type": typ, "uuid": fmt.Sprintf("%s-%04d", tx.id, tx.n), "sessionId": tx.id, "isSidechain": false,
		"message": map[string]any{"role": typ, "content": content, "id": fmt.Sprintf("msg_%s_%d", tx.id, tx.n)}}
	for i := 0; i+1 < len(extra); i += 2 {
		v[extra[i].(string)] = extra[i+1]
	}
	tx.add(v)
}

// User is the user's words; Say the agent's; Run a shell command and its result.
func (tx *chainTx) User(text string) {
	if tx.tool == "codex" {
		tx.add(map[string]any{"type": "response_item", "payload": map[string]any{"type": "message", "role": "user",
			"content": []any{map[string]any{"type": "input_text", "text": text}}}})
		return
	}
	tx.claude("user", text)
}

func (tx *chainTx) Say(text string) {
	if tx.tool == "codex" {
		tx.add(map[string]any{"type": "response_item", "payload": map[string]any{"type": "message", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": text}}}})
		return
	}
	tx.claude("assistant", []any{map[string]any{"type": "text", "text": text}})
}

func (tx *chainTx) Run(cmd string, code int, out string) {
	call := fmt.Sprintf("call_%s_%d", tx.id, tx.n)
	if tx.tool == "codex" {
		args, _ := json.Marshal(map[string]any{"cmd": cmd})
		tx.add(map[string]any{"type": "response_item", "payload": map[string]any{"type": "function_call", "name": "exec_command", "arguments": string(args), "call_id": call}})
		tx.add(map[string]any{"type": "response_item", "payload": map[string]any{"type": "function_call_output", "call_id": call,
			"output": fmt.Sprintf("Process exited with code %d\nOutput:\n%s\n", code, out)}})
		return
	}
	tx.claude("assistant", []any{map[string]any{"type": "tool_use", "id": call, "name": "Bash", "input": map[string]any{"command": cmd}}})
	tx.claude("user", []any{map[string]any{"type": "tool_result", "tool_use_id": call, "content": out, "is_error": code != 0}})
}

// Edit writes a file (Claude's Edit tool, Codex's apply_patch).
func (tx *chainTx) Edit(file string) {
	call := fmt.Sprintf("call_%s_%d", tx.id, tx.n)
	if tx.tool == "codex" {
		tx.add(map[string]any{"type": "response_item", "payload": map[string]any{"type": "custom_tool_call", "name": "apply_patch", "call_id": call,
			"input": "*** Begin Patch\n*** Update File: " + file + "\n@@\n-a\n+b\n*** End Patch\n"}})
		tx.add(map[string]any{"type": "response_item", "payload": map[string]any{"type": "custom_tool_call_output", "call_id": call,
			"output": "Exit code: 0\nOutput:\nSuccess. Updated the following files:\nM " + file + "\n"}})
		return
	}
	tx.claude("assistant", []any{map[string]any{"type": "tool_use", "id": call, "name": "Edit", "input": map[string]any{"file_path": file, "old_string": "a", "new_string": "b"}}})
	tx.claude("user", []any{map[string]any{"type": "tool_result", "tool_use_id": call, "content": "The file " + file + " has been updated."}})
}

// Refuse is a tool call the user turned down.
func (tx *chainTx) Refuse(cmd string) {
	call := fmt.Sprintf("call_%s_%d", tx.id, tx.n)
	tx.claude("assistant", []any{map[string]any{"type": "tool_use", "id": call, "name": "Bash", "input": map[string]any{"command": cmd}}})
	tx.claude("user", []any{map[string]any{"type": "tool_result", "tool_use_id": call, "is_error": true,
		"content": "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed."}})
}

// Compact is a compaction with its summary: Claude Code's boundary and
// isCompactSummary user line, Codex's compacted item.
func (tx *chainTx) Compact(summary string) {
	if tx.tool == "codex" {
		tx.add(map[string]any{"type": "compacted", "payload": map[string]any{"message": summary}})
		return
	}
	tx.add(map[string]any{"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted", "uuid": fmt.Sprintf("%s-%04d", tx.id, tx.n),
		"sessionId": tx.id, "compactMetadata": map[string]any{"trigger": "auto", "preTokens": 170000}})
	tx.claude("user", "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSummary:\n"+summary, "isCompactSummary", true)
}

// RateLimit is the API error Claude Code writes as the assistant's text.
func (tx *chainTx) RateLimit() {
	tx.claude("assistant", []any{map[string]any{"type": "text", "text": "API Error: 429 {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Number of request tokens has exceeded your per-minute rate limit\"}}"}}, "isApiErrorMessage", true)
}

// Stop writes the transcript and runs the agent's Stop hook on it.
func (tx *chainTx) Stop(le *lifecycleEnv) {
	os.WriteFile(tx.path, []byte(strings.Join(tx.lines, "\n")+"\n"), 0o600)
	le.now = tx.t.Add(time.Second)
	le.snap(tx.tool, "Stop", map[string]any{"session_id": tx.id, "transcript_path": tx.path})
}

// startC is session C's SessionStart injection.
func startC(le *lifecycleEnv, tool string) string {
	le.now = le.now.Add(time.Minute)
	out := le.snap(tool, "SessionStart", map[string]any{"session_id": "session-c", "source": "startup"})
	var v struct {
		H struct {
			C string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if json.Unmarshal([]byte(out), &v) == nil && v.H.C != "" {
		return v.H.C
	}
	return out
}

// checkInjection fails for a wanted fact missing or an unwanted one present
// (case-insensitive substrings).
func checkInjection(t *testing.T, got string, want, not []string) {
	t.Helper()
	low := strings.ToLower(got)
	for _, w := range want {
		if !strings.Contains(low, strings.ToLower(w)) {
			t.Errorf("C's injection lacks %q", w)
		}
	}
	for _, n := range not {
		if strings.Contains(low, strings.ToLower(n)) {
			t.Errorf("C's injection says %q", n)
		}
	}
	if t.Failed() || os.Getenv("CHAIN_SHOW") != "" {
		t.Logf("injection:\n%s", got)
	}
}

var chainStart = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// A compacts mid-task; B (the same Claude session after the compaction)
// finishes: C has A's goal and constraint, not the summary as the request,
// and no failure to fix.
func TestChainCompactionThenDone(t *testing.T) {
	le := newLifecycleEnv(t)
	a := newChainTx(t, le, "claude", "chain-compact-a", chainStart)
	a.User("Add CSV export to the reports page. Keep the existing JSON endpoint unchanged.")
	a.Say("I'll add a CSV writer in reports/export.py.")
	a.Edit("reports/export.py")
	a.Run("pytest tests/test_export.py", 1, "FAILED tests/test_export.py::test_csv_header - AssertionError: assert 'id,name' == 'id,name,total'")
	a.Stop(le)
	a.Compact("1. Primary Request and Intent: the user wants a summary of the repository layout.\n2. Pending Tasks: fix the CSV header in reports/export.py.")
	a.Say("The header lacks the total column; adding it.")
	a.Edit("reports/export.py")
	a.Run("pytest tests/test_export.py", 0, "3 passed in 0.12s")
	a.Say("CSV export works: the header now has the total column and all 3 export tests pass.")
	a.Stop(le)
	got := startC(le, "claude")
	checkInjection(t, got, []string{"Add CSV export to the reports page", "JSON endpoint unchanged"},
		[]string{"summary of the repository layout", "Primary Request", "being continued", "Resolve"})
}

// A hits a rate limit mid-fix; the user switches to Codex (B), which fixes
// it: C is not told to fix it again, and keeps A's goal and constraint.
func TestChainRateLimitThenCodexFixes(t *testing.T) {
	le := newLifecycleEnv(t)
	a := newChainTx(t, le, "claude", "chain-limit-a", chainStart)
	a.User("Fix the flaky login test in tests/test_auth.py. Do not change the session timeout.")
	a.Run("pytest tests/test_auth.py", 1, "FAILED tests/test_auth.py::test_login - AssertionError: expected 200, got 401")
	a.Say("The token is compared before it is refreshed; I'll reorder the check in auth/session.py.")
	a.Edit("auth/session.py")
	a.RateLimit()
	a.Stop(le)
	b := newChainTx(t, le, "codex", "019b-chain-limit-b", le.now.Add(10*time.Minute))
	b.User("continue where claude stopped")
	b.Edit("auth/session.py")
	b.Run("pytest tests/test_auth.py", 0, "4 passed in 0.31s")
	b.Say("The login test passes now: the token is refreshed before the comparison.")
	b.Stop(le)
	got := startC(le, "claude")
	checkInjection(t, got, []string{"flaky login test", "session timeout", "Done; nothing in progress"},
		[]string{"stopped at a rate limit", "429", "model API", "still-failing", "Resolve", "continue where claude stopped"})
}

// A's user refuses a deletion and says why; B (a new session, "continue")
// proposes the same again: C still sees the refusal.
func TestChainRefusalThenProposal(t *testing.T) {
	le := newLifecycleEnv(t)
	a := newChainTx(t, le, "claude", "chain-refuse-a", chainStart)
	a.User("Speed up the CI pipeline.")
	a.Say("The integration suite takes 9 of the 11 minutes; I'll remove it.")
	a.Refuse("rm -rf tests/integration")
	a.User("No, never delete the integration tests. Cache the dependencies instead.")
	a.Edit(".github/workflows/ci.yml")
	a.Say("Added a pip cache to ci.yml.")
	a.Stop(le)
	b := newChainTx(t, le, "claude", "chain-refuse-b", le.now.Add(20*time.Minute))
	b.User("continue")
	b.Say("Next I'll drop the integration tests from the pull-request workflow to save 9 minutes.")
	b.Stop(le)
	got := startC(le, "claude")
	checkInjection(t, got, []string{"Speed up the CI pipeline", "rm -rf tests/integration", "never delete the integration tests"}, nil)
}

// B changes the goal: C's goal is B's, A's is set aside.
func TestChainGoalChange(t *testing.T) {
	le := newLifecycleEnv(t)
	a := newChainTx(t, le, "claude", "chain-switch-a", chainStart)
	a.User("Migrate the user store from MySQL to Postgres.")
	a.Edit("store/users.go")
	a.Say("I'll port the remaining queries next.")
	a.Stop(le)
	b := newChainTx(t, le, "codex", "019b-chain-switch-b", le.now.Add(30*time.Minute))
	b.User("Forget the migration for now. Instead, add rate limiting to the public API.")
	b.Edit("api/middleware.go")
	b.Say("Added a token-bucket limiter; next I'll wire it into the router.")
	b.Stop(le)
	got := startC(le, "claude")
	checkInjection(t, got, []string{"add rate limiting to the public API", "Migrate the user store"}, []string{"port the remaining queries"})
	if i, j := strings.Index(got, "rate limiting"), strings.Index(got, "Migrate the user store"); i > j {
		t.Errorf("A's goal comes before B's:\n%s", got)
	}
}

// B's only prompt is "continue" (in German): A's goal and failure stay.
func TestChainContinueOnly(t *testing.T) {
	le := newLifecycleEnv(t)
	a := newChainTx(t, le, "claude", "chain-cont-a", chainStart)
	a.User("Write a Dockerfile for the api service; the image must stay under 200 MB.")
	a.Edit("Dockerfile")
	a.Run("docker build -t api .", 1, "ERROR: failed to solve: process \"/bin/sh -c pip install -r requirements.txt\" did not complete successfully: exit code: 1")
	a.RateLimit()
	a.Stop(le)
	b := newChainTx(t, le, "claude", "chain-cont-b", le.now.Add(5*time.Hour))
	b.User("weiter")
	b.Say("Pinning the base image to python:3.12-slim.")
	b.Edit("Dockerfile")
	b.Stop(le)
	got := startC(le, "claude")
	checkInjection(t, got, []string{"Write a Dockerfile for the api service", "under 200 MB", "docker build"}, []string{"Task: weiter", "\nweiter", "stopped at a rate limit", "429"})
}

// A decides; B (Codex, "go on") never repeats it: C still has it.
func TestChainDecisionKept(t *testing.T) {
	le := newLifecycleEnv(t)
	a := newChainTx(t, le, "claude", "chain-decide-a", chainStart)
	a.User("Add caching to the product lookup.")
	a.Say("Should the cache be Redis or in-process?")
	a.User("Use an in-process LRU cache, not Redis: we run a single instance.")
	a.Edit("catalog/lookup.py")
	a.Stop(le)
	b := newChainTx(t, le, "codex", "019b-chain-decide-b", le.now.Add(time.Hour))
	b.User("go on")
	b.Edit("tests/test_lookup.py")
	b.Run("pytest tests/test_lookup.py", 0, "5 passed in 0.2s")
	b.Say("Lookup tests pass with the cache in place.")
	b.Stop(le)
	got := startC(le, "claude")
	checkInjection(t, got, []string{"Add caching to the product lookup", "in-process LRU cache"}, []string{"Task: go on"})
}

// B is Codex after a tool switch and compacts; its summary names another
// goal: C keeps A's goal and A's declined offer, and the summary is no request.
func TestChainCodexCompactionKeepsDecline(t *testing.T) {
	le := newLifecycleEnv(t)
	a := newChainTx(t, le, "claude", "chain-ccompact-a", chainStart)
	a.User("Add a --dry-run flag to the import command.")
	a.Edit("cli/import.go")
	a.Say("Shall I also upgrade cobra to v1.9 while I'm here?")
	a.User("No, leave the dependencies alone.")
	a.Say("Understood; I'll wire the flag into the importer next.")
	a.Stop(le)
	b := newChainTx(t, le, "codex", "019b-chain-ccompact-b", le.now.Add(15*time.Minute))
	b.User("go on")
	b.Edit("importer/run.go")
	b.Compact("Summary: the user wants the changelog rewritten for the 3.0 release.")
	b.Say("The dry-run path skips the writes; next I'll add a test for it.")
	b.Stop(le)
	got := startC(le, "claude")
	checkInjection(t, got, []string{"Add a --dry-run flag to the import command", "leave the dependencies alone"},
		[]string{"changelog rewritten", "Latest request: go on"})
}

// A's test fails; B (Codex) fixes it and runs the same test in another form
// (python -m, -q, through bash -lc): C is not told to fix it again.
func TestChainFixedInAnotherForm(t *testing.T) {
	le := newLifecycleEnv(t)
	a := newChainTx(t, le, "claude", "chain-form-a", chainStart)
	a.User("Make the invoice totals round half up.")
	a.Edit("billing/totals.py")
	a.Run("pytest tests/test_totals.py", 1, "FAILED tests/test_totals.py::test_half_up - assert Decimal('2.67') == Decimal('2.68')")
	a.RateLimit()
	a.Stop(le)
	b := newChainTx(t, le, "codex", "019b-chain-form-b", le.now.Add(3*time.Minute))
	b.User("the claude session hit its limit, please finish it")
	b.Edit("billing/totals.py")
	call := "call_form_1"
	args, _ := json.Marshal(map[string]any{"command": []string{"bash", "-lc", "cd billing && python -m pytest ../tests/test_totals.py -q"}})
	b.add(map[string]any{"type": "response_item", "payload": map[string]any{"type": "function_call", "name": "shell", "arguments": string(args), "call_id": call}})
	b.add(map[string]any{"type": "response_item", "payload": map[string]any{"type": "function_call_output", "call_id": call,
		"output": `{"output":"4 passed in 0.05s\n","metadata":{"exit_code":0,"duration_seconds":0.4}}`}})
	b.Say("Totals now use ROUND_HALF_UP and the tests pass.")
	b.Stop(le)
	got := startC(le, "claude")
	checkInjection(t, got, []string{"round half up"}, []string{"still-failing", "Resolve", "stopped at a rate limit", "429"})
}

// A's user turns down an offer; B (Codex, "continue") announces the same
// step as its next one: C still sees the refusal, and the next action says so.
func TestChainDeclinedOfferProposedAgain(t *testing.T) {
	le := newLifecycleEnv(t)
	a := newChainTx(t, le, "claude", "chain-offer-a", chainStart)
	a.User("Fix the broken date parsing in the CSV importer.")
	a.Edit("importer/dates.py")
	a.Say("Want me to upgrade pandas to 2.2 as well?")
	a.User("no, keep pandas where it is")
	a.Stop(le)
	b := newChainTx(t, le, "codex", "019b-chain-offer-b", le.now.Add(40*time.Minute))
	b.User("continue")
	b.Run("pytest tests/test_dates.py", 0, "6 passed in 0.1s")
	b.Say("Date parsing is fixed. Next I'll upgrade pandas to 2.2 to get the faster parser.")
	b.Stop(le)
	got := startC(le, "claude")
	checkInjection(t, got, []string{"Fix the broken date parsing", "keep pandas where it is", "upgrade pandas to 2.2 to get the faster parser. — the user turned this down before"}, nil)
}
