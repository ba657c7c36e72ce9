package safefile

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// What the Unix and Windows implementations share.

var (
	// ErrSymlink is returned for a name that is a symlink where carryover
	// will not follow one.
	ErrSymlink = errors.New("is a symlink; carryover does not write or read through it")
	// ErrNotRegular is returned for a FIFO, device, socket or directory
	// where a regular file was expected.
	ErrNotRegular = errors.New("is not a regular file")
	// ErrTooLarge is returned by reads past their bound.
	ErrTooLarge = errors.New("is larger than carryover reads")
)

func (d *Dir) join(name string) string { return filepath.Join(d.path, name) }

// checkName refuses anything but one plain path element.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, nameSeps+"\x00") {
		return fmt.Errorf("invalid file name %q", name)
	}
	return nil
}

// ReadFile reads path, following symlinks (the caller decides whether
// path may be one): regular files only, never blocking on a FIFO or
// device, at most max bytes.
func ReadFile(path string, max int64) ([]byte, error) { return readPath(path, max, true) }

// ReadFileNoFollow is ReadFile refusing a symlink as path's last element.
func ReadFileNoFollow(path string, max int64) ([]byte, error) { return readPath(path, max, false) }

// WriteFile writes path atomically through Dir.Write. path's directory is
// opened as given (symlinks in it are followed: the caller trusts it); the
// file itself is never written through a symlink. It is for directories
// carryover or the user chose ($CARRYOVER_HOME, an agent's settings); a
// project's own files go through its opened .carryover Dir.
func WriteFile(path string, data []byte, o Options) error {
	d, err := OpenDir(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Write(filepath.Base(path), data, o)
}

// Options say how Write creates a file.
type Options struct {
	// Mode is a new file's permission bits.
	Mode os.FileMode
	// KeepMode keeps an existing file's permission bits (a user's file).
	KeepMode bool
	// Sync flushes the data before the rename (files a user cannot
	// regenerate, such as an agent's settings). carryover's own state is
	// not synced: the rename alone gives readers the old or the new file
	// after a crash of carryover (what the kill -9 tests check), and a
	// flush on every hook would cost more than the whole snapshot.
	Sync bool
	// Recycle keeps the file's previous inode as the directory's spare and
	// writes the next version into it (recycle_unix.go) instead of a new
	// temp file: for carryover's own files rewritten on every turn
	// (ignored on Windows: every write is a new temp file).
	Recycle bool
}

// tempInfix marks this package's temp files: ".<name>" + tempInfix + 16 hex digits.
const tempInfix = ".carryover-tmp-"

// isTempName reports whether n is one of this package's temp file names.
func isTempName(n string) bool {
	i := strings.LastIndex(n, tempInfix)
	if !strings.HasPrefix(n, ".") || i < 2 {
		return false
	}
	h := n[i+len(tempInfix):]
	if len(h) != 16 {
		return false
	}
	_, err := hex.DecodeString(h)
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
		if int64(len(b)) > max {
			return nil, fmt.Errorf("%w (grew past %d bytes while read)", ErrTooLarge, max)
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
