package distill

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// Repo is what GitFacts reads of a repository's .git directory, read once:
// branch, short HEAD and the index file's bytes. OpenRepo does the I/O, so
// the hook path can run it concurrently with its ingest; Facts then costs a
// scan in memory and a stat per touched file.
type Repo struct {
	root   string
	git    Git
	index  []byte
	noHead bool // .git/HEAD unreadable: no file facts either
}

// OpenRepo reads root's .git directory (nil when root is in no repository).
func OpenRepo(root string) *Repo {
	gitDir := findGitDir(root)
	if gitDir == "" {
		return nil
	}
	r := &Repo{root: root}
	r.git.Repo = true
	head, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		r.noHead = true
		return r
	}
	h := strings.TrimSpace(string(head))
	if ref, ok := strings.CutPrefix(h, "ref: "); ok {
		r.git.Branch = strings.TrimPrefix(ref, "refs/heads/")
		r.git.Head = resolveRef(gitDir, ref)
	} else {
		r.git.Branch = "(detached)"
		r.git.Head = h
	}
	if len(r.git.Head) > 7 {
		r.git.Head = r.git.Head[:7]
	}
	r.index, _ = os.ReadFile(filepath.Join(gitDir, "index"))
	return r
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
	idx := scanIndex(r.index, wanted)
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
		fi, statErr := os.Stat(abs)
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
		default:
			data, err := os.ReadFile(abs)
			if err == nil && plumbing.ComputeHash(plumbing.BlobObject, data) == plumbing.Hash(entry.hash) {
				out[i].Git = "clean"
				g.Clean++
			} else {
				out[i].Git = "modified"
				g.Modified++
			}
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

// findGitDir walks up from root to the .git directory (or a worktree's
// gitdir file).
func findGitDir(root string) string {
	dir := root
	for {
		p := filepath.Join(dir, ".git")
		fi, err := os.Stat(p)
		if err == nil {
			if fi.IsDir() {
				return p
			}
			b, err := os.ReadFile(p)
			if err == nil {
				if d, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: "); ok {
					if !filepath.IsAbs(d) {
						d = filepath.Join(dir, d)
					}
					return d
				}
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// RepoRoot returns the work tree root containing dir, or "".
func RepoRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

func commonDir(gitDir string) string {
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return gitDir
	}
	d := strings.TrimSpace(string(b))
	if !filepath.IsAbs(d) {
		d = filepath.Join(gitDir, d)
	}
	return d
}

func resolveRef(gitDir, ref string) string {
	for _, d := range []string{gitDir, commonDir(gitDir)} {
		if b, err := os.ReadFile(filepath.Join(d, filepath.FromSlash(ref))); err == nil {
			return strings.TrimSpace(string(b))
		}
	}
	f, err := os.Open(filepath.Join(commonDir(gitDir), "packed-refs"))
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Bytes()
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
