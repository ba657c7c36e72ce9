package ledger

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/carryover/carryover/adapters"
)

// IngestOptions says what to ingest and how. Progress gets each line's end offset (hooks: nil).
type IngestOptions struct {
	Adapter       adapters.Adapter
	Hook          adapters.Hook
	Env           adapters.Env
	Project       string
	Deadline, Now time.Time
	Redact        func(string) string   // applied to text, command and file path before they are stored
	Transcripts   []adapters.Transcript // overrides the adapter's own list (handoff --transcript)
	Progress      func(path string, off int64)
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

// FoundLimit is a limit signal read, with its row, session and agent.
type FoundLimit struct {
	Key, Tool, NativeID string
	Limit               adapters.Limit
	At                  time.Time
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
	catchUpWindow = 256  // newest tracked files a catch-up looks at (the deadline bounds the re-reads)
	batchRows     = 4096 // rows a transaction writes while tailing: a cold ingest's memory bound
)

// Sync brings the ledger up to date for one session (hook and `carryover
// handoff`): it ingests the session (after damage: rebuilds the ledger and
// ingests again), catches up the project's other transcripts and records the
// receipts found. It returns the ledger to use from then on (nil: rebuild failed).
func Sync(l *Ledger, o IngestOptions) (*Ledger, SyncReport, error) {
	var rep SyncReport
	ing, err := Ingest(l, o)
	if damaged(ing, err) { // a damaged page shows only when a statement reads it
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

// Ingest reads what is new for a hook: transcripts from their cursors, the store, the payload's rows.
func Ingest(l *Ledger, o IngestOptions) (IngestReport, error) {
	var rep IngestReport
	ref := SessionRef{Tool: o.Adapter.Name(), NativeID: o.Hook.SessionID, Project: o.Project, Transcript: o.Hook.TranscriptPath}
	if ref.NativeID == "" {
		return rep, errors.New("hook payload has no session id")
	}
	// A known session (same transcript) needs no write here: its batches refresh it.
	if s, err := l.SessionIn(ref.Tool, ref.NativeID, ref.Project); err == nil && (ref.Transcript == "" || s.Transcript == ref.Transcript) {
		rep.SessionID = s.ID
	} else if err := l.inTx(func(tx *sql.Tx) (err error) { rep.SessionID, err = ensureSession(tx, ref, o.Now); return err }); err != nil {
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

// writeOwnRows stores the payload's rows and those of the adapter's store.
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
			// Paths from a hook payload follow the store policy (adapters.Confined).
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
			return fr.Err // another process holds the ledger: the next event reads from the cursors
		}
	}
	return nil
}

// prepare redacts rows and collects receipts and limit signals into f.
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

// TailInto tails one transcript into the ledger in batches, the cursor last:
// an interrupted run re-reads (and deduplicates) rather than skips.
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
	var found Found // the last batch and the cursor go in one transaction
	n, err := l.Write(Batch{Session: ref, Rows: o.prepare(batch, &found, ref), Cursor: &res.Cursor, Sidechain: t.Sidechain}, o.Now)
	fr.Added += n
	fr.add(found)
	if fr.Err = werr; werr == nil {
		fr.Err = err
	}
	return fr
}

// rememberMissing returns err, after giving a transcript not written yet an empty cursor (catch-up).
func (l *Ledger) rememberMissing(err error, ref SessionRef, t adapters.Transcript, cur adapters.Cursor, now time.Time) error {
	if !errors.Is(err, fs.ErrNotExist) || !t.MaybeMissing || cur.Offset != 0 || cur.Head != "" {
		return err
	}
	if _, werr := l.Write(Batch{Session: ref, Cursor: &adapters.Cursor{Path: t.Path}, Sidechain: t.Sidechain}, now); werr != nil {
		return werr
	}
	return err
}

// fullBatch is batchRows rows prepared by the parsing goroutine (the writer only runs SQLite).
type fullBatch struct {
	rows []adapters.Row
	prep *preparedRows
	Found
}

// tailBatches parses the tail's lines while a second goroutine writes the
// full batches (on a cold ingest each takes half the time) and returns the
// last, partial batch and the first write error. One full batch waits while
// another is written and a third filled (~3 MB each; a second waiting one
// bought no speed); written ones come back through free (fresh ones meant
// page faults and GC). The writer starts with the first full batch.
func tailBatches(l *Ledger, tl *adapters.Tailer, lp adapters.LineParser, ref SessionRef, t adapters.Transcript, o IngestOptions, fr *FileReport) ([]adapters.Row, error) {
	full := make(chan fullBatch, 1)
	free := make(chan []adapters.Row, 2)
	done := make(chan error, 1)
	done <- nil // the result while no writer started
	start := sync.OnceFunc(func() {
		<-done
		go func() { done <- l.writeFull(full, free, ref, t.Sidechain, o.Now, fr) }()
	})
	var batch []adapters.Row
	for {
		if batch = readRows(tl, lp, t, o.Progress, batch); len(batch) < batchRows {
			break
		}
		b := fullBatch{rows: batch}
		o.prepare(batch, &b.Found, ref)
		b.prep = prepareRows(batch, t.Sidechain, o.Now)
		start()
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

// readRows appends the next lines' rows to batch, up to batchRows.
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

// writeFull writes a read's full batches, keys deferred, checkpointing rarely; first error.
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

// safeParse runs a line parser; a panic (a hostile line) is an error, never the hook's end.
func safeParse(lp adapters.LineParser, line []byte, off int64) (rows []adapters.Row, err error) {
	defer func() {
		if r := recover(); r != nil {
			rows, err = nil, fmt.Errorf("%s parser panicked on the line at offset %d", lp.Name(), off)
		}
	}()
	return lp.ParseLine(line, off)
}

// CatchUp re-reads the project's tracked transcripts, of any agent, that
// changed: a session whose last hook never fired (Codex on SIGTERM), whose
// agent flushed after its hooks (Copilot CLI -p), a rebuilt ledger's. skip:
// paths just read; the catchUpWindow newest are re-read until o.Deadline.
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
		if lp := catchUpParser(t, o.Env); lp != nil {
			ref := SessionRef{Tool: t.Session.Tool, NativeID: t.Session.NativeID, Project: t.Session.Project}
			out = append(out, TailInto(l, lp, ref, adapters.Transcript{Path: t.Path, SessionID: t.Session.NativeID, Sidechain: t.Sidechain}, o))
		}
	}
	return out, nil
}

// catchUpParser is the parser of a tracked file that changed size and may be read (nil: skip).
func catchUpParser(t TrackedFile, env adapters.Env) adapters.LineParser {
	fi, err := os.Stat(t.Path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == t.Offset {
		return nil
	}
	a, err := adapters.Lookup(t.Session.Tool)
	lp, ok := a.(adapters.LineParser)
	if err != nil || !ok || adapters.Confined(a, env, t.Path) != nil {
		return nil
	}
	return lp
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

// RecoveryNote says, for the log, that the ledger was found corrupt and rebuilt ("" not).
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

// damaged reports whether an ingest failed on a damaged ledger (not a transcript or store).
func damaged(rep IngestReport, err error) bool {
	return err != nil && IsCorrupt(err) || slices.ContainsFunc(rep.Files, func(f FileReport) bool {
		return f.Err != nil && f.Path != "store" && IsCorrupt(f.Err)
	})
}

// upsertSession creates or refreshes a session, returning id, next_seq and keys_through.
const upsertSession = `INSERT INTO sessions (tool, native_id, project, transcript, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?)
	ON CONFLICT (tool, native_id, project) DO UPDATE SET last_seen = excluded.last_seen,
		transcript = CASE WHEN excluded.transcript != '' THEN excluded.transcript ELSE sessions.transcript END
	RETURNING id, next_seq, keys_through`

func (r SessionRef) upsertArgs(now time.Time) []any {
	return []any{r.Tool, r.NativeID, r.Project, r.Transcript, now.UnixMilli(), now.UnixMilli()}
}

// ensureSession upserts ref's session and returns its id.
func ensureSession(tx *sql.Tx, ref SessionRef, now time.Time) (id int64, err error) {
	var next, through int64
	err = tx.QueryRow(upsertSession, ref.upsertArgs(now)...).Scan(&id, &next, &through)
	return id, err
}

// Batch is one transcript's new rows and where reading stopped (saved with them).
type Batch struct {
	Session   SessionRef
	Rows      []adapters.Row
	Cursor    *adapters.Cursor
	Sidechain bool
	prep      *preparedRows // Rows already prepared (prepareRows)
	deferKeys bool          // keys stay pending (keys.go): a long read's batches but its last
}

// Write stores a batch in one transaction: the session, its rows (by key:
// a later copy replaces the earlier) and the cursor; it returns how many
// rows were new.
func (l *Ledger) Write(b Batch, now time.Time) (int, error) {
	added := 0
	var sid int64
	write := func(tx *rawTx) (err error) {
		added, sid, err = writeBatch(tx, &l.keys, b, now)
		return err
	}
	err := l.withRawTx(write)
	if errors.Is(err, errKeysToIndex) { // rolled back: index the session's old rows in steps first
		if err = l.catchUpKeys(b.Session); err == nil {
			err = l.withRawTx(write)
		}
	}
	if err != nil {
		l.keys.forget(sid)
		return 0, err
	}
	return added, nil
}

// withRawTx runs fn in a write transaction on the driver's connection, committed on nil.
func (l *Ledger) withRawTx(fn func(*rawTx) error) error {
	ctx := context.Background()
	c, err := l.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Raw(func(dc any) error {
		conn := dc.(driver.ConnBeginTx) // go-sqlite3's connection
		tx, err := conn.BeginTx(ctx, driver.TxOptions{})
		if err != nil {
			return err
		}
		t := &rawTx{conn: conn.(driver.Conn)}
		err = fn(t)
		for _, s := range t.stmts {
			s.Close()
		}
		if err != nil {
			tx.Rollback()
			return err
		}
		return tx.Commit()
	})
}

func writeBatch(tx *rawTx, ks *keyStates, b Batch, now time.Time) (int, int64, error) {
	var sid, next, through int64
	if err := tx.queryRow(upsertSession, b.Session.upsertArgs(now), &sid, &next, &through); err != nil {
		return 0, 0, err
	}
	if st := ks.get(sid); next-through > keyChunk && (st.next != next || st.through != through) {
		return 0, sid, errKeysToIndex // not this process's own read (catchUpKeys)
	}
	kw, err := openKeys(tx, ks, sid, next, through)
	if err != nil {
		return 0, sid, err
	}
	added := 0
	var p *preparedRows
	if len(b.Rows) > 0 {
		if p = b.prep; p == nil {
			p = prepareRows(b.Rows, b.Sidechain, now)
		}
		w := rowWriter{tx: tx, kw: kw, b: &b, sid: sid, next: next}
		if err := w.write(p); err != nil {
			return 0, sid, err
		}
		next, added = w.next, w.added
	}
	stored := through
	if through, err = kw.close(next, !b.deferKeys); err != nil {
		return 0, sid, err
	}
	if err := saveCounters(tx, sid, next, through, stored, p); err != nil {
		return 0, sid, err
	}
	if b.Cursor != nil {
		err = saveCursor(tx, b.Cursor, sid, b.Sidechain, now)
	}
	return added, sid, err
}

// headPart is adapters.HeadPart in SQL: the head up to its first '@'.
func headPart(col string) string { return `substr(` + col + `, 1, instr(` + col + ` || '@', '@') - 1)` }

// saveCursor stores c unless the stored cursor of the same file is past it
// (a slower concurrent snapshot may finish after a faster one), in one
// statement; the one naming the session id (it rewrites a cursors_session
// page) only when the first changed nothing (another session's file).
func saveCursor(tx *rawTx, c *adapters.Cursor, sid int64, sidechain bool, now time.Time) error {
	q := `INSERT INTO cursors (path, session_id, sidechain, offset, dev, ino, head, head_len, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (path) DO UPDATE SET %ssidechain = excluded.sidechain, offset = excluded.offset,
			dev = excluded.dev, ino = excluded.ino, head = excluded.head, head_len = excluded.head_len, updated = excluded.updated
		WHERE NOT (cursors.ino = excluded.ino AND cursors.dev = excluded.dev AND cursors.offset > excluded.offset AND ` + headPart("cursors.head") + ` = ` + headPart("excluded.head") + `)`
	args := []any{c.Path, sid, sidechain, c.Offset, int64(c.Dev), int64(c.Ino), c.Head, int64(c.HeadLen), now.UnixMilli()}
	if n, err := tx.execCount(fmt.Sprintf(q, "")+` AND cursors.session_id = excluded.session_id`, args...); n > 0 {
		return err
	}
	return tx.execOnce(fmt.Sprintf(q, "session_id = excluded.session_id, "), args...)
}

// saveCounters stores next_seq, keys_through, p's last activity and tokens in one statement.
func saveCounters(tx *rawTx, sid, next, through, stored int64, p *preparedRows) (err error) {
	if p != nil {
		err = tx.execOnce(`UPDATE sessions SET next_seq = ?1, keys_through = ?2, last_active = MAX(last_active, ?3),
			tokens_used = CASE WHEN ?4 > 0 THEN ?4 ELSE tokens_used END, tokens_max = CASE WHEN ?4 > 0 THEN ?5 ELSE tokens_max END
			WHERE id = ?6`, next, through, p.lastTS, p.tokUsed, p.tokMax, sid)
	} else if through != stored {
		err = tx.execOnce(`UPDATE sessions SET keys_through = ? WHERE id = ?`, through, sid)
	}
	return err
}

// optCols are row columns usually at their default. A row binds only those
// it sets: a bound value is a cgo call, and on a cold ingest binding cost as
// much as the insert. A batch under oneFormRows (a hook's) binds them all in
// one statement: a prepare per form (~30 µs, 4–6 a Stop) cost more.
const oneFormRows = 256

var optCols = [...]string{"tool_name", "call_id", "file_path", "command", "exit_code", "sidechain", "tokens_used", "tokens_max"}

// preparedRows is a batch's rows collapsed and turned into arguments.
type preparedRows struct {
	rows            []adapters.Row
	ts              []int64
	forms           []rowForm
	args            [][]driver.NamedValue // per row: key, seq (set when written), ts, text, the optional columns its form sets
	lastTS          int64
	tokUsed, tokMax int64
}

// rowForm is the shape of a row's INSERT: the optional columns it binds,
// role and kind as literals (a bound text costs a copy, a lock and a cgo call).
type rowForm struct {
	mask       uint8
	role, kind string
}

// literal reports whether s can be written into SQL as '<s>' as it is.
func literal(s string) bool {
	if len(s) == 0 || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c == '_' || c == ' ') {
			return false
		}
	}
	return true
}

func prepareRows(rows []adapters.Row, sidechain bool, now time.Time) *preparedRows {
	p := &preparedRows{}
	for _, r := range rows {
		if r.Kind == adapters.KindUsage && !(r.Sidechain || sidechain) {
			p.tokUsed, p.tokMax = r.TokensUsed, r.TokensMax
		}
	}
	p.rows = collapse(rows)
	p.ts = make([]int64, len(p.rows))
	p.forms = make([]rowForm, len(p.rows))
	p.args = make([][]driver.NamedValue, len(p.rows))
	slab := make([]driver.NamedValue, 0, len(p.rows)*15)
	one := len(p.rows) < oneFormRows
	for i, r := range p.rows {
		p.ts[i] = r.Time.UnixMilli()
		if r.Time.IsZero() {
			p.ts[i] = now.UnixMilli()
		}
		p.lastTS = max(p.lastTS, p.ts[i])
		start := len(slab)
		add := func(v any) { slab = append(slab, driver.NamedValue{Ordinal: len(slab) - start + 1, Value: v}) }
		add(r.Key)
		add(nil) // seq
		add(p.ts[i])
		add(r.Text)
		f := rowForm{role: r.Role, kind: string(r.Kind)}
		if one || !literal(f.role) || !literal(f.kind) {
			f.role, f.kind = "", "" // bound instead
			add(r.Role)
			add(string(r.Kind))
		}
		opt := func(bit uint8, set bool, v any) {
			if set || one {
				f.mask |= bit
				add(v)
			}
		}
		opt(1<<0, r.ToolName != "", r.ToolName)
		opt(1<<1, r.CallID != "", r.CallID)
		opt(1<<2, r.FilePath != "", r.FilePath)
		opt(1<<3, r.Command != "", r.Command)
		opt(1<<4, r.ExitCode != nil, exitValue(r.ExitCode))
		sc := int64(0)
		if r.Sidechain || sidechain {
			sc = 1
		}
		opt(1<<5, sc == 1, sc)
		opt(1<<6, r.TokensUsed != 0, r.TokensUsed)
		opt(1<<7, r.TokensMax != 0, r.TokensMax)
		p.forms[i] = f
		p.args[i] = slab[start:len(slab):len(slab)]
	}
	return p
}

func exitValue(code *int) any {
	if code == nil {
		return nil
	}
	return int64(*code)
}

// insertStmt returns the (cached) INSERT for rows of form f in session sid.
func insertStmt(tx *rawTx, cache map[rowForm]driver.Stmt, sid int64, f rowForm) (driver.Stmt, error) {
	if st := cache[f]; st != nil {
		return st, nil
	}
	cols, vals := "session_id, key, seq, ts, text, role, kind", strconv.FormatInt(sid, 10)+", ?, ?, ?, ?, ?, ?"
	if f.role != "" {
		vals = strconv.FormatInt(sid, 10) + ", ?, ?, ?, ?, '" + f.role + "', '" + f.kind + "'"
	}
	for i, c := range optCols {
		if f.mask&(1<<i) != 0 {
			cols += ", " + c
			vals += ", ?"
		}
	}
	st, err := tx.prepare(`INSERT INTO rows (` + cols + `) VALUES (` + vals + `)`)
	cache[f] = st
	return st, err
}

// rowWriter stores a batch's rows: new keys inserted at next, known ones updated in place.
type rowWriter struct {
	tx    *rawTx
	kw    *keyWriter
	b     *Batch
	sid   int64
	next  int64
	added int
	stmts map[rowForm]driver.Stmt
	upd   driver.Stmt
}

func (w *rowWriter) write(p *preparedRows) error {
	hs := make([]int64, len(p.rows))
	for i, r := range p.rows {
		hs[i] = keyHash(r.Key)
	}
	if err := w.kw.prefetch(hs); err != nil {
		return err
	}
	w.stmts = map[rowForm]driver.Stmt{}
	for i, r := range p.rows {
		seq, old, err := w.kw.find(r.Key, hs[i])
		if err == nil && seq == 0 {
			err = w.insert(p, i, hs[i])
		} else if err == nil {
			err = w.update(p, i, seq, old)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *rowWriter) insert(p *preparedRows, i int, h int64) error {
	args := p.args[i]
	args[1].Value = w.next
	st, err := insertStmt(w.tx, w.stmts, w.sid, p.forms[i])
	if err != nil {
		return err
	}
	if _, err := st.(driver.StmtExecContext).ExecContext(context.Background(), args); err != nil {
		return err
	}
	w.kw.added(h, w.next, w.b.deferKeys)
	w.next++
	w.added++
	return nil
}

// update replaces the row at seq (stored as old) by a later copy that changed.
func (w *rowWriter) update(p *preparedRows, i int, seq int64, old storedRow) (err error) {
	r := p.rows[i]
	exit := exitValue(r.ExitCode)
	if old == (storedRow{r.Text, string(r.Kind), exit}) {
		return nil
	}
	if err = w.tx.once(&w.upd, `UPDATE rows SET ts = ?, role = ?, kind = ?, tool_name = ?, call_id = ?, file_path = ?, command = ?, exit_code = ?, text = ?, sidechain = ?, tokens_used = ?, tokens_max = ?
		WHERE session_id = ? AND seq = ?`); err != nil {
		return err
	}
	return w.tx.exec(w.upd, p.ts[i], r.Role, string(r.Kind), r.ToolName, r.CallID, r.FilePath, r.Command, exit, r.Text, r.Sidechain || w.b.Sidechain, r.TokensUsed, r.TokensMax, w.sid, seq)
}

// collapse keeps one entry per key, as the upsert would (a later copy that
// changes the text, kind or exit code replaces the earlier in place): Claude
// Code repeats a message's usage on each line, each an insert and an update.
func collapse(rows []adapters.Row) []adapters.Row {
	seen := make(map[string]int, len(rows))
	var out []adapters.Row // nil until the first repeat: positions are indexes until then
	for i, r := range rows {
		j, dup := seen[r.Key]
		if !dup {
			if out != nil {
				seen[r.Key] = len(out)
				out = append(out, r)
			} else {
				seen[r.Key] = i
			}
			continue
		}
		if out == nil {
			out = append(make([]adapters.Row, 0, len(rows)), rows[:i]...)
		}
		if p := out[j]; p.Text != r.Text || p.Kind != r.Kind || exitValue(p.ExitCode) != exitValue(r.ExitCode) {
			out[j] = r
		}
	}
	if out == nil {
		return rows
	}
	return out
}

// keyChunk is the unindexed rows a catchUpKeys transaction indexes: ~0.2 s (a variable for tests).
var keyChunk int64 = 1 << 16

var (
	// errKeysBehind is catchUpKeys stopped by the deadline: like a held lock
	// (IsBusy), the rows are read again at the next event.
	errKeysBehind = errors.New("ledger: still indexing the row keys of a session stored before schema 12; continues at the next event")
	// errKeysToIndex rolls back a write whose session has more unindexed
	// rows than one transaction indexes (catchUpKeys, then the write again).
	errKeysToIndex = errors.New("ledger: the session's rows need indexing first")
)

// catchUpKeys indexes the rows of ref's session that neither a key table
// nor this process holds (schema 11, a crashed read) keyChunk rows a
// transaction until fewer are left (the write indexes those): millions of
// rows cost a few hooks their update, not every hook its deadline.
func (l *Ledger) catchUpKeys(ref SessionRef) error {
	for done := false; !done; {
		var sid int64
		err := l.withRawTx(func(tx *rawTx) error {
			var next, through int64
			if err := tx.queryRow(`SELECT id, next_seq, keys_through FROM sessions WHERE tool = ? AND native_id = ? AND project = ?`, []any{ref.Tool, ref.NativeID, ref.Project}, &sid, &next, &through); err != nil {
				done = err == sql.ErrNoRows
				return err
			}
			if st := l.keys.get(sid); next-through <= keyChunk || (st.next == next && st.through == through) {
				done = true // few enough, or this process's own read: its keys are in memory
				return nil
			}
			if !l.deadline.IsZero() && time.Now().After(l.deadline) {
				return errKeysBehind
			}
			last, err := flushFromRows(tx, sid, through, keyChunk)
			if err == nil {
				err = tx.execOnce(`UPDATE sessions SET keys_through = ? WHERE id = ?`, last+1, sid)
			}
			l.keys.forget(sid)
			return err
		})
		if err != nil && !done {
			return err
		}
	}
	return nil
}

// Row keys (issue 17: linear cold ingest). A row is identified by its
// adapter's key (a message uuid and block index, a call id). The keys are
// random: a unique index on them (schema 6–11) put every insert at a random
// place in a B-tree as large as the session (a cold 1 GB ingest wrote 111,000
// index pages against the rows' 17,000: 3.5 s against 1.9 s). So keys live
// in two tables of (session, 64-bit FNV-1a hash, seq), ~16 bytes an entry:
// row_keys by hash, written only in key order and in bulk; keys_recent by
// seq, where a hook's few new keys are appended (one page, where a random
// row_keys page a row was 27 of a Stop's 46) and move into row_keys
// keyRecentMax at a time. A long read keeps its keys in memory (pending, a
// seqIndex) and writes them, sorted, with its last batch. Invariant: every
// row with seq < keys_through has its entry in one of the tables; later rows
// are pending. The reading process finds repeats in memory; any other writer
// first indexes them from the rows (flushFromRows), so a crashed or
// concurrent read never lets a row in twice. A hash match is always checked
// against the stored key. A session from before schema 12 starts all
// pending and is indexed in steps (catchUpKeys).

const (
	// keyFlushRows bounds a long read's pending keys (then written with the
	// batch): 786,432 fill a seqIndex of 2^20 slots (12 MB) to 3/4; a dense
	// 1 GB transcript's ~750,000 are written once at its end (every 131,072
	// cost 10 % of its speed; a Go map of 524,288 took it to 64.5 MB).
	keyFlushRows = 3 << 18
	// keyMaxSlots is the most slots a seqIndex grows to (the batch crossing
	// keyFlushRows overflows into the map); 2^21 took a cold 1.3 GB ingest
	// to 123 MiB peak RSS (manual path), 87 (hook's).
	keyMaxSlots = 1 << 20
	// keyRecentMax is the span of seqs keys_recent covers per session before
	// its keys move into row_keys: a lookup scans them (4,096 are ~4 pages),
	// a move touches up to a row_keys page a key, once per ~100 hooks.
	keyRecentMax = 4096
)

// keyHash is the 64-bit FNV-1a hash of a row key, as SQLite stores it.
func keyHash(key string) int64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(key); i++ {
		h = (h ^ uint64(key[i])) * 1099511628211
	}
	return int64(h)
}

// seqIndex maps key hashes to their rows' seqs: open addressing, 12 bytes a
// slot, at most 3/4 full (a Go map took ~37 bytes an entry).
type seqIndex struct {
	slots []keySlot
	extra map[int64][]int64 // a hash's further seqs, seqs past 2^32, a full table's overflow
	n     int               // entries, extra ones included
	used  int               // occupied slots
}

// keySlot is a hash in two halves and its row's seq (0: empty; no row has seq 0).
type keySlot struct{ hi, lo, seq uint32 }

func (s keySlot) hash() int64 { return int64(uint64(s.hi)<<32 | uint64(s.lo)) }

// slot returns the index of h's slot, or of the empty slot where it goes.
func (x *seqIndex) slot(h int64) int {
	mask := len(x.slots) - 1
	i := int((uint64(h)*0x9E3779B97F4A7C15)>>32) & mask // Fibonacci hashing spreads FNV's low bits
	for x.slots[i].seq != 0 && x.slots[i].hash() != h {
		i = (i + 1) & mask
	}
	return i
}

func (x *seqIndex) add(h, seq int64) {
	full := 4*(x.used+1) > 3*len(x.slots)
	if full && len(x.slots) < keyMaxSlots {
		x.grow()
		full = false
	}
	x.n++
	i := x.slot(h)
	if !full && x.slots[i].seq == 0 && seq > 0 && seq <= math.MaxUint32 {
		x.slots[i] = keySlot{uint32(uint64(h) >> 32), uint32(h), uint32(seq)}
		x.used++
		return
	}
	if x.extra == nil {
		x.extra = map[int64][]int64{}
	}
	x.extra[h] = append(x.extra[h], seq)
}

func (x *seqIndex) grow() {
	old := x.slots
	x.slots = make([]keySlot, max(64, 2*len(old)))
	for _, s := range old {
		if s.seq != 0 {
			x.slots[x.slot(s.hash())] = s
		}
	}
}

// seqsOf appends the seqs of hash h to dst.
func (x *seqIndex) seqsOf(dst []int64, h int64) []int64 {
	if x.n == 0 {
		return dst
	}
	if i := x.slot(h); x.slots[i].seq != 0 {
		dst = append(dst, int64(x.slots[i].seq))
	}
	return append(dst, x.extra[h]...)
}

// drain yields the entries in key order (hash, then seq) and empties the
// index, sorted in place (a sorted copy held a second 12 MB: 21 MB heap peak).
func (x *seqIndex) drain() iter.Seq2[int64, int64] {
	n := 0
	for _, s := range x.slots {
		if s.seq != 0 { // n ≤ i: a slot moves only after it was read
			x.slots[n] = s
			n++
		}
	}
	slots := x.slots[:n]
	slices.SortFunc(slots, func(a, b keySlot) int {
		return compareEntries(keyEntry{a.hash(), int64(a.seq)}, keyEntry{b.hash(), int64(b.seq)})
	})
	var more []keyEntry // shared hashes and seqs past 2^32: rare
	for h, seqs := range x.extra {
		for _, seq := range seqs {
			more = append(more, keyEntry{h, seq})
		}
	}
	slices.SortFunc(more, compareEntries)
	*x = seqIndex{}
	return func(yield func(h, seq int64) bool) {
		for len(slots) > 0 || len(more) > 0 {
			var e keyEntry
			if len(slots) > 0 {
				e = keyEntry{slots[0].hash(), int64(slots[0].seq)}
			}
			if len(slots) == 0 || len(more) > 0 && compareEntries(more[0], e) < 0 {
				e, more = more[0], more[1:]
			} else {
				slots = slots[1:]
			}
			if !yield(e.h, e.seq) {
				return
			}
		}
	}
}

// keyState is a session's next_seq and keys_through as this process left them, and pending keys.
type keyState struct {
	next, through int64
	pending       seqIndex
}

type keyStates struct {
	mu sync.Mutex
	m  map[int64]*keyState
}

func (k *keyStates) get(sid int64) *keyState {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[int64]*keyState{}
	}
	s := k.m[sid]
	if s == nil {
		s = &keyState{next: -1}
		k.m[sid] = s
	}
	return s
}

// forget drops a rolled-back session's state: the next write reads the ledger.
func (k *keyStates) forget(sid int64) {
	k.mu.Lock()
	delete(k.m, sid)
	k.mu.Unlock()
}

// keyWriter finds repeats and records new rows' keys in one transaction.
type keyWriter struct {
	tx         *rawTx
	sid        int64
	st         *keyState
	keyAt      driver.Stmt       // the key of a row
	recent     []byte            // new keys for keys_recent: JSON [[seq, hash], ...
	recentFrom int64             // the lowest seq in keys_recent (0: none)
	indexed    bool              // the key tables may hold entries of the session
	hits       map[int64][]int64 // their entries of the batch's hashes (prefetch)
	buf        []int64
}

// openKeys starts a transaction's key work, first indexing pending rows another writer left.
func openKeys(tx *rawTx, ks *keyStates, sid, next, through int64) (*keyWriter, error) {
	st := ks.get(sid)
	if st.next != next || st.through != through {
		if through < next {
			if _, err := flushFromRows(tx, sid, through, -1); err != nil {
				return nil, err
			}
			through = next
		}
		st.pending = seqIndex{}
		st.next, st.through = next, through
	}
	return &keyWriter{tx: tx, sid: sid, st: st, indexed: through > 1}, nil
}

// prefetch looks up the batch's hashes in both key tables in one query (one
// per row cost a hook's 50 new rows 50 cgo calls to find nothing; loading
// keys_recent into Go ~0.8 ms). The hashes go in as one JSON array: one
// bound value, a statement of fixed text (80 placeholders: a long parse
// every hook). Its last row (seq 0, never a row's) is keys_recent's lowest
// seq for close, an index lookup (a COUNT took 150 µs at 3,000 entries).
func (w *keyWriter) prefetch(hs []int64) error {
	if !w.indexed || len(hs) == 0 {
		return nil
	}
	w.hits = map[int64][]int64{}
	b := append(make([]byte, 0, 21*len(hs)+2), '[')
	for i, h := range hs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, h, 10)
	}
	rows, err := w.tx.queryOnce(`SELECT khash, seq FROM row_keys WHERE session_id = ?1 AND khash IN (SELECT value FROM json_each(?2))
		UNION ALL SELECT khash, seq FROM keys_recent WHERE session_id = ?1 AND khash IN (SELECT value FROM json_each(?2))
		UNION ALL SELECT COALESCE(MIN(seq), 0), 0 FROM keys_recent WHERE session_id = ?1`, w.sid, string(append(b, ']')))
	if err != nil {
		return err
	}
	defer rows.Close()
	v := make([]driver.Value, 2)
	for rows.Next(v) == nil {
		h, _ := v[0].(int64)
		if seq, _ := v[1].(int64); seq != 0 {
			w.hits[h] = append(w.hits[h], seq)
		} else {
			w.recentFrom = h
		}
	}
	return nil
}

