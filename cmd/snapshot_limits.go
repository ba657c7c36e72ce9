package cmd

import (
	"bytes"
	"io"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/limits"
)

// actOnWalls records and acts on what this event says about rate limits
// and the context window (limits.Act), sets the "previous session stopped
// at a limit" note for a start or prompt, and signals `carryover run`.
func actOnWalls(e *Env, log *logger, cfg Config, l *ledger.Ledger, proj *publish.Project, agent *adapters.Agent, class adapters.Class, h adapters.Hook, rep ledger.SyncReport,
	level distill.ContextLevel, pct int) limits.Outcome {
	walls := limits.Act(limits.Options{Ledger: l, Project: proj, Agent: agent, Class: class, Hook: h, SessionID: rep.SessionID, Found: rep.Limits, Config: limits.Of(cfg),
		Level: level, Percent: pct})
	logNotes(log, walls.Notes)
	if class == adapters.ClassStart || class == adapters.ClassPrompt {
		proj.Note = limits.StoppedLine(l, proj.Root, proj.Now, time.Local)
	}
	signalRun(e, log, cfg, agent, h, class, walls)
	return walls
}

// tellWalls adds what limits.Act decided to say to the hook's output: the
// agent note and the user notice (stdout JSON when the agent shows a
// systemMessage and nothing was injected, else stderr).
func tellWalls(e *Env, log *logger, agent *adapters.Agent, event string, w limits.Outcome, out *bytes.Buffer) {
	if w.Notice != "" {
		log.Printf("limit: %s", w.Notice)
	}
	if w.AgentNote != "" {
		log.Printf("context %d %% (%s): agent told", w.Percent, w.Level)
	}
	stdout, stderr := limits.Output(agent, event, w, out.Len() > 0)
	out.Write(stdout)
	if stderr != "" && e.Stderr != nil {
		_, _ = io.WriteString(e.Stderr, stderr)
	}
}

// signalRun tells a `carryover run` wrapper (CARRYOVER_RUN_ID in the
// agent's environment) which session it started and when that session's
// context reaches CRITICAL.
func signalRun(e *Env, log *logger, cfg Config, agent *adapters.Agent, h adapters.Hook, class adapters.Class, w limits.Outcome) {
	run := e.Getenv(limits.RunEnv)
	if run == "" {
		return
	}
	lvl := w.Level
	if !limits.Of(cfg).RestartAtCritical() {
		lvl = ""
	}
	note, err := limits.RunHook(e.Home(), run, e.Getenv(limits.RunPIDEnv), agent.Name, h.SessionID, class == adapters.ClassStart, lvl, w.Percent, e.Now())
	if note != "" {
		log.Printf("%s", note)
	}
	logErr(log, "carryover run signal", err)
}
