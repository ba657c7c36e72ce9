package service

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/resume"
)

// Pick is the session a manual command works on, as cmd's picker chose
// it.
type Pick struct {
	adapters.NativeSession
	// LedgerOnly: its transcript is gone; the ledger's rows are read.
	LedgerOnly bool
	// Key is the project the session is recorded under (an imported
	// transcript's own key: it never feeds the project's handoff).
	Key string
	// Explicit: a --transcript file, read as given.
	Explicit bool
	// Context is the directory its git and file context come from ("":
	// none).
	Context string
}

// Unreadable is a session that could not be read or parsed (cmd's exit
// code 3).
type Unreadable struct{ error }

func (u Unreadable) Unwrap() error { return u.error }

func unreadable(format string, args ...any) error { return Unreadable{fmt.Errorf(format, args...)} }

// Manual is what `carryover handoff` and `capture` get for a session.
type Manual struct {
	Session resume.Session
	// Context is the session's context level line ("" when its usage is
	// unknown).
	Context string
	// DrawnFrom are the sessions the project's fold drew from (fold only).
	DrawnFrom []string
}

// Handoff is the resume session of the picked session, read into the
// ledger first (the hook's sync). Its task state is distilled once: from
// the project's stored State when fold (what handoff.md says, across
// sessions and agents; the picked session's conversation stays the
// recent-messages layer), else from the session's own rows.
func (p *Project) Handoff(pk Pick, fold bool, progress func(string, int64)) (Manual, error) {
	var m Manual
	l, err := p.ingest(pk, progress)
	if err != nil {
		return m, err
	}
	defer l.Close()
	ls, rows, err := sessionRows(l, pk)
	if err != nil {
		return m, err
	}
	m.Context = contextLine(ls, p.Config)
	src := resume.Sources{Project: pk.Context, Recorded: pk.Project, Tool: pk.Tool, SessionID: pk.ID, Ledger: ls, Now: p.Now, Redact: p.Redact}
	var h distill.Handoff
	folded := false
	if fold && foldHasRows(l, p.Root) {
		var err error
		h, m.DrawnFrom, err = distill.ProjectFold(l, p.Root, p.Now, distill.Options{Project: p.Root})
		// A project whose fold has no task yet (or cannot be read) gets
		// the session's own: the one case left that distils twice (a
		// project without rows is not folded at all).
		if folded = err == nil && h.Task != ""; !folded {
			m.DrawnFrom = nil
		}
	}
	if !folded {
		h = distill.Distill(rows, src.DistillOptions())
	}
	m.Session = resume.FromRows(rows, h, src)
	m.Session.DrawnFrom = m.DrawnFrom
	return m, nil
}

// foldHasRows reports whether the project's fold would read any row (a
// picked session recorded under another directory leaves it empty; a
// forgotten session takes the project's stored state with it).
func foldHasRows(l *ledger.Ledger, project string) bool {
	ss, err := l.ProjectSessions(project)
	return err == nil && slices.ContainsFunc(ss, func(s ledger.ProjectSession) bool { return s.LastSeq > 0 })
}

// Ingest reads the picked session into the ledger (`carryover run` after
// Aider: the project's handoff is then Refreshed).
func (p *Project) Ingest(pk Pick) error {
	l, err := p.ingest(pk, nil)
	if err == nil {
		l.Close()
	}
	return err
}

// ingest reads the picked session into the ledger with the hook's sync (a
// damaged ledger is rebuilt, the project's other transcripts caught up,
// receipts recorded) and returns the ledger, open.
func (p *Project) ingest(pk Pick, progress func(string, int64)) (*ledger.Ledger, error) {
	l, err := ledger.Open(p.env.Home)
	if err != nil {
		return nil, err
	}
	p.log.recovered(l)
	if pk.LedgerOnly {
		return l, nil
	}
	a, err := adapters.Lookup(pk.Tool)
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("carryover cannot read %s sessions (no adapter); known: %s", pk.Tool, strings.Join(adapters.Names(), ", "))
	}
	h := adapters.Hook{Tool: pk.Tool, SessionID: pk.ID, TranscriptPath: pk.Path, Cwd: p.Root, Project: p.Root}
	o := ledger.IngestOptions{Adapter: a, Hook: h, Env: p.env.Agent, Project: pk.Key, Now: p.env.Now(), Redact: p.Redact, Progress: progress}
	if pk.Explicit {
		o.Transcripts = adapters.ExplicitTranscripts(a, h, p.env.Agent)
	}
	l, rep, err := ledger.Sync(l, o)
	p.log.notes(rep.Notes)
	if l == nil {
		return nil, err
	}
	if err != nil {
		l.Close()
		return nil, unreadable("could not read the %s session %s: %v", pk.Tool, publish.ShortID(pk.ID), err)
	}
	if err := fileError(rep, pk.Path); err != nil {
		l.Close()
		return nil, err
	}
	if pk.Preview != "" {
		if s, err := l.SessionIn(pk.Tool, pk.ID, pk.Key); err == nil {
			_ = l.SetTitle(s.ID, p.Redact(pk.Preview))
		}
	}
	return l, nil
}

// fileError is the sync's error reading the picked transcript (or the
// agent's store), nil when it was read.
func fileError(rep ledger.SyncReport, path string) error {
	for _, f := range rep.Files {
		if f.Err != nil && !errors.Is(f.Err, fs.ErrNotExist) && (f.Path == path || f.Path == "store") {
			return unreadable("could not read %s: %v", f.Path, f.Err)
		}
	}
	return nil
}

// sessionRows are the picked session's ledger record and rows, oldest
// first.
func sessionRows(l *ledger.Ledger, pk Pick) (ledger.Session, []ledger.Row, error) {
	s, err := l.SessionIn(pk.Tool, pk.ID, pk.Key)
	if err != nil && pk.LedgerOnly { // recorded under the project it was seen in
		s, err = l.Session(pk.Tool, pk.ID)
	}
	if err != nil {
		return s, nil, unreadable("session %s was not recorded: %v", publish.ShortID(pk.ID), err)
	}
	rows, err := l.Rows(s.ID, 4000)
	if err != nil {
		return s, nil, fmt.Errorf("read the ledger: %v", err)
	}
	if len(rows) == 0 {
		return s, nil, unreadable("the %s session %s has nothing carryover can read (no prompts, replies or tool calls); %s", pk.Tool, publish.ShortID(pk.ID), adapters.Tried(pk.Tool))
	}
	ledger.PromoteSubagentOnly(rows)
	return s, rows, nil
}
