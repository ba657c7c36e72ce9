package publish

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
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
	files, err := HistoryIDs(project)
	if err != nil {
		return out, fmt.Errorf("read history of %s: %w", project, err)
	}
	onDisk := map[string]bool{}
	for _, id := range files {
		onDisk[id] = true
	}
	known := map[string]bool{}
	if l != nil {
		recs, err := l.HandoffRecords(project, 1<<20)
		if err != nil {
			return out, err
		}
		for _, r := range recs {
			known[r.ID] = true
			cs, _ := l.Consumers(r)
			out = append(out, entryOf(r, cs, now, expireAfter, onDisk[r.ID]))
		}
	}
	for _, id := range files {
		if !known[id] {
			out = append(out, HistoryEntry{ID: id, Status: "unrecorded", File: true, ConsumedBy: []ConsumerReport{}})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out, nil
}

func entryOf(r ledger.HandoffRecord, cs []ledger.Consumer, now time.Time, expireAfter time.Duration, file bool) HistoryEntry {
	st := StatusOf(r, cs, now, expireAfter)
	e := HistoryEntry{ID: r.ID, Status: st.Status, Agent: OneLine(r.Tool), Session: OneLine(r.NativeID), Written: r.Written.UTC(), Updated: r.Updated.UTC(),
		Age: Ago(now, r.Updated), Goal: OneLine(r.Goal), Next: OneLine(r.Next), Head: OneLine(r.Head), Branch: OneLine(distill.GitString(r.Branch)), File: file, ConsumedBy: []ConsumerReport{}}
	for _, c := range cs {
		e.ConsumedBy = append(e.ConsumedBy, ConsumerReport{Agent: OneLine(c.Tool), Session: OneLine(c.NativeID), At: c.At.UTC()})
	}
	return e
}

// Current is the project's newest handoff with its status and staleness
// now (ok false when the ledger has none).
func Current(l *ledger.Ledger, project string, now time.Time, expireAfter time.Duration, repo *distill.Repo) (HistoryEntry, bool) {
	recs, err := l.HandoffRecords(project, 1)
	if err != nil || len(recs) == 0 {
		return HistoryEntry{}, false
	}
	cs, _ := l.Consumers(recs[0])
	e := entryOf(recs[0], cs, now, expireAfter, false)
	e.Staleness = StaleLinesRepo(recs[0], project, repo, time.Now().Add(4*StaleWalkBudget)) // status, history: no agent waiting
	return e, true
}

// ErrNoHistory is returned when a project has no handoff to show or act on.
var ErrNoHistory = errors.New("no handoffs recorded for this project yet")

// CleanHistory forgets the project's handoffs written before now-olderThan:
// their ledger records and history files. It returns the ids removed.
func CleanHistory(l *ledger.Ledger, project string, now time.Time, olderThan time.Duration) ([]string, error) {
	ids, err := StaleHistory(l, project, now, olderThan)
	if err != nil {
		return nil, err
	}
	if l != nil {
		if _, err := l.DeleteHandoffRecords(project, now.Add(-olderThan)); err != nil {
			return nil, err
		}
	}
	return ids, RemoveHistory(project, ids)
}

// StaleHistory is what CleanHistory would forget (history clean --dry-run):
// the handoffs recorded before now-olderThan, and the history files the
// ledger does not know whose id is older than that.
func StaleHistory(l *ledger.Ledger, project string, now time.Time, olderThan time.Duration) ([]string, error) {
	cut := now.Add(-olderThan)
	var ids []string
	if l != nil {
		recs, err := l.HandoffRecords(project, 1<<30)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			if r.Written.Before(cut) {
				ids = append(ids, r.ID)
			}
		}
	}
	// Files the ledger does not know are judged by the time in their id.
	files, err := HistoryIDs(project)
	if err != nil {
		return ids, err
	}
	seen := map[string]bool{}
	for _, id := range ids {
		seen[id] = true
	}
	for _, id := range files {
		if seen[id] {
			continue
		}
		if t, ok := IDTime(id); ok && t.Before(cut) {
			if l != nil {
				if _, err := l.HandoffRecordByID(id); err == nil {
					continue // a record newer than its id: kept
				}
			}
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// IDTime is the time a handoff id was minted.
func IDTime(id string) (time.Time, bool) {
	if !ValidID(id) || len(id) < 18 {
		return time.Time{}, false
	}
	t, err := time.Parse("20060102-150405", id[3:18])
	return t, err == nil
}

// Republish re-renders and writes the project's handoff now (after a
// decision or a pinned task changed what it must say). Nothing happens
// when the ledger holds nothing of the project.
func (p *Project) Republish(l *ledger.Ledger) error {
	st, _, err := distill.Refresh(l, p.Root, p.Now)
	if err != nil {
		return err
	}
	if p.Repo == nil {
		repo := distill.OpenRepo(p.Root)
		p.Repo = func() *distill.Repo { return repo }
	}
	r, err := p.Prepare(l, st)
	if err != nil || r == nil {
		return err
	}
	return p.WriteProject(r.Text, r.Tool)
}
