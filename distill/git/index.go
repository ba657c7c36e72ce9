package git

import (
	"bytes"
	"encoding/binary"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/carryover/carryover/publish/safefile"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	fdiff "github.com/go-git/go-git/v5/plumbing/format/diff"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// File states, as the handoff shows them.
const (
	Clean     = "clean"
	Modified  = "modified"
	Untracked = "untracked"
	Deleted   = "deleted"
)

// lookup finds the wanted paths' entries in the mapped index. It is the
// one format reader here that is not go-git's: go-git's index.Decoder
// decodes every entry (43 ms and 160,000 allocations for a 10,000-file
// index on this 2-core VM, where `git status` takes ~70 ms); this scan of
// the sorted entries stops past the greatest wanted path and allocates
// only for a match (well under 1 ms). A damaged index yields what was
// read; a fault reading the mapping is a missing index.
func (r *Repo) lookup(wanted map[string]bool) (out map[string]index.Entry) {
	out = map[string]index.Entry{}
	defer runtime.KeepAlive(r) // the finalizer unmaps r.index
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverTo(&out, nil)
	d, be, last := r.index, binary.BigEndian, ""
	if len(d) < 12 || string(d[:4]) != "DIRC" || be.Uint32(d[4:])-2 > 2 { // versions 2 to 4
		return out
	}
	for w := range wanted {
		last = max(last, w)
	}
	off, prev, v4 := 12, []byte(nil), be.Uint32(d[4:]) == 4
	for i := be.Uint32(d[8:]); i > 0 && len(out) < len(wanted) && off+62 <= len(d); i-- {
		start := off
		if off += 62; be.Uint32(d[4:]) >= 3 && be.Uint16(d[off-2:])&0x4000 != 0 {
			off += 2 // extended flags
		}
		name, next := entryName(d, start, off, prev, v4)
		if name == nil {
			break
		}
		off, prev = next, name
		if wanted[string(name)] {
			e := index.Entry{Mode: filemode.FileMode(be.Uint32(d[start+24:])), Size: be.Uint32(d[start+36:]),
				ModifiedAt: time.Unix(int64(be.Uint32(d[start+8:])), int64(be.Uint32(d[start+12:])))}
			copy(e.Hash[:], d[start+40:start+60])
			out[string(name)] = e
		}
		if string(name) > last {
			break
		}
	}
	return out
}

// entryName decodes the path of the entry at start whose name is at off,
// and where the next entry starts (nil when malformed): v2 and v3 store a
// NUL-terminated name padded to 8 bytes, v4 a varint count of bytes to
// strip off the previous name and a NUL-terminated suffix.
func entryName(d []byte, start, off int, prev []byte, v4 bool) ([]byte, int) {
	strip, k := uint64(0), 0
	if v4 {
		if strip, k = varint(d[min(off, len(d)):]); k == 0 || int(strip) > len(prev) {
			return nil, 0
		}
	}
	end := bytes.IndexByte(d[min(off+k, len(d)):], 0)
	switch {
	case end < 0:
		return nil, 0
	case !v4:
		return d[off : off+end], start + (off-start+end+8)&^7
	}
	return append(prev[:len(prev)-int(strip):len(prev)-int(strip)], d[off+k:off+k+end]...), off + k + end + 1
}

// varint decodes git's offset varint (index v4's prefix length).
func varint(b []byte) (v uint64, n int) {
	for i, c := range b[:min(len(b), 10)] {
		if v = v<<7 | uint64(c&127); c&128 == 0 {
			return v, i + 1
		}
		v++
	}
	return 0, 0
}

// rel is p (absolute, or relative to the directory Open was given)
// relative to the work tree's top, slash-separated; ok false outside it.
func (r *Repo) rel(p string) (string, bool) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.root, p)
	}
	rel, err := filepath.Rel(r.top, p)
	return filepath.ToSlash(rel), err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Tracked reports whether the file at p is in the index.
func (r *Repo) Tracked(p string) bool {
	if r == nil || r.index == nil {
		return false
	}
	rel, ok := r.rel(p)
	_, tracked := r.lookup(map[string]bool{rel: true})[rel]
	return ok && tracked
}

// States is each file's state against the index (paths absolute, or
// relative to the directory Open was given): Clean, Modified, Untracked,
// Deleted, or "" when unknown. It never walks the work tree: its cost
// grows with the files asked about and the index's size.
func (r *Repo) States(paths []string) []string {
	out := make([]string, len(paths))
	if r == nil || r.noHead || len(paths) == 0 {
		return out
	}
	rels, wanted := make([]string, len(paths)), map[string]bool{}
	for i, p := range paths {
		if rel, ok := r.rel(p); ok {
			rels[i], wanted[rel] = rel, true
		}
	}
	idx := r.lookup(wanted)
	for i, rel := range rels {
		if e, tracked := idx[rel]; rel != "" {
			out[i] = state(filepath.Join(r.top, filepath.FromSlash(rel)), e, tracked)
		}
	}
	return out
}

