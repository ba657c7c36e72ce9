package specs

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/carryover/carryover/adapters"
)

func mustLoad(t *testing.T) *Table {
	t.Helper()
	tab, err := Load()
	if err != nil {
		t.Fatalf("Load() = %v", err)
	}
	return tab
}

func TestLoadHasEveryTool(t *testing.T) {
	tab := mustLoad(t)
	var got []string
	for _, tl := range tab.Tools() {
		got = append(got, tl.Name)
	}
	if !slices.Equal(got, Names()) {
		t.Errorf("Tools() = %v; want %v", got, Names())
	}
	// Table order is display order: the same as adapters.All.
	var all []string
	for _, a := range adapters.All {
		all = append(all, a.Name)
	}
	if !slices.Equal(got, all) {
		t.Errorf("tools.toml order %v; adapters.All order %v", got, all)
	}
}

func TestRowsDoNotOverlap(t *testing.T) {
	for _, tl := range mustLoad(t).Tools() {
		for i, a := range tl.Rows {
			for j, b := range tl.Rows {
				if i == j {
					continue
				}
				// overlap if a.min < b.max and b.min < a.max
				aBelowB := a.max != nil && !a.max.GreaterThan(b.min)
				bBelowA := b.max != nil && !b.max.GreaterThan(a.min)
				if !aBelowB && !bBelowA {
					t.Errorf("%s: rows %s (%s) and %s (%s) overlap", tl.Name, a.ID, a.Versions, b.ID, b.Versions)
				}
			}
		}
	}
}

func TestEveryToolHasFallback(t *testing.T) {
	tab := mustLoad(t)
	for _, tl := range tab.Tools() {
		c, err := tab.Resolve(tl.Name, "999.0.0")
		if err != nil {
			t.Errorf("Resolve(%q, 999.0.0) = %v; want the newest row", tl.Name, err)
			continue
		}
		newest := tl.Rows[len(tl.Rows)-1]
		if c.Row != newest.ID {
			t.Errorf("Resolve(%q, 999.0.0).Row = %s; want %s", tl.Name, c.Row, newest.ID)
		}
		if newest.max != nil && (!c.Fallback || c.Warning == "") {
			t.Errorf("Resolve(%q, 999.0.0) = %+v; want Fallback with a warning", tl.Name, c)
		}
	}
}

// TestAgentsAgreeWithTable: every tool's envelope comes from its adapter
// descriptor and wraps; every hook event of every row has a meaning in the
// descriptor (an unknown event would be treated as "publish if changed").
func TestAgentsAgreeWithTable(t *testing.T) {
	tab := mustLoad(t)
	for _, tl := range tab.Tools() {
		a, ok := adapters.ByName(tl.Name)
		if !ok {
			t.Fatalf("%s: no adapter", tl.Name)
		}
		if tl.Display != a.Display {
			t.Errorf("%s: display %q; descriptor says %q", tl.Name, tl.Display, a.Display)
		}
		for _, r := range tl.Rows {
			c, err := tab.Resolve(tl.Name, r.Tested)
			if err != nil {
				t.Fatal(err)
			}
			if c.Envelope != a.Envelope && len(c.InjectEvents) > 0 {
				t.Errorf("%s: capability envelope %q; descriptor says %q", tl.Name, c.Envelope, a.Envelope)
			}
			if _, err := adapters.Wrap(c.Envelope, "SessionStart", "x"); err != nil {
				t.Errorf("%s row %s: adapters.Wrap: %v", tl.Name, r.ID, err)
			}
			for _, h := range c.Hooks() {
				if a.Class(h.Native) == adapters.ClassOther {
					t.Errorf("%s row %s: event %s has no class in the adapter's Events", tl.Name, r.ID, h.Native)
				}
			}
		}
	}
}

func TestAiderHasNoHooks(t *testing.T) {
	c, err := mustLoad(t).Resolve("aider", "0.86.1")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Hooks()) != 0 || c.Envelope != adapters.EnvelopeNone {
		t.Errorf("aider capability = %+v; want no hooks, envelope none", c)
	}
}

