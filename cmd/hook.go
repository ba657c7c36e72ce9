package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
)

// MaxPayload is the most hook stdin carryover reads; the rest is drained.
const MaxPayload = 8 << 20

// envelopes maps each agent to its hook injection envelope. specs/ holds the
// version-resolved value; a test keeps the two in agreement.
var envelopes = map[string]publish.Envelope{
	"claude":         publish.EnvelopeHookSpecific,
	"codex":          publish.EnvelopeHookSpecific,
	"vscode-copilot": publish.EnvelopeHookSpecific,
	"gemini":         publish.EnvelopeHookSpecificNoEvent,
	"copilot-cli":    publish.EnvelopeFlatCamel,
	"cursor":         publish.EnvelopeFlatSnake,
	"windsurf":       publish.EnvelopeNone,
	"aider":          publish.EnvelopeNone,
}

// injectEvents are the native events whose stdout reaches the model.
func isStartEvent(event string) bool { return strings.EqualFold(event, "SessionStart") }

// isToolEvent reports whether event fires per tool call; those snapshot
// rows without re-publishing the handoff (see snapshot).
func isToolEvent(event string) bool {
	switch strings.ToLower(event) {
	case "posttooluse", "posttoolusefailure", "pretooluse", "aftertool", "beforetool", "afterfileedit",
		"aftershellexecution", "aftermcpexecution", "post_write_code", "post_run_command", "post_mcp_tool_use", "post_read_code":
		return true
	}
	return false
}

func isPromptEvent(event string) bool {
	switch strings.ToLower(event) {
	case "userpromptsubmit", "userpromptsubmitted", "beforesubmitprompt", "beforeagent":
		return true
	}
	return false
}

// budget is the internal deadline for one snapshot: well under every
// agent's hook timeout (Claude's SessionEnd gets 1.5 s in total).
func budget(e *Env, event string) time.Duration {
	if v := e.Getenv("CARRYOVER_DEADLINE_MS"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return time.Duration(n) * time.Millisecond
		}
	}
	if strings.EqualFold(event, "SessionEnd") {
		return 900 * time.Millisecond
	}
	return 2 * time.Second
}

// Snapshot is the hook entry point. Whatever happens it returns normally:
// the only stdout is a valid injection (or nothing) and every problem goes
// to the log.
func Snapshot(e *Env, tool, event string) {
	start := time.Now()
	log := newLogger(e)
	log.prefix = fmt.Sprintf("snapshot tool=%s event=%s ", tool, event)
	defer func() {
		if r := recover(); r != nil {
			log.Printf("internal error (recovered): %v", r)
		}
	}()
	var out bytes.Buffer
	wlog := *log // the watchdog's own copy: snapshot grows log's prefix
	b := budget(e, event)
	finished, err := runBy(start.Add(b+watchdogGrace(b)), func() error { return snapshot(e, tool, event, start, log, &out) })
	if !finished {
		wlog.Printf("stopped waiting after %s (internal deadline %s): something the hook was reading or waiting for did not answer; nothing injected, the next event catches up",
			time.Since(start).Round(time.Millisecond), b)
		return
	}
	if err != nil {
		logOrStderr(e, log, err)
	}
	if out.Len() > 0 {
		_, _ = e.Stdout.Write(out.Bytes())
	}
	log.Printf("done in %s", time.Since(start).Round(time.Millisecond))
}

// logOrStderr logs err; when the log cannot grow (read-only or full
// carryover home) the reason goes to stderr instead, which agents show only
// in their debug views for a hook that exits 0.
func logOrStderr(e *Env, log *logger, err error) {
	size := func() int64 {
		fi, err := os.Stat(log.path)
		if err != nil {
			return -1
		}
		return fi.Size()
	}
	before := size()
	log.Printf("%v", err)
	if size() == before && e.Stderr != nil {
		msg := err.Error()
		if log.redact != nil {
			msg = log.redact(msg)
		}
		fmt.Fprintf(e.Stderr, "carryover: %s%s (and %s could not be written)\n", log.prefix, msg, log.path)
	}
}

