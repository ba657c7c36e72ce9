package ledger

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters"
)

// IngestOptions says what to ingest and how.
type IngestOptions struct {
	Adapter  adapters.Adapter
	Hook     adapters.Hook
	Env      adapters.Env
	Project  string
	Deadline time.Time
	Now      time.Time
	// Redact is applied to every text field (text, command, file path)
	// before it is stored.
	Redact func(string) string
	// Transcripts overrides the adapter's own list (handoff --transcript).
	Transcripts []adapters.Transcript
	// Progress, when set, gets each line's end offset in the file being
	// tailed (a command shows bytes read on a terminal; the hook sets none).
	Progress func(path string, off int64)
}

// FileReport is what happened to one transcript.
type FileReport struct {
	Path    string
	Err     error
	Reset   bool
	Lines   int
	Skipped int
	Added   int
	Partial bool
	// Receipts are carryover handoff headers seen in this file.
	Receipts []string
	// Limits are the rate-limit and quota signals read (adapters.Limit).
	Limits []FoundLimit
}

// FoundLimit is a limit signal read from a transcript or a store.
type FoundLimit struct {
	Key      string // the row that carried it
	Tool     string // its session's agent (a catch-up reads other agents' files)
	NativeID string // its session
	Limit    adapters.Limit
	At       time.Time
}

// IngestReport summarizes an ingest.
type IngestReport struct {
	SessionID int64
	Added     int
	Files     []FileReport
	Receipts  []string // carryover handoff headers seen in the transcripts
	Limits    []FoundLimit
}

// catchUpWindow is how many of a project's tracked files a catch-up looks
// at (the most recently updated). How many it re-reads is bounded only by
// the deadline: every transcript that grew — another agent's late flush
// (Copilot CLI writes its events file after its hooks), a Gemini file
// rewritten on resume, a Codex rollout finished after its Stop — is read
// before the handoff is built, and what does not fit is read at the next
// event.
const catchUpWindow = 256

// batchRows is how many rows are written per transaction while tailing a
// large transcript, bounding memory on a cold ingest.
const batchRows = 4096

// Ingest reads what is new for a hook into the ledger: the adapter's
// transcripts from their cursors, its store, or the payload's own rows.
func Ingest(l *Ledger, o IngestOptions) (IngestReport, error) {
	var rep IngestReport
	ref := SessionRef{Tool: o.Adapter.Name(), NativeID: o.Hook.SessionID, Project: o.Project, Transcript: o.Hook.TranscriptPath}
	if ref.NativeID == "" {
		return rep, errors.New("hook payload has no session id")
	}
	// A known session with the same project and transcript needs no write
	// transaction here; its rows' batches refresh it.
	var sid int64
	if s, err := l.SessionIn(ref.Tool, ref.NativeID, ref.Project); err == nil && (ref.Transcript == "" || s.Transcript == ref.Transcript) {
		sid = s.ID
	} else if sid, err = l.Touch(ref, o.Now); err != nil {
		return rep, err
	}
	rep.SessionID = sid
	if len(o.Hook.Rows) > 0 {
		n, err := l.Write(Batch{Session: ref, Rows: o.prepare(o.Hook.Rows, &rep, ref.Tool, ref.NativeID)}, o.Now)
		if err != nil {
			return rep, err
		}
		rep.Added += n
	}
	if sr, ok := o.Adapter.(adapters.StoreReader); ok {
		rows, err := sr.ReadStore(o.Hook, o.Env)
		if err != nil {
			rep.Files = append(rep.Files, FileReport{Path: "store", Err: err})
		} else {
			n, err := l.Write(Batch{Session: ref, Rows: o.prepare(rows, &rep, ref.Tool, ref.NativeID)}, o.Now)
			if err != nil {
				return rep, err
			}
			rep.Added += n
		}
	}
	lp, ok := o.Adapter.(adapters.LineParser)
	if !ok {
		return rep, nil
	}
	ts := o.Transcripts
	if ts == nil {
		ts = lp.Transcripts(o.Hook, o.Env)
	}
	for _, t := range ts {
		if o.Transcripts == nil {
			// Paths from a hook payload follow the store policy (roots.go).
			if err := adapters.Confined(o.Adapter, o.Env, t.Path); err != nil {
				rep.Files = append(rep.Files, FileReport{Path: t.Path, Err: err})
				continue
			}
		}
		tref := ref
		if t.SessionID != "" && t.SessionID != ref.NativeID {
			tref = SessionRef{Tool: ref.Tool, NativeID: t.SessionID, Project: o.Project, Transcript: t.Path}
		}
		fr := TailInto(l, lp, tref, t, o)
		rep.Files = append(rep.Files, fr)
		rep.Added += fr.Added
		rep.Receipts = append(rep.Receipts, fr.Receipts...)
		rep.Limits = append(rep.Limits, fr.Limits...)
		if IsBusy(fr.Err) {
			// Another process holds the ledger: every further write would
			// wait for it again; the next event reads from the cursors.
			return rep, fr.Err
		}
	}
	return rep, nil
}

