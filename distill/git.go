package distill

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// GitFacts reads branch, short HEAD and the state of the given files
// (relative to root) straight from the .git directory. It never walks the
// work tree, so it stays fast in a large repository: cost grows with the
// index size and the number of touched files, not the tree. It sets each
// file's Git field.
func GitFacts(root string, files []File) (Git, []File) {
	var g Git
	gitDir := findGitDir(root)
	if gitDir == "" {
		return g, files
	}
	g.Repo = true
	head, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return g, files
	}
	h := strings.TrimSpace(string(head))
	if ref, ok := strings.CutPrefix(h, "ref: "); ok {
		g.Branch = strings.TrimPrefix(ref, "refs/heads/")
		g.Head = resolveRef(gitDir, ref)
	} else {
		g.Branch = "(detached)"
		g.Head = h
	}
	if len(g.Head) > 7 {
		g.Head = g.Head[:7]
	}
	if len(files) == 0 {
		return g, files
	}
	idx := readIndex(gitDir)
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
		var entry *index.Entry
		if idx != nil {
			entry, _ = idx.Entry(rel)
		}
		switch {
		case statErr != nil && entry != nil:
			out[i].Git = "deleted"
			g.Deleted++
		case statErr != nil:
			out[i].Git = ""
		case entry == nil:
			out[i].Git = "untracked"
			g.Untracked++
		case uint32(fi.Size()) == entry.Size && fi.ModTime().Equal(entry.ModifiedAt):
			out[i].Git = "clean"
			g.Clean++
		default:
			data, err := os.ReadFile(abs)
			if err == nil && plumbing.ComputeHash(plumbing.BlobObject, data) == entry.Hash {
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

func readIndex(gitDir string) *index.Index {
	f, err := os.Open(filepath.Join(gitDir, "index"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var idx index.Index
	if err := index.NewDecoder(bufio.NewReaderSize(f, 64<<10)).Decode(&idx); err != nil {
		return nil
	}
	return &idx
}
