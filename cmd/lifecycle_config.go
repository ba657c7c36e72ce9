package cmd

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/publish/service"
)

// openLifecycle resolves the project and opens its ledger for a lifecycle
// command (history, decide, task, clear); create says whether a missing
// ledger may be created (commands that record).
func openLifecycle(e *Env, project string, create bool) (*service.Project, error) {
	root, err := currentProject(e, project)
	if err != nil {
		return nil, err
	}
	return service.OpenLedger(e.service(), root, create)
}

// republish makes the project's handoff say what just changed, best
// effort: the next hook event publishes it anyway (the project is marked).
func republish(e *Env, p *service.Project) {
	if err := p.Publish(); err != nil {
		fmt.Fprintf(e.Stderr, "carryover: the handoff is updated at the next agent event (%v)\n", err)
	}
}

var projectFlag = &cli.StringFlag{Name: "project", Usage: "project directory (default: the git root of the current directory)"}
