package distill

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/carryover/carryover/publish/safefile"
	"github.com/go-git/go-git/v5/plumbing"
)

// Repo is what GitFacts reads of a repository's .git directory, read once:
// branch, short HEAD and the index file's bytes. OpenRepo does the I/O, so
// the hook path can run it concurrently with its ingest; Facts then costs a
// scan in memory and a stat per touched file.
//
// The .git directory may be hostile (a project unpacked from an archive
// can carry any .git it likes): every read is of a regular file only,
// never blocks on a FIFO or device, is bounded in size, never follows a
// symlink inside .git, and stays inside the git directory (a ref with
// `..` reads nothing). A `gitdir:` pointing outside the repository is
// honoured only for a linked worktree that points back at it or a
// submodule under an enclosing repository's .git/modules. Whatever is
// refused leaves the facts out and says why in Problem.
type Repo struct {
	root    string
	top     string // the work tree's top directory (where .git is)
	git     Git
	index   []byte
	noHead  bool   // .git/HEAD unreadable: no file facts either
	problem string // why facts are missing, for the log ("" when none)
	// gitDir and the full HEAD id, for counting commits (git_commits.go).
	gitDir, headFull string
}

// Bounds on what OpenRepo reads. The index of a 100,000-file repository
// is ~10 MB; HEAD, a loose ref, commondir and a gitdir file are one line.
const (
	maxGitLine    = 4 << 10
	maxIndex      = 64 << 20
	maxPackedRefs = 32 << 20
)

// OpenRepo reads root's .git directory (nil when root is in no repository).
func OpenRepo(root string) *Repo {
	top, gitDir, why := findGitDir(root)
	if gitDir == "" && why == "" {
		return nil
	}
	r := &Repo{root: root, top: top}
	r.git.Repo = true
	if why != "" {
		r.noHead, r.problem = true, why
		return r
	}
	head, err := readGitFile(gitDir, "HEAD", maxGitLine)
	if err != nil {
		r.noHead = true
		if !errors.Is(err, fs.ErrNotExist) {
			r.problem = fmt.Sprintf("%s: %v; git facts omitted", filepath.Join(gitDir, "HEAD"), err)
		}
		return r
	}
	h := strings.TrimSpace(string(head))
	if ref, ok := strings.CutPrefix(h, "ref: "); ok {
		if !validRef(ref) {
			r.noHead, r.problem = true, fmt.Sprintf("%s names no valid ref; git facts omitted", filepath.Join(gitDir, "HEAD"))
			return r
		}
		r.git.Branch = strings.TrimPrefix(ref, "refs/heads/")
		r.git.Head = resolveRef(gitDir, ref)
	} else {
		r.git.Branch = "(detached)"
		r.git.Head = h
	}
	if !isHex(r.git.Head) {
		r.git.Head = ""
	}
	r.gitDir, r.headFull = gitDir, r.git.Head // for CommitsSince (git_commits.go)
	if len(r.git.Head) > 7 {
		r.git.Head = r.git.Head[:7]
	}
	r.index, err = mapGitIndex(gitDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.problem = fmt.Sprintf("%s: %v; file states omitted", filepath.Join(gitDir, "index"), err)
	}
	if r.index != nil {
		runtime.SetFinalizer(r, func(r *Repo) { safefile.Unmap(r.index) })
	}
	return r
}

// mapGitIndex maps gitDir/index (see readGitFile) instead of reading it:
// a lookup scans the entries only up to the paths it wants (the index is
// sorted), so a hook touches a few of a big index's pages instead of
// copying it whole (0.8 MB, ~200 fresh pages, for 10,000 files).
func mapGitIndex(gitDir string) ([]byte, error) {
	d, err := safefile.OpenDir(gitDir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.MapFile("index", maxIndex)
}

// scan looks the wanted paths up in the mapped index. A fault reading it
// (the file truncated under the mapping) is a missing index, not a crash.
func (r *Repo) scan(wanted map[string]bool) (out map[string]indexEntry) {
	defer runtime.KeepAlive(r) // the finalizer unmaps r.index
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			out = map[string]indexEntry{}
		}
	}()
	return scanIndex(r.index, wanted)
}

