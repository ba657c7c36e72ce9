package ledger

import "time"

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
