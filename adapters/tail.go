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
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:8]), nil
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
	fi, err := os.Lstat(path)
	if err != nil {
		return res, err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		if fi, err = os.Stat(path); err != nil {
			return res, err
		}
	}
	if !fi.Mode().IsRegular() {
		return res, ErrNotRegular
	}
	// O_NONBLOCK: should the path be swapped for a FIFO between the stat and
	// the open, the open does not hang.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return res, err
	}
	defer f.Close()
	fi, err = f.Stat()
	if err != nil {
		return res, err
	}
	if !fi.Mode().IsRegular() {
		return res, ErrNotRegular
	}
	dev, ino := FileID(f)
	size := fi.Size()
	n := min(size, headLen)
	headBuf := make([]byte, n)
	if _, err := io.ReadFull(f, headBuf); err != nil {
		return res, fmt.Errorf("read transcript head: %w", err)
	}
	sum := sha256.Sum256(headBuf)
	head := hex.EncodeToString(sum[:8])

	off := cur.Offset
	curHead, curTail, hasTail := strings.Cut(cur.Head, "@")
	same := cur.Ino == ino && cur.Dev == dev && off <= size
	if same && cur.HeadLen > 0 {
		// Compare the same prefix length as was hashed last time.
		if cur.HeadLen == n {
			same = curHead == head
		} else if cur.HeadLen < n {
			s := sha256.Sum256(headBuf[:cur.HeadLen])
			same = curHead == hex.EncodeToString(s[:8])
		} else {
			same = false // the file shrank below the old head
		}
	}
	if same && hasTail && off > 0 {
		// The bytes before the offset must be the ones read last time: a
		// transcript truncated and rewritten in place can have the same
		// inode, the same first kilobyte and a size past the offset, with
		// other lines before it (their rows would be lost; re-reading from
		// the start costs only duplicates, which row keys drop).
		t, err := tailSum(f, off)
		if err != nil {
			return res, fmt.Errorf("read transcript before the cursor: %w", err)
		}
		same = t == curTail
	}
	if !same && cur.Offset > 0 {
		res.Reset = true
	}
	if !same {
		off = 0
	}
	res.Cursor = Cursor{Path: path, Offset: off, Dev: dev, Ino: ino, Head: head, HeadLen: n}
	if same && hasTail {
		res.Cursor.Head = cur.Head // nothing new: the same bytes before the same offset
	}
	if off >= size {
		return res, nil
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return res, err
	}
	// A hook usually reads a few kilobytes: size the buffer to what there
	// is (longer lines are assembled below whatever the buffer size).
	r := bufio.NewReaderSize(io.LimitReader(f, size-off), int(min(size-off+1, 256<<10)))
	var (
		long     []byte // a line longer than the reader's buffer, being assembled
		pending  int64  // bytes of the line in progress
		consumed int64  // bytes of complete lines
		skipping bool   // the line in progress is over MaxLine
	)
	for {
		if res.Lines&255 == 0 && !deadline.IsZero() && time.Now().After(deadline) {
			res.Partial = true
			break
		}
		chunk, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			pending += int64(len(chunk))
			if !skipping {
				if len(long)+len(chunk) > MaxLine {
					skipping, long = true, nil
				} else {
					long = append(long, chunk...)
				}
			}
			continue
		}
		if err != nil { // io.EOF: an incomplete last line waits for next time
			break
		}
		lineStart := off + consumed
		consumed += pending + int64(len(chunk))
		pending = 0
		if skipping {
			res.Skipped++
			skipping = false
			continue
		}
		line := chunk
		if long != nil {
			line = append(long, chunk...)
			long = nil
		}
		fn(line[:len(line)-1], lineStart)
		res.Lines++
	}
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
