// Package ledger is carryover's SQLite store, $CARRYOVER_HOME/ledger.sqlite:
// session rows (upserted by their stable key), cursors, row keys,
// migrations and write transactions; it outlives the agents' transcripts.
// ledger.go opens it, write.go, keys.go and raw.go write, ingest.go reads
// transcripts in, read.go queries, gc.go prunes and forgets, recover.go
// rebuilds a damaged file.
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
	// (MovedTo) and started a new one; Rebuilt transcripts of it are read
	// again and Restored rows of its lifecycle were copied (RestoreErr:
	// why that failed).
	Recovered  bool
	MovedTo    string
	Rebuilt    int
	Restored   int
	RestoreErr error
	ino        uint64    // inode of Path when opened (recovery compares it)
	deadline   time.Time // bounds every wait for another process's lock (OpenBy)
	keys       keyStates // the pending row keys this process wrote (keys.go)
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

// migrations are applied in order; PRAGMA user_version counts them.
var migrations = []string{
	`CREATE TABLE sessions (
		id INTEGER PRIMARY KEY, tool TEXT NOT NULL, native_id TEXT NOT NULL, project TEXT NOT NULL DEFAULT '',
		transcript TEXT NOT NULL DEFAULT '', first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL,
		last_active INTEGER NOT NULL DEFAULT 0, title TEXT NOT NULL DEFAULT '',
		tokens_used INTEGER NOT NULL DEFAULT 0, tokens_max INTEGER NOT NULL DEFAULT 0,
		next_seq INTEGER NOT NULL DEFAULT 1, UNIQUE (tool, native_id)
	);
	CREATE INDEX sessions_project ON sessions (project, last_seen);
	CREATE TABLE rows (
		session_id INTEGER NOT NULL REFERENCES sessions (id), key TEXT NOT NULL, seq INTEGER NOT NULL,
		ts INTEGER NOT NULL, role TEXT NOT NULL, kind TEXT NOT NULL, tool_name TEXT NOT NULL DEFAULT '',
		call_id TEXT NOT NULL DEFAULT '', file_path TEXT NOT NULL DEFAULT '', command TEXT NOT NULL DEFAULT '',
		exit_code INTEGER, text TEXT NOT NULL DEFAULT '', sidechain INTEGER NOT NULL DEFAULT 0,
		tokens_used INTEGER NOT NULL DEFAULT 0, tokens_max INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (session_id, key)
	) WITHOUT ROWID;
	CREATE INDEX rows_seq ON rows (session_id, seq);
	CREATE TABLE cursors (
		path TEXT PRIMARY KEY, session_id INTEGER NOT NULL REFERENCES sessions (id),
		sidechain INTEGER NOT NULL DEFAULT 0, offset INTEGER NOT NULL, dev INTEGER NOT NULL, ino INTEGER NOT NULL,
		head TEXT NOT NULL, head_len INTEGER NOT NULL, updated INTEGER NOT NULL
	);
	CREATE TABLE handoffs (
		project TEXT PRIMARY KEY, header TEXT NOT NULL, tool TEXT NOT NULL, session_id INTEGER NOT NULL,
		written INTEGER NOT NULL
	);
	CREATE TABLE deliveries (
		project TEXT NOT NULL, header TEXT NOT NULL, tool TEXT NOT NULL, session_id INTEGER NOT NULL,
		via TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (project, header, session_id, via)
	);
	CREATE TABLE pending_inject (
		session_id INTEGER PRIMARY KEY, created INTEGER NOT NULL
	);`,
	`CREATE INDEX rows_kind ON rows (session_id, kind, seq);`,
	`CREATE INDEX rows_call ON rows (session_id, call_id) WHERE call_id != '';`,
	`CREATE TABLE dirty (project TEXT PRIMARY KEY, since INTEGER NOT NULL);`,
	`CREATE TABLE distill_state (project TEXT PRIMARY KEY, state BLOB NOT NULL, seqs TEXT NOT NULL, updated INTEGER NOT NULL);`,
	// Rows in (session, seq) order: a cold ingest appends instead of
	// rewriting most of the table's pages per batch. Every index entry
	// costs an insert's worth of time and, keyed at random, a page per row
	// on the hook path: the anchor index covers only the rows the queries
	// look for; calls are found near their results by seq (read.go).
	`CREATE TABLE rows_by_seq (
		session_id INTEGER NOT NULL REFERENCES sessions (id), seq INTEGER NOT NULL, key TEXT NOT NULL,
		ts INTEGER NOT NULL, role TEXT NOT NULL, kind TEXT NOT NULL, tool_name TEXT NOT NULL DEFAULT '',
		call_id TEXT NOT NULL DEFAULT '', file_path TEXT NOT NULL DEFAULT '', command TEXT NOT NULL DEFAULT '',
		exit_code INTEGER, text TEXT NOT NULL DEFAULT '', sidechain INTEGER NOT NULL DEFAULT 0,
		tokens_used INTEGER NOT NULL DEFAULT 0, tokens_max INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (session_id, seq)
	) WITHOUT ROWID;
	INSERT INTO rows_by_seq (session_id, seq, key, ts, role, kind, tool_name, call_id, file_path, command, exit_code, text, sidechain, tokens_used, tokens_max)
		SELECT session_id, seq, key, ts, role, kind, tool_name, call_id, file_path, command, exit_code, text, sidechain, tokens_used, tokens_max
		FROM rows ORDER BY session_id, seq;
	DROP TABLE rows;
	ALTER TABLE rows_by_seq RENAME TO rows;
	CREATE UNIQUE INDEX rows_key ON rows (session_id, key);
	CREATE INDEX rows_anchor ON rows (session_id, kind, seq) WHERE ` + anchorRows + `;`,
	// A session is keyed by its project too: a session id seen in two
	// projects (a hostile payload naming another project's session) gets
	// one session per each, their rows never mix. Ids are kept. Re-created
	// under its own name, it takes the pages the old one freed near the
	// start of the file, where a salvage (recover.go) finds it.
	`CREATE TABLE sessions_v6 AS SELECT * FROM sessions;
	DROP TABLE sessions;
	CREATE TABLE sessions (
		id INTEGER PRIMARY KEY, tool TEXT NOT NULL, native_id TEXT NOT NULL, project TEXT NOT NULL DEFAULT '',
		transcript TEXT NOT NULL DEFAULT '', first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL,
		last_active INTEGER NOT NULL DEFAULT 0, title TEXT NOT NULL DEFAULT '',
		tokens_used INTEGER NOT NULL DEFAULT 0, tokens_max INTEGER NOT NULL DEFAULT 0,
		next_seq INTEGER NOT NULL DEFAULT 1, UNIQUE (tool, native_id, project)
	);
	INSERT INTO sessions (id, tool, native_id, project, transcript, first_seen, last_seen, last_active, title, tokens_used, tokens_max, next_seq)
		SELECT id, tool, native_id, project, transcript, first_seen, last_seen, last_active, title, tokens_used, tokens_max, next_seq FROM sessions_v6;
	DROP TABLE sessions_v6;
	CREATE INDEX sessions_project ON sessions (project, last_seen);`,
	// The hashes of the newest handoffs carryover published per project:
	// a handoff.md not among them (a cloned repository's) is never
	// injected (HandoffTrusted).
	`CREATE TABLE published (
		project TEXT NOT NULL, hash TEXT NOT NULL, written INTEGER NOT NULL, PRIMARY KEY (project, hash)
	) WITHOUT ROWID;`,
	migrationLimits, // limits.go
	// described: `list`'s cache of transcripts until it moved to a file
	// (adapters.DescriptionFile); gc still empties it. pruned: rows gc removed.
	`CREATE TABLE described (
		tool TEXT NOT NULL, path TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
		dev INTEGER NOT NULL, ino INTEGER NOT NULL, ok INTEGER NOT NULL, native_id TEXT NOT NULL,
		project TEXT NOT NULL, last_active TEXT NOT NULL, messages INTEGER NOT NULL, estimated INTEGER NOT NULL,
		preview TEXT NOT NULL, PRIMARY KEY (tool, path)
	) WITHOUT ROWID;
	ALTER TABLE sessions ADD COLUMN pruned INTEGER NOT NULL DEFAULT 0;`,
	lifecycleSchema,
	// Row keys move to compact tables (keys.go). Existing rows are pending
	// (keys_through 1), indexed when their session is next written.
	`CREATE TABLE row_keys (
		session_id INTEGER NOT NULL, khash INTEGER NOT NULL, seq INTEGER NOT NULL,
		PRIMARY KEY (session_id, khash, seq)
	) WITHOUT ROWID;
	CREATE TABLE keys_recent (
		session_id INTEGER NOT NULL, seq INTEGER NOT NULL, khash INTEGER NOT NULL, PRIMARY KEY (session_id, seq)
	) WITHOUT ROWID;
	ALTER TABLE sessions ADD COLUMN keys_through INTEGER NOT NULL DEFAULT 1;
	DROP INDEX rows_key;`,
	// Tracked (every event's catch-up) joins cursors to a project's
	// sessions: without it SQLite scans every cursor (a 5 GB history of
	// 5,215 cursors: 218 page reads and +2.3 ms a Stop, 152 and +0.6 with it).
	`CREATE INDEX cursors_session ON cursors (session_id);`,
}

