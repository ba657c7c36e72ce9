package cmd

import (
	"cmp"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/resume"
	"github.com/carryover/carryover/publish/service"
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
			switch { // SESSION (an id or a prefix of one) is --session
			case c.NArg() > 1:
				return usageErrorf(helpFor(c), "%s takes at most one session id, got %q", fullName(c), strings.Join(c.Args().Slice(), " "))
			case c.NArg() == 1 && sel.session != "" && sel.session != c.Args().First():
				return usageErrorf(helpFor(c), "two sessions given: %q and --session %q", c.Args().First(), sel.session)
			case c.NArg() == 1:
				sel.session = c.Args().First()
			}
			if c.Bool("pick") {
				if sel.session != "" || sel.transcript != "" {
					return usageErrorf(helpFor(c), "--pick chooses the session; drop the session id or --transcript")
				}
				ch, err := pickSession(e, sel.project, false, true, sel.source, helpFor(c))
				if err != nil {
					return err
				}
				sel.session, sel.source = ch.ID, cmp.Or(sel.source, ch.Tool)
			}
			return runHandoff(e, sel, o)
		},
	}
}

// pickAndSay picks sel's session and says which on stderr, and why.
func pickAndSay(e *Env, sel selection) (picked, error) {
	stop := spinner(e, "reading sessions…")
	p, err := pick(e, sel)
	stop()
	if err == nil {
		fmt.Fprintf(e.Stderr, "carryover: using %s session %s — %s\n", p.Tool, publish.ShortID(p.ID), p.reason)
	}
	return p, err
}

func runHandoff(e *Env, sel selection, o outputOptions) error {
	p, err := pickAndSay(e, sel)
	if err != nil {
		return err
	}
	proj := openManual(e, p)
	printLines(e.Stderr, "carryover: config: ", proj.ConfigErrs...)
	stop := spinner(e, "reading the transcript…")
	// No session named: the task state is the project's fold across sessions and agents (what handoff.md says).
	m, err := proj.Handoff(p.Pick, sel.session == "" && sel.transcript == "", e.progress)
	stop()
	if err != nil {
		return exitErr(err)
	}
	printLines(e.Stderr, "carryover: context of that session: ", m.Context)
	if len(m.DrawnFrom) > 0 {
		fmt.Fprintf(e.Stderr, "carryover: task state from the project's %d session(s): %s\n", len(m.DrawnFrom), strings.Join(m.DrawnFrom, "; "))
	}
	_ = onProject(e, p.project, false, func(p *service.Project) error { o.lifecycle = p.Lifecycle(); return nil })
	m.Session.ApplyLifecycle(o.lifecycle)
	o.mode = proj.Config.Resume
	return render(e, p.project, m.Session, nil, o, proj.Redact)
}

func captureCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "capture",
		Usage: "save a session as .carryover/session.json (the portable session format)",
		Description: "Selects a session like `carryover handoff` and writes it, redacted, to\n" +
			".carryover/session.json. `carryover resume --file` turns it into a resume prompt later.",
		Flags:  append(selectionFlags(), &cli.BoolFlag{Name: "stdout", Usage: "also print the JSON on stdout"}),
		Action: func(c *cli.Context) error { return runCapture(e, selectionFrom(c), c.Bool("stdout")) },
	}
}

// SessionPath is where capture writes the portable session.
func SessionPath(project string) string { return filepath.Join(publish.Dir(project), "session.json") }

func runCapture(e *Env, sel selection, toStdout bool) error {
	p, err := pickAndSay(e, sel)
	if err != nil {
		return err
	}
	m, err := openManual(e, p).Handoff(p.Pick, false, e.progress)
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
		logManual(e, err)
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
	l, file, imported, err := loadResume(e, project, file)
	if err != nil {
		return err
	}
	cfg, _ := LoadConfig(e, project)
	redact := service.Redactor(cfg)
	s := l.AsSession()
	s.Redact(redact)
	what := "session " + publish.ShortID(s.SessionID)
	if l.Handoff != nil {
		what = "structured handoff"
	}
	if imported {
		s.Imported = file
		what += " imported from a file (not a session carryover recorded)"
	}
	fmt.Fprintf(e.Stderr, "carryover: using %s from %s\n", what, file)
	o.mode = cfg.Resume
	return render(e, project, s, l.Handoff, o, redact)
}

