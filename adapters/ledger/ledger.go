// Package ledger is carryover's SQLite store of normalized session rows:
// $CARRYOVER_HOME/ledger.sqlite. It is append-only from the user's point of
// view (rows are upserted by their stable key, never deleted), keeps a
// per-transcript cursor, and outlives the agents' own transcripts.
package ledger

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/mattn/go-sqlite3"
)

// FileName is the ledger's file name inside the carryover home.
const FileName = "ledger.sqlite"

// Ledger is an open ledger.
type Ledger struct {
	db   *sql.DB
	Path string
	// Recovered is set when Open found a corrupt ledger, moved it aside
	// (MovedTo) and started a new one.
	Recovered bool
	MovedTo   string
	// Rebuilt is how many transcripts of the moved-aside ledger were
	// registered again to be re-read (see recover.go).
	Rebuilt int
	ino     uint64 // inode of Path when opened (recovery compares it)
	// deadline, when set, bounds every wait for another process's lock
	// (OpenBy).
	deadline time.Time
	// keys are the pending row keys this process wrote (keys.go).
	keys keyStates

	// Restored is how many rows of the handoff log, receipts, decisions
	// and pinned tasks recovery salvaged from the damaged file
	// (recover_lifecycle.go), and RestoreErr why restoring them failed.
	Restored   int
	RestoreErr error
}

