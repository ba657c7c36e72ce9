// Package safefile is the one way carryover writes a file, and the way it
// reads one in a place it does not control. A project may have come from a
// stranger: any name in it can be a symlink to ~/.bashrc, a FIFO, a device
// or a hard link, planted in a commit or made after the clone. So every
// write is atomic (a temp file created O_EXCL|O_NOFOLLOW in the target's
// directory, renamed over the target) and relative to an open directory (a
// name is resolved once; a symlink as the last element is refused, never
// written through); a directory carryover owns (.carryover) is opened
// O_NOFOLLOW; a read opens regular files only, without blocking
// (O_NONBLOCK, then fstat: a FIFO or device is refused before a byte is
// read), and reads at most a stated number of bytes; a stale temp file is
// deleted only when it is provably this package's (its name pattern, a
// regular 0600 file of this user with one link: git never checks out a
// 0600 file). A leaf: it imports nothing of carryover's. This file holds
// the helpers the Unix (safefile_unix.go) and Windows implementations share
// and carryover's log (Log); the entry points (ReadFile, WriteFile,
// Dir.ReadFile) are in each platform's file.
package safefile

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

var (
	ErrSymlink    = errors.New("is a symlink; carryover does not write or read through it")
	ErrNotRegular = errors.New("is not a regular file") // a FIFO, device, socket or directory
	ErrTooLarge   = errors.New("is larger than carryover reads")
)

// Options say how Write creates a file.
type Options struct {
	Mode     os.FileMode // a new file's permission bits
	KeepMode bool        // keep an existing file's permission bits (a user's file)
	// Sync flushes the data before the rename (files a user cannot
	// regenerate: an agent's settings). carryover's own state is not synced:
	// the rename alone survives a kill -9 of carryover, and a flush per hook
	// would cost more than the whole snapshot.
	Sync bool
	// Recycle writes into the directory's spare inode instead of a new temp
	// file (Linux only; see writeRecycled): carryover's files rewritten every turn.
	Recycle bool
}

// readAll reads and closes f, opened (err nil) with size bytes.
func readAll(f *os.File, size, max int64, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := readAtMost(f, make([]byte, 0, size+1), max)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: f.Name(), Err: err}
	}
	return b, nil
}

func (d *Dir) join(name string) string { return filepath.Join(d.path, name) }

// checkName refuses anything but one plain path element.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, nameSeps+"\x00") {
		return fmt.Errorf("invalid file name %q", name)
	}
	return nil
}

// tempInfix marks this package's temp files: "." + name + tempInfix + 16 hex digits.
const tempInfix = ".carryover-tmp-"

// tempName is a fresh temp name for name, clipped to 200 bytes (NAME_MAX
// is 255). crypto/rand.Read does not fail (it crashes the program first).
func tempName(name string) string {
	var r [8]byte
	_, _ = rand.Read(r[:])
	return "." + name[:min(len(name), 200)] + tempInfix + hex.EncodeToString(r[:])
}

func isTempName(n string) bool {
	i := strings.LastIndex(n, tempInfix)
	if !strings.HasPrefix(n, ".") || i < 2 || len(n)-i-len(tempInfix) != 16 {
		return false
	}
	_, err := hex.DecodeString(n[i+len(tempInfix):])
	return err == nil
}

// readAtMost appends f's bytes to b, failing past max (a file that grows
// while it is read).
func readAtMost(f *os.File, b []byte, max int64) ([]byte, error) {
	lr := io.LimitReader(f, max+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := lr.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		switch {
		case int64(len(b)) > max:
			return nil, fmt.Errorf("%w (grew past %d bytes while read)", ErrTooLarge, max)
		case err == io.EOF:
			return b, nil
		case err != nil:
			return nil, err
		}
	}
}

// fillTemp writes data to the temp file f with mode, flushed with sync, and
// closes it. The temp file is created 0600: a chmod to the mode it already
// has would still dirty the inode's ctime, on ext4 a journalled update,
// ~40 µs of each of a hook's four writes.
func fillTemp(f *os.File, data []byte, mode os.FileMode, sync bool) error {
	_, err := f.Write(data)
	if fi, serr := f.Stat(); err == nil && (serr != nil || fi.Mode().Perm() != mode) {
		err = f.Chmod(mode)
	}
	if err == nil && sync {
		err = f.Sync()
	}
	return cmp.Or(err, f.Close())
}

// LogMax is the size at which carryover.log is rotated to carryover.log.1.
const LogMax = 1 << 20

// Log appends one line per message to $CARRYOVER_HOME/carryover.log. Lines name events, ids, counts and errors, never
// transcript content; failures are swallowed (the hook path must not break). It lives in this leaf package because
// every feature calls it back from the hook's steps (Logf): from here a Stop's call chain re-enters no file.
type Log struct {
	Path   string
	Now    func() time.Time
	Prefix string
	Clean  func(string) string // makes a message one line without terminal escapes (ids, paths and errors come from payloads)
	Redact func(string) string
	Muted  bool // a hook in an ignored project writes no log line
}

// Printf writes one line (nothing when l is nil or muted).
func (l *Log) Printf(format string, args ...any) {
	if l == nil || l.Muted {
		return
	}
	msg := l.Prefix + fmt.Sprintf(format, args...)
	if l.Clean != nil {
		msg = l.Clean(msg)
	}
	if l.Redact != nil {
		msg = l.Redact(msg)
	}
	if err := os.MkdirAll(filepath.Dir(l.Path), 0o700); err != nil {
		return
	}
	if fi, err := os.Stat(l.Path); err == nil && fi.Size() > LogMax {
		_ = os.Rename(l.Path, l.Path+".1")
	}
	f, err := os.OpenFile(l.Path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	_, _ = f.WriteString(l.Now().UTC().Format(time.RFC3339) + " " + msg + "\n")
	_ = f.Close()
}

// Notes logs each note as a line.
func (l *Log) Notes(notes []string) {
	for _, n := range notes {
		l.Printf("%s", n)
	}
}

// Err logs err, when there is one, as what failed.
func (l *Log) Err(what string, err error) {
	if err != nil {
		l.Printf("%s: %v", what, err)
	}
}
