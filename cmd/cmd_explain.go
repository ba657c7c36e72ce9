package cmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
)

func explainCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "explain",
		Usage: "print each line of the project's handoff with its evidence: the rule that chose it and the ledger rows it came from",
		Flags: []cli.Flag{projectFlag, &cli.BoolFlag{Name: "json", Usage: "one JSON document: lines, each with its rule and rows"}},
		Action: func(c *cli.Context) error {
			return runExplain(e, c.String("project"), c.Bool("json"))
		},
	}
}

// explainRow is one evidence row as explain prints it.
type explainRow struct {
	Session string    `json:"session"`
	Agent   string    `json:"agent"`
	Seq     int64     `json:"seq"`
	Time    time.Time `json:"time"`
	Kind    string    `json:"kind"`
	Excerpt string    `json:"excerpt"`
}

type explainLine struct {
	Section string       `json:"section"`
	Text    string       `json:"text"`
	Rule    string       `json:"rule"`
	Rows    []explainRow `json:"rows"`
}

func runExplain(e *Env, project string, asJSON bool) error {
	r, err := openLifecycle(e, project, false)
	if err != nil {
		return err
	}
	defer r.close()
	if r.l == nil {
		return exitf(ExitNotFound, "nothing to explain in %s: no agent session recorded for this project yet (run an agent with carryover's hooks installed, or `carryover handoff --transcript FILE`)", r.project)
	}
	h, _, err := distill.ProjectFold(r.l, r.project, e.Now(), distill.Options{Project: r.project})
	if err != nil {
		return err
	}
	cfg, _ := LoadConfig(e, r.project)
	red := redactor(cfg)
	sessions := map[int64]ledger.Session{}
	var lines []explainLine
	for _, ev := range h.Evidence {
		l := explainLine{Section: ev.Section, Text: red(contentOneLine(ev.Text, 200)), Rule: ev.Rule, Rows: []explainRow{}}
		for _, ref := range ev.Refs {
			s, ok := sessions[ref.Session]
			if !ok {
				if s, err = r.l.SessionByID(ref.Session); err != nil {
					continue
				}
				sessions[ref.Session] = s
			}
			rows, err := r.l.RowsAfter(ledger.ProjectSession{ID: s.ID, Tool: s.Tool}, ref.Seq-1, 1)
			if err != nil || len(rows) == 0 || rows[0].Seq != ref.Seq {
				continue
			}
			row := rows[0]
			text := row.Text
			if row.Command != "" {
				text = row.Command + " → " + text
			}
			l.Rows = append(l.Rows, explainRow{Session: s.NativeID, Agent: s.Tool, Seq: row.Seq, Time: row.Time.UTC(), Kind: string(row.Kind),
				Excerpt: red(contentOneLine(text, 160))})
		}
		lines = append(lines, l)
	}
	lines = append(lines, explainOwn(r.l, r.project, h, lines, red)...)
	if asJSON {
		return printJSON(e.Stdout, struct {
			Project string        `json:"project"`
			Lines   []explainLine `json:"lines"`
		}{r.project, lines})
	}
	if len(lines) == 0 {
		fmt.Fprintln(e.Stdout, "the handoff states nothing drawn from the ledger yet")
		return nil
	}
	for _, l := range lines {
		fmt.Fprintf(e.Stdout, "%s: %s\n  rule: %s\n", l.Section, l.Text, l.Rule)
		for _, row := range l.Rows {
			fmt.Fprintf(e.Stdout, "  from %s session %s #%d, %s, %s: %s\n", row.Agent, shortID(row.Session), row.Seq,
				row.Time.Format(time.RFC3339), row.Kind, row.Excerpt)
		}
	}
	return nil
}

// explainOwn are the handoff lines no session row wrote: the task and
// the decisions the user set with `carryover task` and `carryover decide`,
// the decision log's earlier extractions, the Git line (read from the
// repository) and the Session lines (carryover's own summary of the fold).
func explainOwn(l *ledger.Ledger, project string, h distill.Handoff, have []explainLine, red func(string) string) []explainLine {
	var out []explainLine
	own := func(sec, text, rule string) {
		out = append(out, explainLine{Section: sec, Text: red(contentOneLine(text, 200)), Rule: rule, Rows: []explainRow{}})
	}
	if t, ok := l.Task(project); ok {
		own("Task", t.Text, "pinned by the user with `carryover task` on "+t.At.UTC().Format(time.RFC3339)+" (source: the user, not a session)")
	}
	extracted := map[string]bool{}
	for _, x := range have {
		if x.Section == "Decisions" {
			extracted[x.Text] = true
		}
	}
	decisions, _ := l.Decisions(project)
	for _, d := range decisions {
		if d.Source == ledger.DecisionUser {
			own("Decisions", d.Text, "set by the user with `carryover decide` on "+d.At.UTC().Format(time.RFC3339)+" (source: the user, not a session)")
		} else if !extracted[red(contentOneLine(d.Text, 200))] {
			own("Decisions", d.Text, "the project's decision log: extracted from an earlier handoff's sessions on "+d.At.UTC().Format(time.RFC3339)+" and kept until dropped (`carryover decide --list`)")
		}
	}
	h.Git, _ = distill.GitFacts(project, h.Files)
	if h.Git.Repo {
		own("Git", "branch "+h.Git.Branch+" @ "+h.Git.Head, "read from the repository (.git: HEAD, refs, the index entries of the files the sessions touched), not from a session")
	}
	if h.Tokens.Max > 0 {
		own("Session", fmt.Sprintf("context: %d/%d tokens", h.Tokens.Used, h.Tokens.Max), "the agent's newest usage report")
	}
	own("Session", h.Quality().String(), "carryover's measure of what the fold found (rows, prompts, sections filled)")
	own("Session", "ledger: "+h.Tool+" session "+shortID(h.Session), "the session of the newest row in carryover's ledger")
	return out
}

// contentOneLine is transcript text made one printable line of at most n
// bytes: control characters (terminal escapes) removed, white space folded.
func contentOneLine(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || r == '\r' {
			return ' '
		}
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return -1
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