// anchorRows is the partial index's condition. A query uses such an index
// only when its WHERE clause contains the same condition verbatim.
const anchorRows = `(kind IN ('prompt', 'error') OR (kind = 'tool_call' AND file_path != ''))`

const (
	// walCheckpointBytes is the WAL size past which a commit checkpoints
	// it: small, because every new process reads the WAL back when it
	// opens the ledger (see Leave).
	walCheckpointBytes = 1 << 20
	// bulkCheckpointBytes replaces it while a big transcript is read in
	// batches: every checkpoint copies the WAL's pages into the file and
	// syncs it, and batch after batch rewrites the same index pages.
	bulkCheckpointBytes = 32 << 20
	// pageSize is a new ledger's: 16 KiB pages make a cold ingest about a
	// fifth faster than SQLite's default 4 KiB.
	pageSize = 16384
	// bulkHeap is the Go memory limit from a process's first run of big
	// batches on (a cold ingest holds ~12 MB of pending keys and ~9 MB of
	// batches; unlimited, its heap grew to twice that). Peak RSS before →
	// after it, the keys' cap, the unmapped ledger and one waiting batch:
	// 1 GB dense 59–66 → 50–57.5 MiB (hook), 87 → 54 (manual); 1.3 GB 87
	// → 55 and 123 → 52; CPU time within the noise.
	bulkHeap = 32 << 20
	// busyTimeout is how long a statement waits for another process's lock
	// when the caller has no deadline.
	busyTimeout = 5 * time.Second
	// driverName is go-sqlite3 with the ledger's connection setup.
	driverName = "sqlite3-carryover-ledger"
)

