package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"
)

// PiOpts describes one headless `pi -p` run.
type PiOpts struct {
	Bin     string        // pi executable; Install(t, "pi") when empty
	Home    string        // HOME for the run (required)
	Dir     string        // project dir, the working directory (required)
	BaseURL string        // fake Chat Completions server (ChatServer.URL()); required
	Prompt  string        // the prompt; "Continue" when empty
	Args    []string      // extra arguments
	Timeout time.Duration // default and maximum AgentMaxTimeout
}

// RunPi runs the real Pi CLI headless (`pi --model fake/<ChatModel> -p
// PROMPT`) against the fake Chat Completions server, declared as a custom
// provider in home/.pi/agent/models.json (overwritten on every run, since
// each run has its own server). Pi runs its tools without asking. A
// non-zero exit is returned, not fatal.
func RunPi(t testing.TB, o PiOpts) AgentOutput {
	t.Helper()
	if o.Home == "" || o.Dir == "" || o.BaseURL == "" {
		t.Fatalf("e2e kit: RunPi needs Home, Dir and BaseURL")
	}
	if o.Bin == "" {
		o.Bin = Install(t, "pi")
	}
	models := map[string]any{"providers": map[string]any{"fake": map[string]any{
		"baseUrl": o.BaseURL + "/v1", "api": "openai-completions", "apiKey": "test",
		// the fake speaks plain Chat Completions: system role, no reasoning_effort
		"compat": map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false},
		"models": []any{map[string]any{"id": ChatModel}},
	}}}
	b, _ := json.Marshal(models)
	dir := filepath.Join(o.Home, ".pi", "agent")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "models.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	prompt := o.Prompt
	if prompt == "" {
		prompt = "Continue"
	}
	args := append([]string{"--model", "fake/" + ChatModel}, slices.Clone(o.Args)...)
	args = append(args, "-p", prompt)
	env := append(agentBaseEnv(o.Home), "PI_OFFLINE=1")
	return agentRun(t, o.Bin, args, o.Dir, env, o.Timeout)
}

// PiTranscripts lists home's Pi session files, sorted.
func PiTranscripts(home string) []string {
	m, _ := filepath.Glob(filepath.Join(home, ".pi", "agent", "sessions", "*", "*.jsonl"))
	sort.Strings(m)
	return m
}
