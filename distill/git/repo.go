// Package git reads what a handoff shows of a repository from .git with go-git's decoders, never running `git` nor
// reading .git/config (whose gpg.program, filters and hooks `git` would run): first the hook's part (HEAD, branch,
// the touched files' index entries and stat), then the object store (commits since a recorded one, Log, Status,
// Diff). .git may be hostile: files open through safefile (regular, no symlink below the git directory, no FIFO,
// bounded); a `gitdir:` out of the tree is followed only back from a linked worktree or into an enclosing
// .git/modules; reads are bounded by count, bytes and deadline; a panic on crafted data is "unknown". What is
// refused is left out, why in Problem.
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

// File states, as the handoff shows them.
const Clean, Modified, Untracked, Deleted = "clean", "modified", "untracked", "deleted"

// Repo is .git read once by Open (beside the hook's ingest); States then costs a scan in memory and a stat per file.
type Repo struct {
	root, top, gitDir string        // the directory asked about; the work tree's top; its git directory
	branch            string        // "(detached)"; "": HEAD unread or refused, so no file facts either
	head              plumbing.Hash // zero when unknown
	index             []byte        // mapped .git/index (nil when unreadable)
	problem           string        // why facts are missing ("" when none)
}

// Bounds: a 100,000-file repository's index is ~10 MB; HEAD, refs, gitdir files: a line.
const (
	maxLine, maxIndex, maxPackedRefs = 4 << 10, 64 << 20, 32 << 20
	maxObject                        = 4 << 20  // one inflated object (a commit is ~1 KB)
	maxReadBytes                     = 64 << 20 // all one read of the store (a walk, a log, a diff) inflates
	maxDeltaDepth                    = 50       // git's default
	maxPacks                         = 64       // pack files looked at
	maxPackIndex                     = 64 << 20 // one .idx file (2.3 million objects)
	maxParents                       = 64       // of one commit (octopus merges)
)

// Open reads root's .git directory (nil when root is in no repository).
func Open(root string) *Repo {
	top := Root(root)
	if top == "" {
		return nil
	}
	r := &Repo{root: root, top: top}
	if r.gitDir, r.problem = gitDirAt(top); r.problem != "" {
		return r
	}
	b, err := readGitFile(r.gitDir, "HEAD", maxLine)
	ref, symbolic := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: ")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return r
	case err != nil:
		r.problem = fmt.Sprintf("%v; git facts omitted", err)
		return r
	case !symbolic:
		r.branch, r.head = "(detached)", hashOf(ref)
	// go-git's rules (no `..`, no control characters, no `.lock`…) and under refs/: a file below the git directory.
	case !strings.HasPrefix(ref, "refs/") || len(ref) > 1024 || plumbing.ReferenceName(ref).Validate() != nil:
		r.problem = filepath.Join(r.gitDir, "HEAD") + " names no valid ref; git facts omitted"
		return r
	default:
		r.branch = strings.TrimPrefix(ref, "refs/heads/")
		if r.head, err = resolveRef(r.gitDir, ref); err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.problem = fmt.Sprintf("%v; the head commit is unknown", err)
		}
	}
	if d, err := safefile.OpenDir(r.gitDir); err == nil {
		// Mapped, not read: a lookup touches ~200 of a 10,000-file index's 0.8 MB of pages.
		if r.index, err = d.MapFile("index", maxIndex); err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.problem = fmt.Sprintf("%v; file states omitted", err)
		}
		d.Close()
	}
	runtime.SetFinalizer(r, func(r *Repo) { safefile.Unmap(r.index) })
	return r
}

// recoverTo, deferred, turns a panic (crafted data, an index truncated under its mapping) into *out = v.
func recoverTo[T any](out *T, v T) {
	if recover() != nil {
		*out = v
	}
}

// hashOf is s as an object id, zero unless it is 40 lowercase hex digits.
func hashOf(s string) plumbing.Hash {
	if !plumbing.IsHash(s) || strings.ToLower(s) != s {
		return plumbing.ZeroHash
	}
	return plumbing.NewHash(s)
}

var none = new(Repo) // what a nil *Repo answers

func (r *Repo) or() *Repo { return cmp.Or(r, none) }

// Problem says why git facts are missing or partial ("" when none).
func (r *Repo) Problem() string { return r.or().problem }

// Branch is the current branch ("(detached)", "" when unknown), as .git has it (distill.GitBranch shows it).
func (r *Repo) Branch() string { return r.or().branch }

