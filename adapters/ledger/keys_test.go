package ledger

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
)

var keysNow = time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)

func keyRows(from, n int, text string) []adapters.Row {
	var rows []adapters.Row
	for i := from; i < from+n; i++ {
		rows = append(rows, adapters.Row{Key: fmt.Sprintf("k-%d", i), Role: "user", Kind: adapters.KindPrompt, Text: fmt.Sprintf("%s %d", text, i)})
	}
	return rows
}

var keysRef = SessionRef{Tool: "claude", NativeID: "s", Project: "/p"}

// keysCheck asserts the session's rows are exactly the keys want (each
// once), that row_keys indexes every row up to keys_through, and returns
// the rows' texts by key.
func keysCheck(t *testing.T, l *Ledger, want int) map[string]string {
	t.Helper()
	var rows, distinct, keyed, through, next int64
	l.db.QueryRow(`SELECT COUNT(*), COUNT(DISTINCT key) FROM rows`).Scan(&rows, &distinct)
	l.db.QueryRow(`SELECT keys_through, next_seq FROM sessions WHERE native_id = 's'`).Scan(&through, &next)
	l.db.QueryRow(`SELECT COUNT(*) FROM rows r WHERE EXISTS (SELECT 1 FROM row_keys k WHERE k.session_id = r.session_id AND k.seq = r.seq)
		OR EXISTS (SELECT 1 FROM keys_recent k WHERE k.session_id = r.session_id AND k.seq = r.seq)`).Scan(&keyed)
	if rows != int64(want) || distinct != rows {
		t.Fatalf("%d rows, %d distinct keys; want %d each", rows, distinct, want)
	}
	if through != next || keyed != rows {
		t.Fatalf("keys_through %d, next_seq %d, %d of %d rows keyed: want every row keyed", through, next, keyed, rows)
	}
	texts := map[string]string{}
	rs, _ := l.db.Query(`SELECT key, text FROM rows`)
	for rs.Next() {
		var k, v string
		rs.Scan(&k, &v)
		texts[k] = v
	}
	rs.Close()
	return texts
}

// TestKeysDeferredBatchesFindRepeats: a long read's batches leave their
// keys pending, and a row repeated batches later still replaces the
// first copy instead of adding a second.
func TestKeysDeferredBatchesFindRepeats(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Write(Batch{Session: keysRef, Rows: keyRows(0, 100, "first"), deferKeys: true}, keysNow); err != nil {
		t.Fatal(err)
	}
	var pending int64
	l.db.QueryRow(`SELECT COUNT(*) FROM row_keys`).Scan(&pending)
	if pending != 0 {
		t.Fatalf("a deferred batch wrote %d keys", pending)
	}
	n, err := l.Write(Batch{Session: keysRef, Rows: append(keyRows(50, 10, "again"), keyRows(100, 10, "new")...), deferKeys: true}, keysNow)
	if err != nil || n != 10 {
		t.Fatalf("second batch added %d (%v), want 10", n, err)
	}
	if _, err := l.Write(Batch{Session: keysRef, Rows: keyRows(0, 1, "last")}, keysNow); err != nil {
		t.Fatal(err)
	}
	texts := keysCheck(t, l, 110)
	if texts["k-55"] != "again 55" || texts["k-0"] != "last 0" || texts["k-1"] != "first 1" {
		t.Fatalf("later copies did not replace earlier ones: %q %q %q", texts["k-55"], texts["k-0"], texts["k-1"])
	}
	// After the flush, repeats are found in row_keys.
	if n, err := l.Write(Batch{Session: keysRef, Rows: keyRows(0, 110, "x")}, keysNow); err != nil || n != 0 {
		t.Fatalf("re-reading everything added %d (%v)", n, err)
	}
	keysCheck(t, l, 110)
}

