package lifecycle

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/redact"
)

// HistoryEntry is one handoff as `carryover history` and status show it.
type HistoryEntry struct {
	ID         string           `json:"id"`
	Status     string           `json:"status"`
	Agent      string           `json:"agent"`
	Session    string           `json:"session"`
	Written    time.Time        `json:"written"`
	Updated    time.Time        `json:"updated"`
	Age        string           `json:"age"`
	Goal       string           `json:"goal"`
	Next       string           `json:"next"`
	Head       string           `json:"head,omitempty"`
	Branch     string           `json:"branch,omitempty"`
	ConsumedBy []ConsumerReport `json:"consumed_by"`
	Staleness  []string         `json:"staleness,omitempty"`
	File       bool             `json:"file"` // its text is in .carryover/history
}

// ConsumerReport is a session that received a handoff.
type ConsumerReport struct {
	Agent   string    `json:"agent"`
	Session string    `json:"session"`
	At      time.Time `json:"at"`
}

// History lists the project's handoffs, newest first: the ledger's
// records, and history files the ledger no longer knows (status
// "unrecorded", after a ledger rebuild). l may be nil (no ledger yet).
func History(l *ledger.Ledger, project string, now time.Time, expireAfter time.Duration) ([]HistoryEntry, error) {
	out := []HistoryEntry{}
	files, err := publish.HistoryIDs(project)
	if err != nil {
		return out, fmt.Errorf("read history of %s: %w", project, err)
	}
	onDisk := map[string]bool{}
	for _, id := range files {
		onDisk[id] = true
	}
	recs, err := records(l, project)
	if err != nil {
		return out, err
	}
	for _, r := range recs {
		cs, _ := Consumers(l, r)
		out = append(out, entryOf(r, cs, now, expireAfter, onDisk[r.ID]))
		delete(onDisk, r.ID)
	}
	for _, id := range files {
		if onDisk[id] {
			out = append(out, HistoryEntry{ID: id, Status: "unrecorded", File: true, ConsumedBy: []ConsumerReport{}})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out, nil
}

// records are all the project's records (none without a ledger).
func records(l *ledger.Ledger, project string) ([]ledger.HandoffRecord, error) {
	if l == nil {
		return nil, nil
	}
	return Records(l, project, 1<<30)
}

func entryOf(r ledger.HandoffRecord, cs []Consumer, now time.Time, expireAfter time.Duration, file bool) HistoryEntry {
	st := StatusOf(r, cs, now, expireAfter)
	e := HistoryEntry{ID: r.ID, Status: st.Status, Agent: publish.OneLine(r.Tool), Session: publish.OneLine(r.NativeID), Written: r.Written.UTC(), Updated: r.Updated.UTC(),
		Age: publish.Ago(now, r.Updated), Goal: publish.OneLine(r.Goal), Next: publish.OneLine(r.Next), Head: publish.OneLine(r.Head),
		Branch: publish.OneLine(distill.GitString(r.Branch)), File: file, ConsumedBy: []ConsumerReport{}}
	for _, c := range cs {
		e.ConsumedBy = append(e.ConsumedBy, ConsumerReport{Agent: publish.OneLine(c.Tool), Session: publish.OneLine(c.NativeID), At: c.At.UTC()})
	}
	return e
}

// Current is the project's newest handoff with its status and staleness
// now (nil when the ledger has none; l may be nil).
func Current(l *ledger.Ledger, project string, now time.Time, expireAfter time.Duration, repo *distill.Repo) *HistoryEntry {
	if l == nil {
		return nil
	}
	recs, err := Records(l, project, 1)
	if err != nil || len(recs) == 0 {
		return nil
	}
	cs, _ := Consumers(l, recs[0])
	e := entryOf(recs[0], cs, now, expireAfter, false)
	e.Staleness = StaleLines(recs[0], project, repo, time.Now().Add(4*StaleWalkBudget)) // status, history: no agent waiting
	return &e
}

// CleanHistory forgets the project's handoffs written before
// now-olderThan: their ledger records and history files; dryRun only
// lists them. It returns the ids.
func CleanHistory(l *ledger.Ledger, project string, now time.Time, olderThan time.Duration, dryRun bool) ([]string, error) {
	cut := now.Add(-olderThan)
	recs, err := records(l, project)
	if err != nil {
		return nil, err
	}
	var ids []string
	known := map[string]bool{}
	for _, r := range recs {
		known[r.ID] = true
		if r.Written.Before(cut) {
			ids = append(ids, r.ID)
		}
	}
	// Files the ledger does not know are judged by the time in their id.
	files, err := publish.HistoryIDs(project)
	if err != nil {
		return ids, err
	}
	for _, id := range files {
		if t, ok := publish.IDTime(id); ok && t.Before(cut) && !known[id] {
			ids = append(ids, id)
		}
	}
	if dryRun {
		return ids, nil
	}
	for _, r := range recs {
		if r.Written.Before(cut) {
			if _, err := l.Exec(`DELETE FROM handoff_log WHERE id = ?`, r.ID); err != nil {
				return nil, err
			}
		}
	}
	return ids, publish.RemoveHistory(project, ids)
}

// maxStaleFiles bounds the files a staleness check stats: one lstat each,
// never a walk of the work tree (a handoff names at most a screenful).
const maxStaleFiles = 20

// StaleLines says, one line each, what changed since handoff r was
// written: files it names changed on disk (lstat'ed only when they are
// regular files inside the project), the branch switched, commits made
// since its HEAD in repo. The walk back to that HEAD runs only when HEAD
// moved, and stops at git.MaxCommitWalk ("1000+") or at deadline
// (then only "HEAD a → b" is said).
func StaleLines(r ledger.HandoffRecord, root string, repo *distill.Repo, deadline time.Time) []string {
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
		out = append(out, "> Branch switched since: "+redact.Clip(publish.ContentLine(old), 80)+" → "+redact.Clip(publish.ContentLine(branch), 80)+".")
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
			changed = append(changed, redact.Clip(publish.ContentLine(f), 80)+" (gone)")
		case fi.Mode().IsRegular() && fi.ModTime().After(r.Updated):
			changed = append(changed, redact.Clip(publish.ContentLine(f), 80))
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
	from, to = redact.Clip(publish.ContentLine(from), 40), redact.Clip(publish.ContentLine(to), 40)
	switch {
	case commits.NotAncestor:
		return "> HEAD moved since: " + from + " → " + to + ", and " + from + " is no longer in its history (rebased, reset or another branch) — check `git log`."
	case commits.String() != "":
		return "> Commits since: " + commits.String() + " (HEAD " + from + " → " + to + ") — check `git log`."
	}
	return "> Commits since: HEAD " + from + " → " + to + " — check `git log`."
}
