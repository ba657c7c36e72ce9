package cmd

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

func handoffCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "handoff",
		Usage: "build a resume prompt from a session and copy it, to continue in another agent",
		Description: "With no flags: the most recently active session of any agent for this project (it says\n" +
			"which and why). The session is read into the ledger, then the resume prompt is packed into\n" +
			"the target's token budget, written to .carryover/RESUME.md and copied to the clipboard.\n" +
			"SESSION (or --session) is a session id or a unique prefix of one, from `carryover list`.\n" +
			"Exit codes: 1 no agents detected, 2 session not found, 3 read/parse error, 4 budget too small.",
		ArgsUsage: "[SESSION]",
		Flags:     append(append(selectionFlags(), pickFlag), outputFlags()...),
		Action: func(c *cli.Context) error {
			o, err := outputFrom(c)
			if err != nil {
				return err
			}
			sel := selectionFrom(c)
			if err := sessionArg(c, &sel); err != nil {
				return err
			}
			if c.Bool("pick") {
				if sel.session != "" || sel.transcript != "" {
					return usageErrorf(helpFor(c), "--pick chooses the session; drop the session id or --transcript")
				}
				project, err := currentProject(e, sel.project)
				if err != nil {
					return err
				}
				cs, _, err := gather(e, project, sel.source)
				if err != nil {
					return err
				}
				if len(cs) == 0 { // none here: every project's
					if cs, _, err = gather(e, "", sel.source); err != nil {
						return err
					}
				}
				ch, err := pickSession(e, cs, helpFor(c))
				if err != nil {
					return err
				}
				sel.session = ch.ID
				if sel.source == "" {
					sel.source = ch.Tool
				}
			}
			return runHandoff(e, sel, o)
		},
	}
}

// sessionArg takes the optional SESSION argument (an id or a prefix of
// one) into sel, the same as --session.
func sessionArg(c *cli.Context, sel *selection) error {
	switch {
	case c.NArg() > 1:
		return usageErrorf(helpFor(c), "%s takes at most one session id, got %q", fullName(c), strings.Join(c.Args().Slice(), " "))
	case c.NArg() == 1 && sel.session != "" && sel.session != c.Args().First():
		return usageErrorf(helpFor(c), "two sessions given: %q and --session %q", c.Args().First(), sel.session)
	case c.NArg() == 1:
		sel.session = c.Args().First()
	}
	return nil
}

func runHandoff(e *Env, sel selection, o outputOptions) error {
	stop := spinner(e, "reading sessions…")
	p, err := pick(e, sel)
	stop()
	if err != nil {
		return err
	}
	fmt.Fprintf(e.Stderr, "carryover: using %s session %s — %s\n", p.Tool, shortID(p.ID), p.reason)
	proj := openManual(e, p)
	for _, ce := range proj.ConfigErrs {
		fmt.Fprintf(e.Stderr, "carryover: config: %v\n", ce)
	}
	stop = spinner(e, "reading the transcript…")
	// No session named: the task state is the project's fold across
	// sessions and agents (what handoff.md says).
	m, err := proj.Handoff(p.pick(), sel.session == "" && sel.transcript == "", e.progress)
	stop()
	if err != nil {
		return exitErr(err)
	}
	if m.Context != "" {
		fmt.Fprintf(e.Stderr, "carryover: context of that session: %s\n", m.Context)
	}
	if len(m.DrawnFrom) > 0 {
		fmt.Fprintf(e.Stderr, "carryover: task state from the project's %d session(s): %s\n", len(m.DrawnFrom), strings.Join(m.DrawnFrom, "; "))
	}
	s := m.Session
	o.lifecycle = structuredLifecycle(e, p.project)
	s.ApplyLifecycle(o.lifecycle)
	o.mode = proj.Config.Resume
	text, stats, err := render(s, nil, o)
	if err != nil {
		return err
	}
	return deliver(e, p.project, text, stats, o, proj.Redact)
}
