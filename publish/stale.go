package publish

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/carryover/carryover/adapters/ledger"
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
	var out []string
	var changed []string
	n := 0
	for _, f := range r.Files {
		if n == maxStaleFiles {
			break
		}
		n++
		abs := f
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(root, f)
		}
		if rel, err := filepath.Rel(root, abs); err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		fi, err := os.Lstat(abs) // never follows a symlink; opens nothing
		if err != nil {
			changed = append(changed, clip(contentLine(f), 80)+" (gone)")
			continue
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		if fi.ModTime().After(r.Updated) {
			changed = append(changed, clip(contentLine(f), 80))
		}
	}
	if len(changed) > 0 {
		shown := changed
		if len(shown) > 5 {
			shown = shown[:5]
		}
		l := "> Changed on disk since: " + strings.Join(shown, ", ")
		if len(changed) > len(shown) {
			l += fmt.Sprintf(" (+%d more)", len(changed)-len(shown))
		}
		out = append(out, l+" — re-read before editing.")
	}
	if r.Branch != "" && branch != "" && r.Branch != branch {
		out = append(out, "> Branch switched since: "+clip(contentLine(r.Branch), 80)+" → "+clip(contentLine(branch), 80)+".")
	}
	if r.Head != "" && head != "" && r.Head != head {
		out = append(out, "> Commits since: HEAD "+clip(contentLine(r.Head), 40)+" → "+clip(contentLine(head), 40)+" — check `git log`.")
	}
	return out
}
