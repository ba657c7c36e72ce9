package git

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/carryover/carryover/publish/safefile"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	fdiff "github.com/go-git/go-git/v5/plumbing/format/diff"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// Bounds of one read of the object store (a walk, a log, a diff).
const (
	maxObject     = 4 << 20  // one inflated object (a commit is ~1 KB)
	maxReadBytes  = 64 << 20 // everything inflated by one store
	maxDeltaDepth = 50       // git's default
	maxPacks      = 64       // pack files looked at
	maxPackIndex  = 64 << 20 // one .idx file (2.3 million objects)
	maxParents    = 64       // of one commit (octopus merges)
)

var errObject = errors.New("unreadable git object")

// store reads objects with go-git's idxfile, packfile and objfile decoders
// over files safefile opened. Not go-git's Packfile: it resolves deltas by
// unbounded recursion (a ref-delta based on itself overflows the stack, no
// recover catches it: a FuzzPackObject seed); here depth, size and time are bounded.
type store struct {
	common   string // the git directory holding objects/
	packs    []pack
	deadline time.Time
	spent    int64 // bytes inflated so far
}

type pack struct {
	idx  *idxfile.MemoryIndex
	file *os.File
	s    *packfile.Scanner
}

func openStore(gitDir string, deadline time.Time) *store {
	o := &store{common: commonDir(gitDir), deadline: deadline}
	d, err := openSub(o.common, "objects/pack")
	if err != nil {
		return o
	}
	defer d.Close()
	names, _ := d.Names()
	for _, n := range names {
		if base, ok := strings.CutSuffix(n, ".idx"); ok && len(o.packs) < maxPacks {
			o.openPack(d, base)
		}
	}
	return o
}

// openPack adds a pack and its index, whose decoder checks the object count
// against the file's size before it allocates.
func (o *store) openPack(d *safefile.Dir, base string) {
	f, err := d.Open(base + ".idx")
	if err != nil {
		return
	}
	defer f.Close()
	p := pack{idx: idxfile.NewMemoryIndex()}
	if fi, err := f.Stat(); err != nil || fi.Size() > maxPackIndex || idxfile.NewDecoder(f).Decode(p.idx) != nil {
		return
	}
	if p.file, err = d.Open(base + ".pack"); err == nil {
		p.s = packfile.NewScanner(p.file)
		o.packs = append(o.packs, p)
	}
}

func (o *store) close() {
	for _, p := range o.packs {
		p.file.Close()
	}
}

// spentOut counts an object of size bytes about to be inflated at delta
// depth against the bounds of one read.
func (o *store) spentOut(size int64, depth int) bool {
	o.spent += max(size, 0)
	return size < 0 || size > maxObject || depth > maxDeltaDepth || o.spent > maxReadBytes || time.Now().After(o.deadline)
}

// read returns an object's type and content, packed or loose.
func (o *store) read(id plumbing.Hash, depth int) (plumbing.ObjectType, []byte, error) {
	for _, p := range o.packs {
		if off, err := p.idx.FindOffset(id); err == nil {
			return o.packed(p, off, depth)
		}
	}
	h := id.String()
	raw, err := readGitFile(o.common, "objects/"+h[:2]+"/"+h[2:], maxObject)
	r, err2 := objfile.NewReader(bytes.NewReader(raw))
	if err != nil || err2 != nil {
		return 0, nil, errObject
	}
	defer r.Close()
	typ, size, err := r.Header()
	if err != nil || o.spentOut(size, 0) {
		return 0, nil, errObject
	}
	b, err := io.ReadAll(io.LimitReader(r, size+1))
	if (err != nil && !errors.Is(err, io.ErrUnexpectedEOF)) || int64(len(b)) != size {
		return 0, nil, errObject
	}
	return typ, b, nil
}

