package safefile

import (
	"crypto/rand"
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
	ErrSymlink    = errors.New("is a symlink; carryover does not write or read through it")
	ErrNotRegular = errors.New("is not a regular file") // a FIFO, device, socket or directory
	ErrTooLarge   = errors.New("is larger than carryover reads")
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

// WriteFile writes path atomically through Dir.Write, its directory opened
// as given (the caller trusts it: $CARRYOVER_HOME, an agent's settings; a
// project's files go through its opened .carryover Dir).
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
	Mode     os.FileMode // a new file's permission bits
	KeepMode bool        // keep an existing file's permission bits (a user's file)
	// Sync flushes the data before the rename (files a user cannot
	// regenerate: an agent's settings). carryover's own state is not
	// synced: the rename alone gives the old or the new file after a crash
	// of carryover (the kill -9 tests), and a flush per hook would cost
	// more than the whole snapshot.
	Sync bool
	// Recycle writes into the directory's spare inode (recycle_linux.go)
	// instead of a new temp file: for carryover's own files rewritten on
	// every turn (Linux only).
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

// fillTemp writes data to the temp file f with mode, flushed with sync.
func fillTemp(f *os.File, data []byte, mode os.FileMode, sync bool) error {
	if _, err := f.Write(data); err != nil {
		return err
	}
	// The temp file is created 0600 (less under a strict umask); a chmod
	// to the mode it already has would still dirty the inode (its ctime):
	// on ext4 a journalled inode update per write, ~40 µs of a hook's
	// four writes each.
	if fi, err := f.Stat(); err != nil || fi.Mode().Perm() != mode {
		if err := f.Chmod(mode); err != nil {
			return err
		}
	}
	if sync {
		return f.Sync()
	}
	return nil
}

// tempName is a fresh temp name for name, clipped to 200 bytes (NAME_MAX
// is 255). crypto/rand.Read does not fail (it crashes the program first).
func tempName(name string) string {
	var r [8]byte
	_, _ = rand.Read(r[:])
	return "." + name[:min(len(name), 200)] + tempInfix + hex.EncodeToString(r[:])
}
