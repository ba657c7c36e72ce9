package ledger

import (
	"time"
)

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

// recordCols are handoff_log's columns in HandoffRecord's order.
const recordCols = `id, project, tool, session_id, native_id, head, branch, hash, header, goal, next, files, written, updated, ended, ended_at`

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

// PinnedTask is the task the user pinned for a project (carryover task).
type PinnedTask struct {
	Text string
	At   time.Time
}

// migrationLimits adds the walls sessions ran into: rate limits and quotas
// (adapters.Limit; publish/limits keeps its queries) and the context levels announced, one row per session
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
