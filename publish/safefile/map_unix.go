//go:build !windows

package safefile

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// MapFile is ReadFile mapping the file into memory instead of copying it
// (read-only, shared with the page cache): for a big file of which the
// caller reads a small part, such as a git index where a hook looks up a
// few paths (a 10,000-file repository's index is 0.8 MB, and reading it
// whole cost a hook ~200 fresh pages and a copy). The same checks as
// ReadFile apply. Unmap releases the mapping. A file truncated while
// mapped faults when a byte past its new end is read: a reader of a file
// someone else may change runs with debug.SetPanicOnFault and recovers.
func (d *Dir) MapFile(name string, max int64) ([]byte, error) {
	fd, st, err := d.openRegular(name)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	now, err := checkFd(fd, d.join(name), st, max)
	if err != nil {
		return nil, err
	}
	if now.Size == 0 {
		return []byte{}, nil
	}
	b, err := unix.Mmap(fd, 0, int(now.Size), unix.PROT_READ, unix.MAP_SHARED)
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
