package resume

import (
	"strings"

	"github.com/carryover/carryover/publish/redact"
)

// NoRequestWarning is the warning of a handoff whose session holds no
// request carryover could find (a trimmed transcript, a subagent-only
// excerpt, a session started by a tool).
const NoRequestWarning = "no user request found in the session; the goal is the best available line"

// Degrade fills a structured handoff's required fields from whatever the
// session holds instead of refusing it: a missing goal becomes the best
// available line (the latest user message, else the first completed step,
// else the last assistant reply) and a missing next action asks to confirm
// the goal. Each substitution adds a warning.
func Degrade(h *Handoff, s Session) {
	if strings.TrimSpace(h.Goal) == "" {
		best := ""
		msgs := s.Conversation.Messages
		for i := len(msgs) - 1; i >= 0 && best == ""; i-- {
			if msgs[i].Role == "user" {
				best = redact.Clip(oneLine(msgs[i].Content), 200)
			}
		}
		if best == "" && len(s.Task.Completed) > 0 {
			best = "continue after: " + redact.Clip(oneLine(s.Task.Completed[0]), 200)
		}
		for i := len(msgs) - 1; i >= 0 && best == ""; i-- {
			if msgs[i].Role == "assistant" && msgs[i].ToolName == "" {
				best = "continue from the last reply: " + redact.Clip(oneLine(msgs[i].Content), 200)
			}
		}
		if best == "" {
			best = "(unknown: ask the user to restate the task)"
		}
		h.Goal = best
		h.Warnings = append(h.Warnings, NoRequestWarning)
	}
	if strings.TrimSpace(h.Now) == "" {
		h.Now = "confirm the task with the user, then continue: " + h.Goal
		if len(h.Warnings) == 0 {
			h.Warnings = append(h.Warnings, "no next action found; confirm the goal first")
		}
	}
}