// openMu serialises Open and Reopen within a process: SQLite's file locks
// keep a recovery (which moves the file, its -wal and -shm aside) safe
// across processes, not between one process's connections (one on the old
// file could map the new -shm while it is truncated: SIGBUS).
var openMu sync.Mutex

// Open opens (creating if needed) the ledger in dir. A corrupt or
// unreadable database file is moved aside and replaced by a new one;
// Recovered says so.
func Open(dir string) (*Ledger, error) { return OpenBy(dir, time.Time{}) }

// OpenBy is Open for a caller with a deadline (the hook path): while
// another process holds the ledger locked (a hook frozen with Ctrl-Z),
// every statement waits at most until the deadline, then fails (IsBusy).
func OpenBy(dir string, deadline time.Time) (*Ledger, error) {
	openMu.Lock()
	defer openMu.Unlock()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create carryover home %s: %w (set CARRYOVER_HOME to a writable directory)", dir, err)
	}
	path := filepath.Join(dir, FileName)
	l, err := open(path, deadline)
	if err == nil || !IsCorrupt(err) {
		return l, err
	}
	// Under the recovery lock, look again: a concurrent hook may already
	// have replaced the file.
	return recoverFile(path, deadline, func() bool {
		l, err := open(path, deadline)
		if err == nil {
			l.Close()
		}
		return err != nil && IsCorrupt(err)
	})
}

