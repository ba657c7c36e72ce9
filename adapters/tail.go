package adapters

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/carryover/carryover/publish/safefile"
)

// Cursor is how far a transcript file has been read, and which file it was.
type Cursor struct {
	Path     string
	Offset   int64
	Dev, Ino uint64
	// Head hashes the file's first bytes (up to headLen): a file replaced in
	// place (same inode) changes it. After an '@' it hashes the tailLen bytes
	// before Offset: a file rewritten in place past Offset with the same
	// first kilobyte changes that (without '@': the head alone is checked).
	Head    string
	HeadLen int64
}

const headLen, tailLen = 1024, 1024

// HeadPart is a Cursor.Head without the hash before the offset.
func HeadPart(h string) string {
	head, _, _ := strings.Cut(h, "@")
	return head
}

// FileID is an open file's device and inode (a replaced transcript's differ).
func FileID(f *os.File) (dev, ino uint64) { return safefile.FileID(f) }

// MaxLine is the longest line decoded; longer ones are skipped (never buffered whole).
const MaxLine = 64 << 20

var (
	ErrNotRegular   = errors.New("transcript is not a regular file") // a FIFO, device, directory…
	ErrOutsideStore = errors.New("transcript path leads through a symlink out of the agent's session store; not read")
)

// TailResult says what a read of a transcript did.
type TailResult struct {
	Cursor  Cursor
	Reset   bool  // the file was replaced or truncated; reading restarted at 0
	Lines   int   // complete lines handed to fn
	Skipped int   // lines over MaxLine
	Bytes   int64 // bytes consumed
	Partial bool  // stopped at the deadline with more to read
}

// Tailer reads a transcript's complete lines from a cursor, one Next at a
// time, up to the last '\n'; it starts over on a replaced or truncated file
// and stops at the deadline.
type Tailer struct {
	res      TailResult
	f        *os.File
	r        *bufio.Reader // nil: nothing (more) to read
	read     bool          // there was something to read
	a        lineAssembler
	off      int64 // where reading started
	head     string
	deadline time.Time
}

// OpenTail opens path to read from cur (missing: os.ErrNotExist).
func OpenTail(path string, cur Cursor, deadline time.Time) (*Tailer, error) {
	f, size, err := openTranscript(path)
	if err != nil {
		return nil, err
	}
	dev, ino := safefile.FileID(f)
	headBuf := make([]byte, min(size, headLen))
	if _, err := io.ReadFull(f, headBuf); err != nil {
		f.Close()
		return nil, fmt.Errorf("read transcript head: %w", err)
	}
	t := &Tailer{f: f, head: sum8(headBuf), deadline: deadline}
	same, err := cur.unchanged(f, dev, ino, size, t.head, headBuf)
	if err != nil {
		f.Close()
		return nil, err
	}
	if t.off = cur.Offset; !same {
		t.res.Reset, t.off = t.off > 0, 0
	}
	t.res.Cursor = Cursor{Path: path, Offset: t.off, Dev: dev, Ino: ino, Head: t.head, HeadLen: int64(len(headBuf))}
	if same && strings.Contains(cur.Head, "@") {
		t.res.Cursor.Head = cur.Head // nothing new: the same bytes before the same offset
	}
	if t.read = t.off < size; t.read {
		if _, err := f.Seek(t.off, io.SeekStart); err != nil {
			f.Close()
			return nil, err
		}
		// A hook reads a few KB: the buffer fits what there is (lines are
		// assembled whatever its size).
		t.r = bufio.NewReaderSize(io.LimitReader(f, size-t.off), int(min(size-t.off+1, 256<<10)))
	}
	return t, nil
}

// Next returns the next complete line (valid until the next call) and its
// offset; ok is false at the end, at the deadline (Partial) or before an
// incomplete last line.
func (t *Tailer) Next() (line []byte, off int64, ok bool) {
	for t.r != nil {
		if t.res.Lines&255 == 0 && !t.deadline.IsZero() && time.Now().After(t.deadline) {
			t.res.Partial = true
			break
		}
		chunk, err := t.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			t.a.more(chunk)
			continue
		}
		if err != nil { // io.EOF
			break
		}
		start := t.off + t.a.consumed
		if line, ok := t.a.end(chunk); ok {
			t.res.Lines++
			return line[:len(line)-1], start, true
		}
		t.res.Skipped++
	}
	t.r = nil
	return nil, 0, false
}

