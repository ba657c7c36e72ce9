package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// ClaudeOpts describes one headless `claude -p` run.
type ClaudeOpts struct {
	Home    string   // HOME for the agent (its ~/.claude lives there); required
	Dir     string   // project dir the agent runs in; required
	Prompt  string   // the -p prompt ("/compact" works with --resume)
	BaseURL string   // fake server URL (Anthropic.URL()); required
	Args    []string // extra CLI args after the prompt, e.g. "--resume", id
	Env     []string // extra KEY=VALUE entries, override the defaults
	Timeout time.Duration
	Bin     string // claude executable; the pinned install when empty
	// Ask: run in the default permission mode instead of skipping
	// permissions; headless, a call that needs the user's permission is
	// refused ("… but you haven't granted it yet.").
	Ask bool
}

// ClaudeEnv is the environment RunClaude gives the agent.
func ClaudeEnv(home, baseURL string, extra ...string) []string {
	env := MergeEnv(BaseEnv(home),
		"ANTHROPIC_BASE_URL="+baseURL,
		"ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		// Claude Code refuses --dangerously-skip-permissions as root without it.
		"IS_SANDBOX=1",
	)
	return MergeEnv(env, extra...)
}

// RunClaude runs `claude -p <Prompt> --dangerously-skip-permissions <Args…>`
// from the pinned install and returns its output; it never fails the test by
// itself (check Result.ExitCode).
func RunClaude(t testing.TB, o ClaudeOpts) Result {
	t.Helper()
	if o.Home == "" || o.Dir == "" || o.BaseURL == "" {
		t.Fatalf("e2e kit: RunClaude needs Home, Dir and BaseURL")
	}
	bin := o.Bin
	if bin == "" {
		bin = Install(t, "claude")
	}
	if err := ensureClaudeState(o.Home, o.Dir); err != nil {
		t.Fatalf("e2e kit: preparing %s/.claude.json: %v", o.Home, err)
	}
	mode := []string{"--dangerously-skip-permissions"}
	if o.Ask {
		mode = []string{"--permission-mode", "default"}
	}
	args := append(append([]string{"-p", o.Prompt}, mode...), o.Args...)
	return RunProcess(t, o.Dir, ClaudeEnv(o.Home, o.BaseURL, o.Env...), o.Timeout, bin, args...)
}

// claudeHookTimeout is the per-hook timeout written by WriteClaudeHooks, in
// seconds. SessionEnd gets its own so Claude's 1.5 s SessionEnd budget is raised.
const claudeHookTimeout = 30

// WriteClaudeHooks registers one command hook per event (event name →
// shell command) in home/.claude/settings.json, keeping other settings, and
// pre-accepts onboarding in home/.claude.json.
func WriteClaudeHooks(home string, hooks map[string]string) error {
	dir := filepath.Join(home, ".claude")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, "settings.json")
	settings := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &settings); err != nil {
			return errors.New(path + " is not valid JSON; delete it or fix it")
		}
	}
	events := make([]string, 0, len(hooks))
	for ev := range hooks {
		events = append(events, ev)
	}
	sort.Strings(events)
	h := map[string]any{}
	for _, ev := range events {
		timeout := claudeHookTimeout
		if ev == "SessionEnd" {
			timeout = 10
		}
		h[ev] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": hooks[ev], "timeout": timeout}}}}
	}
	settings["hooks"] = h
	settings["skipDangerousModePermissionPrompt"] = true
	b, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return ensureClaudeState(home, "")
}

// ensureClaudeState marks onboarding done in home/.claude.json and, when
// project is set, trusts that project (only the TUI asks; -p does not).
func ensureClaudeState(home, project string) error {
	path := filepath.Join(home, ".claude.json")
	state := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &state)
	}
	state["hasCompletedOnboarding"] = true
	state["bypassPermissionsModeAccepted"] = true
	if project != "" {
		projects, _ := state["projects"].(map[string]any)
		if projects == nil {
			projects = map[string]any{}
		}
		p, _ := projects[project].(map[string]any)
		if p == nil {
			p = map[string]any{}
		}
		p["hasTrustDialogAccepted"] = true
		p["hasCompletedProjectOnboarding"] = true
		projects[project] = p
		state["projects"] = projects
	}
	b, err := json.MarshalIndent(state, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}

// ClaudeTranscripts lists the session transcripts under home/.claude/projects
// (main sessions only, not subagent files), sorted by path.
func ClaudeTranscripts(home string) []string {
	m, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", "*.jsonl"))
	sort.Strings(m)
	return m
}

// PrepareClaude pre-accepts onboarding and trusts project in home's
// ~/.claude.json, as RunClaude does (for runs started another way).
func PrepareClaude(home, project string) error { return ensureClaudeState(home, project) }
