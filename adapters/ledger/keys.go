package ledger

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"iter"
	"math"
	"slices"
	"strconv"
	"sync"
)

// Row keys (issue 17: linear cold ingest). A row is identified by its
// adapter's key (Claude's message uuid plus a block index, a Codex call id,
// ...). The keys are random: a unique index on them (schema 6–11) put every
// insert at a random place in a B-tree as large as the session (a cold 1 GB
// ingest, 353,000 rows, wrote 111,000 index pages against the 17,000 the
// rows need: 3.5 s against 1.9 s).
//
// Keys live in two compact tables of (session, 64-bit FNV-1a hash, seq),
// ~16 bytes an entry against 56:
//   - row_keys, by hash, written only in key order and in bulk;
//   - keys_recent, by seq: a hook's few new keys are appended there (one
//     page, where one random row_keys page a row was 27 of the 46 pages a
//     Stop wrote) and move into row_keys keyRecentMax at a time.
//
// A long read keeps its keys in memory (pending, a seqIndex) and writes
// them into row_keys, sorted, with its last batch. Invariant: every row of a
// session with seq < keys_through has its entry in one of the two tables;
// later rows are pending. The reading process finds repeats in memory; any
// other writer first indexes them from the rows table (flushFromRows), so a
// crashed or concurrent read never lets a row in twice. A hash match is
// always checked against the stored key. A session stored before schema 12
// starts all pending and is indexed in steps (catchUpKeys).

const (
	// keyFlushRows bounds the pending keys of a long read: past it they are
	// written with the current batch. 786,432 entries fill a seqIndex of
	// 2^20 slots (12 MB) to 3/4; a dense 1 GB transcript has ~750,000 rows,
	// written once at its end (every 131,072 cost 10 % of its speed; a Go
	// map of 524,288 took the process to 64.5 MB).
	keyFlushRows = 3 << 18
	// keyMaxSlots is the most slots a seqIndex grows to; the batch crossing
	// keyFlushRows puts its overflow in the map. 2^21 slots took a cold
	// 1.3 GB ingest to 123 MiB peak RSS (manual path) and 87 (hook's).
	keyMaxSlots = 1 << 20
	// keyRecentMax is the span of seqs keys_recent covers per session
	// before its keys move into row_keys: a lookup scans the session's
	// entries (4,096 are ~4 pages), a move touches up to a row_keys page per
	// key, once per ~100 hooks.
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

// keySlot is a hash in two halves and its row's seq (0: empty; no row has
// seq 0).
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
// index, compacted and sorted in place: a sorted copy held a second 12 MB
// at the end of every long read (a cold 1 GB ingest's heap peak: 21 MB).
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

// keyState is what a process knows of a session's keys: next_seq and
// keys_through as it left them (else another writer came in between) and a
// long read's pending keys.
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

// forget drops the state of a session whose transaction rolled back: the
// next one starts from what the ledger holds.
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

// openKeys prepares a transaction's key work on a session at next and
// through, first indexing pending rows another writer left (a crash, a
// concurrent read).
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

// prefetch looks up the batch's hashes in both key tables in one query, not
// one per row (a cgo call each: a hook's 50 new rows paid 50 to find
// nothing), keys_recent searched by SQLite (loading it into Go cost a fresh
// hook ~0.8 ms). The hashes go in as one JSON array: one bound value and a
// statement of fixed text (80 placeholders made SQLite parse and bind a
// long statement every hook). Its last row (seq 0, never a row's) is
// keys_recent's lowest seq, an index lookup (a COUNT scanned the entries:
// 150 µs at 3,000), which close needs.
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
	s, err := w.tx.prepare(`SELECT khash, seq FROM row_keys WHERE session_id = ?1 AND khash IN (SELECT value FROM json_each(?2))
		UNION ALL SELECT khash, seq FROM keys_recent WHERE session_id = ?1 AND khash IN (SELECT value FROM json_each(?2))
		UNION ALL SELECT COALESCE(MIN(seq), 0), 0 FROM keys_recent WHERE session_id = ?1`)
	if err != nil {
		return err
	}
	rows, err := w.tx.query(s, w.sid, string(append(b, ']')))
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

// storedRow is what a repeat's update compares with the later copy: the
// stored row's text, kind and exit code (nil: none).
type storedRow struct {
	text, kind string
	exit       any
}

// find returns the seq of the stored row with key (hash h), or 0, and that
// row as stored.
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
// gc removed it) and the row: a repeat that changes nothing (46 of a
// benchmark Stop's 82 rows) then costs no UPDATE.
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

// added records a new row's key: pending for a long read's batch
// (deferred), else for keys_recent, written by close in one statement (an
// insert each cost a hook ~3 µs a row).
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

// close ends the transaction's key work and returns the session's
// keys_through. A read's last batch (flush), or one past keyFlushRows,
// writes the pending keys into row_keys.
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

// writeRecent appends the transaction's new keys to keys_recent and moves
// them into row_keys once its seqs span keyRecentMax (at least as many as it
// holds), in key order, by SQLite: each row_keys page is written once.
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

// flushFromRows indexes at most n (all: -1) rows of session sid from seq
// from on and returns the last seq it indexed (from-1: none).
func flushFromRows(tx *rawTx, sid, from, n int64) (int64, error) {
	s, err := tx.prepare(`SELECT seq, key FROM rows WHERE session_id = ? AND seq >= ? ORDER BY seq LIMIT ` + strconv.FormatInt(n, 10)) // a literal: see RowsAfter
	if err != nil {
		return 0, err
	}
	rows, err := tx.query(s, sid, from)
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

// writeEntries inserts entries, in key order, into row_keys: consecutive
// inserts land on the same B-tree page, so each page is written once.
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
// ingest binds 15 values a row, and database/sql's per-argument conversion
// (reflection) cost more than SQLite's own work.
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

// queryRow runs a one-off query and scans its first row's integer columns
// into dest; sql.ErrNoRows when there is none.
func (t *rawTx) queryRow(q string, args []any, dest ...*int64) error {
	s, err := t.prepare(q)
	if err != nil {
		return err
	}
	rows, err := t.query(s, args...)
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
