package cmd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/redact"
	"github.com/carryover/carryover/publish/service"
	"github.com/carryover/carryover/specs"
)

// The manual path: list, handoff, capture and resume find sessions in agents' stores and the ledger; the service
// ingests the chosen one.

type selection struct {
	source, session, project, transcript string
	since                                time.Time // run started the agent then: a session begun since is the user's even in a file git tracks
}

var (
	projectFlag = &cli.StringFlag{Name: "project", Usage: "project directory (default: the git root of the current directory)"}
	pickFlag    = &cli.BoolFlag{Name: "pick", Usage: "choose the session from a list on this terminal (↑/↓, enter; q cancels)"}
)

func selectionFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "source", Usage: "agent to read: " + strings.Join(adapters.ListerNames(), ", ") + " (default: any)"},
		&cli.StringFlag{Name: "session", Usage: "session id or a unique prefix of one (see: carryover list)"},
		projectFlag,
		&cli.StringFlag{Name: "transcript", Usage: "read this transcript file instead of looking the session up"},
	}
}

func selectionFrom(c *cli.Context) selection {
	return selection{source: c.String("source"), session: c.String("session"), project: c.String("project"), transcript: c.String("transcript")}
}

func absPath(e *Env, p string) (string, error) {
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	if e.WorkDir == "" {
		return "", errors.New("cannot read the current directory")
	}
	return filepath.Join(e.WorkDir, p), nil
}

// currentProject resolves --project or the working directory.
func currentProject(e *Env, explicit string) (string, error) {
	if explicit == "" && e.WorkDir == "" {
		return "", exitf(ExitError, "cannot read the current directory; pass --project")
	} else if explicit == "" {
		return service.Root("", e.WorkDir), nil
	}
	abs, err := absPath(e, explicit)
	if err != nil {
		return "", err
	}
	if !isDir(abs) {
		return "", exitf(ExitError, "--project %s is not a directory", explicit)
	}
	return service.Root(abs, ""), nil
}

// candidate is a session in an agent's store or only in the ledger, as the service lists it.
type candidate = service.Candidate

// gather lists the sessions of project ("" = all) from every agent's store and the ledger, yours first, then newest
// first. stores: any agent store or ledger session exists at all (false = "no agents detected").
func gather(e *Env, project, source string) ([]candidate, bool, error) {
	names := adapters.ListerNames()
	if source != "" {
		if _, err := listerFor(source); err != nil {
			return nil, false, err
		}
		names = []string{source}
	}
	aenv := adapterEnv(e)
	aenv.WorkDir = e.WorkDir // list --all finds Aider's histories there
	cs, stores, notes := service.ListSessions(e.service(), aenv, project, source, names)
	printLines(e.Stderr, "carryover: ", notes...)
	return cs, stores, nil
}

