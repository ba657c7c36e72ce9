package cmd

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/service"
)

func taskCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "task",
		Usage:     "pin the project's current task: every handoff leads with it, before the goal carryover extracted",
		ArgsUsage: `["<task>"]`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "done", Usage: "the pinned task is finished: unpin it"},
			&cli.BoolFlag{Name: "clear", Usage: "unpin the task"},
			&cli.BoolFlag{Name: "json", Usage: "machine-readable output"},
			projectFlag,
		},
		Action: func(c *cli.Context) error {
			args, late := trailingFlags(c.Args().Slice(), "project")
			o := taskOptions{project: c.String("project"), text: strings.Join(args, " "), done: c.Bool("done"), clear: c.Bool("clear"), json: c.Bool("json")}
			if v, ok := late["project"]; ok {
				o.project = v
			}
			return runTask(e, o)
		},
	}
}

type taskOptions struct {
	project, text     string
	done, clear, json bool
}

// TaskReport is `carryover task --json`.
type TaskReport struct {
	Project string `json:"project"`
	Task    string `json:"task"` // "" when none is pinned
	SetBy   string `json:"set_by,omitempty"`
	At      string `json:"at,omitempty"`
}

func runTask(e *Env, o taskOptions) error {
	text := strings.Join(strings.Fields(o.text), " ")
	if (o.done && o.clear) || ((o.done || o.clear) && text != "") {
		return usageErrorf("carryover task --help", `task takes one of: "<task>", --done, --clear (or nothing, to show it)`)
	}
	r, err := openLifecycle(e, o.project, text != "" || o.done || o.clear)
	if err != nil {
		return err
	}
	defer r.Close()
	switch {
	case o.done || o.clear:
		return unpinTask(e, r, o.done)
	case text != "":
		if err := r.PinTask(text); err != nil {
			return err
		}
		fmt.Fprintf(e.Stdout, "task pinned: %s\n", text)
		republish(e, r)
		return nil
	}
	return showTask(e, r, o.json)
}

// showTask prints the project's pinned task.
func showTask(e *Env, r *service.Project, asJSON bool) error {
	rep := TaskReport{Project: r.Root}
	t, ok := r.Task()
	if ok {
		rep.Task, rep.SetBy, rep.At = t.Text, "user", t.At.UTC().Format("2006-01-02T15:04:05Z")
	}
	switch {
	case asJSON:
		return printJSON(e.Stdout, rep)
	case ok:
		fmt.Fprintf(e.Stdout, "%s  (pinned by you %s)\n", t.Text, publish.Ago(e.Now(), t.At))
	default:
		fmt.Fprintf(e.Stdout, "no task pinned for %s (pin one: carryover task \"…\")\n", r.Root)
	}
	return nil
}

// unpinTask is task --done (done) and --clear.
func unpinTask(e *Env, r *service.Project, done bool) error {
	t, ok, err := r.UnpinTask()
	if err != nil {
		return err
	}
	if !ok {
		return exitf(ExitNotFound, "no task pinned for %s", r.Root)
	}
	verb := "cleared"
	if done {
		verb = "done"
	}
	fmt.Fprintf(e.Stdout, "task %s: %s\n", verb, t.Text)
	republish(e, r)
	return nil
}
