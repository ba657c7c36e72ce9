package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClaudePlugin: carryover's Claude Code plugin (.claude-plugin/), added
// as a local marketplace and installed by the real Claude Code, records a
// session through its hooks (carryover from PATH) and hands the next session
// the handoff; `claude plugin validate` passes; `carryover install` then
// skips Claude Code instead of wiring the same hooks a second time.
func TestClaudePlugin(t *testing.T) {
	claude := Install(t, "claude")
	root := t.TempDir()
	home := filepath.Join(root, "home")
	dir := filepath.Join(root, "src", "retrylib")
	InitGitRepo(t, dir)
	os.MkdirAll(home, 0o755)
	if err := PrepareClaude(home, dir); err != nil {
		t.Fatal(err)
	}
	// The marketplace is the repository's .claude-plugin/ alone (the plugin
	// is its manifests; copying the whole checkout would only slow this).
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	market := filepath.Join(root, "market")
	os.MkdirAll(filepath.Join(market, ".claude-plugin"), 0o755)
	for _, f := range []string{"plugin.json", "marketplace.json", "hooks.json"} {
		b, err := os.ReadFile(filepath.Join(repo, ".claude-plugin", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(market, ".claude-plugin", f), b, 0o644)
	}
	path := "PATH=" + filepath.Dir(carryoverBin) + ":" + filepath.Dir(claude) + ":/usr/local/bin:/usr/bin:/bin"
	env := MergeEnv(ClaudeEnv(home, "http://127.0.0.1:9"), path)
	for _, args := range [][]string{
		{"plugin", "validate", "--strict", filepath.Join(repo)},
		{"plugin", "marketplace", "add", market},
		{"plugin", "install", "carryover@carryover"},
	} {
		if r := RunProcess(t, root, env, 0, claude, args...); r.ExitCode != 0 {
			t.Fatalf("claude %s: %s", strings.Join(args, " "), r)
		}
	}

	fake := NewAnthropic(t, retryScript(dir))
	res := RunClaude(t, ClaudeOpts{Home: home, Dir: dir, BaseURL: fake.URL(), Prompt: retryTask, Env: []string{path}})
	if res.ExitCode != 0 {
		t.Fatalf("session 1: %s", res)
	}
	h, err := os.ReadFile(filepath.Join(dir, ".carryover", "handoff.md"))
	if err != nil || !strings.Contains(string(h), retryTask) {
		log, _ := os.ReadFile(filepath.Join(home, ".carryover", "carryover.log"))
		t.Fatalf("no handoff from the plugin's hooks (%v):\n%s\nlog:\n%s", err, h, log)
	}

	fake2 := NewAnthropic(t, []Turn{{Text: "Resuming: next I will add the retry test."}})
	res = RunClaude(t, ClaudeOpts{Home: home, Dir: dir, BaseURL: fake2.URL(), Prompt: "continue", Env: []string{path}})
	if res.ExitCode != 0 {
		t.Fatalf("session 2: %s", res)
	}
	first := firstMain(t, fake2.MainRequests())
	for _, want := range []string{"[CARRYOVER]", retryTask, "Next I will add the retry test in tests/test_retry.py."} {
		if !strings.Contains(first, want) {
			t.Errorf("session 2's first request lacks %q", want)
		}
	}
	if n := strings.Count(first, "# [CARRYOVER] Last updated"); n != 1 {
		t.Errorf("handoff injected %d times", n)
	}

	// install sees the plugin and leaves settings.json without stubs.
	settings := filepath.Join(home, ".claude", "settings.json")
	before, _ := os.ReadFile(settings)
	out, errOut, code := runCarryover(t, env, dir, "install", "--tools", "claude", "--yes")
	if code != 0 || !strings.Contains(out, "skipped  Claude Code") || !strings.Contains(out, "the carryover plugin (carryover@carryover) already wires its hooks") {
		t.Errorf("install with the plugin enabled: exit %d\n%s\n%s", code, out, errOut)
	}
	if after, _ := os.ReadFile(settings); string(after) != string(before) || strings.Contains(string(after), "snapshot --tool") {
		t.Errorf("install changed settings.json:\n%s", after)
	}
}