// migrations are applied in order; PRAGMA user_version counts them.
var migrations = []string{
	`CREATE TABLE sessions (
		id          INTEGER PRIMARY KEY,
		tool        TEXT NOT NULL,
		native_id   TEXT NOT NULL,
		project     TEXT NOT NULL DEFAULT '',
		transcript  TEXT NOT NULL DEFAULT '',
		first_seen  INTEGER NOT NULL,
		last_seen   INTEGER NOT NULL,
		last_active INTEGER NOT NULL DEFAULT 0,
		title       TEXT NOT NULL DEFAULT '',
		tokens_used INTEGER NOT NULL DEFAULT 0,
		tokens_max  INTEGER NOT NULL DEFAULT 0,
		next_seq    INTEGER NOT NULL DEFAULT 1,
		UNIQUE (tool, native_id)
	);
	CREATE INDEX sessions_project ON sessions (project, last_seen);
	CREATE TABLE rows (
		session_id INTEGER NOT NULL REFERENCES sessions (id),
		key        TEXT NOT NULL,
		seq        INTEGER NOT NULL,
		ts         INTEGER NOT NULL,
		role       TEXT NOT NULL,
		kind       TEXT NOT NULL,
		tool_name  TEXT NOT NULL DEFAULT '',
		call_id    TEXT NOT NULL DEFAULT '',
		file_path  TEXT NOT NULL DEFAULT '',
		command    TEXT NOT NULL DEFAULT '',
		exit_code  INTEGER,
		text       TEXT NOT NULL DEFAULT '',
		sidechain  INTEGER NOT NULL DEFAULT 0,
		tokens_used INTEGER NOT NULL DEFAULT 0,
		tokens_max  INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY (session_id, key)
	) WITHOUT ROWID;
	CREATE INDEX rows_seq ON rows (session_id, seq);
	CREATE TABLE cursors (
		path       TEXT PRIMARY KEY,
		session_id INTEGER NOT NULL REFERENCES sessions (id),
		sidechain  INTEGER NOT NULL DEFAULT 0,
		offset     INTEGER NOT NULL,
		dev        INTEGER NOT NULL,
		ino        INTEGER NOT NULL,
		head       TEXT NOT NULL,
		head_len   INTEGER NOT NULL,
		updated    INTEGER NOT NULL
	);
	CREATE TABLE handoffs (
		project    TEXT PRIMARY KEY,
		header     TEXT NOT NULL,
		tool       TEXT NOT NULL,
		session_id INTEGER NOT NULL,
		written    INTEGER NOT NULL
	);
	CREATE TABLE deliveries (
		project    TEXT NOT NULL,
		header     TEXT NOT NULL,
		tool       TEXT NOT NULL,
		session_id INTEGER NOT NULL,
		via        TEXT NOT NULL,
		at         INTEGER NOT NULL,
		PRIMARY KEY (project, header, session_id, via)
	);
	CREATE TABLE pending_inject (
		session_id INTEGER PRIMARY KEY,
		created    INTEGER NOT NULL
	);`,
	`CREATE INDEX rows_kind ON rows (session_id, kind, seq);`,
	`CREATE INDEX rows_call ON rows (session_id, call_id) WHERE call_id != '';`,
	`CREATE TABLE dirty (project TEXT PRIMARY KEY, since INTEGER NOT NULL);`,
	`CREATE TABLE distill_state (project TEXT PRIMARY KEY, state BLOB NOT NULL, seqs TEXT NOT NULL, updated INTEGER NOT NULL);`,
	// Rows are stored in (session, seq) order, so a cold ingest appends
	// instead of inserting whole rows at random places by key (which made
	// every batch rewrite most of the table's pages); the key gets a
	// unique index of its own. Every index entry costs an insert's worth of
	// time and, keyed at random, a page written per row on the hook path:
	// the kind index covers only the rows the queries look for, and calls
	// are found near their results by sequence instead (recent.go).
	`CREATE TABLE rows_by_seq (
		session_id  INTEGER NOT NULL REFERENCES sessions (id),
		seq         INTEGER NOT NULL,
		key         TEXT NOT NULL,
		ts          INTEGER NOT NULL,
		role        TEXT NOT NULL,
		kind        TEXT NOT NULL,
		tool_name   TEXT NOT NULL DEFAULT '',
		call_id     TEXT NOT NULL DEFAULT '',
		file_path   TEXT NOT NULL DEFAULT '',
		command     TEXT NOT NULL DEFAULT '',
		exit_code   INTEGER,
		text        TEXT NOT NULL DEFAULT '',
		sidechain   INTEGER NOT NULL DEFAULT 0,
		tokens_used INTEGER NOT NULL DEFAULT 0,
		tokens_max  INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY (session_id, seq)
	) WITHOUT ROWID;
	INSERT INTO rows_by_seq (session_id, seq, key, ts, role, kind, tool_name, call_id, file_path, command, exit_code, text, sidechain, tokens_used, tokens_max)
		SELECT session_id, seq, key, ts, role, kind, tool_name, call_id, file_path, command, exit_code, text, sidechain, tokens_used, tokens_max
		FROM rows ORDER BY session_id, seq;
	DROP TABLE rows;
	ALTER TABLE rows_by_seq RENAME TO rows;
	CREATE UNIQUE INDEX rows_key ON rows (session_id, key);
	CREATE INDEX rows_anchor ON rows (session_id, kind, seq) WHERE ` + anchorRows + `;`,
	// A session is keyed by its project too: a session id seen in two
	// projects (a hostile payload or transcript naming another project's
	// session) gets one session per project, and their rows never mix.
	// Ids are kept, so rows, cursors and receipts still point at them.
	// The table is re-created under its own name (and takes the pages the
	// old one freed): a salvage of a truncated ledger (recover.go) finds
	// the sessions and cursors near the start of the file.
	`CREATE TABLE sessions_v6 AS SELECT * FROM sessions;
	DROP TABLE sessions;
	CREATE TABLE sessions (
		id          INTEGER PRIMARY KEY,
		tool        TEXT NOT NULL,
		native_id   TEXT NOT NULL,
		project     TEXT NOT NULL DEFAULT '',
		transcript  TEXT NOT NULL DEFAULT '',
		first_seen  INTEGER NOT NULL,
		last_seen   INTEGER NOT NULL,
		last_active INTEGER NOT NULL DEFAULT 0,
		title       TEXT NOT NULL DEFAULT '',
		tokens_used INTEGER NOT NULL DEFAULT 0,
		tokens_max  INTEGER NOT NULL DEFAULT 0,
		next_seq    INTEGER NOT NULL DEFAULT 1,
		UNIQUE (tool, native_id, project)
	);
	INSERT INTO sessions (id, tool, native_id, project, transcript, first_seen, last_seen, last_active, title, tokens_used, tokens_max, next_seq)
		SELECT id, tool, native_id, project, transcript, first_seen, last_seen, last_active, title, tokens_used, tokens_max, next_seq FROM sessions_v6;
	DROP TABLE sessions_v6;
	CREATE INDEX sessions_project ON sessions (project, last_seen);`,
	// The content hashes of the handoffs carryover published per project
	// (the newest few): a .carryover/handoff.md whose hash is not among
	// them came from somewhere else (a cloned repository) and is never
	// injected (see HandoffTrusted).
	`CREATE TABLE published (
		project TEXT NOT NULL,
		hash    TEXT NOT NULL,
		written INTEGER NOT NULL,
		PRIMARY KEY (project, hash)
	) WITHOUT ROWID;`,
	migrationLimits, // limits.go
	// What `list` last read of each transcript, and the file's identity
	// then (see describe.go); how many of a session's rows `gc` removed
	// (gc.go).
	describedTable + `
	ALTER TABLE sessions ADD COLUMN pruned INTEGER NOT NULL DEFAULT 0;`,
	lifecycleSchema,
	// Row keys move from a unique index on rows to compact tables written
	// in key or seq order (keys.go). Existing rows are pending (keys_through 1)
	// and indexed when their session is next written, so the migration
	// costs no more than dropping the old index.
	`CREATE TABLE row_keys (
		session_id INTEGER NOT NULL,
		khash      INTEGER NOT NULL,
		seq        INTEGER NOT NULL,
		PRIMARY KEY (session_id, khash, seq)
	) WITHOUT ROWID;
	CREATE TABLE keys_recent (
		session_id INTEGER NOT NULL,
		seq        INTEGER NOT NULL,
		khash      INTEGER NOT NULL,
		PRIMARY KEY (session_id, seq)
	) WITHOUT ROWID;
	ALTER TABLE sessions ADD COLUMN keys_through INTEGER NOT NULL DEFAULT 1;
	DROP INDEX rows_key;`,
	migrationCursorsBySession, // cursors_index.go
}

