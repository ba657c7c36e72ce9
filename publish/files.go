package publish

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish/safefile"
)

// WriteAtomic writes data to path (temp file and rename: never a torn
// file) under a directory carryover trusts ($CARRYOVER_HOME); a symlink as
// path is refused. A project's .carryover goes through WriteOwn.
func WriteAtomic(path string, data []byte) error {
	return safefile.WriteFile(path, data, ownFile)
}

// ownFile is how carryover writes its own files: 0600, the previous version's
// inode recycled for the next (safefile.Options.Recycle: a rename over a
// file costs ext4 an inode and blocks allocated and freed, ~0.15-0.9 ms a
// write on the benchmark VM, ~30 µs recycled).
var ownFile = safefile.Options{Mode: 0o600, Recycle: true}

// Dir is a project's .carryover directory.
func Dir(project string) string { return filepath.Join(project, ".carryover") }

// HandoffPath is a project's handoff.md.
func HandoffPath(project string) string { return filepath.Join(Dir(project), "handoff.md") }

// OwnGitignore is .carryover/.gitignore: everything in the directory is
// ignored, whatever the project's own ignore rules say (a deeper
// .gitignore wins over a `!.carryover/…` negation higher up).
const OwnGitignore = "# Carryover (auto-added): local handoff state, never commit\n*\n"

// ErrProjectGone is returned when the project directory no longer exists:
// carryover never re-creates it.
var ErrProjectGone = errors.New("the project directory does not exist (deleted or moved?); carryover does not re-create it")

// OpenDir opens <project>/.carryover for writing, creating it (0700) with
// a .gitignore of its own ignoring everything in it (nothing in it is
// committed, whatever the project's .gitignore says). The project itself
// is never created; a symlinked .carryover or .gitignore is refused. Temp
// files a killed carryover left there are removed.
func OpenDir(project string) (*safefile.Dir, error) {
	d, err := ownDir(project, true)
	if err != nil {
		return nil, err
	}
	if b, err := d.ReadFile(".gitignore", 4<<10); err != nil || !ignoresAll(b) {
		if err := d.Write(".gitignore", []byte(OwnGitignore), safefile.Options{Mode: 0o600}); err != nil {
			d.Close()
			return nil, err
		}
	}
	d.RemoveStaleTemps(staleTemp)
	return d, nil
}

// ownDir opens project/.carryover (create: creating it, 0700), following
// neither it nor the project as a symlink. A missing project is
// ErrProjectGone when creating.
func ownDir(project string, create bool) (*safefile.Dir, error) {
	pd, err := safefile.OpenDir(project)
	if create && errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", project, ErrProjectGone)
	} else if err != nil {
		return nil, err
	}
	defer pd.Close()
	return pd.Sub(".carryover", create, 0o700)
}

// ignoresAll reports whether a .gitignore ignores every name in its
// directory and re-includes none.
func ignoresAll(b []byte) bool {
	all := false
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "*":
			all = true
		case strings.HasPrefix(l, "!"):
			return false
		}
	}
	return all
}

// EnsureDir is OpenDir for a caller that only needs the directory to exist.
func EnsureDir(project string) error {
	d, err := OpenDir(project)
	if err != nil {
		return err
	}
	return d.Close()
}

// WriteOwn writes one of carryover's own files (handoff.md, RESUME.*,
// session.json) into <project>/.carryover atomically, 0600, never through
// a symlink, never one git tracks (ErrTracked).
func WriteOwn(project, name string, data []byte) error {
	p := filepath.Join(Dir(project), name)
	if fi, err := os.Lstat(p); (err != nil || fi.Mode()&os.ModeSymlink == 0) && distill.OpenRepo(project).Tracked(p) {
		return trackedErr(p) // (a symlink is refused as one below, tracked or not)
	}
	d, err := OpenDir(project)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Write(name, data, ownFile)
}

// MaxHandoffFile is the most of a handoff.md carryover reads; a rendered
// one is capped at MaxChars (4,000) characters.
const MaxHandoffFile = 256 << 10