// matchID returns the candidates whose id is id, else those it starts.
func matchID(cs []candidate, id string) []candidate {
	id = strings.ToLower(strings.TrimSpace(id))
	var exact, prefix []candidate
	for _, c := range cs {
		if cid := strings.ToLower(c.ID); cid == id {
			exact = append(exact, c)
		} else if strings.HasPrefix(cid, id) {
			prefix = append(prefix, c)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	return prefix
}

// closestSessions names the (at most 3) sessions whose ids start nearest (edit distance) to the prefix arg.
func closestSessions(arg string, cs []candidate) []string {
	arg = strings.ToLower(arg)
	d := func(c candidate) int {
		r := []rune(strings.ToLower(c.ID))
		return publish.EditDistance(arg, string(r[:min(len(r), len([]rune(arg)))]))
	}
	cs = slices.Clone(cs)
	slices.SortStableFunc(cs, func(a, b candidate) int { return d(a) - d(b) })
	return labels(cs[:min(3, len(cs))])
}

// labels names sessions as "<agent> <short id>".
func labels(cs []candidate) []string {
	return publish.Map(cs, func(c candidate) string { return c.Tool + " " + publish.ShortID(c.ID) })
}

// picked is the session a manual command works on, as the service takes it.
type picked struct {
	service.Pick
	project string // where its context and outputs go
	reason  string // why it was chosen, for the user
}

// yoursPicked is c picked for project: recorded under it, with its context.
func yoursPicked(c candidate, project, reason string) picked {
	return picked{Pick: service.Pick{NativeSession: c.NativeSession, LedgerOnly: c.LedgerOnly, Key: project, Context: project}, project: project, reason: reason}
}

// noAgentsText is the empty state of a machine where no agent has run: the one thing to do, and where carryover looked
// (each agent's first store on this OS, ~ for the home directory).
func noAgentsText(e *Env) string {
	var where []string
	for _, n := range adapters.ListerNames() {
		l, _ := adapters.ListerFor(n)
		if ds := l.Stores(adapterEnv(e)); slices.ContainsFunc(ds, storeOfThisOS) {
			d := ds[slices.IndexFunc(ds, storeOfThisOS)]
			if rel, err := filepath.Rel(e.UserHome(), d); err == nil && !strings.HasPrefix(rel, "..") {
				d = filepath.Join("~", rel)
			}
			where = append(where, d)
		}
	}
	return "no agent sessions on this machine yet — run an agent (Claude Code, Codex, …) in this project first " +
		"(looked in " + strings.Join(where, ", ") + "; set " + strings.Join(specs.StoreVariables(runtime.GOOS), "/") + " if yours live elsewhere, " +
		"or pass --transcript FILE --source AGENT)"
}

// storeOfThisOS drops the other systems' directories (VS Code's list has macOS's and Windows' on every OS).
func storeOfThisOS(d string) bool {
	mac := strings.Contains(d, filepath.Join("Library", "Application Support"))
	win := strings.Contains(d, filepath.Join("AppData", "Roaming"))
	switch runtime.GOOS {
	case "darwin":
		return !win
	case "windows":
		return !mac
	}
	return !mac && !win
}

func pick(e *Env, sel selection) (picked, error) {
	project, err := currentProject(e, sel.project)
	if err != nil {
		return picked{}, err
	}
	if sel.transcript != "" {
		return pickTranscript(e, sel, project)
	}
	cs, stores, err := gather(e, project, sel.source)
	if err != nil {
		return picked{}, err
	}
	if sel.session != "" {
		return pickByID(e, sel, project, cs, stores)
	}
	return pickNewest(e, sel, project, cs, stores)
}

// pickByID picks the session whose id starts with --session, in project's sessions cs first, else in any project's.
func pickByID(e *Env, sel selection, project string, cs []candidate, stores bool) (picked, error) {
	scope, m, all := "for "+project, matchID(cs, sel.session), []candidate(nil)
	if len(m) == 0 {
		var allStores bool
		var err error
		if all, allStores, err = gather(e, "", sel.source); err != nil {
			return picked{}, err
		}
		stores, m, scope = stores || allStores, matchID(all, sel.session), "in any project"
	}
	if err := oneMatch(e, sel.session, m, all, stores); err != nil {
		return picked{}, err
	}
	if m[0].NotYours == service.NotYoursTracked {
		return picked{}, exitf(ExitNotFound, "session %s is in %s, which the repository tracks in git, so it is not taken for one of yours; pass --transcript %s to use it anyway", publish.ShortID(m[0].ID), m[0].Path, m[0].Path)
	}
	if !adapters.InProject(m[0].Project, project) && m[0].Project != "" && isDir(m[0].Project) {
		project = m[0].Project
	}
	return yoursPicked(m[0], project, fmt.Sprintf("matched --session %q %s", sel.session, scope)), nil
}

// oneMatch says what to do when the id prefix matched no session (naming the closest of all) or several.
func oneMatch(e *Env, id string, m, all []candidate, stores bool) error {
	switch {
	case len(m) == 0 && !stores:
		return exitf(ExitError, "%s", noAgentsText(e))
	case len(m) == 0:
		hint := "run `carryover list --all` to see the ids"
		if near := closestSessions(id, all); len(near) > 0 {
			hint = "closest: " + strings.Join(near, ", ") + " (`carryover list --all` lists them all)"
		}
		return exitf(ExitNotFound, "no session id starts with %q; %s", id, hint)
	case len(m) > 1:
		ids := labels(m[:min(5, len(m))])
		if len(m) > 5 {
			ids = append(ids, "…")
		}
		return exitf(ExitNotFound, "session prefix %q is ambiguous (%d sessions: %s); give more of the id", id, len(m), strings.Join(ids, ", "))
	}
	return nil
}

// pickNewest picks the most recently active of the project's sessions cs that are the user's.
func pickNewest(e *Env, sel selection, project string, cs []candidate, stores bool) (picked, error) {
	all := len(cs)
	cs, planted := yours(ranSince(cs, sel.since))
	if planted != "" {
		fmt.Fprintf(e.Stderr, "carryover: %s\n", planted)
	}
	switch {
	case !stores && len(cs) == 0:
		return picked{}, exitf(ExitError, "%s", noAgentsText(e))
	case all > 0 && len(cs) == 0:
		return picked{}, exitf(ExitNotFound, "no session of yours found for %s (%s); pass --transcript FILE to use one of those anyway", project, planted)
	case len(cs) == 0:
		return picked{}, exitf(ExitNotFound, "no sessions found for %s; run `carryover list --all` to see other projects' sessions, or pass --project, --session or --transcript", project)
	}
	why := fmt.Sprintf("the most recently active of %d session(s) for %s (last active %s)", len(cs), project, ago(e.Now(), cs[0].LastActive))
	tools := slices.Sorted(slices.Values(publish.Map(cs, func(c candidate) string { return c.Tool })))
	if n := len(slices.Compact(tools)); sel.source == "" && n > 1 {
		why += fmt.Sprintf(", across %d agents", n)
	}
	return yoursPicked(cs[0], project, why), nil
}

func pickTranscript(e *Env, sel selection, project string) (picked, error) {
	path, err := absPath(e, sel.transcript)
	if err != nil {
		return picked{}, err
	}
	if err := regularFile(path, "--transcript "+sel.transcript); err != nil {
		return picked{}, err
	}
	tool, why := sel.source, "--source "+sel.source
	if tool == "" {
		if tool, why = sniffTool(path), "detected from the file's content"; tool == "" {
			return picked{}, exitf(ExitParse, "cannot tell which agent wrote %s; pass --source (%s); %s", sel.transcript, strings.Join(adapters.ListerNames(), ", "), adapters.Tried(""))
		}
	}
	l, err := listerFor(tool)
	if err != nil {
		return picked{}, err
	}
	d, err := l.Describe(path)
	if err != nil {
		return picked{}, exitf(ExitParse, "%s does not look like a %s transcript (%v); check --source; %s", sel.transcript, tool, err, adapters.Tried(tool))
	}
	if sel.session != "" && !strings.HasPrefix(strings.ToLower(d.ID), strings.ToLower(sel.session)) {
		return picked{}, exitf(ExitNotFound, "--transcript %s holds session %s, not %q", sel.transcript, publish.ShortID(d.ID), sel.session)
	}
	p := picked{Pick: service.Pick{NativeSession: d, Explicit: true, Key: project, Context: project}, project: project,
		reason: fmt.Sprintf("--transcript %s (%s, %s)", sel.transcript, tool, why)}
	// A file that came with the repository or an archive is keyed "imported:<path>", so no project's fold or handoff reads it.
	if why := service.FileNotYours(service.Tracker{}, path); why != "" {
		p.Key = "imported:" + d.Path
		p.reason += "; " + why + ", so it is read as an imported file and never becomes the project's handoff by itself"
	}
	// Its context: the recorded directory if it exists here, --project, or none (the cwd says nothing of a bundle).
	if sel.project == "" {
		p.Context, why = transcriptContext(d.Project)
		p.reason += "; " + why
	}
	return p, nil
}

// regularFile says, naming it as arg, why path is no regular file.
func regularFile(path, arg string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return exitf(ExitNotFound, "%s does not exist", arg)
	case err != nil:
		return exitf(ExitParse, "%s: %v", arg, err)
	case !fi.Mode().IsRegular():
		return exitf(ExitParse, "%s is not a regular file", arg)
	}
	return nil
}

// transcriptContext is a --transcript session's context (its recorded directory if here) and the sentence saying so.
func transcriptContext(recorded string) (string, string) {
	switch {
	case recorded == "":
		return "", "the transcript records no working directory, so no git or file context is added (pass --project DIR for some)"
	case isDir(recorded):
		return service.Root(recorded, ""), "project context from the session's recorded directory " + recorded
	}
	return "", "the session was recorded in " + recorded + ", which is not on this machine, so no git or file context is added (pass --project DIR for some)"
}

func listerFor(name string) (adapters.Lister, error) {
	if l, ok := adapters.ListerFor(name); ok {
		return l, nil
	}
	return nil, exitf(ExitError, "unknown --source %q (known: %s)", name, strings.Join(adapters.ListerNames(), ", "))
}

// sniffTool guesses the agent that wrote a transcript from its first 64 KiB.
func sniffTool(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, b)
	// Some writers put a space after the colon ("type": "user").
	return adapters.SniffTranscript(bytes.ReplaceAll(b[:n], []byte(`": "`), []byte(`":"`)))
}

