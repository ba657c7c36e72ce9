package ledger

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/carryover/carryover/adapters"
)

// Recovery from a damaged ledger file. The ledger is a cache of what the
// agents' transcripts hold plus carryover's own bookkeeping, so a damaged
// file is not repaired in place: it is moved aside (kept for the user, with
// its -wal and -shm), a new ledger is created, and every transcript the old
// one tracked and that is still on disk is registered again with offset 0.
// The hook path's catch-up (CatchUp) then re-reads them over the next
// events; row keys make the re-read exact.
//
// Damage is noticed either when Open reads the header ("file is not a
// database") or later, when a statement touches a damaged page ("database
// disk image is malformed"); the hook path then calls Reopen.

// Salvaged is a transcript a damaged ledger tracked.
type Salvaged struct {
	Path       string
	Sidechain  bool
	Updated    int64
	Tool       string
	NativeID   string
	Project    string
	Transcript string
}

// salvageTimeout bounds reading a damaged file: best effort, never a hang.
const salvageTimeout = 300 * time.Millisecond

// Salvage reads the cursors table (with each cursor's session) from a
// damaged ledger file, read-only and best effort: whatever rows can be read
// before an error are returned.
func Salvage(path string) []Salvaged { return salvageAll(path).files }

// salvageAll reads the cursors and the lifecycle tables (see
// recover_lifecycle.go) from a damaged ledger file, trying one way of
// opening it after another while some table could not be read.
func salvageAll(path string) *salvaged {
	s := &salvaged{}
	for _, q := range []string{"mode=ro", "mode=ro&immutable=1"} {
		if s.read(path, q); s.done() {
			return s
		}
	}
	if salvageTruncated(path, s); s.done() {
		return s
	}
	salvageHeaderless(path, s)
	return s
}

// salvageTruncated handles a file cut short: SQLite refuses to open a file
// smaller than the page count in its header, even when the pages a query
// needs (the schema, sessions and cursors sit at the front) are all there.
// It reads a copy padded with empty pages to the size the header says.
func salvageTruncated(path string, s *salvaged) {
	data, err := os.ReadFile(path)
	if err != nil || len(data) < 100 || len(data) > salvageMax || string(data[:16]) != "SQLite format 3\x00" {
		return
	}
	ps := int(binary.BigEndian.Uint16(data[16:18]))
	if ps == 1 {
		ps = 65536
	}
	pages := int(binary.BigEndian.Uint32(data[28:32]))
	if ps < 512 || pages <= 0 || int64(pages)*int64(ps) > salvageMax || pages*ps <= len(data) {
		return
	}
	s.readCopy(path+".salvage", append(data, make([]byte, pages*ps-len(data))...), readWAL(path))
}

// salvageMax is the largest damaged file whose header salvageHeaderless
// rebuilds on a copy.
const salvageMax = 64 << 20