// loadResume reads what resume works from (issue 21): the session.json capture wrote here (a repository can commit one
// posing as yours), or --file (absolute), imported unless capture wrote its bytes here, never via a link out of it.
func loadResume(e *Env, project, file string) (l resume.Loaded, path string, imported bool, err error) {
	if file == "" {
		l, err = loadCaptured(e, project)
		return l, SessionPath(project), false, err
	}
	abs, err := absPath(e, file)
	if err != nil {
		return l, abs, true, exitf(ExitError, "--file: %v", err)
	}
	if real, out := linkOut(abs, project); out {
		return l, abs, true, exitf(ExitParse, "--file %s is a link from inside the project to %s, outside it; not read (name the file itself if you mean it)", file, real)
	}
	l, err = resume.LoadFile(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return l, abs, true, exitf(ExitNotFound, "%s does not exist", file)
	} else if err != nil {
		return l, abs, true, exitf(ExitParse, "%s: %v", file, err)
	}
	b, err := os.ReadFile(abs) // a file carryover captured here (or a copy) is the user's own
	return l, abs, err != nil || !publish.Captured(e.Home(), project, b), nil
}

// loadCaptured reads the project's session.json only if capture wrote it.
func loadCaptured(e *Env, project string) (resume.Loaded, error) {
	path := SessionPath(project)
	b, err := publish.ReadOwnFile(project, filepath.Base(path), resume.MaxFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return resume.Loaded{}, exitf(ExitNotFound, "%s does not exist; run `carryover capture` first or pass --file", path)
	case err != nil:
		return resume.Loaded{}, exitf(ExitParse, "%s: %v", path, err)
	case !publish.Captured(e.Home(), project, b):
		return resume.Loaded{}, exitf(ExitParse, "%s was not written by `carryover capture` here, or it changed since (a repository may have shipped it), so it is not taken for your previous session; to import it anyway: carryover resume --file %s", path, path)
	}
	l, err := resume.Parse(b)
	if err != nil {
		return l, exitf(ExitParse, "%s: %v", path, err)
	}
	return l, nil
}

// linkOut reports whether abs lies in project but resolves outside it.
func linkOut(abs, project string) (string, bool) {
	real, err := filepath.EvalSymlinks(abs)
	if !adapters.InProject(abs, project) || err != nil {
		return "", false
	}
	root := project
	if r, err := filepath.EvalSymlinks(project); err == nil {
		root = r
	}
	return real, !adapters.InProject(real, root)
}

// outputOptions are handoff's and resume's shared flags, the protocol (mode) and a structured handoff's lifecycle.
type outputOptions struct {
	target, format, launch, mode string
	tokens                       int
	stdout, noClipboard          bool
	lifecycle                    *resume.Lifecycle
}

func outputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "target", Usage: "agent the prompt is for: " + strings.Join(resume.Targets(), ", ") + " (sets the budget: 60% of its context window)", Value: resume.DefaultTarget},
		&cli.IntFlag{Name: "tokens", Usage: "token budget (overrides --target's)"},
		&cli.StringFlag{Name: "format", Usage: "md (resume prompt), yaml or json (compact structured handoff)", Value: "md"},
		&cli.BoolFlag{Name: "stdout", Usage: "also print the result on stdout"},
		&cli.BoolFlag{Name: "no-clipboard", Usage: "do not copy the result to the clipboard"},
		&cli.StringFlag{Name: "launch", Usage: "start this agent on the resume prompt (" + strings.Join(launchable(), ", ") + ")"},
	}
}

func outputFrom(c *cli.Context) (outputOptions, error) {
	o := outputOptions{target: c.String("target"), format: strings.ToLower(c.String("format")), tokens: c.Int("tokens"),
		stdout: c.Bool("stdout"), noClipboard: c.Bool("no-clipboard"), launch: c.String("launch")}
	format, ok := map[string]string{"md": "md", "markdown": "md", "yaml": "yaml", "yml": "yaml", "json": "json"}[o.format]
	t, known := resume.CanonicalTarget(o.target)
	launch, _ := adapters.ByName(o.launch)
	switch {
	case !ok:
		return o, exitf(ExitError, "--format %q: use md, yaml or json", o.format)
	case o.tokens < 0:
		return o, exitf(ExitError, "--tokens must be positive")
	case !known:
		return o, exitf(ExitError, "unknown --target %q (known: %s)", o.target, strings.Join(resume.Targets(), ", "))
	case o.launch != "" && (launch == nil || launch.Launch == nil):
		return o, exitf(ExitError, "--launch %q: carryover can start %s", o.launch, strings.Join(launchable(), ", "))
	}
	o.format, o.target = format, t
	return o, nil
}

