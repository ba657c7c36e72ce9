package distill

import (
	"path/filepath"
	"strings"
	"sync"

	"github.com/carryover/carryover/distill/git"
	"github.com/carryover/carryover/publish/redact"
)

// The repository reader lives in distill/git (go-git's decoders over
// files safefile opened; it never runs `git`); these names keep its
// callers' vocabulary.
type (
	Repo        = git.Repo
	CommitCount = git.CommitCount
)

// OpenRepo reads root's .git directory (nil when root is in no repository).
func OpenRepo(root string) *Repo { return git.Open(root) }

// OpenRepoAsync starts OpenRepo on another goroutine (the hook reads .git
// on the other core while it tails the transcript); the returned func waits
// for it once. A panic in the reader yields nil, as no repository does.
func OpenRepoAsync(root string) func() *Repo {
	ch := make(chan *Repo, 1)
	go func() {
		defer func() {
			if recover() != nil {
				ch <- nil
			}
		}()
		ch <- OpenRepo(root)
	}()
	return sync.OnceValue(func() *Repo { return <-ch })
}

// RepoRoot returns the work tree root containing dir, or "".
func RepoRoot(dir string) string { return git.Root(dir) }

// RepoFacts reads branch, short HEAD and the state of the given files
// (relative to the root r was opened at; nil r: no repository): it sets
// each file's Git field and counts the states.
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

// ProjectRoot is the project a session belongs to: the agent's own project
// dir when it gives one, else the git root of cwd, else cwd; symlinks
// resolved, so one project has one name in the ledger.
func ProjectRoot(explicit, cwd string) string {
	p := explicit
	if p == "" {
		p = RepoRoot(cwd)
		if p == "" {
			p = cwd
		}
	}
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return p
}

// GitString is the one door by which a string read from a repository's
// .git — a branch name, a commit subject, a remote's name or URL — enters
// carryover's state (RepoFacts, the staleness check, the ledger's handoff
// records, session.json, "Branch switched", `status`). A cloned
// repository names its branches and writes its commit messages, so such
// a string is one line without control characters, and a credential in it
// (a token pushed as a branch name, a URL with a password) is redacted
// here, once, whatever the reader that produced it (distill/git stays a
// format reader that imports nothing but safefile).
func GitString(s string) string {
	if s == "" {
		return ""
	}
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
	return redact.String(s)
}
