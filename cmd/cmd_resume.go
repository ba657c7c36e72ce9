package cmd

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/publish/resume"
)

func resumeCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "resume",
		Usage: "build the resume prompt from a captured session.json (or a structured handoff file)",
		Description: "Regenerates the prompt for another --target or --tokens budget without reading the agent\n" +
			"again. --file also accepts a YAML/JSON structured handoff (handoff --format yaml).",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "file", Usage: "session.json or structured handoff to read (default: .carryover/session.json)"},
			&cli.StringFlag{Name: "project", Usage: "project directory for the output (default: the git root of the current directory)"},
		}, outputFlags()...),
		Action: func(c *cli.Context) error {
			o, err := outputFrom(c)
			if err != nil {
				return err
			}
			return runResume(e, c.String("file"), c.String("project"), o)
		},
	}
}

func runResume(e *Env, file, projectFlag string, o outputOptions) error {
	project, err := currentProject(e, projectFlag)
	if err != nil {
		return err
	}
	if file == "" {
		file = SessionPath(project)
	} else if file, err = absPath(e, file); err != nil {
		return exitf(ExitError, "--file: %v", err)
	}
	l, err := resume.LoadFile(file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return exitf(ExitNotFound, "%s does not exist; run `carryover capture` first or pass --file", file)
		}
		return exitf(ExitParse, "%s: %v", file, err)
	}
	cfg, _ := LoadConfig(e, project)
	redact := redactor(cfg)
	s := l.AsSession()
	s.Redact(redact)
	var h *resume.Handoff
	if l.Handoff != nil {
		hc := *l.Handoff
		h = &hc
	}
	what := "session " + shortID(s.SessionID)
	if h != nil {
		what = "structured handoff"
	}
	fmt.Fprintf(e.Stderr, "carryover: using %s from %s\n", what, file)
	o.mode = cfg.Resume
	text, stats, err := render(s, h, o)
	if err != nil {
		return err
	}
	return deliver(e, project, text, stats, o, redact)
}
