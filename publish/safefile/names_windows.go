package safefile

import (
	"io/fs"
	"os"
)

// Names lists the entries of d (unsorted).
func (d *Dir) Names() ([]string, error) {
	f, err := os.Open(d.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// Remove deletes the entry name of d: a regular file, or a symlink itself
// (never what it points to). Anything else is refused.
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
