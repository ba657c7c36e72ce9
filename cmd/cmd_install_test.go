package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/publish/config"
	"github.com/carryover/carryover/publish/service"
	"github.com/carryover/carryover/specs/hookconf"
	"github.com/pelletier/go-toml/v2"
)

const installExe = "/opt/carryover/bin/carryover"

type installFixture struct {
	home, bin string
	env       *Env
	out, errb *bytes.Buffer
}

// newInstallFixture makes a temp HOME and a PATH holding fake agents that
// print the given version output.
func newInstallFixture(t *testing.T, agents map[string]string) *installFixture {
	t.Helper()
	root := t.TempDir()
	f := &installFixture{home: filepath.Join(root, "home"), bin: filepath.Join(root, "bin"), out: &bytes.Buffer{}, errb: &bytes.Buffer{}}
	for _, d := range []string{f.home, f.bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, output := range agents {
		script := "#!/bin/sh\nprintf '%s' '" + output + "'\n"
		if err := os.WriteFile(filepath.Join(f.bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	vars := map[string]string{"HOME": f.home, "PATH": f.bin}
	f.env = &Env{
		Stdin: strings.NewReader(""), Stdout: f.out, Stderr: f.errb,
		Getenv:     func(k string) string { return vars[k] },
		Now:        func() time.Time { return time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC) },
		Executable: installExe,
	}
	return f
}

func (f *installFixture) run(t *testing.T, args ...string) int {
	t.Helper()
	f.out.Reset()
	f.errb.Reset()
	return Main(append([]string{"carryover"}, args...), f.env)
}

func (f *installFixture) savedTools(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.home, ".carryover", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Tools []string `toml:"tools"`
	}
	if err := toml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c.Tools
}

var fakeAgents = map[string]string{
	"claude": `2.1.197 (Claude Code)\n`,
	"codex":  `codex-cli 9.0.0\n`, // newer than every row
	"aider":  `aider 0.86.1\n`,
}

func TestInstallRefreshUninstall(t *testing.T) {
	f := newInstallFixture(t, fakeAgents)
	if code := f.run(t, "install", "--yes"); code != 0 {
		t.Fatalf("install exit %d\nstdout:\n%s\nstderr:\n%s", code, f.out, f.errb)
	}
	out := f.out.String()
	for _, want := range []string{
		"ok       Claude Code 2.1.197: 8 hooks",
		"warning  Codex CLI 9.0.0 is newer than the versions carryover knows",
		"ok       Codex CLI 9.0.0: 7 hooks",
		"ok       Aider 0.86.1: no hooks",
		"projects: the handoff lives in <project>/.carryover/", "`carryover config set pointer never` turns it off",
		"saved    tools = [", // what it wrote under $CARRYOVER_HOME, too
	} {
		if !strings.Contains(out, want) {
			t.Errorf("install output lacks %q:\n%s", want, out)
		}
	}
	// What the hook needs to decide on the pointer block (issue 24).
	var recs map[string]service.AgentRecord
	b, _ := os.ReadFile(filepath.Join(f.env.Home(), service.AgentsFile))
	_ = json.Unmarshal(b, &recs)
	if !recs["aider"].Pointer || recs["claude"].Pointer || recs["claude"].Version != "2.1.197" {
		t.Errorf("agents.json = %+v", recs)
	}
	if got := f.savedTools(t); !slices.Equal(got, []string{"claude", "codex", "aider"}) {
		t.Errorf("saved tools = %v", got)
	}
	settings, err := os.ReadFile(filepath.Join(f.home, ".claude", "settings.json"))
	if err != nil || !strings.Contains(string(settings), `"\"/opt/carryover/bin/carryover\" snapshot --tool claude --event Stop"`) {
		t.Errorf("claude settings = %s, %v", settings, err)
	}
	if b, err := os.ReadFile(filepath.Join(f.home, ".codex", "config.toml")); err != nil || !strings.Contains(string(b), "trusted_hash") {
		t.Errorf("codex config.toml = %s, %v", b, err)
	}

	// status: hooks present for detected agents
	for _, a := range agentStatus(f.env) {
		switch a.Tool {
		case "claude", "codex":
			if a.Hooks.State != hookconf.StatePresent {
				t.Errorf("agentStatus %s = %+v; want present", a.Tool, a.Hooks)
			}
		case "gemini":
			if a.Detected() || a.Hooks.State != hookconf.StateMissing {
				t.Errorf("agentStatus gemini = %+v", a)
			}
		case "aider":
			if a.Hooks.State != hookconf.StateNoHooks {
				t.Errorf("agentStatus aider = %+v", a.Hooks)
			}
		}
	}

	// refresh with nothing changed writes nothing
	if code := f.run(t, "refresh"); code != 0 || !strings.Contains(f.out.String(), "hooks up to date") {
		t.Errorf("refresh exit %d:\n%s%s", code, f.out, f.errb)
	}

	// a selected agent that is not installed is skipped honestly
	if code := f.run(t, "install", "--tools", "gemini,claude", "--dry-run"); code != 0 {
		t.Errorf("install --tools exit %d: %s", code, f.errb)
	}
	if !strings.Contains(f.out.String(), "skipped  Gemini CLI: selected but not detected") || !strings.Contains(f.out.String(), "would    save tools = [") {
		t.Errorf("missing skipped line:\n%s", f.out)
	}

	if code := f.run(t, "uninstall", "--dry-run"); code != 0 || !strings.Contains(f.out.String(), "--- ") {
		t.Errorf("uninstall --dry-run exit %d:\n%s", code, f.out)
	}
	if code := f.run(t, "uninstall"); code != 0 {
		t.Fatalf("uninstall exit %d: %s", code, f.errb)
	}
	for _, p := range []string{".claude/settings.json", ".codex/hooks.json", ".codex/config.toml"} {
		if _, err := os.Stat(filepath.Join(f.home, p)); err == nil {
			t.Errorf("%s still exists after uninstall (install created it)", p)
		}
	}
}

func TestInstallNothingDetected(t *testing.T) {
	f := newInstallFixture(t, nil)
	if code := f.run(t, "install", "--yes"); code != ExitError || !strings.Contains(f.errb.String(), "no agents detected") {
		t.Errorf("exit %d, stderr %q; want ExitError with a hint", code, f.errb)
	}
}

func TestInstallTTYToggle(t *testing.T) {
	f := newInstallFixture(t, fakeAgents)
	f.env.StdinTTY, f.env.StdoutTTY = true, true
	f.env.Stdin = strings.NewReader("1 x\n\n") // toggle Claude off
	if code := f.run(t, "install"); code != 0 {
		t.Fatalf("exit %d: %s", code, f.errb)
	}
	out := f.out.String()
	if !strings.Contains(out, "1 [x] Claude Code 2.1.197 detected") || !strings.Contains(out, "[ ] Gemini CLI not detected") ||
		!strings.Contains(out, "1 [ ] Claude Code") || !strings.Contains(out, `ignored "x"`) {
		t.Errorf("prompt output:\n%s", out)
	}
	if got := f.savedTools(t); !slices.Equal(got, []string{"codex", "aider"}) {
		t.Errorf("saved tools = %v", got)
	}
	if _, err := os.Stat(filepath.Join(f.home, ".claude", "settings.json")); err == nil {
		t.Errorf("claude configured although deselected")
	}
}

func TestSaveToolSelectionKeepsOtherKeys(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.toml")
	tests := []struct{ before, want string }{
		{"", "tools = [\"claude\"]\n"},
		{"resume = \"ask\"", "resume = \"ask\"\ntools = [\"claude\"]\n"},
		{"# mine\nresume = \"ask\"\n\n[x]\ny = 1\n", "# mine\nresume = \"ask\"\n\ntools = [\"claude\"]\n\n[x]\ny = 1\n"},
		{"tools = [\n  \"codex\",\n] # picked\nredact = false\n", "tools = [\"claude\"] # picked\nredact = false\n"},
	}
	for _, tt := range tests {
		if tt.before != "" {
			if err := os.WriteFile(p, []byte(tt.before), 0o600); err != nil {
				t.Fatal(err)
			}
		} else {
			os.Remove(p)
		}
		if err := config.SetKeyInFile(p, "tools", config.Strings([]string{"claude"}), 0o600); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(p)
		if string(got) != tt.want {
			t.Errorf("tools = [claude] over %q = %q; want %q", tt.before, got, tt.want)
		}
	}
}

// TestPurgeHomeCountsWhatItLeft: an entry of carryover's home that
// `uninstall --purge --yes` cannot delete is reported and makes the
// command fail (it exited 0: purgeHome's count was always 0).
func TestPurgeHomeCountsWhatItLeft(t *testing.T) {
	home := t.TempDir()
	ch := filepath.Join(home, ".carryover")
	os.MkdirAll(filepath.Join(ch, "run"), 0o700)
	os.WriteFile(filepath.Join(ch, "config.toml"), []byte("# mine\n"), 0o600)
	defer func(f func(string) error) { removeAll = f }(removeAll)
	removeAll = func(p string) error {
		if filepath.Base(p) == "run" {
			return os.ErrPermission
		}
		return os.RemoveAll(p)
	}
	var out, errb bytes.Buffer
	vars := map[string]string{"HOME": home, "CARRYOVER_HOME": ch}
	e := &Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }, Now: time.Now, WorkDir: home}
	if code := Main([]string{"carryover", "uninstall", "--purge", "--yes"}, e); code != ExitError {
		t.Errorf("exit %d, want %d\n%s%s", code, ExitError, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "left alone "+filepath.Join(ch, "run")) {
		t.Errorf("the entry left is not reported:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(ch, "config.toml")); !os.IsNotExist(err) {
		t.Errorf("config.toml was not deleted: %v", err)
	}
}
