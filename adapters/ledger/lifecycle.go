package ledger

import (
	"database/sql"
	"errors"
	"strings"
	"time"
)

// lifecycleSchema is the handoff lifecycle (issue 14): every handoff a
// project published, by id, with where it came from and how it ended; the
// project's decisions log; its pinned task. Consumption is not stored: it
// is the delivery receipts (deliveries) whose header carries the id.
const lifecycleSchema = `CREATE TABLE handoff_log (
		id         TEXT PRIMARY KEY,
		project    TEXT NOT NULL,
		tool       TEXT NOT NULL,
		session_id INTEGER NOT NULL,
		native_id  TEXT NOT NULL DEFAULT '',
		head       TEXT NOT NULL DEFAULT '',
		branch     TEXT NOT NULL DEFAULT '',
		hash       TEXT NOT NULL DEFAULT '',
		header     TEXT NOT NULL DEFAULT '',
		goal       TEXT NOT NULL DEFAULT '',
		next       TEXT NOT NULL DEFAULT '',
		files      TEXT NOT NULL DEFAULT '',
		written    INTEGER NOT NULL,
		updated    INTEGER NOT NULL,
		ended      TEXT NOT NULL DEFAULT '',
		ended_at   INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX handoff_log_project ON handoff_log (project, updated);
	CREATE TABLE decisions (
		project TEXT NOT NULL,
		text    TEXT NOT NULL,
		why     TEXT NOT NULL DEFAULT '',
		source  TEXT NOT NULL,
		at      INTEGER NOT NULL,
		dropped INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY (project, text)
	);
	CREATE TABLE pinned_task (project TEXT PRIMARY KEY, text TEXT NOT NULL, at INTEGER NOT NULL);`

// Handoff endings stored in the log; "consumed" and "expired" are derived
// (receipts, age), "active" is the absence of all four.
const (
	EndSuperseded = "superseded"
	EndCleared    = "cleared"
)

// HandoffRecord is one published handoff of a project.
type HandoffRecord struct {
	ID        string
	Project   string
	Tool      string
	SessionID int64
	NativeID  string
	Head      string // short git HEAD when written
	Branch    string
	Hash      string // content hash of handoff.md
	Header    string // its first line
	Goal      string
	Next      string
	Files     []string // project-relative paths the handoff names
	Written   time.Time
	Updated   time.Time // the last rewrite under this id
	Ended     string    // "", EndSuperseded or EndCleared
	EndedAt   time.Time
}

const recordCols = `id, project, tool, session_id, native_id, head, branch, hash, header, goal, next, files, written, updated, ended, ended_at`

// SaveHandoffRecord inserts r, or updates the rewrite of an existing id
// (the session that owns it published again).
func (l *Ledger) SaveHandoffRecord(r HandoffRecord) error { return saveHandoffRecord(l.db, r) }

func saveHandoffRecord(tx execer, r HandoffRecord) error {
	_, err := tx.Exec(`INSERT INTO handoff_log (`+recordCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', 0)
		ON CONFLICT (id) DO UPDATE SET head = excluded.head, branch = excluded.branch, hash = excluded.hash, header = excluded.header,
			goal = excluded.goal, next = excluded.next, files = excluded.files, updated = excluded.updated`,
		r.ID, r.Project, r.Tool, r.SessionID, r.NativeID, r.Head, r.Branch, r.Hash, r.Header, r.Goal, r.Next,
		strings.Join(r.Files, "\n"), r.Written.UnixMilli(), r.Updated.UnixMilli())
	return err
}

// EndHandoff records how a handoff ended (EndSuperseded, EndCleared). A
// handoff already ended keeps its first ending, except that clearing
// wins over superseding.
func (l *Ledger) EndHandoff(id, how string, at time.Time) error { return endHandoff(l.db, id, how, at) }

func endHandoff(tx execer, id, how string, at time.Time) error {
	_, err := tx.Exec(`UPDATE handoff_log SET ended = ?, ended_at = ? WHERE id = ? AND (ended = '' OR (? = 'cleared' AND ended != 'cleared'))`,
		how, at.UnixMilli(), id, how)
	return err
}

func scanRecord(sc interface{ Scan(...any) error }) (HandoffRecord, error) {
	var r HandoffRecord
	var files string
	var w, u, e int64
	err := sc.Scan(&r.ID, &r.Project, &r.Tool, &r.SessionID, &r.NativeID, &r.Head, &r.Branch, &r.Hash, &r.Header, &r.Goal, &r.Next, &files, &w, &u, &r.Ended, &e)
	if files != "" {
		r.Files = strings.Split(files, "\n")
	}
	r.Written, r.Updated = time.UnixMilli(w), time.UnixMilli(u)
	if e != 0 {
		r.EndedAt = time.UnixMilli(e)
	}
	return r, err
}

// ErrNoRecord is returned for a handoff id the ledger does not know.
var ErrNoRecord = errors.New("no such handoff")

// HandoffRecordByID returns one record (ErrNoRecord when unknown).
func (l *Ledger) HandoffRecordByID(id string) (HandoffRecord, error) {
	r, err := scanRecord(l.db.QueryRow(`SELECT `+recordCols+` FROM handoff_log WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNoRecord
	}
	return r, err
}

