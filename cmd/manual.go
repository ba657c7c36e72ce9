package cmd

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/redact"
	"github.com/carryover/carryover/publish/service"
	"github.com/carryover/carryover/specs"
)

// The manual path: list, handoff, capture and resume find sessions in the
// agents' own stores and the ledger; the service ingests the chosen one.

type selection struct {
	source, session, project, transcript string
	// since: carryover started the agent then (run), so a session begun
	// since is the user's even in a file git tracks.
	since time.Time
}

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
	if explicit != "" {
		abs, err := absPath(e, explicit)
		if err != nil {
			return "", err
		}
		if !isDir(abs) {
			return "", exitf(ExitError, "--project %s is not a directory", explicit)
		}
		return service.Root(abs, ""), nil
	}
	if e.WorkDir == "" {
		return "", exitf(ExitError, "cannot read the current directory; pass --project")
	}
	return service.Root("", e.WorkDir), nil
}

func adapterEnv(e *Env) adapters.Env { return adapters.Env{Getenv: e.Getenv, Home: e.UserHome()} }

// candidate is a session found in an agent's store or only in the ledger.
// NotYours says why it is never chosen without being named (markNotYours).
type candidate struct {
	adapters.NativeSession
	InLedger   bool   `json:"in_ledger,omitempty"`
	LedgerOnly bool   `json:"ledger_only,omitempty"`
	NotYours   string `json:"not_yours,omitempty"`
}

// gather lists sessions of project ("" = all) from every agent's store and
// from the ledger, newest first. stores reports whether any agent store or
// ledger session exists at all (false = "no agents detected").
func gather(e *Env, project, source string) (out []candidate, stores bool, err error) {
	aenv := adapterEnv(e)
	aenv.WorkDir = e.WorkDir // list --all finds Aider's histories there
	names := adapters.ListerNames()
	if source != "" {
		if _, err := listerFor(source); err != nil {
			return nil, false, err
		}
		names = []string{source}
	}
	seen := map[string]int{}
	st, descs := service.OpenListing(e.service(), &aenv)
	defer st.Close()
	for _, n := range names {
		l, _ := adapters.ListerFor(n)
		for _, d := range l.Stores(aenv) {
			stores = stores || isDir(d)
		}
		ss, err := l.ListSessions(aenv, project)
		if err != nil {
			fmt.Fprintf(e.Stderr, "carryover: %s sessions could not be listed: %v\n", n, err)
			continue
		}
		for _, s := range ss {
			seen[s.Tool+"\x00"+s.ID] = len(out)
			out = append(out, candidate{NativeSession: s})
		}
		if project == "" {
			if note := adapters.UnreadableNote(n, aenv, len(ss)); note != "" {
				fmt.Fprintf(e.Stderr, "carryover: %s\n", note)
			}
		}
	}
	if descs != nil {
		_ = descs.Flush() // a cache: a busy ledger costs the next list a re-read
	}
	// The ledger keeps sessions whose transcripts are gone.
	out = withLedgerSessions(out, seen, st.ListedSessions(project, source, 500))
	markNotYours(e, out)
	sortCandidates(out)
	return out, stores || len(out) > 0, nil
}

// sortCandidates orders sessions yours first, then newest first, then by
// agent and id.
func sortCandidates(out []candidate) {
	sort.SliceStable(out, func(i, j int) bool {
		if (out[i].NotYours == "") != (out[j].NotYours == "") {
			return out[i].NotYours == "" // a planted session never outranks one of yours
		}
		if !out[i].LastActive.Equal(out[j].LastActive) {
			return out[i].LastActive.After(out[j].LastActive)
		}
		return out[i].Tool+out[i].ID < out[j].Tool+out[j].ID
	})
}

// withLedgerSessions marks the listed sessions the ledger also holds and
// appends those only the ledger still has (their transcripts are gone).
func withLedgerSessions(out []candidate, seen map[string]int, ls []service.LedgerSession) []candidate {
	for _, s := range ls {
		if i, ok := seen[s.Tool+"\x00"+s.NativeID]; ok {
			out[i].InLedger = true
			continue
		}
		if s.Rows == 0 {
			continue
		}
		c := candidate{NativeSession: adapters.NativeSession{Tool: s.Tool, ID: s.NativeID, Path: s.Transcript, Project: s.Project,
			LastActive: s.LastActive, MessageCount: s.Rows, CountEstimated: true, Preview: s.Title}, InLedger: true, LedgerOnly: true}
		c.Preview = cmp.Or(c.Preview, "(transcript gone; kept in the ledger)")
		out = append(out, c)
	}
	return out
}

