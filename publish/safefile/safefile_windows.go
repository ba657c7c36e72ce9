package safefile

// Windows has no openat/O_NOFOLLOW/O_NONBLOCK, and no FIFOs in a project's
// tree (its named pipes live under \\.\pipe\), so this is the same API on
// paths: a symlink (or junction reported as one) is refused where
// safefile.go refuses it, reads take regular files only and at most a
// bound, and writes go through a temp file renamed over the target. The
// shared helpers are repeated here so that safefile.go (unix) stays one
// file; keep the two in step.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// Dir is an open directory; names are resolved relative to it.
type Dir struct{ path string }

// OpenDir opens the existing directory path (symlinks in it followed).
func OpenDir(path string) (*Dir, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.ENOTDIR}
	}
	return &Dir{path: path}, nil
}

// Close releases the directory.
func (d *Dir) Close() error { return nil }

// nameSeps separate path elements (a drive letter's colon too).
const nameSeps = "/\\:"

// Sub opens (or creates) the subdirectory name; a symlink there is refused.
func (d *Dir) Sub(name string, create bool, mode os.FileMode) (*Dir, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	p := d.join(name)
	if create {
		if err := os.Mkdir(p, mode.Perm()); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	}
	fi, err := os.Lstat(p)
	switch {
	case err != nil:
		return nil, err
	case fi.Mode()&os.ModeSymlink != 0:
		return nil, &fs.PathError{Op: "open", Path: p, Err: ErrSymlink}
	case !fi.IsDir():
		return nil, &fs.PathError{Op: "open", Path: p, Err: ErrNotRegular}
	}
	return &Dir{path: p}, nil
}

func regular(fi os.FileInfo) error {
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return ErrSymlink
	case !fi.Mode().IsRegular():
		return ErrNotRegular
	}
	return nil
}

// Write replaces name in d with data atomically (see safefile.go).
func (d *Dir) Write(name string, data []byte, o Options) error {
	if err := checkName(name); err != nil {
		return err
	}
	p := d.join(name)
	mode := o.Mode.Perm()
	fi, err := os.Lstat(p)
	switch {
	case err == nil && regular(fi) != nil:
		return &fs.PathError{Op: "write", Path: p, Err: regular(fi)}
	case err == nil && o.KeepMode:
		mode = fi.Mode().Perm()
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	var f *os.File
	var tmp string
	for range 10 {
		var r [8]byte
		_, _ = rand.Read(r[:])
		tmp = d.join("." + name + tempInfix + hex.EncodeToString(r[:]))
		f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	_ = f.Chmod(mode)
	if o.Sync {
		_ = f.Sync()
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, p); err != nil { // MoveFileEx, replacing
		os.Remove(tmp)
		return err
	}
	return nil
}

// RemoveStaleTemps deletes this package's temp files older than age.
func (d *Dir) RemoveStaleTemps(age time.Duration) {
	ents, err := os.ReadDir(d.path)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !isTempName(e.Name()) {
			continue
		}
		fi, err := os.Lstat(d.join(e.Name()))
		if err != nil || !fi.Mode().IsRegular() || time.Since(fi.ModTime()) <= age {
			continue
		}
		_ = os.Remove(d.join(e.Name()))
	}
}

// ReadFile reads name in d: never through a symlink, regular files only,
// at most max bytes.
func (d *Dir) ReadFile(name string, max int64) ([]byte, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	return readPath(d.join(name), max, false)
}

func readPath(path string, max int64, follow bool) ([]byte, error) {
	stat := os.Lstat
	if follow {
		stat = os.Stat
	}
	before, err := stat(path)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if err := regular(before); err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !os.SameFile(before, st) || !st.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: errors.New("was replaced while being read")}
	}
	if st.Size() > max {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (%d bytes; the limit is %d)", ErrTooLarge, st.Size(), max)}
	}
	b, err := readAtMost(f, make([]byte, 0, st.Size()+1), max)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	return b, nil
}

// Nlink is the number of hard links of the file at path; 0 when unknown.
func Nlink(path string) uint64 {
	p, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return 0
	}
	h, err := syscall.CreateFile(p, 0, syscall.FILE_SHARE_READ|syscall.FILE_SHARE_WRITE|syscall.FILE_SHARE_DELETE, nil,
		syscall.OPEN_EXISTING, syscall.FILE_FLAG_BACKUP_SEMANTICS|syscall.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return 0
	}
	defer syscall.CloseHandle(h)
	var d syscall.ByHandleFileInformation
	if syscall.GetFileInformationByHandle(h, &d) != nil {
		return 0
	}
	return uint64(d.NumberOfLinks)
}
