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
	Adapter     adapters.Adapter
	Hook        adapters.Hook
	Env         adapters.Env
	Project     string
	Deadline    time.Time
	Now         time.Time
	Redact      func(string) string   // applied to text, command and file path before they are stored
	Transcripts []adapters.Transcript // overrides the adapter's own list (handoff --transcript)
	// Progress gets each line's end offset in the file being tailed (a
	// command shows bytes read on a terminal; the hook sets none).
	Progress func(path string, off int64)
}

// Found is what an ingest noticed in the rows it stored.
type Found struct {
	Receipts []string     // carryover handoff headers seen
	Limits   []FoundLimit // rate-limit and quota signals (adapters.Limit)
}

func (f *Found) add(g Found) {
	f.Receipts = append(f.Receipts, g.Receipts...)
	f.Limits = append(f.Limits, g.Limits...)
}

// FileReport is what happened to one transcript.
type FileReport struct {
	Path  string
	Err   error
	Added int
	adapters.TailResult
	Found
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
	Found
}

// SyncReport is what Sync did.
type SyncReport struct {
	IngestReport
	CaughtUp []FileReport // the project's other transcripts re-read (CatchUp)
	Total    int          // rows added by the ingest and the catch-up
	Notes    []string     // worth a log line (never transcript content)
}

const (
	// catchUpWindow is how many of a project's most recently updated
	// tracked files a catch-up looks at; how many it re-reads is bounded by
	// the deadline (what does not fit is read at the next event).
	catchUpWindow = 256
	// batchRows is how many rows a transaction writes while tailing a
	// large transcript, bounding memory on a cold ingest.
	batchRows = 4096
)

// Sync brings the ledger up to date for one session, the same way for the
// hook and for `carryover handoff`: it ingests the session (after damage:
// rebuilds the ledger and ingests again), catches up the project's other
// transcripts, and records the delivery receipts found. It returns the
// ledger to use from then on (nil when a rebuild failed).
func Sync(l *Ledger, o IngestOptions) (*Ledger, SyncReport, error) {
	var rep SyncReport
	ing, err := Ingest(l, o)
	if damaged(ing, err) {
		// A damaged page is only noticed when a statement reads it.
		if l, err = l.Reopen(); err != nil {
			return nil, rep, fmt.Errorf("ledger is damaged: %w", err)
		}
		if n := l.RecoveryNote(); n != "" {
			rep.Notes = append(rep.Notes, n)
		}
		ing, err = Ingest(l, o)
	}
	rep.IngestReport = ing
	if err != nil {
		return l, rep, fmt.Errorf("ingest: %w", err)
	}
	skip := map[string]bool{}
	for _, f := range ing.Files {
		skip[f.Path] = true
		rep.Notes = append(rep.Notes, f.notes()...)
	}
	if rep.CaughtUp, err = CatchUp(l, o.Project, skip, o); err != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("catch-up: %v", err))
	}
	rep.Total = ing.Added
	receipts := ing.Receipts
	for _, f := range rep.CaughtUp {
		rep.Total += f.Added
		receipts = append(receipts, f.Receipts...)
		rep.Limits = append(rep.Limits, f.Limits...) // another session's: recorded, not announced
	}
	for _, hdr := range receipts {
		if hdr == "" {
			continue
		}
		d := Delivery{Project: o.Project, Header: hdr, Tool: o.Adapter.Name(), SessionID: ing.SessionID, Via: "transcript", At: o.Now}
		if err := l.RecordDelivery(d); err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("record receipt: %v", err))
		}
	}
	return l, rep, nil
}

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
	var err error
	if s, serr := l.SessionIn(ref.Tool, ref.NativeID, ref.Project); serr == nil && (ref.Transcript == "" || s.Transcript == ref.Transcript) {
		rep.SessionID = s.ID
	} else if rep.SessionID, err = l.Touch(ref, o.Now); err != nil {
		return rep, err
	}
	if err := o.writeOwnRows(l, ref, &rep); err != nil {
		return rep, err
	}
	if lp, ok := o.Adapter.(adapters.LineParser); ok {
		return rep, o.tailTranscripts(l, lp, ref, &rep)
	}
	return rep, nil
}

// writeOwnRows stores the rows the payload carries and those the adapter's
// own store holds.
func (o IngestOptions) writeOwnRows(l *Ledger, ref SessionRef, rep *IngestReport) error {
	rows := o.Hook.Rows
	if sr, ok := o.Adapter.(adapters.StoreReader); ok {
		more, err := sr.ReadStore(o.Hook, o.Env)
		if err != nil {
			rep.Files = append(rep.Files, FileReport{Path: "store", Err: err})
		}
		rows = append(rows[:len(rows):len(rows)], more...)
	}
	if len(rows) == 0 {
		return nil
	}
	n, err := l.Write(Batch{Session: ref, Rows: o.prepare(rows, &rep.Found, ref)}, o.Now)
	rep.Added += n
	return err
}