// matchID returns the candidates whose id is id, else those it starts.
func matchID(cs []candidate, id string) []candidate {
	id = strings.ToLower(strings.TrimSpace(id))
	var exact, prefix []candidate
	for _, c := range cs {
		cid := strings.ToLower(c.ID)
		switch {
		case cid == id:
			exact = append(exact, c)
		case strings.HasPrefix(cid, id):
			prefix = append(prefix, c)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	return prefix
}

// closestSessions names the (at most 3) sessions whose ids are nearest to
// the prefix arg: the edit distance to an id's start of the same length.
func closestSessions(arg string, cs []candidate) []string {
	arg = strings.ToLower(arg)
	type near struct {
		name string
		d    int
	}
	var ns []near
	for _, c := range cs {
		id := strings.ToLower(c.ID)
		if r := []rune(id); len(r) > len([]rune(arg)) {
			id = string(r[:len([]rune(arg))])
		}
		ns = append(ns, near{c.Tool + " " + publish.ShortID(c.ID), publish.EditDistance(arg, id)})
	}
	sort.SliceStable(ns, func(i, j int) bool { return ns[i].d < ns[j].d })
	var out []string
	for _, n := range ns[:min(3, len(ns))] {
		out = append(out, n.name)
	}
	return out
}

// picked is the session a manual command works on, as the project
// service takes it.
type picked struct {
	service.Pick
	project string // where its context and outputs go
	reason  string // why it was chosen, for the user
}

// yoursPicked is c picked for project: recorded under it, with its context.
func yoursPicked(c candidate, project, reason string) picked {
	return picked{Pick: service.Pick{NativeSession: c.NativeSession, LedgerOnly: c.LedgerOnly, Key: project, Context: project}, project: project, reason: reason}
}

// noAgentsText is the empty state of a machine where no agent has run: the
// one thing to do, and where carryover looked — each agent's first store on
// this OS, with ~ for the home directory.
func noAgentsText(e *Env) string {
	var where []string
	aenv := adapterEnv(e)
	home := e.UserHome()
	for _, n := range adapters.ListerNames() {
		l, _ := adapters.ListerFor(n)
		for _, d := range l.Stores(aenv) {
			if !storeOfThisOS(d) {
				continue
			}
			if rel, err := filepath.Rel(home, d); err == nil && !strings.HasPrefix(rel, "..") {
				d = filepath.Join("~", rel)
			}
			where = append(where, d)
			break
		}
	}
	return "no agent sessions on this machine yet — run an agent (Claude Code, Codex, …) in this project first " +
		"(looked in " + strings.Join(where, ", ") + "; set " + strings.Join(specs.StoreVariables(runtime.GOOS), "/") + " if yours live elsewhere, " +
		"or pass --transcript FILE --source AGENT)"
}

// storeOfThisOS drops the other systems' candidate directories (VS Code's
// list has macOS's and Windows' on every OS).
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

// pickByID picks the session whose id starts with --session, in project's
// sessions cs first, else in any project's.
func pickByID(e *Env, sel selection, project string, cs []candidate, stores bool) (picked, error) {
	scope := "for " + project
	m := matchID(cs, sel.session)
	var all []candidate
	if len(m) == 0 {
		// Not in this project: look everywhere.
		var allStores bool
		var err error
		all, allStores, err = gather(e, "", sel.source)
		if err != nil {
			return picked{}, err
		}
		stores = stores || allStores
		m = matchID(all, sel.session)
		scope = "in any project"
	}
	if err := oneMatch(e, sel.session, m, all, stores); err != nil {
		return picked{}, err
	}
	if m[0].NotYours == notYoursTracked {
		return picked{}, exitf(ExitNotFound, "session %s is in %s, which the repository tracks in git, so it is not taken for one of yours; pass --transcript %s to use it anyway", publish.ShortID(m[0].ID), m[0].Path, m[0].Path)
	}
	if !adapters.InProject(m[0].Project, project) && m[0].Project != "" && isDir(m[0].Project) {
		project = m[0].Project
	}
	return yoursPicked(m[0], project, fmt.Sprintf("matched --session %q %s", sel.session, scope)), nil
}

// oneMatch says what to do when the id prefix matched no session (the
// closest of all) or several.
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
		var ids []string
		for i, c := range m {
			if i == 5 {
				ids = append(ids, "…")
				break
			}
			ids = append(ids, c.Tool+" "+publish.ShortID(c.ID))
		}
		return exitf(ExitNotFound, "session prefix %q is ambiguous (%d sessions: %s); give more of the id", id, len(m), strings.Join(ids, ", "))
	}
	return nil
}

