package cmd

// The hook's side of "a guest in your repository" (publish/guest.go): the
// projects the user told carryover to leave alone, and which installed
// agents need the pointer block in a project.

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"time"

	"github.com/carryover/carryover/adapters"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/safefile"
)

// ignoredProjects returns the test for the user's ignore list (global
// config only); a directory is ignored when it or one of its parents is
// listed.
func ignoredProjects(e *Env) func(dir string) bool {
	cfg, _ := publish.LoadConfig(e.ConfigPath(), e.UserHome(), "")
	return func(dir string) bool { return len(cfg.Ignore) > 0 && dir != "" && cfg.Ignores(dir) }
}

// skipHook reports whether this hook does nothing: the agent's stub runs
// inside another agent (logged), or the working directory is an ignored
// project, where nothing is read but the hook's stdin (drained so the
// agent's write never fails) and nothing is stored, logged or written.
func skipHook(e *Env, agent *adapters.Agent, log *logger, deadline time.Time) bool {
	if why := foreignHost(agent, e); why != "" {
		log.Printf("skipped: %s", why)
		return true
	}
	if ignoredProjects(e)(e.WorkDir) {
		log.muted = true
		_, _ = readPayloadBy(e.Stdin, deadline)
		return true
	}
	return false
}

// ignoredHook reports whether the project (or directory) the hook payload
// names is ignored; the hook then ends without a log line.
func ignoredHook(e *Env, h adapters.Hook, log *logger) bool {
	ignored := ignoredProjects(e)
	if ignored(h.Cwd) || ignored(hookRoot(e, h)) {
		log.muted = true
		return true
	}
	return false
}

// guestWrites prepares what WriteProject needs to be a guest: a
// NotProject root's handoff is held for injection (no file), and under
// pointer = "auto" the agents that need the block are looked up.
func guestWrites(e *Env, l *ledger.Ledger, proj *publish.Project, cfg Config, log *logger, r *publish.Rendered) {
	switch {
	case proj.NotProject:
		proj.Held = r.Text
	case proj.Pointer == publish.PointerAuto:
		proj.PointerFor = pointerAgents(e, l, proj.Root, cfg, log)
	}
}

// agentsFile is where install records, per agent it set up, the version
// it found and whether that version's row in specs/tools.toml needs the
// pointer block (specs.Capability.NeedsPointer): the hook reads this small
// file instead of loading the table (specs.Load takes ~2 ms).
const agentsFile = "agents.json"

// agentRecord is one agent's line in agentsFile.
type agentRecord struct {
	Version string `json:"version,omitempty"`
	Pointer bool   `json:"pointer,omitempty"`
}

func saveAgentRecords(e *Env, recs map[string]agentRecord) error {
	all := loadAgentRecords(e)
	for k, v := range recs {
		all[k] = v
	}
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	return publish.WriteAtomic(filepath.Join(e.Home(), agentsFile), append(b, '\n'))
}

func loadAgentRecords(e *Env) map[string]agentRecord {
	m := map[string]agentRecord{}
	if b, err := safefile.ReadFile(filepath.Join(e.Home(), agentsFile), 64<<10); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

// pointerAgents are the agents that need the pointer block in project
// (pointer = "auto"): of the installed ones (install's selection) and
// those with sessions in the project, each whose version's row has no
// session-start injection or marks it unreliable (as install recorded it;
// an agent install never set up: one that cannot inject at all), and each
// whose injection a delivery receipt shows did not arrive here.
func pointerAgents(e *Env, l *ledger.Ledger, project string, cfg Config, log *logger) []string {
	tools := slices.Clone(cfg.Tools)
	if ts, err := l.ProjectTools(project); err == nil {
		tools = append(tools, ts...)
	}
	recs := loadAgentRecords(e)
	var out []string
	for _, t := range tools {
		need := false
		if r, ok := recs[t]; ok {
			need = r.Pointer
		} else if a, ok := adapters.ByName(t); ok {
			need = a.Envelope == adapters.EnvelopeNone
		}
		if need && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	missed, err := l.MissedInjections(project)
	logErr(log, "read delivery receipts", err)
	for _, t := range missed {
		if !slices.Contains(out, t) {
			log.Printf("pointer block: %s's start injection did not reach its session here (no transcript receipt)", t)
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}
