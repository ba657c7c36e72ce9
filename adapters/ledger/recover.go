package ledger

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Recovery: a damaged ledger is moved aside (with its -wal and -shm) and a
// new one created. Its transcripts are registered again at offset 0 for the
// catch-up; what no transcript gives back (handoff log, receipts, decisions,
// pinned task, published digests) is copied, best effort, keyed to the new
// sessions by agent, native id and project. Damage shows at Open ("not a
// database") or when a statement reads a damaged page ("malformed": Reopen).

// salvageTable is a table recovery copies: cols as they are and, with
// session, the new id of its rows' session (0 when lost; dropLost: dropped).
type salvageTable struct {
	name, cols        string
	session, dropLost bool
}

// salvageTables are the tables recovery reads, in freshSchema's order after sessions.
var salvageTables = []salvageTable{
	{name: "cursors", cols: "path, sidechain, updated", session: true, dropLost: true}, // at offset 0: restore
	{name: "handoff_log", cols: "id, project, tool, native_id, head, branch, hash, header, goal, next, files, written, updated, ended, ended_at", session: true},
	{name: "decisions", cols: "project, text, why, source, at, dropped"},
	{name: "pinned_task", cols: "project, text, at"},
	{name: "handoffs", cols: "project, header, tool, written", session: true},
	{name: "deliveries", cols: "project, header, tool, via, at", session: true, dropLost: true},
	{name: "published", cols: "project, hash, written"},
}

const (
	salvageTimeout = 300 * time.Millisecond // reading a damaged file: best effort, never a hang
	maxSalvageRows = 20000                  // per table: a damaged page can make a b-tree loop
	salvageMax     = 64 << 20               // the largest damaged file (or WAL) repaired on a copy
)

// salvageSession is a salvaged row's session (no Tool: its row was unreadable).
type salvageSession struct {
	Tool, NativeID, Project, Transcript string
	FirstSeen, LastSeen                 int64
}

// Salvaged is a row recovery read, with its session.
type Salvaged struct {
	vals []any
	sess salvageSession
}

// salvaged is what recovery read from a damaged ledger. answered marks the
// tables a query read (maybe partly); the others are tried the next way.
type salvaged struct {
	rows     map[string][]Salvaged
	answered map[string]bool
}

// Salvage reads the cursors and their sessions from a damaged ledger file.
func Salvage(path string) []Salvaged { return salvageAll(path).rows["cursors"] }

// salvageAll reads the salvageTables, one way of opening the file after another.
func salvageAll(path string) *salvaged {
	s := &salvaged{rows: map[string][]Salvaged{}, answered: map[string]bool{}}
	s.read(path, "mode=ro")
	s.read(path, "mode=ro&immutable=1")
	if !s.done() {
		salvageCopies(path, s)
	}
	return s
}

func (s *salvaged) done() bool {
	return !slices.ContainsFunc(salvageTables, func(t salvageTable) bool { return !s.answered[t.name] })
}

// read queries the tables not answered yet, opening path with query, within salvageTimeout.
func (s *salvaged) read(path, query string) {
	if s.done() {
		return
	}
	db, err := sql.Open("sqlite3", FileURI(path, query+"&_busy_timeout=100"))
	if err != nil {
		return
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), salvageTimeout)
	defer cancel()
	for _, t := range salvageTables {
		if !s.answered[t.name] {
			s.answered[t.name] = s.readTable(ctx, db, t)
		}
	}
}

// readTable reads up to maxSalvageRows of t's rows, with their sessions,
// and reports whether its query answered.
func (s *salvaged) readTable(ctx context.Context, db *sql.DB, t salvageTable) bool {
	sess, from := `'', '', '', '', 0, 0`, ` FROM `+t.name+` x`
	if t.session {
		sess = `IFNULL(s.tool, ''), IFNULL(s.native_id, ''), IFNULL(s.project, ''), IFNULL(s.transcript, ''), IFNULL(s.first_seen, 0), IFNULL(s.last_seen, 0)`
		from += ` LEFT JOIN sessions s ON s.id = x.session_id`
	}
	rows, err := db.QueryContext(ctx, `SELECT `+sess+`, x.`+strings.ReplaceAll(t.cols, ", ", ", x.")+from)
	if err != nil {
		// A ledger from before a table existed has none to give.
		return strings.Contains(err.Error(), "no such table") || strings.Contains(err.Error(), "no such column")
	}
	defer rows.Close()
	n := 0
	for ; n < maxSalvageRows && rows.Next(); n++ {
		row := Salvaged{vals: make([]any, strings.Count(t.cols, ",")+1)}
		dest := []any{&row.sess.Tool, &row.sess.NativeID, &row.sess.Project, &row.sess.Transcript, &row.sess.FirstSeen, &row.sess.LastSeen}
		for i := range row.vals {
			dest = append(dest, &row.vals[i])
		}
		if rows.Scan(dest...) != nil {
			break
		}
		s.rows[t.name] = append(s.rows[t.name], row)
	}
	// Rows before a damaged page count; an error before any row (SQLite
	// reports damage as it steps) leaves the table to the next way.
	return n > 0 || rows.Err() == nil
}