func TestParseVersion(t *testing.T) {
	tab := mustLoad(t)
	tests := []struct {
		tool, out, want string
	}{
		{"claude", "2.1.197 (Claude Code)\n", "2.1.197"},
		{"codex", "codex-cli 0.169.0\n", "0.169.0"},
		{"codex", "codex-cli 0.170.0-alpha.2\n", "0.170.0-alpha.2"},
		{"gemini", "0.61.0\n", "0.61.0"},
		{"gemini", "0.62.0-nightly.20261120.abc\n", "0.62.0-nightly.20261120.abc"},
		{"copilot-cli", "GitHub Copilot CLI 1.0.102.\nRun 'copilot update' to check for updates.\n", "1.0.102"},
		{"copilot-cli", "GitHub Copilot CLI 1.0.102\n\nUpdate check skipped because offline mode is enabled.\n", "1.0.102"},
		{"cursor", "3.18.25\n0123abcd\nx64\n", "3.18.25"},
		{"vscode-copilot", "1.110.1\ne3a5acfb517a443235981655413d566533107e92\nx64\n", "1.110.1"},
		{"windsurf", "1.12.4\nabc\nx64\n", "1.12.4"},
		{"aider", "aider 0.86.1\n", "0.86.1"},
	}
	for _, tt := range tests {
		tl, _ := tab.Tool(tt.tool)
		got, err := ParseVersion(tl, tt.out)
		if err != nil || got != tt.want {
			t.Errorf("ParseVersion(%s, %q) = %q, %v; want %q", tt.tool, tt.out, got, err, tt.want)
		}
	}
	for _, bad := range []struct{ tool, out string }{
		{"claude", "command not found"},
		{"codex", "0.169.0"},
		{"copilot-cli", "secret-token-xyz"},
		{"gemini", ""},
	} {
		tl, _ := tab.Tool(bad.tool)
		_, err := ParseVersion(tl, bad.out)
		if err == nil {
			t.Errorf("ParseVersion(%s, %q) = nil error; want one", bad.tool, bad.out)
		} else if bad.out != "" && strings.Contains(err.Error(), bad.out) {
			t.Errorf("ParseVersion error %q quotes the output", err)
		}
	}
}

func TestResolve(t *testing.T) {
	tab := mustLoad(t)
	tests := []struct {
		tool, version string
		row           string
		fallback      bool
		err           error
	}{
		{"claude", "2.1.197", "claude-2.1.197", false, nil},
		{"claude", "2.1.100", "claude-2.1", false, nil},
		{"claude", "2.0.5", "claude-1", false, nil},
		{"claude", "1.0.0", "claude-1", false, nil},
		{"claude", "0.2.9", "", false, ErrUnsupportedVersion},
		{"claude", "3.0.0", "claude-2.1.197", true, nil},
		{"claude", "3.0.0-beta.1", "claude-2.1.197", true, nil},
		{"claude", "", "claude-2.1.197", true, nil},
		{"codex", "0.169.0", "codex-0.169", false, nil},
		{"codex", "0.200.1", "codex-0.169", false, nil},
		{"codex", "0.120.0", "", false, ErrUnsupportedVersion},
		{"codex", "1.2.0", "codex-0.169", true, nil},
		{"gemini", "0.61.0", "gemini-0.39", false, nil},
		{"copilot-cli", "1.0.102", "copilot-cli-1", false, nil},
		{"cursor", "2.4.0", "cursor-1.7", false, nil},
		{"cursor", "3.18.25", "cursor-3", false, nil},
		{"cursor", "1.6.0", "", false, ErrUnsupportedVersion},
		{"vscode-copilot", "1.109.0", "", false, ErrUnsupportedVersion},
		{"vscode-copilot", "1.137.0", "vscode-1.110", false, nil},
		{"windsurf", "1.12.4", "windsurf-1", false, nil},
		{"aider", "0.86.1", "aider", false, nil},
		{"nope", "1.0.0", "", false, ErrUnknownTool},
	}
	for _, tt := range tests {
		c, err := tab.Resolve(tt.tool, tt.version)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("Resolve(%q, %q) err = %v; want %v", tt.tool, tt.version, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Resolve(%q, %q) = %v", tt.tool, tt.version, err)
			continue
		}
		if c.Row != tt.row || c.Fallback != tt.fallback || (c.Fallback != (c.Warning != "")) {
			t.Errorf("Resolve(%q, %q) = row %s fallback %v warning %q; want row %s fallback %v", tt.tool, tt.version, c.Row, c.Fallback, c.Warning, tt.row, tt.fallback)
		}
		if c.Version != tt.version || c.Tool != tt.tool {
			t.Errorf("Resolve(%q, %q) = %+v; want Tool/Version echoed", tt.tool, tt.version, c)
		}
	}
}

