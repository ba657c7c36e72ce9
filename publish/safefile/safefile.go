//go:build !windows

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
// 0600 file). A leaf: it imports nothing of carryover's.
package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Dir is an open directory; names are resolved relative to it.
type Dir struct {
	fd   int
	path string
}

// OpenDir opens the existing directory path, following symlinks (the caller
// chose it: a project root, $CARRYOVER_HOME); never creates it.
func OpenDir(path string) (*Dir, error) {
	fd, err := openRetry(func() (int, error) {
		return unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{fd: fd, path: path}, nil
}

// Close releases the directory.
func (d *Dir) Close() error {
	if d == nil || d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	return err
}

// nameSeps separate path elements.
const nameSeps = "/"

// Sub opens the subdirectory name of d, creating it with mode when create
// is set. A symlink there is refused (ErrSymlink), whatever it points to.
func (d *Dir) Sub(name string, create bool, mode os.FileMode) (*Dir, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if create {
		if err := unix.Mkdirat(d.fd, name, uint32(mode.Perm())); err != nil && err != unix.EEXIST {
			return nil, &fs.PathError{Op: "mkdir", Path: d.join(name), Err: err}
		}
	}
	fd, err := openRetry(func() (int, error) {
		return unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.join(name), Err: why(d.fd, name, err)}
	}
	return &Dir{fd: fd, path: d.join(name)}, nil
}

// why turns the errno of an O_NOFOLLOW open of name in dirfd into
// ErrSymlink or ErrNotRegular where that is what it means.
func why(dirfd int, name string, err error) error {
	if err != unix.ELOOP && err != unix.ENOTDIR && err != unix.EMLINK {
		return err
	}
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			return ErrSymlink
		case unix.S_IFDIR, unix.S_IFREG:
		default:
			return ErrNotRegular
		}
	}
	return err
}

// Write replaces name in d with data atomically: readers see the old or
// the new file, never a torn one. A symlink or anything but a regular file
// there is refused (the rename would only replace the link, but a planted
// link is worth a line in the log). A hard-linked target is replaced, not
// rewritten: the other links keep the old bytes.
func (d *Dir) Write(name string, data []byte, o Options) error {
	if err := checkName(name); err != nil {
		return err
	}
	mode, exists, err := d.targetMode(name, o)
	if err != nil {
		return err
	}
	if o.Recycle && exists && !o.Sync {
		if done, err := d.writeRecycled(name, data, mode); done {
			return err
		}
	}
	tmp, f, err := d.createTemp(name)
	if err != nil {
		return err
	}
	if err = fillTemp(f, data, mode, o.Sync); err == nil {
		err = f.Close()
	} else {
		f.Close()
	}
	switch {
	case err != nil:
		_ = unix.Unlinkat(d.fd, tmp, 0)
		return err
	case o.Recycle && exists:
		return d.swapIn(tmp, name)
	}
	return d.rename(tmp, name)
}

// rename moves the temp file tmp over name, deleting it when it cannot.
func (d *Dir) rename(tmp, name string) error {
	if err := unix.Renameat(d.fd, tmp, d.fd, name); err != nil {
		_ = unix.Unlinkat(d.fd, tmp, 0)
		return &fs.PathError{Op: "rename", Path: d.join(name), Err: err}
	}
	return nil
}

// targetMode is the mode to write name in d with (o.Mode, or with KeepMode
// the existing file's) and whether it exists; a non-regular one is refused.
func (d *Dir) targetMode(name string, o Options) (os.FileMode, bool, error) {
	var st unix.Stat_t
	err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case err == unix.ENOENT:
		return o.Mode.Perm(), false, nil
	case err != nil:
		return 0, false, &fs.PathError{Op: "stat", Path: d.join(name), Err: err}
	case regular(st) != nil:
		return 0, false, &fs.PathError{Op: "write", Path: d.join(name), Err: regular(st)}
	case o.KeepMode:
		return os.FileMode(st.Mode & 0o777), true, nil
	}
	return o.Mode.Perm(), true, nil
}