func readPayload(r io.Reader) ([]byte, error) {
	if r == nil {
		return nil, errors.New("no stdin")
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxPayload+1))
	if err != nil {
		return nil, fmt.Errorf("read hook stdin: %w", err)
	}
	if len(b) > MaxPayload {
		_, _ = io.Copy(io.Discard, r) // let the agent finish writing
		return nil, fmt.Errorf("hook stdin is larger than %d bytes; ignored", MaxPayload)
	}
	return b, nil
}

// readPayloadBy is readPayload bounded by deadline: an agent that never
// closes the hook's stdin cannot hold the hook past its budget.
func readPayloadBy(r io.Reader, deadline time.Time) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := readPayload(r)
		ch <- result{b, err}
	}()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case res := <-ch:
		return res.b, res.err
	case <-t.C:
		return nil, errors.New("hook stdin was not closed before the deadline; nothing recorded for this event")
	}
}

func snapshot(e *Env, tool, event string, start time.Time, log *logger, out *bytes.Buffer) error {
	deadline := start.Add(budget(e, event))
	a, err := adapters.Lookup(tool)
	if err != nil {
		return fmt.Errorf("unknown --tool %q (known: %s)", tool, strings.Join(adapters.Names(), ", "))
	}
	if why := foreignHost(tool, e.Getenv); why != "" {
		log.Printf("skipped: %s", why)
		return nil
	}
	// The ledger opens on another goroutine while the payload is read and
	// the project and config resolved.
	type opened struct {
		l   *ledger.Ledger
		err error
	}
	ledgerCh := make(chan opened, 1)
	olog := *log // its own copy: the prefix grows below
	go func() {
		defer func() {
			if r := recover(); r != nil {
				ledgerCh <- opened{err: fmt.Errorf("open ledger: internal error (recovered): %v", r)}
			}
		}()
		l, err := openLedger(e, &olog)
		ledgerCh <- opened{l, err}
	}()
	ledgerTaken := false
	defer func() {
		if !ledgerTaken { // returned before using it
			if o := <-ledgerCh; o.l != nil {
				o.l.Close()
			}
		}
	}()
	raw, err := readPayloadBy(e.Stdin, deadline.Add(-250*time.Millisecond))
	if err != nil {
		return err
	}
	aenv := adapters.Env{Getenv: e.Getenv, Home: e.UserHome()}
	h, err := a.ParseHook(event, raw, aenv)
	if err != nil {
		return fmt.Errorf("%v (%d bytes); nothing recorded for this event", err, len(raw))
	}
	if h.SessionID == "" {
		return errors.New("hook payload has no session id; nothing recorded for this event")
	}
	project := ResolveProject(h.Project, h.Cwd)
	log.prefix += "session=" + shortID(h.SessionID) + " "
	cfg, cerrs := LoadConfig(e, project)
	for _, ce := range cerrs {
		log.Printf("config: %v", ce)
	}
	redact := redactor(cfg)
	log.redact = redact

	// Whether the project had a handoff before this event: a tool event on
	// a project that has one only stores rows (see below).
	hadHandoff := fileExists(publish.HandoffPath(project))
	// The project's .git is read on the other core while this one ingests
	// (the handoff's git facts and the staleness note need it), and the
	// distiller's regexps compile there, when this event may publish.
	repo := sync.OnceValue(func() *distill.Repo { return distill.OpenRepo(project) })
	if !isToolEvent(event) || !hadHandoff {
		repo = prefetchRepo(project)
		go distill.Warm()
	}

	o := <-ledgerCh
	ledgerTaken = true
	l, err := o.l, o.err
	if err != nil {
		// Without a ledger we can still deliver the existing handoff.
		if isStartEvent(event) {
			inject(e, tool, event, project, readHandoff(project, log), cfg, out, log, repo)
		}
		return err
	}
	// Handoff files are written on another goroutine while this one
	// finishes with the ledger (which may checkpoint its WAL, see Leave);
	// both are done before the hook exits or injects.
	var writes chan error
	waitWrites := func() {
		if writes != nil {
			if err := <-writes; err != nil {
				log.Printf("publish: %v", err)
			}
			writes = nil
		}
	}
	defer func() {
		if l != nil { // l may be replaced by a rebuilt ledger below
			l.Leave() // the process exits next (see Leave)
		}
		waitWrites()
	}()

	opts := ledger.IngestOptions{Adapter: a, Hook: h, Env: aenv, Project: project, Deadline: deadline.Add(-250 * time.Millisecond), Now: e.Now(), Redact: redact}
	rep, err := ledger.Ingest(l, opts)
	if damaged(rep, err) {
		// A damaged page is only noticed when a statement reads it: move
		// the file aside, rebuild, and ingest again into the new ledger.
		nl, rerr := l.Reopen()
		if rerr != nil {
			l = nil
			if isStartEvent(event) {
				inject(e, tool, event, project, readHandoff(project, log), cfg, out, log, repo)
			}
			return fmt.Errorf("ledger is damaged: %w", rerr)
		}
		l = nl
		logRecovered(l, log)
		rep, err = ledger.Ingest(l, opts)
	}
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	skip := map[string]bool{}
	for _, f := range rep.Files {
		skip[f.Path] = true
		switch {
		case f.Err != nil && errors.Is(f.Err, fs.ErrNotExist):
		case f.Err != nil:
			log.Printf("transcript %s: %v", f.Path, f.Err)
		case f.Reset:
			log.Printf("transcript %s was replaced or truncated; re-read from the start", f.Path)
		}
		if f.Skipped > 0 {
			log.Printf("transcript %s: skipped %d lines over %d bytes", f.Path, f.Skipped, adapters.MaxLine)
		}
		if f.Partial {
			log.Printf("transcript %s: deadline reached; the rest is read at the next event", f.Path)
		}
	}
	caught, err := ledger.CatchUp(l, project, skip, opts)
	if err != nil {
		log.Printf("catch-up: %v", err)
	}
	added := rep.Added
	receipts := rep.Receipts
	for _, f := range caught {
		added += f.Added
		receipts = append(receipts, f.Receipts...)
	}
	recordReceipts(l, project, tool, rep.SessionID, receipts, e.Now(), log)

	tIngest := time.Since(start)
	switch {
	case isToolEvent(event) && hadHandoff:
		// Tool events fire on every tool call: record the rows, and leave
		// the re-distill to the turn's end (Stop, SessionEnd, the next
		// prompt or session start), which publishes whatever is pending.
		if added > 0 {
			if err := l.MarkDirty(project, e.Now()); err != nil {
				log.Printf("mark pending publish: %v", err)
			}
		}
	default:
		dirty := l.Dirty(project)
		if added == 0 && !dirty && hadHandoff {
			break
		}
		write, err := PublishProject(e, l, project, cfg, log, repo)
		if err != nil {
			log.Printf("publish: %v", err)
			break
		}
		if write != nil {
			wlog := *log // the goroutine logs with its own copy (prefix grows below)
			writes = make(chan error, 1)
			go func() {
				defer func() {
					if r := recover(); r != nil {
						writes <- fmt.Errorf("internal error (recovered): %v", r)
					}
				}()
				writes <- write(&wlog)
			}()
		}
		if dirty {
			if err := l.ClearDirty(project); err != nil {
				log.Printf("clear pending publish: %v", err)
			}
		}
	}
	log.prefix += fmt.Sprintf("rows+%d ingest=%s publish=%s ", added, tIngest.Round(time.Millisecond), (time.Since(start) - tIngest).Round(time.Millisecond))

	deliver := func() {
		waitWrites() // the handoff being written is the one to inject
		text := readHandoff(project, log)
		if text == "" {
			return
		}
		hdr := headerOf(text)
		// A resumed session that already holds this exact handoff (the agent
		// replays it from its transcript) does not get it twice.
		if h.Source == "resume" && l.Delivered(project, hdr, rep.SessionID) {
			log.Printf("session already holds this handoff; not injected again")
			return
		}
		if got := inject(e, tool, event, project, text, cfg, out, log, repo); got != "" {
			_ = l.RecordDelivery(ledger.Delivery{Project: project, Header: got, Tool: tool, SessionID: rep.SessionID, Via: "hook", At: e.Now()})
		}
	}
	switch {
	case isStartEvent(event):
		if tool == "claude" && h.Source == "resume" && e.Getenv("CLAUDE_CODE_ENTRYPOINT") == "sdk-cli" {
			// claude -p --resume drops SessionStart output: deliver through
			// the first UserPromptSubmit instead, once.
			if err := l.MarkPendingInject(rep.SessionID, e.Now()); err != nil {
				log.Printf("mark pending injection: %v", err)
			}
			return nil
		}
		deliver()
	case isPromptEvent(event):
		if ok, err := l.TakePendingInject(rep.SessionID); err == nil && ok {
			h.Source = "resume"
			deliver()
		}
	}
	return nil
}