// ReadHandoffFile reads <project>/.carryover/handoff.md without following a
// symlink (neither .carryover nor handoff.md), refusing a FIFO or device
// and a file over MaxHandoffFile. A missing file wraps fs.ErrNotExist.
func ReadHandoffFile(project string) ([]byte, error) {
	return ReadOwnFile(project, "handoff.md", MaxHandoffFile)
}

// staleTemp is the age after which a temp file is known to be left over
// by a killed process (no write takes this long).
const staleTemp = time.Minute

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
	changed, _, _, err = ensurePointer(path)
	return changed, err
}

// ensurePointer is EnsurePointer returning the file before (nil: it did
// not exist) and what it wrote.
func ensurePointer(path string) (changed bool, prior, out []byte, err error) {
	path, prior, err = readUserFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil, []byte(PointerBlock), writeUserFile(path, []byte(PointerBlock))
	}
	if err != nil {
		return false, nil, nil, err
	}
	out, foreign, err := withPointer(path, prior)
	if out == nil || err != nil {
		return false, prior, nil, err
	}
	if err := checkWritable(path); err != nil {
		return false, prior, nil, err
	}
	if err := writeUserFile(path, out); err != nil {
		return false, prior, nil, err
	}
	if foreign {
		return true, prior, out, fmt.Errorf("%s %w", path, ErrForeignPointer)
	}
	return true, append([]byte{}, prior...), out, nil
}

// withPointer is data with carryover's block: appended after a blank line
// when there is none, or written over a marker block whose content is not
// carryover's (foreign: a repository can ship an AGENTS.md whose
// "carryover" block tells every agent what to do, issue 21). nil: the
// block is there already.
func withPointer(path string, data []byte) (out []byte, foreign bool, err error) {
	starts, ends := bytes.Count(data, []byte(startMarker)), bytes.Count(data, []byte(endMarker))
	i, j := bytes.Index(data, []byte(startMarker)), bytes.Index(data, []byte(endMarker))+len(endMarker)
	block, nl := pointerBlockLike(data)
	switch {
	case starts == 1 && ends == 1 && i < j && ownPointer(data[i:j]):
		return nil, false, nil
	case starts == 1 && ends == 1 && i < j:
		block = bytes.TrimSuffix(block, nl)
		return append(append(append(make([]byte, 0, len(data)+len(block)), data[:i]...), block...), data[j:]...), true, nil
	case starts != 0 || ends != 0:
		return nil, false, leftAlone(path, "its carryover marker block is damaged (START/END do not pair up); fix or remove the markers by hand")
	}
	out = append(make([]byte, 0, len(data)+len(block)+4), data...)
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		out = append(out, nl...)
	}
	if len(data) > 0 {
		out = append(out, nl...)
	}
	return append(out, block...), false, nil
}

// pointerBlockLike is PointerBlock and the line ending in the ending data
// uses (CRLF when it has one).
func pointerBlockLike(data []byte) (block, nl []byte) {
	if bytes.Contains(data, []byte("\r\n")) {
		return bytes.ReplaceAll([]byte(PointerBlock), []byte("\n"), []byte("\r\n")), []byte("\r\n")
	}
	return []byte(PointerBlock), []byte("\n")
}

// ErrForeignPointer is what EnsurePointer returns (with changed true) after
// it replaced text between its markers that was not its own block.
var ErrForeignPointer = errors.New("held text carryover did not write between its <!--CARRYOVER:START/END--> markers; replaced with carryover's own block")

// ownPointer reports whether block (START marker to END marker) is
// PointerBlock, in either line ending.
func ownPointer(block []byte) bool {
	return string(bytes.ReplaceAll(block, []byte("\r\n"), []byte("\n"))) == strings.TrimSuffix(PointerBlock, "\n")
}

