package ledger

import (
	"database/sql"
	"fmt"
	"strconv"
	"time"
)

// GCOptions says which sessions' rows `carryover gc` removes: those last
// active before Before (and of Project, when set).
type GCOptions struct {
	Before  time.Time
	Project string
	// DryRun counts without removing.
	DryRun bool
}

// GCResult is what GC removed and gave back.
type GCResult struct {
	Sessions int   // sessions whose rows were removed
	Rows     int64 // rows removed
	// Kept counts old sessions kept because a project's current handoff
	// was distilled from them or a handoff waits to be injected into them.
	Kept int
	// FreedBytes is what the file shrank by (a ledger with incremental
	// auto-vacuum); FreeBytes is what stays free inside it, reused by new
	// rows (a ledger made before auto-vacuum: `gc --vacuum` gives it back).
	FreedBytes, FreeBytes int64
	AutoVacuum            bool
}

// GC removes the rows of old sessions. It never removes handoff records
// (handoffs, deliveries, published digests), the projects' distill state
// (where decisions live), or anything of a session active since the
// cut-off. A pruned session keeps its ledger entry and cursor: its rows'
// sequence numbers are never reused and its transcript is not read again
// from the start. The freed pages go back to the file system by
// incremental vacuum, in steps (a ledger made before auto-vacuum keeps them
// for new rows until one Vacuum). Only a command runs this: never a hook.
func (l *Ledger) GC(o GCOptions) (GCResult, error) {
	var r GCResult
	cut := o.Before.UnixMilli()
	where, args := forProject("s.project", o.Project)
	q := `SELECT s.id, s.next_seq - 1 - s.pruned,
			(s.id IN (SELECT session_id FROM handoffs) OR s.id IN (SELECT session_id FROM pending_inject))
		FROM sessions s
		WHERE MAX(s.last_active, s.last_seen) < ? AND ` + where + ` AND s.next_seq - 1 > s.pruned`
	rows, err := l.db.Query(q, append([]any{cut}, args...)...)
	if err != nil {
		return r, err
	}
	type victim struct{ id, rows int64 }
	var vs []victim
	for rows.Next() {
		var v victim
		var keep bool
		if err := rows.Scan(&v.id, &v.rows, &keep); err != nil {
			rows.Close()
			return r, err
		}
		if keep {
			r.Kept++
			continue
		}
		vs = append(vs, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return r, err
	}
	for _, v := range vs {
		r.Sessions++
		if o.DryRun {
			r.Rows += v.rows
			continue
		}
		// One transaction per session: a hook waiting for the ledger
		// waits for one session's delete, not the whole run's. The
		// session's activity is checked again inside it.
		n, err := l.pruneSession(v.id, cut)
		if err != nil {
			return r, err
		}
		r.Rows += n
	}
	var av int
	_ = l.db.QueryRow(`PRAGMA auto_vacuum`).Scan(&av)
	r.AutoVacuum = av == 2
	if r.AutoVacuum && !o.DryRun {
		before := l.fileBytes()
		// In steps of vacuumPages pages, each its own transaction: a hook
		// waiting for the ledger waits for one step, not the whole run.
		for free := l.pragmaInt("freelist_count"); free > 0; {
			if err := l.vacuumStep(); err != nil {
				return r, fmt.Errorf("incremental vacuum: %w", err)
			}
			left := l.pragmaInt("freelist_count")
			if left >= free {
				break // no progress: never loop
			}
			free = left
		}
		// The file shrinks when the WAL's last frames reach it.
		_, _ = l.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
		r.FreedBytes = max(0, before-l.fileBytes())
	}
	r.FreeBytes = l.pragmaInt("freelist_count") * l.pragmaInt("page_size")
	return r, nil
}

// vacuumPages is how many free pages one incremental-vacuum step gives
// back: 16 MB of 16 KiB pages, one transaction of tens of milliseconds
// (it moves pages from the end of the file into free slots and updates
// the pointer map). A variable for the tests.
var vacuumPages = 1024

// vacuumStep gives back up to vacuumPages free pages in one transaction.
func (l *Ledger) vacuumStep() error {
	// The pragma frees one page per result row: read it to the end.
	vr, err := l.db.Query(`PRAGMA incremental_vacuum(` + strconv.Itoa(vacuumPages) + `)`)
	if err != nil {
		return err
	}
	for vr.Next() {
	}
	vr.Close()
	return vr.Err()
}

func (l *Ledger) pruneSession(id, cut int64) (int64, error) {
	tx, err := l.db.Begin()
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var last int64
	if err := tx.QueryRow(`SELECT next_seq - 1 FROM sessions WHERE id = ? AND MAX(last_active, last_seen) < ?`, id, cut).Scan(&last); err == sql.ErrNoRows {
		return 0, nil // active again since the list was made
	} else if err != nil {
		return 0, err
	}
	res, err := tx.Exec(`DELETE FROM rows WHERE session_id = ?`, id)
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	if _, err := tx.Exec(`DELETE FROM row_keys WHERE session_id = ?`, id); err != nil {
		return 0, err
	}
	if _, err := tx.Exec(`DELETE FROM keys_recent WHERE session_id = ?`, id); err != nil {
		return 0, err
	}
	if _, err := tx.Exec(`UPDATE sessions SET pruned = next_seq - 1, keys_through = next_seq WHERE id = ?`, id); err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

// Vacuum rewrites the ledger without its free pages (`gc --vacuum`) and
// with incremental auto-vacuum switched on: the one-time step that lets
// later `gc` runs shrink a ledger made before it. It needs free disk space
// about the ledger's size and holds the ledger locked while it runs (hooks
// skip their update meanwhile).
func (l *Ledger) Vacuum() error {
	if _, err := l.db.Exec(`PRAGMA auto_vacuum = incremental`); err != nil {
		return fmt.Errorf("vacuum ledger: %w", err)
	}
	if _, err := l.db.Exec(`VACUUM`); err != nil {
		return fmt.Errorf("vacuum ledger: %w", err)
	}
	_, err := l.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}

func (l *Ledger) fileBytes() int64 {
	return l.pragmaInt("page_count") * l.pragmaInt("page_size")
}

// scrub rewrites the ledger without its free pages and empties the WAL:
// `carryover forget` (forget.go) leaves no byte of a forgotten session in
// either. Like Vacuum, never on the hook path.
func (l *Ledger) scrub() error {
	if _, err := l.db.Exec(`VACUUM`); err != nil {
		return fmt.Errorf("rewrite the ledger: %w", err)
	}
	_, err := l.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}

// ForgetGone drops the cached descriptions of transcripts that no longer
// exist (gone reports that of a path); `gc` runs it. It returns how many.
func (l *Ledger) ForgetGone(gone func(path string) bool) (int, error) {
	rows, err := l.db.Query(`SELECT tool, path FROM described`)
	if err != nil {
		return 0, err
	}
	var drop [][2]string
	for rows.Next() {
		var tool, path string
		if err := rows.Scan(&tool, &path); err != nil {
			rows.Close()
			return 0, err
		}
		if gone(path) {
			drop = append(drop, [2]string{tool, path})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, d := range drop {
		if _, err := l.db.Exec(`DELETE FROM described WHERE tool = ? AND path = ?`, d[0], d[1]); err != nil {
			return 0, err
		}
	}
	return len(drop), nil
}
