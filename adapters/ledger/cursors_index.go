package ledger

// migrationCursorsBySession is the index the hook path needs to find a
// project's transcripts without reading every cursor the ledger holds:
// Tracked (every event's catch-up, Sync) joins cursors to the project's
// sessions, and with cursors keyed by path alone SQLite scans them all.
// Measured (BenchmarkHookHistory's rig, Stop, a 5 GB history of 3,911
// sessions with 5,215 cursors): 218 page reads and +2.3 ms of CPU against
// an empty ledger without it, 152 reads and +0.6 ms with it (140 reads on
// the empty one).
// Migration 13.
const migrationCursorsBySession = `CREATE INDEX cursors_session ON cursors (session_id);`