// readUserFile reads a user file carryover may edit and returns the path
// to write back: path, or the target of a symlink inside the project (out
// of its .git). A link elsewhere or dangling, a non-regular file, one with
// other hard links (a rewrite would change or split them) or an oversized
// one is left alone with an ErrLeftAlone error. Reads never block.
func readUserFile(path string) (string, []byte, error) {
	if li, err := os.Lstat(path); err == nil && li.Mode()&os.ModeSymlink != 0 {
		// A symlink is followed only to an existing file in the same
		// project; a dangling link or one leading elsewhere (a dotfiles
		// repo, another project) is the user's arrangement, not ours.
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return path, nil, leftAlone(path, "it is a symlink whose target cannot be resolved")
		}
		dir, err := filepath.EvalSymlinks(filepath.Dir(path))
		if err != nil || !strings.HasPrefix(target, dir+string(filepath.Separator)) {
			return path, nil, leftAlone(path, "it is a symlink to a file outside the project")
		}
		if rel, _ := filepath.Rel(dir, target); slices.Contains(strings.Split(filepath.ToSlash(rel), "/"), ".git") {
			return path, nil, leftAlone(path, "it is a symlink into the repository's .git directory")
		}
		path = target
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return path, nil, err
	}
	switch {
	case !fi.Mode().IsRegular():
		return path, nil, leftAlone(path, "it is not a regular file")
	case safefile.Nlink(path) > 1:
		return path, nil, leftAlone(path, "it has other hard links, which a rewrite would change or split")
	case fi.Size() > MaxUserFile:
		return path, nil, leftAlone(path, fmt.Sprintf("it is larger than %d bytes", MaxUserFile))
	}
	b, err := safefile.ReadFileNoFollow(path, MaxUserFile)
	switch {
	case errors.Is(err, safefile.ErrTooLarge):
		return path, nil, leftAlone(path, fmt.Sprintf("it is larger than %d bytes", MaxUserFile))
	case errors.Is(err, safefile.ErrNotRegular), errors.Is(err, safefile.ErrSymlink):
		return path, nil, leftAlone(path, "it is not a regular file")
	}
	return path, b, err
}

