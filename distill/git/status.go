package git

import (
	"bytes"
	"fmt"
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
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// What the manual path (handoff, capture) reads besides States: the
// changed tracked files, like `git status --short` without untracked
// files (the session's own new files come from States; walking the tree
// for the others and evaluating every .gitignore is what `git status`
// spends its time on), and one file's diff against HEAD.

const (
	maxTreeEntries = 200_000 // of HEAD's tree, flattened
	maxDiffInput   = 1 << 20 // either side of a diff
)

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
	defer func() {
		if recover() != nil {
			lines, ok = nil, false
		}
	}()
	var idx index.Index
	if index.NewDecoder(bytes.NewReader(r.index)).Decode(&idx) != nil {
		return nil, false
	}
	head := map[string]plumbing.Hash{}
	if !r.head.IsZero() { // zero: no commit yet, every entry is added
		o := openStore(r.gitDir, deadline)
		defer o.close()
		c, err := o.commit(r.head)
		if err != nil || o.flatten(c.tree, "", head, 0) != nil {
			return nil, false
		}
	}
	inIndex := map[string]bool{}
	dirs := map[string]bool{}
	for _, e := range idx.Entries {
		if time.Now().After(deadline) {
			return nil, false
		}
		if inIndex[e.Name] || !fs.ValidPath(e.Name) {
			continue
		}
		inIndex[e.Name] = true
		if e.Stage != 0 { // a conflict (go-git names stage 0 nothing: its Merged is 1)
			lines = append(lines, "UU "+e.Name)
			continue
		}
		x, y := byte(' '), byte(' ')
		if h, ok := head[e.Name]; !ok {
			x = 'A'
		} else if h != e.Hash {
			x = 'M'
		}
		if !e.SkipWorktree && e.Mode != filemode.Submodule {
			y = r.worktree(e, dirs)
		}
		if x != ' ' || y != ' ' {
			lines = append(lines, string([]byte{x, y})+" "+e.Name)
		}
	}
	for p := range head {
		if !inIndex[p] {
			lines = append(lines, "D  "+p)
		}
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i][3:] < lines[j][3:] })
	return lines, true
}

// worktree is the Y column for an index entry: ' ' unchanged, 'M', 'D'.
// A file below a symlinked directory (a crafted index can name one) is
// never read; it shows as deleted, as git shows it.
func (r *Repo) worktree(e *index.Entry, dirs map[string]bool) byte {
	dir := path.Dir(e.Name)
	inside, seen := dirs[dir]
	if !seen {
		real, err := filepath.EvalSymlinks(filepath.Join(r.top, filepath.FromSlash(dir)))
		inside = err == nil && real == evalOr(filepath.Join(r.top, filepath.FromSlash(dir)))
		if inside && dir != "." {
			top := evalOr(r.top)
			inside = strings.HasPrefix(real, top+string(filepath.Separator))
		}
		dirs[dir] = inside
	}
	abs := filepath.Join(r.top, filepath.FromSlash(e.Name))
	fi, err := os.Lstat(abs)
	if !inside || err != nil {
		return 'D'
	}
	if fi.Size() == int64(e.Size) && (fi.ModTime().Equal(e.ModifiedAt) || sameBlob(abs, fi, e.Hash)) {
		return ' '
	}
	return 'M'
}

// flatten adds the blobs of tree id to out by path, bounded.
func (o *store) flatten(id plumbing.Hash, prefix string, out map[string]plumbing.Hash, depth int) error {
	t, err := o.tree(id)
	if err != nil || depth > 64 {
		return errObject
	}
	for _, e := range t {
		if len(out) >= maxTreeEntries {
			return errObject
		}
		p := prefix + e.name
		if e.mode == filemode.Dir {
			if err := o.flatten(e.id, p+"/", out, depth+1); err != nil {
				return err
			}
			continue
		}
		out[p] = e.id
	}
	return nil
}