// pickNewest picks the most recently active of the project's sessions cs
// that are the user's.
func pickNewest(e *Env, sel selection, project string, cs []candidate, stores bool) (picked, error) {
	all := len(cs)
	for i, c := range cs {
		if !sel.since.IsZero() && c.NotYours == notYoursTracked && !c.LastActive.Before(sel.since.Add(-time.Minute)) {
			cs[i].NotYours = ""
		}
	}
	cs, planted := yours(cs)
	if planted != "" {
		fmt.Fprintf(e.Stderr, "carryover: %s\n", planted)
	}
	if len(cs) == 0 {
		return picked{}, noneOfYours(e, project, all, stores, planted)
	}
	c := cs[0]
	why := fmt.Sprintf("the most recently active of %d session(s) for %s (last active %s)", len(cs), project, ago(e.Now(), c.LastActive))
	if n := agentCount(cs); sel.source == "" && n > 1 {
		why += fmt.Sprintf(", across %d agents", n)
	}
	return yoursPicked(c, project, why), nil
}

// noneOfYours says why no session was picked: no agents, only planted
// ones (all of them), or none for the project.
func noneOfYours(e *Env, project string, all int, stores bool, planted string) error {
	if !stores {
		return exitf(ExitError, "%s", noAgentsText(e))
	}
	if all > 0 {
		return exitf(ExitNotFound, "no session of yours found for %s (%s); pass --transcript FILE to use one of those anyway", project, planted)
	}
	return exitf(ExitNotFound, "no sessions found for %s; run `carryover list --all` to see other projects' sessions, or pass --project, --session or --transcript", project)
}

func agentCount(cs []candidate) int {
	agents := map[string]bool{}
	for _, x := range cs {
		agents[x.Tool] = true
	}
	return len(agents)
}