// anchorRows is the partial index's condition. A query uses such an index
// only when its WHERE clause contains the same condition verbatim.
const anchorRows = `(kind IN ('prompt', 'error') OR (kind = 'tool_call' AND file_path != ''))`

// Open opens (creating if needed) the ledger in dir. A corrupt or
// unreadable database file is moved aside and replaced by a new one;
// Recovered says so.
func Open(dir string) (*Ledger, error) { return OpenBy(dir, time.Time{}) }

// OpenBy is Open for a caller with a deadline (the hook path): while
// another process holds the ledger locked (a hook frozen with Ctrl-Z, a
// long `carryover handoff`), opening it and every later statement wait for
// the lock at most until the deadline and then fail with an error IsBusy
// recognises, instead of waiting busyTimeout per statement.
func OpenBy(dir string, deadline time.Time) (*Ledger, error) {
	openMu.Lock()
	defer openMu.Unlock()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create carryover home %s: %w (set CARRYOVER_HOME to a writable directory)", dir, err)
	}
	path := filepath.Join(dir, FileName)
	l, err := open(path, deadline)
	if err == nil {
		return l, nil
	}
	if !IsCorrupt(err) {
		return nil, err
	}
	// Under the recovery lock, look again: a concurrent hook may already
	// have replaced the file.
	return recoverFile(path, deadline, func() bool {
		l, err := open(path, deadline)
		if err == nil {
			l.Close()
			return false
		}
		return IsCorrupt(err)
	})
}