func openManual(e *Env, p picked) *service.Project {
	log := newLogger(e)
	log.Prefix = "manual tool=" + p.Tool + " session=" + publish.ShortID(p.ID) + " "
	return service.Open(e.service(), p.project, log)
}

// exitErr gives a service error its exit code: 3 unreadable, 2 not found, else 1.
func exitErr(err error) error {
	var u service.Unreadable
	var nf service.NotFound
	switch {
	case err == nil:
		return nil
	case errors.As(err, &u):
		return exitf(ExitParse, "%v", err)
	case errors.As(err, &nf):
		return exitf(ExitNotFound, "%v", err)
	}
	return exitf(ExitError, "%v", err)
}

func ago(now, t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return publish.Ago(now, t)
}

// colour wraps s in an SGR colour on a terminal. NO_COLOR (no-color.org), TERM=dumb and CLICOLOR=0 turn it off;
// CLICOLOR_FORCE (any value but 0) turns it on off a terminal too and wins over NO_COLOR (bixense.com).
func colour(e *Env, tty bool, code, s string) string {
	force := e.Getenv("CLICOLOR_FORCE")
	if (force == "" || force == "0") && (!tty || e.Getenv("NO_COLOR") != "" || e.Getenv("TERM") == "dumb" || e.Getenv("CLICOLOR") == "0") {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// checkMark is a green ✓ or a red ✗.
func checkMark(e *Env, ok bool) string {
	return colour(e, e.StdoutTTY, map[bool]string{false: "31", true: "32"}[ok], map[bool]string{false: "✗", true: "✓"}[ok])
}

// spinner shows progress on stderr when it is a terminal; stop clears it. While a transcript is read
// (Env.progress) it adds the bytes read of the file's size (over 1 MiB).
func spinner(e *Env, msg string) (stop func()) {
	if !e.StderrTTY {
		return func() {}
	}
	var read, total atomic.Int64
	var mu sync.Mutex
	var path string
	e.progress = func(p string, off int64) {
		mu.Lock()
		if p != path { // a new file: its size is the total (one stat per file)
			path = p
			total.Store(0)
			if fi, err := os.Stat(p); err == nil {
				total.Store(fi.Size())
			}
		}
		mu.Unlock()
		read.Store(off)
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		frames := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			line := msg
			if n, tot := read.Load(), total.Load(); tot > 1<<20 && n > 0 {
				line += fmt.Sprintf(" %s of %s", humanBytes(min(n, tot)), humanBytes(tot))
			}
			fmt.Fprintf(e.Stderr, "\r\x1b[K%s %s", frames[i%len(frames)], line)
			select {
			case <-done:
				fmt.Fprint(e.Stderr, "\r\x1b[K")
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished; e.progress = nil }
}

// ranSince unmarks the tracked sessions active since a run started the agent (not zero): `carryover run` started them.
func ranSince(cs []candidate, since time.Time) []candidate {
	for i, c := range cs {
		if !since.IsZero() && c.NotYours == service.NotYoursTracked && !c.LastActive.Before(since.Add(-time.Minute)) {
			cs[i].NotYours = ""
		}
	}
	return cs
}

// yours returns the candidates that may be chosen unnamed, and a sentence naming what was passed over.
func yours(cs []candidate) ([]candidate, string) {
	var out []candidate
	skipped := map[string][]string{}
	for _, c := range cs {
		if c.NotYours == "" {
			out = append(out, c)
		} else {
			skipped[c.NotYours] = append(skipped[c.NotYours], labels([]candidate{c})[0]+" in "+filepath.Base(c.Path))
		}
	}
	var parts []string
	for _, why := range service.NotYoursWhy {
		if s := skipped[why]; len(s) > 0 {
			if len(s) > 3 {
				s = append(s[:3], fmt.Sprintf("and %d more", len(s)-3))
			}
			parts = append(parts, fmt.Sprintf("passed over %s (%s)", strings.Join(s, ", "), why))
		}
	}
	if len(parts) == 0 {
		return out, ""
	}
	return out, strings.Join(parts, "; ") + ": such a session is used only when you name it (--transcript FILE)"
}

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
			jsonFlag("print JSON"),
			pickFlag,
		},
		Action: func(c *cli.Context) error {
			if !c.Bool("pick") {
				return runList(e, c.String("source"), c.String("project"), c.Bool("all"), c.Int("limit"), c.Bool("json"))
			}
			// For `carryover handoff $(carryover list --pick)`: the list is
			// drawn on the terminal, the id goes after it, alone.
			ch, err := pickSession(e, c.String("project"), c.Bool("all"), false, c.String("source"), helpFor(c))
			if err == nil {
				_, err = fmt.Fprintln(e.Stdout, ch.ID)
			}
			return err
		},
	}
}