// ResumePath is where handoff and resume write their result (RESUME.md, RESUME.yaml, RESUME.json).
func ResumePath(project, format string) string {
	return filepath.Join(publish.Dir(project), "RESUME."+format)
}

// render builds o.format's text from s (redacted) and delivers it; loadedHandoff, if set, is re-emitted as is.
func render(e *Env, project string, s resume.Session, loadedHandoff *resume.Handoff, o outputOptions, redact func(string) string) error {
	budget, err := resume.Budget(o.target, o.tokens)
	if err != nil {
		return exitf(ExitError, "%v", err)
	}
	budgetNote := fmt.Sprintf("%d-token budget", budget)
	if o.tokens == 0 {
		budgetNote += fmt.Sprintf(" (%s: %d%% of %d)", o.target, int(resume.BudgetShare*100), resume.Window(o.target))
	}
	quality := ""
	if s.Quality != nil {
		quality = "; " + s.Quality.String()
	}
	if o.format == "md" {
		res, err := resume.Build(s, resume.Options{Target: o.target, Tokens: o.tokens, Mode: o.mode})
		if err != nil {
			return exitf(ExitCompression, "%v", err)
		}
		layers := publish.Map(res.Layers, func(l resume.LayerStat) string {
			st := l.Status // the status constants are their own words
			if st == resume.Truncated {
				st = fmt.Sprintf("truncated (%d of %d items)", l.Kept, l.Items)
			}
			return fmt.Sprintf("P%d %s %s", l.Priority, l.Name, st)
		})
		return deliver(e, project, res.Text, fmt.Sprintf("resume prompt ~%d tokens of a %s; layers: %s%s", res.Tokens, budgetNote, strings.Join(layers, ", "), quality), o, redact)
	}
	h := structuredHandoff(s, loadedHandoff, o)
	if err := h.Validate(); err != nil {
		return exitf(ExitParse, "%v", err)
	}
	trimmed, err := h.Fit(o.format, budget)
	if err != nil {
		return exitf(ExitCompression, "%v", err)
	}
	b, err := h.Encode(o.format)
	if err != nil {
		return exitf(ExitError, "%v", err)
	}
	note := map[bool]string{false: "all fields included", true: "lists trimmed to fit"}[trimmed]
	stats := fmt.Sprintf("structured handoff (%s) ~%d tokens of a %s; %s%s", o.format, resume.Estimate(string(b)), budgetNote, note, quality)
	return deliver(e, project, string(b), stats, o, redact)
}

// structuredHandoff is the loaded handoff (a byte-exact round trip), else s's with its lifecycle, degraded where thin.
func structuredHandoff(s resume.Session, loaded *resume.Handoff, o outputOptions) resume.Handoff {
	if loaded != nil {
		return loaded.WithProtocol(o.mode)
	}
	h := resume.Structured(s).WithLifecycle(o.lifecycle)
	resume.Degrade(&h, s)
	if s.Imported != "" {
		h.Warnings = append(h.Warnings, resume.ImportedNote(s.Imported))
	}
	return h.WithProtocol(o.mode)
}

// deliver writes the result file, prints it when asked, copies it to the clipboard and reports on stderr. text is
// redacted once more (idempotent) as the last step before egress.
func deliver(e *Env, project string, text, stats string, o outputOptions, redact func(string) string) error {
	text = redact(text)
	path := ResumePath(project, o.format)
	// The home directory (or an ancestor) is never a project: nothing is
	// written there; the prompt goes to stdout (and the clipboard).
	notProject := publish.NotProject(project, e.UserHome())
	if notProject && o.launch != "" {
		return exitf(ExitError, "%s is not a project (the home directory or above it): carryover writes no file there, so --launch has nothing to hand the agent; run it in the project's directory, or pass --project", project)
	}
	wrote, err := writeResume(e, project, path, text, notProject)
	if err != nil {
		return err
	}
	if o.stdout || notProject {
		printResult(e, text)
	}
	fmt.Fprintf(e.Stderr, "carryover: %s\n", stats)
	if notProject {
		fmt.Fprintf(e.Stderr, "carryover: %s is the home directory or above it, never a project: no file written, printed above\n", project)
	} else if wrote {
		fmt.Fprintf(e.Stderr, "carryover: wrote %s\n", path)
	}
	if !o.noClipboard {
		fmt.Fprintf(e.Stderr, "carryover: %s\n", copyText(e, text, path))
	}
	if o.launch != "" && !wrote {
		return exitf(ExitError, "--launch needs %s, which was not written (see above)", path)
	} else if o.launch != "" {
		return launchAgent(e, o.launch, project, path)
	}
	return nil
}

