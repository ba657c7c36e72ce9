package ledger

import (
	"encoding/json"
	"time"
)

// Seqs maps a ledger session id to the last row sequence number folded
// into a project's distill state.
type Seqs map[int64]int64

// LoadState returns a project's stored distill state and how far into each
// session it has read (ok false when there is none).
func (l *Ledger) LoadState(project string) (state []byte, seqs Seqs, ok bool) {
	var raw string
	err := l.db.QueryRow(`SELECT state, seqs FROM distill_state WHERE project = ?`, project).Scan(&state, &raw)
	if err != nil {
		return nil, nil, false
	}
	if json.Unmarshal([]byte(raw), &seqs) != nil {
		return nil, nil, false
	}
	return state, seqs, true
}

// SaveState stores a project's distill state.
func (l *Ledger) SaveState(project string, state []byte, seqs Seqs, now time.Time) error {
	raw, err := json.Marshal(seqs)
	if err != nil {
		return err
	}
	_, err = l.db.Exec(`INSERT INTO distill_state (project, state, seqs, updated) VALUES (?, ?, ?, ?)
		ON CONFLICT (project) DO UPDATE SET state = excluded.state, seqs = excluded.seqs, updated = excluded.updated`,
		project, state, string(raw), now.UnixMilli())
	return err
}

// ProjectSession is a session's id, agent and last row sequence number.
type ProjectSession struct {
	ID      int64
	Tool    string
	LastSeq int64
}

// ProjectSessions lists a project's sessions in creation order.
func (l *Ledger) ProjectSessions(project string) ([]ProjectSession, error) {
	rows, err := l.db.Query(`SELECT id, tool, next_seq - 1 FROM sessions WHERE project = ? ORDER BY id`, project)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ProjectSession
	for rows.Next() {
		var s ProjectSession
		if err := rows.Scan(&s.ID, &s.Tool, &s.LastSeq); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// RowsAfter returns a session's rows with a sequence number above seq, in
// order, at most limit.
func (l *Ledger) RowsAfter(s ProjectSession, seq int64, limit int) ([]Row, error) {
	rows, err := l.db.Query(`SELECT `+rowCols+` FROM rows INDEXED BY rows_seq WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`, s.ID, seq, limit)
	if err != nil {
		return nil, err
	}
	return scanRows(rows, s.Tool)
}
