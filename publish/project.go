package publish

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
)

// Project is what publishing one project's handoff needs.
type Project struct {
	// Root is the project root.
	Root string
	// Home is carryover's home; the global copy is Home/handoff.md.
	Home string
	Now  time.Time
	// Mode is the resume protocol (see ValidMode).
	Mode string
	// Redact is applied to everything rendered or injected.
	Redact func(string) string
	// Repo returns the project's .git (the hook prefetches it).
	Repo func() *distill.Repo
	// Logf records what is worth a log line; the file writes may call it
	// from another goroutine.
	Logf func(format string, args ...any)
	// ExpireAfter and HistoryKeep are the lifecycle settings (config
	// expire_after, history_keep); zero means the defaults.
	ExpireAfter time.Duration
	HistoryKeep int
	// Lifecycle picks the handoff's id and records it (publish/lifecycle).
	Lifecycle Lifecycle
	// Note is a line Inject puts before the handoff's body (the previous
	// session stopped at a limit); "" none.
	Note string
	// Pointer is the pointer setting (PointerAuto when ""); PointerFor
	// the agents that need the block in this project under PointerAuto
	// (none: no block is written).
	Pointer    string
	PointerFor []string
	// NotProject is set for the home directory, its ancestors and / (see
	// NotProject): no file is written there and the handoff is Held.
	NotProject bool
	// Held is the handoff of a NotProject root, rendered this event.
	Held string
	// ownHistory are the handoff ids the ledger records for the project,
	// set by Render when it mints a new id: the history files rotation may
	// remove (writeHistory). nil: no rotation.
	ownHistory map[string]bool
}

func (p *Project) logf(format string, args ...any) {
	if p.Logf != nil {
		p.Logf(format, args...)
	}
}

// Rendered is a handoff ready to be written (WriteProject).
type Rendered struct {
	Text string
	Tool string // the agent of the session it was distilled from
	// record stores the ledger's records of it (Record); nil once done.
	record func()
}

// Record stores the ledger's records of the handoff Render rendered: its
// digest (what makes the file carryover's, besides the sidecar
// WriteProject writes) and its lifecycle entry. The hook calls it while
// another goroutine writes the files; it runs once.
func (r *Rendered) Record() {
	if r != nil && r.record != nil {
		r.record()
		r.record = nil
	}
}

// Prepare renders the handoff distilled in st and records it in the ledger.
// It returns the handoff for the caller to write (WriteProject), nil when
// nothing changed.
func (p *Project) Prepare(l *ledger.Ledger, st *distill.State) (*Rendered, error) {
	r, err := p.Render(l, st)
	r.Record()
	return r, err
}

// Render is Prepare leaving the ledger's records of the handoff to
// Rendered.Record: the hook starts writing the files first, so the two
// overlap (they are independent: a handoff.md is trusted by the ledger's
// record or the sidecar, and the sidecar is written before the file).
func (p *Project) Render(l *ledger.Ledger, st *distill.State) (*Rendered, error) {
	h := st.Handoff(distill.Options{Project: p.Root})
	if h.Task == "" && len(h.Files) == 0 && len(h.Failures) == 0 && h.Next == "" {
		return nil, nil // nothing worth handing off yet
	}
	h.Git, h.Files = distill.RepoFacts(p.Repo(), h.Files)
	if why := p.Repo().Problem(); why != "" {
		p.logf("git: %s", why)
	}
	if !p.NotProject && p.Repo().Tracked(HandoffPath(p.Root)) {
		// A repository that commits .carryover/handoff.md would have the
		// next `git commit -a` publish the user's handoff.
		return nil, fmt.Errorf("%s is tracked by git (it came with the repository): a handoff written there would be committed; not written (`git rm --cached .carryover/handoff.md` lets carryover use it)", HandoffPath(p.Root))
	}
	native := sessionFacts(l, &h)
	lc := p.begin(l, h, native)
	if lc.Cleared {
		return nil, nil // cleared by the user, and no work since
	}
	text := Render(h, RenderOptions{Now: p.Now, Mode: p.Mode, Redact: p.Redact, Session: native, ID: lc.ID, Decisions: lc.Decisions, Pinned: lc.Pinned})
	if p.keepUnchanged(l, text, lc.ID) {
		return nil, nil
	}
	return &Rendered{Text: text, Tool: h.Tool, record: func() { lc.Record(text) }}, nil
}

// sessionFacts is the handoff's session's native id ("" when the ledger
// does not know it), filling h's token use from the ledger when the
// transcript gave none.
func sessionFacts(l *ledger.Ledger, h *distill.Handoff) string {
	s, err := l.SessionByID(h.SessionID)
	if err != nil {
		return ""
	}
	if h.Tokens.Max == 0 && s.TokensMax > 0 {
		h.Tokens = distill.Tokens{Used: s.TokensUsed, Max: s.TokensMax}
	}
	return s.NativeID
}