// printResult prints text on stdout, newline-ended; a terminal gets it without escapes: transcripts must not drive it.
func printResult(e *Env, text string) {
	shown := text
	if e.StdoutTTY {
		shown = publish.StripTerminal(text)
	}
	io.WriteString(e.Stdout, shown)
	if !strings.HasSuffix(text, "\n") {
		io.WriteString(e.Stdout, "\n")
	}
}

// writeResume writes the prompt to path unless project is not one; wrote is false also when git tracks that file.
func writeResume(e *Env, project, path, text string, notProject bool) (wrote bool, err error) {
	if notProject {
		return false, nil
	}
	if err = publish.EnsureDir(project); err == nil {
		err = publish.WriteOwn(project, filepath.Base(path), []byte(text))
	}
	if errors.Is(err, publish.ErrTracked) {
		// The repository commits that file (or .carryover/.gitignore): the prompt still goes to the
		// clipboard or stdout, never into a file `git commit -a` publishes.
		fmt.Fprintf(e.Stderr, "carryover: %v\n", err)
		logManual(e, err)
		return false, nil
	} else if err != nil {
		return false, exitf(ExitError, "write %s: %v (pass --project to a writable directory, or use --stdout)", path, err)
	}
	return true, nil
}

func logManual(e *Env, err error) {
	log := newLogger(e)
	log.Prefix = "manual "
	log.Printf("%v", err)
}

// plainText strips terminal escapes, controls but \n and \t, and invisible characters (publish.StripTerminal) from
// recorded strings (status, history): a planted file cannot drive the terminal or hide text. One Fprint*, one write.
type plainText struct{ w io.Writer }

func (p plainText) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, publish.StripTerminal(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}

func plainEnv(e *Env) *Env {
	pe := *e
	pe.Stdout = plainText{e.Stdout}
	return &pe
}

// OSC52 is the terminal escape that sets the clipboard to text; tmux passes escapes through only inside a DCS wrapper.
func OSC52(text string, tmux bool) string {
	seq := "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte(text)) + "\a"
	if tmux {
		seq = "\x1bPtmux;\x1b" + seq + "\x1b\\"
	}
	return seq
}

// copyText puts text on the clipboard, or over SSH (or if that fails) sends OSC 52 to a terminal stdout; it says which.
func copyText(e *Env, text, path string) string {
	ssh := e.Getenv("SSH_TTY") != "" || e.Getenv("SSH_CONNECTION") != ""
	var cerr error
	if !ssh {
		if e.Clipboard == nil {
			cerr = fmt.Errorf("no clipboard")
		} else if cerr = e.Clipboard(text); cerr == nil {
			return "copied to the clipboard: paste it into the next agent"
		}
	}
	if e.StdoutTTY {
		io.WriteString(e.Stdout, OSC52(text, e.Getenv("TMUX") != ""))
		note := "sent to your terminal's clipboard (OSC 52)"
		if ssh {
			note += " over SSH"
		}
		if len(text) > 74_000 {
			note += "; some terminals cap OSC 52 near 100 KB: if the paste is cut, use " + path
		}
		return note
	}
	why := "no clipboard over SSH without a terminal"
	if cerr != nil {
		first, _, _ := strings.Cut(cerr.Error(), "\n")
		why = "clipboard unavailable: " + first
	}
	return fmt.Sprintf("%s; the prompt is in %s", why, path)
}

func launchable() []string {
	var out []string
	for _, a := range adapters.All {
		if a.Launch != nil {
			out = append(out, a.Name)
		}
	}
	return out
}

// launchAgent starts agent on the prompt file. The prompt never goes through argv (E2BIG on large prompts, and it would
// show in ps): the agent is told to read the file.
func launchAgent(e *Env, agent, project, path string) error {
	a, _ := adapters.ByName(agent)
	argv := append(slices.Clone(a.Launch), "Read "+path+" (a handoff from a previous session) and resume the work it describes, starting with its \"Resume Now\" section.")
	bin := lookPath(e, argv[0])
	if bin == "" {
		return exitf(ExitError, "--launch %s: `%s` is not on PATH; the prompt is in %s", agent, argv[0], path)
	}
	argv[0] = bin
	fmt.Fprintf(e.Stderr, "carryover: starting %s in %s\n", filepath.Base(bin), project)
	if err := e.startProcess(project, argv); err != nil {
		return exitf(ExitError, "%s exited: %v", filepath.Base(bin), err)
	}
	return nil
}
