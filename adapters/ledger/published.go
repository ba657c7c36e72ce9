package ledger

// Published is what the ledger keeps of one handoff a hook published: the
// project's current handoff and its digest (RecordHandoff), its lifecycle
// entry (SaveHandoffRecord) and the end of the one it replaces.
type Published struct {
	Handoff Handoff
	Record  HandoffRecord
	// Supersedes is the id of the project's previous handoff when this one
	// replaces it ("" when it is a rewrite under the same id).
	Supersedes string
}

// RecordPublished stores p in one transaction. Every Stop publishes; as
// three transactions (RecordHandoff, SaveHandoffRecord, EndHandoff) it paid
// three WAL commits, and every later hook process reads the WAL's frames
// back when it opens the ledger.
func (l *Ledger) RecordPublished(p Published) error {
	tx, err := l.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := recordHandoff(tx, p.Handoff); err != nil {
		return err
	}
	if err := saveHandoffRecord(tx, p.Record); err != nil {
		return err
	}
	if p.Supersedes != "" {
		if err := endHandoff(tx, p.Supersedes, EndSuperseded, p.Record.Updated); err != nil {
			return err
		}
	}
	return tx.Commit()
}
