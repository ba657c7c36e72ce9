package cmd

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryover/carryover/specs"
)

// pluginHooks reads the Claude Code plugin's hooks (.claude-plugin/).
func pluginHooks(t *testing.T) map[string]string {
	t.Helper()
	var manifest struct {
		Name  string `json:"name"`
		Hooks string `json:"hooks"`
	}
	readJSON(t, filepath.Join("..", ".claude-plugin", "plugin.json"), &manifest)
	if manifest.Name != "carryover" || manifest.Hooks == "" {
		t.Fatalf("plugin.json: %+v", manifest)
	}
	var doc struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	readJSON(t, filepath.Join("..", manifest.Hooks), &doc)
	out := map[string]string{}
	for ev, groups := range doc.Hooks {
		if len(groups) != 1 || len(groups[0].Hooks) != 1 || groups[0].Hooks[0].Type != "command" {
			t.Fatalf("%s: want one command hook, got %+v", ev, groups)
		}
		out[ev] = groups[0].Hooks[0].Command
	}
	return out
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestPluginHooksMatchInstall: the plugin wires exactly the events `carryover
// install` wires for the newest Claude Code row of specs/tools.toml, each
// running `carryover snapshot` for its event.
func TestPluginHooksMatchInstall(t *testing.T) {
	hooks := pluginHooks(t)
	tab, err := specs.Load()
	if err != nil {
		t.Fatal(err)
	}
	c, err := tab.Resolve("claude", "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, h := range c.Hooks() {
		want[h.Native] = true
		if !strings.Contains(hooks[h.Native], "exec carryover snapshot --tool claude --event "+h.Native+";") {
			t.Errorf("plugin hook for %s = %q", h.Native, hooks[h.Native])
		}
	}
	for ev := range hooks {
		if !want[ev] {
			t.Errorf("plugin wires %s, which install does not", ev)
		}
	}
	var market struct {
		Plugins []struct{ Name, Source string } `json:"plugins"`
	}
	readJSON(t, filepath.Join("..", ".claude-plugin", "marketplace.json"), &market)
	if len(market.Plugins) != 1 || market.Plugins[0].Name != "carryover" || market.Plugins[0].Source != "./" {
		t.Errorf("marketplace.json plugins = %+v", market.Plugins)
	}
}

// TestPluginHooksWithoutBinary: with no carryover on PATH, the session
// start hook says so once (Claude Code's systemMessage) and every other hook
// is silent; with one, each runs it with its event.
func TestPluginHooksWithoutBinary(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal("sh is needed: the plugin's hooks are sh commands")
	}
	empty := t.TempDir()
	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, "carryover"), []byte("#!/bin/sh\necho \"ran $*\"\n"), 0o755)
	for ev, command := range pluginHooks(t) {
		for _, path := range []string{empty, bin} {
			cmd := exec.Command(sh, "-c", command)
			cmd.Env = []string{"PATH=" + path}
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("%s with PATH=%s: %v", ev, path, err)
			}
			switch {
			case path == bin:
				if want := "ran snapshot --tool claude --event " + ev + "\n"; string(out) != want {
					t.Errorf("%s: %q, want %q", ev, out, want)
				}
			case ev == "SessionStart":
				var m map[string]string
				if json.Unmarshal(out, &m) != nil || !strings.Contains(m["systemMessage"], "the carryover binary is not on PATH") {
					t.Errorf("SessionStart without the binary: %q", out)
				}
			case len(out) > 0:
				t.Errorf("%s without the binary printed %q", ev, out)
			}
		}
	}
}
