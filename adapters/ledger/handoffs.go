package ledger

import (
	"database/sql"
	"time"
)

// Handoff is the record of a project's current handoff.
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

// keepPublished is how many published handoff hashes a project keeps:
// concurrent hooks may finish their writes in another order than they
// recorded them, and any of the last few is carryover's own file.
const keepPublished = 8

// RecordHandoff stores the project's current handoff header and the hash
// of its content, in one transaction.
func (l *Ledger) RecordHandoff(h Handoff) error {
	tx, err := l.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := recordHandoff(tx, h); err != nil {
		return err
	}
	return tx.Commit()
}

// execer is a *sql.DB or a *sql.Tx.
type execer interface {
	Exec(query string, args ...any) (sql.Result, error)
}

// recordHandoff is RecordHandoff inside the caller's transaction.
func recordHandoff(tx execer, h Handoff) error {
	if _, err := tx.Exec(`INSERT INTO handoffs (project, header, tool, session_id, written) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (project) DO UPDATE SET header = excluded.header, tool = excluded.tool, session_id = excluded.session_id, written = excluded.written`,
		h.Project, h.Header, h.Tool, h.SessionID, h.Written.UnixMilli()); err != nil {
		return err
	}
	if h.Hash != "" {
		if _, err := tx.Exec(`INSERT INTO published (project, hash, written) VALUES (?, ?, ?)
			ON CONFLICT (project, hash) DO UPDATE SET written = excluded.written`, h.Project, h.Hash, h.Written.UnixMilli()); err != nil {
			return err
		}
		if _, err := tx.Exec(`DELETE FROM published WHERE project = ? AND hash NOT IN
			(SELECT hash FROM published WHERE project = ? ORDER BY written DESC, hash LIMIT ?)`, h.Project, h.Project, keepPublished); err != nil {
			return err
		}
	}
	return nil
}

// HandoffTrusted reports whether hash is the content hash of a handoff
// carryover published for project (one of the newest few).
func (l *Ledger) HandoffTrusted(project, hash string) (bool, error) {
	var n int
	err := l.db.QueryRow(`SELECT COUNT(*) FROM published WHERE project = ? AND hash = ?`, project, hash).Scan(&n)
	return n > 0, err
}

// Handoffs lists every project's current handoff, newest first.
func (l *Ledger) Handoffs() ([]Handoff, error) {
	rows, err := l.db.Query(`SELECT project, header, tool, session_id, written FROM handoffs ORDER BY written DESC`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Handoff
	for rows.Next() {
		var h Handoff
		var w int64
		if err := rows.Scan(&h.Project, &h.Header, &h.Tool, &h.SessionID, &w); err != nil {
			return nil, err
		}
		h.Written = time.UnixMilli(w)
		out = append(out, h)
	}
	return out, rows.Err()
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

// Deliveries lists receipts for a project (all projects when empty), newest first.
func (l *Ledger) Deliveries(project string, limit int) ([]Delivery, error) {
	where, args := forProject("d.project", project)
	rows, err := l.db.Query(`SELECT d.project, d.header, d.tool, d.session_id, s.native_id, d.via, d.at
		FROM deliveries d JOIN sessions s ON s.id = d.session_id
		WHERE `+where+` ORDER BY d.at DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Delivery
	for rows.Next() {
		var d Delivery
		var at int64
		if err := rows.Scan(&d.Project, &d.Header, &d.Tool, &d.SessionID, &d.NativeID, &d.Via, &at); err != nil {
			return nil, err
		}
		d.At = time.UnixMilli(at)
		out = append(out, d)
	}
	return out, rows.Err()
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
	res, err := l.db.Exec(`DELETE FROM pending_inject WHERE session_id = ?`, sessionID)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
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
	if err := l.db.QueryRow(`SELECT COUNT(*), COUNT(DISTINCT project) FROM sessions`).Scan(&s.Sessions, &s.Projects); err != nil {
		return s, err
	}
	if err := l.db.QueryRow(`SELECT COALESCE(SUM(next_seq - 1 - pruned), 0) FROM sessions`).Scan(&s.Rows); err != nil {
		return s, err
	}
	rows, err := l.db.Query(`SELECT tool, COUNT(*) FROM sessions GROUP BY tool`)
	if err != nil {
		return s, err
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		var n int
		if err := rows.Scan(&t, &n); err != nil {
			return s, err
		}
		s.BySessions[t] = n
	}
	return s, rows.Err()
}

// Delivered reports whether a session already received the handoff whose
// first line is header (by any route).
func (l *Ledger) Delivered(project, header string, sessionID int64) bool {
	var n int
	_ = l.db.QueryRow(`SELECT COUNT(*) FROM deliveries WHERE project = ? AND header = ? AND session_id = ?`, project, header, sessionID).Scan(&n)
	return n > 0
}

// MarkDirty records that project has rows its handoff does not reflect yet
// (tool events defer the re-distill to the end of the turn).
func (l *Ledger) MarkDirty(project string, now time.Time) error {
	_, err := l.db.Exec(`INSERT INTO dirty (project, since) VALUES (?, ?) ON CONFLICT DO NOTHING`, project, now.UnixMilli())
	return err
}

// Dirty reports whether project has rows its handoff does not reflect.
func (l *Ledger) Dirty(project string) bool {
	var n int
	_ = l.db.QueryRow(`SELECT COUNT(*) FROM dirty WHERE project = ?`, project).Scan(&n)
	return n > 0
}

// ClearDirty marks project's handoff as up to date.
func (l *Ledger) ClearDirty(project string) error {
	_, err := l.db.Exec(`DELETE FROM dirty WHERE project = ?`, project)
	return err
}
