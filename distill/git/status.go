package git

import (
	"bytes"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	fdiff "github.com/go-git/go-git/v5/plumbing/format/diff"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// What the manual path (handoff, capture) reads besides States: the
// changed tracked files, like `git status --short` without untracked
// files (the session's own new files come from States; walking the tree
// for the others and evaluating every .gitignore is what `git status`
// spends its time on), recent commits, and one file's diff against HEAD.

const maxDiffInput = 1 << 20 // either side of a diff

// Status lists the tracked files whose index entry differs from HEAD (X)
// or whose work-tree file differs from the index (Y) as "XY path" lines
// sorted by path: M modified, A added, D deleted, U unmerged. ok is false
// when it could not be told (no index, HEAD unreadable, out of time).
func (r *Repo) Status(deadline time.Time) (lines []string, ok bool) {
	if r == nil || r.noHead || r.index == nil {
		return nil, false
	}
	defer runtime.KeepAlive(r)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverTo(&ok, false)
	var idx index.Index
	if index.NewDecoder(bytes.NewReader(r.index)).Decode(&idx) != nil {
		return nil, false
	}
	o := openStore(r.gitDir, deadline)
	defer o.close()
	head, err := r.headFiles(o, "")
	if err != nil {
		return nil, false
	}
	seen, dirs := map[string]bool{}, map[string]bool{}
	for _, e := range idx.Entries {
		if time.Now().After(deadline) {
			return nil, false
		}
		if seen[e.Name] || !fs.ValidPath(e.Name) {
			continue
		}
		seen[e.Name] = true
		xy := []byte("UU") // a conflict (go-git's Merged is stage 1, not 0)
		if h, in := head[e.Name]; e.Stage == 0 {
			xy = []byte("  ")
			if !in {
				xy[0] = 'A'
			} else if h.id != e.Hash {
				xy[0] = 'M'
			}
			if !e.SkipWorktree && e.Mode != filemode.Submodule {
				xy[1] = r.worktree(e, dirs)
			}
		}
		if string(xy) != "  " {
			lines = append(lines, string(xy)+" "+e.Name)
		}
	}
	for p := range head {
		if !seen[p] {
			lines = append(lines, "D  "+p)
		}
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i][3:] < lines[j][3:] })
	return lines, true
}

// worktree is the Y column for an index entry: ' ' unchanged, 'M', 'D'.
// A file below a symlink to a directory outside the work tree (a crafted
// index can name one) is never read; it shows as deleted, as git shows it.
func (r *Repo) worktree(e *index.Entry, dirs map[string]bool) byte {
	dir := path.Dir(e.Name)
	if _, ok := dirs[dir]; !ok {
		dirs[dir] = within(r.top, filepath.Join(r.top, filepath.FromSlash(dir)))
	}
	abs := filepath.Join(r.top, filepath.FromSlash(e.Name))
	fi, err := os.Lstat(abs)
	switch {
	case !dirs[dir] || err != nil:
		return 'D'
	case unchanged(abs, fi, *e):
		return ' '
	}
	return 'M'
}

// headFiles is HEAD's tree flattened to path → entry (only the path want
// when want is not ""); empty before the first commit.
func (r *Repo) headFiles(o *store, want string) (map[string]treeEntry, error) {
	out := map[string]treeEntry{}
	if r.head.IsZero() {
		return out, nil
	}
	c, err := o.commit(r.head)
	if err == nil {
		err = o.flatten(c.tree, "", want, out, 0)
	}
	return out, err
}

