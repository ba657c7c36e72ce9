package publish

import (
	"fmt"
	"strings"

	"github.com/carryover/carryover/adapters/ledger"
)

// pinnedTask puts the task the user pinned (carryover task) before the
// extracted goal: it has priority, and says who set it; the goal stays as
// the last session's own.
func pinnedTask(lines []string, p *ledger.PinnedTask) []string {
	if p == nil || strings.TrimSpace(p.Text) == "" {
		return lines
	}
	out := []string{"[pinned by the user — `carryover task --done` when finished] " + clip(contentLine(p.Text), goalChars)}
	if len(lines) > 0 {
		out = append(out, "(the last session's own goal: "+lines[0]+")")
		out = append(out, lines[1:]...)
	}
	return out
}

// decisionLines is the project's decisions log (the user's first, newest
// first, as ledger.Decisions orders it) followed by what this handoff's
// sessions decided that the log does not hold yet.
func decisionLines(extracted []string, log []ledger.Decision) []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range log {
		if seen[d.Text] {
			continue
		}
		seen[d.Text] = true
		l := "- " + clip(contentLine(d.Text), 200)
		if d.Why != "" {
			l += " (why: " + clip(contentLine(d.Why), 120) + ")"
		}
		out = append(out, l)
	}
	var fresh []string
	for _, d := range extracted {
		if !seen[d] {
			seen[d] = true
			fresh = append(fresh, d)
		}
	}
	out = append(out, bullets(fresh, 200)...)
	if len(out) > maxDecisionLines {
		out = append(out[:maxDecisionLines-1], fmt.Sprintf("- (+%d more: `carryover decide --list`)", len(out)-maxDecisionLines+1))
	}
	return out
}

// maxDecisionLines bounds the decisions a handoff shows: they outlive the
// sessions that made them and would otherwise crowd out the files and
// failures of the work in progress.
const maxDecisionLines = 10

// countRest replaces the last decision kept, when some did not fit, by a
// count of those left out: the cap holds and the reader knows more exist.
func countRest(s *section, taken int) {
	if s == nil || taken == 0 || taken >= len(s.lines) {
		return
	}
	rest := len(s.lines) - taken + 1
	var already int // the list's own count line, when it was cut too
	if _, err := fmt.Sscanf(s.lines[len(s.lines)-1], "- (+%d more:", &already); err == nil {
		rest += already - 1
	}
	s.lines[taken-1] = fmt.Sprintf("- (+%d more: `carryover decide --list`)", rest)
}

func oneLineText(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
