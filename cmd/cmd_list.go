package cmd

import (
	"fmt"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/service"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"
)

func listCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list agent sessions for this project (or --all), newest first",
		Description: "Reads every supported agent's own session store (heads and tails of transcripts, or the\n" +
			"agent's index) plus the ledger, without parsing whole transcripts. A message count shown as\n" +
			"~N is an estimate.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "source", Usage: "only this agent"},
			projectFlag,
			&cli.BoolFlag{Name: "all", Usage: "sessions of every project"},
			&cli.IntFlag{Name: "limit", Usage: "at most this many sessions (0 = no limit)", Value: 10},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
			pickFlag,
		},
		Action: func(c *cli.Context) error {
			if c.Bool("pick") {
				return runListPick(e, c.String("source"), c.String("project"), c.Bool("all"), helpFor(c))
			}
			return runList(e, c.String("source"), c.String("project"), c.Bool("all"), c.Int("limit"), c.Bool("json"))
		},
	}
}

// listProject is the project list reads ("" with --all).
func listProject(e *Env, projectFlag string, all bool) (string, error) {
	if all {
		return "", nil
	}
	return currentProject(e, projectFlag)
}

// runListPick prints the id of the session the user picks (for
// `carryover handoff $(carryover list --pick)` and other scripts).
func runListPick(e *Env, source, projectFlag string, all bool, help string) error {
	ch, err := pickSession(e, projectFlag, all, false, source, help)
	if err != nil {
		return err
	}
	// The list was drawn on the terminal; the id goes after it, alone.
	_, err = fmt.Fprintln(e.Stdout, ch.ID)
	return err
}

// listEntry is one `list --json` element.
type listEntry struct {
	candidate
	ShortID string `json:"short_id"`
}

func runList(e *Env, source, projectFlag string, all bool, limit int, asJSON bool) error {
	project, err := listProject(e, projectFlag, all)
	if err != nil {
		return err
	}
	stop := spinner(e, "reading sessions…")
	cs, stores, err := gather(e, project, source)
	stop()
	if err != nil {
		return err
	}
	total := len(cs)
	if limit > 0 && len(cs) > limit {
		cs = cs[:limit]
	}
	cfg, _ := LoadConfig(e, project)
	redact := service.Redactor(cfg)
	for i := range cs {
		cs[i].Preview = publish.OneLine(redact(cs[i].Preview))
		cs[i].Project = publish.OneLine(cs[i].Project)
	}
	if asJSON {
		return printListJSON(e, project, cs, total)
	}
	if len(cs) > 0 {
		printListTable(e, cs, all)
	}
	listFooter(e, project, cs, total, stores, all)
	return nil
}

// printListJSON prints `list --json`: total counts before --limit.
func printListJSON(e *Env, project string, cs []candidate, total int) error {
	out := make([]listEntry, 0, len(cs))
	for _, c := range cs {
		out = append(out, listEntry{candidate: c, ShortID: publish.ShortID(c.ID)})
	}
	return printJSON(e.Stdout, struct {
		Project  string      `json:"project"` // "" with --all
		Sessions []listEntry `json:"sessions"`
		Total    int         `json:"total"` // before --limit
	}{project, out, total})
}

// printListTable prints one row per session; --all adds the project.
func printListTable(e *Env, cs []candidate, all bool) {
	tw := tabwriter.NewWriter(e.Stdout, 0, 0, 2, ' ', 0)
	row := func(cols ...string) string {
		if !all {
			cols = slices.Delete(cols, 4, 5) // the project
		}
		return strings.Join(cols, "\t")
	}
	fmt.Fprintln(tw, colour(e, e.StdoutTTY, "1", row("AGENT", "ID", "LAST ACTIVE", "MSGS", "PROJECT", "PREVIEW")))
	for _, c := range cs {
		n := fmt.Sprint(c.MessageCount)
		if c.CountEstimated {
			n = "~" + n
		}
		prev := c.Preview
		if len(prev) > 70 {
			prev = clip(prev, 70)
		}
		if c.NotYours != "" {
			prev = "(not picked: " + c.NotYours + ") " + prev
		}
		fmt.Fprintln(tw, row(c.Tool, publish.ShortID(c.ID), ago(e.Now(), c.LastActive), n, c.Project, prev))
	}
	tw.Flush()
}

// listFooter says on stderr what to do next: an empty list is a success
// (exit 0), with the one thing to do.
func listFooter(e *Env, project string, cs []candidate, total int, stores, all bool) {
	switch {
	case total == 0 && !stores:
		fmt.Fprintf(e.Stderr, "carryover: %s\n", noAgentsText(e))
	case total == 0 && all:
		fmt.Fprintf(e.Stderr, "carryover: no sessions in any project yet — run an agent first\n")
	case total == 0:
		fmt.Fprintf(e.Stderr, "carryover: no sessions for %s yet — run an agent here first, or see other projects' with `carryover list --all`\n", project)
	case total > len(cs):
		fmt.Fprintf(e.Stderr, "carryover: showing %d of %d sessions (--limit 0 for all)\n", len(cs), total)
	}
	if total > 0 {
		fmt.Fprintf(e.Stderr, "carryover: hand one off with `carryover handoff --session %s`\n", strings.ToLower(publish.ShortID(cs[0].ID))[:min(8, len(publish.ShortID(cs[0].ID)))])
	}
}
