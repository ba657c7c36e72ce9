package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"
)

// QwenOpts describes one headless `qwen` run.
type QwenOpts struct {
	Bin     string        // qwen executable; Install(t, "qwen") when empty
	Home    string        // HOME for the run (required)
	Dir     string        // project dir, the working directory (required)
	BaseURL string        // fake Chat Completions server (ChatServer.URL()); required
	Prompt  string        // the positional prompt; "Continue" when empty
	Args    []string      // extra arguments, e.g. "--continue"
	Env     []string      // extra KEY=VALUE entries; they override the defaults
	Timeout time.Duration // default and maximum AgentMaxTimeout
}

// RunQwen runs the real Qwen Code CLI headless, in YOLO mode unless Args
// set --approval-mode (`qwen --approval-mode yolo ARGS... PROMPT`), against the fake Chat
// Completions server with OpenAI auth (OPENAI_BASE_URL=URL()+"/v1", a dummy
// key). A non-zero exit is returned, not fatal.
func RunQwen(t testing.TB, o QwenOpts) AgentOutput {
	t.Helper()
	if o.Home == "" || o.Dir == "" || o.BaseURL == "" {
		t.Fatalf("e2e kit: RunQwen needs Home, Dir and BaseURL")
	}
	if o.Bin == "" {
		o.Bin = Install(t, "qwen")
	}
	prompt := o.Prompt
	if prompt == "" {
		prompt = "Continue"
	}
	args := append(slices.Clone(o.Args), prompt)
	if !slices.Contains(o.Args, "--approval-mode") {
		args = append([]string{"--approval-mode", "yolo"}, args...)
	}
	env := append(agentBaseEnv(o.Home),
		"OPENAI_API_KEY=test",
		"OPENAI_BASE_URL="+o.BaseURL+"/v1",
		"OPENAI_MODEL="+ChatModel,
		"QWEN_CODE_SUPPRESS_YOLO_WARNING=1",
	)
	return agentRun(t, o.Bin, args, o.Dir, append(env, o.Env...), o.Timeout)
}

// WriteQwenHooks writes home/.qwen/settings.json for an offline run: OpenAI
// auth, no telemetry, usage statistics or update checks, and one command hook
// per event (event name -> shell command), in Claude Code's layout. Keys
// already in the file are kept; the hooks object is replaced.
func WriteQwenHooks(home string, hooks map[string]string) error {
	path := filepath.Join(home, ".qwen", "settings.json")
	settings := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &settings); err != nil {
			return fmt.Errorf("%s is not valid JSON (%v); delete it and retry", path, err)
		}
	}
	settings["security"] = map[string]any{"auth": map[string]any{"selectedType": "openai"}}
	settings["privacy"] = map[string]any{"usageStatisticsEnabled": false}
	settings["telemetry"] = map[string]any{"enabled": false}
	settings["general"] = map[string]any{"enableAutoUpdate": false}
	// Qwen Code 0.24 migrates a settings file without "$version": 4 on its
	// first run (it adds the key): a user's file already has it.
	settings["$version"] = 4
	h := map[string]any{}
	keys := make([]string, 0, len(hooks))
	for k := range hooks {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, ev := range keys {
		h[ev] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": hooks[ev], "timeout": 30}}}}
	}
	settings["hooks"] = h
	b, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// QwenTranscripts lists the chat files under home/.qwen/projects, sorted.
func QwenTranscripts(home string) []string {
	m, _ := filepath.Glob(filepath.Join(home, ".qwen", "projects", "*", "chats", "*.jsonl"))
	sort.Strings(m)
	return m
}