// storedRow is a stored row's text, kind and exit code (nil: none), compared with a repeat.
type storedRow struct {
	text, kind string
	exit       any
}

// find returns the seq of the stored row with key (hash h), or 0, and the row.
func (w *keyWriter) find(key string, h int64) (int64, storedRow, error) {
	w.buf = w.st.pending.seqsOf(w.buf[:0], h)
	w.buf = append(w.buf, w.hits[h]...)
	for _, seq := range w.buf {
		if old, same, err := w.keyIs(seq, key); same || err != nil {
			return seq, old, err
		}
	}
	return 0, storedRow{}, nil
}

// keyIs reports whether the row at seq has key (not: a hash collision, or
// gc removed it), and the row: an unchanged repeat (46 of a Stop's 82 rows)
// then costs no UPDATE.
func (w *keyWriter) keyIs(seq int64, key string) (storedRow, bool, error) {
	if err := w.tx.once(&w.keyAt, `SELECT key, text, kind, exit_code FROM rows WHERE session_id = `+strconv.FormatInt(w.sid, 10)+` AND seq = ?`); err != nil {
		return storedRow{}, false, err
	}
	rows, err := w.tx.query(w.keyAt, seq)
	if err != nil {
		return storedRow{}, false, err
	}
	defer rows.Close()
	v := make([]driver.Value, 4)
	same := rows.Next(v) == nil && text(v[0]) == key
	return storedRow{text: text(v[1]), kind: text(v[2]), exit: v[3]}, same, nil
}

