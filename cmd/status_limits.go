package cmd

import (
	"fmt"
	"strings"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/service"
)

// WallsReport is the [limits]/[context] configuration and the last limit
// each agent hit.
type WallsReport struct {
	AutoResume        bool              `json:"auto_resume"`
	WarnPercent       float64           `json:"warn_percent"`
	MaxRestarts       int               `json:"max_restarts"`
	RestartAtCritical bool              `json:"restart_at_critical"`
	Thresholds        [3]int            `json:"context_thresholds"` // early warn, warn, critical (%)
	Problems          []string          `json:"problems,omitempty"`
	Last              []LastLimitReport `json:"last,omitempty"`
}

// LastLimitReport is the newest limit an agent reached.
type LastLimitReport = service.LastLimit

func wallsConfig(e *Env) WallsReport {
	cfg, _ := LoadConfig(e, "")
	w := cfg.Walls()
	t := w.Thresholds()
	return WallsReport{AutoResume: w.AutoResume(), WarnPercent: w.WarnPercent(), MaxRestarts: w.MaxRestarts(),
		RestartAtCritical: w.RestartAtCritical(), Thresholds: [3]int{t.EarlyWarn, t.Warn, t.Critical}, Problems: w.Problems()}
}

func printWalls(e *Env, st StatusReport) {
	w, c := e.Stdout, st.Walls
	auto := "on"
	if !c.AutoResume {
		auto = "off"
	}
	fmt.Fprintf(w, "\nLimits  RESUME.md on a limit: %s, ahead of time from %.0f %% used; context levels %d/%d/%d %%; carryover run restarts ≤ %d\n",
		auto, c.WarnPercent, c.Thresholds[0], c.Thresholds[1], c.Thresholds[2], c.MaxRestarts)
	for _, p := range c.Problems {
		fmt.Fprintf(w, "  config: %s\n", p)
	}
	for _, l := range c.Last {
		name := l.Tool
		if a, ok := adapters.ByName(l.Tool); ok {
			name = a.Display
		}
		line := fmt.Sprintf("  last limit of %s: %s %s", name, strings.ReplaceAll(l.Kind, "_", " "), publish.Ago(e.Now(), l.At))
		if l.Resets != "" {
			line += ", resets " + l.Resets
		}
		fmt.Fprintf(w, "%s (session %s in %s)\n", line, shortID(l.Session), l.Project)
	}
}