func recordReceipts(l *ledger.Ledger, project, tool string, sid int64, receipts []string, now time.Time, log *logger) {
	for _, hdr := range receipts {
		if hdr == "" {
			continue
		}
		if err := l.RecordDelivery(ledger.Delivery{Project: project, Header: hdr, Tool: tool, SessionID: sid, Via: "transcript", At: now}); err != nil {
			log.Printf("record receipt: %v", err)
		}
	}
}

// prefetchRepo starts reading root's .git on another goroutine; the
// returned func waits for it.
func prefetchRepo(root string) func() *distill.Repo {
	ch := make(chan *distill.Repo, 1)
	go func() {
		defer func() {
			if recover() != nil {
				ch <- nil
			}
		}()
		ch <- distill.OpenRepo(root)
	}()
	return sync.OnceValue(func() *distill.Repo { return <-ch })
}

// readHandoff returns the project's handoff.md when it is carryover's
// ("" when there is none).
func readHandoff(project string, log *logger) string {
	b, err := publish.ReadHandoff(project)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			log.Printf("read handoff: %v", err)
		}
		return ""
	}
	if !bytes.HasPrefix(b, []byte(publish.HeaderPrefix)) {
		log.Printf("handoff.md in %s does not start with the carryover header; not injected", project)
		return ""
	}
	return string(b)
}