// added records a new row's key: pending for a long read's batch (deferred),
// else for keys_recent, written by close in one statement (~3 µs a row less).
func (w *keyWriter) added(h, seq int64, deferred bool) {
	if deferred {
		w.st.pending.add(h, seq)
		return
	}
	if w.recentFrom == 0 {
		w.recentFrom = seq // keys_recent held none of the session's (prefetch)
	}
	if len(w.recent) > 0 {
		w.recent = append(w.recent, ',')
	}
	w.recent = fmt.Appendf(w.recent, "[%d,%d]", seq, h)
}

// close ends the transaction's key work and returns keys_through; a read's
// last batch (flush), or one past keyFlushRows, writes the pending keys.
func (w *keyWriter) close(next int64, flush bool) (int64, error) {
	st := w.st
	through := st.through
	if flush || st.pending.n >= keyFlushRows {
		if st.pending.n > 0 {
			if err := writeEntries(w.tx, w.sid, st.pending.drain()); err != nil {
				return 0, err
			}
		}
		through = next
	}
	if len(w.recent) > 0 {
		if err := w.writeRecent(next); err != nil {
			return 0, err
		}
	}
	st.next, st.through = next, through
	return through, nil
}

// writeRecent appends the new keys to keys_recent and, once its seqs span
// keyRecentMax, moves them into row_keys in key order (each page written once).
func (w *keyWriter) writeRecent(next int64) error {
	if err := w.tx.execOnce(`INSERT OR IGNORE INTO keys_recent (session_id, seq, khash) SELECT ?, value ->> 0, value ->> 1 FROM json_each(?)`,
		w.sid, "["+string(w.recent)+"]"); err != nil || next-w.recentFrom < keyRecentMax {
		return err
	}
	if err := w.tx.execOnce(`INSERT OR IGNORE INTO row_keys (session_id, khash, seq)
		SELECT session_id, khash, seq FROM keys_recent WHERE session_id = ? ORDER BY khash, seq`, w.sid); err != nil {
		return err
	}
	return w.tx.execOnce(`DELETE FROM keys_recent WHERE session_id = ?`, w.sid)
}