// Tracked reports whether the file at abs is in the repository's index
// (false for a nil Repo or an unreadable index).
func (r *Repo) Tracked(abs string) bool {
	if r == nil || r.index == nil {
		return false
	}
	rel, err := filepath.Rel(r.top, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return false
	}
	rel = filepath.ToSlash(rel)
	_, ok := r.scan(map[string]bool{rel: true})[rel]
	return ok
}

// Problem says why git facts are missing or partial ("" when none, and
// for a nil Repo).
func (r *Repo) Problem() string {
	if r == nil {
		return ""
	}
	return r.problem
}

func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// GitFacts reads branch, short HEAD and the state of the given files
// (relative to root) straight from the .git directory. It never walks the
// work tree, so it stays fast in a large repository: cost grows with the
// index size and the number of touched files, not the tree. It sets each
// file's Git field.
func GitFacts(root string, files []File) (Git, []File) {
	return OpenRepo(root).Facts(files)
}

// Facts is GitFacts on a repository read by OpenRepo (a nil Repo is no
// repository).
func (r *Repo) Facts(files []File) (Git, []File) {
	if r == nil {
		return Git{}, files
	}
	g, root := r.git, r.root
	g.Branch = r.Branch() // through GitString (git_branch.go)
	if len(files) == 0 || r.noHead {
		return g, files
	}
	wanted := map[string]bool{}
	for _, f := range files {
		abs := f.Path
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(root, abs)
		}
		if rel, err := filepath.Rel(root, abs); err == nil {
			wanted[filepath.ToSlash(rel)] = true
		}
	}
	idx := r.scan(wanted)
	out := make([]File, len(files))
	copy(out, files)
	for i := range out {
		p := out[i].Path
		abs := p
		if !filepath.IsAbs(p) {
			abs = filepath.Join(root, p)
		}
		rel, err := filepath.Rel(root, abs)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		rel = filepath.ToSlash(rel)
		fi, statErr := os.Lstat(abs) // a symlink is tracked as its target's name
		entry, tracked := idx[rel]
		switch {
		case statErr != nil && tracked:
			out[i].Git = "deleted"
			g.Deleted++
		case statErr != nil:
			out[i].Git = ""
		case !tracked:
			out[i].Git = "untracked"
			g.Untracked++
		case uint32(fi.Size()) == entry.size && fi.ModTime().Unix() == int64(entry.mtimeSec) && fi.ModTime().Nanosecond() == int(entry.mtimeNsec):
			out[i].Git = "clean"
			g.Clean++
		case sameBlob(abs, fi, entry):
			out[i].Git = "clean"
			g.Clean++
		default:
			out[i].Git = "modified"
			g.Modified++
		}
	}
	return g, out
}

// Head is the repository's short HEAD ("" for a nil Repo): the staleness
// check on injection compares it with the handoff's.
func (r *Repo) Head() string {
	if r == nil {
		return ""
	}
	return r.git.Head
}

// sameBlob reports whether the file at abs (lstat'ed as fi) still has the
// indexed blob's content. Only a regular file or symlink of the indexed
// size is read (a FIFO, device or directory is modified, never opened),
// and never more than that size.
func sameBlob(abs string, fi os.FileInfo, e indexEntry) bool {
	if fi.Size() != int64(e.size) {
		return false
	}
	var data []byte
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		t, err := os.Readlink(abs)
		if err != nil {
			return false
		}
		data = []byte(t)
	case fi.Mode().IsRegular():
		b, err := safefile.ReadFileNoFollow(abs, int64(e.size))
		if err != nil {
			return false
		}
		data = b
	default:
		return false
	}
	return plumbing.ComputeHash(plumbing.BlobObject, data) == plumbing.Hash(e.hash)
}

