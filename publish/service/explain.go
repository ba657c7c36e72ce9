package service

import (
	"fmt"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/lifecycle"
)

// `carryover explain`: each line of the project's handoff with the rule
// that chose it and the ledger rows it came from.

// ExplainRow is one evidence row as explain prints it.
type ExplainRow struct {
	Session string    `json:"session"`
	Agent   string    `json:"agent"`
	Seq     int64     `json:"seq"`
	Time    time.Time `json:"time"`
	Kind    string    `json:"kind"`
	Excerpt string    `json:"excerpt"`
}

// ExplainLine is one line of the handoff with its evidence.
type ExplainLine struct {
	Section string       `json:"section"`
	Text    string       `json:"text"`
	Rule    string       `json:"rule"`
	Rows    []ExplainRow `json:"rows"`
}

// Explain is the project's handoff, each line with its evidence; nil
// without a ledger.
func (p *Project) Explain() ([]ExplainLine, error) {
	if p.ledger == nil {
		return nil, nil
	}
	h, _, err := distill.ProjectFold(p.ledger, p.Root, p.env.Now(), distill.Options{Project: p.Root})
	if err != nil {
		return nil, err
	}
	red := p.Redact
	sessions := map[int64]ledger.Session{}
	var lines []ExplainLine
	for _, ev := range h.Evidence {
		l := ExplainLine{Section: ev.Section, Text: red(contentOneLine(ev.Text, 200)), Rule: ev.Rule, Rows: []ExplainRow{}}
		for _, ref := range ev.Refs {
			s, ok := sessions[ref.Session]
			if !ok {
				if s, err = p.ledger.SessionByID(ref.Session); err != nil {
					continue
				}
				sessions[ref.Session] = s
			}
			rows, err := p.ledger.RowsAfter(ledger.ProjectSession{ID: s.ID, Tool: s.Tool}, ref.Seq-1, 1)
			if err != nil || len(rows) == 0 || rows[0].Seq != ref.Seq {
				continue
			}
			row := rows[0]
			text := row.Text
			if row.Command != "" {
				text = row.Command + " → " + text
			}
			l.Rows = append(l.Rows, ExplainRow{Session: s.NativeID, Agent: s.Tool, Seq: row.Seq, Time: row.Time.UTC(), Kind: string(row.Kind),
				Excerpt: red(contentOneLine(text, 160))})
		}
		lines = append(lines, l)
	}
	return append(lines, explainOwn(p.ledger, p.Root, h, lines, red)...), nil
}

// explainOwn are the handoff lines no session row wrote: the task and
// the decisions the user set with `carryover task` and `carryover decide`,
// the decision log's earlier extractions, the Git line (read from the
// repository) and the Session lines (carryover's own summary of the fold).
func explainOwn(l *ledger.Ledger, project string, h distill.Handoff, have []ExplainLine, red func(string) string) []ExplainLine {
	var out []ExplainLine
	own := func(sec, text, rule string) {
		out = append(out, ExplainLine{Section: sec, Text: red(contentOneLine(text, 200)), Rule: rule, Rows: []ExplainRow{}})
	}
	if t, ok := lifecycle.Task(l, project); ok {
		own("Task", t.Text, "pinned by the user with `carryover task` on "+t.At.UTC().Format(time.RFC3339)+" (source: the user, not a session)")
	}
	extracted := map[string]bool{}
	for _, x := range have {
		if x.Section == "Decisions" {
			extracted[x.Text] = true
		}
	}
	decisions, _ := lifecycle.Decisions(l, project)
	for _, d := range decisions {
		if d.Source == ledger.DecisionUser {
			own("Decisions", d.Text, "set by the user with `carryover decide` on "+d.At.UTC().Format(time.RFC3339)+" (source: the user, not a session)")
		} else if !extracted[red(contentOneLine(d.Text, 200))] {
			own("Decisions", d.Text, "the project's decision log: extracted from an earlier handoff's sessions on "+d.At.UTC().Format(time.RFC3339)+" and kept until dropped (`carryover decide --list`)")
		}
	}
	h.Git, _ = distill.RepoFacts(distill.OpenRepo(project), h.Files)
	if h.Git.Repo {
		own("Git", "branch "+h.Git.Branch+" @ "+h.Git.Head, "read from the repository (.git: HEAD, refs, the index entries of the files the sessions touched), not from a session")
	}
	if h.Tokens.Max > 0 {
		own("Session", fmt.Sprintf("context: %d/%d tokens", h.Tokens.Used, h.Tokens.Max), "the agent's newest usage report")
	}
	own("Session", h.Quality().String(), "carryover's measure of what the fold found (rows, prompts, sections filled)")
	own("Session", "ledger: "+h.Tool+" session "+publish.ShortID(h.Session), "the session of the newest row in carryover's ledger")
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