// Diff is the unified diff (three lines of context) of the file at p
// between HEAD and the work tree, "" when there is none or it cannot be
// told (either side over 1 MB, a FIFO or device, below a symlink out of
// the work tree, unreadable objects, out of time), "Binary files … differ"
// for binary content. go-git's utils/diff matches the lines and its
// unified encoder writes the hunks (its init compiles one regexp:
// 0.05 ms per process, measured with GODEBUG=inittrace=1).
func (r *Repo) Diff(p string, deadline time.Time) (out string) {
	if r == nil || r.noHead {
		return ""
	}
	rel, ok := r.rel(p)
	abs := filepath.Join(r.top, filepath.FromSlash(rel))
	if !ok || rel == "." || !within(r.top, filepath.Dir(abs)) {
		return ""
	}
	defer recoverTo(&out, "")
	o := openStore(r.gitDir, deadline)
	defer o.close()
	head, err := r.headFiles(o, rel)
	if err != nil {
		return ""
	}
	var old, cur []byte
	var from, to fdiff.File // nil: /dev/null
	if e, found := head[rel]; found {
		typ, b, err := o.read(e.id, 0)
		if err != nil || typ != plumbing.BlobObject || len(b) > maxDiffInput {
			return ""
		}
		old, from = b, file{rel, e.id, e.mode}
	}
	if fi, err := os.Lstat(abs); err == nil {
		b, ok := worktreeBlob(abs, fi, maxDiffInput)
		mode, _ := filemode.NewFromOSFileMode(fi.Mode())
		if !ok {
			return ""
		}
		cur, to = b, file{rel, plumbing.ComputeHash(plumbing.BlobObject, b), mode}
	}
	if from == nil && to == nil || from != nil && to != nil && bytes.Equal(old, cur) {
		return ""
	}
	fp := patch{from: from, to: to, binary: bytes.IndexByte(old, 0) >= 0 || bytes.IndexByte(cur, 0) >= 0}
	for _, d := range diff.DoWithTimeout(string(old), string(cur), max(time.Until(deadline), time.Millisecond)) {
		op := map[diffmatchpatch.Operation]fdiff.Operation{diffmatchpatch.DiffInsert: fdiff.Add, diffmatchpatch.DiffDelete: fdiff.Delete}[d.Type]
		fp.chunks = append(fp.chunks, chunk{d.Text, op})
	}
	var b strings.Builder
	fdiff.NewUnifiedEncoder(&b, fdiff.DefaultContextLines).Encode(fp)
	return b.String()
}

// patch, file and chunk are one file's change in the shape go-git's
// unified encoder takes.
type patch struct {
	from, to fdiff.File
	chunks   []fdiff.Chunk
	binary   bool
}

func (p patch) FilePatches() []fdiff.FilePatch  { return []fdiff.FilePatch{p} }
func (p patch) Message() string                 { return "" }
func (p patch) IsBinary() bool                  { return p.binary }
func (p patch) Files() (fdiff.File, fdiff.File) { return p.from, p.to }
func (p patch) Chunks() []fdiff.Chunk           { return p.chunks }

type file struct {
	path string
	id   plumbing.Hash
	mode filemode.FileMode
}

func (f file) Hash() plumbing.Hash     { return f.id }
func (f file) Mode() filemode.FileMode { return f.mode }
func (f file) Path() string            { return f.path }

type chunk struct {
	text string
	op   fdiff.Operation
}

func (c chunk) Content() string       { return c.text }
func (c chunk) Type() fdiff.Operation { return c.op }

// Commit is one entry of Log.
type Commit struct {
	ID      string // short id, 7 digits
	Message string
	When    time.Time
}

// Log is HEAD's n newest commits by committer time, newest first, as
// `git log -n` lists them (except for a clock skewed behind a parent),
// from the 4n read breadth first; nil when HEAD is unknown or its history
// unreadable before the first.
func (r *Repo) Log(n int, deadline time.Time) (out []Commit) {
	if r == nil || r.head.IsZero() || n <= 0 {
		return nil
	}
	defer recoverTo(&out, nil)
	o := openStore(r.gitDir, deadline)
	defer o.close()
	cs, _, _ := o.walk(r.head, 4*n, nil)
	slices.SortStableFunc(cs, func(a, b *commit) int { return b.when.Compare(a.when) })
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, Commit{ID: c.id.String()[:7], Message: c.message, When: c.when})
	}
	return out
}
