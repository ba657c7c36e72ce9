package adapters

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"
)

// Cursor is how far a transcript file has been read, and which file it was.
type Cursor struct {
	Path   string
	Offset int64
	Dev    uint64
	Ino    uint64
	// Head is a hash of the file's first bytes (up to headLen); a file
	// replaced in place (same inode, new content) changes it. After an '@'
	// it holds a hash of the bytes just before Offset (up to tailLen): a
	// file truncated and rewritten in place that grew back past Offset,
	// with the same first kilobyte, changes that one (cursors saved before
	// it existed have no '@' and are checked by the head alone).
	Head    string
	HeadLen int64
}

const (
	headLen = 1024
	tailLen = 1024
)

// HeadPart returns the head hash of a Cursor.Head, without the hash of
// the bytes before the offset: two cursors of one unchanged file at
// different offsets have the same head part.
func HeadPart(h string) string {
	if i := strings.IndexByte(h, '@'); i >= 0 {
		return h[:i]
	}
	return h
}

// tailSum hashes the up to tailLen bytes of f before off.
func tailSum(f *os.File, off int64) (string, error) {
	n := min(off, tailLen)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off-n); err != nil {
		return "", err
	}
	return sum8(buf), nil
}

// MaxLine is the longest line the tailer decodes; longer lines are skipped
// (their bytes are consumed and logged as skipped, never buffered whole).
const MaxLine = 64 << 20

// ErrNotRegular is returned for a transcript path that is a FIFO, device,
// directory or other non-regular file.
var ErrNotRegular = errors.New("transcript is not a regular file")

// TailResult says what a Tail call did.
type TailResult struct {
	Cursor  Cursor
	Reset   bool  // the file was replaced or truncated; reading restarted at 0
	Lines   int   // complete lines handed to fn
	Skipped int   // lines over MaxLine
	Bytes   int64 // bytes consumed
	Partial bool  // stopped at the deadline with more to read
}

// Tail reads complete lines of path from cur.Offset, calling fn for each
// with the line's offset. It consumes only up to the last '\n', detects a
// replaced or truncated file and starts over, and stops at deadline. A
// missing file returns os.ErrNotExist.
func Tail(path string, cur Cursor, deadline time.Time, fn func(line []byte, off int64)) (TailResult, error) {
	res := TailResult{Cursor: cur}
	f, fi, err := openTranscript(path)
	if err != nil {
		return res, err
	}
	defer f.Close()
	dev, ino := FileID(f)
	size := fi.Size()
	n := min(size, headLen)
	headBuf := make([]byte, n)
	if _, err := io.ReadFull(f, headBuf); err != nil {
		return res, fmt.Errorf("read transcript head: %w", err)
	}
	head := sum8(headBuf)
	same, err := cur.unchanged(f, dev, ino, size, head, headBuf)
	if err != nil {
		return res, err
	}
	off := cur.Offset
	if !same {
		res.Reset, off = off > 0, 0
	}
	res.Cursor = Cursor{Path: path, Offset: off, Dev: dev, Ino: ino, Head: head, HeadLen: n}
	if same && strings.Contains(cur.Head, "@") {
		res.Cursor.Head = cur.Head // nothing new: the same bytes before the same offset
	}
	if off >= size {
		return res, nil
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return res, err
	}
	consumed := readLines(f, off, size, deadline, fn, &res)
	res.Bytes = consumed
	res.Cursor.Offset = off + consumed
	if res.Cursor.Offset > 0 {
		t, err := tailSum(f, res.Cursor.Offset)
		if err != nil {
			return res, fmt.Errorf("read transcript before the cursor: %w", err)
		}
		res.Cursor.Head = head + "@" + t
	}
	return res, nil
}

// openTranscript opens path, or the file a symlink there names, when it
// is a regular file (ErrNotRegular otherwise), and stats it.
func openTranscript(path string) (*os.File, os.FileInfo, error) {
	fi, err := os.Lstat(path)
	if err == nil && fi.Mode()&os.ModeSymlink != 0 {
		fi, err = os.Stat(path)
	}
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, ErrNotRegular
	}
	// O_NONBLOCK: should the path be swapped for a FIFO between the stat and
	// the open, the open does not hang.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	if fi, err = f.Stat(); err == nil && !fi.Mode().IsRegular() {
		err = ErrNotRegular
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// sum8 is the hex of the first 8 bytes of b's SHA-256.
func sum8(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// unchanged reports whether f is the file cur was read from, unchanged up
// to cur.Offset: the same device and inode, the offset within its size,
// the same head (head is the hash of headBuf, its first bytes) and the
// same bytes before the offset.
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
	// The bytes before the offset must be the ones read last time: a
	// transcript truncated and rewritten in place can have the same
	// inode, the same first kilobyte and a size past the offset, with
	// other lines before it (their rows would be lost; re-reading from
	// the start costs only duplicates, which row keys drop).
	t, err := tailSum(f, cur.Offset)
	if err != nil {
		return false, fmt.Errorf("read transcript before the cursor: %w", err)
	}
	return t == curTail, nil
}

// sameHead compares a head hash over the prefix length it was hashed
// from (hashed bytes) with the file's head now.
func sameHead(old string, hashed int64, head string, headBuf []byte) bool {
	n := int64(len(headBuf))
	switch {
	case hashed == n:
		return old == head
	case hashed < n:
		return old == sum8(headBuf[:hashed])
	}
	return false // the file shrank below the old head
}

// readLines hands fn each complete line of f from off (where f stands)
// up to size, with its offset, until deadline; it counts lines in res and
// returns the bytes of complete lines consumed. An incomplete last line
// waits for next time.
func readLines(f *os.File, off, size int64, deadline time.Time, fn func(line []byte, off int64), res *TailResult) int64 {
	// A hook usually reads a few kilobytes: size the buffer to what there
	// is (longer lines are assembled below whatever the buffer size).
	r := bufio.NewReaderSize(io.LimitReader(f, size-off), int(min(size-off+1, 256<<10)))
	var a lineAssembler
	for {
		if res.Lines&255 == 0 && !deadline.IsZero() && time.Now().After(deadline) {
			res.Partial = true
			return a.consumed
		}
		chunk, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			a.more(chunk)
			continue
		}
		if err != nil { // io.EOF
			return a.consumed
		}
		start := off + a.consumed
		if line, ok := a.end(chunk); ok {
			fn(line[:len(line)-1], start)
			res.Lines++
		} else {
			res.Skipped++
		}
	}
}

// lineAssembler joins the chunks of a line longer than the reader's
// buffer, and skips one over MaxLine without keeping it.
type lineAssembler struct {
	long     []byte // a line longer than the reader's buffer, being assembled
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

// end completes the line in progress with its last chunk; ok is false
// for a line over MaxLine.
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
