package publish

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// WriteAtomic writes data to path through a temp file in the same directory
// and a rename, so readers see the old or the new file, never a torn one.
// A symlinked path is written through to its target. New files are 0600.
func WriteAtomic(path string, data []byte) error { return writeAtomic(path, data, 0o600) }

// writeAtomic is WriteAtomic with the mode for a new file (an existing
// file keeps its mode).
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	// No fsync: the rename alone gives readers the old or the new file
	// after a crash of carryover (what the kill -9 tests check); flushing
	// to the platter on every hook would cost more than the whole snapshot.
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	return nil
}

// Dir is a project's .carryover directory.
func Dir(project string) string { return filepath.Join(project, ".carryover") }

// HandoffPath is a project's handoff.md.
func HandoffPath(project string) string { return filepath.Join(Dir(project), "handoff.md") }

// EnsureDir creates <project>/.carryover (0700) with a .gitignore of its
// own ignoring everything in it, so nothing in it is committed even before
// the project's .gitignore is touched.
func EnsureDir(project string) error {
	d := Dir(project)
	if err := os.MkdirAll(d, 0o700); err != nil {
		return err
	}
	gi := filepath.Join(d, ".gitignore")
	if _, err := os.Lstat(gi); errors.Is(err, fs.ErrNotExist) {
		return WriteAtomic(gi, []byte("# Carryover (auto-added): local handoff state, never commit\n*\n"))
	}
	removeStaleTemps(d)
	return nil
}

// staleTemp is the age after which a temp file of WriteAtomic is known to
// be left over by a killed process (no write takes this long).
const staleTemp = time.Minute

// removeStaleTemps deletes WriteAtomic temp files (".name.tmp*") that a
// process killed mid-write left in dir.
func removeStaleTemps(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, ".") || !strings.Contains(n, ".tmp") || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleTemp {
			_ = os.Remove(filepath.Join(dir, n))
		}
	}
}

// PointerBlock is the static block carryover keeps in AGENTS.md, CLAUDE.md
// and GEMINI.md. It is identical in every project and never carries task data.
const PointerBlock = `<!--CARRYOVER:START-->
# Carryover handoff
If ` + "`.carryover/handoff.md`" + ` exists in this project, read it before starting
work — it contains a bounded handoff from the previous session.
If that file does not exist, no recent session was captured.
<!--CARRYOVER:END-->
`

const (
	startMarker = "<!--CARRYOVER:START-->"
	endMarker   = "<!--CARRYOVER:END-->"
)

// userFileMode is the mode of a project file carryover creates for the
// user (AGENTS.md, CLAUDE.md, .gitignore): the project's files are meant to
// be committed and shared, unlike carryover's own state (0600).
const userFileMode = 0o644

// MaxUserFile is the largest AGENTS.md/CLAUDE.md/.gitignore carryover edits.
const MaxUserFile = 1 << 20

// ErrLeftAlone wraps every reason a user file was deliberately not touched.
var ErrLeftAlone = errors.New("left unchanged")

func leftAlone(path, why string) error {
	return fmt.Errorf("%s %w: %s", path, ErrLeftAlone, why)
}

// EnsurePointer makes sure path contains PointerBlock: creates the file if
// missing, appends the block if absent, and leaves it untouched if present.
// Every byte outside the block is preserved (CRLF, BOM, no trailing
// newline). A damaged marker pair, a huge, non-regular or read-only file is
// left alone with an ErrLeftAlone error saying why. changed reports a write.
func EnsurePointer(path string) (changed bool, err error) {
	data, err := readUserFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, writeAtomic(path, []byte(PointerBlock), userFileMode)
	}
	if err != nil {
		return false, err
	}
	starts, ends := bytes.Count(data, []byte(startMarker)), bytes.Count(data, []byte(endMarker))
	switch {
	case starts == 1 && ends == 1 && bytes.Index(data, []byte(startMarker)) < bytes.Index(data, []byte(endMarker)):
		return false, nil // present
	case starts != 0 || ends != 0:
		return false, leftAlone(path, "its carryover marker block is damaged (START/END do not pair up); fix or remove the markers by hand")
	}
	block := []byte(PointerBlock)
	crlf := bytes.Contains(data, []byte("\r\n"))
	if crlf {
		block = bytes.ReplaceAll(block, []byte("\n"), []byte("\r\n"))
	}
	nl := []byte("\n")
	if crlf {
		nl = []byte("\r\n")
	}
	out := make([]byte, 0, len(data)+len(block)+4)
	out = append(out, data...)
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		out = append(out, nl...)
	}
	if len(data) > 0 {
		out = append(out, nl...)
	}
	out = append(out, block...)
	if err := checkWritable(path); err != nil {
		return false, err
	}
	return true, WriteAtomic(path, out)
}

// readUserFile reads a user-owned file carryover may edit, refusing
// non-regular and oversized files.
func readUserFile(path string) ([]byte, error) {
	if li, err := os.Lstat(path); err == nil && li.Mode()&os.ModeSymlink != 0 {
		// A symlink is followed only to an existing file in the same
		// project; a dangling link or one leading elsewhere (a dotfiles
		// repo, another project) is the user's arrangement, not ours.
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, leftAlone(path, "it is a symlink whose target cannot be resolved")
		}
		dir, err := filepath.EvalSymlinks(filepath.Dir(path))
		if err != nil || !strings.HasPrefix(target, dir+string(filepath.Separator)) {
			return nil, leftAlone(path, "it is a symlink to a file outside the project")
		}
	}
	fi, err := os.Stat(path) // follows an in-project symlink: we edit the target
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, leftAlone(path, "it is not a regular file")
	}
	if fi.Size() > MaxUserFile {
		return nil, leftAlone(path, fmt.Sprintf("it is larger than %d bytes", MaxUserFile))
	}
	return os.ReadFile(path)
}

func checkWritable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o200 == 0 {
		return leftAlone(path, "it is read-only")
	}
	return nil
}

// GitignoreComment heads the line carryover adds to .gitignore.
const GitignoreComment = "# Carryover (auto-added)"

// EnsureGitignore adds ".carryover/" to project/.gitignore once, under
// GitignoreComment. An existing entry for .carryover is respected.
func EnsureGitignore(project string) (bool, error) {
	path := filepath.Join(project, ".gitignore")
	data, err := readUserFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, writeAtomic(path, []byte(GitignoreComment+"\n.carryover/\n"), userFileMode)
	}
	if err != nil {
		return false, err
	}
	for _, l := range bytes.Split(data, []byte("\n")) {
		l = bytes.TrimSpace(l)
		switch string(l) {
		case ".carryover", ".carryover/", "/.carryover", "/.carryover/", ".carryover/*", "/.carryover/*":
			return false, nil
		}
	}
	nl := "\n"
	if bytes.Contains(data, []byte("\r\n")) {
		nl = "\r\n"
	}
	out := append([]byte{}, data...)
	if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, nl...)
	}
	out = append(out, GitignoreComment+nl+".carryover/"+nl...)
	if err := checkWritable(path); err != nil {
		return false, err
	}
	return true, WriteAtomic(path, out)
}