// writeUserFile replaces a user file (resolved by readUserFile)
// atomically, keeping an existing file's mode; a new one is userFileMode.
func writeUserFile(path string, data []byte) error {
	return safefile.WriteFile(path, data, safefile.Options{Mode: userFileMode, KeepMode: true})
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

// GitignoreComment headed the line carryover before issue 24 added to the
// project's .gitignore (".carryover/"); `uninstall --purge` takes it out.
const GitignoreComment = "# Carryover (auto-added)"

// StripPointer removes carryover's own pointer block (EnsurePointer) from a
// memory file's text.
func StripPointer(s string) string {
	i, j := strings.Index(s, startMarker), strings.Index(s, endMarker)
	if i >= 0 && j > i {
		return s[:i] + s[j+len(endMarker):]
	}
	return s
}

// carryover's own files that the repository's git tracks (issue 21): the
// `*` .gitignore does not cover them, so a committed .carryover/RESUME.md
// would have the next `git commit -a` publish the user's session. Such a
// file is never written nor rotated away: refused, logged, listed by status.

// ErrTracked wraps the refusal to write one of carryover's own files that
// git tracks.
var ErrTracked = errors.New("is tracked by git (it came with the repository): a file written there would be committed; not written")

// ownNames are the files carryover writes directly under .carryover/.
var ownNames = []string{"handoff.md", "RESUME.md", "RESUME.yaml", "RESUME.json", "session.json"}

// trackedErr is the error for path, tracked by git.
func trackedErr(path string) error {
	return fmt.Errorf("%s %w (`git rm --cached %s` lets carryover use it)", path, ErrTracked, path)
}

// TrackedOwn lists carryover's own files under project/.carryover (and its
// history) that the project's git tracks, relative to the project.
func TrackedOwn(project string) []string {
	r := distill.OpenRepo(project)
	if r == nil {
		return nil
	}
	var out []string
	for _, n := range ownNames {
		if p := filepath.Join(Dir(project), n); r.Tracked(p) {
			out = append(out, filepath.Join(".carryover", n))
		}
	}
	ids, _ := HistoryIDs(project)
	for _, id := range ids {
		if p := filepath.Join(Dir(project), HistoryDir, id+".md"); r.Tracked(p) {
			out = append(out, filepath.Join(".carryover", HistoryDir, id+".md"))
		}
	}
	return out
}

// capturedKey is the sidecar key (files.go, below) of the session.json files
// `carryover capture` wrote for project, apart from its handoffs.
func capturedKey(project string) string { return project + "\x00session.json" }

// RecordCaptured records that carryover wrote b as project's session.json
// (before writing it, like RecordPublished for handoff.md).
func RecordCaptured(home, project string, b []byte) error {
	return RecordPublished(home, capturedKey(project), Digest(b))
}

// Captured reports whether b, read from project's session.json, is one
// carryover captured there (and unchanged since): a committed session.json
// is not a previous session.
func Captured(home, project string, b []byte) bool {
	return slices.Contains(sidecarDigests(SidecarPath(home, capturedKey(project))), Digest(b))
}

// ReadOwnFile reads project/.carryover/name without following a symlink
// (neither .carryover nor name), a regular file of at most max bytes.
func ReadOwnFile(project, name string, max int64) ([]byte, error) {
	d, err := ownDir(project, false)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.ReadFile(name, max)
}

// RemoveOwnFile removes project/.carryover/name without following a
// symlink (neither .carryover nor name: a planted link never makes
// carryover delete a file elsewhere), and never a file git tracks.
func RemoveOwnFile(project, name string) error {
	if distill.OpenRepo(project).Tracked(filepath.Join(Dir(project), name)) {
		return fmt.Errorf("%s: %w", filepath.Join(Dir(project), name), ErrTracked)
	}
	d, err := ownDir(project, false)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Remove(name)
}

// A .carryover/handoff.md that came with a repository is not a previous
// session: it is injected only when its hash is one carryover recorded when
// it published it, in the home: the ledger's `published` table, and a
// sidecar per project ($CARRYOVER_HOME/published/<hash of the path>) that
// a session start reads when another process holds the ledger.

// keepDigests is how many published digests a rewritten sidecar keeps
// (concurrent hooks may finish their writes in another order than they
// recorded them).
const keepDigests = 8

// sidecarMax is the most of a sidecar carryover reads; appends stop short
// of it, and the next record rewrites the file with the newest
// keepDigests (about 60 appends of a 65-byte line).
const sidecarMax = 4096

// Digest is the content hash recorded for a published handoff.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// SidecarPath is the file under home that lists the digests of project's
// published handoffs.
func SidecarPath(home, project string) string {
	sum := sha256.Sum256([]byte(project))
	return filepath.Join(home, "published", hex.EncodeToString(sum[:16]))
}

// RecordPublished adds digest to project's sidecar, newest last. Every
// Stop publishes, so the common case is one line appended to the file
// (safefile.Append: no temp file, no rename, ~0.2 ms less); a missing,
// full or odd file is rewritten atomically with the newest keepDigests.
// Like the rewrite, the append is not synced: the digests are what this
// carryover home published, and a crash loses at most the newest line
// (that handoff is then published again, not injected).
func RecordPublished(home, project, digest string) error {
	path := SidecarPath(home, project)
	if ok, err := safefile.Append(path, []byte(digest+"\n"), sidecarMax); ok || err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	var lines []string
	for _, d := range sidecarDigests(path) {
		if d != digest {
			lines = append(lines, d)
		}
	}
	lines = append(lines[max(0, len(lines)-(keepDigests-1)):], digest)
	// The first line names the project, for a person reading the file.
	return WriteAtomic(path, []byte("# "+OneLine(project)+"\n"+strings.Join(lines, "\n")+"\n"))
}

func sidecarDigests(path string) []string {
	b, err := safefile.ReadFile(path, sidecarMax) // under the home: a symlink there is the user's
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if len(l) == 64 && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// CheckHandoff says why b, read from project's handoff.md, must not be
// injected ("" when it is carryover's own): its digest is in the ledger
// (l, when not nil), or else in the sidecar under home (a ledger locked by
// another process, or rebuilt after damage).
func CheckHandoff(b []byte, home, project string, l *ledger.Ledger) string {
	if !strings.HasPrefix(string(b), HeaderPrefix) {
		return "it does not start with the carryover header"
	}
	d := Digest(b)
	if l != nil {
		if ok, err := l.HandoffTrusted(project, d); err == nil && ok {
			return ""
		}
	}
	if slices.Contains(sidecarDigests(SidecarPath(home, project)), d) {
		return ""
	}
	return "carryover did not write it, or it changed since (its content matches none of the handoffs carryover published for this project; a repository may have shipped it)"
}
