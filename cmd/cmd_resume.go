package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/publish"
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
	l, imported, err := loadResume(e, project, file)
	if err != nil {
		return err
	}
	if file == "" {
		file = SessionPath(project)
	} else {
		file, _ = absPath(e, file)
	}
	cfg, _ := LoadConfig(e, project)
	redact := redactor(cfg)
	s := l.AsSession()
	s.Redact(redact)
	if imported {
		s.Imported = file
	}
	var h *resume.Handoff
	if l.Handoff != nil {
		hc := *l.Handoff
		h = &hc
	}
	what := "session " + shortID(s.SessionID)
	if h != nil {
		what = "structured handoff"
	}
	if imported {
		what += " imported from a file (not a session carryover recorded)"
	}
	fmt.Fprintf(e.Stderr, "carryover: using %s from %s\n", what, file)
	o.mode = cfg.Resume
	text, stats, err := render(s, h, o)
	if err != nil {
		return err
	}
	return deliver(e, project, text, stats, o, redact)
}

// loadResume reads what resume works from (issue 21). Without --file only
// a .carryover/session.json that `carryover capture` wrote, unchanged
// since, is read (a repository can commit one to pose as your previous
// session); never through a symlink. A file the user names with --file is
// imported (imported true; false when its bytes are a session.json capture
// wrote here), except through a symlink from inside the project to outside
// it, which is refused.
func loadResume(e *Env, project, file string) (l resume.Loaded, imported bool, err error) {
	if file == "" {
		path := SessionPath(project)
		b, err := publish.ReadOwnFile(project, filepath.Base(path), resume.MaxFile)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return l, false, exitf(ExitNotFound, "%s does not exist; run `carryover capture` first or pass --file", path)
		case err != nil:
			return l, false, exitf(ExitParse, "%s: %v", path, err)
		case !publish.Captured(e.Home(), project, b):
			return l, false, exitf(ExitParse, "%s was not written by `carryover capture` here, or it changed since (a repository may have shipped it), so it is not taken for your previous session; to import it anyway: carryover resume --file %s", path, path)
		}
		l, err = resume.Parse(b)
		if err != nil {
			return l, false, exitf(ExitParse, "%s: %v", path, err)
		}
		return l, false, nil
	}
	abs, err := absPath(e, file)
	if err != nil {
		return l, true, exitf(ExitError, "--file: %v", err)
	}
	if adapters.InProject(abs, project) {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			root := project
			if r, err := filepath.EvalSymlinks(project); err == nil {
				root = r
			}
			if !adapters.InProject(real, root) {
				return l, true, exitf(ExitParse, "--file %s is a link from inside the project to %s, outside it; not read (name the file itself if you mean it)", file, real)
			}
		}
	}
	l, err = resume.LoadFile(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return l, true, exitf(ExitNotFound, "%s does not exist", file)
		}
		return l, true, exitf(ExitParse, "%s: %v", file, err)
	}
	// A file carryover captured here (or a copy of it) is the user's own.
	if b, err := os.ReadFile(abs); err == nil && publish.Captured(e.Home(), project, b) {
		return l, false, nil
	}
	return l, true, nil
}
