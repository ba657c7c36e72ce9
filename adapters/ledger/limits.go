package ledger

import (
	"database/sql"
	"errors"
	"time"

	"github.com/carryover/carryover/adapters"
)

// migrationLimits adds the walls sessions ran into: rate limits and quotas
// (adapters.Limit) and the context levels announced, one row per session
// and event key, so each is acted on once. Self-contained (one table, one
// index) so it can move in the migration list.
const migrationLimits = `CREATE TABLE limit_events (
		session_id   INTEGER NOT NULL REFERENCES sessions (id),
		key          TEXT NOT NULL,
		project      TEXT NOT NULL,
		tool         TEXT NOT NULL,
		kind         TEXT NOT NULL,
		reached      INTEGER NOT NULL DEFAULT 1,
		used_percent REAL NOT NULL DEFAULT 0,
		window       TEXT NOT NULL DEFAULT '',
		resets_at    INTEGER NOT NULL DEFAULT 0,
		reset_text   TEXT NOT NULL DEFAULT '',
		at           INTEGER NOT NULL,
		PRIMARY KEY (session_id, key)
	) WITHOUT ROWID;
	CREATE INDEX limit_events_project ON limit_events (project, at);`

// LimitEvent is a limit (or a context level) a session reached.
type LimitEvent struct {
	SessionID int64
	NativeID  string
	// Key identifies the event within its session: the row that carried
	// it, "approaching" for the once-per-session warning, "context:LEVEL".
	Key     string
	Project string
	Tool    string
	Limit   adapters.Limit
	At      time.Time
}

// RecordLimit stores e once; it reports whether e is new (false when the
// session already has an event with its key).
func (l *Ledger) RecordLimit(e LimitEvent) (bool, error) {
	var resets int64
	if !e.Limit.ResetsAt.IsZero() {
		resets = e.Limit.ResetsAt.Unix()
	}
	reached := 0
	if e.Limit.Reached {
		reached = 1
	}
	res, err := l.db.Exec(`INSERT INTO limit_events (session_id, key, project, tool, kind, reached, used_percent, window, resets_at, reset_text, at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		e.SessionID, e.Key, e.Project, e.Tool, string(e.Limit.Kind), reached, e.Limit.UsedPercent, e.Limit.Window, resets, e.Limit.ResetText, e.At.UnixMilli())
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

const limitCols = `e.session_id, s.native_id, e.key, e.project, e.tool, e.kind, e.reached, e.used_percent, e.window, e.resets_at, e.reset_text, e.at`

func scanLimit(sc interface{ Scan(...any) error }) (LimitEvent, error) {
	var e LimitEvent
	var kind string
	var reached int
	var resets, at int64
	err := sc.Scan(&e.SessionID, &e.NativeID, &e.Key, &e.Project, &e.Tool, &kind, &reached, &e.Limit.UsedPercent, &e.Limit.Window, &resets, &e.Limit.ResetText, &at)
	e.Limit.Kind, e.Limit.Reached = adapters.LimitKind(kind), reached != 0
	if resets > 0 {
		e.Limit.ResetsAt = time.Unix(resets, 0).UTC()
	}
	e.At = time.UnixMilli(at)
	return e, err
}

// LastLimits returns the newest limit reached (not a warning, not a
// context level) per agent, for project ("" = every project), newest first.
func (l *Ledger) LastLimits(project string) ([]LimitEvent, error) {
	where, args := forProject("e.project", project)
	rows, err := l.db.Query(`SELECT `+limitCols+` FROM limit_events e JOIN sessions s ON s.id = e.session_id
		WHERE `+where+` AND e.reached = 1 AND e.kind NOT LIKE 'context%'
		ORDER BY e.at DESC LIMIT 200`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	seen := map[string]bool{}
	var out []LimitEvent
	for rows.Next() {
		e, err := scanLimit(rows)
		if err != nil {
			return nil, err
		}
		if !seen[e.Tool] {
			seen[e.Tool] = true
			out = append(out, e)
		}
	}
	return out, rows.Err()
}

// StoppedAt returns the limit the project's most recent session stopped
// at, if its newest limit event is newer than that session's last row
// (the session did not go on after it); ok is false otherwise.
func (l *Ledger) StoppedAt(project string) (LimitEvent, bool) {
	e, err := scanLimit(l.db.QueryRow(`SELECT `+limitCols+` FROM limit_events e JOIN sessions s ON s.id = e.session_id
		WHERE e.project = ? AND e.reached = 1 AND e.kind NOT LIKE 'context%' ORDER BY e.at DESC LIMIT 1`, project))
	if errors.Is(err, sql.ErrNoRows) || err != nil {
		return LimitEvent{}, false
	}
	return e, true
}

// HasLimit reports whether a session has an event with key.
func (l *Ledger) HasLimit(sessionID int64, key string) bool {
	var n int
	_ = l.db.QueryRow(`SELECT COUNT(*) FROM limit_events WHERE session_id = ? AND key = ?`, sessionID, key).Scan(&n)
	return n > 0
}