// createTemp makes a new 0600 temp file for name in d (never following or
// reusing an existing name).
func (d *Dir) createTemp(name string) (string, *os.File, error) {
	for range 10 {
		tmp := tempName(name)
		fd, err := openRetry(func() (int, error) {
			return unix.Openat(d.fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		})
		if err == unix.EEXIST {
			continue
		}
		if err != nil {
			return "", nil, &fs.PathError{Op: "create", Path: d.join(tmp), Err: err}
		}
		return tmp, os.NewFile(uintptr(fd), d.join(tmp)), nil
	}
	return "", nil, &fs.PathError{Op: "create", Path: d.join(name), Err: fs.ErrExist}
}

// RemoveStaleTemps deletes the temp files a killed carryover left in d,
// older than age, when provably one: the temp name pattern, a regular file
// (never a symlink's target), this user's, mode 0600 (git checks files out
// 0644 or 0755), one link.
func (d *Dir) RemoveStaleTemps(age time.Duration) {
	names, err := d.Names()
	if err != nil {
		return
	}
	uid := uint32(os.Getuid())
	for _, n := range names {
		var st unix.Stat_t
		if !isTempName(n) || unix.Fstatat(d.fd, n, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			continue
		}
		mtime := time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec))
		if st.Mode&unix.S_IFMT == unix.S_IFREG && st.Uid == uid && st.Mode&0o777 == 0o600 && st.Nlink == 1 && time.Since(mtime) > age {
			_ = unix.Unlinkat(d.fd, n, 0)
		}
	}
}

// Names lists the entries of d (unsorted).
func (d *Dir) Names() ([]string, error) {
	dup, err := unix.Dup(d.fd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), d.path)
	defer f.Close()
	if _, err := f.Seek(0, 0); err != nil {
		return nil, err
	}
	return f.Readdirnames(-1)
}

// Remove deletes the entry name of d: a regular file, or a symlink itself
// (never what it points to). Anything else is refused.
func (d *Dir) Remove(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	var st unix.Stat_t
	err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if t := st.Mode & unix.S_IFMT; err == nil && t != unix.S_IFREG && t != unix.S_IFLNK {
		err = ErrNotRegular
	}
	if err == nil {
		err = unix.Unlinkat(d.fd, name, 0)
	}
	if err != nil {
		return &fs.PathError{Op: "remove", Path: d.join(name), Err: err}
	}
	return nil
}

// ReadFile reads name in d: never through a symlink, regular files only,
// at most max bytes (ErrTooLarge past that).
func (d *Dir) ReadFile(name string, max int64) ([]byte, error) {
	fd, st, err := d.open(name, "read")
	if err != nil {
		return nil, err
	}
	return readFd(fd, d.join(name), st, max)
}

func readPath(path string, max int64, follow bool) ([]byte, error) {
	fd, st, err := openAt(unix.AT_FDCWD, path, path, "read", follow)
	if err != nil {
		return nil, err
	}
	return readFd(fd, path, st, max)
}

// Open opens name in d for reading at random (ReadAt) with ReadFile's
// checks; the caller bounds what it reads by the size it stats.
func (d *Dir) Open(name string) (*os.File, error) {
	fd, st, err := d.open(name, "open")
	if err == nil {
		_, err = checkFd(fd, d.join(name), st, math.MaxInt64)
	}
	if err != nil {
		if fd >= 0 {
			unix.Close(fd)
		}
		return nil, err
	}
	return os.NewFile(uintptr(fd), d.join(name)), nil
}

// MapFile is ReadFile mapping the file read-only instead of copying it: for
// a big file of which a small part is read (a 10,000-file repository's git
// index is 0.8 MB; reading it whole cost a hook ~200 fresh pages and a
// copy). Unmap releases it. A file truncated while mapped faults past its
// new end: its reader runs with debug.SetPanicOnFault and recovers.
func (d *Dir) MapFile(name string, max int64) ([]byte, error) {
	fd, st, err := d.open(name, "read")
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if st, err = checkFd(fd, d.join(name), st, max); err != nil {
		return nil, err
	}
	if st.Size == 0 {
		return []byte{}, nil
	}
	b, err := unix.Mmap(fd, 0, int(st.Size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: d.join(name), Err: err}
	}
	return b, nil
}