// keepUnchanged reports whether nothing but the timestamp would change in
// the project's handoff.md: the file (and its receipts) is then kept as
// is — and the global copy, unless it is gone.
func (p *Project) keepUnchanged(l *ledger.Ledger, text, id string) bool {
	prev, err := ReadHandoffFile(p.Root)
	if p.NotProject || err != nil || !sameBody(string(prev), text) || IDOf(HeaderOf(string(prev))) != id || p.check(prev, l) != "" {
		return false
	}
	if global := filepath.Join(p.Home, "handoff.md"); !Exists(global) {
		if err := WriteAtomic(global, prev); err != nil {
			p.logf("write global handoff: %v", err)
		}
	}
	return true
}

// WriteProject writes a rendered handoff: the global copy, then the
// project's .carryover/handoff.md (its directory ignored by git through its
// own .gitignore: the project's .gitignore is never edited), then the
// pointer blocks where they are needed (pointerFiles). A NotProject root
// gets no file: its handoff stays in the ledger.
func (p *Project) WriteProject(text, tool string) error {
	// The global copy does not depend on the project being writable; it
	// is written alongside (a rename costs ~0.4 ms on some filesystems).
	global := make(chan struct{})
	go func() {
		defer close(global)
		if err := WriteAtomic(filepath.Join(p.Home, "handoff.md"), []byte(text)); err != nil {
			p.logf("write global handoff: %v", err)
		}
	}()
	defer func() { <-global }()
	if p.NotProject {
		return nil
	}
	// OpenDir gives .carryover its own .gitignore before anything is
	// written in it. It is opened once for handoff.md and the history copy.
	d, err := OpenDir(p.Root)
	if err != nil {
		return fmt.Errorf("create %s: %w", Dir(p.Root), err)
	}
	defer d.Close()
	// The history copy is written beside handoff.md: each replaces a file
	// by a rename, which costs ~0.15 ms on ext4 (it allocates the new
	// file's blocks and frees the old one's), mostly waiting on the disk.
	history := make(chan struct{})
	go func() {
		defer close(history)
		if id := IDOf(HeaderOf(text)); id != "" {
			var repo *distill.Repo
			if p.Repo != nil {
				repo = p.Repo()
			} else {
				repo = distill.OpenRepo(p.Root)
			}
			if _, err := writeHistory(d, id, text, p.HistoryKeep, p.ownHistory, repo, p.Root); err != nil {
				p.logf("history: %v", err)
			}
		}
	}()
	defer func() { <-history }()
	// The digest under the home first: a handoff.md on disk is always one
	// the home lists (files.go).
	if err := RecordPublished(p.Home, p.Root, Digest([]byte(text))); err != nil {
		p.logf("record published handoff: %v", err)
	}
	if err := d.Write("handoff.md", []byte(text), ownFile); err != nil {
		return fmt.Errorf("write handoff: %w", err)
	}
	for _, name := range p.pointerFiles(tool) {
		if err := ensurePointerRecorded(p.Home, p.Root, name); err != nil {
			p.logf("pointer block: %v", err)
		}
	}
	return nil
}

// pointerFiles get the pointer block. always: AGENTS.md and each agent's
// memory file when the agent always reads it, publishes, or the file
// exists. auto: AGENTS.md and the memory files of the agents that need it
// (PointerFor), none when none does: no CLAUDE.md for a working injection.
func (p *Project) pointerFiles(tool string) []string {
	switch {
	case p.Pointer == PointerNever:
		return nil
	case p.Pointer == PointerAlways:
		return memoryFiles(func(a *adapters.Agent) bool {
			return a.MemoryFileAlways || a.Name == tool || Exists(filepath.Join(p.Root, a.MemoryFile))
		})
	case len(p.PointerFor) == 0:
		return nil
	}
	return memoryFiles(func(a *adapters.Agent) bool { return slices.Contains(p.PointerFor, a.Name) })
}

// memoryFiles is AGENTS.md and the memory files of the agents want
// selects, each once.
func memoryFiles(want func(a *adapters.Agent) bool) []string {
	names := []string{"AGENTS.md"}
	for _, a := range adapters.All {
		if a.MemoryFile != "" && want(a) && !slices.Contains(names, a.MemoryFile) {
			names = append(names, a.MemoryFile)
		}
	}
	return names
}

// ReadHandoff returns the project's handoff.md when it is carryover's own:
// one it published, unchanged since ("" when there is none or it is not;
// the reason is logged). l may be nil (another process holds the ledger
// locked, or it is damaged): the digests under the home decide then.
func (p *Project) ReadHandoff(l *ledger.Ledger) string {
	if p.NotProject {
		return p.Held
	}
	b, why := p.readOwn(l)
	if why != "" {
		p.logf("handoff.md in %s is not injected: %s", p.Root, why)
	}
	return string(b)
}

