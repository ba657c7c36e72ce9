package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"testing"
	"time"
)

// OpenCodeOpts describes one headless `opencode run` (or `kilo run`).
type OpenCodeOpts struct {
	Tool    string        // "opencode" (default) or "kilo": the pinned CLI and its folder names
	Bin     string        // executable; Install(t, Tool) when empty
	Home    string        // HOME for the run (required)
	Dir     string        // project dir, the working directory (required)
	BaseURL string        // fake Chat Completions server (ChatServer.URL()); required
	Prompt  string        // the prompt; "Continue" when empty
	Args    []string      // extra arguments to `run`
	Env     []string      // extra KEY=VALUE entries
	Timeout time.Duration // default and maximum AgentMaxTimeout
}

// RunOpenCode runs the real OpenCode (or Kilo) CLI headless (`opencode run
// --model fake/<ChatModel> PROMPT`) against the fake Chat Completions
// server, declared as an @ai-sdk/openai-compatible provider (bundled in the
// binary: nothing is fetched) in <XDG_CONFIG_HOME>/<tool>/opencode.json,
// overwritten on every run since each run has its own server. Edits and
// shell commands are allowed without asking. A non-zero exit is returned,
// not fatal.
func RunOpenCode(t testing.TB, o OpenCodeOpts) AgentOutput {
	t.Helper()
	if o.Home == "" || o.Dir == "" || o.BaseURL == "" {
		t.Fatalf("e2e kit: RunOpenCode needs Home, Dir and BaseURL")
	}
	if o.Tool == "" {
		o.Tool = "opencode"
	}
	if o.Bin == "" {
		o.Bin = NativeBin(Install(t, o.Tool))
	}
	cfg := map[string]any{
		"$schema":    "https://opencode.ai/config.json",
		"model":      "fake/" + ChatModel,
		"autoupdate": false,
		"share":      "disabled",
		"permission": map[string]any{"edit": "allow", "bash": "allow", "webfetch": "deny", "external_directory": "allow"},
		"provider": map[string]any{"fake": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "Fake",
			"options": map[string]any{"baseURL": o.BaseURL + "/v1", "apiKey": "test"},
			"models":  map[string]any{ChatModel: map[string]any{"name": ChatModel, "tool_call": true}},
		}},
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	dir := filepath.Join(o.Home, ".config", o.Tool)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "opencode.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	prompt := o.Prompt
	if prompt == "" {
		prompt = "Continue"
	}
	args := append([]string{"run", "--model", "fake/" + ChatModel}, slices.Clone(o.Args)...)
	args = append(args, prompt)
	env := append(agentBaseEnv(o.Home),
		"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_SHARE=1",
		"KILO_DISABLE_AUTOUPDATE=1", "KILO_DISABLE_MODELS_FETCH=1", "KILO_DISABLE_LSP_DOWNLOAD=1",
		"KILO_DISABLE_DEFAULT_PLUGINS=1", "KILO_DISABLE_SHARE=1", "KILO_TELEMETRY_LEVEL=off",
		// as Kilo's own test harness runs it: no daemon, no cloud session
		// ingest or presence (network calls an offline run waits on)
		"KILO_NO_DAEMON=1", "KILO_DISABLE_SESSION_INGEST=1", "KILO_DISABLE_PRESENCE=1")
	return agentRun(t, o.Bin, args, o.Dir, append(env, o.Env...), o.Timeout)
}

// NativeBin is the platform binary an npm-installed OpenCode or Kilo
// launcher (node_modules/.bin/opencode, a Node script) would start, or bin
// itself when none is found. Tests run the binary directly: a timeout kills
// the process they started, where killing the launcher left its child
// running (seen with Kilo 7.7.7 under load).
func NativeBin(bin string) string {
	nm := filepath.Dir(filepath.Dir(bin)) // node_modules
	arch := runtime.GOARCH
	if arch == "amd64" {
		arch = "x64" // npm's name; the -baseline build (no AVX2) sorts after it
	}
	for _, pat := range []string{"opencode-" + runtime.GOOS + "-" + arch + "/bin/opencode", "opencode-*-*/bin/opencode", "@kilocode/cli/bin/.kilo"} {
		m, _ := filepath.Glob(filepath.Join(nm, pat))
		sort.Strings(m)
		for _, p := range m {
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 && filepath.Base(filepath.Dir(filepath.Dir(p))) != "opencode-ai" {
				return p
			}
		}
	}
	return bin
}

// OpenCodeDB is the SQLite store of tool ("opencode" or "kilo") under home.
func OpenCodeDB(home, tool string) string {
	if tool == "" {
		tool = "opencode"
	}
	return filepath.Join(home, ".local", "share", tool, tool+".db")
}
