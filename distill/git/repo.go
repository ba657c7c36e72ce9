// Package git reads what a handoff shows of a repository (branch, HEAD,
// the touched files' index entries and state, commits since a recorded
// one; for the manual path the changed files, recent commits and diffs)
// from the .git directory with go-git's decoders (ref names, idxfile,
// packfile's scanner and PatchDelta, objfile, index, utils/diff,
// format/diff). It never starts `git` nor reads .git/config: a config
// that came with an unpacked archive can name programs (gpg.program,
// filters, textconv, pagers, hooks) any `git` runs.
//
// The .git directory may be hostile. Every file is opened through
// safefile (regular files only, no symlink below the git directory, no
// FIFO, bounded reads); a `gitdir:` outside the work tree is followed only
// for a linked worktree that points back or a submodule under an
// enclosing .git/modules; walks are bounded by count, bytes and deadline;
// a panic on crafted data becomes "unknown". What is refused leaves facts
// out and says why in Problem.
package git

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/carryover/carryover/publish/safefile"
	"github.com/go-git/go-git/v5/plumbing"
)

// Repo is a .git directory read once by Open (branch, HEAD, the mapped
// index), so the hook can run it concurrently with its ingest; States
// then costs a scan in memory and a stat per touched file.
type Repo struct {
	root, top, gitDir string        // the directory asked about; the work tree's top; its git directory
	branch            string        // "(detached)" for a detached HEAD
	head              plumbing.Hash // zero when unknown
	index             []byte        // mapped .git/index (nil when unreadable)
	noHead            bool          // HEAD unreadable or refused: no file facts either
	problem           string        // why facts are missing ("" when none)
}

// The index of a 100,000-file repository is ~10 MB; HEAD, a loose ref,
// commondir and a gitdir file are one line.
const maxLine, maxIndex, maxPackedRefs = 4 << 10, 64 << 20, 32 << 20

// Open reads root's .git directory (nil when root is in no repository).
func Open(root string) *Repo {
	top := Root(root)
	if top == "" {
		return nil
	}
	r := &Repo{root: root, top: top, noHead: true}
	if r.gitDir, r.problem = gitDirAt(top); r.problem != "" {
		return r
	}
	b, err := readGitFile(r.gitDir, "HEAD", maxLine)
	ref, symbolic := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: ")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return r
	case err != nil:
		r.problem = fmt.Sprintf("%s: %v; git facts omitted", filepath.Join(r.gitDir, "HEAD"), err)
		return r
	case !symbolic:
		r.branch, r.head = "(detached)", hashOf(ref)
	case !validRef(ref):
		r.problem = filepath.Join(r.gitDir, "HEAD") + " names no valid ref; git facts omitted"
		return r
	default:
		r.branch, r.head = strings.TrimPrefix(ref, "refs/heads/"), resolveRef(r.gitDir, ref)
	}
	r.noHead = false
	if d, err := safefile.OpenDir(r.gitDir); err == nil {
		// Mapped, not read: a lookup touches ~200 of a 10,000-file index's
		// 0.8 MB of pages instead of copying it.
		r.index, err = d.MapFile("index", maxIndex)
		d.Close()
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.problem = fmt.Sprintf("%s: %v; file states omitted", filepath.Join(r.gitDir, "index"), err)
		}
	}
	if r.index != nil {
		runtime.SetFinalizer(r, func(r *Repo) { safefile.Unmap(r.index) })
	}
	return r
}

// recoverTo, deferred, turns a panic (a decoder bug on crafted data, a
// fault reading an index truncated under its mapping) into *out = v.
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

// or is r, or a Repo that knows nothing for a nil r.
func (r *Repo) or() *Repo {
	if r == nil {
		return &Repo{noHead: true}
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

// gitDirAt is the git directory of the work tree top, or why its .git is
// refused.
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
		if target, err = filepath.EvalSymlinks(p); err != nil {
			return "", p + " is a dangling symlink; git facts omitted"
		}
	case fi.Mode().IsRegular():
		b, err := safefile.ReadFileNoFollow(p, maxLine)
		d, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
		if err != nil || !ok || d == "" || strings.ContainsAny(d, "\x00\n") {
			return "", p + " is not a readable gitdir file; git facts omitted"
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(top, d)
		}
		target = filepath.Clean(d)
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

// allowedGitDir reports whether the .git file or symlink p in work tree
// dir may use target: one inside the work tree, a linked worktree's
// (whose gitdir file points back at p), or a submodule's under an
// enclosing directory's .git/modules.
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

// within reports whether path is inside dir or dir, symlinks resolved.
func within(dir, path string) bool {
	rel, err := filepath.Rel(evalOr(dir), evalOr(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func evalOr(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// openSub opens the slash-separated directory name below gitDir without
// following a symlink at any step.
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

// readGitFile reads the slash-separated name inside gitDir under
// openSub's rule: a regular file, at most max bytes, never blocking.
func readGitFile(gitDir, name string, max int64) ([]byte, error) {
	dir, file := path.Split(name)
	d, err := openSub(gitDir, strings.TrimSuffix(dir, "/"))
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

// commonDir is a linked worktree's shared git directory: gitDir's
// commondir when it names gitDir or an ancestor, else gitDir.
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

// resolveRef is a valid ref's id from gitDir's loose refs, then the
// common directory's, then packed-refs (zero when unresolved).
func resolveRef(gitDir, ref string) plumbing.Hash {
	common := commonDir(gitDir)
	for _, d := range []string{gitDir, common} {
		if b, err := readGitFile(d, ref, maxLine); err == nil {
			return hashOf(strings.TrimSpace(string(b)))
		}
	}
	data, _ := readGitFile(common, "packed-refs", maxPackedRefs)
	for line := range bytes.Lines(data) {
		if id, name, _ := strings.Cut(strings.TrimRight(string(line), "\r\n"), " "); name == ref {
			return hashOf(id)
		}
	}
	return plumbing.ZeroHash
}