// openMu serialises Open and Reopen within a process. Across processes
// SQLite's file locks keep a recovery (which moves the file and its -wal
// and -shm aside) safe; within one process those locks do not see the
// other connections, and a connection opened on the old file could map the
// new -shm while the new file's first connection truncates it (SIGBUS).
// A hook opens the ledger once; only tests and long commands open more.
var openMu sync.Mutex

// walCheckpointBytes is the WAL size past which a commit checkpoints it:
// small, because every new process reads the WAL back when it opens the
// ledger (see Leave).
const walCheckpointBytes = 1 << 20

// bulkCheckpointBytes replaces walCheckpointBytes while a big transcript
// is read in batches: every checkpoint copies the WAL's pages into the file
// and syncs it, and batch after batch rewrites the same index pages.
const bulkCheckpointBytes = 32 << 20

// pageSize is the page size of a new ledger. 16 KiB pages make a cold
// ingest about a fifth faster than SQLite's default 4 KiB (fewer B-tree
// pages to split and WAL frames to write); an existing ledger keeps its own.
const pageSize = 16384

// bulkHeap is the Go memory limit of a process from its first run of big
// batches on (the hook's snapshotHeap is 40 MB, a command has none). A
// cold ingest holds ~12 MB of pending keys and ~9 MB of batches in use;
// without a limit a command's heap grew to twice that, and the hook's
// collector, off below 40 MB, let it reach 40. Peak RSS of a cold ingest
// (Go memory + ~5 MB of SQLite + ~12 MB of the binary's pages), before →
// after this limit, the pending keys' cap, the unmapped ledger and one
// waiting batch: 1 GB dense (BenchmarkColdIngest's transcript) 59–66 →
// 50–57.5 MiB on the hook path, 87 → 54 on the manual one; 1.3 GB dense 87
// → 55 and 123 → 52; 1 GB with file contents (IngestCurve's) 59 → 50 and
// 70 → 49. CPU time stayed within the shared machine's noise (hook, 1 GB
// dense: 11.9–12.8 s user before, 12.3–12.8 after).
const bulkHeap = 32 << 20

// bulk switches the WAL checkpoint threshold for a run of big batches;
// the first commit after bulk(false) checkpoints what they left. A run of
// big batches also bounds the process's memory for the rest of its life:
// its Go memory by bulkHeap, and its mapped ledger pages by ending
// MapReads — the run is followed by reads of the whole session (its keys
// written into row_keys, the distiller's fold of every new row), and each
// page read through the map stays in the process's RSS, where the page
// cache holds 2 MB (a cold 1.3 GB ingest on the hook path: +14 MB mapped
// at its end).
func (l *Ledger) bulk(on bool) {
	n := walCheckpointBytes
	if on {
		n = bulkCheckpointBytes
		_, _ = l.db.Exec(`PRAGMA mmap_size = 0`)
		if debug.SetMemoryLimit(-1) > bulkHeap {
			debug.SetMemoryLimit(bulkHeap)
		}
	}
	var ps int
	if l.db.QueryRow(`PRAGMA page_size`).Scan(&ps) != nil || ps <= 0 {
		return
	}
	_, _ = l.db.Exec(`PRAGMA wal_autocheckpoint = ` + strconv.Itoa(n/ps))
}

// driverName is go-sqlite3 with the ledger's connection setup.
const driverName = "sqlite3-carryover-ledger"