// TestKeysAnotherWriterIndexesPending: a process that died with pending
// keys (or one still reading) leaves rows the next writer must index
// before it looks for repeats; nothing is stored twice.
func TestKeysAnotherWriterIndexesPending(t *testing.T) {
	dir := t.TempDir()
	a, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Write(Batch{Session: keysRef, Rows: keyRows(0, 100, "a"), deferKeys: true}, keysNow); err != nil {
		t.Fatal(err)
	}
	// A second process (its own key state) re-reads the same lines and more.
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	n, err := b.Write(Batch{Session: keysRef, Rows: keyRows(0, 120, "b"), deferKeys: true}, keysNow)
	if err != nil || n != 20 {
		t.Fatalf("the second writer added %d (%v), want 20", n, err)
	}
	// The first one goes on with its read: its pending map is stale now.
	n, err = a.Write(Batch{Session: keysRef, Rows: keyRows(110, 20, "a")}, keysNow)
	if err != nil || n != 10 {
		t.Fatalf("the first writer added %d (%v), want 10", n, err)
	}
	keysCheck(t, a, 130)
	// The second one's last batch has no rows of its own: a cursor-only
	// write still leaves every key indexed.
	if _, err := b.Write(Batch{Session: keysRef, Cursor: &adapters.Cursor{Path: "/t"}}, keysNow); err != nil {
		t.Fatal(err)
	}
	keysCheck(t, b, 130)
}

// TestKeysCursorOnlyLastBatchFlushes: a read whose last batch holds no
// rows (the lines ended exactly at a batch boundary) still indexes them.
func TestKeysCursorOnlyLastBatchFlushes(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Write(Batch{Session: keysRef, Rows: keyRows(0, 50, "x"), deferKeys: true}, keysNow); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Write(Batch{Session: keysRef, Cursor: &adapters.Cursor{Path: "/t", Offset: 9}}, keysNow); err != nil {
		t.Fatal(err)
	}
	keysCheck(t, l, 50)
}

// TestKeysHashCollisionIsNotARepeat: a key whose hash matches another
// row's is a new row; the stored key decides, never the hash alone — in
// row_keys, in keys_recent and in a read's pending keys.
func TestKeysHashCollisionIsNotARepeat(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	prompt := func(k string) []adapters.Row {
		return []adapters.Row{{Key: k, Role: "user", Kind: adapters.KindPrompt, Text: k}}
	}
	// row_keys: a long read's keys.
	if _, err := l.Write(Batch{Session: keysRef, Rows: keyRows(0, 3, "x"), deferKeys: true}, keysNow); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Write(Batch{Session: keysRef, Cursor: &adapters.Cursor{Path: "/t"}}, keysNow); err != nil {
		t.Fatal(err)
	}
	if _, err := l.db.Exec(`UPDATE row_keys SET khash = ? WHERE seq = 2`, keyHash("other")); err != nil {
		t.Fatal(err)
	}
	// keys_recent: a hook's.
	if _, err := l.Write(Batch{Session: keysRef, Rows: prompt("r1")}, keysNow); err != nil {
		t.Fatal(err)
	}
	if _, err := l.db.Exec(`UPDATE keys_recent SET khash = ? WHERE seq = 4`, keyHash("r2")); err != nil {
		t.Fatal(err)
	}
	// A new process sees the forged hashes.
	m, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, k := range []string{"other", "r2"} {
		if n, err := m.Write(Batch{Session: keysRef, Rows: prompt(k)}, keysNow); err != nil || n != 1 {
			t.Fatalf("%s, colliding with a stored key, added %d (%v), want 1", k, n, err)
		}
	}
	var text string
	m.db.QueryRow(`SELECT text FROM rows WHERE key = 'k-1'`).Scan(&text)
	if text != "x 1" {
		t.Fatalf("a colliding key overwrote another row: %q", text)
	}
	// pending: two keys of one hash in a read, then the second repeated.
	if _, err := m.Write(Batch{Session: keysRef, Rows: prompt("p1"), deferKeys: true}, keysNow); err != nil {
		t.Fatal(err)
	}
	st := m.keys.get(1)
	var p1 seqIndex
	for _, seq := range st.pending.drain() {
		p1.add(keyHash("p2"), seq) // p1's row under p2's hash
	}
	st.pending = p1
	for i := 0; i < 2; i++ {
		n, err := m.Write(Batch{Session: keysRef, Rows: prompt("p2"), deferKeys: true}, keysNow)
		if err != nil || n != 1-i {
			t.Fatalf("p2, write %d: added %d (%v), want %d", i+1, n, err, 1-i)
		}
	}
	if _, err := m.Write(Batch{Session: keysRef, Cursor: &adapters.Cursor{Path: "/t"}}, keysNow); err != nil {
		t.Fatal(err)
	}
	keysCheck(t, m, 8)
}

