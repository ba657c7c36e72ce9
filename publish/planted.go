package publish

// carryover's own files under .carryover/ that the repository's git tracks
// (issue 21). .carryover/ carries its own `*` .gitignore, but a file git
// already tracks is not ignored: a repository that commits
// .carryover/RESUME.md would have the next `git commit -a` publish the
// user's session, which the hook writes by itself at a rate limit. Such a
// file is never written (nor rotated away): refused, logged, and listed by
// status.

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish/safefile"
)

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

// capturedKey is the sidecar key (trust.go) of the session.json files
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
	d := Digest(b)
	for _, s := range sidecarDigests(SidecarPath(home, capturedKey(project))) {
		if s == d {
			return true
		}
	}
	return false
}

// ReadOwnFile reads project/.carryover/name without following a symlink
// (neither .carryover nor name), a regular file of at most max bytes.
func ReadOwnFile(project, name string, max int64) ([]byte, error) {
	pd, err := safefile.OpenDir(project)
	if err != nil {
		return nil, err
	}
	defer pd.Close()
	d, err := pd.Sub(".carryover", false, 0)
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
	pd, err := safefile.OpenDir(project)
	if err != nil {
		return err
	}
	defer pd.Close()
	d, err := pd.Sub(".carryover", false, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Remove(name)
}
