//go:build !windows

package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Dir is an open directory; names are resolved relative to it.
type Dir struct {
	fd   int
	path string
}

const nameSeps = "/" // what separates path elements

// OpenDir opens the existing directory path, following symlinks (the caller
// chose it: a project root, $CARRYOVER_HOME).
func OpenDir(path string) (*Dir, error) {
	fd, err := openat(unix.AT_FDCWD, path, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{fd: fd, path: path}, nil
}

func (d *Dir) Close() error {
	if d == nil || d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	return err
}

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
	fd, err := openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
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
	if st, serr := lstatAt(dirfd, name); serr == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR && st.Mode&unix.S_IFMT != unix.S_IFREG {
		return regular(st)
	}
	return err
}

// Write replaces name in d with data atomically: readers see the old or the
// new file, never a torn one. A symlink or anything but a regular file there
// is refused (the rename would only replace the link, but a planted link is
// worth a line in the log). A hard-linked target is replaced, not rewritten:
// the other links keep the old bytes.
func (d *Dir) Write(name string, data []byte, o Options) error {
	if err := checkName(name); err != nil {
		return err
	}
	mode, exists, err := d.targetMode(name, o)
	if err != nil {
		return err
	}
	if o.Recycle && exists && !o.Sync && renameat2 != nil {
		if done, err := d.writeRecycled(name, data, mode); done {
			return err
		}
	}
	tmp, f, err := d.createTemp(name)
	if err != nil {
		return err
	}
	switch err := fillTemp(f, data, mode, o.Sync); {
	case err != nil:
		_ = unix.Unlinkat(d.fd, tmp, 0)
		return err
	case o.Recycle && exists:
		return d.swapIn(tmp, name)
	}
	return d.rename(tmp, name)
}

// rename moves tmp over name, deleting tmp when it cannot.
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
	st, err := lstatAt(d.fd, name)
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