// prepare redacts rows and collects delivery receipts and limit signals
// (of the session native).
func (o *IngestOptions) prepare(rows []adapters.Row, rep *IngestReport, tool, native string) []adapters.Row {
	for i := range rows {
		r := &rows[i]
		if r.Limit != nil && !r.Sidechain {
			rep.Limits = append(rep.Limits, FoundLimit{Key: r.Key, Tool: tool, NativeID: native, Limit: *r.Limit, At: r.Time})
		}
		if o.Redact != nil {
			r.Text = o.Redact(r.Text)
			r.Command = o.Redact(r.Command)
			r.FilePath = o.Redact(r.FilePath) // /tmp/ghp_…/out.txt, a key as a file name
		}
		if r.Kind == adapters.KindInjection {
			h := r.Text
			if j := strings.Index(h, " via "); j >= 0 {
				h = h[:j]
			}
			rep.Receipts = append(rep.Receipts, h)
		}
	}
	return rows
}

// TailInto tails one transcript into the ledger, writing rows in batches and
// the cursor last, so an interrupted run re-reads (and deduplicates) rather
// than skips.
func TailInto(l *Ledger, lp adapters.LineParser, ref SessionRef, t adapters.Transcript, o IngestOptions) FileReport {
	fr := FileReport{Path: t.Path}
	cur, err := l.Cursor(t.Path)
	if err != nil {
		fr.Err = err
		return fr
	}
	var batch []adapters.Row
	var werr error
	// Full batches are written by a second goroutine while this one keeps
	// parsing: on a cold ingest parsing and SQLite each take about half the
	// time, and the machine has more than one core.
	// Written batches come back through free to be filled again: a fresh
	// batch per 4096 rows meant fresh pages, page faults and more GC.
	// Each full batch is redacted, collapsed and turned into statement
	// arguments here (prepareRows), so the writer only runs SQLite.
	type fullBatch struct {
		rows     []adapters.Row
		prep     *preparedRows
		receipts []string
		limits   []FoundLimit
	}
	// One full batch waits while another is written and a third is
	// filled: each holds ~3 MB on a cold ingest (its rows' texts and their
	// statement arguments), and a second waiting one bought no speed.
	full := make(chan fullBatch, 1)
	free := make(chan []adapters.Row, 2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		bulk := false
		defer func() {
			if bulk {
				l.bulk(false)
			}
		}()
		for b := range full {
			if !bulk {
				// A big read: checkpoint rarely until its last batch.
				bulk = true
				l.bulk(true)
			}
			if werr == nil {
				// Keys wait for the last batch (keys.go).
				n, err := l.Write(Batch{Session: ref, Rows: b.rows, Sidechain: t.Sidechain, prep: b.prep, deferKeys: true}, o.Now)
				if err != nil {
					werr = err
				}
				fr.Added += n
				fr.Receipts = append(fr.Receipts, b.receipts...)
				fr.Limits = append(fr.Limits, b.limits...)
			}
			clear(b.rows) // its texts are garbage now, not kept by the free list
			select {
			case free <- b.rows[:0]:
			default:
			}
		}
	}()
	res, err := adapters.Tail(t.Path, cur, o.Deadline, func(line []byte, off int64) {
		if o.Progress != nil {
			o.Progress(t.Path, off+int64(len(line)))
		}
		rows, perr := safeParse(lp, line, off)
		if perr != nil {
			return
		}
		for i := range rows {
			if t.Sidechain {
				rows[i].Sidechain = true
			}
		}
		batch = append(batch, rows...)
		if len(batch) >= batchRows {
			var rep IngestReport
			o.prepare(batch, &rep, ref.Tool, ref.NativeID)
			full <- fullBatch{batch, prepareRows(batch, t.Sidechain, o.Now), rep.Receipts, rep.Limits}
			select {
			case batch = <-free:
			default:
				batch = make([]adapters.Row, 0, batchRows)
			}
		}
	})
	close(full)
	<-done
	if err != nil {
		fr.Err = err
		if errors.Is(err, fs.ErrNotExist) && t.MaybeMissing {
			// A new session: remember the path so a later event (or the next
			// session) catches up once the agent writes it.
			if cur.Offset == 0 && cur.Head == "" {
				_, werr := l.Write(Batch{Session: ref, Cursor: &adapters.Cursor{Path: t.Path}, Sidechain: t.Sidechain}, o.Now)
				if werr != nil {
					fr.Err = werr
				}
			}
		}
		return fr
	}
	fr.Reset, fr.Lines, fr.Skipped, fr.Partial = res.Reset, res.Lines, res.Skipped, res.Partial
	// Nothing new and the same file: no write transaction at all.
	if len(batch) == 0 && res.Cursor == cur {
		return fr
	}
	if IsBusy(werr) { // a batch already waited for the lock in vain
		fr.Err = werr
		return fr
	}
	// The last batch and the cursor go in one transaction.
	var rep IngestReport
	n, err := l.Write(Batch{Session: ref, Rows: o.prepare(batch, &rep, ref.Tool, ref.NativeID), Cursor: &res.Cursor, Sidechain: t.Sidechain}, o.Now)
	if werr == nil {
		werr = err
	}
	fr.Added += n
	fr.Receipts = append(fr.Receipts, rep.Receipts...)
	fr.Limits = append(fr.Limits, rep.Limits...)
	fr.Err = werr
	return fr
}