// HandoffTrusted reports whether the project's handoff.md is carryover's
// own, logging why not (false, silently, when there is none).
func (p *Project) HandoffTrusted(l *ledger.Ledger) bool {
	if p.NotProject {
		return false
	}
	b, why := p.readOwn(l)
	if why != "" {
		p.logf("handoff.md in %s is not carryover's: %s; not injected, and replaced when carryover next publishes", p.Root, why)
	}
	return b != nil
}

// readOwn is the project's handoff.md when it is carryover's own, else why
// not (nil, "" when there is none or it cannot be read, logged).
func (p *Project) readOwn(l *ledger.Ledger) ([]byte, string) {
	b, err := ReadHandoffFile(p.Root) // never through a symlink, never a FIFO
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			p.logf("read handoff: %v", err)
		}
		return nil, ""
	}
	if why := p.check(b, l); why != "" {
		return nil, why
	}
	return b, ""
}

// check says why b, the project's handoff.md, is not carryover's own (""
// when it is); l may be nil.
func (p *Project) check(b []byte, l *ledger.Ledger) string { return CheckHandoff(b, p.Home, p.Root, l) }

// Inject renders text for the agent's hook stdout: redacted, with a
// staleness note, clipped, in the agent's envelope for event. It returns
// the bytes and the handoff's header line (nil, "" when the agent has no
// envelope or there is nothing to inject).
func (p *Project) Inject(agent *adapters.Agent, event, text string) ([]byte, string) {
	if agent == nil || agent.Envelope == adapters.EnvelopeNone || text == "" {
		return nil, ""
	}
	text = p.injectText(text)
	w, err := adapters.Wrap(agent.Envelope, event, text)
	if err != nil {
		p.logf("wrap injection: %v", err)
		return nil, ""
	}
	return w, HeaderOf(text)
}

// injectText is text as it is injected: redacted, with the staleness note
// (of the redacted text: it quotes the handoff's HEAD) and p.Note.
func (p *Project) injectText(text string) string {
	text = p.Redacted(text)
	return WithNotes(text, Staleness(text, p.Now, p.Repo().Head()), p.Note)
}

// Redacted is s as the project's redaction leaves it.
func (p *Project) Redacted(s string) string {
	if p.Redact == nil {
		return s
	}
	return p.Redact(s)
}

// WithNotes is text (already redacted) with the notes that are not ""
// after its header and protocol lines, so the receiving model reads them
// first, clipped to MaxChars.
func WithNotes(text string, notes ...string) string {
	notes = slices.DeleteFunc(notes, func(n string) bool { return n == "" })
	if lines := strings.SplitN(text, "\n", 3); len(notes) > 0 && len(lines) == 3 {
		text = lines[0] + "\n" + lines[1] + "\n" + strings.Join(notes, "\n") + "\n" + lines[2]
	}
	if len(text) > MaxChars+500 {
		text = clip(text, MaxChars)
	}
	return text
}

// WrapBanner puts body (WithNotes) in the agent's envelope with rec's
// banner: beside it as a user message when the agent shows one, else
// before it. It returns the bytes and body's header (nil, "" when it could
// not be wrapped, logged).
func (p *Project) WrapBanner(agent *adapters.Agent, event, body string, rec ledger.HandoffRecord) ([]byte, string) {
	banner := Banner(p.Root, rec, p.Now, p.Redact)
	var w []byte
	var err error
	if agent.UserMessage {
		w, err = adapters.WrapWithMessage(agent.Envelope, event, body, banner)
	} else {
		w, err = adapters.Wrap(agent.Envelope, event, banner+"\n"+body)
	}
	if err != nil {
		p.logf("wrap injection: %v", err)
		return nil, ""
	}
	return w, HeaderOf(body)
}

// WrapExpired is the one-line notice of an expired handoff (all a session
// gets of it) in the agent's envelope.
func (p *Project) WrapExpired(agent *adapters.Agent, event string, rec ledger.HandoffRecord) []byte {
	w, err := adapters.Wrap(agent.Envelope, event, ExpiredNotice(rec, p.Now))
	if err != nil {
		p.logf("wrap injection: %v", err)
	}
	return w
}

// Expiry is the expire_after in effect for d (the default for zero).
func Expiry(d time.Duration) time.Duration {
	if d <= 0 {
		return DefaultExpireAfter
	}
	return d
}

// HeaderOf is a handoff's first line.
func HeaderOf(text string) string {
	first, _, _ := strings.Cut(text, "\n")
	return strings.TrimRight(first, "\r")
}

