package ledger

import (
	"fmt"
	"time"
)

// EndForgotten is the ending of a handoff whose session the user made
// carryover forget (`carryover forget`): its record stays, emptied of
// everything the session said.
const EndForgotten = "forgotten"

// Forgettable is what Forget removes for one session, counted before.
type Forgettable struct {
	Session  Session
	Rows     int
	Cursors  int
	Handoffs int // handoff records derived from it (kept, marked forgotten)
}

// FindSessions returns the sessions whose native id is id, or starts with
// it when no session has exactly that id (every project's; a session id
// seen in two projects is two sessions).
func (l *Ledger) FindSessions(id string) ([]Session, error) {
	if id == "" {
		return nil, nil
	}
	q := `SELECT id, tool, native_id, project, transcript, first_seen, last_seen, last_active FROM sessions WHERE `
	ss, err := l.scanSessions(q+`native_id = ? ORDER BY id`, id)
	if err != nil || len(ss) > 0 {
		return ss, err
	}
	return l.scanSessions(q+`substr(native_id, 1, ?) = ? ORDER BY id`, len(id), id)
}

func (l *Ledger) scanSessions(q string, args ...any) ([]Session, error) {
	rows, err := l.db.Query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		var s Session
		var fs, ls, la int64
		if err := rows.Scan(&s.ID, &s.Tool, &s.NativeID, &s.Project, &s.Transcript, &fs, &ls, &la); err != nil {
			return nil, err
		}
		s.FirstSeen, s.LastSeen, s.LastActive = time.UnixMilli(fs), time.UnixMilli(ls), time.UnixMilli(la)
		out = append(out, s)
	}
	return out, rows.Err()
}

// ForgetPlan counts what Forget would remove for s.
func (l *Ledger) ForgetPlan(s Session) (Forgettable, error) {
	f := Forgettable{Session: s}
	err := l.db.QueryRow(`SELECT (SELECT COUNT(*) FROM rows WHERE session_id = ?), (SELECT COUNT(*) FROM cursors WHERE session_id = ?),
		(SELECT COUNT(*) FROM handoff_log WHERE session_id = ?)`, s.ID, s.ID, s.ID).Scan(&f.Rows, &f.Cursors, &f.Handoffs)
	return f, err
}

// Forget removes every trace of session s from the ledger: its rows, row
// keys, cursors, receipts, limit events, pending injection, the list
// cache entry of its transcript, the project's distill state (rebuilt from
// the other sessions' rows at the next event) and the decisions extracted
// from its text; its handoff records stay, emptied and marked
// EndForgotten. Deleted content is overwritten (secure_delete), then the
// file is rewritten without free pages (VACUUM) and the WAL emptied, so
// neither the ledger's bytes nor its WAL keep any of it: SQLite otherwise
// leaves deleted cells in free pages and older copies of pages in the WAL.
func (l *Ledger) Forget(s Session) error {
	if _, err := l.db.Exec(`PRAGMA secure_delete = ON`); err != nil {
		return fmt.Errorf("forget: %w", err)
	}
	tx, err := l.db.Begin()
	if err != nil {
		return fmt.Errorf("forget: %w", err)
	}
	defer tx.Rollback()
	// Decisions extracted from this session's text (the user's own stay).
	if _, err := tx.Exec(`DELETE FROM decisions WHERE project = ? AND source = ? AND EXISTS
		(SELECT 1 FROM rows r WHERE r.session_id = ? AND instr(r.text, decisions.text) > 0)`, s.Project, DecisionExtracted, s.ID); err != nil {
		return fmt.Errorf("forget decisions: %w", err)
	}
	for _, q := range []string{
		`DELETE FROM rows WHERE session_id = ?`,
		`DELETE FROM row_keys WHERE session_id = ?`,
		`DELETE FROM keys_recent WHERE session_id = ?`,
		`DELETE FROM cursors WHERE session_id = ?`,
		`DELETE FROM deliveries WHERE session_id = ?`,
		`DELETE FROM pending_inject WHERE session_id = ?`,
		`DELETE FROM limit_events WHERE session_id = ?`,
		`DELETE FROM handoffs WHERE session_id = ?`,
		`UPDATE handoff_log SET native_id = '', head = '', branch = '', hash = '', header = '', goal = '', next = '', files = '',
			ended = '` + EndForgotten + `', ended_at = CASE WHEN ended_at = 0 THEN updated ELSE ended_at END WHERE session_id = ?`,
	} {
		if _, err := tx.Exec(q, s.ID); err != nil {
			return fmt.Errorf("forget: %w", err)
		}
	}
	if _, err := tx.Exec(`DELETE FROM described WHERE native_id = ? OR (path = ? AND path != '')`, s.NativeID, s.Transcript); err != nil {
		return fmt.Errorf("forget list cache: %w", err)
	}
	if _, err := tx.Exec(`DELETE FROM distill_state WHERE project = ?`, s.Project); err != nil {
		return fmt.Errorf("forget distill state: %w", err)
	}
	if _, err := tx.Exec(`DELETE FROM sessions WHERE id = ?`, s.ID); err != nil {
		return fmt.Errorf("forget: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("forget: %w", err)
	}
	return l.scrub()
}

// ForgottenCount is how many handoff records say their session was forgotten.
func (l *Ledger) ForgottenCount() int {
	var n int
	_ = l.db.QueryRow(`SELECT COUNT(*) FROM handoff_log WHERE ended = ?`, EndForgotten).Scan(&n)
	return n
}