// findGitDir walks up from root to the .git directory (or a worktree's
// gitdir file). It returns "" and a reason when a .git is there but is
// refused: not a directory or regular file, unreadable, or pointing
// outside the repository.
func findGitDir(root string) (top, gitDir, why string) {
	dir := root
	for {
		p := filepath.Join(dir, ".git")
		fi, err := os.Lstat(p)
		if err == nil {
			gitDir, why := gitDirAt(dir, p, fi)
			return dir, gitDir, why
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", ""
		}
		dir = parent
	}
}

func gitDirAt(dir, p string, fi os.FileInfo) (string, string) {
	var target string
	switch {
	case fi.IsDir():
		return p, ""
	case fi.Mode()&os.ModeSymlink != 0:
		t, err := filepath.EvalSymlinks(p)
		if err != nil {
			return "", p + " is a dangling symlink; git facts omitted"
		}
		target = t
	case fi.Mode().IsRegular():
		b, err := safefile.ReadFileNoFollow(p, maxGitLine)
		if err != nil {
			return "", fmt.Sprintf("%s: %v; git facts omitted", p, err)
		}
		d, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
		if !ok || d == "" || strings.ContainsAny(d, "\x00\n") {
			return "", p + " is not a gitdir file; git facts omitted"
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		target = filepath.Clean(d)
	default:
		return "", p + " is not a directory or regular file (a FIFO, device or socket); git facts omitted"
	}
	if st, err := os.Stat(target); err != nil || !st.IsDir() {
		return "", p + " points to no git directory; git facts omitted"
	}
	if allowedGitDir(dir, p, target) {
		return target, ""
	}
	return "", p + " points to a git directory outside the repository; git facts omitted"
}

// allowedGitDir reports whether a .git file or symlink at p (in work tree
// dir) may use target as its git directory: one inside the work tree, a
// linked worktree's (whose gitdir file points back at p), or a
// submodule's under an enclosing directory's .git/modules.
func allowedGitDir(dir, p, target string) bool {
	if within(dir, target) {
		return true
	}
	if b, err := safefile.ReadFileNoFollow(filepath.Join(target, "gitdir"), maxGitLine); err == nil {
		back := strings.TrimSpace(string(b))
		if back == p || (evalOr(back) == evalOr(p)) {
			return true
		}
	}
	for a := filepath.Dir(dir); ; a = filepath.Dir(a) {
		if within(filepath.Join(a, ".git", "modules"), target) {
			return true
		}
		if filepath.Dir(a) == a {
			return false
		}
	}
}

// within reports whether path is inside dir (or dir itself).
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

// RepoRoot returns the work tree root containing dir, or "".
func RepoRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// readGitFile reads name (slash-separated, relative) inside gitDir, not
// following a symlink at any step below gitDir: regular files only, at
// most max bytes, never blocking.
func readGitFile(gitDir, name string, max int64) ([]byte, error) {
	d, err := safefile.OpenDir(gitDir)
	if err != nil {
		return nil, err
	}
	defer func() { d.Close() }()
	parts := strings.Split(name, "/")
	for _, part := range parts[:len(parts)-1] {
		sub, err := d.Sub(part, false, 0)
		if err != nil {
			return nil, err
		}
		d.Close()
		d = sub
	}
	return d.ReadFile(parts[len(parts)-1], max)
}

// validRef reports whether ref is a ref name carryover resolves: under
// refs/, no empty, dot-led or `..` element, no control characters or
// backslashes (a ref names a file below the git directory and nothing
// else).
func validRef(ref string) bool {
	if !strings.HasPrefix(ref, "refs/") || len(ref) > 1024 {
		return false
	}
	for _, part := range strings.Split(ref, "/") {
		if part == "" || part[0] == '.' || strings.Contains(part, "..") || strings.HasSuffix(part, ".lock") {
			return false
		}
		for _, c := range part {
			if c < 0x20 || c == 0x7f || c == '\\' || c == ':' || c == '?' || c == '*' || c == '[' || c == '~' || c == '^' {
				return false
			}
		}
	}
	return true
}

// commonDir is a linked worktree's shared git directory: gitDir's
// commondir file when it names gitDir or one of its ancestors, else gitDir.
func commonDir(gitDir string) string {
	b, err := readGitFile(gitDir, "commondir", maxGitLine)
	if err != nil {
		return gitDir
	}
	d := strings.TrimSpace(string(b))
	if !filepath.IsAbs(d) {
		d = filepath.Join(gitDir, d)
	}
	if !within(d, gitDir) {
		return gitDir
	}
	return filepath.Clean(d)
}

// resolveRef returns ref's object id from gitDir's loose refs, then the
// common directory's, then packed-refs ("" when unresolved). ref must
// pass validRef.
func resolveRef(gitDir, ref string) string {
	common := commonDir(gitDir)
	for _, d := range []string{gitDir, common} {
		if b, err := readGitFile(d, ref, maxGitLine); err == nil {
			return strings.TrimSpace(string(b))
		}
	}
	data, err := readGitFile(common, "packed-refs", maxPackedRefs)
	if err != nil {
		return ""
	}
	for line := range bytes.Lines(data) {
		line = bytes.TrimRight(line, "\r\n")
		if i := bytes.IndexByte(line, ' '); i == 40 && string(line[41:]) == ref {
			return string(line[:40])
		}
	}
	return ""
}

// indexEntry is what GitFacts needs of a git index entry.
type indexEntry struct {
	mtimeSec, mtimeNsec, size uint32
	hash                      [20]byte
}

// scanIndex reads the entries for the wanted paths from a git index file
// (versions 2, 3 and 4) without decoding the rest: a linear scan over a
// 10,000-entry index takes well under a millisecond, where a full decode
// allocates every entry. A damaged or unknown index yields what was read.
func scanIndex(data []byte, wanted map[string]bool) map[string]indexEntry {
	out := map[string]indexEntry{}
	if len(data) < 12 || string(data[:4]) != "DIRC" {
		return out
	}
	be := binary.BigEndian
	version := be.Uint32(data[4:8])
	n := be.Uint32(data[8:12])
	if version < 2 || version > 4 {
		return out
	}
	// Entries are sorted by path: past the greatest wanted path nothing
	// more can match (untracked files are the common case of a miss).
	last := ""
	for w := range wanted {
		last = max(last, w)
	}
	off := 12
	var prev []byte
	for i := uint32(0); i < n && len(out) < len(wanted); i++ {
		start := off
		if off+62 > len(data) {
			break
		}
		var e indexEntry
		e.mtimeSec = be.Uint32(data[off+8:])
		e.mtimeNsec = be.Uint32(data[off+12:])
		e.size = be.Uint32(data[off+36:])
		copy(e.hash[:], data[off+40:off+60])
		flags := be.Uint16(data[off+60:])
		off += 62
		if version >= 3 && flags&0x4000 != 0 {
			off += 2
		}
		if off > len(data) {
			break
		}
		var name []byte
		if version == 4 {
			strip, k := indexVarint(data[off:])
			if k == 0 || int(strip) > len(prev) {
				break
			}
			off += k
			end := bytes.IndexByte(data[off:], 0)
			if end < 0 {
				break
			}
			name = append(append([]byte{}, prev[:len(prev)-int(strip)]...), data[off:off+end]...)
			off += end + 1
			prev = name
		} else {
			end := bytes.IndexByte(data[off:], 0)
			if end < 0 {
				break
			}
			name = data[off : off+end]
			entryLen := off - start + end
			off = start + (entryLen+8)&^7
		}
		if wanted[string(name)] {
			out[string(name)] = e
		}
		if string(name) > last {
			break
		}
	}
	return out
}

// indexVarint decodes git's offset varint (index v4 path prefix length).
func indexVarint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	val := uint64(c & 127)
	i := 1
	for c&128 != 0 {
		if i >= len(b) {
			return 0, 0
		}
		c = b[i]
		i++
		val = ((val + 1) << 7) + uint64(c&127)
	}
	return val, i
}
