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