// headerOf is a handoff's first line.
func headerOf(text string) string {
	first, _, _ := strings.Cut(text, "\n")
	return strings.TrimRight(first, "\r")
}

// inject writes a handoff in tool's envelope to out and returns its header
// line ("" when nothing was injected).
func inject(e *Env, tool, event, project, text string, cfg Config, out *bytes.Buffer, log *logger, repo func() *distill.Repo) string {
	env, ok := envelopes[tool]
	if !ok || env == publish.EnvelopeNone || text == "" {
		return ""
	}
	text = redactor(cfg)(text)
	if note := publish.Staleness(text, e.Now(), repo().Head()); note != "" {
		// After the header and protocol lines, so the receiving model reads it first.
		lines := strings.SplitN(text, "\n", 3)
		if len(lines) == 3 {
			text = lines[0] + "\n" + lines[1] + "\n" + note + "\n" + lines[2]
		}
	}
	if len(text) > publish.MaxChars+500 {
		text = clip(text, publish.MaxChars)
	}
	w, err := publish.Wrap(env, event, text)
	if err != nil {
		log.Printf("wrap injection: %v", err)
		return ""
	}
	out.Write(w)
	return headerOf(text)
}

// openLedger opens the ledger, logging a recovery from corruption.
func openLedger(e *Env, log *logger) (*ledger.Ledger, error) {
	l, err := ledger.Open(e.Home())
	if err != nil {
		return nil, err
	}
	logRecovered(l, log)
	return l, nil
}