// flushFromRows indexes at most n (all: -1) rows of sid from seq from on; it returns the last.
func flushFromRows(tx *rawTx, sid, from, n int64) (int64, error) {
	rows, err := tx.queryOnce(`SELECT seq, key FROM rows WHERE session_id = ? AND seq >= ? ORDER BY seq LIMIT `+strconv.FormatInt(n, 10), sid, from) // a literal: see RowsAfter
	if err != nil {
		return 0, err
	}
	last := from - 1
	var es []keyEntry
	v := make([]driver.Value, 2)
	for rows.Next(v) == nil {
		last, _ = v[0].(int64)
		es = append(es, keyEntry{keyHash(text(v[1])), last})
	}
	rows.Close()
	slices.SortFunc(es, compareEntries)
	return last, writeEntries(tx, sid, func(yield func(h, seq int64) bool) {
		for _, e := range es {
			if !yield(e.h, e.seq) {
				return
			}
		}
	})
}

type keyEntry struct{ h, seq int64 }

func compareEntries(a, b keyEntry) int {
	return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.seq, b.seq))
}

// writeEntries inserts entries into row_keys in key order: each B-tree page is written once.
func writeEntries(tx *rawTx, sid int64, entries iter.Seq2[int64, int64]) error {
	ins, err := tx.prepare(`INSERT OR IGNORE INTO row_keys (session_id, khash, seq) VALUES (` + strconv.FormatInt(sid, 10) + `, ?, ?)`)
	for h, seq := range entries {
		if err != nil {
			break
		}
		err = tx.exec(ins, h, seq)
	}
	return err
}

