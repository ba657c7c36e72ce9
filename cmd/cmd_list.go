package cmd

import (
	"github.com/carryover/carryover/publish"

	"encoding/json"
	"fmt"
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
			&cli.StringFlag{Name: "project", Usage: "project directory (default: the git root of the current directory)"},
			&cli.BoolFlag{Name: "all", Usage: "sessions of every project"},
			&cli.IntFlag{Name: "limit", Usage: "at most this many sessions (0 = no limit)", Value: 10},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: func(c *cli.Context) error {
			return runList(e, c.String("source"), c.String("project"), c.Bool("all"), c.Int("limit"), c.Bool("json"))
		},
	}
}

// listEntry is one `list --json` element.
type listEntry struct {
	candidate
	ShortID string `json:"shortId"`
}

func runList(e *Env, source, projectFlag string, all bool, limit int, asJSON bool) error {
	project := ""
	if !all {
		p, err := currentProject(e, projectFlag)
		if err != nil {
			return err
		}
		project = p
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
	redact := redactor(cfg)
	for i := range cs {
		cs[i].Preview = publish.OneLine(redact(cs[i].Preview))
		cs[i].Project = publish.OneLine(cs[i].Project)
	}
	if asJSON {
		out := make([]listEntry, 0, len(cs))
		for _, c := range cs {
			out = append(out, listEntry{candidate: c, ShortID: shortID(c.ID)})
		}
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintln(e.Stdout, string(b))
	} else if len(cs) > 0 {
		tw := tabwriter.NewWriter(e.Stdout, 0, 0, 2, ' ', 0)
		head := "AGENT\tID\tLAST ACTIVE\tMSGS\tPREVIEW"
		if all {
			head = "AGENT\tID\tLAST ACTIVE\tMSGS\tPROJECT\tPREVIEW"
		}
		fmt.Fprintln(tw, colour(e, e.StdoutTTY, "1", head))
		for _, c := range cs {
			n := fmt.Sprint(c.MessageCount)
			if c.CountEstimated {
				n = "~" + n
			}
			prev := c.Preview
			if len(prev) > 70 {
				prev = clip(prev, 70)
			}
			if all {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.Tool, shortID(c.ID), ago(e.Now(), c.LastActive), n, c.Project, prev)
			} else {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Tool, shortID(c.ID), ago(e.Now(), c.LastActive), n, prev)
			}
		}
		tw.Flush()
	}
	switch {
	case total == 0 && !stores && !asJSON:
		return noAgentsError(e)
	case total == 0 && !asJSON:
		where := "for " + project
		if all {
			where = "in any project"
		}
		fmt.Fprintf(e.Stderr, "carryover: no sessions %s (try --all)\n", where)
	case total > len(cs) && !asJSON:
		fmt.Fprintf(e.Stderr, "carryover: showing %d of %d sessions (--limit 0 for all)\n", len(cs), total)
	}
	if total > 0 && !asJSON {
		fmt.Fprintf(e.Stderr, "carryover: hand one off with `carryover handoff --session %s`\n", strings.ToLower(shortID(cs[0].ID))[:min(8, len(shortID(cs[0].ID)))])
	}
	return nil
}