func init() {
	sql.Register(driverName, &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		// Keep the -wal file when the last connection closes, emptied:
		// every hook is a new process, and deleting and re-creating the WAL
		// cost a file and a directory fsync per hook, while a WAL left
		// full is read back whole by the next process's open.
		if err := c.SetFileControlInt("main", sqlite3.SQLITE_FCNTL_PERSIST_WAL, 1); err != nil {
			return err
		}
		// The page size and auto_vacuum take effect only on a new file,
		// before WAL mode writes its first page; the page size goes first
		// (set after auto_vacuum it is silently ignored: 4 KiB pages).
		// Incremental auto-vacuum lets `carryover gc` give freed pages back
		// to the file system in steps without rewriting the ledger (an
		// older ledger gets it from one `gc --vacuum`); nothing vacuums
		// unless gc asks. Only a new file is asked: on an existing one the
		// pragma changes nothing until a VACUUM (from none) or rewrites the
		// header under the write lock (from full).
		if _, err := c.Exec(`PRAGMA page_size = `+strconv.Itoa(pageSize), nil); err != nil {
			return err
		}
		if pageCount(c) == 0 {
			if _, err := c.Exec(`PRAGMA auto_vacuum = incremental`, nil); err != nil {
				return err
			}
		}
		if _, err := c.Exec(`PRAGMA journal_mode = WAL; PRAGMA journal_size_limit = 0`, nil); err != nil {
			return err
		}
		ps := int64(4096)
		if rows, err := c.Query(`PRAGMA page_size`, nil); err == nil {
			v := make([]driver.Value, 1)
			if rows.Next(v) == nil {
				if n, ok := v[0].(int64); ok && n > 0 {
					ps = n
				}
			}
			rows.Close()
		}
		_, err := c.Exec(`PRAGMA wal_autocheckpoint = `+strconv.FormatInt(walCheckpointBytes/ps, 10), nil)
		return err
	}})
}

// pageCount is the connection's database size in pages (0: a new file).
func pageCount(c *sqlite3.SQLiteConn) int64 {
	rows, err := c.Query(`PRAGMA page_count`, nil)
	if err != nil {
		return -1
	}
	defer rows.Close()
	v := make([]driver.Value, 1)
	if rows.Next(v) != nil {
		return -1
	}
	n, _ := v[0].(int64)
	return n
}

// busyTimeout is how long a statement waits for another process's lock
// when the caller has no deadline.
const busyTimeout = 5 * time.Second

// busyMillis is the busy timeout for a wait starting now: busyTimeout, or
// what is left before deadline (at least 1 ms: 0 would disable waiting,
// not bound it).
func busyMillis(deadline time.Time) int64 {
	if deadline.IsZero() {
		return busyTimeout.Milliseconds()
	}
	return max(1, time.Until(deadline).Milliseconds())
}

// IsBusy reports whether err means another process held the ledger locked
// past the wait allowed, or the deadline came while the keys of a session
// stored by an older carryover were being indexed: either way the rows
// are read again from the cursor at the next event.
func IsBusy(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked
	}
	return errors.Is(err, errKeysBehind)
}

// MapReads makes SQLite read the ledger through a memory map instead of a
// pread (and a 16 KiB copy) per page: a hook process starts with an empty
// page cache, and a Stop reads ~55 pages, its key lookups at random places.
// Measured in the 10,000-file rig, interleaved: Stop 0.65–0.85 ms less
// (wall p50 8.6–8.8 → 7.8–8.0 ms). The cost is SQLite's documented one:
// an I/O error on a mapped page raises SIGBUS, which ends the process
// instead of failing one statement, so only the hook path, whose process
// lives for one event, maps; truncation by another process is not a risk
// (a WAL checkpoint shrinks the file only when no reader holds an older
// snapshot, and SQLite maps no more than the file's size).
func (l *Ledger) MapReads() {
	_, _ = l.db.Exec(`PRAGMA mmap_size = 2147418112`) // SQLite's default ceiling
}

// SetDeadline bounds the waits of later statements by deadline (see OpenBy).
func (l *Ledger) SetDeadline(deadline time.Time) {
	l.deadline = deadline
	_, _ = l.db.Exec(`PRAGMA busy_timeout = ` + strconv.FormatInt(busyMillis(deadline), 10))
}