// packed reads the object at off: the scanner inflates it (never past its
// declared size); a delta is applied to its base, read one level deeper.
func (o *store) packed(p pack, off int64, depth int) (plumbing.ObjectType, []byte, error) {
	h, err := p.s.SeekObjectHeader(off)
	if err != nil || o.spentOut(h.Length, depth) {
		return 0, nil, errObject
	}
	var buf bytes.Buffer
	if n, _, err := p.s.NextObject(&buf); err != nil || n != h.Length {
		return 0, nil, errObject
	}
	var typ plumbing.ObjectType
	var base []byte
	switch h.Type {
	case plumbing.OFSDeltaObject:
		typ, base, err = o.packed(p, h.OffsetReference, depth+1)
	case plumbing.REFDeltaObject:
		typ, base, err = o.read(h.Reference, depth+1)
	default: // the callers check the type they want
		return h.Type, buf.Bytes(), nil
	}
	if err != nil {
		return 0, nil, errObject
	}
	out, err := applyDelta(base, buf.Bytes())
	return typ, out, err
}

// applyDelta checks the result size a delta declares (its second varint)
// before PatchDelta: 4 MB of copies of its base can declare terabytes.
func applyDelta(base, delta []byte) ([]byte, error) {
	_, n := binary.Uvarint(delta)
	if size, m := binary.Uvarint(delta[max(n, 0):]); n <= 0 || m <= 0 || size > maxObject {
		return nil, errObject
	}
	return packfile.PatchDelta(base, delta)
}

// commit is what is read of a commit. go-git's object.Commit would bring
// OpenPGP, a config parser and more into every hook process for two
// headers: +2.4 MB, 39 more inits, 0.4-1.4 ms (GODEBUG=inittrace=1).
type commit struct {
	id      plumbing.Hash
	parents []plumbing.Hash
	when    int64 // committer time, Unix seconds
	message string
}

func (o *store) commit(id plumbing.Hash) (*commit, error) {
	typ, data, err := o.read(id, 0)
	if err != nil || typ != plumbing.CommitObject {
		return nil, errObject
	}
	head, msg, _ := bytes.Cut(data, []byte("\n\n"))
	c := &commit{id: id, message: string(msg)}
	for _, line := range strings.Split(string(head), "\n") {
		switch k, v, _ := strings.Cut(line, " "); k {
		case "parent":
			if c.parents = append(c.parents, hashOf(v)); c.parents[len(c.parents)-1].IsZero() || len(c.parents) > maxParents {
				return nil, errObject
			}
		case "committer": // Name <email> 1700000000 +0000
			t, _, _ := strings.Cut(strings.TrimSpace(v[strings.LastIndexByte(v, '>')+1:]), " ")
			c.when, _ = strconv.ParseInt(t, 10, 64)
		}
	}
	return c, nil
}

// walk reads history from start breadth first, each commit once, at most
// limit (more: it went on), never into or past a commit stop is true for.
// ok false: a commit was unreadable (shallow clone, damage, deadline).
func (o *store) walk(start plumbing.Hash, limit int, stop func(plumbing.Hash) bool) (out []*commit, more, ok bool) {
	seen := map[plumbing.Hash]bool{start: true}
	for q := []plumbing.Hash{start}; len(q) > 0; q = q[1:] {
		if stop != nil && stop(q[0]) {
			continue
		}
		if len(out) == limit {
			return out, true, true
		}
		c, err := o.commit(q[0])
		if err != nil {
			return out, false, false
		}
		out = append(out, c)
		for _, p := range c.parents {
			if !seen[p] {
				seen[p] = true
				q = append(q, p)
			}
		}
	}
	return out, false, true
}

// Commit is one entry of Log.
type Commit struct {
	ID      string // short id, 7 digits
	Message string
}

// Log is HEAD's n newest commits by committer time among the 4n nearest,
// as `git log -n` lists them unless a clock ran behind a parent's.
func (r *Repo) Log(n int, deadline time.Time) (out []Commit) {
	if r == nil || r.head.IsZero() || n <= 0 {
		return nil
	}
	defer recoverTo(&out, nil)
	o := openStore(r.gitDir, deadline)
	defer o.close()
	cs, _, _ := o.walk(r.head, 4*n, nil)
	slices.SortStableFunc(cs, func(a, b *commit) int { return cmp.Compare(b.when, a.when) })
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, Commit{ID: c.id.String()[:7], Message: c.message})
	}
	return out
}