// HandoffRecords lists a project's handoffs (every project's when empty),
// newest first, at most limit.
func (l *Ledger) HandoffRecords(project string, limit int) ([]HandoffRecord, error) {
	// A Stop asks for its project's newest record: the project index, not
	// the whole log (forProject).
	where, args := forProject("project", project)
	rows, err := l.db.Query(`SELECT `+recordCols+` FROM handoff_log WHERE `+where+` ORDER BY written DESC, id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []HandoffRecord
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// DeleteHandoffRecords forgets a project's handoffs written before t
// (history clean); it returns the ids removed.
func (l *Ledger) DeleteHandoffRecords(project string, before time.Time) ([]string, error) {
	recs, err := l.HandoffRecords(project, 1<<30)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, r := range recs {
		if r.Written.Before(before) {
			if _, err := l.db.Exec(`DELETE FROM handoff_log WHERE id = ?`, r.ID); err != nil {
				return ids, err
			}
			ids = append(ids, r.ID)
		}
	}
	return ids, nil
}

// Consumer is a session that received a handoff.
type Consumer struct {
	Tool      string
	SessionID int64
	NativeID  string
	At        time.Time // first receipt
	LastSeen  time.Time // the session's last event
}

// Consumers lists the sessions other than the handoff's own that received
// it (by any route), first receipt first.
func (l *Ledger) Consumers(r HandoffRecord) ([]Consumer, error) {
	rows, err := l.db.Query(`SELECT d.tool, d.session_id, s.native_id, MIN(d.at), s.last_seen
		FROM deliveries d JOIN sessions s ON s.id = d.session_id
		WHERE d.project = ? AND instr(d.header, ?) > 0 AND d.session_id != ?
		GROUP BY d.session_id ORDER BY MIN(d.at)`, r.Project, r.ID, r.SessionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Consumer
	for rows.Next() {
		var c Consumer
		var at, seen int64
		if err := rows.Scan(&c.Tool, &c.SessionID, &c.NativeID, &at, &seen); err != nil {
			return nil, err
		}
		c.At, c.LastSeen = time.UnixMilli(at), time.UnixMilli(seen)
		out = append(out, c)
	}
	return out, rows.Err()
}

// DeliveredID reports whether a session already received the handoff id
// (any rewrite of it, by any route).
func (l *Ledger) DeliveredID(project, id string, sessionID int64) bool {
	var n int
	_ = l.db.QueryRow(`SELECT COUNT(*) FROM deliveries WHERE project = ? AND session_id = ? AND instr(header, ?) > 0`, project, sessionID, id).Scan(&n)
	return n > 0
}

// Decision is one entry of a project's decisions log.
type Decision struct {
	Text   string
	Why    string
	Source string // "user" (carryover decide) or "extracted"
	At     time.Time
}

// Decision sources.
const (
	DecisionUser      = "user"
	DecisionExtracted = "extracted"
)

// AddDecision adds a decision to the project's log. An extracted one
// never overrides what is there (a dropped decision stays dropped); the
// user's own revives and upgrades it. It reports whether the log changed.
func (l *Ledger) AddDecision(project string, d Decision) (bool, error) {
	q := `INSERT INTO decisions (project, text, why, source, at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`
	if d.Source == DecisionUser {
		q = `INSERT INTO decisions (project, text, why, source, at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (project, text) DO UPDATE SET why = excluded.why, source = excluded.source, at = excluded.at, dropped = 0`
	}
	res, err := l.db.Exec(q, project, d.Text, d.Why, d.Source, d.At.UnixMilli())
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// Decisions lists a project's live decisions: the user's first, then the
// extracted ones, each newest first (the order `decide --list` numbers).
func (l *Ledger) Decisions(project string) ([]Decision, error) {
	rows, err := l.db.Query(`SELECT text, why, source, at FROM decisions WHERE project = ? AND dropped = 0
		ORDER BY source = 'user' DESC, at DESC, rowid DESC`, project)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Decision
	for rows.Next() {
		var d Decision
		var at int64
		if err := rows.Scan(&d.Text, &d.Why, &d.Source, &at); err != nil {
			return nil, err
		}
		d.At = time.UnixMilli(at)
		out = append(out, d)
	}
	return out, rows.Err()
}

// DecisionTexts is every decision the project's log holds, dropped ones
// included (the extractor must not bring those back).
func (l *Ledger) DecisionTexts(project string) (map[string]bool, error) {
	rows, err := l.db.Query(`SELECT text FROM decisions WHERE project = ?`, project)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		out[t] = true
	}
	return out, rows.Err()
}

// DropDecision marks a decision dropped (it is kept, so the extractor
// does not bring it back).
func (l *Ledger) DropDecision(project, text string) error {
	_, err := l.db.Exec(`UPDATE decisions SET dropped = 1 WHERE project = ? AND text = ?`, project, text)
	return err
}

// PinnedTask is the task the user pinned for a project (carryover task).
type PinnedTask struct {
	Text string
	At   time.Time
}

// PinTask sets the project's pinned task.
func (l *Ledger) PinTask(project, text string, at time.Time) error {
	_, err := l.db.Exec(`INSERT INTO pinned_task (project, text, at) VALUES (?, ?, ?)
		ON CONFLICT (project) DO UPDATE SET text = excluded.text, at = excluded.at`, project, text, at.UnixMilli())
	return err
}

// Task returns the project's pinned task (ok false when none).
func (l *Ledger) Task(project string) (PinnedTask, bool) {
	var t PinnedTask
	var at int64
	if err := l.db.QueryRow(`SELECT text, at FROM pinned_task WHERE project = ?`, project).Scan(&t.Text, &at); err != nil {
		return t, false
	}
	t.At = time.UnixMilli(at)
	return t, true
}

// UnpinTask removes the project's pinned task, returning it.
func (l *Ledger) UnpinTask(project string) (PinnedTask, bool, error) {
	t, ok := l.Task(project)
	if !ok {
		return t, false, nil
	}
	_, err := l.db.Exec(`DELETE FROM pinned_task WHERE project = ?`, project)
	return t, true, err
}
