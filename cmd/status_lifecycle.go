package cmd

import (
	"fmt"
	"strings"

	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/lifecycle"
	"github.com/carryover/carryover/publish/resume"
)

func printLifecycle(e *Env, h *lifecycle.HistoryEntry) {
	if h == nil {
		return
	}
	line := fmt.Sprintf("    %s: %s", h.ID, h.Status)
	if h.Status == lifecycle.StatusCleared {
		// Said once, with who did it: nothing else about it matters now.
		fmt.Fprintf(e.Stdout, "    %s: cleared by you (`carryover clear`); new sessions start without it\n", h.ID)
		return
	}
	if len(h.ConsumedBy) > 0 {
		var by []string
		for _, c := range h.ConsumedBy {
			by = append(by, fmt.Sprintf("%s session %s %s", c.Agent, shortID(c.Session), publish.Ago(e.Now(), c.At)))
		}
		line += " by " + strings.Join(by, ", ")
	}
	fmt.Fprintln(e.Stdout, line)
	for _, s := range h.Staleness {
		fmt.Fprintf(e.Stdout, "    %s\n", strings.TrimPrefix(s, "> "))
	}
}

// structuredLifecycle is the lifecycle a structured handoff carries.
func structuredLifecycle(e *Env, project string) *resume.Lifecycle {
	p, err := openLifecycle(e, project, false)
	if err != nil {
		return nil
	}
	defer p.Close()
	return p.Lifecycle()
}
