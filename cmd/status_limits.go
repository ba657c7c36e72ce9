package cmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/limits"
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
type LastLimitReport struct {
	Tool    string    `json:"tool"`
	Kind    string    `json:"kind"`
	Resets  string    `json:"resets,omitempty"`
	Project string    `json:"project"`
	Session string    `json:"session"`
	At      time.Time `json:"at"`
}

func wallsConfig(e *Env) WallsReport {
	cfg, _ := LoadConfig(e, "")
	w := limits.Of(cfg)
	t := w.Thresholds()
	return WallsReport{AutoResume: w.AutoResume(), WarnPercent: w.WarnPercent(), MaxRestarts: w.MaxRestarts(),
		RestartAtCritical: w.RestartAtCritical(), Thresholds: [3]int{t.EarlyWarn, t.Warn, t.Critical}, Problems: w.Problems()}
}

func lastLimits(e *Env, l *ledger.Ledger) []LastLimitReport {
	evs, err := l.LastLimits("")
	if err != nil {
		return nil
	}
	var out []LastLimitReport
	for _, ev := range evs {
		out = append(out, LastLimitReport{Tool: ev.Tool, Kind: string(ev.Limit.Kind), Resets: ev.Limit.Resets(e.Now(), time.Local),
			Project: ev.Project, Session: ev.NativeID, At: ev.At.UTC()})
	}
	return out
}

// contextOf is a project's handoff session's context level, with the
// project's thresholds ("" unknown).
func contextOf(e *Env, l *ledger.Ledger, project string, sid int64) string {
	s, err := l.SessionByID(sid)
	if err != nil {
		return ""
	}
	cfg, _ := LoadConfig(e, project)
	return sessionContext(s, cfg)
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

// sessionContext is a session's context level with cfg's thresholds
// ("" when its usage is unknown).
func sessionContext(s ledger.Session, cfg Config) string {
	if s.TokensUsed == 0 {
		return ""
	}
	a, _ := adapters.ByName(s.Tool)
	lvl, pct := limits.Level(s, a, limits.Of(cfg))
	return fmt.Sprintf("%s (%d %% of %d tokens)", lvl, pct, limits.Window(s, a))
}