func logRecovered(l *ledger.Ledger, log *logger) {
	if l.Recovered {
		log.Printf("ledger was corrupt; moved aside to %s and started a new one; %d transcripts still on disk are re-read", l.MovedTo, l.Rebuilt)
	}
}

// damaged reports whether an ingest failed because the ledger file is
// damaged (not because of a transcript or an agent's own store).
func damaged(rep ledger.IngestReport, err error) bool {
	if err != nil && ledger.IsCorrupt(err) {
		return true
	}
	for _, f := range rep.Files {
		if f.Err != nil && f.Path != "store" && ledger.IsCorrupt(f.Err) {
			return true
		}
	}
	return false
}

// ResolveProject is the project root: the agent's own project dir when it
// gives one, else the git root of cwd, else cwd.
func ResolveProject(explicit, cwd string) string {
	p := explicit
	if p == "" {
		if cwd == "" {
			cwd, _ = os.Getwd()
		}
		p = distill.RepoRoot(cwd)
		if p == "" {
			p = cwd
		}
	}
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return p
}

// ProjectRows returns the rows the project handoff is distilled from.
func ProjectRows(l *ledger.Ledger, project string) ([]ledger.Row, error) {
	return l.RecentRows(project)
}

// maxFold is the most new rows the hook path folds into a stored distill
// state; past it (a cold ingest) the state is rebuilt from the project's
// recent rows instead.
const maxFold = 5000

// projectState brings the project's stored distill state up to date with
// the rows added since it was saved, or rebuilds it from the recent rows
// when there is none (or it is stale, or too far behind), and saves it.
func projectState(e *Env, l *ledger.Ledger, project string, log *logger) (*distill.State, error) {
	sessions, err := l.ProjectSessions(project)
	if err != nil {
		return nil, err
	}
	raw, seqs, version, ok := l.LoadState(project)
	st, fresh := distill.LoadState(raw)
	pending := 0
	if ok && fresh {
		for _, s := range sessions {
			pending += int(max(0, s.LastSeq-seqs[s.ID]))
		}
	}
	if !ok || !fresh || pending > maxFold {
		rows, err := l.RecentRows(project)
		if err != nil {
			return nil, err
		}
		st = distill.NewState()
		for i := range rows {
			st.Add(&rows[i])
		}
		seqs = ledger.Seqs{}
		for _, s := range sessions {
			seqs[s.ID] = s.LastSeq
		}
	} else {
		for _, s := range sessions {
			if s.LastSeq <= seqs[s.ID] {
				continue
			}
			rows, err := l.RowsAfter(s, seqs[s.ID], maxFold)
			if err != nil {
				return nil, err
			}
			for i := range rows {
				st.Add(&rows[i])
				seqs[s.ID] = rows[i].Seq
			}
		}
	}
	if b, err := st.Marshal(); err == nil {
		if !ok || !fresh {
			version = "" // rebuilt: replace whatever is stored
			if ok {
				_ = l.DropState(project)
			}
		}
		if saved, err := l.SaveState(project, b, seqs, version, e.Now()); err != nil {
			log.Printf("save distill state: %v", err)
		} else if !saved {
			log.Printf("distill state was saved by a concurrent snapshot; kept theirs")
		}
	}
	return st, nil
}