// Head is HEAD's short id, 7 digits ("" when unknown).
func (r *Repo) Head() string {
	if r.or().head.IsZero() {
		return ""
	}
	return r.head.String()[:7]
}

// Root returns the work tree root containing dir, or "".
func Root(dir string) string {
	for d, up := filepath.Clean(dir), ""; d != up; d, up = filepath.Dir(d), d {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
	}
	return ""
}

// gitDirAt is the git directory of the work tree top, or why its .git is refused.
func gitDirAt(top string) (string, string) {
	p := filepath.Join(top, ".git")
	fi, err := os.Lstat(p)
	target := p
	switch {
	case err != nil:
		return "", fmt.Sprintf("%s: %v; git facts omitted", p, err)
	case fi.IsDir():
		return p, ""
	case fi.Mode()&os.ModeSymlink != 0:
		target = evalOr(p) // dangling: refused below
	case fi.Mode().IsRegular():
		b, err := safefile.ReadFileNoFollow(p, maxLine)
		d, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
		if err != nil || !ok || d == "" || strings.ContainsAny(d, "\x00\n") {
			return "", p + " is not a readable gitdir file; git facts omitted"
		}
		if target = filepath.Clean(d); !filepath.IsAbs(d) {
			target = filepath.Join(top, d)
		}
	default:
		return "", p + " is not a directory or regular file (a FIFO, device or socket); git facts omitted"
	}
	if st, err := os.Stat(target); err != nil || !st.IsDir() {
		return "", p + " points to no git directory; git facts omitted"
	}
	if !allowedGitDir(top, p, target) {
		return "", p + " points to a git directory outside the repository; git facts omitted"
	}
	return target, ""
}

// allowedGitDir: p, dir's .git, may point inside dir, to a worktree's gitdir naming p, or into a .git/modules above.
func allowedGitDir(dir, p, target string) bool {
	b, _ := safefile.ReadFileNoFollow(filepath.Join(target, "gitdir"), maxLine)
	if back := strings.TrimSpace(string(b)); within(dir, target) || back != "" && (back == p || evalOr(back) == evalOr(p)) {
		return true
	}
	t, _, found := strings.Cut(evalOr(target), filepath.FromSlash("/.git/modules/"))
	return found && within(t, dir)
}

// within reports whether path is dir or inside it, symlinks resolved.
func within(dir, path string) bool { return inside(filepath.Rel(evalOr(dir), evalOr(path))) }

