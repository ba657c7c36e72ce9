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
	recorded := len(ids)
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
	for _, id := range ids[:recorded] {
		if _, err := l.Exec(`DELETE FROM handoff_log WHERE id = ?`, id); err != nil {
			return nil, err
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

// Restoring a project's lifecycle from its files. A ledger rebuilt after
// damage gets back what the damaged file still held (ledger/recover_
// lifecycle.go); when that was unreadable (a destroyed header on a ledger
// too large to rebuild on a copy, say), the project's own files still
// hold its last handoffs. They are project files, so possibly planted by
// a repository: only a text whose digest carryover recorded when it
// published it — in the sidecar under the home, or the ledger — is read,
// and only through safefile (regular files, never through a symlink,
// bounded). A history file no record vouches for stays what `history`
// calls "unrecorded"; it never adds decisions or a pinned task.

// maxRestoreFiles bounds the history files read while restoring (the
// default rotation keeps 50).
const maxRestoreFiles = 64

// Restore restores the project's handoff records, pinned task and
// decisions from its verified handoff.md and history files, when the
// ledger knows no handoff of the project (after a rebuild that salvaged
// none; a project that never published has no files to restore from). It
// returns how many handoffs it recorded.
func Restore(p *publish.Project, l *ledger.Ledger) int {
	if l == nil || l.HandoffKnown(p.Root) {
		return 0
	}
	texts := verifiedTexts(p, l)
	if len(texts) == 0 {
		return 0
	}
	seen := map[string]bool{}
	var newest *ledger.HandoffRecord
	n := 0
	for _, text := range texts {
		rec, ok := publish.RecordOfText(text)
		if !ok || seen[rec.ID] {
			continue
		}
		seen[rec.ID] = true
		rec.Project, rec.Hash = p.Root, publish.Digest([]byte(text))
		rec.Head, rec.Branch = publish.GitOfText(text)
		rec.Files = filesOfText(text)
		rec.SessionID = sessionOfID(l, p.Root, rec)
		if err := Save(l, rec); err != nil {
			logf(p, "restore handoff %s: %v", rec.ID, err)
			return n
		}
		n++
		switch {
		case strings.HasPrefix(rec.Goal, "(none: the user cleared"):
			_ = End(l, rec.ID, ledger.EndCleared, rec.Updated)
		case newest != nil:
			_ = End(l, rec.ID, ledger.EndSuperseded, newest.Written)
		}
		if newest == nil {
			r := rec
			newest = &r
			// The current handoff (and its digest, now in the ledger too).
			if err := recordCurrent(l, ledger.Handoff{Project: p.Root, Header: rec.Header, Tool: rec.Tool, SessionID: rec.SessionID, Written: rec.Updated, Hash: rec.Hash}); err != nil {
				logf(p, "restore current handoff: %v", err)
			}
			restoreWorkState(p, l, text, rec)
		}
	}
	if n > 0 {
		logf(p, "ledger held no handoff of %s: restored %d from its verified handoff files", p.Root, n)
	}
	return n
}

// verifiedTexts are the project's handoff.md and history files whose
// digests carryover recorded, newest first.
func verifiedTexts(p *publish.Project, l *ledger.Ledger) []string {
	var out []string
	if b, err := publish.ReadHandoffFile(p.Root); err == nil && publish.CheckHandoff(b, p.Home, p.Root, l) == "" {
		out = append(out, string(b))
	}
	ids, err := publish.HistoryIDs(p.Root)
	if err != nil {
		logf(p, "restore from history: %v", err)
	}
	for i := len(ids) - 1; i >= 0 && len(ids)-i <= maxRestoreFiles; i-- {
		b, err := publish.ReadHistory(p.Root, ids[i])
		if err == nil && publish.IDOf(publish.HeaderOf(b)) == ids[i] && publish.CheckHandoff([]byte(b), p.Home, p.Root, l) == "" {
			out = append(out, b)
		}
	}
	return out
}

// restoreWorkState puts back the pinned task and the decisions the
// newest handoff shows, unless the ledger already has its own. The text
// does not say which decisions the user recorded and which were
// extracted; one with a reason ("why: …", which only `carryover decide
// --why` gives) is the user's, the others come back as extracted (they
// are shown the same way; only the order under the cap differs).
func restoreWorkState(p *publish.Project, l *ledger.Ledger, text string, rec ledger.HandoffRecord) {
	if _, ok := Task(l, p.Root); !ok {
		if t := publish.PinnedOfText(text); t != "" {
			if err := PinTask(l, p.Root, t, rec.Updated); err != nil {
				logf(p, "restore pinned task: %v", err)
			}
		}
	}
	if known, err := decisionTexts(l, p.Root); err != nil || len(known) > 0 {
		return
	}
	for _, line := range publish.SectionLines(text, "## Decisions (do not re-debate)") {
		d, ok := decisionOfLine(line)
		if !ok {
			continue
		}
		d.At = rec.Updated
		if _, err := AddDecision(l, p.Root, d); err != nil {
			logf(p, "restore decisions: %v", err)
			return
		}
	}
}

// decisionOfLine reads one line of a handoff's decisions section
// (decisionLines); the count of those left out is not a decision.
func decisionOfLine(line string) (ledger.Decision, bool) {
	t, ok := strings.CutPrefix(line, "- ")
	if !ok || strings.HasPrefix(t, "(+") || strings.TrimSpace(t) == "" {
		return ledger.Decision{}, false
	}
	d := ledger.Decision{Text: t, Source: ledger.DecisionExtracted}
	if i := strings.LastIndex(t, " (why: "); i > 0 && strings.HasSuffix(t, ")") {
		d.Text, d.Why, d.Source = t[:i], t[i+len(" (why: "):len(t)-1], ledger.DecisionUser
	}
	return d, true
}

// filesOfText reads the paths of a handoff's recent files ("- path
// (edited 5m ago; …)"), at most maxStaleFiles.
func filesOfText(text string) []string {
	var out []string
	for _, l := range publish.SectionLines(text, "## Recent files") {
		t, ok := strings.CutPrefix(l, "- ")
		if i := strings.LastIndex(t, " ("); i > 0 {
			t = t[:i]
		}
		if ok && t != "" && len(out) < maxStaleFiles {
			out = append(out, t)
		}
	}
	return out
}

// sessionOfID finds the ledger session a restored handoff came from: the
// one session of its agent in the project whose native id gives the id's
// suffix (0 when none or several do; a later handoff of that session then
// gets a new id).
func sessionOfID(l *ledger.Ledger, project string, rec ledger.HandoffRecord) int64 {
	ss, err := l.Sessions(project, rec.Tool, 200)
	if err != nil {
		return 0
	}
	suffix := rec.ID[len("HO-20060102-150405-"):]
	var found int64
	for _, s := range ss {
		if strings.HasSuffix(publish.NewID(rec.Written, s.NativeID), "-"+suffix) {
			if found != 0 {
				return 0
			}
			found = s.ID
		}
	}
	return found
}
