package adapters

import (
	"encoding/json"
	"strings"
)

// planTools are the tools an agent keeps its own task list with: Claude's
// TodoWrite (read by the Claude decoder), Codex's update_plan, Gemini's
// write_todos, VS Code's manage_todo_list and Copilot's update_todo. Their
// input goes into the call row's Text as raw JSON, for distill to read the
// items and which are done.
func planTool(name string) bool {
	switch strings.ToLower(name) {
	case "update_plan", "write_todos", "manage_todo_list", "update_todo", "todo_write", "todowrite":
		return true
	}
	return false
}

// planText is a plan tool's input for the row's Text ("" for any other
// tool). A JSON string holding JSON (Codex, VS Code) is unwrapped.
func planText(name string, raw json.RawMessage) string {
	if !planTool(name) || len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return clip(s, maxResult)
	}
	return clip(string(raw), maxResult)
}
