package publish

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish/safefile"
)

// History is <project>/.carryover/history: one file per handoff id,
// HO-….md, holding the last content published under that id. It sits
// under .carryover/, whose own .gitignore ignores everything, so it is
// never committed.

// HistoryDir is the history directory's name inside .carryover.
const HistoryDir = "history"

func openHistory(project string, create bool) (*safefile.Dir, error) {
	var d *safefile.Dir
	var err error
	if create {
		d, err = OpenDir(project)
	} else {
		var pd *safefile.Dir
		if pd, err = safefile.OpenDir(project); err == nil {
			d, err = pd.Sub(".carryover", false, 0)
			pd.Close()
		}
	}
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Sub(HistoryDir, create, 0o700)
}

// writeHistory stores text as the history of handoff id in the project's
// opened .carryover (OpenDir), only when its content changed (dedupe),
// then keeps the newest keep of the handoffs in owned (rotation; ids sort
// by time). It reports whether a file was written.
//
// Rotation removes only files carryover recorded writing: the ids in owned
// (the project's handoff log in the ledger) and id itself. A file it did
// not record — fifty HO-2099… files a repository planted, which sort after
// every real id — is neither counted nor removed (counted, they made
// rotation delete each real history file as soon as it was written), and
// no file git tracks is written or removed. A nil owned rotates nothing.
func writeHistory(own *safefile.Dir, id, text string, keep int, owned map[string]bool, repo *distill.Repo, project string) (bool, error) {
	if !ValidID(id) {
		return false, fmt.Errorf("invalid handoff id %q", id)
	}
	path := func(id string) string { return filepath.Join(Dir(project), HistoryDir, id+".md") }
	if repo.Tracked(path(id)) {
		return false, trackedErr(path(id))
	}
	d, err := own.Sub(HistoryDir, true, 0o700)
	if err != nil {
		return false, err
	}
	defer d.Close()
	name := id + ".md"
	old, err := d.ReadFile(name, MaxHandoffFile)
	if err == nil && string(old) == text {
		return false, nil
	}
	if err := d.Write(name, []byte(text), ownFile); err != nil {
		return false, err
	}
	if err == nil || owned == nil {
		return true, nil // a rewrite of a handoff already counted: no rotation to do
	}
	return true, rotate(d, id, keep, owned, func(x string) bool { return repo.Tracked(path(x)) })
}

// rotate removes the oldest of the history files carryover recorded
// (owned, and id) past the newest keep; never one git tracks.
func rotate(d *safefile.Dir, id string, keep int, owned map[string]bool, tracked func(id string) bool) error {
	if keep <= 0 {
		keep = DefaultHistoryKeep
	}
	ids, err := historyIDs(d)
	if err != nil {
		return err
	}
	var mine []string
	for _, x := range ids {
		if (owned[x] || x == id) && !tracked(x) {
			mine = append(mine, x)
		}
	}
	for ; len(mine) > keep; mine = mine[1:] {
		if err := d.Remove(mine[0] + ".md"); err != nil {
			return err
		}
	}
	return nil
}

// historyIDs lists the ids in the history, oldest first.
func historyIDs(d *safefile.Dir) ([]string, error) {
	names, err := d.Names()
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, n := range names {
		if id, ok := strings.CutSuffix(n, ".md"); ok && ValidID(id) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// HistoryIDs lists the handoff ids whose files the project's history
// holds, oldest first (none when there is no history).
func HistoryIDs(project string) ([]string, error) {
	d, err := openHistory(project, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return historyIDs(d)
}

// ReadHistory returns the stored content of handoff id.
func ReadHistory(project, id string) (string, error) {
	if !ValidID(id) {
		return "", fmt.Errorf("invalid handoff id %q", id)
	}
	d, err := openHistory(project, false)
	if err != nil {
		return "", err
	}
	defer d.Close()
	b, err := d.ReadFile(id+".md", MaxHandoffFile)
	return string(b), err
}

// RemoveHistory deletes the history files of ids (missing ones are fine).
func RemoveHistory(project string, ids []string) error {
	d, err := openHistory(project, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer d.Close()
	repo := distill.OpenRepo(project)
	for _, id := range ids {
		if !ValidID(id) || repo.Tracked(filepath.Join(Dir(project), HistoryDir, id+".md")) {
			continue // git tracks it: never removed
		}
		if err := d.Remove(id + ".md"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// MatchID resolves an id or a prefix of one among ids. With no match it
// returns the closest id (for the error's hint) and ok false.
func MatchID(ids []string, arg string) (match string, ok bool, closest string) {
	var hits []string
	for _, id := range ids {
		if id == arg {
			return id, true, ""
		}
		if strings.HasPrefix(id, arg) {
			hits = append(hits, id)
		}
	}
	if len(hits) == 1 {
		return hits[0], true, ""
	}
	if len(hits) > 1 {
		sort.Strings(hits)
		return "", false, hits[len(hits)-1]
	}
	best, bestD := "", -1
	for _, id := range ids {
		if d := EditDistance(strings.ToUpper(arg), strings.ToUpper(id)); bestD < 0 || d < bestD {
			best, bestD = id, d
		}
	}
	return "", false, best
}

// EditDistance is the Levenshtein distance between a and b, in runes: the
// one "did you mean" measure (history ids, config keys, commands, flags).
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			c := prev[j-1]
			if ra[i-1] != rb[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