func TestHooksUnion(t *testing.T) {
	c, err := mustLoad(t).Resolve("claude", "2.1.197")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, h := range c.Hooks() {
		names = append(names, h.Native)
	}
	want := []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop", "StopFailure", "PreCompact", "SessionEnd"}
	if !slices.Equal(names, want) {
		t.Errorf("Hooks() = %v; want %v", names, want)
	}
}

func TestParseRejectsBadTables(t *testing.T) {
	good := string(toolsTOML)
	tests := []struct{ name, table string }{
		{"unknown key", strings.Replace(good, `binaries = ["aider"]`, "binaries = [\"aider\"]\ncolour = \"red\"", 1)},
		{"envelope is the adapter's", strings.Replace(good, `tested = "2.1.332"`, "tested = \"2.1.197\"\n  envelope = \"flat-snake\"", 1)},
		{"no hook_file", strings.Replace(good, `hook_file = { shape = "flat", command_keys = ["command", "powershell"]`, `no_hook_file = { shape = "flat", command_keys = ["command", "powershell"]`, 1)},
		{"unknown shape", strings.Replace(good, `shape = "flat"`, `shape = "nested"`, 1)},
		{"unknown placeholder", strings.Replace(good, `"timeout=$timeout_ms"`, `"timeout=$timeout_us"`, 1)},
		{"no command", strings.Replace(good, `"bash=$command"`, `"bash=echo"`, 1)},
		{"command key", strings.Replace(good, `"bash=$command"`, `"sh=$command"`, 1)},
		{"inject not a start", strings.Replace(good, `{ native = "SessionStart", timeout = 10 },`, `{ native = "Stop", timeout = 10 },`, 1)},
		{"overlap", strings.Replace(good, `versions = ">= 1.0.0, < 2.1.0"`, `versions = ">= 1.0.0, < 2.2.0"`, 1)},
		{"missing tool", strings.Replace(good, `name = "windsurf"`, `name = "surfboard"`, 1)},
		{"open row not last", strings.Replace(good, `versions = ">= 1.0.0, < 2.1.0"`, `versions = ">= 1.0.0"`, 1)},
		{"tested outside", strings.Replace(good, `tested = "2.1.332"`, `tested = "3.0.1"`, 1)},
		{"warning without key", strings.Replace(good, `{ key = "cleanupPeriodDays",`, `{ key = "",`, 1)},
		{"warning with an unknown field", strings.Replace(good, `{ key = "cleanupPeriodDays",`, `{ when = "x", key = "cleanupPeriodDays",`, 1)},
		// whole hook files (whole.go)
		{"whole file in a project", strings.Replace(good, `"${PI_CODING_AGENT_DIR:-~/.pi/agent}/extensions/carryover.ts"`, `".pi/extensions/carryover.ts"`, 1)},
		{"whole template missing", strings.Replace(good, `template = "pi-extension.ts"`, `template = "nope.ts"`, 1)},
		{"whole template outside hookfiles", strings.Replace(good, `template = "pi-extension.ts"`, `template = "../tools.toml"`, 1)},
		{"whole mode writable by others", strings.Replace(good, `mode = 0o755 }`, `mode = 0o777 }`, 1)},
		{"whole mode unreadable", strings.Replace(good, `mode = 0o644 }`, `mode = 0o200 }`, 1)},
		{"whole with a handler", strings.Replace(good, `shape = "whole", template = "cline-hook.sh"`, `shape = "whole", handler = ["command=$command"], template = "cline-hook.sh"`, 1)},
		{"template of a flat file", strings.Replace(good, `shape = "flat", command_keys = ["command", "powershell"]`, `shape = "flat", template = "cline-hook.sh", command_keys = ["command", "powershell"]`, 1)},
		{"event slot not the file name", strings.Replace(good, `/extensions/carryover.ts"`, `/extensions/{{event}}.ts"`, 1)},
		{"one file for a per-event template", strings.Replace(good, `template = "pi-extension.ts"`, `template = "cline-hook.sh"`, 1)},
	}
	for _, tt := range tests {
		if tt.table == good {
			t.Fatalf("%s: replacement did not apply", tt.name)
		}
		if _, err := parse([]byte(tt.table)); err == nil {
			t.Errorf("parse(%s) = nil error; want one", tt.name)
		}
	}
}