// CommitCount is how far HEAD moved from an older commit.
type CommitCount struct {
	N           int
	More        bool // the walk stopped at its bound: at least N
	NotAncestor bool // the old commit is not in HEAD's history (rebased, reset, another branch)
	Known       bool // false: it could not be told (objects unreadable or missing, out of time)
}

// String is the staleness line's "12 commits", "1000+ commits"; "" when unknown.
func (c CommitCount) String() string {
	switch {
	case !c.Known || c.NotAncestor:
		return ""
	case c.More:
		return fmt.Sprintf("%d+ commits", c.N)
	case c.N == 1:
		return "1 commit"
	}
	return fmt.Sprintf("%d commits", c.N)
}

// MaxCommitWalk is how many commits CommitsSince reads before "1000+".
const MaxCommitWalk = 1000

// CommitsSince is `git rev-list --count old..HEAD` (old: a hex prefix, as
// handoffs record HEAD) up to MaxCommitWalk or the deadline. A hostile .git
// gives an unknown count, never a hang or a panic (FuzzPackObject).
func (r *Repo) CommitsSince(old string, deadline time.Time) (c CommitCount) {
	if r == nil || r.head.IsZero() || len(old) < 4 || len(old) > 40 || strings.Trim(old, "0123456789abcdef") != "" {
		return CommitCount{}
	}
	defer recoverTo(&c, CommitCount{})
	o := openStore(r.gitDir, deadline)
	defer o.close()
	return o.since(r.head, old, MaxCommitWalk)
}

// since walks HEAD's history breadth first, not past old.
func (o *store) since(head plumbing.Hash, old string, limit int) CommitCount {
	var oldID plumbing.Hash
	walked, more, ok := o.walk(head, limit, func(id plumbing.Hash) bool {
		if strings.HasPrefix(id.String(), old) {
			oldID = id
		}
		return id == oldID
	})
	switch {
	case !ok:
		return CommitCount{}
	case more:
		return CommitCount{N: limit, More: true, Known: true}
	case oldID.IsZero():
		return CommitCount{Known: true, NotAncestor: true}
	case !slices.ContainsFunc(walked, func(c *commit) bool { return len(c.parents) == 0 }):
		return CommitCount{N: len(walked), Known: true} // every path down from HEAD stopped at old
	}
	// A path went around old (a branch forked before it, merged) to the
	// root: old's own history, as far as the bound allows, is not new.
	ancestors, _, _ := o.walk(oldID, 2*limit, nil)
	in := map[plumbing.Hash]bool{}
	for _, a := range ancestors {
		in[a.id] = true
	}
	n := 0
	for _, c := range walked {
		if !in[c.id] {
			n++
		}
	}
	return CommitCount{N: n, Known: true}
}

// Status is `git status --short` for the manual path without the index
// column and untracked files (walking the tree and .gitignores is where git
// spends its time): " M", " D" or "UU" (unmerged) lines in path order.
func (r *Repo) Status(deadline time.Time) (lines []string, ok bool) {
	if r.or().branch == "" {
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

// Diff is p's hunks (3 lines of context, no header) from the index to the
// work tree; "" when none or unknown (a side over 1 MB, a FIFO, below a
// symlink out of the tree, an unreadable object). go-git's unified
// encoder's init costs 0.05 ms per process.
func (r *Repo) Diff(p string, deadline time.Time) (out string) {
	if r.or().branch == "" {
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

// diffSides reads rel's indexed blob and the file abs, each ≤ 1 MB (nil: absent).
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

// patch and chunk are what go-git's unified encoder takes; with no files it
// writes the hunks alone.
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
