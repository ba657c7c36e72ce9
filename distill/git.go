package distill

import (
	"github.com/carryover/carryover/distill/git"
)

// The repository reader lives in distill/git (go-git's decoders over
// files safefile opened; it never runs `git`); these names keep its
// callers' vocabulary.
type (
	Repo        = git.Repo
	CommitCount = git.CommitCount
)

// MaxCommitWalk is how many commits a staleness count reads ("1000+").
const MaxCommitWalk = git.MaxCommitWalk

// OpenRepo reads root's .git directory (nil when root is in no repository).
func OpenRepo(root string) *Repo { return git.Open(root) }

// RepoRoot returns the work tree root containing dir, or "".
func RepoRoot(dir string) string { return git.Root(dir) }

// GitFacts reads branch, short HEAD and the state of the given files
// (relative to root) straight from the .git directory.
func GitFacts(root string, files []File) (Git, []File) {
	return RepoFacts(OpenRepo(root), files)
}

// RepoFacts is GitFacts on a repository Open read (nil: no repository):
// it sets each file's Git field and counts the states.
func RepoFacts(r *Repo, files []File) (Git, []File) {
	if r == nil {
		return Git{}, files
	}
	g := Git{Repo: true, Branch: GitString(r.Branch()), Head: r.Head()}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Path
	}
	out := make([]File, len(files))
	copy(out, files)
	for i, st := range r.States(paths) {
		out[i].Git = st
		switch st {
		case git.Clean:
			g.Clean++
		case git.Modified:
			g.Modified++
		case git.Untracked:
			g.Untracked++
		case git.Deleted:
			g.Deleted++
		}
	}
	return g, out
}
