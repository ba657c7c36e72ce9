package cmd

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/publish"
)

// lifecycleConfig applies the global config's handoff lifecycle settings.
func lifecycleConfig(p *publish.Project, cfg Config, logf func(string, ...any)) {
	if cfg.ExpireAfter != "" {
		if d, err := publish.ParseAge(cfg.ExpireAfter); err == nil {
			p.ExpireAfter = d
		} else {
			logf("config expire_after: %v (default 7d used)", err)
		}
	}
	p.HistoryKeep = cfg.HistoryKeep
}

// lifecycleRun is what the lifecycle commands (history, decide, task,
// clear) share: the project, its config and the ledger.
type lifecycleRun struct {
	env     *Env
	project string
	proj    *publish.Project
	l       *ledger.Ledger // nil when there is no ledger yet and the command only reads
}

// openLifecycle resolves the project and opens the ledger; create says
// whether a missing ledger may be created (commands that record).
func openLifecycle(e *Env, project string, create bool) (*lifecycleRun, error) {
	root, err := currentProject(e, project)
	if err != nil {
		return nil, err
	}
	cfg, _ := LoadConfig(e, root)
	proj := &publish.Project{Root: root, Home: e.Home(), Now: e.Now(), Mode: cfg.Resume, Redact: redactor(cfg),
		Pointer: cfg.PointerMode(), NotProject: publish.NotProject(root, e.UserHome())}
	lifecycleConfig(proj, cfg, func(string, ...any) {})
	r := &lifecycleRun{env: e, project: root, proj: proj}
	if _, err := os.Stat(filepath.Join(e.Home(), ledger.FileName)); err != nil && !create {
		return r, nil
	}
	if r.l, err = ledger.Open(e.Home()); err != nil {
		return nil, err
	}
	proj.RestoreFromFiles(r.l) // a ledger rebuilt without the project's handoffs
	return r, nil
}

func (r *lifecycleRun) close() {
	if r.l != nil {
		r.l.Close()
	}
}

// republish makes the project's handoff say what just changed, best
// effort: the next hook event publishes it anyway (the project is marked).
func (r *lifecycleRun) republish() {
	_ = r.l.MarkDirty(r.project, r.env.Now())
	if err := r.proj.Republish(r.l); err != nil {
		fmt.Fprintf(r.env.Stderr, "carryover: the handoff is updated at the next agent event (%v)\n", err)
	}
}

var projectFlag = &cli.StringFlag{Name: "project", Usage: "project directory (default: the git root of the current directory)"}