// sameBody reports whether two handoffs differ only in their first line.
func sameBody(a, b string) bool {
	_, ba, _ := strings.Cut(a, "\n")
	_, bb, _ := strings.Cut(b, "\n")
	return ba == bb
}

// Exists reports whether p exists (following a symlink).
func Exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// InjectFile is Deliver without the ledger (locked by another process, not
// rebuilt, or the watchdog gave up). text is a handoff.md verified against
// the digests under the home (ReadHandoff(nil)), so the lifecycle facts of
// its header and sections can be trusted: it renders Deliver's banner, the
// one-line notice once expired, nothing once cleared. What only the ledger
// knows (who resumed it, stale files) is left out; a handoff without an id
// (older carryover) goes out as Inject renders it.
func (p *Project) InjectFile(agent *adapters.Agent, event, text string) ([]byte, string) {
	if agent == nil || agent.Envelope == adapters.EnvelopeNone || text == "" {
		return nil, ""
	}
	rec, ok := RecordOfText(text)
	if !ok {
		return p.Inject(agent, event, text)
	}
	if strings.HasPrefix(rec.Goal, clearedTask) {
		p.logf("%s was cleared (carryover clear); not injected", rec.ID)
		return nil, ""
	}
	if p.Now.Sub(rec.Updated) > Expiry(p.ExpireAfter) {
		w := p.WrapExpired(agent, event, rec)
		p.logf("%s expired; one-line notice only", rec.ID)
		return w, ""
	}
	return p.WrapBanner(agent, event, p.injectText(text), rec)
}

// clearedTask starts the task line of the stub Clear writes.
const clearedTask = "(none: the user cleared"

// pinnedPrefix starts the task line of a handoff whose task the user
// pinned (lifecycle.go, pinnedTask).
const pinnedPrefix = "[pinned by the user — `carryover task --done` when finished] "

// RecordOfText reads the lifecycle facts of a handoff carryover published
// (verified by its digest): its header's id, agent and time, its goal (the
// pinned task when there is one) and next action; ok is false without a
// header carrying an id.
func RecordOfText(text string) (rec ledger.HandoffRecord, ok bool) {
	header := HeaderOf(text)
	id := IDOf(header)
	if id == "" {
		return rec, false
	}
	stamp, rest, _ := strings.Cut(strings.TrimPrefix(header, HeaderPrefix), " from ")
	at, err := time.Parse(time.RFC3339, stamp)
	if err != nil {
		return rec, false
	}
	tool, _, _ := strings.Cut(rest, " · ")
	rec = ledger.HandoffRecord{ID: id, Tool: strings.TrimSpace(tool), Header: header, Updated: at, Written: at}
	if t, ok := IDTime(id); ok && !t.After(at) {
		rec.Written = t
	}
	task := sectionLines(text, "## Task")
	if len(task) > 0 {
		rec.Goal = strings.TrimPrefix(task[0], pinnedPrefix)
	}
	if next := sectionLines(text, "## Next action"); len(next) > 0 {
		rec.Next = next[0]
	}
	return rec, true
}

// GitOfText reads the branch and short HEAD of a handoff's git line
// ("branch main @ abc1234; …"; "-" for unknown, and a HEAD that is not
// hex is none).
func GitOfText(text string) (head, branch string) {
	for _, l := range sectionLines(text, "## Git") {
		rest, ok := strings.CutPrefix(l, "branch ")
		if !ok {
			continue
		}
		b, h, ok := strings.Cut(rest, " @ ")
		if !ok {
			return "", ""
		}
		h, _, _ = strings.Cut(h, ";")
		if h = strings.TrimSpace(h); h == "-" || !isHexString(h) {
			h = ""
		}
		if b == "-" {
			b = ""
		}
		return h, b
	}
	return "", ""
}

func isHexString(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return s != ""
}

// PinnedOfText is the task the user had pinned when text was written
// ("" when none).
func PinnedOfText(text string) string {
	task := sectionLines(text, "## Task")
	if len(task) > 0 && strings.HasPrefix(task[0], pinnedPrefix) {
		return strings.TrimPrefix(task[0], pinnedPrefix)
	}
	return ""
}

// sectionLines returns the lines under a handoff's section title, up to
// the next title (at most MaxLines of them: a handoff has no more).
func sectionLines(text, title string) []string {
	var out []string
	in := false
	for i, l := range strings.Split(text, "\n") {
		if i > MaxLines*2 {
			break
		}
		l = strings.TrimRight(l, "\r")
		switch {
		case strings.HasPrefix(l, "## ") || strings.HasPrefix(l, "# "):
			if in {
				return out
			}
			in = l == title || strings.HasPrefix(l, title+" ")
		case isFence(l): // the end (or start) of the quoted block
			if in {
				return out
			}
		case in && strings.TrimSpace(l) != "":
			out = append(out, l)
		}
	}
	return out
}