// open opens the ledger at path, trying again after failures a concurrent
// process causes (first opens of a new file see SQLITE_BUSY while one
// switches it to WAL; a recovery leaves others' connections on the old
// file).
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

func openOnce(path string, deadline time.Time) (*Ledger, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open ledger %s: %w", path, err)
	}
	f.Close()
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

// migrate brings the schema up to date; PRAGMA user_version counts the
// migrations applied. A new ledger gets their end schema (freshSchema).
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
	stmts := migrations[v:]
	if v == 0 && freshSchema() != nil {
		stmts = freshStmts
	}
	for i, stmt := range stmts {
		if _, err := tx.Exec(stmt); err != nil {
			return fmt.Errorf("migrate ledger to schema %d: %w", v+i+1, err)
		}
	}
	if _, err := tx.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, len(migrations))); err != nil {
		return err
	}
	return tx.Commit()
}

// A new ledger gets the migrations' end schema in an order chosen for
// salvage: with incremental auto-vacuum the root pages sit at the front of
// the file in creation order (replayed, the migrations put sessions at
// page 18), and a file cut short keeps its front. So sessions and cursors
// come first (pages 3–6), then the other salvageTables.
var (
	freshOnce  sync.Once
	freshStmts []string
)

// freshSchema returns that schema, read back from the migrations run in
// memory (nil if that failed: the migrations are replayed).
func freshSchema() []string {
	freshOnce.Do(func() { freshStmts, _ = schemaOf(migrations) })
	return freshStmts
}

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
	// own; the tables' CREATE makes them.
	rows, err := db.Query(`SELECT type = 'table', name, sql FROM sqlite_schema
		WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY rowid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type obj struct {
		rank int
		sql  string
	}
	var objs []obj
	for rows.Next() {
		var table bool
		var name string
		var o obj
		if err := rows.Scan(&table, &name, &o.sql); err != nil {
			return nil, err
		}
		o.rank = 2*len(salvageTables) + 2 // indexes last
		if table {
			o.rank = 1 + slices.IndexFunc(salvageTables, func(t salvageTable) bool { return t.name == name })
			if o.rank == 0 && name != "sessions" {
				o.rank = len(salvageTables) + 1 // other tables in the migrations' order
			}
		}
		objs = append(objs, o)
	}
	slices.SortStableFunc(objs, func(a, b obj) int { return a.rank - b.rank })
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.sql
	}
	return out, rows.Err()
}

func init() {
	sql.Register(driverName, &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		// Keep the -wal file, emptied, when the last connection closes:
		// every hook is a new process, and deleting and re-creating the WAL
		// cost a file and a directory fsync per hook.
		if err := c.SetFileControlInt("main", sqlite3.SQLITE_FCNTL_PERSIST_WAL, 1); err != nil {
			return err
		}
		// The page size, then auto_vacuum (else the size is ignored), take
		// effect only on a new file: incremental auto-vacuum lets gc give
		// freed pages back in steps (an older ledger: `gc --vacuum`).
		if _, err := c.Exec(`PRAGMA page_size = `+strconv.Itoa(pageSize), nil); err != nil {
			return err
		}
		if connInt(c, "page_count") == 0 {
			if _, err := c.Exec(`PRAGMA auto_vacuum = incremental`, nil); err != nil {
				return err
			}
		}
		if _, err := c.Exec(`PRAGMA journal_mode = WAL; PRAGMA journal_size_limit = 0`, nil); err != nil {
			return err
		}
		_, err := c.Exec(`PRAGMA wal_autocheckpoint = `+strconv.FormatInt(walCheckpointBytes/max(connInt(c, "page_size"), 512), 10), nil)
		return err
	}})
}

// connInt is a pragma's integer value on a raw connection (-1: unread).
func connInt(c *sqlite3.SQLiteConn, pragma string) int64 {
	rows, err := c.Query(`PRAGMA `+pragma, nil)
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

// bulk switches the WAL checkpoint threshold for a run of big batches (the
// first commit after bulk(false) checkpoints what they left), and bounds
// the process's memory from then on: Go's by bulkHeap, mapped pages by
// ending MapReads (reads of the whole session follow, and mapped pages
// stay in the RSS: +14 MB after a cold 1.3 GB ingest).
func (l *Ledger) bulk(on bool) {
	n := int64(walCheckpointBytes)
	if on {
		n = bulkCheckpointBytes
		_, _ = l.db.Exec(`PRAGMA mmap_size = 0`)
		if debug.SetMemoryLimit(-1) > bulkHeap {
			debug.SetMemoryLimit(bulkHeap)
		}
	}
	if ps := l.pragmaInt("page_size"); ps > 0 {
		_, _ = l.db.Exec(`PRAGMA wal_autocheckpoint = ` + strconv.FormatInt(n/ps, 10))
	}
}

// MapReads makes SQLite read the ledger through a memory map instead of a
// pread and a copy per page (a hook's Stop reads ~55 pages: p50 8.6–8.8 →
// 7.8–8.0 ms in the 10,000-file rig). An I/O error on a mapped page is a
// SIGBUS, so only the hook path, whose process lives for one event, maps.
func (l *Ledger) MapReads() {
	_, _ = l.db.Exec(`PRAGMA mmap_size = 2147418112`) // SQLite's default ceiling
}

// SetDeadline bounds the waits of later statements by deadline (see OpenBy).
func (l *Ledger) SetDeadline(deadline time.Time) {
	l.deadline = deadline
	_, _ = l.db.Exec(`PRAGMA busy_timeout = ` + strconv.FormatInt(busyMillis(deadline), 10))
}

// busyMillis is the busy timeout for a wait starting now: busyTimeout, or
// what is left before deadline (at least 1 ms: 0 would disable waiting).
func busyMillis(deadline time.Time) int64 {
	if deadline.IsZero() {
		return busyTimeout.Milliseconds()
	}
	return max(1, time.Until(deadline).Milliseconds())
}

func (l *Ledger) pragmaInt(name string) int64 {
	var n int64
	_ = l.db.QueryRow(`PRAGMA ` + name).Scan(&n)
	return n
}

// Close closes the ledger.
func (l *Ledger) Close() error { return l.db.Close() }

// Leave is Close for a process about to exit: closing would checkpoint the
// WAL with two fsyncs, while the next process reads committed pages back
// from a small WAL cheaply (an exit is what a crash does). A WAL it did
// not write, though, a process copies whole at its next checkpoint: past
// walCheckpointBytes Leave checkpoints and truncates it (waiting briefly
// for other readers; else a later hook does).
func (l *Ledger) Leave() {
	fi, err := os.Stat(l.Path + "-wal")
	if err != nil || fi.Size() < walCheckpointBytes {
		return
	}
	_, _ = l.db.Exec(`PRAGMA busy_timeout = 50`)
	_, _ = l.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
}

// sqliteCode is err's SQLite error code (0: not a SQLite error).
func sqliteCode(err error) sqlite3.ErrNo {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

// IsBusy reports whether err means another process held the ledger past
// the wait allowed, or errKeysBehind: the rows are read again from the
// cursor at the next event.
func IsBusy(err error) bool {
	c := sqliteCode(err)
	return c == sqlite3.ErrBusy || c == sqlite3.ErrLocked || errors.Is(err, errKeysBehind)
}

// transient reports whether an open failed because of what another
// process was doing at that moment (see open).
func transient(err error) bool {
	switch sqliteCode(err) {
	case sqlite3.ErrBusy, sqlite3.ErrLocked, sqlite3.ErrProtocol, sqlite3.ErrIoErr, sqlite3.ErrCantOpen:
		return true
	}
	return false
}

// IsCorrupt reports whether err means the database file is damaged.
func IsCorrupt(err error) bool {
	if c := sqliteCode(err); c != 0 {
		return c == sqlite3.ErrCorrupt || c == sqlite3.ErrNotADB
	}
	s := err.Error()
	return strings.Contains(s, "malformed") || strings.Contains(s, "not a database")
}

// FileURI is the SQLite URI of the file at path with the given query
// (already escaped). The path is percent-encoded: a CARRYOVER_HOME holding
// '#', '?', '%' or a space would otherwise open another file.
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