// salvageCopies reads the file from repaired copies: cut short, padded to
// the size its header says; its header destroyed, with a standard one,
// trying the usual page sizes (the WAL's first).
func salvageCopies(path string, s *salvaged) {
	data, wal := readSmall(path, 100), readSmall(path+"-wal", 32)
	if p := padded(data); p != nil {
		s.readCopy(path+".salvage", p, wal)
	}
	sizes := []int{4096, 1024, 8192, 16384, 32768, 65536}
	if len(wal) >= 32 {
		if ps := int(binary.BigEndian.Uint32(wal[8:12])); ps >= 512 && ps <= 65536 && ps&(ps-1) == 0 {
			sizes = append([]int{ps}, sizes...)
		}
	}
	for _, ps := range sizes {
		if ps > len(data) || s.done() { // also when data is nil
			break
		}
		copy(data, sqliteHeader(ps))
		s.readCopy(path+".salvage", data, wal)
	}
}

// padded is a copy of data, a database file cut short, padded to the size its header
// says (SQLite refuses it even with the front pages all there); nil for any other data.
func padded(data []byte) []byte {
	if len(data) < 100 || string(data[:16]) != "SQLite format 3\x00" {
		return nil
	}
	ps := int(binary.BigEndian.Uint16(data[16:18]))
	if ps == 1 {
		ps = 65536
	}
	if pages := int(binary.BigEndian.Uint32(data[28:32])); ps >= 512 && pages > 0 && int64(pages)*int64(ps) <= salvageMax && pages*ps > len(data) {
		return append(data[:len(data):len(data)], make([]byte, pages*ps-len(data))...)
	}
	return nil
}

// readSmall returns the regular file at path when it holds atLeast to
// salvageMax bytes (else nil). The newest rows may be only in the -wal (Leave).
func readSmall(path string, atLeast int64) []byte {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < atLeast || fi.Size() > salvageMax {
		return nil
	}
	b, _ := os.ReadFile(path)
	return b
}