func openOnce(path string, deadline time.Time) (*Ledger, error) {
	if f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600); err == nil {
		f.Close()
	} else {
		return nil, fmt.Errorf("open ledger %s: %w", path, err)
	}
	// journal_mode=WAL is set by the connect hook, after the page size.
	db, err := sql.Open(driverName, FileURI(path, "_busy_timeout="+strconv.FormatInt(busyMillis(deadline), 10)+"&_synchronous=NORMAL&_txlock=immediate&_foreign_keys=0"))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	l := &Ledger{db: db, Path: path, ino: inode(path), deadline: deadline}
	if err := l.migrate(); err != nil {
		db.Close()
		return nil, err
	}
	return l, nil
}

// open opens the ledger file at path, trying again with a fresh connection
// while the failure is one a concurrent process causes: concurrent first
// opens of a new file see SQLITE_BUSY without the busy handler being
// called (one of them is switching the file to WAL), and a process that
// moves a damaged file aside (recover.go) leaves the others' half-open
// connections on the old file (an I/O error, a WAL locking protocol error,
// a file gone between two calls).
func open(path string, deadline time.Time) (*Ledger, error) {
	l, err := openOnce(path, deadline)
	for i := 0; err != nil && transient(err) && i < 40; i++ {
		if !deadline.IsZero() && time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Duration(5+i) * time.Millisecond)
		l, err = openOnce(path, deadline)
	}
	return l, err
}

func (l *Ledger) migrate() error {
	var v int
	if err := l.db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		return fmt.Errorf("read ledger schema version: %w", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("ledger schema version %d is newer than this carryover (%d); upgrade carryover", v, len(migrations))
	}
	if v == len(migrations) {
		return nil
	}
	tx, err := l.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Re-check inside the write lock: another process may have migrated.
	if err := tx.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		return err
	}
	if fresh := freshSchema(v); fresh != nil {
		// A new ledger: the migrations' end schema, salvage's tables at
		// the front of the file (fresh.go).
		for _, stmt := range fresh {
			if _, err := tx.Exec(stmt); err != nil {
				return fmt.Errorf("create ledger schema: %w", err)
			}
		}
		v = len(migrations)
	}
	for i := v; i < len(migrations); i++ {
		if _, err := tx.Exec(migrations[i]); err != nil {
			return fmt.Errorf("migrate ledger to schema %d: %w", i+1, err)
		}
	}
	if _, err := tx.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, len(migrations))); err != nil {
		return err
	}
	return tx.Commit()
}

// Close closes the ledger.
func (l *Ledger) Close() error { return l.db.Close() }

// Leave is Close for a process about to exit: it leaves the connection
// open for the exit to release. Closing the last connection checkpoints the
// WAL into the database file with two fsyncs; a hook process that closes
// pays them on every event, while one that leaves its committed pages in
// the WAL hands them to the next process, whose open reads them back
// (cheap while the WAL is small). Committed data is in the WAL either way;
// an exit is what a crash would do, and SQLite is built for that.
//
// The WAL must not grow, though: a process that opens a WAL it did not
// write cannot tell which frames were already checkpointed, so a commit
// past the autocheckpoint size would copy them all again, and the WAL is
// only reset by a later transaction of the same process. So once the WAL
// passes walCheckpointBytes, Leave checkpoints it and truncates it to zero
// (waiting at most briefly for other processes' readers; if they hold it,
// a later hook does it).
func (l *Ledger) Leave() {
	fi, err := os.Stat(l.Path + "-wal")
	if err != nil || fi.Size() < walCheckpointBytes {
		return
	}
	_, _ = l.db.Exec(`PRAGMA busy_timeout = 50`)
	_, _ = l.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
}

// transient reports whether an open failed because of what another
// process was doing at that moment (see open).
func transient(err error) bool {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code {
	case sqlite3.ErrBusy, sqlite3.ErrLocked, sqlite3.ErrProtocol, sqlite3.ErrIoErr, sqlite3.ErrCantOpen:
		return true
	}
	return false
}