// Close ends the read and returns what it did, the cursor past the last line.
func (t *Tailer) Close() (TailResult, error) {
	defer t.f.Close()
	res := t.res
	if !t.read {
		return res, nil
	}
	res.Bytes = t.a.consumed
	if res.Cursor.Offset = t.off + t.a.consumed; res.Cursor.Offset == 0 {
		return res, nil
	}
	sum, err := tailSum(t.f, res.Cursor.Offset)
	if err != nil {
		return res, fmt.Errorf("read transcript before the cursor: %w", err)
	}
	res.Cursor.Head = t.head + "@" + sum
	return res, nil
}

// openTranscript opens the regular file at path (else ErrNotRegular) and
// returns its size. The stat refuses a FIFO or device unopened; O_NONBLOCK:
// one swapped in after the stat does not hang the open.
func openTranscript(path string) (*os.File, int64, error) {
	fi, err := os.Stat(path)
	if err == nil && !fi.Mode().IsRegular() {
		err = ErrNotRegular
	}
	if err != nil {
		return nil, 0, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	if fi, err = f.Stat(); err == nil && !fi.Mode().IsRegular() {
		err = ErrNotRegular
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// sum8 is the hex of b's SHA-256's first 8 bytes.
func sum8(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// tailSum hashes the (up to) tailLen bytes of f before off.
func tailSum(f *os.File, off int64) (string, error) {
	buf := make([]byte, min(off, tailLen))
	if _, err := f.ReadAt(buf, off-int64(len(buf))); err != nil {
		return "", err
	}
	return sum8(buf), nil
}

// unchanged reports whether f is the file cur was read from, unchanged up
// to cur.Offset: the same device and inode, the offset within its size, the
// same head (head hashes headBuf) and bytes before the offset: a transcript
// rewritten in place can keep its inode, first KB and a size past the offset
// with other lines before it (lost rows; a re-read costs only duplicates).
func (cur Cursor) unchanged(f *os.File, dev, ino uint64, size int64, head string, headBuf []byte) (bool, error) {
	curHead, curTail, hasTail := strings.Cut(cur.Head, "@")
	if cur.Ino != ino || cur.Dev != dev || cur.Offset > size {
		return false, nil
	}
	if cur.HeadLen > 0 && !sameHead(curHead, cur.HeadLen, head, headBuf) {
		return false, nil
	}
	if !hasTail || cur.Offset <= 0 {
		return true, nil
	}
	t, err := tailSum(f, cur.Offset)
	if err != nil {
		return false, fmt.Errorf("read transcript before the cursor: %w", err)
	}
	return t == curTail, nil
}

// sameHead compares a hash of the first hashed bytes with the file's head now.
func sameHead(old string, hashed int64, head string, headBuf []byte) bool {
	switch n := int64(len(headBuf)); {
	case hashed == n:
		return old == head
	case hashed < n:
		return old == sum8(headBuf[:hashed])
	}
	return false
}

// lineAssembler joins a long line's chunks and skips one over MaxLine.
type lineAssembler struct {
	long     []byte // the line being assembled
	pending  int64  // bytes of the line in progress
	consumed int64  // bytes of complete lines
	skipping bool   // the line in progress is over MaxLine
}

func (a *lineAssembler) more(chunk []byte) {
	a.pending += int64(len(chunk))
	switch {
	case a.skipping:
	case len(a.long)+len(chunk) > MaxLine:
		a.skipping, a.long = true, nil
	default:
		a.long = append(a.long, chunk...)
	}
}

// end completes the line in progress with its last chunk (not ok: over MaxLine).
func (a *lineAssembler) end(chunk []byte) (line []byte, ok bool) {
	a.consumed += a.pending + int64(len(chunk))
	a.pending = 0
	if a.skipping {
		a.skipping = false
		return nil, false
	}
	if a.long == nil {
		return chunk, true
	}
	line, a.long = append(a.long, chunk...), nil
	return line, true
}

// StoreRooter is an optional capability: where an agent's store is (Confined).
type StoreRooter interface {
	StoreRoots(env Env) []string
}

// Confined applies the hook path's transcript policy: a path through no
// symlink is read wherever it is (custom stores, `handoff --transcript`);
// one through a symlink only when it resolves under one of the agent's store
// roots (as written or resolved: a symlinked ~/.claude works). Adapters
// without StoreRooter are not restricted; a missing path is not judged.
func Confined(a Adapter, env Env, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	resolved, err := filepath.EvalSymlinks(abs)
	sr, ok := a.(StoreRooter)
	if err != nil || resolved == abs || !ok {
		return nil
	}
	for _, root := range sr.StoreRoots(env) {
		r, err := filepath.EvalSymlinks(root)
		if root != "" && (under(resolved, filepath.Clean(root)) || err == nil && under(resolved, r)) {
			return nil
		}
	}
	return ErrOutsideStore
}

// under: p is dir or inside it (both clean and absolute).
func under(p, dir string) bool { return dir == "/" || InProject(p, dir) }
