package ledger

import "time"

// Handoff is the record of a project's current handoff (table handoffs;
// publish/lifecycle writes it).
type Handoff struct {
	Project   string
	Header    string // first line of handoff.md: "# [CARRYOVER] Last updated … from …"
	Tool      string
	SessionID int64
	Written   time.Time
	// Hash is the content hash of the whole handoff.md carryover writes
	// (publish.Digest); empty for none.
	Hash string
}

// HandoffTrusted reports whether hash is the content hash of a handoff
// carryover published for project (one of the newest few).
func (l *Ledger) HandoffTrusted(project, hash string) (bool, error) {
	var n int
	err := l.db.QueryRow(`SELECT COUNT(*) FROM published WHERE project = ? AND hash = ?`, project, hash).Scan(&n)
	return n > 0, err
}

// Delivery is a receipt: a session of an agent received a handoff.
type Delivery struct {
	Project   string
	Header    string
	Tool      string
	SessionID int64
	NativeID  string
	Via       string // "transcript" (seen in the agent's transcript) or "hook" (printed by carryover)
	At        time.Time
}

// RecordDelivery stores a receipt (idempotent).
func (l *Ledger) RecordDelivery(d Delivery) error {
	_, err := l.db.Exec(`INSERT INTO deliveries (project, header, tool, session_id, via, at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, d.Project, d.Header, d.Tool, d.SessionID, d.Via, d.At.UnixMilli())
	return err
}

// MarkPendingInject remembers that a session started in a way whose
// SessionStart output the agent drops (claude -p --resume), so the first
// UserPromptSubmit delivers the handoff instead.
func (l *Ledger) MarkPendingInject(sessionID int64, now time.Time) error {
	_, err := l.db.Exec(`INSERT INTO pending_inject (session_id, created) VALUES (?, ?) ON CONFLICT DO NOTHING`, sessionID, now.UnixMilli())
	return err
}

// TakePendingInject reports whether a pending injection existed and clears
// it, atomically, so it is delivered once.
func (l *Ledger) TakePendingInject(sessionID int64) (bool, error) {
	return Changed(l, `DELETE FROM pending_inject WHERE session_id = ?`, sessionID)
}

// Stats are counts for `carryover status`.
type Stats struct {
	Sessions   int
	Rows       int
	Projects   int
	BySessions map[string]int // per tool
}

// Stats counts what the ledger holds.
func (l *Ledger) Stats() (Stats, error) {
	s := Stats{BySessions: map[string]int{}}
	if err := l.db.QueryRow(`SELECT COUNT(*), COUNT(DISTINCT project), COALESCE(SUM(next_seq - 1 - pruned), 0) FROM sessions`).Scan(&s.Sessions, &s.Projects, &s.Rows); err != nil {
		return s, err
	}
	type byTool struct {
		tool string
		n    int
	}
	ts, err := All(l, func(sc Scanner) (t byTool, err error) { return t, sc.Scan(&t.tool, &t.n) }, `SELECT tool, COUNT(*) FROM sessions GROUP BY tool`)
	for _, t := range ts {
		s.BySessions[t.tool] = t.n
	}
	return s, err
}

// MarkDirty records that project has rows its handoff does not reflect yet
// (tool events defer the re-distill to the end of the turn).
func (l *Ledger) MarkDirty(project string, now time.Time) error {
	_, err := l.db.Exec(`INSERT INTO dirty (project, since) VALUES (?, ?) ON CONFLICT DO NOTHING`, project, now.UnixMilli())
	return err
}

// Dirty reports whether project has rows its handoff does not reflect.
func (l *Ledger) Dirty(project string) bool {
	return Has(l, `SELECT COUNT(*) FROM dirty WHERE project = ?`, project)
}

// ClearDirty marks project's handoff as up to date.
func (l *Ledger) ClearDirty(project string) error {
	_, err := l.db.Exec(`DELETE FROM dirty WHERE project = ?`, project)
	return err
}
