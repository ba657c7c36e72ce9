// Package git reads what a handoff shows of a repository from .git with
// go-git's decoders: this file the hook's part (HEAD, branch, the touched
// files' index entries and stat), objects.go the object store (commits
// since a recorded one, Log, Status, Diff). It never runs `git` nor reads
// .git/config, whose programs (gpg.program, filters, hooks) `git` would run.
// .git may be hostile: files open through safefile (regular, no symlink
// below the git directory, no FIFO, bounded); a `gitdir:` out of the tree
// is followed only back from a linked worktree or into an enclosing
// .git/modules; walks are bounded by count, bytes and deadline; a panic on
// crafted data is "unknown". What is refused is left out, why in Problem.
package git

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
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
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// File states, as the handoff shows them.
const (
	Clean     = "clean"
	Modified  = "modified"
	Untracked = "untracked"
	Deleted   = "deleted"
)

// Repo is .git read once by Open (the hook runs it beside its ingest);
// States then costs a scan in memory and a stat per touched file.
type Repo struct {
	root, top, gitDir string        // the directory asked about; the work tree's top; its git directory
	branch            string        // "(detached)"; "": HEAD unread or refused, so no file facts either
	head              plumbing.Hash // zero when unknown
	index             []byte        // mapped .git/index (nil when unreadable)
	problem           string        // why facts are missing ("" when none)
}

// A 100,000-file repository's index is ~10 MB; HEAD, refs, gitdir files: a line.
const maxLine, maxIndex, maxPackedRefs = 4 << 10, 64 << 20, 32 << 20

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
	d, err := safefile.OpenDir(r.gitDir)
	var b []byte
	if err == nil {
		defer d.Close()
		b, err = d.ReadFile("HEAD", maxLine)
	}
	ref, symbolic := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: ")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return r
	case err != nil:
		r.problem = fmt.Sprintf("%v; git facts omitted", err)
		return r
	case !symbolic:
		r.branch, r.head = "(detached)", hashOf(ref)
	case !validRef(ref):
		r.problem = filepath.Join(r.gitDir, "HEAD") + " names no valid ref; git facts omitted"
		return r
	default:
		r.branch, r.head = strings.TrimPrefix(ref, "refs/heads/"), resolveRef(r.gitDir, ref)
	}
	// Mapped, not read: a lookup touches ~200 of a 10,000-file index's 0.8 MB of pages.
	if r.index, err = d.MapFile("index", maxIndex); err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.problem = fmt.Sprintf("%v; file states omitted", err)
	}
	runtime.SetFinalizer(r, func(r *Repo) { safefile.Unmap(r.index) })
	return r
}

// recoverTo, deferred, turns a panic (crafted data, an index truncated
// under its mapping) into *out = v.
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

func (r *Repo) or() *Repo {
	if r == nil {
		return &Repo{}
	}
	return r
}

// Problem says why git facts are missing or partial ("" when none).
func (r *Repo) Problem() string { return r.or().problem }

// Branch is the current branch ("(detached)", "" when unknown).
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
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
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

// allowedGitDir: .git (p) of work tree dir may point inside dir, to a linked
// worktree's whose gitdir points back at p, or under an enclosing .git/modules.
func allowedGitDir(dir, p, target string) bool {
	if within(dir, target) {
		return true
	}
	if b, err := safefile.ReadFileNoFollow(filepath.Join(target, "gitdir"), maxLine); err == nil {
		if back := strings.TrimSpace(string(b)); back == p || evalOr(back) == evalOr(p) {
			return true
		}
	}
	t, mod := evalOr(target), string(filepath.Separator)+filepath.Join(".git", "modules")+string(filepath.Separator)
	i := strings.Index(t, mod)
	return i >= 0 && within(t[:i], dir)
}

// within reports whether path is dir or inside it, symlinks resolved.
func within(dir, path string) bool { return inside(filepath.Rel(evalOr(dir), evalOr(path))) }