// tailTranscripts tails the hook's transcripts (or o.Transcripts).
func (o IngestOptions) tailTranscripts(l *Ledger, lp adapters.LineParser, ref SessionRef, rep *IngestReport) error {
	ts := o.Transcripts
	if ts == nil {
		ts = lp.Transcripts(o.Hook, o.Env)
	}
	for _, t := range ts {
		if o.Transcripts == nil {
			// Paths from a hook payload follow the store policy (adapters.Confined, tail.go).
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
		rep.add(fr.Found)
		if IsBusy(fr.Err) {
			// Another process holds the ledger: every further write would
			// wait for it again; the next event reads from the cursors.
			return fr.Err
		}
	}
	return nil
}

// prepare redacts rows and collects delivery receipts and limit signals
// (of the session ref) into f.
func (o *IngestOptions) prepare(rows []adapters.Row, f *Found, ref SessionRef) []adapters.Row {
	for i := range rows {
		r := &rows[i]
		if r.Limit != nil && !r.Sidechain {
			f.Limits = append(f.Limits, FoundLimit{Key: r.Key, Tool: ref.Tool, NativeID: ref.NativeID, Limit: *r.Limit, At: r.Time})
		}
		if o.Redact != nil {
			r.Text = o.Redact(r.Text)
			r.Command = o.Redact(r.Command)
			r.FilePath = o.Redact(r.FilePath) // /tmp/ghp_…/out.txt, a key as a file name
		}
		if r.Kind == adapters.KindInjection {
			h, _, _ := strings.Cut(r.Text, " via ")
			f.Receipts = append(f.Receipts, h)
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
	tl, err := adapters.OpenTail(t.Path, cur, o.Deadline)
	if err != nil {
		fr.Err = l.rememberMissing(err, ref, t, cur, o.Now)
		return fr
	}
	batch, werr := tailBatches(l, tl, lp, ref, t, o, &fr)
	res, err := tl.Close()
	if err != nil {
		fr.Err = err
		return fr
	}
	if fr.TailResult = res; len(batch) == 0 && res.Cursor == cur {
		return fr // nothing new and the same file: no write transaction at all
	}
	if IsBusy(werr) { // a batch already waited for the lock in vain
		fr.Err = werr
		return fr
	}
	// The last batch and the cursor go in one transaction.
	var found Found
	n, err := l.Write(Batch{Session: ref, Rows: o.prepare(batch, &found, ref), Cursor: &res.Cursor, Sidechain: t.Sidechain}, o.Now)
	fr.Added += n
	fr.add(found)
	if fr.Err = werr; werr == nil {
		fr.Err = err
	}
	return fr
}

// rememberMissing returns err, after giving a transcript not written yet
// (a new session) an empty cursor: a later event catches up on it.
func (l *Ledger) rememberMissing(err error, ref SessionRef, t adapters.Transcript, cur adapters.Cursor, now time.Time) error {
	if !errors.Is(err, fs.ErrNotExist) || !t.MaybeMissing || cur.Offset != 0 || cur.Head != "" {
		return err
	}
	if _, werr := l.Write(Batch{Session: ref, Cursor: &adapters.Cursor{Path: t.Path}, Sidechain: t.Sidechain}, now); werr != nil {
		return werr
	}
	return err
}

// fullBatch is batchRows rows, prepared by the parsing goroutine so that
// the writing one only runs SQLite.
type fullBatch struct {
	rows []adapters.Row
	prep *preparedRows
	Found
}

// tailBatches parses the tail's lines while a second goroutine writes the
// full batches (on a cold ingest parsing and SQLite each take about half
// the time), and returns the last, partial batch and the first write
// error. One full batch waits while another is written and a third is
// filled (~3 MB each; a second waiting one bought no speed); written
// batches come back through free (fresh ones meant page faults and GC).
func tailBatches(l *Ledger, tl *adapters.Tailer, lp adapters.LineParser, ref SessionRef, t adapters.Transcript, o IngestOptions, fr *FileReport) ([]adapters.Row, error) {
	full := make(chan fullBatch, 1)
	free := make(chan []adapters.Row, 2)
	done := make(chan error)
	go func() { done <- l.writeFull(full, free, ref, t.Sidechain, o.Now, fr) }()
	var batch []adapters.Row
	for {
		if batch = readRows(tl, lp, t, o.Progress, batch); len(batch) < batchRows {
			break
		}
		b := fullBatch{rows: batch}
		o.prepare(batch, &b.Found, ref)
		b.prep = prepareRows(batch, t.Sidechain, o.Now)
		full <- b
		select {
		case batch = <-free:
		default:
			batch = make([]adapters.Row, 0, batchRows)
		}
	}
	close(full)
	return batch, <-done
}

// readRows appends the rows of the tail's next lines to batch until it
// holds batchRows or the lines end.
func readRows(tl *adapters.Tailer, lp adapters.LineParser, t adapters.Transcript, progress func(string, int64), batch []adapters.Row) []adapters.Row {
	for len(batch) < batchRows {
		line, off, ok := tl.Next()
		if !ok {
			break
		}
		if progress != nil {
			progress(t.Path, off+int64(len(line)))
		}
		rows, err := safeParse(lp, line, off)
		for i := range rows {
			rows[i].Sidechain = rows[i].Sidechain || t.Sidechain
		}
		if err == nil {
			batch = append(batch, rows...)
		}
	}
	return batch
}

// writeFull writes the full batches of one read, keys deferred to the last
// (keys.go), checkpointing rarely (bulk); it returns the first error.
func (l *Ledger) writeFull(full <-chan fullBatch, free chan<- []adapters.Row, ref SessionRef, sidechain bool, now time.Time, fr *FileReport) error {
	var werr error
	bulk := false
	for b := range full {
		if !bulk {
			bulk = true
			l.bulk(true)
		}
		if werr == nil {
			var n int
			n, werr = l.Write(Batch{Session: ref, Rows: b.rows, Sidechain: sidechain, prep: b.prep, deferKeys: true}, now)
			fr.Added += n
			fr.add(b.Found)
		}
		clear(b.rows) // its texts are garbage now, not kept by the free list
		select {
		case free <- b.rows[:0]:
		default:
		}
	}
	if bulk {
		l.bulk(false)
	}
	return werr
}

// safeParse runs an adapter's line parser; a panic (a hostile line) is an
// error, never the hook's end.
func safeParse(lp adapters.LineParser, line []byte, off int64) (rows []adapters.Row, err error) {
	defer func() {
		if r := recover(); r != nil {
			rows, err = nil, fmt.Errorf("%s parser panicked on the line at offset %d", lp.Name(), off)
		}
	}()
	return lp.ParseLine(line, off)
}

// CatchUp re-reads the project's tracked transcripts, of any agent, that
// grew or changed: a session whose last hook never fired (Codex on
// SIGTERM), whose agent flushed after its hooks (Copilot CLI -p), or a
// rebuilt ledger's. skip names paths just read. The catchUpWindow newest
// are looked at (a stat each) and re-read until o.Deadline.
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
		lp, ok := a.(adapters.LineParser)
		if err != nil || !ok || adapters.Confined(a, o.Env, t.Path) != nil {
			continue
		}
		ref := SessionRef{Tool: t.Session.Tool, NativeID: t.Session.NativeID, Project: t.Session.Project}
		out = append(out, TailInto(l, lp, ref, adapters.Transcript{Path: t.Path, SessionID: t.Session.NativeID, Sidechain: t.Sidechain}, o))
	}
	return out, nil
}

// notes say, for the log, what went wrong or was left reading the file.
func (f FileReport) notes() []string {
	var notes []string
	switch {
	case f.Err != nil && errors.Is(f.Err, fs.ErrNotExist):
	case f.Err != nil:
		notes = append(notes, fmt.Sprintf("transcript %s: %v", f.Path, f.Err))
	case f.Reset:
		notes = append(notes, fmt.Sprintf("transcript %s was replaced or truncated; re-read from the start", f.Path))
	}
	if f.Skipped > 0 {
		notes = append(notes, fmt.Sprintf("transcript %s: skipped %d lines over %d bytes", f.Path, f.Skipped, adapters.MaxLine))
	}
	if f.Partial {
		notes = append(notes, fmt.Sprintf("transcript %s: deadline reached; the rest is read at the next event", f.Path))
	}
	return notes
}

// RecoveryNote says, for the log, that Open or Reopen found the ledger
// corrupt and rebuilt it ("" when it did not).
func (l *Ledger) RecoveryNote() string {
	if !l.Recovered {
		return ""
	}
	n := fmt.Sprintf("ledger was corrupt; moved aside to %s and started a new one; %d transcripts still on disk are re-read; %d rows of handoff log, receipts, decisions and pinned tasks salvaged", l.MovedTo, l.Rebuilt, l.Restored)
	if l.RestoreErr != nil {
		n += fmt.Sprintf(" (restoring them failed: %v)", l.RestoreErr)
	}
	return n
}

// damaged reports whether an ingest failed because the ledger file is
// damaged (not because of a transcript or an agent's own store).
func damaged(rep IngestReport, err error) bool {
	if err != nil && IsCorrupt(err) {
		return true
	}
	for _, f := range rep.Files {
		if f.Err != nil && f.Path != "store" && IsCorrupt(f.Err) {
			return true
		}
	}
	return false
}
