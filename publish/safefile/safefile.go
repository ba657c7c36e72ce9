//go:build !windows

// Package safefile is the one way carryover writes a file, and the way it
// reads one in a place it does not control. A project may have come from a
// stranger: any name in it can be a symlink to ~/.bashrc, a FIFO, a device
// or a hard link, planted in a commit or made after the clone. So:
//
//   - every write is atomic (a temp file created with O_EXCL|O_NOFOLLOW in
//     the target's directory, then renamed over the target) and works
//     relative to an open directory, so a name is resolved once and a
//     symlink in the last element is refused, never written through;
//   - a directory carryover owns (.carryover) is opened with O_NOFOLLOW: a
//     symlinked one is refused;
//   - a read opens regular files only, without blocking (O_NONBLOCK, then
//     fstat: a FIFO or device is refused before a byte is read), and reads
//     at most a stated number of bytes;
//   - stale temp files are deleted only when they are provably this
//     package's: its name pattern, a regular file of this user with mode
//     0600 and one link (git never checks out a 0600 file).
//
// The package is a leaf: it imports nothing of carryover's, so the hook
// path's readers (distill's git reads, the config, the handoff) and every
// writer (publish, the hook config installer) share it.
package safefile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Dir is an open directory; names are resolved relative to it.
type Dir struct {
	fd   int
	path string
}

// OpenDir opens the existing directory path. Symlinks in path are followed:
// the caller chose it (a project root, $CARRYOVER_HOME). A missing
// directory is an error wrapping fs.ErrNotExist; it is never created.
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
		return nil, &fs.PathError{Op: "open", Path: d.join(name), Err: d.why(name, err)}
	}
	return &Dir{fd: fd, path: d.join(name)}, nil
}

// why turns the errno of an O_NOFOLLOW open into ErrSymlink or
// ErrNotRegular where that is what it means.
func (d *Dir) why(name string, err error) error {
	if err != unix.ELOOP && err != unix.ENOTDIR && err != unix.EMLINK {
		return err
	}
	var st unix.Stat_t
	if unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
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
// the new file, never a torn one. An existing name that is a symlink, or
// anything but a regular file, is refused (the rename would only replace
// the link, but a planted link is a sign of a hostile project and worth a
// line in the log). A hard-linked target is replaced, not rewritten in
// place: the other links keep the old bytes.
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
	if err := fillTemp(f, data, mode, o.Sync); err != nil {
		f.Close()
		_ = unix.Unlinkat(d.fd, tmp, 0)
		return err
	}
	if err := f.Close(); err != nil {
		_ = unix.Unlinkat(d.fd, tmp, 0)
		return err
	}
	if o.Recycle && exists {
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

// targetMode stats name in d: the mode to write (o.Mode, or with KeepMode
// the existing file's) and whether it exists. A symlink or anything but a
// regular file is refused.
func (d *Dir) targetMode(name string, o Options) (os.FileMode, bool, error) {
	var st unix.Stat_t
	err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case err == unix.ENOENT:
		return o.Mode.Perm(), false, nil
	case err != nil:
		return 0, false, &fs.PathError{Op: "stat", Path: d.join(name), Err: err}
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return 0, false, &fs.PathError{Op: "write", Path: d.join(name), Err: ErrSymlink}
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return 0, false, &fs.PathError{Op: "write", Path: d.join(name), Err: ErrNotRegular}
	case o.KeepMode:
		return os.FileMode(st.Mode & 0o777), true, nil
	}
	return o.Mode.Perm(), true, nil
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

// tempName is a fresh temp name for name, clipped to 200 bytes (NAME_MAX
// is 255). crypto/rand.Read does not fail (it crashes the program first).
func tempName(name string) string {
	var r [8]byte
	_, _ = rand.Read(r[:])
	return "." + name[:min(len(name), 200)] + tempInfix + hex.EncodeToString(r[:])
}

// RemoveStaleTemps deletes the temp files a killed carryover left in d,
// older than age. A file is deleted only when it is provably one: the temp
// name pattern, a regular file (a symlink is never followed, and unlinking
// it would only remove the link), owned by this user, mode 0600, one link.
// git checks files out 0644 or 0755, so nothing that came with a
// repository matches.
func (d *Dir) RemoveStaleTemps(age time.Duration) {
	dup, err := unix.Dup(d.fd)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(dup), d.path)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return
	}
	uid := uint32(os.Getuid())
	for _, n := range names {
		if !isTempName(n) {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(d.fd, n, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			continue
		}
		mtime := time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec))
		if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Uid != uid || st.Mode&0o777 != 0o600 || st.Nlink != 1 || time.Since(mtime) <= age {
			continue
		}
		_ = unix.Unlinkat(d.fd, n, 0)
	}
}

// ReadFile reads name in d: never through a symlink, regular files only,
// at most max bytes (ErrTooLarge past that).
func (d *Dir) ReadFile(name string, max int64) ([]byte, error) {
	fd, st, err := d.openRegular(name)
	if err != nil {
		return nil, err
	}
	return readFd(fd, d.join(name), st, max)
}

// openRegular opens name in d for reading when it is a regular file, never
// through a symlink, and returns the file's stat from before the open (the
// caller compares it with the open file's: a file replaced in between is
// refused).
func (d *Dir) openRegular(name string) (int, unix.Stat_t, error) {
	var st unix.Stat_t
	if err := checkName(name); err != nil {
		return -1, st, err
	}
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return -1, st, &fs.PathError{Op: "read", Path: d.join(name), Err: err}
	}
	if err := regular(st); err != nil {
		return -1, st, &fs.PathError{Op: "read", Path: d.join(name), Err: err}
	}
	fd, err := openRetry(func() (int, error) {
		return unix.Openat(d.fd, name, readFlags|unix.O_NOFOLLOW, 0)
	})
	if err != nil {
		return -1, st, &fs.PathError{Op: "read", Path: d.join(name), Err: d.why(name, err)}
	}
	return fd, st, nil
}

// readFlags: O_NONBLOCK so that a name swapped for a FIFO between the
// stat and the open does not hang the open; O_NOCTTY so a terminal device
// never becomes the controlling terminal.
const readFlags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC

func regular(st unix.Stat_t) error {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return nil
	case unix.S_IFLNK:
		return ErrSymlink
	}
	return ErrNotRegular
}

func readPath(path string, max int64, follow bool) ([]byte, error) {
	var st unix.Stat_t
	var err error
	flags := readFlags
	if follow {
		err = unix.Stat(path, &st)
	} else {
		err = unix.Lstat(path, &st)
		flags |= unix.O_NOFOLLOW
	}
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	// Checked before the open: opening some devices has effects of its own.
	if err := regular(st); err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	fd, err := openRetry(func() (int, error) { return unix.Open(path, flags, 0) })
	if err != nil {
		if err == unix.ELOOP {
			err = ErrSymlink
		}
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	return readFd(fd, path, st, max)
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

// checkFd checks that the open fd is the regular file that was stat'ed
// (not something swapped in between) and at most max bytes; it returns
// the file's stat.
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

// Nlink is the number of hard links of the file at path (not following a
// symlink); 0 when it cannot be stat'ed.
func Nlink(path string) uint64 {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil {
		return 0
	}
	return uint64(st.Nlink)
}