// inside: a relative path (filepath.Rel's) that does not climb out.
func inside(rel string, err error) bool {
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func evalOr(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
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

// validRef: go-git's rules (no `..`, no control characters, no `.lock`…)
// and under refs/, so a ref names a file below the git directory.
func validRef(ref string) bool {
	return strings.HasPrefix(ref, "refs/") && len(ref) <= 1024 && plumbing.ReferenceName(ref).Validate() == nil
}

// commonDir is a linked worktree's shared git directory when its commondir
// names gitDir or an ancestor, else gitDir.
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

// resolveRef reads ref loose in gitDir, then in the common directory, then
// in packed-refs (zero when unresolved).
func resolveRef(gitDir, ref string) plumbing.Hash {
	common := commonDir(gitDir)
	for _, d := range []string{gitDir, common} {
		if b, err := readGitFile(d, ref, maxLine); err == nil {
			return hashOf(strings.TrimSpace(string(b)))
		}
	}
	data, _ := readGitFile(common, "packed-refs", maxPackedRefs)
	for line := range strings.Lines(string(data)) {
		if id, name, _ := strings.Cut(strings.TrimRight(line, "\r\n"), " "); name == ref {
			return hashOf(id)
		}
	}
	return plumbing.ZeroHash
}

// lookup finds the wanted paths' entries in the mapped index. Not go-git's
// index.Decoder: it decodes every entry (43 ms, 160,000 allocations for
// 10,000 files here; `git status` takes ~70 ms); this scan stops past the
// greatest wanted path and allocates per match (<1 ms). Damaged or
// truncated under its mapping, the index yields the entries read before
// the fault: slicing past its end panics into recoverTo.
func (r *Repo) lookup(wanted map[string]bool) (out map[string]index.Entry) {
	out = map[string]index.Entry{}
	defer runtime.KeepAlive(r) // the finalizer unmaps r.index
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverTo(&out, out) // the same map: what was found before the fault
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
			e := index.Entry{Mode: filemode.FileMode(be.Uint32(d[start+24:])), Size: be.Uint32(d[start+36:]),
				ModifiedAt: time.Unix(int64(be.Uint32(d[start+8:])), int64(be.Uint32(d[start+12:])))}
			copy(e.Hash[:], d[start+40:start+60])
			out[string(name)] = e
		}
	}
	return out
}

// entryName is the name at off of the entry at start, and the next entry's
// offset. v2/v3: NUL-ended, padded to 8 bytes; v4: a varint of bytes to
// strip off the previous name, then a NUL-ended suffix.
func entryName(d []byte, start, off int, prev []byte, v4 bool) ([]byte, int) {
	if !v4 {
		end := bytes.IndexByte(d[off:], 0)
		return d[off : off+end], start + (off-start+end+8)&^7
	}
	strip, k := varint(d[off:])
	off += k
	end, keep := bytes.IndexByte(d[off:], 0), len(prev)-int(strip)
	return append(prev[:keep:keep], d[off:off+end]...), off + end + 1
}

// varint decodes git's offset varint (index v4's prefix length).
func varint(b []byte) (v uint64, n int) {
	for i, c := range b[:min(len(b), 10)] {
		if v = v<<7 | uint64(c&127); c&128 == 0 {
			return v, i + 1
		}
		v++
	}
	panic("overlong varint") // recovered by lookup: the index is damaged
}

// rel is p (absolute, or relative to Open's directory) relative to the
// work tree's top, slash-separated; ok false outside it.
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

// States is each file's state (paths as for rel), "" when unknown. It never
// walks the tree: its cost grows with the files asked about and the index.
func (r *Repo) States(paths []string) []string {
	out := make([]string, len(paths))
	if r.or().branch == "" {
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

// state: a tracked file is clean by git's stat shortcut (same size and
// mtime) or when its blob id is e's (files up to 64 MB are hashed).
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

// worktreeBlob is abs as git stores it: a symlink's target or a regular
// file up to max bytes; never a FIFO or device.
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