func listProject(e *Env, projectFlag string, all bool) (string, error) { // "" with --all
	if all {
		return "", nil
	}
	return currentProject(e, projectFlag)
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
	out := make([]listEntry, 0, len(cs))
	for i := range cs {
		cs[i].Preview = publish.OneLine(redact(cs[i].Preview))
		cs[i].Project = publish.OneLine(cs[i].Project)
		out = append(out, listEntry{candidate: cs[i], ShortID: publish.ShortID(cs[i].ID)})
	}
	return output(e, asJSON, struct {
		Project  string      `json:"project"` // "" with --all
		Sessions []listEntry `json:"sessions"`
		Total    int         `json:"total"` // before --limit
	}{project, out, total}, func() {
		if len(cs) > 0 {
			printListTable(e, cs, all)
		}
		listFooter(e, project, cs, total, stores, all)
	})
}

func printListTable(e *Env, cs []candidate, all bool) { // --all adds the project
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
			prev = redact.Clip(prev, 70)
		}
		if c.NotYours != "" {
			prev = "(not picked: " + c.NotYours + ") " + prev
		}
		fmt.Fprintln(tw, row(c.Tool, publish.ShortID(c.ID), ago(e.Now(), c.LastActive), n, c.Project, prev))
	}
	tw.Flush()
}

