package service

// The hook's side of "a guest in your repository" (publish/guest.go): the
// projects the user told carryover to leave alone, and which installed
// agents need the pointer block in a project.

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/config"
	"github.com/carryover/carryover/publish/safefile"
)

// ignoredProjects returns the test for the user's ignore list (global
// config only); a directory is ignored when it or one of its parents is
// listed.
func ignoredProjects(env Env) func(dir string) bool {
	cfg, _ := config.Load(env.configPath(), env.Agent.Home, "")
	return func(dir string) bool { return len(cfg.Ignore) > 0 && dir != "" && cfg.Ignores(dir) }
}

// skipHook reports whether this hook does nothing: the agent's stub runs
// inside another agent (logged), or the working directory is an ignored
// project, where nothing is read but the hook's stdin (drained so the
// agent's write never fails) and nothing is stored, logged or written.
func skipHook(env Env, agent *adapters.Agent, log *Log, deadline time.Time) bool {
	if agent.ForeignHost != nil {
		if why := agent.ForeignHost(env.Agent.Getenv); why != "" {
			log.Printf("skipped: %s", why)
			return true
		}
	}
	if ignoredProjects(env)(env.WorkDir) {
		log.Muted = true
		_, _ = readPayloadBy(env.Stdin, deadline)
		return true
	}
	return false
}

// ignoredHook reports whether the project (or directory) the hook payload
// names is ignored; the hook then ends without a log line.
func ignoredHook(env Env, h adapters.Hook, log *Log) bool {
	ignored := ignoredProjects(env)
	if ignored(h.Cwd) || ignored(hookRoot(env, h)) {
		log.Muted = true
		return true
	}
	return false
}

// AgentsFile is where install records, per agent it set up, the version
// it found and whether that version's row in specs/tools.toml needs the
// pointer block (specs.Capability.NeedsPointer): the hook reads this small
// file instead of loading the table (specs.Load takes ~2 ms).
const AgentsFile = "agents.json"

// AgentRecord is one agent's line in AgentsFile.
type AgentRecord struct {
	Version string `json:"version,omitempty"`
	Pointer bool   `json:"pointer,omitempty"`
}

// SaveAgentRecords merges recs into home's AgentsFile (install).
func SaveAgentRecords(home string, recs map[string]AgentRecord) error {
	all := loadAgentRecords(home)
	for k, v := range recs {
		all[k] = v
	}
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	return publish.WriteAtomic(filepath.Join(home, AgentsFile), append(b, '\n'))
}

func loadAgentRecords(home string) map[string]AgentRecord {
	m := map[string]AgentRecord{}
	if b, err := safefile.ReadFile(filepath.Join(home, AgentsFile), 64<<10); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

// pointerAgents are the agents that need the pointer block in the project
// (pointer = "auto"): of the installed ones (install's selection) and
// those with sessions in the project, each whose version's row has no
// session-start injection or marks it unreliable (as install recorded it;
// an agent install never set up: one that cannot inject at all), and each
// whose injection a delivery receipt shows did not arrive here.
func (p *Project) pointerAgents() []string {
	tools := slices.Clone(p.Config.Tools)
	if ts, err := p.ledger.ProjectTools(p.Root); err == nil {
		tools = append(tools, ts...)
	}
	recs := loadAgentRecords(p.env.Home)
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
	missed, err := p.ledger.MissedInjections(p.Root)
	p.log.err("read delivery receipts", err)
	for _, t := range missed {
		if !slices.Contains(out, t) {
			p.log.Printf("pointer block: %s's start injection did not reach its session here (no transcript receipt)", t)
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// hookRoot is the project a hook payload names (distill.ProjectRoot).
func hookRoot(env Env, h adapters.Hook) string {
	cwd := h.Cwd
	if cwd == "" {
		cwd = env.WorkDir
	}
	return distill.ProjectRoot(h.Project, cwd)
}