// Unmap releases what MapFile mapped (nothing for an empty file).
func Unmap(b []byte) {
	if cap(b) > 0 {
		_ = unix.Munmap(b)
	}
}

// open is openAt for name in d, never through a symlink.
func (d *Dir) open(name, op string) (int, unix.Stat_t, error) {
	if err := checkName(name); err != nil {
		return -1, unix.Stat_t{}, err
	}
	return openAt(d.fd, name, d.join(name), op, false)
}

// openAt opens name relative to dirfd (unix.AT_FDCWD: a path) for reading
// when it is a regular file, through a symlink only when follow is set,
// with its stat from before the open (checkFd refuses a file replaced in
// between). O_NONBLOCK: a FIFO swapped in after the stat does not hang the
// open; O_NOCTTY: a terminal never becomes the controlling terminal.
func openAt(dirfd int, name, path, op string, follow bool) (int, unix.Stat_t, error) {
	var st unix.Stat_t
	flags, statFlags := unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NOFOLLOW, unix.AT_SYMLINK_NOFOLLOW
	if follow {
		flags, statFlags = flags&^unix.O_NOFOLLOW, 0
	}
	err := unix.Fstatat(dirfd, name, &st, statFlags)
	if err == nil {
		err = regular(st) // checked before the open: opening some devices has effects of its own
	}
	fd := -1
	if err == nil {
		fd, err = openRetry(func() (int, error) { return unix.Openat(dirfd, name, flags, 0) })
		if err != nil {
			err = why(dirfd, name, err)
		}
	}
	if err != nil {
		return -1, st, &fs.PathError{Op: op, Path: path, Err: err}
	}
	return fd, st, nil
}

func regular(st unix.Stat_t) error {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return nil
	case unix.S_IFLNK:
		return ErrSymlink
	}
	return ErrNotRegular
}

// readFd reads an open fd after checking it (checkFd).
func readFd(fd int, path string, before unix.Stat_t, max int64) ([]byte, error) {
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	st, err := checkFd(fd, path, before, max)
	if err != nil {
		return nil, err
	}
	b, err := readAtMost(f, make([]byte, 0, st.Size+1), max)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	return b, nil
}

// checkFd checks that the open fd is the regular file stat'ed before (not
// one swapped in) and at most max bytes; it returns its stat.
func checkFd(fd int, path string, before unix.Stat_t, max int64) (unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Fstat(fd, &st)
	switch {
	case err != nil:
	case regular(st) != nil:
		err = regular(st)
	case st.Dev != before.Dev || st.Ino != before.Ino:
		err = errors.New("was replaced while being read")
	case st.Size > max:
		err = fmt.Errorf("%w (%d bytes; the limit is %d)", ErrTooLarge, st.Size, max)
	default:
		return st, nil
	}
	return st, &fs.PathError{Op: "read", Path: path, Err: err}
}

// openRetry retries an open interrupted by a signal (the Go runtime's
// preemption signals can interrupt a slow open).
func openRetry(open func() (int, error)) (int, error) {
	for {
		fd, err := open()
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// Append adds data to the existing regular file at path in one write when
// the file stays within max bytes, and reports whether it did. It never
// creates the file, follows a symlink as the last element or blocks on a
// FIFO: anything else is left alone (false) for the caller to rewrite with
// WriteFile. One write(2) under O_APPEND: concurrent appenders never
// interleave within a line, and no new inode or rename (~0.2 ms less).
func Append(path string, data []byte, max int64) (bool, error) {
	fd, err := openRetry(func() (int, error) {
		return unix.Open(path, unix.O_WRONLY|unix.O_APPEND|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return false, nil
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || regular(st) != nil || st.Size+int64(len(data)) > max {
		return false, nil
	}
	n, err := unix.Write(fd, data)
	if err == nil && n != len(data) {
		err = unix.EIO
	}
	return err == nil, err
}

// Nlink is the number of hard links of the file at path (not following a
// symlink); 0 when it cannot be stat'ed.
func Nlink(path string) uint64 {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil {
		return 0
	}
	return uint64(st.Nlink)
}
