package ledger

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
