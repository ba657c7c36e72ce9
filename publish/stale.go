package publish

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
)

// maxStaleFiles bounds the files a staleness check stats: one lstat each,
// never a walk of the work tree (a handoff names at most a screenful).
const maxStaleFiles = 20

// StaleLines says, one line each, what changed since handoff r was
// written: files it names changed on disk, the branch switched, commits
// made (HEAD moved). head and branch are the repository's now ("" when
// unknown). Files are lstat'ed only when they are regular files inside
// the project.
func StaleLines(r ledger.HandoffRecord, root string, head, branch string) []string {
	return staleLines(r, root, head, branch, distill.CommitCount{})
}

// StaleLinesRepo is StaleLines for the repository repo read, with how
// many commits were made since the handoff's HEAD: the walk back to it
// stops at git.MaxCommitWalk ("1000+") or at deadline (then only
// "HEAD a → b" is said). It runs only when HEAD moved.
func StaleLinesRepo(r ledger.HandoffRecord, root string, repo *distill.Repo, deadline time.Time) []string {
	head := repo.Head()
	var c distill.CommitCount
	if r.Head != "" && head != "" && r.Head != head {
		c = repo.CommitsSince(r.Head, deadline)
	}
	return staleLines(r, root, head, distill.GitString(repo.Branch()), c)
}

// StaleWalkBudget bounds the commit walk of a session start's staleness
// lines: ~1 ms per 20 commits here, so 1,000 commits fit with room; a
// cold cache or a huge pack may not, and the line then goes without the
// count rather than delaying the session.
const StaleWalkBudget = 250 * time.Millisecond

func staleLines(r ledger.HandoffRecord, root string, head, branch string, commits distill.CommitCount) []string {
	var out []string
	if l := changedLine(changedSince(r, root)); l != "" {
		out = append(out, l)
	}
	// A record written before GitString redacted branches is redacted here.
	if old := distill.GitString(r.Branch); old != "" && branch != "" && old != branch {
		out = append(out, "> Branch switched since: "+clip(contentLine(old), 80)+" → "+clip(contentLine(branch), 80)+".")
	}
	if r.Head != "" && head != "" && r.Head != head {
		out = append(out, headLine(r.Head, head, commits))
	}
	return out
}

// changedSince are the handoff's files (the first maxStaleFiles, inside
// root) that are gone or were modified after it was written.
func changedSince(r ledger.HandoffRecord, root string) []string {
	var changed []string
	for _, f := range r.Files[:min(len(r.Files), maxStaleFiles)] {
		abs := f
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(root, f)
		}
		if rel, err := filepath.Rel(root, abs); err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		fi, err := os.Lstat(abs) // never follows a symlink; opens nothing
		switch {
		case err != nil:
			changed = append(changed, clip(contentLine(f), 80)+" (gone)")
		case fi.Mode().IsRegular() && fi.ModTime().After(r.Updated):
			changed = append(changed, clip(contentLine(f), 80))
		}
	}
	return changed
}

// changedLine names the first 5 changed files and counts the rest; "" for
// none.
func changedLine(changed []string) string {
	if len(changed) == 0 {
		return ""
	}
	shown := changed[:min(len(changed), 5)]
	l := "> Changed on disk since: " + strings.Join(shown, ", ")
	if len(changed) > len(shown) {
		l += fmt.Sprintf(" (+%d more)", len(changed)-len(shown))
	}
	return l + " — re-read before editing."
}

// headLine says how HEAD moved from the handoff's (from) to now (to).
func headLine(from, to string, commits distill.CommitCount) string {
	from, to = clip(contentLine(from), 40), clip(contentLine(to), 40)
	switch {
	case commits.NotAncestor:
		return "> HEAD moved since: " + from + " → " + to + ", and " + from + " is no longer in its history (rebased, reset or another branch) — check `git log`."
	case commits.String() != "":
		return "> Commits since: " + commits.String() + " (HEAD " + from + " → " + to + ") — check `git log`."
	}
	return "> Commits since: HEAD " + from + " → " + to + " — check `git log`."
}
