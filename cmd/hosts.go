package cmd

// foreignHost reports why a stub for tool is running inside a different
// agent ("" when it is not). Agents load each other's hook files: Cursor runs
// Claude Code's ~/.claude/settings.json hooks, and Copilot CLI and VS Code
// Copilot both read every file in ~/.copilot/hooks/. Each agent has its own
// carryover stub, so a stub in the wrong host stays silent instead of
// mis-parsing a foreign payload or injecting twice.
func foreignHost(tool string, getenv func(string) string) string {
	switch tool {
	case "claude":
		if getenv("CURSOR_VERSION") != "" {
			return "Claude Code stub running inside Cursor (CURSOR_VERSION is set); Cursor's own stub handles it"
		}
	case "vscode-copilot":
		if getenv("COPILOT_CLI") == "1" {
			return "VS Code Copilot stub running inside Copilot CLI (COPILOT_CLI=1); Copilot CLI's own stub handles it"
		}
	case "copilot-cli":
		if getenv("COPILOT_CLI") != "1" && (getenv("VSCODE_PID") != "" || getenv("VSCODE_IPC_HOOK") != "" || getenv("TERM_PROGRAM") == "vscode") {
			return "Copilot CLI stub running inside VS Code; the VS Code Copilot stub handles it"
		}
	}
	return ""
}
