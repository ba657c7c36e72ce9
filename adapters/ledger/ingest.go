package ledger

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/carryover/carryover/adapters"
)

// IngestOptions says what to ingest and how. Progress gets each line's end
// offset in the file being tailed (a command shows bytes read; hooks: nil).
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

// FoundLimit is a limit signal read from a transcript or a store: the row
// that carried it, its session and agent (a catch-up reads other agents').
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

// Sync brings the ledger up to date for one session, for the hook and for
// `carryover handoff`: it ingests the session (after damage: rebuilds the
// ledger and ingests again), catches up the project's other transcripts and
// records the receipts found. It returns the ledger to use from then on (nil
// when a rebuild failed).
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

// Ingest reads what is new for a hook into the ledger: the adapter's
// transcripts from their cursors, its store, or the payload's own rows.
func Ingest(l *Ledger, o IngestOptions) (IngestReport, error) {
	var rep IngestReport
	ref := SessionRef{Tool: o.Adapter.Name(), NativeID: o.Hook.SessionID, Project: o.Project, Transcript: o.Hook.TranscriptPath}
	if ref.NativeID == "" {
		return rep, errors.New("hook payload has no session id")
	}
	var err error // a known session (same transcript) needs no write here: its batches refresh it
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

// TailInto tails one transcript into the ledger in batches, the cursor
// last, so an interrupted run re-reads (and deduplicates) rather than skips.
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

// rememberMissing returns err, after giving a transcript not written yet (a
// new session) an empty cursor for a later event's catch-up.
func (l *Ledger) rememberMissing(err error, ref SessionRef, t adapters.Transcript, cur adapters.Cursor, now time.Time) error {
	if !errors.Is(err, fs.ErrNotExist) || !t.MaybeMissing || cur.Offset != 0 || cur.Head != "" {
		return err
	}
	if _, werr := l.Write(Batch{Session: ref, Cursor: &adapters.Cursor{Path: t.Path}, Sidechain: t.Sidechain}, now); werr != nil {
		return werr
	}
	return err
}

// fullBatch is batchRows rows, prepared by the parsing goroutine: the
// writing one only runs SQLite.
type fullBatch struct {
	rows []adapters.Row
	prep *preparedRows
	Found
}

// tailBatches parses the tail's lines while a second goroutine writes the
// full batches (on a cold ingest each takes about half the time) and
// returns the last, partial batch and the first write error. One full batch
// waits while another is written and a third filled (~3 MB each; a second
// waiting one bought no speed); written batches come back through free
// (fresh ones meant page faults and GC). The writer starts with the first
// full batch: a hook's few new lines make none.
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
// changed: a session whose last hook never fired (Codex on SIGTERM), whose
// agent flushed after its hooks (Copilot CLI -p), a rebuilt ledger's. skip
// names paths just read; the catchUpWindow newest get a stat each and are
// re-read until o.Deadline.
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

// catchUpParser is the parser of a tracked file that changed size and that
// its agent's store policy allows reading (nil: skip it).
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

// RecoveryNote says, for the log, that the ledger was found corrupt and
// rebuilt ("" when not).
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

// damaged reports whether an ingest failed on a damaged ledger file (not a
// transcript or an agent's store).
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

// upsertSession creates a session or refreshes its last_seen and transcript,
// returning its id, next_seq and keys_through (one statement to parse where
// an upsert and a lookup were two).
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

// Touch records that a session was seen (without rows) and returns its id.
func (l *Ledger) Touch(ref SessionRef, now time.Time) (int64, error) {
	tx, err := l.db.Begin()
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	id, err := ensureSession(tx, ref, now)
	if err != nil {
		return 0, err
	}
	return id, tx.Commit()
}

// Batch is one transcript's new rows and where reading stopped (Cursor,
// saved in the same transaction).
type Batch struct {
	Session   SessionRef
	Rows      []adapters.Row
	Cursor    *adapters.Cursor
	Sidechain bool
	prep      *preparedRows // Rows already prepared (prepareRows)
	deferKeys bool          // keys stay pending (keys.go): a long read's batches but its last
}

// Write stores a batch in one transaction: the session, its rows (by key:
// re-reading adds nothing, a later copy replaces the earlier one) and the
// cursor. It returns how many rows were new.
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

// withRawTx runs fn in an immediate write transaction on the driver's
// connection, committing when fn returns nil.
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
// statement where a lookup and an upsert were two; one naming the session id
// (SQLite then rewrites its cursors_session entry: a page) only when the
// first changed nothing (another session's file, nothing to store, an error).
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

// saveCounters stores next_seq, keys_through and p's last activity and
// tokens in one statement; without rows keys_through, if it changed.
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
// much as SQLite's insert. A batch under oneFormRows (a hook's) binds them
// all in one statement: a statement per form cost a prepare each (~30 µs,
// 4–6 of them a Stop), more than the binds.
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
// role and kind as literals (a bound text costs a copy, a lock and a cgo
// call; the session id is a literal too).
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

// rowWriter stores a batch's rows: new keys inserted at next, known ones
// updated in place.
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

// update replaces the row at seq (stored as old) by a later copy whose
// text, kind or exit code changed.
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
// changes the text, kind or exit code replaces the earlier in its place):
// Claude Code repeats a message's usage on each of its lines, and each
// repeat cost a conflicting insert and an update.
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

// keyChunk is how many unindexed rows one catchUpKeys transaction indexes:
// ~0.2 s (2.5 µs a row from the page cache). A variable for tests.
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
// nor this process holds (schema 11, a crashed read) in transactions of
// keyChunk rows until fewer are left (the write indexes those): millions of
// rows cost a few hooks their update instead of failing each past the deadline.
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