func TestConfigPath(t *testing.T) {
	tab := mustLoad(t)
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	none := env(nil)
	tests := []struct {
		tool, goos string
		getenv     func(string) string
		exists     func(string) bool
		want       string
	}{
		{"claude", "linux", none, nil, "/home/u/.claude/settings.json"},
		{"claude", "linux", env(map[string]string{"CLAUDE_CONFIG_DIR": "/cfg/claude"}), nil, "/cfg/claude/settings.json"},
		{"codex", "darwin", env(map[string]string{"CODEX_HOME": "/x/codex"}), nil, "/x/codex/hooks.json"},
		{"gemini", "linux", env(map[string]string{"GEMINI_CLI_HOME": "/g"}), nil, "/g/.gemini/settings.json"},
		{"gemini", "linux", none, nil, "/home/u/.gemini/settings.json"},
		{"copilot-cli", "linux", env(map[string]string{"COPILOT_HOME": "/c"}), nil, "/c/hooks/carryover.json"},
		{"cursor", "windows", none, nil, `\home\u\.cursor\hooks.json`},
		{"windsurf", "linux", none, nil, "/home/u/.codeium/windsurf/hooks.json"},
		{"vscode-copilot", "linux", none, nil, "/home/u/.copilot/hooks/carryover-vscode.json"},
		{"aider", "linux", none, nil, ""},
	}
	for _, tt := range tests {
		tl, _ := tab.Tool(tt.tool)
		if got := tl.ConfigPath(tt.goos, tt.getenv, "/home/u", tt.exists); got != tt.want {
			t.Errorf("%s.ConfigPath(%s) = %q; want %q", tt.tool, tt.goos, got, tt.want)
		}
	}
	codex, _ := tab.Tool("codex")
	if got := codex.TrustPath("linux", none, "/home/u", nil); got != "/home/u/.codex/config.toml" {
		t.Errorf("codex.TrustPath = %q", got)
	}
	vs, _ := tab.Tool("vscode-copilot")
	if got := vs.TranscriptPaths("windows", env(map[string]string{"APPDATA": `C:\Users\u\AppData\Roaming`}), `C:\Users\u`); !slices.Equal(got, []string{`C:\Users\u\AppData\Roaming\Code\User\workspaceStorage`}) {
		t.Errorf("vscode TranscriptPaths(windows) = %q", got)
	}
	if got := vs.TranscriptPaths("windows", none, `C:\Users\u`); len(got) != 0 {
		t.Errorf("vscode TranscriptPaths(windows, no APPDATA) = %q; want none", got)
	}
}

func TestConfigPathPrefersExisting(t *testing.T) {
	tl := Tool{Config: PathSet{All: []string{"${A}/x.json", "~/first.json", "~/second.json"}}}
	exists := func(p string) bool { return p == "/h/second.json" }
	if got := tl.ConfigPath("linux", nil, "/h", exists); got != "/h/second.json" {
		t.Errorf("ConfigPath = %q; want the existing candidate", got)
	}
	if got := tl.ConfigPath("linux", nil, "/h", nil); got != "/h/first.json" {
		t.Errorf("ConfigPath = %q; want the first usable candidate", got)
	}
}

// TestNeedsPointer: the pointer block is needed exactly where the handoff
// cannot count on a session-start injection (issue 24): no start inject
// hook (Aider, Windsurf, Cursor 1.7) or one marked unreliable (Cursor 3).
func TestNeedsPointer(t *testing.T) {
	tab, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool, version string
		want          bool
	}{
		{"claude", "2.1.197", false}, {"claude", "1.0.0", false}, {"codex", "0.169.0", false}, {"gemini", "0.61.0", false},
		{"copilot-cli", "1.0.102", false}, {"vscode-copilot", "1.110.0", false},
		{"cursor", "1.7.0", true}, {"cursor", "3.18.25", true}, {"windsurf", "1.0.0", true}, {"aider", "0.86.3", true},
		{"pi", "0.73.1", false}, {"cline", "3.0.65", true},
	} {
		c, err := tab.Resolve(tc.tool, tc.version)
		if err != nil {
			t.Fatal(err)
		}
		if c.NeedsPointer != tc.want {
			t.Errorf("%s %s: NeedsPointer = %v, want %v", tc.tool, tc.version, c.NeedsPointer, tc.want)
		}
		// Cursor 3 injects at start (some builds drop it): pointer, and start injection
		if start := tc.tool == "cursor" && tc.version != "1.7.0"; c.StartInjection != (!tc.want || start) {
			t.Errorf("%s %s: StartInjection = %v", tc.tool, tc.version, c.StartInjection)
		}
	}
}
