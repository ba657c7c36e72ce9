package ledger

import (
	"encoding/json"
	"time"
)

// Seqs maps a ledger session id to the last row sequence number folded
// into a project's distill state.
type Seqs map[int64]int64

// LoadState returns a project's stored distill state and how far into each
// session it has read (ok false when there is none). version identifies the
// stored copy for SaveState's check.
func (l *Ledger) LoadState(project string) (state []byte, seqs Seqs, version string, ok bool) {
	err := l.db.QueryRow(`SELECT state, seqs FROM distill_state WHERE project = ?`, project).Scan(&state, &version)
	if err != nil {
		return nil, nil, "", false
	}
	if json.Unmarshal([]byte(version), &seqs) != nil {
		return nil, nil, "", false
	}
	return state, seqs, version, true
}

// SaveState stores a project's distill state if the stored copy is still
// the one loaded (version, "" when there was none). Two snapshots folding
// at once cannot then move the state backwards or fold the same rows twice:
// the loser's save is dropped and the next snapshot folds from the winner's.
func (l *Ledger) SaveState(project string, state []byte, seqs Seqs, version string, now time.Time) (bool, error) {
	raw, err := json.Marshal(seqs)
	if err != nil {
		return false, err
	}
	var res interface{ RowsAffected() (int64, error) }
	if version == "" {
		res, err = l.db.Exec(`INSERT INTO distill_state (project, state, seqs, updated) VALUES (?, ?, ?, ?) ON CONFLICT (project) DO NOTHING`,
			project, state, string(raw), now.UnixMilli())
	} else {
		res, err = l.db.Exec(`UPDATE distill_state SET state = ?, seqs = ?, updated = ? WHERE project = ? AND seqs = ?`,
			state, string(raw), now.UnixMilli(), project, version)
	}
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
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
	rows, err := l.db.Query(`SELECT `+rowCols+` FROM rows WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`, s.ID, seq, limit)
	if err != nil {
		return nil, err
	}
	return scanRows(rows, s.Tool)
}

// DropState forgets a project's distill state (it is rebuilt).
func (l *Ledger) DropState(project string) error {
	_, err := l.db.Exec(`DELETE FROM distill_state WHERE project = ?`, project)
	return err
}
