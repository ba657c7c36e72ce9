package cmd

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/publish"
)

func captureCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "capture",
		Usage: "save a session as .carryover/session.json (the portable session format)",
		Description: "Selects a session like `carryover handoff` and writes it, redacted, to\n" +
			".carryover/session.json. `carryover resume --file` turns it into a resume prompt later.",
		Flags: append(selectionFlags(), &cli.BoolFlag{Name: "stdout", Usage: "also print the JSON on stdout"}),
		Action: func(c *cli.Context) error {
			return runCapture(e, selectionFrom(c), c.Bool("stdout"))
		},
	}
}

// SessionPath is where capture writes the portable session.
func SessionPath(project string) string { return filepath.Join(publish.Dir(project), "session.json") }

func runCapture(e *Env, sel selection, toStdout bool) error {
	stop := spinner(e, "reading sessions…")
	p, err := pick(e, sel)
	stop()
	if err != nil {
		return err
	}
	fmt.Fprintf(e.Stderr, "carryover: using %s session %s — %s\n", p.Tool, shortID(p.ID), p.reason)
	m, err := openManual(e, p).Handoff(p.pick(), false, e.progress)
	if err != nil {
		return exitErr(err)
	}
	s := m.Session
	b, err := s.Marshal()
	if err != nil {
		return exitf(ExitParse, "encode session.json: %v", err)
	}
	path := SessionPath(p.project)
	if publish.NotProject(p.project, e.UserHome()) {
		e.Stdout.Write(b)
		fmt.Fprintf(e.Stderr, "carryover: %s is the home directory or above it, never a project: no file written, the session is printed above\n", p.project)
		return nil
	}
	if err := publish.EnsureDir(p.project); err != nil {
		return exitf(ExitError, "cannot create %s: %v", publish.Dir(p.project), err)
	}
	// Recorded before it is written (like handoff.md): `resume` without
	// --file reads only a session.json carryover captured.
	if err := publish.RecordCaptured(e.Home(), p.project, b); err != nil {
		return exitf(ExitError, "record %s under %s: %v", path, e.Home(), err)
	}
	if err := publish.WriteOwn(p.project, filepath.Base(path), b); errors.Is(err, publish.ErrTracked) {
		log := newLogger(e)
		log.Prefix = "manual "
		log.Printf("%v", err)
		return exitf(ExitError, "%v", err)
	} else if err != nil {
		return exitf(ExitError, "write %s: %v", path, err)
	}
	if toStdout {
		e.Stdout.Write(b)
	}
	fmt.Fprintf(e.Stderr, "carryover: captured %d messages (~%d tokens), %d changed files, %d decisions, %d blockers\n",
		s.Conversation.MessageCount, s.Conversation.EstimatedTokens, len(s.FilesChanged), len(s.Decisions), len(s.Blockers)+len(s.Task.Blockers))
	fmt.Fprintf(e.Stderr, "carryover: wrote %s (turn it into a prompt with `carryover resume --file %s`)\n", path, path)
	return nil
}