func pickTranscript(e *Env, sel selection, project string) (picked, error) {
	path, err := absPath(e, sel.transcript)
	if err != nil {
		return picked{}, err
	}
	if err := regularFile(path, "--transcript "+sel.transcript); err != nil {
		return picked{}, err
	}
	tool := sel.source
	why := "--source " + tool
	if tool == "" {
		tool = sniffTool(path)
		why = "detected from the file's content"
		if tool == "" {
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
	// A --transcript file the project's git tracks came with the
	// repository: it is recorded under "imported:<path>", not a directory,
	// so no project's fold, catch-up or handoff ever reads it.
	if trackedFile(path) {
		p.Key = "imported:" + d.Path
		p.reason += "; the repository tracks this file in git, so it is read as an imported file and never becomes the project's handoff by itself"
	}
	// Its git and file context come from its recorded directory when that
	// exists here, --project, or nowhere (the current directory says
	// nothing about a bundled session).
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

func listerFor(name string) (adapters.Lister, error) {
	if l, ok := adapters.ListerFor(name); ok {
		return l, nil
	}
	return nil, exitf(ExitError, "unknown --source %q (known: %s)", name, strings.Join(adapters.ListerNames(), ", "))
}

// sniffTool guesses the agent that wrote a transcript from its first bytes.
func sniffTool(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, b)
	b = b[:n]
	// Some writers put a space after the colon ("type": "user").
	return adapters.SniffTranscript(bytes.ReplaceAll(b, []byte(`": "`), []byte(`":"`)))
}

func openManual(e *Env, p picked) *service.Project {
	log := newLogger(e)
	log.Prefix = "manual tool=" + p.Tool + " session=" + publish.ShortID(p.ID) + " "
	return service.Open(e.service(), p.project, log)
}

// exitErr gives a service error its exit code: 3 for a session that could
// not be read, 2 for one that matches nothing, else 1.
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

// colour wraps s in an SGR colour on a terminal. NO_COLOR (no-color.org)
// turns it off; CLICOLOR_FORCE (any value but 0) turns it on off a terminal
// too (a pager, CI logs), and wins over NO_COLOR, as in the bixense.com
// CLICOLOR convention; CLICOLOR=0 turns it off.
func colour(e *Env, tty bool, code, s string) string {
	force := e.Getenv("CLICOLOR_FORCE")
	if force != "" && force != "0" {
		return "\x1b[" + code + "m" + s + "\x1b[0m"
	}
	if !tty || e.Getenv("NO_COLOR") != "" || e.Getenv("TERM") == "dumb" || e.Getenv("CLICOLOR") == "0" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// checkMark is a green ✓ or a red ✗.
func checkMark(e *Env, ok bool) string {
	if ok {
		return colour(e, e.StdoutTTY, "32", "✓")
	}
	return colour(e, e.StdoutTTY, "31", "✗")
}

// spinner shows progress on stderr when it is a terminal; stop clears it.
// While a transcript is read (Env.progress) it adds the bytes read of the
// file's size.
func spinner(e *Env, msg string) (stop func()) {
	if !e.StderrTTY {
		return func() {}
	}
	var read atomic.Int64
	var mu sync.Mutex
	var total int64
	var path string
	e.progress = func(p string, off int64) {
		if p != path { // a new file: its size is the total (one stat per file)
			mu.Lock()
			path, total = p, 0
			if fi, err := os.Stat(p); err == nil {
				total = fi.Size()
			}
			mu.Unlock()
		}
		read.Store(off)
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		frames := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			line := msg
			mu.Lock()
			if n, tot := read.Load(), total; tot > 1<<20 && n > 0 {
				line += fmt.Sprintf(" %s of %s", humanBytes(min(n, tot)), humanBytes(tot))
			}
			mu.Unlock()
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

// transcriptContext is where a --transcript session's project context
// comes from, and the sentence telling the user: the directory the session
// recorded as its own when it exists on this machine, else none.
func transcriptContext(recorded string) (string, string) {
	if recorded == "" {
		return "", "the transcript records no working directory, so no git or file context is added (pass --project DIR for some)"
	}
	if isDir(recorded) {
		return service.Root(recorded, ""), "project context from the session's recorded directory " + recorded
	}
	return "", "the session was recorded in " + recorded + ", which is not on this machine, so no git or file context is added (pass --project DIR for some)"
}

// Planted sessions (issue 21): a session file found in a project is not
// "your most recent session" just because it is there or says it is new.
// Public repositories commit .aider.chat.history.md files (the realworld
// corpus is made of them), and a repository can date one 2099, so that
// `carryover handoff` picked it and every later handoff carried its task.
// A session whose file the project's git tracks, or whose last activity is
// in the future, is listed (marked) but never chosen unless named:
// --transcript for a tracked file, --session or --transcript for a
// future-dated one.

const (
	notYoursTracked = "its file is tracked by git"
	notYoursFuture  = "dated in the future"
)

// futureSlack is how far ahead of the clock a session may be dated and
// still be chosen: clock steps and a file written a moment ago. Aider
// dates its sessions in local time without a zone, so a history written on
// another machine in a zone ahead of this one also looks future-dated —
// and is someone else's session anyway.
const futureSlack = 10 * time.Minute

// markNotYours sets NotYours on the candidates that are not to be chosen
// by themselves. The git index is read once per repository.
func markNotYours(e *Env, cs []candidate) {
	repos := service.Tracker{}
	limit := e.Now().Add(futureSlack)
	for i := range cs {
		c := &cs[i]
		if c.LastActive.After(limit) {
			c.NotYours = notYoursFuture
		}
		if c.Path == "" || c.Project == "" || !adapters.InProject(c.Path, c.Project) {
			continue // the agent's own store, outside any repository
		}
		if root := service.RepoRoot(c.Project); root != "" && repos.Tracked(root, c.Path) {
			c.NotYours = notYoursTracked
		}
	}
}

// yours returns the candidates that may be chosen by themselves, and a
// sentence naming what was passed over ("" when nothing was).
func yours(cs []candidate) ([]candidate, string) {
	var out []candidate
	skipped := map[string][]string{}
	for _, c := range cs {
		if c.NotYours == "" {
			out = append(out, c)
			continue
		}
		skipped[c.NotYours] = append(skipped[c.NotYours], c.Tool+" "+publish.ShortID(c.ID)+" in "+filepath.Base(c.Path))
	}
	var parts []string
	for _, why := range []string{notYoursTracked, notYoursFuture} {
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

// trackedFile reports whether the git repository holding path tracks it.
func trackedFile(path string) bool {
	root := service.RepoRoot(filepath.Dir(path))
	return root != "" && service.Tracker{}.Tracked(root, path)
}

// clip is redact.Clip: no partial word (no half secret) survives a cut.
func clip(s string, n int) string { return redact.Clip(s, n) }