// listFooter says on stderr what to do next: an empty list is a success (exit 0), with the one thing to do.
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
		id := strings.ToLower(publish.ShortID(cs[0].ID))
		fmt.Fprintf(e.Stderr, "carryover: hand one off with `carryover handoff --session %s`\n", id[:min(8, len(id))])
	}
}

// A checkbox (or radio) list for a terminal in raw mode: ↑/↓ or j/k move, space toggles, enter confirms, q or
// Ctrl-C aborts. It reads key bytes from r and redraws on w: a test drives it through a pseudo-terminal.

var errPickAborted = errors.New("aborted")

type pickItem struct {
	Label, Note string
	On          bool
}

// pickList shows items under title and returns their states at enter. With radio exactly one item is on: the
// cursor starts on the first that is, and enter picks the item under the cursor.
func pickList(r io.Reader, w io.Writer, title string, items []pickItem, radio bool) ([]pickItem, error) {
	p := &picker{title: title, items: slices.Clone(items), radio: radio, help: "↑/↓ or j/k move, space toggles, enter confirms, q quits"}
	if radio {
		p.help = "↑/↓ or j/k move, enter picks, q quits"
		p.cur = max(0, slices.IndexFunc(p.items, func(it pickItem) bool { return it.On }))
	}
	for _, it := range p.items {
		p.width = max(p.width, len([]rune(it.Label)))
	}
	io.WriteString(w, p.frame())
	in := bufio.NewReader(r) // a *bufio.Reader comes back as is: shared by consecutive lists, keys typed ahead stay
	for {
		c, err := in.ReadByte()
		if err != nil {
			return nil, errPickAborted // the terminal went away: write nothing
		}
		switch p.key(c, in) {
		case keyAbort:
			return nil, errPickAborted
		case keyDone:
			return p.items, nil
		case keyMoved:
			io.WriteString(w, p.frame())
		}
	}
}

// picker is pickList's state; drawn is how many lines the last frame drew.
type picker struct {
	title, help       string
	items             []pickItem
	radio             bool
	cur, width, drawn int
}