// blobAt is HEAD's blob at rel (slash-separated).
func (o *store) blobAt(head plumbing.Hash, rel string) ([]byte, bool) {
	c, err := o.commit(head)
	if err != nil {
		return nil, false
	}
	id := c.tree
	parts := strings.Split(rel, "/")
	for i, name := range parts {
		t, err := o.tree(id)
		if err != nil {
			return nil, false
		}
		k := slices.IndexFunc(t, func(e treeEntry) bool { return e.name == name })
		if k < 0 || (i < len(parts)-1) != (t[k].mode == filemode.Dir) {
			return nil, false
		}
		if i == len(parts)-1 {
			typ, b, err := o.read(t[k].id, 0)
			return b, err == nil && typ == plumbing.BlobObject
		}
		id = t[k].id
	}
	return nil, false
}

// Diff is the unified diff (three lines of context) of the file at p
// between HEAD and the work tree, "" when there is none or it cannot be
// told (either side over 1 MB, a FIFO or device, out of time), "Binary
// files … differ" for binary content. The lines are matched by go-git's
// utils/diff; the hunks are written here (go-git's unified encoder
// compiles a regexp at start, in every hook process).
func (r *Repo) Diff(p string, deadline time.Time) (out string) {
	rel, ok := r.rel(p)
	if r == nil || r.noHead || !ok || rel == "." {
		return ""
	}
	defer func() {
		if recover() != nil {
			out = ""
		}
	}()
	var old, cur []byte
	from, to := "/dev/null", "/dev/null"
	if !r.head.IsZero() {
		o := openStore(r.gitDir, deadline)
		b, found := o.blobAt(r.head, rel)
		o.close()
		if found {
			old, from = b, "a/"+rel
		}
	}
	abs := filepath.Join(r.top, filepath.FromSlash(rel))
	if fi, err := os.Lstat(abs); err == nil {
		b, ok := worktreeBlob(abs, fi, maxDiffInput)
		if !ok {
			return ""
		}
		cur, to = b, "b/"+rel
	}
	switch {
	case from == to || len(old) > maxDiffInput || bytes.Equal(old, cur) && from != "/dev/null" && to != "/dev/null":
		return ""
	case bytes.IndexByte(old, 0) >= 0 || bytes.IndexByte(cur, 0) >= 0:
		return "Binary files " + from + " and " + to + " differ\n"
	}
	// Every line with its operation: ' ' kept, '-' removed, '+' added.
	type line struct {
		op   byte
		text string
	}
	var lines []line
	for _, d := range diff.DoWithTimeout(string(old), string(cur), max(time.Until(deadline), time.Millisecond)) {
		op := map[diffmatchpatch.Operation]byte{diffmatchpatch.DiffEqual: ' ', diffmatchpatch.DiffDelete: '-', diffmatchpatch.DiffInsert: '+'}[d.Type]
		for _, l := range strings.SplitAfter(d.Text, "\n") {
			if l != "" {
				lines = append(lines, line{op, l})
			}
		}
	}
	var b strings.Builder
	b.WriteString("--- " + from + "\n+++ " + to + "\n")
	const ctx = 3
	for i := 0; i < len(lines); {
		if lines[i].op == ' ' {
			i++
			continue
		}
		// A hunk: from ctx lines before this change to ctx lines after the
		// last change that is at most 2*ctx kept lines from the one before.
		start, end := max(0, i-ctx), i
		for j := i; j < len(lines) && j <= end+2*ctx; j++ {
			if lines[j].op != ' ' {
				end = j
			}
		}
		end = min(len(lines), end+ctx+1)
		oldAt, newAt := 1, 1
		for _, l := range lines[:start] {
			oldAt += btoi(l.op != '+')
			newAt += btoi(l.op != '-')
		}
		var oldN, newN int
		for _, l := range lines[start:end] {
			oldN += btoi(l.op != '+')
			newN += btoi(l.op != '-')
		}
		fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", oldAt-btoi(oldN == 0), oldN, newAt-btoi(newN == 0), newN)
		for _, l := range lines[start:end] {
			b.WriteByte(l.op)
			b.WriteString(l.text)
			if !strings.HasSuffix(l.text, "\n") {
				b.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return b.String()
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
