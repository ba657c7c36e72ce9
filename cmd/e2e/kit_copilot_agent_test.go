package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// CopilotOpts describes one headless `copilot` run.
type CopilotOpts struct {
	Bin     string // copilot executable; Install(t, "copilot-cli") when empty
	Home    string // HOME for the run (required)
	Dir     string // project dir, the working directory (required)
	BaseURL string // fake server root (ChatServer.URL()); "/v1" is appended. Required
	Prompt  string // passed with -p; "Continue" when empty
	// Args are extra arguments, e.g. "--resume=<sessionId>". Note that
	// copilot's --resume takes an optional value, so pass it as one
	// "--resume=<id>" argument.
	Args    []string
	Env     []string      // extra KEY=VALUE entries (e.g. COPILOT_HOME=...); they override the defaults
	Timeout time.Duration // default and maximum AgentMaxTimeout
}

// RunCopilot runs the real GitHub Copilot CLI headless in BYOK mode
// (`copilot -p PROMPT --allow-all-tools ARGS...` with COPILOT_OFFLINE=true,
// COPILOT_PROVIDER_BASE_URL=BaseURL/v1 and COPILOT_MODEL=gpt-4.1) with a
// minimal environment. A non-zero exit is returned, not fatal; failing to
// start or a timeout is fatal.
func RunCopilot(t testing.TB, o CopilotOpts) AgentOutput {
	t.Helper()
	if o.Home == "" || o.Dir == "" || o.BaseURL == "" {
		t.Fatalf("e2e kit: RunCopilot needs Home, Dir and BaseURL")
	}
	if o.Bin == "" {
		o.Bin = Install(t, "copilot-cli")
	}
	prompt := o.Prompt
	if prompt == "" {
		prompt = "Continue"
	}
	args := append([]string{"-p", prompt, "--allow-all-tools", "--disable-client-telemetry"}, o.Args...)
	env := append(agentBaseEnv(o.Home),
		// The npm binary is a Node SEA that unpacks its 235 MB JS package
		// into $XDG_CACHE_HOME/copilot/pkg on a first run, so in every
		// fresh HOME: 11 of the suite's 14 Copilot runs, 2.6 GB written a
		// suite run (CI's disk ran full in it). Its own
		// COPILOT_PKG_CACHE_HOME moves only that package, unpacked once per
		// installed version beside the install; hooks, config and session
		// state stay in HOME (or COPILOT_HOME). A run took 10.8 s on
		// average, now 3.8 s (2026-11-28, a loaded 2-core machine).
		"COPILOT_PKG_CACHE_HOME="+copilotPkgCache(o.Bin),
		"COPILOT_OFFLINE=true",
		"COPILOT_AUTO_UPDATE=false",
		"COPILOT_PROVIDER_BASE_URL="+strings.TrimSuffix(o.BaseURL, "/")+"/v1",
		"COPILOT_PROVIDER_API_KEY=test",
		"COPILOT_MODEL="+ChatModel,
	)
	return agentRun(t, o.Bin, args, o.Dir, append(env, o.Env...), o.Timeout)
}

// copilotPkgCache is where the Copilot CLI at bin unpacks its package
// (COPILOT_PKG_CACHE_HOME): beside its npm install, so once per version.
func copilotPkgCache(bin string) string {
	return filepath.Join(installDir(bin), "copilot-pkg-cache")
}

// WriteCopilotHooks writes the user-level hook file
// <home>/.copilot/hooks/carryover.json with one command hook per event
// (camelCase event name, e.g. sessionStart -> shell command). When the run
// sets COPILOT_HOME, use WriteCopilotHooksIn with that directory instead.
func WriteCopilotHooks(home string, hooks map[string]string) error {
	return WriteCopilotHooksIn(filepath.Join(home, ".copilot"), hooks)
}

// WriteCopilotHooksIn writes <copilotHome>/hooks/carryover.json, where
// copilotHome is what the CLI uses as ~/.copilot ($COPILOT_HOME).
func WriteCopilotHooksIn(copilotHome string, hooks map[string]string) error {
	keys := make([]string, 0, len(hooks))
	for k := range hooks {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := map[string]any{}
	for _, ev := range keys {
		h[ev] = []any{map[string]any{"type": "command", "bash": hooks[ev], "timeoutSec": 30}}
	}
	b, err := json.MarshalIndent(map[string]any{"version": 1, "hooks": h}, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Join(copilotHome, "hooks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "carryover.json"), append(b, '\n'), 0o644)
}

// CopilotEventsPath is where Copilot CLI keeps a session's transcript:
// <copilotHome>/session-state/<sessionID>/events.jsonl.
func CopilotEventsPath(copilotHome, sessionID string) string {
	return filepath.Join(copilotHome, "session-state", sessionID, "events.jsonl")
}
