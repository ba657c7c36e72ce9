package ledger

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/carryover/carryover/adapters"
)

// SyncReport is what Sync did.
type SyncReport struct {
	IngestReport
	// CaughtUp are the project's other transcripts re-read (see CatchUp).
	CaughtUp []FileReport
	// Total counts the rows added by the ingest and the catch-up.
	Total int
	// Notes are things worth a log line (never transcript content).
	Notes []string
}

// Sync brings the ledger up to date for one session, the same way for the
// hook and for `carryover handoff`: it ingests the session, moves a damaged
// ledger aside, rebuilds it and ingests again, catches up the project's
// other transcripts, and records the delivery receipts found in what it
// read. It returns the ledger to use from then on: a new one after a
// rebuild, nil when the rebuild failed (the error says so).
func Sync(l *Ledger, o IngestOptions) (*Ledger, SyncReport, error) {
	var rep SyncReport
	ing, err := Ingest(l, o)
	if damaged(ing, err) {
		// A damaged page is only noticed when a statement reads it.
		nl, rerr := l.Reopen()
		if rerr != nil {
			return nil, rep, fmt.Errorf("ledger is damaged: %w", rerr)
		}
		l = nl
		if n := l.RecoveryNote(); n != "" {
			rep.Notes = append(rep.Notes, n)
		}
		ing, err = Ingest(l, o)
	}
	rep.IngestReport = ing
	if err != nil {
		return l, rep, fmt.Errorf("ingest: %w", err)
	}
	skip := map[string]bool{}
	for _, f := range ing.Files {
		skip[f.Path] = true
		rep.Notes = append(rep.Notes, f.notes()...)
	}
	caught, err := CatchUp(l, o.Project, skip, o)
	if err != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("catch-up: %v", err))
	}
	rep.CaughtUp = caught
	rep.Total = ing.Added
	receipts := ing.Receipts
	for _, f := range caught {
		rep.Total += f.Added
		receipts = append(receipts, f.Receipts...)
		rep.Limits = append(rep.Limits, f.Limits...) // another session's: recorded, not announced
	}
	for _, hdr := range receipts {
		if hdr == "" {
			continue
		}
		d := Delivery{Project: o.Project, Header: hdr, Tool: o.Adapter.Name(), SessionID: ing.SessionID, Via: "transcript", At: o.Now}
		if err := l.RecordDelivery(d); err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("record receipt: %v", err))
		}
	}
	return l, rep, nil
}

// notes say, for the log, what went wrong or was left reading the file.
func (f FileReport) notes() []string {
	var notes []string
	switch {
	case f.Err != nil && errors.Is(f.Err, fs.ErrNotExist):
	case f.Err != nil:
		notes = append(notes, fmt.Sprintf("transcript %s: %v", f.Path, f.Err))
	case f.Reset:
		notes = append(notes, fmt.Sprintf("transcript %s was replaced or truncated; re-read from the start", f.Path))
	}
	if f.Skipped > 0 {
		notes = append(notes, fmt.Sprintf("transcript %s: skipped %d lines over %d bytes", f.Path, f.Skipped, adapters.MaxLine))
	}
	if f.Partial {
		notes = append(notes, fmt.Sprintf("transcript %s: deadline reached; the rest is read at the next event", f.Path))
	}
	return notes
}

// RecoveryNote says, for the log, that Open or Reopen found the ledger
// corrupt and rebuilt it ("" when it did not).
func (l *Ledger) RecoveryNote() string {
	if !l.Recovered {
		return ""
	}
	n := fmt.Sprintf("ledger was corrupt; moved aside to %s and started a new one; %d transcripts still on disk are re-read; %d rows of handoff log, receipts, decisions and pinned tasks salvaged", l.MovedTo, l.Rebuilt, l.Restored)
	if l.RestoreErr != nil {
		n += fmt.Sprintf(" (restoring them failed: %v)", l.RestoreErr)
	}
	return n
}

// damaged reports whether an ingest failed because the ledger file is
// damaged (not because of a transcript or an agent's own store).
func damaged(rep IngestReport, err error) bool {
	if err != nil && IsCorrupt(err) {
		return true
	}
	for _, f := range rep.Files {
		if f.Err != nil && f.Path != "store" && IsCorrupt(f.Err) {
			return true
		}
	}
	return false
}
