package safefile

import (
	"os"

	"golang.org/x/sys/unix"
)

// Recycled writes (Options.Recycle). Replacing a file by a new temp file
// allocates an inode and frees one per write; on ext4 that is the dear part
// of a hook's writes (the rename forces the new blocks' allocation, frees
// the old with a discard on a `discard` mount, and without a journal new
// inodes skip those freed in the last minutes, reading their table blocks:
// 0.9 ms per write after a few hundred turns in the benchmark VM, 30 µs
// recycled). So a directory keeps two inodes in rotation, the live file and
// a spare: a write claims the spare under a fresh temp name (a rename: one
// writer gets it), makes sure nobody holds it open (a write lease is
// granted only then), rewrites it in place, swaps it with the target
// (RENAME_EXCHANGE) and keeps the old inode as the next spare. Readers see
// the old or the new file, never a torn one: the file rewritten in place is
// open nowhere and reachable only under carryover's names. When any step is
// not possible, the write falls back to a new temp file.

// spareName is the spare inode's name in a directory; it is not a temp
// name (RemoveStaleTemps keeps it).
const spareName = ".carryover-spare"

// writeRecycled writes data as name through the directory's spare. done
// is false when the spare could not be used (nothing was changed; the
// caller writes a new temp file).
func (d *Dir) writeRecycled(name string, data []byte, mode os.FileMode) (done bool, err error) {
	var st unix.Stat_t
	if unix.Fstatat(d.fd, spareName, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || !privateStat(st) {
		return false, nil // no spare, or a file carryover did not make: left alone
	}
	tmp := tempName(name) // a claim a killed process left behind is a stale temp
	if unix.Renameat2(d.fd, spareName, d.fd, tmp, unix.RENAME_NOREPLACE) != nil {
		return false, nil // another writer claimed it
	}
	fd, err := openRetry(func() (int, error) {
		return unix.Openat(d.fd, tmp, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		d.putBack(tmp)
		return false, nil
	}
	// Checked again on the open file (it may have been swapped since the
	// stat), and a write lease is granted only while no other descriptor
	// has the file open: no reader of an earlier version is still at it.
	if unix.Fstat(fd, &st) != nil || !privateStat(st) || setLease(fd, unix.F_WRLCK) != nil {
		unix.Close(fd)
		d.putBack(tmp)
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

// putBack returns a claimed spare that could not be used to its name (or
// leaves it under the temp name when another spare took its place).
func (d *Dir) putBack(tmp string) {
	_ = unix.Renameat2(d.fd, tmp, d.fd, spareName, unix.RENAME_NOREPLACE)
}

// swapIn puts the written temp file tmp in place of name and keeps name's
// old inode as the directory's spare when it is a private one (one link,
// this user's, not open anywhere is checked when it is claimed).
func (d *Dir) swapIn(tmp, name string) error {
	err := unix.Renameat2(d.fd, tmp, d.fd, name, unix.RENAME_EXCHANGE)
	if err != nil {
		// No exchange here (an old kernel or a filesystem without it), or
		// name vanished: a plain rename, as a new temp file does.
		return d.rename(tmp, name)
	}
	// tmp now names the old inode.
	var st unix.Stat_t
	if unix.Fstatat(d.fd, tmp, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || !privateStat(st) ||
		unix.Renameat2(d.fd, tmp, d.fd, spareName, unix.RENAME_NOREPLACE) != nil {
		_ = unix.Unlinkat(d.fd, tmp, 0) // not ours to reuse, or a spare is there already
	}
	return nil
}

// privateStat: also mode 0600, what carryover creates its own files with
// and git never checks out (a spare a repository shipped is not claimed).
func privateStat(st unix.Stat_t) bool {
	return st.Mode&unix.S_IFMT == unix.S_IFREG && st.Mode&0o777 == 0o600 && st.Nlink == 1 && st.Uid == uint32(os.Getuid())
}

func setLease(fd, lease int) error {
	_, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, lease)
	return err
}
