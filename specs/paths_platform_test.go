package specs

import (
	"slices"
	"testing"
)

// TestStorePathsWindowsMacOS: every agent's hook config, trust file and
// session stores on Windows (a drive-letter home, %APPDATA%, backslashes)
// and macOS (~/Library/Application Support), resolved from the table alone,
// so a Linux CI checks them.
func TestStorePathsWindowsMacOS(t *testing.T) {
	tab := mustLoad(t)
	type want struct {
		config, trust string
		stores        []string
	}
	winEnv := map[string]string{"APPDATA": `C:\Users\u\AppData\Roaming`}
	cases := []struct {
		goos, home string
		env        map[string]string
		want       map[string]want
	}{
		{"windows", `C:\Users\u`, winEnv, map[string]want{
			"claude":         {`C:\Users\u\.claude\settings.json`, "", []string{`C:\Users\u\.claude\projects`}},
			"codex":          {`C:\Users\u\.codex\hooks.json`, `C:\Users\u\.codex\config.toml`, []string{`C:\Users\u\.codex\sessions`}},
			"gemini":         {`C:\Users\u\.gemini\settings.json`, "", []string{`C:\Users\u\.gemini\tmp`}},
			"copilot-cli":    {`C:\Users\u\.copilot\hooks\carryover.json`, "", []string{`C:\Users\u\.copilot\session-state`}},
			"cursor":         {`C:\Users\u\.cursor\hooks.json`, "", []string{`C:\Users\u\.cursor\projects`, `C:\Users\u\.cursor\chats`, `C:\Users\u\AppData\Roaming\Cursor\User`}},
			"vscode-copilot": {`C:\Users\u\.copilot\hooks\carryover-vscode.json`, "", []string{`C:\Users\u\AppData\Roaming\Code\User\workspaceStorage`}},
			"windsurf":       {`C:\Users\u\.codeium\windsurf\hooks.json`, "", []string{`C:\Users\u\.windsurf\transcripts`}},
			"aider":          {"", "", []string{`.aider.chat.history.md`, `.aider.input.history`}},
		}},
		// The agents' own overrides, set to another drive or a UNC share.
		{"windows", `C:\Users\u`, map[string]string{"CLAUDE_CONFIG_DIR": `D:\cfg\claude`, "CODEX_HOME": `\\server\share\codex`, "GEMINI_CLI_HOME": `E:\g`, "COPILOT_HOME": `D:\cp`}, map[string]want{
			"claude":      {`D:\cfg\claude\settings.json`, "", []string{`D:\cfg\claude\projects`}},
			"codex":       {`\\server\share\codex\hooks.json`, `\\server\share\codex\config.toml`, []string{`\\server\share\codex\sessions`}},
			"gemini":      {`E:\g\.gemini\settings.json`, "", []string{`E:\g\.gemini\tmp`}},
			"copilot-cli": {`D:\cp\hooks\carryover.json`, "", []string{`D:\cp\session-state`}},
			// %APPDATA% unset: the IDE stores are left out rather than guessed.
			"vscode-copilot": {`C:\Users\u\.copilot\hooks\carryover-vscode.json`, "", nil},
		}},
		{"darwin", "/Users/u", nil, map[string]want{
			"claude":         {"/Users/u/.claude/settings.json", "", []string{"/Users/u/.claude/projects"}},
			"codex":          {"/Users/u/.codex/hooks.json", "/Users/u/.codex/config.toml", []string{"/Users/u/.codex/sessions"}},
			"gemini":         {"/Users/u/.gemini/settings.json", "", []string{"/Users/u/.gemini/tmp"}},
			"copilot-cli":    {"/Users/u/.copilot/hooks/carryover.json", "", []string{"/Users/u/.copilot/session-state"}},
			"cursor":         {"/Users/u/.cursor/hooks.json", "", []string{"/Users/u/.cursor/projects", "/Users/u/.cursor/chats", "/Users/u/Library/Application Support/Cursor/User"}},
			"vscode-copilot": {"/Users/u/.copilot/hooks/carryover-vscode.json", "", []string{"/Users/u/Library/Application Support/Code/User/workspaceStorage"}},
			"windsurf":       {"/Users/u/.codeium/windsurf/hooks.json", "", []string{"/Users/u/.windsurf/transcripts"}},
			"aider":          {"", "", []string{".aider.chat.history.md", ".aider.input.history"}},
		}},
	}
	for _, c := range cases {
		getenv := func(k string) string { return c.env[k] }
		for name, w := range c.want {
			tl, ok := tab.Tool(name)
			if !ok {
				t.Fatalf("no tool %s", name)
			}
			if got := tl.ConfigPath(c.goos, getenv, c.home, nil); got != w.config {
				t.Errorf("%s %s ConfigPath = %q, want %q", c.goos, name, got, w.config)
			}
			if got := tl.TrustPath(c.goos, getenv, c.home, nil); got != w.trust {
				t.Errorf("%s %s TrustPath = %q, want %q", c.goos, name, got, w.trust)
			}
			if got := tl.TranscriptPaths(c.goos, getenv, c.home); !slices.Equal(got, w.stores) {
				t.Errorf("%s %s TranscriptPaths = %q, want %q", c.goos, name, got, w.stores)
			}
		}
	}
}
