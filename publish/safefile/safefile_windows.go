package safefile

// Windows has no openat/O_NOFOLLOW/O_NONBLOCK and no FIFOs in a project's
// tree (named pipes live under \\.\pipe\), so this is the Unix API on paths:
// a symlink (or a junction reported as one) is refused where
// safefile_unix.go refuses it, reads take regular files only and at most a
// bound, writes go through a temp file renamed over the target. Keep the
// two in step.

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Dir is an open directory; names are resolved relative to it.
type Dir struct{ path string }

const nameSeps = "/\\:" // what separates path elements (a drive letter's colon too)

// OpenDir opens the existing directory path (symlinks in it followed).
func OpenDir(path string) (*Dir, error) {
	fi, err := os.Stat(path)
	if err == nil && !fi.IsDir() {
		err = &fs.PathError{Op: "open", Path: path, Err: syscall.ENOTDIR}
	}
	if err != nil {
		return nil, err
	}
	return &Dir{path: path}, nil
}

func (d *Dir) Close() error { return nil }

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

// Write replaces name in d with data atomically (see safefile_unix.go).
func (d *Dir) Write(name string, data []byte, o Options) error {
	if err := checkName(name); err != nil {
		return err
	}
	p, mode := d.join(name), o.Mode.Perm()
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
		tmp = d.join(tempName(name))
		if f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	if err = fillTemp(f, data, mode, o.Sync); err == nil {
		err = os.Rename(tmp, p) // MoveFileEx, replacing
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// RemoveStaleTemps deletes this package's temp files older than age.
func (d *Dir) RemoveStaleTemps(age time.Duration) {
	names, _ := d.Names()
	for _, n := range names {
		if !isTempName(n) {
			continue
		}
		if fi, err := os.Lstat(d.join(n)); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > age {
			_ = os.Remove(d.join(n))
		}
	}
}

func (d *Dir) open(name, op string, max int64) (*os.File, int64, error) {
	if err := checkName(name); err != nil {
		return nil, 0, err
	}
	return openPath(d.join(name), op, false, max)
}

// openPath opens path when it is a regular file (through a symlink only
// when follow is set) of at most max bytes, still the file stat'ed before.
func openPath(path, op string, follow bool, max int64) (*os.File, int64, error) {
	stat := os.Lstat
	if follow {
		stat = os.Stat
	}
	before, err := stat(path)
	if err == nil {
		err = regular(before)
	}
	if err != nil {
		return nil, 0, &fs.PathError{Op: op, Path: path, Err: err}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	switch {
	case err != nil || !os.SameFile(before, st) || !st.Mode().IsRegular():
		err = errors.New("was replaced while being opened")
	case st.Size() > max:
		err = fmt.Errorf("%w (%d bytes; the limit is %d)", ErrTooLarge, st.Size(), max)
	default:
		return f, st.Size(), nil
	}
	f.Close()
	return nil, 0, &fs.PathError{Op: op, Path: path, Err: err}
}

// MapFile is ReadFile on Windows (the Unix one maps the file).
func (d *Dir) MapFile(name string, max int64) ([]byte, error) { return d.ReadFile(name, max) }

func Unmap(b []byte) {}

// Append never appends on Windows: the caller rewrites the file
// (WriteFile), which is correct, only dearer.
func Append(path string, data []byte, max int64) (bool, error) { return false, nil }

// Names lists d's entries (unsorted).
func (d *Dir) Names() ([]string, error) {
	f, err := os.Open(d.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// Remove deletes name in d: a regular file or a symlink itself, nothing else.
func (d *Dir) Remove(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	p := d.join(name)
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if t := fi.Mode().Type(); t != 0 && t != fs.ModeSymlink {
		return &fs.PathError{Op: "remove", Path: p, Err: ErrNotRegular}
	}
	return os.Remove(p)
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
	d, _ := byHandle(h)
	return uint64(d.NumberOfLinks)
}

// FileID is an open file's identity: the volume serial number and the NTFS
// file index, Windows' device and inode.
func FileID(f *os.File) (dev, ino uint64) {
	if d, ok := byHandle(syscall.Handle(f.Fd())); ok {
		return uint64(d.VolumeSerialNumber), uint64(d.FileIndexHigh)<<32 | uint64(d.FileIndexLow)
	}
	return 0, 0
}

// StatID: Windows' FileInfo carries no file index; size and mtime decide.
func StatID(fi os.FileInfo) (dev, ino uint64) { return 0, 0 }

func byHandle(h syscall.Handle) (d syscall.ByHandleFileInformation, ok bool) {
	return d, syscall.GetFileInformationByHandle(h, &d) == nil
}

// The entry points below are in each platform's file, not in safefile.go: they call the platform's open and write,
// which call safefile.go's helpers, and a call chain that went safefile.go -> safefile_unix.go -> safefile.go would
// enter a file twice (TestStopCallChains).

// ReadFile reads path, following symlinks (the caller decides whether path
// may be one): regular files only, never blocking on a FIFO or device, at
// most max bytes.
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

// ReadFile reads name in d: never through a symlink, regular files only, at
// most max bytes (ErrTooLarge past that).
func (d *Dir) ReadFile(name string, max int64) ([]byte, error) {
	f, size, err := d.open(name, "read", max)
	return readAll(f, size, max, err)
}

// Open opens name in d for reading at random (ReadAt) with ReadFile's
// checks; the caller bounds what it reads by the size it stats.
func (d *Dir) Open(name string) (*os.File, error) {
	f, _, err := d.open(name, "open", math.MaxInt64)
	return f, err
}

func readPath(path string, max int64, follow bool) ([]byte, error) {
	f, size, err := openPath(path, "read", follow, max)
	return readAll(f, size, max, err)
}