// TestKeysRecentMovesToRowKeys: hooks append their keys to keys_recent;
// once it holds keyRecentMax they move into row_keys, and repeats are
// found wherever a key is, by this process and by a new one.
func TestKeysRecentMovesToRowKeys(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	per := 100
	for i := 0; i*per < keyRecentMax+per*3; i++ {
		if n, err := l.Write(Batch{Session: keysRef, Rows: keyRows(i*per, per, "x")}, keysNow); err != nil || n != per {
			t.Fatalf("hook %d added %d (%v)", i, n, err)
		}
	}
	total := (keyRecentMax/per + 3) * per
	if keyRecentMax%per != 0 {
		total += per
	}
	var recent, indexed int
	l.db.QueryRow(`SELECT COUNT(*) FROM keys_recent`).Scan(&recent)
	l.db.QueryRow(`SELECT COUNT(*) FROM row_keys`).Scan(&indexed)
	if recent >= keyRecentMax || indexed < keyRecentMax || recent+indexed != total {
		t.Fatalf("keys_recent %d, row_keys %d, rows %d", recent, indexed, total)
	}
	keysCheck(t, l, total)
	m, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	base := total
	for _, db := range []*Ledger{l, m} {
		// One repeat from row_keys, one from keys_recent, one new.
		rows := append(keyRows(5, 1, "again"), keyRows(base-5, 1, "again")...)
		rows = append(rows, keyRows(total, 1, "new")...)
		if n, err := db.Write(Batch{Session: keysRef, Rows: rows}, keysNow); err != nil || n != 1 {
			t.Fatalf("added %d (%v), want 1", n, err)
		}
		total++
	}
	texts := keysCheck(t, m, total)
	if texts["k-5"] != "again 5" || texts[fmt.Sprintf("k-%d", base-5)] != fmt.Sprintf("again %d", base-5) {
		t.Fatalf("repeats did not replace: %q %q", texts["k-5"], texts[fmt.Sprintf("k-%d", base-5)])
	}
}

