package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// AgentMaxTimeout caps how long one headless agent run may take. A real
// OpenCode run took 2m57s at load ~20 on 2 cores (issue 26), so 3 minutes was
// a flake on a busy CI machine; a hung run still ends well inside go test's
// 80-minute limit.
const AgentMaxTimeout = 5 * time.Minute

// GeminiOpts describes one headless `gemini` run.
type GeminiOpts struct {
	Bin     string        // gemini executable; Install(t, "gemini") when empty
	Home    string        // HOME for the run (required)
	Dir     string        // project dir, the working directory (required)
	BaseURL string        // fake server URL (GeminiServer.URL()); required
	Prompt  string        // passed with -p; "Continue" when empty
	Args    []string      // extra arguments, e.g. "--resume", "latest"
	Env     []string      // extra KEY=VALUE entries; they override the defaults
	Timeout time.Duration // default and maximum AgentMaxTimeout
}

// AgentOutput is what a headless agent run produced.
type AgentOutput struct {
	Stdout   string
	Stderr   string
	ExitCode int
}

// RunGemini runs the real Gemini CLI headless and in YOLO mode
// (`gemini --approval-mode yolo -p PROMPT ARGS...`) against the fake server,
// with a minimal environment (no variable of the test process leaks in
// besides the location of node). A non-zero exit is returned, not fatal;
// failing to start or a timeout is fatal.
func RunGemini(t testing.TB, o GeminiOpts) AgentOutput {
	t.Helper()
	if o.Home == "" || o.Dir == "" || o.BaseURL == "" {
		t.Fatalf("e2e kit: RunGemini needs Home, Dir and BaseURL")
	}
	if o.Bin == "" {
		o.Bin = Install(t, "gemini")
	}
	prompt := o.Prompt
	if prompt == "" {
		prompt = "Continue"
	}
	args := append([]string{"--approval-mode", "yolo", "-p", prompt}, o.Args...)
	env := append(agentBaseEnv(o.Home),
		"GEMINI_CLI_TRUST_WORKSPACE=true",
		"GEMINI_API_KEY=test",
		"GOOGLE_GEMINI_BASE_URL="+o.BaseURL,
		"GEMINI_CLI_NO_RELAUNCH=true",
	)
	return agentRun(t, o.Bin, args, o.Dir, append(env, o.Env...), o.Timeout)
}

// agentBaseEnv is the deterministic environment shared by agent runs: HOME
// and XDG dirs inside home, a PATH holding node and the system tools, and a
// dumb terminal.
func agentBaseEnv(home string) []string {
	path := "/usr/local/bin:/usr/bin:/bin"
	if node, err := exec.LookPath("node"); err == nil {
		if real, err := filepath.EvalSymlinks(node); err == nil {
			node = real
		}
		path = filepath.Dir(node) + ":" + path
	}
	return []string{
		"HOME=" + home,
		"PATH=" + path,
		"USER=e2e",
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
		"CI=1",
		"TZ=UTC",
		"TMPDIR=" + os.TempDir(),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"GIT_CONFIG_NOSYSTEM=1",
	}
}

// agentRun runs bin with stdin closed and returns its output.
func agentRun(t testing.TB, bin string, args []string, dir string, env []string, timeout time.Duration) AgentOutput {
	t.Helper()
	if timeout <= 0 || timeout > AgentMaxTimeout {
		timeout = AgentMaxTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = nil // /dev/null
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	err := cmd.Run()
	out := AgentOutput{Stdout: stdout.String(), Stderr: stderr.String()}
	failIfDiskFull(t, filepath.Base(bin), out.Stdout+out.Stderr)
	if ctx.Err() != nil {
		t.Fatalf("e2e kit: %s timed out after %s\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), timeout, out.Stdout, out.Stderr)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		out.ExitCode = ee.ExitCode()
	default:
		t.Fatalf("e2e kit: cannot run %s: %v", bin, err)
	}
	t.Logf("e2e kit: %s %q exited %d after %s", filepath.Base(bin), args, out.ExitCode, time.Since(start).Round(time.Millisecond))
	return out
}

// WriteGeminiHooks writes home/.gemini/settings.json for an offline run:
// API-key auth, no telemetry, usage statistics or update checks, and one
// command hook per event (event name -> shell command). Keys already in the
// file are kept; the hooks object is replaced.
func WriteGeminiHooks(home string, hooks map[string]string) error {
	path := filepath.Join(home, ".gemini", "settings.json")
	settings := map[string]any{}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &settings); err != nil {
			return fmt.Errorf("%s is not valid JSON (%v); delete it and retry", path, err)
		}
	}
	settings["security"] = map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}}
	settings["privacy"] = map[string]any{"usageStatisticsEnabled": false}
	settings["telemetry"] = map[string]any{"enabled": false}
	settings["general"] = map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false}
	h := map[string]any{}
	for _, ev := range geminiSortedKeys(hooks) {
		def := map[string]any{"hooks": []any{map[string]any{
			"name": "e2e-" + ev, "type": "command", "command": hooks[ev], "timeout": 30000,
		}}}
		if ev == "BeforeTool" || ev == "AfterTool" {
			def["matcher"] = ".*"
		}
		h[ev] = []any{def}
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

// GeminiTranscripts lists the session files under home/.gemini/tmp, sorted.
func GeminiTranscripts(home string) []string {
	m, _ := filepath.Glob(filepath.Join(home, ".gemini", "tmp", "*", "chats", "session-*.jsonl"))
	sort.Strings(m)
	return m
}

func geminiSortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