func inside(rel string, err error) bool {
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func evalOr(p string) string {
	r, _ := filepath.EvalSymlinks(p) // "" when it fails
	return cmp.Or(r, filepath.Clean(p))
}

// openSub opens the directory name (slash-separated) below gitDir, following no symlink.
func openSub(gitDir, name string) (*safefile.Dir, error) {
	d, err := safefile.OpenDir(gitDir)
	for _, part := range strings.Split(name, "/") {
		if err != nil || part == "" {
			break
		}
		sub, e := d.Sub(part, false, 0)
		d.Close()
		d, err = sub, e
	}
	return d, err
}

// readGitFile reads name below gitDir under openSub's rule, at most max bytes.
func readGitFile(gitDir, name string, max int64) ([]byte, error) {
	dir, file := path.Split(name)
	d, err := openSub(gitDir, dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.ReadFile(file, max)
}

// commonDir is a linked worktree's shared git directory when its commondir names gitDir or an ancestor, else gitDir.
func commonDir(gitDir string) string {
	b, err := readGitFile(gitDir, "commondir", maxLine)
	d := strings.TrimSpace(string(b))
	if !filepath.IsAbs(d) {
		d = filepath.Join(gitDir, d)
	}
	if err != nil || !within(d, gitDir) {
		return gitDir
	}
	return filepath.Clean(d)
}

// resolveRef reads ref loose in gitDir, then in the common directory, then in packed-refs (zero when unresolved, err).
func resolveRef(gitDir, ref string) (plumbing.Hash, error) {
	common := commonDir(gitDir)
	for _, d := range []string{gitDir, common} {
		if b, err := readGitFile(d, ref, maxLine); err == nil {
			return hashOf(strings.TrimSpace(string(b))), nil
		}
	}
	data, err := readGitFile(common, "packed-refs", maxPackedRefs) // a FIFO, past the bound: the user is told why
	for line := range strings.Lines(string(data)) {
		if id, name, _ := strings.Cut(strings.TrimRight(line, "\r\n"), " "); name == ref {
			return hashOf(id), nil
		}
	}
	return plumbing.ZeroHash, err
}

// lookup finds the wanted paths' entries in the mapped index. Not go-git's index.Decoder, which decodes every entry
// (43-89 ms, 160,000 allocations for 10,000 files; `git status`: ~70 ms): this scan stops past the greatest wanted
// path, allocating per match (<1 ms). Damaged or cut under its mapping, the index yields what preceded the fault.
func (r *Repo) lookup(wanted map[string]bool) (out map[string]index.Entry) {
	out = map[string]index.Entry{}
	defer runtime.KeepAlive(r) // the finalizer unmaps r.index
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverTo(&out, out)
	d, be, last := r.index, binary.BigEndian, ""
	if len(d) < 12 || string(d[:4]) != "DIRC" || be.Uint32(d[4:])-2 > 2 { // versions 2 to 4
		return out
	}
	for w := range wanted {
		last = max(last, w)
	}
	off, name := 12, []byte(nil)
	for i := be.Uint32(d[8:]); i > 0 && len(out) < len(wanted) && string(name) <= last; i-- {
		start := off
		if off += 62; be.Uint32(d[4:]) >= 3 && be.Uint16(d[off-2:])&0x4000 != 0 {
			off += 2 // extended flags
		}
		if name, off = entryName(d, start, off, name, be.Uint32(d[4:]) == 4); wanted[string(name)] {
			out[string(name)] = index.Entry{Hash: plumbing.Hash(d[start+40 : start+60]), Size: be.Uint32(d[start+36:]),
				ModifiedAt: time.Unix(int64(be.Uint32(d[start+8:])), int64(be.Uint32(d[start+12:])))}
		}
	}
	return out
}

// entryName is the name at off of the entry at start, and the next entry's offset. v2/v3: NUL-ended, padded to 8
// bytes; v4: a varint (7 bits a byte, +1 per continuation) of bytes to cut off the last name, then a NUL-ended suffix.
func entryName(d []byte, start, off int, prev []byte, v4 bool) ([]byte, int) {
	if !v4 {
		end := bytes.IndexByte(d[off:], 0)
		return d[off : off+end], start + (off-start+end+8)&^7
	}
	strip := ^uint64(0) // -1: the first byte is no continuation
	for c := byte(128); c&128 != 0; off++ {
		c = d[off]
		strip = (strip+1)<<7 | uint64(c&127)
	}
	end, keep := bytes.IndexByte(d[off:], 0), len(prev)-int(strip)
	return append(prev[:keep:keep], d[off:off+end]...), off + end + 1
}

// rel is p (absolute, or relative to Open's directory) relative to the top, slash-separated; ok false outside it.
func (r *Repo) rel(p string) (string, bool) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.root, p)
	}
	rel, err := filepath.Rel(r.top, p)
	return filepath.ToSlash(rel), inside(rel, err)
}

// Tracked reports whether the file at p is in the index.
func (r *Repo) Tracked(p string) bool {
	rel, ok := r.or().rel(p)
	_, tracked := r.or().lookup(map[string]bool{rel: true})[rel]
	return ok && tracked
}

// States is each file's state (paths as for rel), "" when unknown. It never walks the tree: its cost grows with the
// files asked about and the index.
func (r *Repo) States(paths []string) []string {
	r, out, wanted := r.or(), make([]string, len(paths)), map[string]bool{}
	for i, p := range paths {
		if rel, ok := r.rel(p); ok && r.branch != "" {
			out[i], wanted[rel] = rel, true
		}
	}
	idx := r.lookup(wanted)
	for i, rel := range out {
		if e, tracked := idx[rel]; rel != "" {
			out[i] = state(filepath.Join(r.top, filepath.FromSlash(rel)), e, tracked)
		}
	}
	return out
}

