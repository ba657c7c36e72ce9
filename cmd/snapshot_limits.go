package cmd

import (
	"bytes"
	"io"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/publish/limits"
)

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