// createTemp makes a new 0600 temp file for name in d (O_EXCL|O_NOFOLLOW).
func (d *Dir) createTemp(name string) (string, *os.File, error) {
	for range 10 {
		tmp := tempName(name)
		fd, err := openat(d.fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW, 0o600)
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
// older than age, when provably one: the temp name pattern and private (git
// checks files out 0644 or 0755, never 0600).
func (d *Dir) RemoveStaleTemps(age time.Duration) {
	names, _ := d.Names()
	for _, n := range names {
		if !isTempName(n) {
			continue
		}
		if st, err := lstatAt(d.fd, n); err == nil && private(st) && time.Since(time.Unix(st.Mtim.Unix())) > age {
			_ = unix.Unlinkat(d.fd, n, 0)
		}
	}
}

// Names lists d's entries (unsorted).
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
	st, err := lstatAt(d.fd, name)
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

// MapFile is ReadFile mapping the file read-only instead of copying it: for
// a big file of which a small part is read (a 10,000-file repository's git
// index is 0.8 MB; reading it whole cost a hook ~200 fresh pages and a
// copy). Unmap releases it. A file truncated while mapped faults past its
// new end: its reader runs with debug.SetPanicOnFault and recovers.
func (d *Dir) MapFile(name string, max int64) ([]byte, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	fd, size, err := openAt(d.fd, name, d.join(name), "read", false, max)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if size == 0 {
		return []byte{}, nil
	}
	b, err := unix.Mmap(fd, 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: d.join(name), Err: err}
	}
	return b, nil
}

// Unmap releases what MapFile mapped.
func Unmap(b []byte) {
	if cap(b) > 0 {
		_ = unix.Munmap(b)
	}
}

func (d *Dir) open(name, op string, max int64) (*os.File, int64, error) {
	if err := checkName(name); err != nil {
		return nil, 0, err
	}
	return openFile(d.fd, name, d.join(name), op, false, max)
}

func openPath(path, op string, follow bool, max int64) (*os.File, int64, error) {
	return openFile(unix.AT_FDCWD, path, path, op, follow, max)
}

func openFile(dirfd int, name, path, op string, follow bool, max int64) (*os.File, int64, error) {
	fd, size, err := openAt(dirfd, name, path, op, follow, max)
	if err != nil {
		return nil, 0, err
	}
	return os.NewFile(uintptr(fd), path), size, nil
}

// openAt opens name relative to dirfd (AT_FDCWD: a path) for reading: a
// regular file (through a symlink only when follow is set) of at most max
// bytes, stat'ed before the open (opening some devices has effects of its
// own) and after it (a file swapped in between is refused). O_NONBLOCK: a
// FIFO swapped in after the stat does not hang the open; O_NOCTTY: a
// terminal never becomes the controlling terminal.
func openAt(dirfd int, name, path, op string, follow bool, max int64) (int, int64, error) {
	var before, st unix.Stat_t
	flags, statFlags := unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_NOFOLLOW, unix.AT_SYMLINK_NOFOLLOW
	if follow {
		flags, statFlags = flags&^unix.O_NOFOLLOW, 0
	}
	err := unix.Fstatat(dirfd, name, &before, statFlags)
	if err == nil {
		err = regular(before)
	}
	fd := -1
	if err == nil {
		if fd, err = openat(dirfd, name, flags, 0); err != nil {
			err = why(dirfd, name, err)
		}
	}
	if err == nil {
		err = unix.Fstat(fd, &st)
	}
	switch {
	case err != nil:
	case regular(st) != nil:
		err = regular(st)
	case st.Dev != before.Dev || st.Ino != before.Ino:
		err = errors.New("was replaced while being read")
	case st.Size > max:
		err = fmt.Errorf("%w (%d bytes; the limit is %d)", ErrTooLarge, st.Size, max)
	default:
		return fd, st.Size, nil
	}
	if fd >= 0 {
		unix.Close(fd)
	}
	return -1, 0, &fs.PathError{Op: op, Path: path, Err: err}
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

func lstatAt(dirfd int, name string) (st unix.Stat_t, err error) {
	return st, unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
}

// openat is unix.Openat (O_CLOEXEC) retried when a signal interrupts it (the
// Go runtime's preemption signals can interrupt a slow open).
func openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	for {
		if fd, err := unix.Openat(dirfd, name, flags|unix.O_CLOEXEC, mode); err != unix.EINTR {
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
	fd, err := openat(unix.AT_FDCWD, path, unix.O_WRONLY|unix.O_APPEND|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
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

// Nlink is the number of hard links of path (a symlink's own); 0 when unknown.
func Nlink(path string) uint64 {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil {
		return 0
	}
	return uint64(st.Nlink)
}

// FileID is an open file's identity (device, inode; on Windows the volume
// serial and file index): a file replaced under its name has another one.
// Zeros when the platform does not say.
func FileID(f *os.File) (dev, ino uint64) {
	if fi, err := f.Stat(); err == nil {
		return StatID(fi)
	}
	return 0, 0
}

// StatID is FileID from a stat (zeros on Windows: no file index there).
func StatID(fi os.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}

// Recycled writes (Options.Recycle). Replacing a file by a new temp file
// allocates an inode and frees one per write; on ext4 that is the dear part
// of a hook's writes (the rename forces the new blocks' allocation, frees the
// old with a discard on a `discard` mount, and without a journal new inodes
// skip those freed in the last minutes, reading their table blocks: 0.9 ms
// per write after a few hundred turns in the benchmark VM, 30 µs recycled).
// So a directory keeps two inodes in rotation, the live file and a spare: a
// write claims the spare under a fresh temp name (a rename: one writer gets
// it), makes sure nobody holds it open (a write lease is granted only then),
// rewrites it in place, swaps it with the target (RENAME_EXCHANGE) and keeps
// the old inode as the next spare. Readers see the old or the new file: the
// file rewritten in place is open nowhere and reachable only under
// carryover's names. When a step fails, the write takes a new temp file.
// Linux only: renameat2 is nil elsewhere (recycle_*.go).

// spareName is the spare inode's name; not a temp name (RemoveStaleTemps keeps it).
const spareName = ".carryover-spare"

// writeRecycled writes data as name through the directory's spare; done is
// false when it could not (nothing changed; the caller takes a temp file).
func (d *Dir) writeRecycled(name string, data []byte, mode os.FileMode) (done bool, err error) {
	if st, err := lstatAt(d.fd, spareName); err != nil || !private(st) {
		return false, nil // no spare, or a file carryover did not make: left alone
	}
	tmp := tempName(name) // a claim a killed process left behind is a stale temp
	if renameat2(d.fd, spareName, d.fd, tmp, renameNoReplace) != nil {
		return false, nil // another writer claimed it
	}
	// Checked again on the open file (it may have been swapped since the
	// stat); a write lease is granted only while no other descriptor has the
	// file open: no reader of an earlier version is still at it.
	var st unix.Stat_t
	fd, err := openat(d.fd, tmp, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil || unix.Fstat(fd, &st) != nil || !private(st) || setLease(fd, unix.F_WRLCK) != nil {
		if err == nil {
			unix.Close(fd)
		}
		_ = renameat2(d.fd, tmp, d.fd, spareName, renameNoReplace) // put back (or left a stale temp)
		return false, nil
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, werr := f.WriteAt(data, 0)
	if werr == nil {
		werr = f.Truncate(int64(len(data)))
	}
	if werr == nil && mode != 0o600 {
		werr = f.Chmod(mode)
	}
	_ = setLease(fd, unix.F_UNLCK)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = unix.Unlinkat(d.fd, tmp, 0) // half rewritten: carryover's own file, dropped
		return false, nil               // the caller tries a new temp file
	}
	return true, d.swapIn(tmp, name)
}

// swapIn puts the written temp file tmp in place of name and keeps name's
// old inode as the directory's spare when it is private. Without an
// exchange (not Linux, an old kernel, a filesystem without it) or with name
// gone: a plain rename.
func (d *Dir) swapIn(tmp, name string) error {
	if renameat2 == nil || renameat2(d.fd, tmp, d.fd, name, renameExchange) != nil {
		return d.rename(tmp, name)
	}
	// tmp now names the old inode.
	if st, err := lstatAt(d.fd, tmp); err != nil || !private(st) || renameat2(d.fd, tmp, d.fd, spareName, renameNoReplace) != nil {
		_ = unix.Unlinkat(d.fd, tmp, 0) // not ours to reuse, or a spare is there already
	}
	return nil
}

// private: a regular 0600 file of this user with one link, what carryover
// creates its own files as and git never checks out (a shipped spare or
// temp name is not claimed or deleted).
func private(st unix.Stat_t) bool {
	return st.Mode&unix.S_IFMT == unix.S_IFREG && st.Mode&0o777 == 0o600 && st.Nlink == 1 && st.Uid == uint32(os.Getuid())
}

func setLease(fd, lease int) error {
	_, err := unix.FcntlInt(uintptr(fd), fSetLease, lease)
	return err
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