// safeParse runs an adapter's line parser, turning a panic into an error so
// one hostile line can never take the hook down.
func safeParse(lp adapters.LineParser, line []byte, off int64) (rows []adapters.Row, err error) {
	defer func() {
		if r := recover(); r != nil {
			rows, err = nil, fmt.Errorf("%s parser panicked on the line at offset %d", lp.Name(), off)
		}
	}()
	return lp.ParseLine(line, off)
}

// CatchUp re-reads the transcripts the ledger already tracks for project
// when they have grown or changed: a session whose last hook never fired
// (Codex on SIGTERM), or whose agent flushed only after its hooks ran
// (Copilot CLI -p), or a ledger rebuilt after damage (recover.go), of any
// agent. skip names a path the caller has just read. The catchUpWindow
// most recently updated files are looked at (one stat each when read to
// their end) and re-read until o.Deadline (none: all of them).
func CatchUp(l *Ledger, project string, skip map[string]bool, o IngestOptions) ([]FileReport, error) {
	tracked, err := l.Tracked(project, catchUpWindow)
	if err != nil {
		return nil, err
	}
	var out []FileReport
	for _, t := range tracked {
		if skip[t.Path] || (!o.Deadline.IsZero() && time.Now().After(o.Deadline)) {
			continue
		}
		if len(out) > 0 && IsBusy(out[len(out)-1].Err) {
			break // another process holds the ledger
		}
		fi, err := os.Stat(t.Path)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() == t.Offset {
			continue
		}
		a, err := adapters.Lookup(t.Session.Tool)
		if err != nil {
			continue
		}
		lp, ok := a.(adapters.LineParser)
		if !ok || adapters.Confined(a, o.Env, t.Path) != nil {
			continue
		}
		ref := SessionRef{Tool: t.Session.Tool, NativeID: t.Session.NativeID, Project: t.Session.Project}
		fr := TailInto(l, lp, ref, adapters.Transcript{Path: t.Path, SessionID: t.Session.NativeID, Sidechain: t.Sidechain}, o)
		out = append(out, fr)
	}
	return out, nil
}