// PublishProject distills the project's recent rows into a handoff and
// records it in the ledger. It returns the file writes — handoff.md
// (project and global copies), the .gitignore entry and the pointer blocks
// — for the caller to run (nil when nothing changed): the hook runs them
// while it finishes with the ledger. repo returns the project's .git
// (prefetched by the hook).
func PublishProject(e *Env, l *ledger.Ledger, project string, cfg Config, log *logger, repo func() *distill.Repo) (func(*logger) error, error) {
	st, err := projectState(e, l, project, log)
	if err != nil {
		return nil, err
	}
	h := st.Handoff(distill.Options{Project: project})
	if h.Task == "" && len(h.Files) == 0 && len(h.Failures) == 0 && h.Next == "" {
		return nil, nil // nothing worth handing off yet
	}
	h.Git, h.Files = repo().Facts(h.Files)
	if p := repo().Problem(); p != "" {
		log.Printf("git: %s", p)
	}
	if repo().Tracked(publish.HandoffPath(project)) {
		// A repository that commits .carryover/handoff.md would have the
		// next `git commit -a` publish the user's handoff.
		return nil, fmt.Errorf("%s is tracked by git (it came with the repository): a handoff written there would be committed; not written (`git rm --cached .carryover/handoff.md` lets carryover use it)", publish.HandoffPath(project))
	}
	var native string
	if s, err := l.SessionByID(h.SessionID); err == nil {
		native = s.NativeID
		if h.Tokens.Max == 0 && s.TokensMax > 0 {
			h.Tokens = distill.Tokens{Used: s.TokensUsed, Max: s.TokensMax}
		}
	}
	now := e.Now()
	text := publish.Render(h, publish.RenderOptions{Now: now, Mode: cfg.Resume, Redact: redactor(cfg), Session: native})
	if prev, err := publish.ReadHandoff(project); err == nil && sameBody(string(prev), text) {
		// Nothing but the timestamp would change: keep the file (and its
		// receipts) as is — and the global copy, unless it is gone.
		if global := filepath.Join(e.Home(), "handoff.md"); !fileExists(global) {
			if err := publish.WriteAtomic(global, prev); err != nil {
				log.Printf("write global handoff: %v", err)
			}
		}
		return nil, nil
	}
	hdr := strings.SplitN(text, "\n", 2)[0]
	if err := l.RecordHandoff(ledger.Handoff{Project: project, Header: hdr, Tool: h.Tool, SessionID: h.SessionID, Written: now}); err != nil {
		log.Printf("record handoff: %v", err)
	}
	return func(log *logger) error { return writeHandoff(e, project, text, h.Tool, log) }, nil
}

// writeHandoff writes a rendered handoff: the global copy, then (after
// the ignore rules) the project's, then the pointer blocks.
func writeHandoff(e *Env, project, text, tool string, log *logger) error {
	// The global copy does not depend on the project being writable; it
	// is written alongside (a rename costs ~0.4 ms on some filesystems).
	global := make(chan struct{})
	go func() {
		defer close(global)
		if err := publish.WriteAtomic(filepath.Join(e.Home(), "handoff.md"), []byte(text)); err != nil {
			log.Printf("write global handoff: %v", err)
		}
	}()
	defer func() { <-global }()
	// Ignore rules first: nothing is written under .carryover/ before git
	// is told to ignore it.
	if err := publish.EnsureDir(project); err != nil {
		return fmt.Errorf("create %s: %w", publish.Dir(project), err)
	}
	if distill.RepoRoot(project) != "" {
		if _, err := publish.EnsureGitignore(project); err != nil {
			log.Printf(".gitignore: %v", err)
		}
	}
	if err := publish.WriteOwn(project, "handoff.md", []byte(text)); err != nil {
		return fmt.Errorf("write handoff: %w", err)
	}
	pointers := []string{"AGENTS.md", "CLAUDE.md"}
	if tool == "gemini" || fileExists(filepath.Join(project, "GEMINI.md")) {
		pointers = append(pointers, "GEMINI.md")
	}
	for _, name := range pointers {
		if _, err := publish.EnsurePointer(filepath.Join(project, name)); err != nil {
			log.Printf("pointer block: %v", err)
		}
	}
	return nil
}

// sameBody reports whether two handoffs differ only in their first line.
func sameBody(a, b string) bool {
	_, ba, _ := strings.Cut(a, "\n")
	_, bb, _ := strings.Cut(b, "\n")
	return ba == bb
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// redactor returns the redaction function for cfg (identity when off).
func redactor(cfg Config) func(string) string {
	if !cfg.RedactOn() {
		return func(s string) string { return s }
	}
	return redactString
}