// salvageHeaderless handles a file whose 100-byte header is destroyed
// ("file is not a database") while its pages are intact: it reads a copy
// with a standard header put back, trying the usual page sizes.
func salvageHeaderless(path string, s *salvaged) {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() < 1024 || fi.Size() > salvageMax {
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	wal := readWAL(path)
	sizes := []int{4096, 1024, 8192, 16384, 32768, 65536}
	if len(wal) >= 32 { // the WAL's header names the page size: try it first
		if ps := int(binary.BigEndian.Uint32(wal[8:12])); ps >= 512 && ps <= 65536 && ps&(ps-1) == 0 {
			sizes = append([]int{ps}, sizes...)
		}
	}
	for _, ps := range sizes {
		if int64(ps) > fi.Size() {
			break
		}
		copy(data, sqliteHeader(ps))
		if s.readCopy(path+".salvage", data, wal); s.done() {
			return
		}
	}
}

// readWAL returns the damaged ledger's write-ahead log (nil when there is
// none or it is too large): the newest rows of a ledger the hooks left
// open (Leave skips the checkpoint) live only there until one runs.
func readWAL(path string) []byte {
	fi, err := os.Lstat(path + "-wal")
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < 32 || fi.Size() > salvageMax {
		return nil
	}
	b, err := os.ReadFile(path + "-wal")
	if err != nil {
		return nil
	}
	return b
}

// writeNew writes data to a file it creates at path, after removing what
// was there: never through a symlink or into a FIFO or another file left
// at that name (O_EXCL fails on any existing name, a symlink included).
func writeNew(path string, data []byte) error {
	os.Remove(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readCopy reads the tables not read yet from data written to tmp:
// first with the WAL beside it (the header switched to WAL mode), then
// the main file alone. Every file it made is removed.
func (s *salvaged) readCopy(tmp string, data, wal []byte) {
	defer func() {
		for _, sfx := range []string{"", "-wal", "-shm"} {
			os.Remove(tmp + sfx)
		}
	}()
	if len(wal) > 0 && len(data) >= 100 {
		data[18], data[19] = 2, 2
		if writeNew(tmp, data) == nil && writeNew(tmp+"-wal", wal) == nil {
			if s.read(tmp, "mode=ro"); s.done() {
				return
			}
		}
		os.Remove(tmp + "-wal")
		os.Remove(tmp + "-shm")
	}
	if len(data) >= 100 {
		data[18], data[19] = 1, 1
	}
	if writeNew(tmp, data) == nil {
		s.read(tmp, "mode=ro&immutable=1")
	}
}

// sqliteHeader is a minimal valid database header for page size ps, with
// the database size left to be taken from the file's length.
func sqliteHeader(ps int) []byte {
	h := make([]byte, 100)
	copy(h, "SQLite format 3\x00")
	if ps == 65536 {
		binary.BigEndian.PutUint16(h[16:], 1)
	} else {
		binary.BigEndian.PutUint16(h[16:], uint16(ps))
	}
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

// register re-creates the sessions and offset-0 cursors of files that are
// still on disk, and returns how many were registered.
func (l *Ledger) register(files []Salvaged, now time.Time) (int, error) {
	if len(files) == 0 {
		return 0, nil
	}
	tx, err := l.db.Begin()
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	n := 0
	for _, f := range files {
		if f.Path == "" || f.Tool == "" || f.NativeID == "" {
			continue
		}
		if fi, err := os.Stat(f.Path); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		sid, err := ensureSession(tx, SessionRef{Tool: f.Tool, NativeID: f.NativeID, Project: f.Project, Transcript: f.Transcript}, now)
		if err != nil {
			return 0, err
		}
		res, err := tx.Exec(`INSERT INTO cursors (path, session_id, sidechain, offset, dev, ino, head, head_len, updated)
			VALUES (?, ?, ?, 0, 0, 0, '', 0, ?) ON CONFLICT (path) DO NOTHING`, f.Path, sid, f.Sidechain, f.Updated)
		if err != nil {
			return 0, err
		}
		if k, _ := res.RowsAffected(); k == 1 {
			n++
		}
	}
	return n, tx.Commit()
}

func inode(path string) uint64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	_, ino := adapters.FileID(f)
	return ino
}

// recoverFile moves the damaged ledger at path aside, opens a new one and
// registers the old one's transcripts. stillBad is called under the lock:
// when it reports false another process has already recovered, and path is
// simply opened.
func recoverFile(path string, deadline time.Time, stillBad func() bool) (*Ledger, error) {
	unlock, err := lockDir(filepath.Dir(path))
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
	l.Rebuilt, _ = l.register(s.files, time.Now())
	l.Restored, l.RestoreErr = l.restore(s, time.Now())
	return l, nil
}

// Reopen is called when a statement on an open ledger reported damage
// (IsCorrupt): it closes l, moves the file aside, rebuilds and returns the
// new ledger (Recovered set). If another process got there first, it
// returns the ledger that process created.
func (l *Ledger) Reopen() (*Ledger, error) {
	openMu.Lock()
	defer openMu.Unlock()
	_ = l.db.Close()
	return recoverFile(l.Path, l.deadline, func() bool { return l.ino != 0 && inode(l.Path) == l.ino })
}