// schema11Ledger makes a ledger at schema 11 (row keys in a unique index on
// the rows) whose session 1 holds n rows, keys k-0 … k-(n-1), and returns
// its directory.
func schema11Ledger(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	db, err := sql.Open(ledgerDriver(), FileURI(filepath.Join(dir, FileName), ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i, m := range migrations[:11] {
		if _, err := db.Exec(m); err != nil {
			t.Fatalf("migration %d: %v", i+1, err)
		}
	}
	db.Exec(`PRAGMA user_version = 11`)
	db.Exec(`INSERT INTO sessions (id, tool, native_id, project, first_seen, last_seen, next_seq) VALUES (1, 'claude', 's', '/p', 0, 0, ?)`, n+1)
	for i := 0; i < n; i++ {
		db.Exec(`INSERT INTO rows (session_id, seq, key, ts, role, kind, text) VALUES (1, ?, ?, 0, 'user', 'prompt', ?)`, i+1, fmt.Sprintf("k-%d", i), fmt.Sprintf("old %d", i))
	}
	return dir
}

// TestKeysMigratedLedgerIndexesLazily: rows written before row_keys
// existed (schema 11, a unique index on the key) are indexed when their
// session is next written, and re-reading them adds nothing.
func TestKeysMigratedLedgerIndexesLazily(t *testing.T) {
	l, err := Open(schema11Ledger(t, 40))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var idx int
	l.db.QueryRow(`SELECT COUNT(*) FROM sqlite_schema WHERE name = 'rows_key'`).Scan(&idx)
	if idx != 0 {
		t.Fatal("the unique key index is still there")
	}
	n, err := l.Write(Batch{Session: keysRef, Rows: keyRows(30, 20, "new")}, keysNow)
	if err != nil || n != 10 {
		t.Fatalf("added %d (%v), want 10", n, err)
	}
	keysCheck(t, l, 50)
}

// TestKeysCatchUpInChunks: a migrated session with more unindexed rows
// than one step takes is indexed in steps that each keep their progress;
// a hook whose deadline passes first gets an error IsBusy recognises and
// loses nothing.
func TestKeysCatchUpInChunks(t *testing.T) {
	defer func(n int64) { keyChunk = n }(keyChunk)
	keyChunk = 64
	l, err := Open(schema11Ledger(t, 300))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.SetDeadline(time.Now().Add(-time.Second))
	if _, err := l.Write(Batch{Session: keysRef, Rows: keyRows(290, 20, "new")}, keysNow); !IsBusy(err) {
		t.Fatalf("past the deadline: %v, want an error IsBusy recognises", err)
	}
	l.SetDeadline(time.Time{})
	if err := l.catchUpKeys(keysRef); err != nil {
		t.Fatal(err)
	}
	var through int64
	l.db.QueryRow(`SELECT keys_through FROM sessions WHERE id = 1`).Scan(&through)
	if through != 257 { // four steps of 64; the last 44 are left to the write
		t.Fatalf("keys_through %d after the steps, want 257", through)
	}
	n, err := l.Write(Batch{Session: keysRef, Rows: keyRows(290, 20, "new")}, keysNow)
	if err != nil || n != 10 {
		t.Fatalf("added %d (%v), want 10", n, err)
	}
	keysCheck(t, l, 310)
}

// TestKeysGCRemovesEntries: gc takes a session's keys with its rows.
func TestKeysGCRemovesEntries(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Write(Batch{Session: keysRef, Rows: keyRows(0, 10, "x")}, keysNow); err != nil {
		t.Fatal(err)
	}
	if _, err := l.pruneSession(1, keysNow.Add(time.Hour).UnixMilli()); err != nil {
		t.Fatal(err)
	}
	var n int
	l.db.QueryRow(`SELECT (SELECT COUNT(*) FROM row_keys) + (SELECT COUNT(*) FROM keys_recent)`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d key entries left after gc", n)
	}
	// The session's transcript read again: its rows come back once.
	if n, err := l.Write(Batch{Session: keysRef, Rows: keyRows(0, 10, "x")}, keysNow); err != nil || n != 10 {
		t.Fatalf("added %d (%v) after gc, want 10", n, err)
	}
	keysCheck(t, l, 10)
}

// TestSeqIndex: the pending-key table finds every seq added under a hash,
// shared hashes included, across growth, and lists each entry once.
func TestSeqIndex(t *testing.T) {
	var x seqIndex
	want := map[int64][]int64{}
	for i := int64(1); i <= 50_000; i++ {
		h := keyHash(fmt.Sprint(i)) >> (i % 3 * 20) // some hashes close together
		if i%97 == 0 {
			h = 0 // the zero hash is an ordinary key
		}
		if i%1000 == 0 {
			h = want0(want) // a hash shared with an earlier row
		}
		x.add(h, i)
		want[h] = append(want[h], i)
	}
	n := 0
	for h, seqs := range want {
		got := x.seqsOf(nil, h)
		if fmt.Sprint(got) != fmt.Sprint(seqs) {
			t.Fatalf("hash %d: seqs %v, want %v", h, got, seqs)
		}
		n += len(seqs)
	}
	if got := x.seqsOf(nil, keyHash("absent")); len(got) != 0 {
		t.Fatalf("an absent hash found %v", got)
	}
	if x.n != n {
		t.Fatalf("n %d, want %d", x.n, n)
	}
	// drain lists each entry once, in key order (hash, then seq).
	var got []keyEntry
	for h, seq := range x.drain() {
		got = append(got, keyEntry{h, seq})
	}
	var all []keyEntry
	for h, seqs := range want {
		for _, seq := range seqs {
			all = append(all, keyEntry{h, seq})
		}
	}
	slices.SortFunc(all, compareEntries)
	if fmt.Sprint(got) != fmt.Sprint(all) {
		t.Fatalf("drain listed %d entries, want %d in key order", len(got), len(all))
	}
	if x.n != 0 || len(x.seqsOf(nil, all[0].h)) != 0 {
		t.Fatal("the index is not empty after drain")
	}
}

// TestSeqIndexCapped: past keyFlushRows the table stays at keyMaxSlots
// (the overflow of the batch that crosses it goes to the map) and every
// entry is still found and drained once, in key order. A table doubled
// there held 36 MB at once.
func TestSeqIndexCapped(t *testing.T) {
	var x seqIndex
	n := int64(keyFlushRows + 5000)
	for i := int64(1); i <= n; i++ {
		x.add(keyHash(fmt.Sprint(i)), i)
	}
	if len(x.slots) != keyMaxSlots || len(x.extra) < 5000 {
		t.Fatalf("%d slots and %d hashes in the map, want %d and at least 5000", len(x.slots), len(x.extra), keyMaxSlots)
	}
	for _, i := range []int64{1, keyFlushRows, keyFlushRows + 1, n} {
		if got := x.seqsOf(nil, keyHash(fmt.Sprint(i))); len(got) != 1 || got[0] != i {
			t.Fatalf("seq %d found as %v", i, got)
		}
	}
	var last keyEntry
	count := int64(0)
	for h, seq := range x.drain() {
		e := keyEntry{h, seq}
		if count > 0 && compareEntries(last, e) >= 0 {
			t.Fatalf("entry %d out of order", count)
		}
		last = e
		count++
	}
	if count != n {
		t.Fatalf("drained %d entries, want %d", count, n)
	}
}

func want0(m map[int64][]int64) int64 {
	for h := range m {
		return h
	}
	return 7
}

// TestRepeatAndCursorWrites: a repeat that changes nothing leaves its row
// as it was (no UPDATE), one whose text changed replaces it in place; the
// cursor advances without naming its session, moves to another session
// when the file does (the second, whole statement), and never back.
func TestRepeatAndCursorWrites(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	now := time.Now()
	a, b := SessionRef{Tool: "claude", NativeID: "a", Project: "/p"}, SessionRef{Tool: "claude", NativeID: "b", Project: "/p"}
	write := func(s SessionRef, rows []adapters.Row, off int64) int {
		t.Helper()
		n, err := l.Write(Batch{Session: s, Rows: rows, Cursor: &adapters.Cursor{Path: "/t/x.jsonl", Offset: off, Dev: 1, Ino: 2, Head: "h"}}, now)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	cursor := func() (sid, off int64) {
		t.Helper()
		if err := l.db.QueryRow(`SELECT session_id, offset FROM cursors WHERE path = '/t/x.jsonl'`).Scan(&sid, &off); err != nil {
			t.Fatal(err)
		}
		return sid, off
	}
	rows := keyRows(0, 3, "first")
	if n := write(a, rows, 100); n != 3 {
		t.Fatalf("added %d, want 3", n)
	}
	sa, off := cursor()
	if n := write(a, keyRows(0, 3, "first"), 200); n != 0 {
		t.Fatalf("a repeat added %d rows", n)
	}
	if s, o := cursor(); s != sa || o != 200 {
		t.Fatalf("cursor %d@%d, want %d@200", s, o, sa)
	}
	write(a, keyRows(1, 1, "changed"), 150) // an earlier offset: the cursor stays
	var text string
	if err := l.db.QueryRow(`SELECT text FROM rows WHERE session_id = ? AND key = ?`, sa, rows[1].Key).Scan(&text); err != nil || text != "changed 1" {
		t.Fatalf("changed repeat: %q %v", text, err)
	}
	if _, o := cursor(); o != 200 {
		t.Fatalf("cursor moved back to %d (was %d)", o, off)
	}
	write(b, nil, 300)
	if s, o := cursor(); s == sa || o != 300 {
		t.Fatalf("cursor %d@%d after the file moved to another session", s, o)
	}
}