// IsCorrupt reports whether err means the database file is damaged.
func IsCorrupt(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.Code == sqlite3.ErrCorrupt || se.Code == sqlite3.ErrNotADB
	}
	s := err.Error()
	return strings.Contains(s, "malformed") || strings.Contains(s, "not a database")
}

// SessionRef names a session to write rows into.
type SessionRef struct {
	Tool       string
	NativeID   string
	Project    string
	Transcript string
}

// Session is a stored session.
type Session struct {
	ID         int64
	Tool       string
	NativeID   string
	Project    string
	Transcript string
	FirstSeen  time.Time
	LastSeen   time.Time
	LastActive time.Time
	Title      string
	TokensUsed int64
	TokensMax  int64
	Rows       int
}

// Row is a stored row.
type Row struct {
	adapters.Row
	SessionID int64
	Seq       int64
	Tool      string
}

// FileURI is the SQLite URI of the file at path with the given query
// (go-sqlite3 and SQLite parameters, already escaped). The path is
// percent-encoded: SQLite reads a URI, so a CARRYOVER_HOME holding '#'
// (fragment), '?' (query), '%' (escape) or a space would otherwise open a
// different file than the one carryover created and checked.
func FileURI(path, query string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs // a URI path is absolute: "file:/x" is the file x in the root
	}
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // "C:/x" on Windows becomes "file:///C:/x"
	}
	u := (&url.URL{Scheme: "file", Path: p}).String()
	if query != "" {
		u += "?" + query
	}
	return u
}

// A new ledger is not built by replaying the migrations: it gets the
// schema they end with, created table by table in an order chosen for
// salvage. With incremental auto-vacuum every table's and index's root
// page sits at the front of the file in creation order (page 1 the
// schema, page 2 the pointer map, then the roots), and the migrations
// re-create the sessions table late (migration 7), which put its root
// after some 15 others (page 18 of a new ledger). A ledger cut short keeps
// its front; damage elsewhere spares it. The tables recovery reads from a
// damaged file (recover.go, recover_lifecycle.go) therefore come first:
// the sessions and cursors at pages 3–6, then the user's own bookkeeping.

var (
	freshOnce  sync.Once
	freshStmts []string
)

// freshSchema returns, for a ledger at schema version v = 0 (a new one),
// the statements that create the schema the migrations end with: the
// migrations are run on an in-memory database and its schema is read back
// (tables in salvageFirst order, then the others as the migrations made
// them, then the indexes). nil for an existing ledger, or if that failed:
// the caller replays the migrations instead.
func freshSchema(v int) []string {
	if v != 0 {
		return nil
	}
	freshOnce.Do(func() { freshStmts, _ = schemaOf(migrations) })
	return freshStmts
}

// schemaOf runs ms on an in-memory database and returns its schema as
// CREATE statements in the order described at freshSchema.
func schemaOf(ms []string) ([]string, error) {
	db, err := sql.Open("sqlite3", ":memory:")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one connection: one in-memory database
	for _, m := range ms {
		if _, err := db.Exec(m); err != nil {
			return nil, err
		}
	}
	// Internal objects (autoindexes, sqlite_sequence) have no SQL of their
	// own or cannot be created by it; the tables' CREATE makes them.
	rows, err := db.Query(`SELECT type, name, sql FROM sqlite_schema
		WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY rowid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type obj struct{ typ, name, sql string }
	var objs []obj
	for rows.Next() {
		var o obj
		if err := rows.Scan(&o.typ, &o.name, &o.sql); err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rank := func(o obj) int {
		if o.typ != "table" {
			return 2*len(salvageTables) + 2 // indexes (and anything else) last
		}
		if o.name == "sessions" {
			return 0
		}
		if i := slices.IndexFunc(salvageTables, func(t salvageTable) bool { return t.name == o.name }); i >= 0 {
			return i + 1
		}
		return len(salvageTables) + 1 // other tables in the migrations' order
	}
	slices.SortStableFunc(objs, func(a, b obj) int { return rank(a) - rank(b) })
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.sql
	}
	return out, nil
}
