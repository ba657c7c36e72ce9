package ledger

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strconv"
	"time"

	"github.com/carryover/carryover/adapters"
)

// upsertSession creates a session (tool, native id, project, transcript,
// first and last seen) or refreshes its last_seen and transcript.
const upsertSession = `INSERT INTO sessions (tool, native_id, project, transcript, first_seen, last_seen)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (tool, native_id, project) DO UPDATE SET
			last_seen = excluded.last_seen,
			transcript = CASE WHEN excluded.transcript != '' THEN excluded.transcript ELSE sessions.transcript END`

const sessionByRef = `SELECT id, next_seq, keys_through FROM sessions WHERE tool = ? AND native_id = ? AND project = ?`

// ensureSession upserts ref's session and returns its id.
func ensureSession(tx *sql.Tx, ref SessionRef, now time.Time) (id int64, err error) {
	if _, err = tx.Exec(upsertSession, ref.Tool, ref.NativeID, ref.Project, ref.Transcript, now.UnixMilli(), now.UnixMilli()); err == nil {
		err = tx.QueryRow(`SELECT id FROM sessions WHERE tool = ? AND native_id = ? AND project = ?`, ref.Tool, ref.NativeID, ref.Project).Scan(&id)
	}
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

// Batch is one transcript's worth of new rows and where reading stopped.
type Batch struct {
	Session   SessionRef
	Rows      []adapters.Row
	Cursor    *adapters.Cursor // saved in the same transaction as the rows
	Sidechain bool
	prep      *preparedRows // Rows already prepared (prepareRows)
	deferKeys bool          // keys stay pending (keys.go): a long read's batches but its last
}

// Write stores a batch in one transaction: the session, its rows (upserted
// by key: re-reading the same bytes adds nothing, a later copy of a row
// replaces the earlier one) and the cursor. It returns how many rows were new.
func (l *Ledger) Write(b Batch, now time.Time) (int, error) {
	added := 0
	var sid int64
	write := func(tx *rawTx) (err error) {
		added, sid, err = writeBatch(tx, &l.keys, b, now)
		return err
	}
	err := l.withRawTx(write)
	if errors.Is(err, errKeysToIndex) {
		// Rolled back: index the session's old rows in steps first.
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

// withRawTx runs fn in one immediate write transaction on the ledger's
// connection (raw.go), committing when fn returns nil.
func (l *Ledger) withRawTx(fn func(*rawTx) error) error {
	ctx := context.Background()
	c, err := l.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Raw(func(dc any) error {
		conn, ok := dc.(driver.ConnBeginTx)
		if !ok {
			return errors.New("ledger: driver cannot begin a transaction")
		}
		tx, err := conn.BeginTx(ctx, driver.TxOptions{})
		if err != nil {
			return err
		}
		t := &rawTx{conn: conn.(driver.Conn), tx: tx}
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
	ref := b.Session
	if err := tx.execOnce(upsertSession, ref.Tool, ref.NativeID, ref.Project, ref.Transcript, now.UnixMilli(), now.UnixMilli()); err != nil {
		return 0, 0, err
	}
	var sid, next, through int64
	if err := tx.queryRow(sessionByRef, []any{ref.Tool, ref.NativeID, ref.Project}, &sid, &next, &through); err != nil {
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

// saveCursor stores c unless the stored cursor of the same file is past
// it: a cursor never moves backwards on the same file (a slower concurrent
// snapshot may finish after a faster one).
func saveCursor(tx *rawTx, c *adapters.Cursor, sid int64, sidechain bool, now time.Time) error {
	var off, ino, dev int64
	var head string
	err := tx.queryRow(`SELECT offset, ino, dev, head FROM cursors WHERE path = ?`, []any{c.Path}, &off, &ino, &dev, &head)
	if err == nil && uint64(ino) == c.Ino && uint64(dev) == c.Dev && off > c.Offset && adapters.HeadPart(head) == adapters.HeadPart(c.Head) {
		return nil
	}
	err = tx.execOnce(`INSERT INTO cursors (path, session_id, sidechain, offset, dev, ino, head, head_len, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (path) DO UPDATE SET session_id = excluded.session_id, sidechain = excluded.sidechain, offset = excluded.offset,
			dev = excluded.dev, ino = excluded.ino, head = excluded.head, head_len = excluded.head_len, updated = excluded.updated`,
		c.Path, sid, sidechain, c.Offset, int64(c.Dev), int64(c.Ino), c.Head, int64(c.HeadLen), now.UnixMilli())
	return err
}

// saveCounters stores the session's next_seq, keys_through, and rows p's
// last activity and token counts, in one statement (each is parsed anew in
// a hook's process); without rows, keys_through when it changed.
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

// optCols are the row columns whose value is usually the column default
// (empty, NULL or 0). A row binds only those it sets: each bound value is a
// cgo call, and on a cold ingest binding cost as much as SQLite's insert.
var optCols = [...]string{"tool_name", "call_id", "file_path", "command", "exit_code", "sidechain", "tokens_used", "tokens_max"}

// preparedRows is a batch's rows collapsed and turned into statement
// arguments.
type preparedRows struct {
	rows  []adapters.Row
	ts    []int64
	forms []rowForm
	// args per row: key, seq (set at write time), ts, text, then the
	// optional columns its form sets.
	args            [][]driver.NamedValue
	lastTS          int64
	tokUsed, tokMax int64
}

// rowForm is the shape of a row's INSERT: the optional columns it binds,
// and its role and kind as literals (each bound text costs a copy, a lock
// and a cgo call; the session id is a literal too).
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
	slab := make([]driver.NamedValue, 0, len(p.rows)*8)
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
		if !literal(f.role) || !literal(f.kind) {
			f.role, f.kind = "", "" // bound instead
			add(r.Role)
			add(string(r.Kind))
		}
		opt := func(bit uint8, set bool, v any) {
			if set {
				f.mask |= bit
				add(v)
			}
		}
		opt(1<<0, r.ToolName != "", r.ToolName)
		opt(1<<1, r.CallID != "", r.CallID)
		opt(1<<2, r.FilePath != "", r.FilePath)
		opt(1<<3, r.Command != "", r.Command)
		opt(1<<4, r.ExitCode != nil, exitValue(r.ExitCode))
		opt(1<<5, r.Sidechain || sidechain, int64(1))
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
	cols := "session_id, key, seq, ts, text, role, kind"
	vals := strconv.FormatInt(sid, 10) + ", ?, ?, ?, ?, "
	if f.role == "" {
		vals += "?, ?"
	} else {
		vals += "'" + f.role + "', '" + f.kind + "'"
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

// rowWriter stores a batch's prepared rows of session sid: new keys are
// inserted at next, known ones updated in place.
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
		seq, err := w.kw.find(r.Key, hs[i])
		if err == nil && seq == 0 {
			err = w.insert(p, i, hs[i])
		} else if err == nil {
			err = w.update(p, i, seq)
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
	if err := w.kw.added(h, w.next, w.b.deferKeys); err != nil {
		return err
	}
	w.next++
	w.added++
	return nil
}

// update stores a later copy of the row at seq: it replaces the row's
// fields when its text, kind or exit code changed.
func (w *rowWriter) update(p *preparedRows, i int, seq int64) (err error) {
	if w.upd == nil {
		if w.upd, err = w.tx.prepare(`UPDATE rows SET ts = ?, role = ?, kind = ?, tool_name = ?, call_id = ?, file_path = ?, command = ?, exit_code = ?, text = ?, sidechain = ?, tokens_used = ?, tokens_max = ?
		WHERE session_id = ? AND seq = ? AND (text != ? OR kind != ? OR exit_code IS NOT ?)`); err != nil {
			return err
		}
	}
	r := p.rows[i]
	exit := exitValue(r.ExitCode)
	err = w.tx.exec(w.upd, p.ts[i], r.Role, string(r.Kind), r.ToolName, r.CallID, r.FilePath, r.Command, exit, r.Text, r.Sidechain || w.b.Sidechain, r.TokensUsed, r.TokensMax, w.sid, seq, r.Text, string(r.Kind), exit)
	return err
}

// collapse returns rows with one entry per key, as the upsert would leave
// them (a later copy that changes the text, kind or exit code replaces the
// earlier one in its place): Claude Code repeats a message's usage on each
// of its lines, and each repeat cost a conflicting insert and an update.
func collapse(rows []adapters.Row) []adapters.Row {
	seen := make(map[string]int, len(rows))
	var out []adapters.Row
	for i, r := range rows {
		j, dup := seen[r.Key]
		if !dup {
			// Until the first repeat, out is nil and positions are indexes.
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

// keyChunk is how many of a session's unindexed rows one transaction of
// catchUpKeys indexes: about 0.2 s (2.5 µs a row from the page cache). A
// variable for tests.
var keyChunk int64 = 1 << 16

var (
	// errKeysBehind is catchUpKeys stopped by the deadline: like a held
	// lock (IsBusy), the rows are read again at the next event.
	errKeysBehind = errors.New("ledger: still indexing the row keys of a session stored before schema 12; continues at the next event")
	// errKeysToIndex rolls back a write whose session has more unindexed
	// rows than one transaction indexes (catchUpKeys, then the write again).
	errKeysToIndex = errors.New("ledger: the session's rows need indexing first")
)

// catchUpKeys indexes the rows of ref's session that no key table holds
// and no read of this process holds in memory (a ledger from schema 11, a
// crashed read), in transactions of keyChunk rows, until fewer are left
// (the write indexes those): a session of millions of rows costs a few
// hook events their update instead of failing each past the deadline.
func (l *Ledger) catchUpKeys(ref SessionRef) error {
	for done := false; !done; {
		var sid int64
		err := l.withRawTx(func(tx *rawTx) error {
			var next, through int64
			if err := tx.queryRow(sessionByRef, []any{ref.Tool, ref.NativeID, ref.Project}, &sid, &next, &through); err != nil {
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