// rawTx is a write transaction on the driver connection, below database/sql:
// binding 15 values a row, its reflection cost more than SQLite's work.
type rawTx struct {
	conn  driver.Conn
	stmts []driver.Stmt // closed when the transaction ends
	args  []driver.NamedValue
}

func (t *rawTx) prepare(q string) (driver.Stmt, error) {
	s, err := t.conn.Prepare(q)
	if err == nil {
		t.stmts = append(t.stmts, s)
	}
	return s, err
}

// once prepares q into *s unless a statement is there already.
func (t *rawTx) once(s *driver.Stmt, q string) (err error) {
	if *s == nil {
		*s, err = t.prepare(q)
	}
	return err
}

// bind fills t.args from values (nil, int64, int, bool, string, []byte).
func (t *rawTx) bind(values []any) []driver.NamedValue {
	t.args = t.args[:0]
	for i, v := range values {
		switch x := v.(type) {
		case int:
			v = int64(x)
		case bool:
			v = int64(0)
			if x {
				v = int64(1)
			}
		}
		t.args = append(t.args, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	return t.args
}

func (t *rawTx) exec(s driver.Stmt, values ...any) error {
	_, err := s.(driver.StmtExecContext).ExecContext(context.Background(), t.bind(values))
	return err
}

func (t *rawTx) query(s driver.Stmt, values ...any) (driver.Rows, error) {
	return s.(driver.StmtQueryContext).QueryContext(context.Background(), t.bind(values))
}

// queryOnce prepares and runs one query.
func (t *rawTx) queryOnce(q string, values ...any) (driver.Rows, error) {
	s, err := t.prepare(q)
	if err != nil {
		return nil, err
	}
	return t.query(s, values...)
}

// execOnce prepares and runs one statement.
func (t *rawTx) execOnce(q string, values ...any) error {
	_, err := t.execCount(q, values...)
	return err
}

// execCount prepares and runs one statement and returns the rows it changed.
func (t *rawTx) execCount(q string, values ...any) (int64, error) {
	s, err := t.prepare(q)
	if err != nil {
		return 0, err
	}
	res, err := s.(driver.StmtExecContext).ExecContext(context.Background(), t.bind(values))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// queryRow scans a one-off query's first row's integers into dest (none: sql.ErrNoRows).
func (t *rawTx) queryRow(q string, args []any, dest ...*int64) error {
	rows, err := t.queryOnce(q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	vals := make([]driver.Value, len(rows.Columns()))
	if err := rows.Next(vals); err == io.EOF {
		return sql.ErrNoRows
	} else if err != nil {
		return err
	}
	for i, d := range dest {
		*d, _ = vals[i].(int64)
	}
	return nil
}

// text is a TEXT column's value.
func text(v driver.Value) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	s, _ := v.(string)
	return s
}
