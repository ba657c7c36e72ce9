package ledger

import (
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The maintenance commands (`carryover gc`, `forget`, `status --space`); never run by a hook.

// GCOptions: `carryover gc` removes the rows of sessions last active before
// Before (of Project, when set); DryRun counts them.
type GCOptions struct {
	Before  time.Time
	Project string
	DryRun  bool
}

// GCResult is what GC removed and gave back: sessions and rows, old sessions
// Kept (a current handoff's, one awaiting an injection), what the file
// shrank by (auto-vacuum) and what stays free in it (older: `gc --vacuum`).
type GCResult struct {
	Sessions, Kept        int
	Rows                  int64
	FreedBytes, FreeBytes int64
	AutoVacuum            bool
}

// GC removes old sessions' rows, never handoff records, distill state or a
// session active since the cut-off. A pruned session keeps its entry and
// cursor: its seqs are never reused, its transcript not re-read. Freed pages
// go back by incremental vacuum, in steps.
func (l *Ledger) GC(o GCOptions) (GCResult, error) {
	var r GCResult
	cut := o.Before.UnixMilli()
	where, args := ForProject("s.project", o.Project)
	type victim struct {
		id, rows int64
		keep     bool
	}
	vs, err := All(l, func(r Scanner) (v victim, err error) { return v, r.Scan(&v.id, &v.rows, &v.keep) }, `SELECT s.id, s.next_seq - 1 - s.pruned,
			(s.id IN (SELECT session_id FROM handoffs) OR s.id IN (SELECT session_id FROM pending_inject))
		FROM sessions s WHERE MAX(s.last_active, s.last_seen) < ? AND `+where+` AND s.next_seq - 1 > s.pruned`, append([]any{cut}, args...)...)
	if err != nil {
		return r, err
	}
	for _, v := range vs {
		n := v.rows
		switch {
		case v.keep:
			r.Kept++
			continue
		case !o.DryRun:
			// A transaction per session: a hook waits for one, not the run.
			if n, err = l.pruneSession(v.id, cut); err != nil {
				return r, err
			}
		}
		r.Sessions++
		r.Rows += n
	}
	r.AutoVacuum = l.pragmaInt("auto_vacuum") == 2
	if r.AutoVacuum && !o.DryRun {
		if r.FreedBytes, err = l.vacuumSteps(); err != nil {
			return r, fmt.Errorf("incremental vacuum: %w", err)
		}
	}
	r.FreeBytes = l.freeBytes()
	return r, nil
}

// vacuumPages is what one vacuum step gives back: 16 MB, tens of ms (a variable for tests).
var vacuumPages = 1024

// vacuumSteps gives the free pages back in steps (a hook waits for one),
// then checkpoints: the file shrinks when the WAL's last frames reach it.
// It returns what the file shrank by.
func (l *Ledger) vacuumSteps() (int64, error) {
	size := l.fileBytes()
	for free, before := l.pragmaInt("freelist_count"), int64(math.MaxInt64); free > 0 && free < before; { // no progress: never loop
		if err := l.vacuumStep(); err != nil {
			return 0, err
		}
		before, free = free, l.pragmaInt("freelist_count")
	}
	_, _ = l.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	return max(0, size-l.fileBytes()), nil
}

// vacuumStep gives back up to vacuumPages free pages in one transaction
// (one per result row of the pragma: it is read to the end).
func (l *Ledger) vacuumStep() error {
	_, err := All(l, func(Scanner) (struct{}, error) { return struct{}{}, nil }, `PRAGMA incremental_vacuum(`+strconv.Itoa(vacuumPages)+`)`)
	return err
}

// sessionRowTables are the tables holding a session's rows and keys.
var sessionRowTables = []string{"rows", "row_keys", "keys_recent"}

// pruneSession deletes session id's rows and keys unless it was active since cut.
func (l *Ledger) pruneSession(id, cut int64) (n int64, err error) {
	err = l.inTx(func(tx *sql.Tx) error {
		// Nothing changed: the session was active again since the list was made.
		old, err := Changed(tx, `UPDATE sessions SET pruned = next_seq - 1, keys_through = next_seq WHERE id = ? AND MAX(last_active, last_seen) < ?`, id, cut)
		if err == nil && old {
			n, err = deleteSession(tx, sessionRowTables, id)
		}
		return err
	})
	return n, err
}

// Vacuum rewrites the ledger without free pages, incremental auto-vacuum on
// (`gc --vacuum`, once for an older ledger); it needs its size in free disk.
func (l *Ledger) Vacuum() error { return l.scrub(`PRAGMA auto_vacuum = incremental; `) }

// scrub rewrites the ledger without its free pages, after the pragmas, and empties the WAL.
func (l *Ledger) scrub(pragmas string) error {
	if _, err := l.db.Exec(pragmas + `VACUUM`); err != nil {
		return fmt.Errorf("rewrite the ledger: %w", err)
	}
	return run(l, `PRAGMA wal_checkpoint(TRUNCATE)`)
}

func (l *Ledger) fileBytes() int64 { return l.pragmaInt("page_count") * l.pragmaInt("page_size") }
func (l *Ledger) freeBytes() int64 { return l.pragmaInt("freelist_count") * l.pragmaInt("page_size") }

// ForgetGone drops the cached descriptions of transcripts gone and counts them (`gc`).
func (l *Ledger) ForgetGone(gone func(path string) bool) (int, error) {
	all, err := All(l, func(r Scanner) (d [2]string, err error) { return d, r.Scan(&d[0], &d[1]) }, `SELECT tool, path FROM described`)
	n := 0
	for _, d := range all {
		if err == nil && gone(d[1]) {
			_, err = l.db.Exec(`DELETE FROM described WHERE tool = ? AND path = ?`, d[0], d[1])
			n++
		}
	}
	return n, err
}

// EndForgotten ends a handoff whose session was forgotten: its record stays, emptied.
const EndForgotten = "forgotten"

// Forgettable counts what Forget removes for one session (Handoffs: kept, marked forgotten).
type Forgettable struct {
	Session                 Session
	Rows, Cursors, Handoffs int
}

// FindSessions returns every project's sessions whose native id is, else starts with, id.
func (l *Ledger) FindSessions(id string) ([]Session, error) {
	if id == "" {
		return nil, nil
	}
	return l.sessions(`s.native_id = ?1 OR (substr(s.native_id, 1, length(?1)) = ?1 AND NOT EXISTS (SELECT 1 FROM sessions WHERE native_id = ?1)) ORDER BY s.id`, id)
}

// ForgetPlan counts what Forget would remove for s.
func (l *Ledger) ForgetPlan(s Session) (Forgettable, error) {
	f := Forgettable{Session: s}
	err := l.db.QueryRow(`SELECT (SELECT COUNT(*) FROM rows WHERE session_id = ?1), (SELECT COUNT(*) FROM cursors WHERE session_id = ?1),
		(SELECT COUNT(*) FROM handoff_log WHERE session_id = ?1)`, s.ID).Scan(&f.Rows, &f.Cursors, &f.Handoffs)
	return f, err
}

// Forget removes every trace of session s: rows, keys, cursors, receipts,
// limit events, pending injection, list cache entry, the decisions
// extracted from its text, the project's distill state (rebuilt next
// event); its handoff records stay, emptied and marked EndForgotten. Deleted
// content is overwritten (secure_delete) and the file rewritten (VACUUM),
// the WAL emptied: SQLite keeps deleted cells in free pages and the WAL.
func (l *Ledger) Forget(s Session) error {
	err := l.inTx(func(tx *sql.Tx) error {
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{`PRAGMA secure_delete = ON`, nil}, // the connection's, from here on
			// Decisions extracted from this session's text (the user's own stay).
			{`DELETE FROM decisions WHERE project = ? AND source = ? AND EXISTS
				(SELECT 1 FROM rows r WHERE r.session_id = ? AND instr(r.text, decisions.text) > 0)`, []any{s.Project, DecisionExtracted, s.ID}},
			{`UPDATE handoff_log SET native_id = '', head = '', branch = '', hash = '', header = '', goal = '', next = '', files = '',
				ended = '` + EndForgotten + `', ended_at = CASE WHEN ended_at = 0 THEN updated ELSE ended_at END WHERE session_id = ?`, []any{s.ID}},
			{`DELETE FROM described WHERE native_id = ? OR (path = ? AND path != '')`, []any{s.NativeID, s.Transcript}},
			{`DELETE FROM distill_state WHERE project = ?`, []any{s.Project}},
			{`DELETE FROM sessions WHERE id = ?`, []any{s.ID}},
		} {
			if _, err := tx.Exec(q.sql, q.args...); err != nil {
				return err
			}
		}
		_, err := deleteSession(tx, slices.Concat(sessionRowTables, []string{"cursors", "deliveries", "pending_inject", "limit_events", "handoffs"}), s.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("forget: %w", err)
	}
	return l.scrub("")
}

// deleteSession deletes session id's entries from tables; it counts the first table's.
func deleteSession(tx *sql.Tx, tables []string, id int64) (first int64, err error) {
	for i, t := range tables {
		res, err := tx.Exec(`DELETE FROM `+t+` WHERE session_id = ?`, id)
		if err != nil {
			return 0, err
		}
		if i == 0 {
			first, _ = res.RowsAffected()
		}
	}
	return first, nil
}

// ForgottenCount is how many handoff records say their session was forgotten.
func (l *Ledger) ForgottenCount() (n int) {
	_ = l.db.QueryRow(`SELECT COUNT(*) FROM handoff_log WHERE ended = ?`, EndForgotten).Scan(&n)
	return n
}

// Space is what takes the ledger's room; Tables by table and index (SQLite's
// dbstat reads every page: only when asked, in a build with it).
type Space struct {
	FileBytes  int64        `json:"file_bytes"`
	FreeBytes  int64        `json:"free_bytes"` // free pages inside the file
	AutoVacuum bool         `json:"auto_vacuum"`
	Tables     []SpaceUse   `json:"tables,omitempty"`
	TablesNote string       `json:"tables_note,omitempty"`
	Projects   []ProjectUse `json:"projects"`
}

// SpaceUse is one table's or index's size.
type SpaceUse struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// ProjectUse is a project's sessions, rows (about its share of the file) and last activity.
type ProjectUse struct {
	Project    string    `json:"project"`
	Sessions   int       `json:"sessions"`
	Rows       int64     `json:"rows"`
	LastActive time.Time `json:"last_active"`
}

// Space reports the ledger's size by project (cheap) and with tables by table and index.
func (l *Ledger) Space(tables bool) (Space, error) {
	sp := Space{FileBytes: l.fileBytes(), FreeBytes: l.freeBytes(), AutoVacuum: l.pragmaInt("auto_vacuum") == 2}
	var err error
	sp.Projects, err = All(l, func(r Scanner) (p ProjectUse, err error) {
		var last int64
		err = r.Scan(&p.Project, &p.Sessions, &p.Rows, &last)
		p.LastActive = time.UnixMilli(last)
		return p, err
	}, `SELECT project, COUNT(*), SUM(next_seq - 1 - pruned), MAX(MAX(last_active, last_seen)) FROM sessions GROUP BY project ORDER BY 3 DESC, 1`)
	if err != nil || !tables {
		return sp, err
	}
	sp.Tables, err = All(l, func(r Scanner) (u SpaceUse, err error) { return u, r.Scan(&u.Name, &u.Bytes) }, `SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC, 1`)
	if err != nil && strings.Contains(err.Error(), "no such table") {
		sp.TablesNote = "sizes per table need a carryover built with -tags sqlite_dbstat (just build)"
		return sp, nil
	}
	return sp, err
}