// state: a tracked file is clean by git's stat shortcut (same size, mtime) or by its blob id (≤ 64 MB are hashed).
func state(abs string, e index.Entry, tracked bool) string {
	fi, err := os.Lstat(abs)
	switch {
	case err != nil:
		return map[bool]string{true: Deleted}[tracked] // untracked and absent: unknown
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

// worktreeBlob is abs as git stores it: a symlink's target or a regular file up to max bytes; never a FIFO or device.
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

var errObject = errors.New("unreadable git object")

// store reads objects with go-git's idxfile, packfile and objfile decoders over files safefile opened. Not go-git's
// Packfile: its delta recursion is unbounded (a ref-delta based on itself overflows the stack, which no recover
// catches: a FuzzPackObject seed); here depth, size and time are.
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
	if d, err := openSub(o.common, "objects/pack"); err == nil {
		defer d.Close()
		names, _ := d.Names()
		for _, n := range names {
			if base, ok := strings.CutSuffix(n, ".idx"); ok && len(o.packs) < maxPacks {
				o.openPack(d, base)
			}
		}
	}
	return o
}

// openPack adds a pack and its index, read whole (the decoder reads the fanout 4 bytes at a time) and decoded (it
// checks its count against its size before it allocates).
func (o *store) openPack(d *safefile.Dir, base string) {
	b, err := d.ReadFile(base+".idx", maxPackIndex)
	p := pack{idx: idxfile.NewMemoryIndex()}
	if err != nil || idxfile.NewDecoder(bytes.NewReader(b)).Decode(p.idx) != nil {
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

// spentOut counts an object about to be inflated against the bounds of one read.
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
	raw, _ := readGitFile(o.common, fmt.Sprintf("objects/%x/%x", id[:1], id[1:]), maxObject)
	r, err := objfile.NewReader(bytes.NewReader(raw)) // nothing read: a zlib error
	if err != nil {
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

// packed reads the object at off, inflated no further than its declared size; a delta applies to its base, read deeper.
func (o *store) packed(p pack, off int64, depth int) (plumbing.ObjectType, []byte, error) {
	h, err := p.s.SeekObjectHeader(off)
	if err != nil || o.spentOut(h.Length, depth) {
		return 0, nil, errObject
	}
	var buf bytes.Buffer
	if n, _, err := p.s.NextObject(&buf); err != nil || n != h.Length {
		return 0, nil, errObject
	}
	typ, base := h.Type, buf.Bytes()
	switch h.Type {
	case plumbing.OFSDeltaObject:
		typ, base, err = o.packed(p, h.OffsetReference, depth+1)
	case plumbing.REFDeltaObject:
		typ, base, err = o.read(h.Reference, depth+1)
	default: // the callers check the type they want
		return typ, base, nil
	}
	if err == nil {
		base, err = applyDelta(base, buf.Bytes())
	}
	return typ, base, err
}

// applyDelta checks the size a delta declares (its 2nd varint) first: 4 MB of copies of a base can make terabytes.
func applyDelta(base, delta []byte) ([]byte, error) {
	_, n := binary.Uvarint(delta)
	if size, m := binary.Uvarint(delta[max(n, 0):]); n <= 0 || m <= 0 || size > maxObject {
		return nil, errObject
	}
	return packfile.PatchDelta(base, delta)
}

// Commit is one entry of Log, and what a walk reads of a commit: go-git's object.Commit would bring OpenPGP, a config
// parser and more into every hook process for two headers (+2.4 MB, 39 more inits, 0.4-1.4 ms: GODEBUG=inittrace=1).
type Commit struct {
	ID, Message string // ID: the short id, 7 digits (Log sets it)
	id          plumbing.Hash
	parents     []plumbing.Hash
	when        int64 // committer time, Unix seconds
}

func (o *store) commit(id plumbing.Hash) (*Commit, error) {
	typ, data, err := o.read(id, 0)
	if err != nil || typ != plumbing.CommitObject {
		return nil, errObject
	}
	head, msg, _ := bytes.Cut(data, []byte("\n\n"))
	c := &Commit{id: id, Message: string(msg)}
	for line := range strings.Lines(string(head)) {
		switch k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " "); k {
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

// walk reads history from start breadth first, each commit once, at most limit (more: it went on), never into or past
// a commit stop is true for. ok false: a commit was unreadable (shallow clone, damage, deadline).
func (o *store) walk(start plumbing.Hash, limit int, stop func(plumbing.Hash) bool) (out []*Commit, more, ok bool) {
	seen := map[plumbing.Hash]bool{}
	for q := []plumbing.Hash{start}; len(q) > 0; q = q[1:] {
		if seen[q[0]] || stop != nil && stop(q[0]) {
			continue
		}
		seen[q[0]] = true
		if len(out) == limit {
			return out, true, true
		}
		c, err := o.commit(q[0])
		if err != nil {
			return out, false, false
		}
		out, q = append(out, c), append(q, c.parents...)
	}
	return out, false, true
}

// Log is HEAD's n newest commits by committer time of the 4n nearest (`git log -n` unless a clock ran behind).
func (r *Repo) Log(n int, deadline time.Time) (out []Commit) {
	if r == nil || r.head.IsZero() || n <= 0 {
		return nil
	}
	defer recoverTo(&out, nil)
	o := openStore(r.gitDir, deadline)
	defer o.close()
	cs, _, _ := o.walk(r.head, 4*n, nil)
	slices.SortStableFunc(cs, func(a, b *Commit) int { return cmp.Compare(b.when, a.when) })
	for _, c := range cs[:min(n, len(cs))] {
		c.ID = c.id.String()[:7]
		out = append(out, *c)
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
	case c.N == 1 && !c.More:
		return "1 commit"
	}
	return fmt.Sprintf("%d%s commits", c.N, map[bool]string{true: "+"}[c.More])
}

// MaxCommitWalk is how many commits CommitsSince reads before "1000+".
const MaxCommitWalk = 1000

// CommitsSince is `git rev-list --count old..HEAD` (old: a hex prefix, as handoffs record HEAD) up to MaxCommitWalk
// or the deadline. A hostile .git gives an unknown count, never a hang or a panic (FuzzPackObject).
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
	case !slices.ContainsFunc(walked, func(c *Commit) bool { return len(c.parents) == 0 }):
		return CommitCount{N: len(walked), Known: true} // every path down from HEAD stopped at old
	}
	// A path went around old (a branch forked before it, merged) to the root: old's own history is not new, each
	// commit its walk reaches (read or not, as far as the bound allows) one of them.
	in := map[plumbing.Hash]bool{}
	o.walk(oldID, 2*limit, func(id plumbing.Hash) bool { in[id] = true; return false })
	return CommitCount{N: len(slices.DeleteFunc(walked, func(c *Commit) bool { return in[c.id] })), Known: true}
}

// Status is `git status --short` for the manual path without the index column and untracked files (walking the tree
// and .gitignores is where git spends its time): " M", " D" or "UU" (unmerged) lines in path order.
func (r *Repo) Status(deadline time.Time) (lines []string, ok bool) {
	defer recoverTo(&ok, false)
	b, _ := readGitFile(r.or().gitDir, "index", maxIndex) // its own read, not the hook's mapping: no fault to catch
	var idx index.Index
	if r.or().branch == "" || index.NewDecoder(bytes.NewReader(b)).Decode(&idx) != nil {
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

// Diff is p's hunks (3 lines of context, no header) from its indexed blob to the work tree file (nil: absent); ""
// when none or unknown (a side over 1 MB, a FIFO, below a symlink out of the tree, an unreadable object). go-git's
// unified encoder's init costs 0.05 ms per process.
func (r *Repo) Diff(p string, deadline time.Time) (out string) {
	r = r.or()
	rel, ok := r.rel(p)
	abs := filepath.Join(r.top, filepath.FromSlash(rel))
	if !ok || r.branch == "" || !within(r.top, filepath.Dir(abs)) { // "." too: the top is not in itself
		return ""
	}
	defer recoverTo(&out, "")
	const maxInput = 1 << 20
	var old, cur []byte
	if e, tracked := r.lookup(map[string]bool{rel: true})[rel]; tracked {
		o := openStore(r.gitDir, deadline)
		typ, b, err := o.read(e.Hash, 0)
		if o.close(); err != nil || typ != plumbing.BlobObject || len(b) > maxInput {
			return ""
		}
		old = b
	}
	if fi, err := os.Lstat(abs); err == nil {
		if cur, ok = worktreeBlob(abs, fi, maxInput); !ok {
			return ""
		}
	}
	switch {
	case bytes.Equal(old, cur):
		return ""
	case bytes.IndexByte(old, 0) >= 0 || bytes.IndexByte(cur, 0) >= 0:
		return "Binary files differ\n"
	}
	var p2 patch
	for _, d := range diff.DoWithTimeout(string(old), string(cur), max(time.Until(deadline), time.Millisecond)) {
		p2 = append(p2, chunk{d})
	}
	var b strings.Builder
	fdiff.NewUnifiedEncoder(&b, fdiff.DefaultContextLines).Encode(p2)
	return b.String()
}

// patch and chunk are what go-git's unified encoder takes; with no files it writes the hunks alone.
type patch []fdiff.Chunk

func (p patch) FilePatches() []fdiff.FilePatch  { return []fdiff.FilePatch{p} }
func (p patch) Message() string                 { return "" }
func (p patch) IsBinary() bool                  { return false }
func (p patch) Files() (fdiff.File, fdiff.File) { return nil, nil }
func (p patch) Chunks() []fdiff.Chunk           { return p }

type chunk struct{ diffmatchpatch.Diff }

// Type: diffmatchpatch's Equal 0, Insert 1, Delete -1 are fdiff's Equal 0, Add 1, Delete 2.
func (c chunk) Type() fdiff.Operation { return fdiff.Operation((c.Diff.Type + 3) % 3) }
func (c chunk) Content() string       { return c.Text }
