// The e2e kit (kit_*_test.go) installs the real agent CLIs at pinned versions and runs
// them offline against fake model servers, for carryover's end-to-end tests.
package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Agent describes one npm-installed agent CLI at a pinned version.
type Agent struct {
	Tool    string // carryover's name for it: claude, codex, gemini, copilot-cli
	Package string // npm package
	Version string // pinned version
	Bin     string // executable name in node_modules/.bin
}

// Pinned are the agent versions the end-to-end tests run. Bump a version here
// and in specs/ together.
var Pinned = map[string]Agent{
	"claude":      {"claude", "@anthropic-ai/claude-code", "2.1.197", "claude"},
	"codex":       {"codex", "@openai/codex", "0.169.0", "codex"},
	"gemini":      {"gemini", "@google/gemini-cli", "0.61.0", "gemini"},
	"copilot-cli": {"copilot-cli", "@github/copilot", "1.0.102", "copilot"},
	"qwen":        {"qwen", "@qwen-code/qwen-code", "0.24.4", "qwen"},
	// pi and cline: also the newest on npm on 2026-11-27 (`npm view … version`)
	"pi":       {"pi", "@mariozechner/pi-coding-agent", "0.73.1", "pi"},
	"cline":    {"cline", "cline", "3.0.65", "cline"},
	"opencode": {"opencode", "opencode-ai", "1.18.30", "opencode"},
	// 7.8.1 does not install (its Linux binary package is missing on npm).
	"kilo": {"kilo", "@kilocode/cli", "7.7.7", "kilo"},
}

// Newest are the newest releases on npm when this table was last checked
// (2026-11-27), for the tools whose newest differs from Pinned. The
// newest-release tests (TestNewestReleases) run the core scenario against
// them, so a format or hook change in a release users already have shows up
// as a failing test, not as a silent gap. Pinned, not "latest": a CI run must
// not change its meaning overnight. Refresh both with `npm view <pkg> version`.
var Newest = map[string]Agent{
	"claude":   {"claude", "@anthropic-ai/claude-code", "2.1.332", "claude"},
	"codex":    {"codex", "@openai/codex", "0.171.0", "codex"},
	"opencode": {"opencode", "opencode-ai", "1.18.33", "opencode"},
}

// CacheDir is where agents are installed: $CARRYOVER_AGENT_CACHE, else
// the user cache dir's carryover-e2e folder.
func CacheDir() string {
	if d := os.Getenv("CARRYOVER_AGENT_CACHE"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "carryover-e2e")
}

var installMu sync.Mutex

// Install returns the absolute path of the pinned agent binary, installing it
// from npm into CacheDir on first use. It never skips: when npm is missing or
// the registry cannot be reached the test fails with the reason.
func Install(t testing.TB, tool string) string {
	t.Helper()
	p, err := InstallPath(tool)
	if err != nil {
		t.Fatalf("e2e kit: %v", err)
	}
	return p
}

// InstallAgent is Install for an explicit Agent (Pinned or Newest).
func InstallAgent(t testing.TB, a Agent) string {
	t.Helper()
	p, err := installAgent(a)
	if err != nil {
		t.Fatalf("e2e kit: %v", err)
	}
	return p
}

// InstallPath is Install without a testing.TB.
func InstallPath(tool string) (string, error) {
	a, ok := Pinned[tool]
	if !ok {
		return "", fmt.Errorf("no pinned agent %q", tool)
	}
	return installAgent(a)
}

// agentBin is where a's executable is once installed.
func agentBin(a Agent) string {
	return filepath.Join(CacheDir(), strings.ReplaceAll(a.Package, "/", "_")+"@"+a.Version, "node_modules", ".bin", a.Bin)
}

// installDir is the npm prefix an agent binary bin (from Install) lives in:
// <dir>/node_modules/.bin/<name>.
func installDir(bin string) string {
	return filepath.Dir(filepath.Dir(filepath.Dir(bin)))
}

func installAgent(a Agent) (string, error) {
	installMu.Lock()
	defer installMu.Unlock()
	bin := agentBin(a)
	dir := installDir(bin)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Serialise installs across test processes (go test runs packages in parallel).
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("npm is not on PATH; install Node.js and npm to run the end-to-end tests (needed for %s@%s)", a.Package, a.Version)
	}
	cmd := exec.Command(npm, "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", dir, a.Package+"@"+a.Version)
	// npm's tarball cache beside the installs, not in ~/.npm: the suite
	// writes nowhere but its temp dirs and CacheDir.
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false", "npm_config_cache="+filepath.Join(CacheDir(), "npm-cache"))
	out, err := cmd.CombinedOutput()
	if err != nil && bytes.Contains(out, []byte("ENOSPC")) {
		return "", diskError(fmt.Errorf("npm install %s@%s: %w", a.Package, a.Version, syscall.ENOSPC), dir)
	}
	if err != nil {
		return "", fmt.Errorf("npm install %s@%s failed (is the npm registry reachable?): %v\n%s", a.Package, a.Version, err, out)
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("npm installed %s@%s but %s is missing", a.Package, a.Version, bin)
	}
	return bin, nil
}
