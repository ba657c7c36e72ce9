package adapters

import (
	"encoding/json"
)

// planTool reports whether a tool is one an agent keeps its own task list
// with (the descriptors' PlanTools). Its input goes into the call row's
// Text as raw JSON, for distill to read the items and which are done.
func planTool(name string) bool { return PlanTool(name) }

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