// writeNew writes data to a file it creates at path after removing what was
// there: never through a symlink or into a FIFO (O_EXCL fails on any name).
func writeNew(path string, data []byte) error {
	os.Remove(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return cmp.Or(err, f.Close())
}

// readCopy reads the tables not read yet from data (a file's first 512
// bytes at least) written to tmp: with the WAL beside it (the header
// switched to WAL mode), then alone; then removes it.
func (s *salvaged) readCopy(tmp string, data, wal []byte) {
	defer func() {
		for _, sfx := range []string{"", "-wal", "-shm"} {
			os.Remove(tmp + sfx)
		}
	}()
	if len(wal) > 0 {
		data[18], data[19] = 2, 2
		if writeNew(tmp, data) == nil && writeNew(tmp+"-wal", wal) == nil {
			s.read(tmp, "mode=ro")
		}
	}
	data[18], data[19] = 1, 1 // rollback mode: the -wal and -shm left are not read
	if !s.done() && writeNew(tmp, data) == nil {
		s.read(tmp, "mode=ro&immutable=1")
	}
}

// sqliteHeader is a minimal database header for page size ps (size: the file's length).
func sqliteHeader(ps int) []byte {
	h := make([]byte, 100)
	copy(h, "SQLite format 3\x00")
	// The page size; 65536 is written as 1.
	binary.BigEndian.PutUint16(h[16:], uint16(ps)|uint16(ps>>16))
	h[18], h[19] = 1, 1                   // rollback journal: no WAL index needed
	h[21], h[22], h[23] = 64, 32, 32      // payload fractions (fixed by the format)
	binary.BigEndian.PutUint32(h[24:], 1) // change counter
	binary.BigEndian.PutUint32(h[40:], 1) // schema cookie
	binary.BigEndian.PutUint32(h[44:], 4) // schema format
	binary.BigEndian.PutUint32(h[56:], 1) // UTF-8
	binary.BigEndian.PutUint32(h[92:], 1) // version-valid-for
	binary.BigEndian.PutUint32(h[96:], 3045000)
	return h
}

// restore writes the salvaged tables into the new ledger in one transaction
// and returns how many rows it wrote; rows it holds win. Sessions keep the
// times they were seen (a receipt's session idle for a day must not count
// as working on the task now: AlreadyResumed).
func (l *Ledger) restore(s *salvaged, tables []salvageTable, now time.Time) (n int, err error) {
	// With part of the lifecycle unreadable the current handoffs are left
	// out: HandoffKnown is false, publish restores them from verified files.
	if slices.ContainsFunc([]string{"handoff_log", "deliveries", "decisions", "pinned_task"}, func(t string) bool { return !s.answered[t] }) {
		delete(s.rows, "handoffs")
	}
	ids := map[salvageSession]int64{}
	err = l.inTx(func(tx *sql.Tx) error {
		for _, t := range tables {
			for _, row := range s.rows[t.name] {
				added, err := t.restore(tx, ids, row, now)
				if err != nil {
					return err
				}
				if added {
					n++
				}
			}
		}
		return nil
	})
	if err != nil {
		n = 0 // rolled back
	}
	return n, err
}

// restore inserts row of t, reporting whether it was new: not when its
// session was lost (dropLost) or, for a cursor, its transcript is gone.
func (t salvageTable) restore(tx *sql.Tx, ids map[salvageSession]int64, row Salvaged, now time.Time) (bool, error) {
	if t.name == "cursors" {
		if fi, err := os.Stat(text(row.vals[0])); err != nil || !fi.Mode().IsRegular() {
			return false, nil
		}
	}
	args := row.vals
	if t.session {
		sid, err := restoreSession(tx, ids, row.sess, now)
		if err != nil || sid == 0 && t.dropLost {
			return false, err
		}
		args = append(args, sid)
	}
	return Changed(tx, t.insert(), args...)
}

// insert is the statement restore writes t's rows with; a cursor at offset
// 0: the catch-up reads its transcript again.
func (t salvageTable) insert() string {
	cols, marks := t.cols, strings.Repeat("?, ", strings.Count(t.cols, ",")+1)
	if t.session {
		cols, marks = cols+", session_id", marks+"?, "
	}
	if t.name == "cursors" {
		cols, marks = cols+", offset, dev, ino, head, head_len", marks+"0, 0, 0, '', 0, "
	}
	return `INSERT INTO ` + t.name + ` (` + cols + `) VALUES (` + strings.TrimSuffix(marks, ", ") + `) ON CONFLICT DO NOTHING`
}

// restoreSession is the new id of a salvaged session (0: lost), with its times seen.
func restoreSession(tx *sql.Tx, ids map[salvageSession]int64, ss salvageSession, now time.Time) (int64, error) {
	if ss.Tool == "" || ss.NativeID == "" {
		return 0, nil
	}
	if id, ok := ids[ss]; ok { // every row of a session joins the same values
		return id, nil
	}
	id, err := ensureSession(tx, SessionRef{Tool: ss.Tool, NativeID: ss.NativeID, Project: ss.Project, Transcript: ss.Transcript}, now)
	if err == nil && ss.LastSeen > 0 {
		_, err = tx.Exec(`UPDATE sessions SET last_seen = ?, first_seen = MIN(first_seen, ?) WHERE id = ?`, ss.LastSeen, max(ss.FirstSeen, 1), id)
	}
	ids[ss] = id
	return id, err
}

// recoverFile moves the damaged ledger at path aside, opens a new one and
// restores what it can; stillBad (under the lock) is false when another
// process recovered already.
func recoverFile(path string, deadline time.Time, stillBad func() bool) (*Ledger, error) {
	unlock, err := lockHome(filepath.Dir(path), deadline)
	if err != nil {
		return nil, fmt.Errorf("lock carryover home for ledger recovery: %w", err)
	}
	defer unlock()
	if !stillBad() {
		return open(path, deadline)
	}
	moved := fmt.Sprintf("%s.corrupt-%d", path, time.Now().UnixNano())
	if err := os.Rename(path, moved); err != nil {
		return nil, fmt.Errorf("ledger %s is damaged and could not be moved aside: %w (move it away by hand)", path, err)
	}
	for _, sfx := range []string{"-wal", "-shm"} {
		_ = os.Rename(path+sfx, moved+sfx)
	}
	l, err := open(path, deadline)
	if err != nil {
		return nil, err
	}
	l.Recovered, l.MovedTo = true, moved
	s := salvageAll(moved)
	l.Rebuilt, _ = l.restore(s, salvageTables[:1], time.Now())
	l.Restored, l.RestoreErr = l.restore(s, salvageTables[1:], time.Now())
	return l, nil
}

// Reopen closes l, whose statement reported damage (IsCorrupt), and returns
// the rebuilt ledger (Recovered), or the one another process rebuilt first.
func (l *Ledger) Reopen() (*Ledger, error) {
	openMu.Lock()
	defer openMu.Unlock()
	_ = l.db.Close()
	return recoverFile(l.Path, l.deadline, func() bool { return l.ino != 0 && inode(l.Path) == l.ino })
}

// lockHome takes the recovery lock, an exclusive transaction on a file in
// the carryover home, so concurrent hooks that all find the ledger damaged
// move it aside once, not each other's new ledger. It waits for another
// process's recovery as a statement waits for a lock (OpenBy's deadline,
// else busyTimeout). The file stays: deleting it while another process
// waits would let both in.
func lockHome(dir string, deadline time.Time) (unlock func(), err error) {
	db, err := sql.Open("sqlite3", FileURI(filepath.Join(dir, "recovery.lock"), "_txlock=exclusive&_busy_timeout="+strconv.FormatInt(busyMillis(deadline), 10)))
	if err != nil {
		return nil, err
	}
	tx, err := db.Begin()
	if err != nil {
		db.Close()
		return nil, err
	}
	return func() { tx.Rollback(); db.Close() }, nil
}