func (p *picker) frame() string {
	var b strings.Builder
	if p.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", p.drawn) // back to the list's first line
	}
	// Raw mode: no output processing, so \r\n and clear each line.
	b.WriteString("\r\x1b[2K" + p.title + " (" + p.help + ")\r\n")
	for i, it := range p.items {
		ptr, box := map[bool]string{false: "  ", true: "> "}[i == p.cur], map[bool]string{false: "[ ]", true: "[x]"}[it.On]
		if p.radio {
			box = map[bool]string{false: "( )", true: "(•)"}[i == p.cur]
		}
		line := fmt.Sprintf("%s%s %-*s", ptr, box, p.width, it.Label)
		if it.Note != "" {
			line += "  " + it.Note
		}
		b.WriteString("\r\x1b[2K" + line + "\r\n")
	}
	p.drawn = len(p.items) + 1
	return b.String()
}

type keyResult int

const (
	keyIgnored keyResult = iota
	keyMoved             // the list changed: draw it again
	keyDone
	keyAbort
)

// key applies one key, reading the rest of an arrow's escape (ESC [ A, or ESC O A in application mode) from in.
func (p *picker) key(c byte, in *bufio.Reader) keyResult {
	switch c {
	case 'q', 'Q', 3, 4: // q, Ctrl-C, Ctrl-D
		return keyAbort
	case 'k', 'K', 16: // k, Ctrl-P
		p.move(-1)
	case 'j', 'J', 14: // j, Ctrl-N
		p.move(1)
	case ' ', 'x':
		if !p.radio {
			p.items[p.cur].On = !p.items[p.cur].On
		}
	case '\r', '\n':
		if p.radio { // the item under the cursor; a checkbox list keeps its ticks
			for i := range p.items {
				p.items[i].On = i == p.cur
			}
		}
		return keyDone
	case 0x1b:
		return p.arrow(in)
	default:
		return keyIgnored
	}
	return keyMoved
}

func (p *picker) arrow(in *bufio.Reader) keyResult {
	b1, err1 := in.ReadByte()
	b2, err2 := in.ReadByte()
	if err1 != nil || err2 != nil || (b1 != '[' && b1 != 'O') {
		return keyIgnored
	}
	p.move(map[byte]int{'A': -1, 'B': 1}[b2])
	return keyMoved
}

func (p *picker) move(d int) { p.cur = (p.cur + len(p.items) + d) % len(p.items) }

// pickSession lets the user choose, newest first like `claude --resume`, one of the sessions of --project (or the
// current one; all: of every project; anyIfNone: those when the project has none). It needs raw mode.
func pickSession(e *Env, projectFlag string, all, anyIfNone bool, source, help string) (candidate, error) {
	project, err := listProject(e, projectFlag, all)
	if err != nil {
		return candidate{}, err
	}
	cs, _, err := gather(e, project, source)
	if err == nil && len(cs) == 0 && anyIfNone { // never with all: project is one
		cs, _, err = gather(e, "", source)
	}
	if err != nil {
		return candidate{}, err
	}
	return pickOne(e, cs, help)
}

func pickOne(e *Env, cs []candidate, help string) (candidate, error) {
	switch {
	case !e.StdinTTY || !e.StdoutTTY || e.MakeRaw == nil:
		return candidate{}, usageErrorf(help, "--pick needs a terminal; pass a session id instead (see `carryover list`)")
	case len(cs) == 0:
		return candidate{}, exitf(ExitNotFound, "no sessions to pick from; run `carryover list --all`")
	}
	items := make([]pickItem, len(cs))
	for i, l := range labels(cs) {
		items[i] = pickItem{Label: l, Note: ago(e.Now(), cs[i].LastActive) + "  " + redact.Clip(cs[i].Preview, 60), On: i == 0}
	}
	restore, err := e.MakeRaw()
	if err != nil {
		return candidate{}, usageErrorf(help, "--pick needs a terminal (%v); pass a session id instead", err)
	}
	got, err := pickList(e.Stdin, e.Stdout, "Session", items, true)
	restore()
	if i := slices.IndexFunc(got, func(it pickItem) bool { return it.On }); err == nil && i >= 0 {
		return cs[i], nil
	}
	return candidate{}, exitf(ExitCancelled, "cancelled; nothing was picked")
}