// state is the file at abs against its index entry e. A tracked file is
// clean when git's stat shortcut says so (same size and mtime) or its
// blob id is e's (files up to 64 MB are hashed).
func state(abs string, e index.Entry, tracked bool) string {
	fi, err := os.Lstat(abs)
	switch {
	case err != nil && tracked:
		return Deleted
	case err != nil:
		return ""
	case !tracked:
		return Untracked
	case uint32(fi.Size()) != e.Size:
		return Modified
	case fi.ModTime().Equal(e.ModifiedAt):
		return Clean
	}
	if b, ok := worktreeBlob(abs, fi, 64<<20); ok && plumbing.ComputeHash(plumbing.BlobObject, b) == e.Hash {
		return Clean
	}
	return Modified
}

// worktreeBlob reads the file at abs as git stores it: a symlink's
// target, or a regular file up to max bytes; never a FIFO or device.
func worktreeBlob(abs string, fi os.FileInfo, max int64) ([]byte, bool) {
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		t, err := os.Readlink(abs)
		return []byte(t), err == nil
	case fi.Mode().IsRegular() && fi.Size() <= max:
		b, err := safefile.ReadFileNoFollow(abs, max)
		return b, err == nil
	}
	return nil, false
}

// Status is what the manual path shows of the work tree: tracked files
// that differ from the index, " M path", " D path" or "UU path"
// (unmerged) in path order, like `git status --short` without the index
// column and untracked files (walking the tree and every .gitignore is
// what `git status` spends its time on). ok false: it could not be told.
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
	seen, dirs := map[string]bool{}, map[string]bool{}
	for _, e := range idx.Entries {
		dir, abs := path.Dir(e.Name), filepath.Join(r.top, filepath.FromSlash(e.Name))
		if _, ok := dirs[dir]; !ok { // a crafted entry below a symlink out of the tree is never read
			dirs[dir] = within(r.top, filepath.Dir(abs))
		}
		xy := "UU "
		switch {
		case time.Now().After(deadline):
			return nil, false
		case seen[e.Name] || !fs.ValidPath(e.Name) || e.SkipWorktree || e.Mode == filemode.Submodule:
			xy = ""
		case e.Stage != 0:
		case !dirs[dir]:
			xy = " D "
		default:
			xy = map[string]string{Deleted: " D ", Modified: " M "}[state(abs, *e, true)]
		}
		if seen[e.Name] = true; xy != "" {
			lines = append(lines, xy+e.Name)
		}
	}
	return lines, true
}

// Diff is the hunks (three lines of context, no header) of the file at p
// between the index and the work tree; "" when none or unknown (a side
// over 1 MB, a FIFO, below a symlink out of the tree, an unreadable
// object). go-git's init of its unified encoder costs 0.05 ms per process
// (GODEBUG=inittrace=1).
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
	old, cur, ok := r.diffSides(rel, abs, deadline)
	switch {
	case !ok || bytes.Equal(old, cur):
		return ""
	case bytes.IndexByte(old, 0) >= 0 || bytes.IndexByte(cur, 0) >= 0:
		return "Binary files differ\n"
	}
	var p2 patch
	for _, d := range diff.DoWithTimeout(string(old), string(cur), max(time.Until(deadline), time.Millisecond)) {
		p2 = append(p2, chunk{d.Text, map[diffmatchpatch.Operation]fdiff.Operation{diffmatchpatch.DiffInsert: fdiff.Add, diffmatchpatch.DiffDelete: fdiff.Delete}[d.Type]})
	}
	var b strings.Builder
	fdiff.NewUnifiedEncoder(&b, fdiff.DefaultContextLines).Encode(p2)
	return b.String()
}

// diffSides reads the indexed blob of rel and the work tree file abs,
// each at most 1 MB (nil when absent).
func (r *Repo) diffSides(rel, abs string, deadline time.Time) (old, cur []byte, ok bool) {
	const maxInput = 1 << 20
	if e, tracked := r.lookup(map[string]bool{rel: true})[rel]; tracked {
		o := openStore(r.gitDir, deadline)
		typ, b, err := o.read(e.Hash, 0)
		if o.close(); err != nil || typ != plumbing.BlobObject || len(b) > maxInput {
			return nil, nil, false
		}
		old = b
	}
	if fi, err := os.Lstat(abs); err == nil {
		if cur, ok = worktreeBlob(abs, fi, maxInput); !ok {
			return nil, nil, false
		}
	}
	return old, cur, true
}

// patch and chunk are one file's changes in the shape go-git's unified
// encoder takes; with no files it writes the hunks alone.
type patch []fdiff.Chunk

func (p patch) FilePatches() []fdiff.FilePatch  { return []fdiff.FilePatch{p} }
func (p patch) Message() string                 { return "" }
func (p patch) IsBinary() bool                  { return false }
func (p patch) Files() (fdiff.File, fdiff.File) { return nil, nil }
func (p patch) Chunks() []fdiff.Chunk           { return p }

type chunk struct {
	text string
	op   fdiff.Operation
}

func (c chunk) Content() string       { return c.text }
func (c chunk) Type() fdiff.Operation { return c.op }
