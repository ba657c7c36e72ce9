// Package ledger is carryover's SQLite store, $CARRYOVER_HOME/ledger.sqlite:
// session rows (upserted by their stable key), cursors, row keys,
// migrations and transactions; it outlives the agents' transcripts.
// ledger.go opens and reads it, and reads transcripts in and writes them
// with their row keys (one file: a Stop runs code in both halves); gc.go
// prunes and forgets, recover.go rebuilds a damaged file.
package ledger

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"math"
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

// Ledger is an open ledger. Recovered: Open found it corrupt, moved it
// aside (MovedTo) and started a new one; Rebuilt transcripts are read again,
// Restored lifecycle rows were copied (RestoreErr: why that failed).
type Ledger struct {
	db                *sql.DB
	Path, MovedTo     string
	Recovered         bool
	Rebuilt, Restored int
	RestoreErr        error
	ino               uint64    // inode of Path when opened (recovery compares it)
	deadline          time.Time // bounds every wait for another process's lock (OpenBy)
	keys              keyStates // the pending row keys this process wrote (keyWriter)
}

// SessionRef names a session to write rows into.
type SessionRef struct{ Tool, NativeID, Project, Transcript string }

// Session is a stored session.
type Session struct {
	ID                              int64
	Tool, NativeID, Project         string
	Transcript, Title               string
	FirstSeen, LastSeen, LastActive time.Time
	TokensUsed, TokensMax           int64
	Rows                            int
}

// Row is a stored row.
type Row struct {
	adapters.Row
	SessionID, Seq int64
	Tool           string
}

// migrations are applied in order; PRAGMA user_version counts them.
var migrations = []string{
	`CREATE TABLE sessions (id INTEGER PRIMARY KEY, tool TEXT NOT NULL, native_id TEXT NOT NULL, project TEXT NOT NULL DEFAULT '',
		transcript TEXT NOT NULL DEFAULT '', first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL, last_active INTEGER NOT NULL DEFAULT 0,
		title TEXT NOT NULL DEFAULT '', tokens_used INTEGER NOT NULL DEFAULT 0, tokens_max INTEGER NOT NULL DEFAULT 0,
		next_seq INTEGER NOT NULL DEFAULT 1, UNIQUE (tool, native_id));
	CREATE INDEX sessions_project ON sessions (project, last_seen);
	CREATE TABLE rows (session_id INTEGER NOT NULL REFERENCES sessions (id), key TEXT NOT NULL, seq INTEGER NOT NULL, ts INTEGER NOT NULL,
		role TEXT NOT NULL, kind TEXT NOT NULL, tool_name TEXT NOT NULL DEFAULT '', call_id TEXT NOT NULL DEFAULT '',
		file_path TEXT NOT NULL DEFAULT '', command TEXT NOT NULL DEFAULT '', exit_code INTEGER, text TEXT NOT NULL DEFAULT '',
		sidechain INTEGER NOT NULL DEFAULT 0, tokens_used INTEGER NOT NULL DEFAULT 0, tokens_max INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY (session_id, key)) WITHOUT ROWID;
	CREATE INDEX rows_seq ON rows (session_id, seq);
	CREATE TABLE cursors (path TEXT PRIMARY KEY, session_id INTEGER NOT NULL REFERENCES sessions (id), sidechain INTEGER NOT NULL DEFAULT 0,
		offset INTEGER NOT NULL, dev INTEGER NOT NULL, ino INTEGER NOT NULL, head TEXT NOT NULL, head_len INTEGER NOT NULL, updated INTEGER NOT NULL);
	CREATE TABLE handoffs (project TEXT PRIMARY KEY, header TEXT NOT NULL, tool TEXT NOT NULL, session_id INTEGER NOT NULL, written INTEGER NOT NULL);
	CREATE TABLE deliveries (project TEXT NOT NULL, header TEXT NOT NULL, tool TEXT NOT NULL, session_id INTEGER NOT NULL,
		via TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (project, header, session_id, via));
	CREATE TABLE pending_inject (session_id INTEGER PRIMARY KEY, created INTEGER NOT NULL);`,
	`CREATE INDEX rows_kind ON rows (session_id, kind, seq);`,
	`CREATE INDEX rows_call ON rows (session_id, call_id) WHERE call_id != '';`,
	`CREATE TABLE dirty (project TEXT PRIMARY KEY, since INTEGER NOT NULL);`,
	`CREATE TABLE distill_state (project TEXT PRIMARY KEY, state BLOB NOT NULL, seqs TEXT NOT NULL, updated INTEGER NOT NULL);`,
	// Rows in (session, seq) order: a cold ingest appends instead of
	// rewriting most pages per batch. Each index entry costs an insert and,
	// keyed at random, a page per row: the anchor index covers only the rows
	// the queries look for; calls are found near their results by seq.
	`CREATE TABLE rows_by_seq (session_id INTEGER NOT NULL REFERENCES sessions (id), seq INTEGER NOT NULL, key TEXT NOT NULL,
		ts INTEGER NOT NULL, role TEXT NOT NULL, kind TEXT NOT NULL, tool_name TEXT NOT NULL DEFAULT '', call_id TEXT NOT NULL DEFAULT '',
		file_path TEXT NOT NULL DEFAULT '', command TEXT NOT NULL DEFAULT '', exit_code INTEGER, text TEXT NOT NULL DEFAULT '',
		sidechain INTEGER NOT NULL DEFAULT 0, tokens_used INTEGER NOT NULL DEFAULT 0, tokens_max INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY (session_id, seq)) WITHOUT ROWID;
	INSERT INTO rows_by_seq (` + rowColumns + `) SELECT ` + rowColumns + ` FROM rows ORDER BY session_id, seq;
	DROP TABLE rows;
	ALTER TABLE rows_by_seq RENAME TO rows;
	CREATE UNIQUE INDEX rows_key ON rows (session_id, key);
	CREATE INDEX rows_anchor ON rows (session_id, kind, seq) WHERE ` + anchorRows + `;`,
	// A session is keyed by its project too: a session id seen in two
	// projects (a hostile payload naming another project's session) gets one
	// session in each; ids are kept. Re-created under its own name, it takes
	// the freed pages near the file's start, where a salvage finds it.
	`CREATE TABLE sessions_v6 AS SELECT * FROM sessions;
	DROP TABLE sessions;
	CREATE TABLE sessions (id INTEGER PRIMARY KEY, tool TEXT NOT NULL, native_id TEXT NOT NULL, project TEXT NOT NULL DEFAULT '',
		transcript TEXT NOT NULL DEFAULT '', first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL, last_active INTEGER NOT NULL DEFAULT 0,
		title TEXT NOT NULL DEFAULT '', tokens_used INTEGER NOT NULL DEFAULT 0, tokens_max INTEGER NOT NULL DEFAULT 0,
		next_seq INTEGER NOT NULL DEFAULT 1, UNIQUE (tool, native_id, project));
	INSERT INTO sessions (id, tool, native_id, project, transcript, first_seen, last_seen, last_active, title, tokens_used, tokens_max, next_seq)
		SELECT id, tool, native_id, project, transcript, first_seen, last_seen, last_active, title, tokens_used, tokens_max, next_seq FROM sessions_v6;
	DROP TABLE sessions_v6;
	CREATE INDEX sessions_project ON sessions (project, last_seen);`,
	// Hashes of the newest handoffs published per project: a handoff.md not
	// among them (a cloned repository's) is never injected (HandoffTrusted).
	`CREATE TABLE published (project TEXT NOT NULL, hash TEXT NOT NULL, written INTEGER NOT NULL, PRIMARY KEY (project, hash)) WITHOUT ROWID;`,
	// The walls sessions ran into (rate limits, quotas: adapters.Limit) and
	// context levels announced, one row per session and event key, so each
	// is acted on once; publish/limits keeps its queries.
	`CREATE TABLE limit_events (session_id INTEGER NOT NULL REFERENCES sessions (id), key TEXT NOT NULL, project TEXT NOT NULL,
		tool TEXT NOT NULL, kind TEXT NOT NULL, reached INTEGER NOT NULL DEFAULT 1, used_percent REAL NOT NULL DEFAULT 0,
		window TEXT NOT NULL DEFAULT '', resets_at INTEGER NOT NULL DEFAULT 0, reset_text TEXT NOT NULL DEFAULT '',
		at INTEGER NOT NULL, PRIMARY KEY (session_id, key)) WITHOUT ROWID;
	CREATE INDEX limit_events_project ON limit_events (project, at);`,
	// described: `list`'s old cache of transcripts (now adapters.DescriptionFile;
	// gc still empties it). pruned: rows gc removed.
	`CREATE TABLE described (tool TEXT NOT NULL, path TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
		dev INTEGER NOT NULL, ino INTEGER NOT NULL, ok INTEGER NOT NULL, native_id TEXT NOT NULL, project TEXT NOT NULL,
		last_active TEXT NOT NULL, messages INTEGER NOT NULL, estimated INTEGER NOT NULL, preview TEXT NOT NULL,
		PRIMARY KEY (tool, path)) WITHOUT ROWID;
	ALTER TABLE sessions ADD COLUMN pruned INTEGER NOT NULL DEFAULT 0;`,
	// The handoff lifecycle (issue 14): every handoff published, where it
	// came from and how it ended; the decisions log; the pinned task.
	// Consumption is the receipts (deliveries) whose header carries the id.
	`CREATE TABLE handoff_log (id TEXT PRIMARY KEY, project TEXT NOT NULL, tool TEXT NOT NULL, session_id INTEGER NOT NULL,
		native_id TEXT NOT NULL DEFAULT '', head TEXT NOT NULL DEFAULT '', branch TEXT NOT NULL DEFAULT '', hash TEXT NOT NULL DEFAULT '',
		header TEXT NOT NULL DEFAULT '', goal TEXT NOT NULL DEFAULT '', next TEXT NOT NULL DEFAULT '', files TEXT NOT NULL DEFAULT '',
		written INTEGER NOT NULL, updated INTEGER NOT NULL, ended TEXT NOT NULL DEFAULT '', ended_at INTEGER NOT NULL DEFAULT 0);
	CREATE INDEX handoff_log_project ON handoff_log (project, updated);
	CREATE TABLE decisions (project TEXT NOT NULL, text TEXT NOT NULL, why TEXT NOT NULL DEFAULT '', source TEXT NOT NULL,
		at INTEGER NOT NULL, dropped INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (project, text));
	CREATE TABLE pinned_task (project TEXT PRIMARY KEY, text TEXT NOT NULL, at INTEGER NOT NULL);`,
	// Row keys move to compact tables (keyWriter). Existing rows are pending
	// (keys_through 1), indexed when their session is next written.
	`CREATE TABLE row_keys (session_id INTEGER NOT NULL, khash INTEGER NOT NULL, seq INTEGER NOT NULL,
		PRIMARY KEY (session_id, khash, seq)) WITHOUT ROWID;
	CREATE TABLE keys_recent (session_id INTEGER NOT NULL, seq INTEGER NOT NULL, khash INTEGER NOT NULL,
		PRIMARY KEY (session_id, seq)) WITHOUT ROWID;
	ALTER TABLE sessions ADD COLUMN keys_through INTEGER NOT NULL DEFAULT 1;
	DROP INDEX rows_key;`,
	// Tracked (every event's catch-up) joins cursors to a project's
	// sessions: without it SQLite scans every cursor (5,215 cursors: 218
	// page reads and +2.3 ms a Stop, 152 and +0.6 with it).
	`CREATE INDEX cursors_session ON cursors (session_id);`,
	// Index keys a Stop does not change: every Stop set the session's
	// last_seen and its handoff's updated, so each rewrote an index page (2
	// of a Stop's ~20 16 KiB WAL frames). Nothing sorts by either through
	// the index; a project's handoffs are read newest first by (written, id).
	`DROP INDEX sessions_project;
	CREATE INDEX sessions_project ON sessions (project);
	DROP INDEX handoff_log_project;
	CREATE INDEX handoff_log_project ON handoff_log (project, written, id);`,
}

// rowColumns are the rows table's columns.
const rowColumns = `session_id, seq, key, ts, role, kind, tool_name, call_id, file_path, command, exit_code, text, sidechain, tokens_used, tokens_max`

// anchorRows is the partial index's condition (a query's WHERE must repeat it).
const anchorRows = `(kind IN ('prompt', 'error') OR (kind = 'tool_call' AND file_path != ''))`

// walCheckpointBytes: past it a commit checkpoints the WAL; small, as every
// new process reads the WAL back (Leave); bulkCheckpointBytes while a big
// transcript is read in batches (a checkpoint syncs pages the next batches
// rewrite). 16 KiB pages: a cold ingest a fifth faster than 4 KiB. bulkHeap:
// the Go memory limit of a process writing big batches (~12 MB of pending
// keys, ~9 MB of batches; the heap grew to twice that): peak RSS at 1 GB dense
// 59–66 → 50–57.5 MiB (hook), 87 → 54 (manual), CPU equal.
const (
	walCheckpointBytes  = 1 << 20
	bulkCheckpointBytes = 32 << 20
	pageSize            = 16384
	bulkHeap            = 32 << 20
	busyTimeout         = 5 * time.Second            // the wait for a lock without a deadline
	driverName          = "sqlite3-carryover-ledger" // go-sqlite3 with the ledger's connection setup
)

// openMu serialises Open and Reopen in a process: SQLite's locks make a
// recovery (moving the files aside) safe between processes, not between
// connections (one on the old file could map the new -shm: SIGBUS).
var openMu sync.Mutex

// Open opens or creates the ledger in dir; a corrupt file is replaced (Recovered).
func Open(dir string) (*Ledger, error) { return OpenBy(dir, time.Time{}) }

// OpenBy is Open with a deadline (the hook path): while another process holds
// the ledger locked (a hook frozen with Ctrl-Z), a statement waits at most
// until the deadline, then fails (IsBusy).
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
	// Under the recovery lock, look again: another hook may have replaced it.
	return recoverFile(path, deadline, func() bool {
		l, err := open(path, deadline)
		if err == nil {
			l.Close()
		}
		return err != nil && IsCorrupt(err)
	})
}

// open retries what another process causes: SQLITE_BUSY as it switches to WAL, a recovery.
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
	_, ino := adapters.FileID(f) // what recovery compares (inode)
	f.Close()
	// synchronous=NORMAL under WAL: a power loss may lose the last commits
	// (the next hook re-reads them from the cursors), never consistency.
	// _mutex=no: the one connection (SetMaxOpenConns) is used by one
	// goroutine at a time, so SQLite's per-call connection mutex only cost
	// instructions (a Stop 15.0M → 14.7M, cachegrind).
	db, err := sql.Open(ledgerDriver(), FileURI(path, "_busy_timeout="+strconv.FormatInt(busyMillis(deadline), 10)+"&_synchronous=NORMAL&_txlock=immediate&_foreign_keys=0&_mutex=no"))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	l := &Ledger{db: db, Path: path, ino: ino, deadline: deadline}
	if err := l.migrate(); err != nil {
		db.Close()
		return nil, err
	}
	return l, nil
}

// migrate brings the schema up to date (a new ledger: freshSchema).
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
	return l.inTx(func(tx *sql.Tx) error {
		// Again inside the write lock: another process may have migrated.
		if err := tx.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
			return err
		}
		stmts := migrations[v:]
		if fresh := freshSchema(); v == 0 && fresh != nil {
			stmts = fresh
		}
		for i, stmt := range stmts {
			if _, err := tx.Exec(stmt); err != nil {
				return fmt.Errorf("migrate ledger to schema %d: %w", v+i+1, err)
			}
		}
		_, err := tx.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, len(migrations)))
		return err
	})
}

// inTx runs fn in a transaction, committed when fn returns nil.
func (l *Ledger) inTx(fn func(*sql.Tx) error) error {
	tx, err := l.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// freshSchema is the migrations' end schema, read back from running them in
// memory (nil if that failed: they are replayed), ordered for salvage: root
// pages sit at the file's front in creation order (replayed, sessions land
// at page 18) and a file cut short keeps its front, so sessions and cursors
// come first (pages 3–6), then the other salvageTables, the indexes last.
var freshSchema = sync.OnceValue(func() []string { s, _ := schemaOf(migrations); return s })

func schemaOf(ms []string) ([]string, error) {
	db, err := sql.Open("sqlite3", ":memory:")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one connection: one in-memory database
	if _, err := db.Exec(strings.Join(ms, "\n")); err != nil {
		return nil, err
	}
	rank := `CASE name WHEN 'sessions' THEN 0`
	for i, t := range salvageTables {
		rank += ` WHEN '` + t.name + `' THEN ` + strconv.Itoa(i+1)
	}
	return All(db, ScanValue[string], `SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL -- autoindexes have none
		AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY type != 'table', `+rank+` ELSE 99 END, rowid`)
}

var registerOnce sync.Once

// ledgerDriver registers the driver on first use (a process with no ledger runs none of this).
func ledgerDriver() string {
	registerOnce.Do(func() { sql.Register(driverName, &sqlite3.SQLiteDriver{ConnectHook: connect}) })
	return driverName
}

func connect(c *sqlite3.SQLiteConn) error {
	// Keep the emptied -wal when the last connection closes: deleting and
	// re-creating it cost a file and a directory fsync per hook.
	if err := c.SetFileControlInt("main", sqlite3.SQLITE_FCNTL_PERSIST_WAL, 1); err != nil {
		return err
	}
	// The page size, then auto_vacuum, apply to a new file only: incremental
	// auto-vacuum lets gc give pages back in steps (older: `gc --vacuum`).
	q := `PRAGMA page_size = ` + strconv.Itoa(pageSize) + `;`
	if connInt(c, "page_count") == 0 {
		q += `PRAGMA auto_vacuum = incremental;`
	}
	q += `PRAGMA journal_mode = WAL; PRAGMA journal_size_limit = 0;`
	if _, err := c.Exec(q, nil); err != nil {
		return err
	}
	_, err := c.Exec(`PRAGMA wal_autocheckpoint = `+strconv.FormatInt(walCheckpointBytes/max(connInt(c, "page_size"), 512), 10), nil)
	return err
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

// bulk switches the checkpoint threshold for a run of big batches (the
// first commit after bulk(false) checkpoints them) and bounds memory: Go's
// by bulkHeap, mapped pages by ending MapReads (+14 MB RSS at 1.3 GB cold).
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

// MapReads reads through a memory map, not a pread and a copy per page (a
// Stop reads ~55 pages: p50 8.6–8.8 → 7.8–8.0 ms). An I/O error on a mapped
// page is a SIGBUS, so only the hook path, one event per process, maps.
func (l *Ledger) MapReads() {
	_, _ = l.db.Exec(`PRAGMA mmap_size = 2147418112`) // SQLite's default ceiling
}

// SetDeadline bounds the waits of later statements by deadline (see OpenBy).
func (l *Ledger) SetDeadline(deadline time.Time) {
	l.deadline = deadline
	_, _ = l.db.Exec(`PRAGMA busy_timeout = ` + strconv.FormatInt(busyMillis(deadline), 10))
}

// busyMillis is busyTimeout, or what is left before deadline (≥ 1 ms: 0 waits not).
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

// inode is path's inode number (0: unreadable); recovery compares it.
func inode(path string) uint64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	_, ino := adapters.FileID(f)
	return ino
}

// Close closes the ledger.
func (l *Ledger) Close() error { return l.db.Close() }

// Leave is Close for a process about to exit: Close checkpoints the WAL with
// two fsyncs; the next process reads a small WAL back cheaply. Past
// walCheckpointBytes Leave checkpoints and truncates it, waiting briefly for
// readers (a WAL another process wrote is copied whole at its checkpoint).
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

// IsBusy: another process held the ledger too long, or errKeysBehind (read next event).
func IsBusy(err error) bool {
	c := sqliteCode(err)
	return c == sqlite3.ErrBusy || c == sqlite3.ErrLocked || errors.Is(err, errKeysBehind)
}

// transient reports whether an open failed because of another process (open).
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

// FileURI is the SQLite URI of the file at path with query, the path
// percent-encoded: a CARRYOVER_HOME with '#', '?', '%' or ' ' stays one file.
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

// Store is what the ledger offers features that keep their own queries over
// its tables (publish/lifecycle, publish/limits): the database or a
// transaction (Begin). The ledger keeps their schema, migrations and salvage.
type Store interface {
	Exec(q string, args ...any) (sql.Result, error)
	Query(q string, args ...any) (*sql.Rows, error)
	QueryRow(q string, args ...any) *sql.Row
}

// Exec runs a statement on the ledger.
func (l *Ledger) Exec(q string, args ...any) (sql.Result, error) { return l.db.Exec(q, args...) }

// Query runs a query on the ledger.
func (l *Ledger) Query(q string, args ...any) (*sql.Rows, error) { return l.db.Query(q, args...) }

// QueryRow runs a query for one row on the ledger.
func (l *Ledger) QueryRow(q string, args ...any) *sql.Row { return l.db.QueryRow(q, args...) }

// Begin starts a transaction: a Stop records what it published in one (a
// WAL commit each cost). Not a callback: no call chain re-enters a feature.
func (l *Ledger) Begin() (*sql.Tx, error) { return l.db.Begin() }

// Scanner is a *sql.Row or *sql.Rows.
type Scanner interface{ Scan(...any) error }

// All scans every row of a query with scan.
func All[T any](s Store, scan func(Scanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := s.Query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// RecordCols are handoff_log's columns in HandoffRecord's order (ScanRecord).
const RecordCols = `id, project, tool, session_id, native_id, head, branch, hash, header, goal, next, files, written, updated, ended, ended_at`

// ScanRecord, ScanDecision and ScanValue read one row into the ledger's own types for All. They live here, with the
// types, so that a feature's query (lifecycle, distill) calls none of its own code back from inside the ledger: a
// Stop's call chain leaves the feature's file once.
func ScanRecord(sc Scanner) (HandoffRecord, error) {
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

// ScanDecision reads text, why, source, at.
func ScanDecision(sc Scanner) (d Decision, err error) {
	var at int64
	err = sc.Scan(&d.Text, &d.Why, &d.Source, &at)
	d.At = time.UnixMilli(at)
	return d, err
}

// ScanValue reads a one-column row.
func ScanValue[T any](sc Scanner) (v T, err error) { return v, sc.Scan(&v) }

// Changed runs a statement and reports whether it changed a row.
func Changed(s Store, q string, args ...any) (bool, error) {
	res, err := s.Exec(q, args...)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// run runs a statement whose result nothing reads.
func run(s Store, q string, args ...any) error {
	_, err := s.Exec(q, args...)
	return err
}

// Has reports whether a COUNT(*) query counts anything.
func Has(s Store, q string, args ...any) bool {
	n, _ := ScanValue[int](s.QueryRow(q, args...))
	return n > 0
}

// ForProject is the WHERE condition on column for one project, or every
// project for "", and its arguments: SQLite plans `(? = ” OR column = ?)`
// once for any argument and reads every project's rows.
func ForProject(column, project string) (string, []any) {
	if project == "" {
		return "1", nil
	}
	return column + " = ?", []any{project}
}

// Cursor returns the saved cursor for path (zero Cursor when none).
func (l *Ledger) Cursor(path string) (adapters.Cursor, error) {
	c := adapters.Cursor{Path: path}
	var dev, ino int64
	err := l.db.QueryRow(`SELECT offset, dev, ino, head, head_len FROM cursors WHERE path = ?`, path).Scan(&c.Offset, &dev, &ino, &c.Head, &c.HeadLen)
	if errors.Is(err, sql.ErrNoRows) {
		return c, nil
	}
	c.Dev, c.Ino = uint64(dev), uint64(ino)
	return c, err
}

// TrackedFile is a transcript the ledger has a cursor for.
type TrackedFile struct {
	Path      string
	Offset    int64
	Sidechain bool
	Session   Session
}

// Tracked lists at most limit of project's transcripts, newest first (catch-up).
func (l *Ledger) Tracked(project string, limit int) ([]TrackedFile, error) {
	return All(l, func(r Scanner) (t TrackedFile, err error) {
		return t, r.Scan(&t.Path, &t.Offset, &t.Sidechain, &t.Session.ID, &t.Session.Tool, &t.Session.NativeID, &t.Session.Project)
	}, `SELECT c.path, c.offset, c.sidechain, s.id, s.tool, s.native_id, s.project
		FROM cursors c JOIN sessions s ON s.id = c.session_id
		WHERE s.project = ? ORDER BY c.updated DESC LIMIT `+strconv.Itoa(limit), project)
}

const sessionCols = `SELECT s.id, s.tool, s.native_id, s.project, s.transcript, s.first_seen, s.last_seen, s.last_active, s.title, s.tokens_used, s.tokens_max, s.next_seq - 1 - s.pruned FROM sessions s WHERE `

func scanSession(sc Scanner) (Session, error) {
	var s Session
	var first, last, active int64
	err := sc.Scan(&s.ID, &s.Tool, &s.NativeID, &s.Project, &s.Transcript, &first, &last, &active, &s.Title, &s.TokensUsed, &s.TokensMax, &s.Rows)
	s.FirstSeen, s.LastSeen, s.LastActive = time.UnixMilli(first), time.UnixMilli(last), time.UnixMilli(active)
	if active <= 0 {
		s.LastActive = s.LastSeen
	}
	return s, err
}

// sessions lists the sessions s matching where (and its order).
func (l *Ledger) sessions(where string, args ...any) ([]Session, error) {
	return All(l, scanSession, sessionCols+where, args...)
}

// Sessions lists project's ("": all) sessions of tool ("": any), newest first.
func (l *Ledger) Sessions(project, tool string, limit int) ([]Session, error) {
	where, args := ForProject("s.project", project)
	return l.sessions(where+` AND (? = '' OR s.tool = ?) ORDER BY MAX(s.last_active, s.last_seen) DESC, s.id DESC LIMIT `+strconv.Itoa(limit), append(args, tool, tool)...)
}

// Session looks up a session by tool and native id (of several projects' the newest).
func (l *Ledger) Session(tool, nativeID string) (Session, error) {
	return scanSession(l.db.QueryRow(sessionCols+`s.tool = ? AND s.native_id = ? ORDER BY s.last_seen DESC, s.id DESC LIMIT 1`, tool, nativeID))
}

// SessionIn looks up a session by tool, native id and project.
func (l *Ledger) SessionIn(tool, nativeID, project string) (Session, error) {
	return scanSession(l.db.QueryRow(sessionCols+`s.tool = ? AND s.native_id = ? AND s.project = ?`, tool, nativeID, project))
}

// SessionByID looks up a session by ledger id.
func (l *Ledger) SessionByID(id int64) (Session, error) {
	return scanSession(l.db.QueryRow(sessionCols+`s.id = ?`, id))
}

// SetTitle records a session's one-line preview.
func (l *Ledger) SetTitle(id int64, title string) error {
	return run(l, `UPDATE sessions SET title = ? WHERE id = ? AND title = ''`, title, id)
}

// rowCols are a row's columns, a tool result's text left out.
const rowCols = `session_id, seq, key, ts, role, kind, tool_name, call_id, file_path, command, exit_code,
	CASE WHEN kind = 'tool_result' THEN '' ELSE text END, sidechain, tokens_used, tokens_max`

// Rows returns the last limit rows of a session in sequence order.
func (l *Ledger) Rows(sessionID int64, limit int) ([]Row, error) {
	s, err := l.SessionByID(sessionID)
	if err != nil {
		return nil, err
	}
	return l.rows(s.Tool, `SELECT `+rowColumns+` FROM (SELECT * FROM rows WHERE session_id = ? ORDER BY seq DESC LIMIT `+strconv.Itoa(limit)+`) ORDER BY seq`, sessionID)
}

// rows runs a query of rowCols over a session of tool.
func (l *Ledger) rows(tool, q string, args ...any) ([]Row, error) {
	return All(l, func(rows Scanner) (Row, error) {
		r := Row{Tool: tool}
		var ts int64
		var exit sql.NullInt64
		var kind string
		err := rows.Scan(&r.SessionID, &r.Seq, &r.Key, &ts, &r.Role, &kind, &r.ToolName, &r.CallID, &r.FilePath, &r.Command, &exit, &r.Text, &r.Sidechain, &r.TokensUsed, &r.TokensMax)
		r.Time, r.Kind = time.UnixMilli(ts).UTC(), adapters.Kind(kind)
		if exit.Valid {
			n := int(exit.Int64)
			r.ExitCode = &n
		}
		return r, err
	}, q, args...)
}

// The hook-path handoff is distilled from the newest sessions: per session
// the newest rows plus the newest prompts, file edits and errors however far
// back (a long session keeps its task and files without reading every row).
// An error's call is looked for among the callLookback rows before it.
const (
	recentSessions = 4
	recentWindow   = 250
	recentPerKind  = 40
	callLookback   = 256
)

// RecentRows returns the rows a project's handoff is distilled from, oldest session first.
func (l *Ledger) RecentRows(project string) ([]Row, error) {
	ss, err := l.Sessions(project, "", recentSessions)
	if err != nil {
		return nil, err
	}
	var out []Row
	for i := len(ss) - 1; i >= 0; i-- {
		rs, err := l.recentSessionRows(ss[i])
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	return out, nil
}

// recentSessionRows reads the newest rows, then the seqs of older prompts,
// edits and errors through the covering index, fetched by value ("seq IN
// (subquery)" or a UNION over whole rows scans the session), then the calls
// of errors whose call fell outside.
func (l *Ledger) recentSessionRows(s Session) ([]Row, error) {
	out, err := l.rows(s.Tool, `SELECT `+rowCols+` FROM rows WHERE session_id = ? ORDER BY seq DESC LIMIT `+strconv.Itoa(recentWindow), s.ID)
	if err != nil {
		return nil, err
	}
	oldest := int64(1 << 62)
	for _, r := range out {
		oldest = min(oldest, r.Seq)
	}
	var extra []any
	for _, cond := range []string{`kind = 'prompt' AND seq < ?`, `kind = 'tool_call' AND seq < ? AND file_path != ''`, `kind = 'error' AND seq < ?`} {
		seqs, err := All(l, ScanValue[int64], `SELECT seq FROM rows INDEXED BY rows_anchor WHERE session_id = ? AND `+cond+` AND `+anchorRows+` ORDER BY seq DESC LIMIT `+strconv.Itoa(recentPerKind), s.ID, oldest)
		if err != nil {
			return nil, err
		}
		for _, n := range seqs {
			extra = append(extra, n)
		}
	}
	if len(extra) > 0 {
		older, err := l.rows(s.Tool, `SELECT `+rowCols+` FROM rows WHERE session_id = ? AND seq IN (?`+strings.Repeat(",?", len(extra)-1)+`)`, append([]any{s.ID}, extra...)...)
		if err != nil {
			return nil, err
		}
		out = append(out, older...)
	}
	if out, err = l.addErrorCalls(s, out); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Row) int { return cmp.Compare(a.Seq, b.Seq) }) // seqs are unique in a session
	return out, nil
}

// addErrorCalls adds the calls of out's errors that fell outside it: a
// failure keeps its command (a call precedes its result by a few rows).
func (l *Ledger) addErrorCalls(s Session, out []Row) ([]Row, error) {
	have := map[string]bool{}
	for _, r := range out {
		if r.Kind == adapters.KindToolCall {
			have[r.CallID] = true
		}
	}
	for _, r := range out {
		if r.Kind != adapters.KindError || r.CallID == "" || have[r.CallID] {
			continue
		}
		have[r.CallID] = true
		c, err := l.rows(s.Tool, `SELECT `+rowCols+` FROM rows WHERE session_id = ? AND seq BETWEEN ? AND ? AND kind = 'tool_call' AND call_id = ? LIMIT 1`,
			s.ID, r.Seq-callLookback, r.Seq-1, r.CallID)
		if err != nil {
			return nil, err
		}
		out = append(out, c...)
	}
	return out, nil
}

// Seqs maps a session id to the last row seq folded into a distill state.
type Seqs map[int64]int64

// LoadState returns a project's distill state and how far into each session
// it has read (ok false: none); version identifies it for SaveState.
func (l *Ledger) LoadState(project string) (state []byte, seqs Seqs, version string, ok bool) {
	err := l.db.QueryRow(`SELECT state, seqs FROM distill_state WHERE project = ?`, project).Scan(&state, &version)
	if err != nil || json.Unmarshal([]byte(version), &seqs) != nil {
		return nil, nil, "", false
	}
	return unpadState(state), seqs, version, true
}

// statePad: a state is stored padded to a multiple of it, its length in a
// trailer: saves keep the row's size and SQLite overwrites only the pages
// that changed (a resized row reallocated its overflow pages: 4 WAL frames
// a Stop, now 2).
const statePad = 4096

const padMark = "\x00pad"

func padState(b []byte) []byte {
	n := (len(b) + 8 + statePad - 1) / statePad * statePad
	out := make([]byte, n)
	copy(out, b)
	binary.BigEndian.PutUint32(out[n-8:], uint32(len(b)))
	copy(out[n-4:], padMark)
	return out
}

// unpadState is padState undone (an older carryover's unpadded state: as is).
func unpadState(b []byte) []byte {
	if n := len(b); n >= 8 && n%statePad == 0 && string(b[n-4:]) == padMark {
		if m := int(binary.BigEndian.Uint32(b[n-8:])); m <= n-8 {
			return b[:m]
		}
	}
	return b
}

// SaveState stores a project's distill state if the stored copy is still
// the one loaded (version; "" for none): of two snapshots folding at once
// the loser's save is dropped, never moving the state back or folding twice.
func (l *Ledger) SaveState(project string, state []byte, seqs Seqs, version string, now time.Time) (bool, error) {
	raw, _ := json.Marshal(seqs) // a map of integers: never fails
	q := `INSERT INTO distill_state (project, state, seqs, updated) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (project) DO NOTHING`
	args := []any{project, padState(state), string(raw), now.UnixMilli()}
	if version != "" {
		q, args = `UPDATE distill_state SET state = ?2, seqs = ?3, updated = ?4 WHERE project = ?1 AND seqs = ?5`, append(args, version)
	}
	return Changed(l, q, args...)
}

// DropState forgets a project's distill state (it is rebuilt).
func (l *Ledger) DropState(project string) error {
	return run(l, `DELETE FROM distill_state WHERE project = ?`, project)
}

// ProjectSession is a session's id, agent and last row sequence number.
type ProjectSession struct {
	ID, LastSeq int64
	Tool        string
}

// ProjectSessions lists a project's sessions in creation order.
func (l *Ledger) ProjectSessions(project string) ([]ProjectSession, error) {
	return All(l, func(r Scanner) (s ProjectSession, err error) { return s, r.Scan(&s.ID, &s.Tool, &s.LastSeq) }, `SELECT id, tool, next_seq - 1 FROM sessions WHERE project = ? ORDER BY id`, project)
}

// RowsAfter returns at most limit of a session's rows after seq, in order.
// Every LIMIT here is a literal: SQLite (3.53) re-prepared a statement with
// a bound LIMIT at its first step (5 of a Stop's 52 prepares).
func (l *Ledger) RowsAfter(s ProjectSession, seq int64, limit int) ([]Row, error) {
	return l.rows(s.Tool, `SELECT `+rowCols+` FROM rows WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT `+strconv.Itoa(limit), s.ID, seq)
}

// PromoteSubagentOnly clears the sidechain mark when every row is a subagent's (its file was given).
func PromoteSubagentOnly(rows []Row) {
	if slices.ContainsFunc(rows, func(r Row) bool { return !r.Sidechain }) {
		return
	}
	for i := range rows {
		rows[i].Sidechain = false
	}
}

// ProjectTools lists the agents that have sessions in project.
func (l *Ledger) ProjectTools(project string) ([]string, error) {
	return All(l, ScanValue[string], `SELECT DISTINCT tool FROM sessions WHERE project = ? ORDER BY tool`, project)
}

// MissedInjections lists the agents whose start injection did not arrive in
// project: newest "hook" receipts whose session replied after it but whose
// transcript never showed it (no "transcript" receipt of the header).
func (l *Ledger) MissedInjections(project string) ([]string, error) {
	return All(l, ScanValue[string], `SELECT DISTINCT d.tool FROM (SELECT * FROM deliveries WHERE project = ? AND via = 'hook' ORDER BY at DESC LIMIT 20) d
		WHERE NOT EXISTS (SELECT 1 FROM deliveries t WHERE t.project = d.project AND t.header = d.header AND t.session_id = d.session_id AND t.via = 'transcript')
		AND (SELECT last_active FROM sessions WHERE id = d.session_id) > d.at
		AND (SELECT r.ts FROM rows r WHERE r.session_id = d.session_id AND r.kind = 'text' AND r.role = 'assistant' ORDER BY r.seq DESC LIMIT 1) > d.at
		ORDER BY d.tool`, project)
}

// KnownProjects lists, sorted, the projects of sessions, handoffs, receipts.
func (l *Ledger) KnownProjects() ([]string, error) {
	ps, err := All(l, ScanValue[string], `SELECT project FROM sessions UNION SELECT project FROM handoffs
		UNION SELECT project FROM handoff_log UNION SELECT project FROM deliveries ORDER BY 1`) // every column NOT NULL
	return slices.DeleteFunc(ps, func(p string) bool { return strings.TrimSpace(p) == "" }), err
}

// Handoff is a project's current handoff (table handoffs; publish/lifecycle writes it).
type Handoff struct {
	Project, Tool string
	Header        string // first line of handoff.md: "# [CARRYOVER] Last updated … from …"
	Hash          string // content hash of the whole handoff.md (publish.Digest); "" for none
	SessionID     int64
	Written       time.Time
}

// HandoffTrusted reports whether hash is one of project's newest published handoffs'.
func (l *Ledger) HandoffTrusted(project, hash string) (bool, error) {
	n, err := ScanValue[int](l.db.QueryRow(`SELECT COUNT(*) FROM published WHERE project = ? AND hash = ?`, project, hash))
	return n > 0, err
}

// HandoffKnown reports whether the ledger holds project's current handoff (a recovery may not).
func (l *Ledger) HandoffKnown(project string) bool {
	n, err := ScanValue[int](l.db.QueryRow(`SELECT COUNT(*) FROM handoffs WHERE project = ?`, project))
	return err != nil || n > 0 // an error: as if known (nothing is restored over it)
}

// Delivery is a receipt: a session of an agent received a handoff.
type Delivery struct {
	Project, Header, Tool, NativeID string
	Via                             string // "transcript" (seen in the agent's transcript) or "hook" (printed by carryover)
	SessionID                       int64
	At                              time.Time
}

// RecordDelivery stores a receipt (idempotent).
func (l *Ledger) RecordDelivery(d Delivery) error {
	return run(l, `INSERT INTO deliveries (project, header, tool, session_id, via, at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, d.Project, d.Header, d.Tool, d.SessionID, d.Via, d.At.UnixMilli())
}

// MarkPendingInject remembers a session whose SessionStart output the agent
// drops (claude -p --resume): its first UserPromptSubmit delivers instead.
func (l *Ledger) MarkPendingInject(sessionID int64, now time.Time) error {
	return run(l, `INSERT INTO pending_inject (session_id, created) VALUES (?, ?) ON CONFLICT DO NOTHING`, sessionID, now.UnixMilli())
}

// TakePendingInject clears a pending injection, reporting whether there was one (atomically).
func (l *Ledger) TakePendingInject(sessionID int64) (bool, error) {
	return Changed(l, `DELETE FROM pending_inject WHERE session_id = ?`, sessionID)
}

// Stats are counts for `carryover status`.
type Stats struct {
	Sessions, Rows, Projects int
	BySessions               map[string]int // per tool
}

// Stats counts what the ledger holds.
func (l *Ledger) Stats() (Stats, error) {
	s := Stats{BySessions: map[string]int{}}
	_, err := All(l, func(sc Scanner) (n int, err error) {
		var rows int
		var tool string
		err = sc.Scan(&tool, &n, &rows, &s.Projects)
		s.BySessions[tool], s.Sessions, s.Rows = n, s.Sessions+n, s.Rows+rows
		return n, err
	}, `SELECT tool, COUNT(*), SUM(next_seq - 1 - pruned), (SELECT COUNT(DISTINCT project) FROM sessions) FROM sessions GROUP BY tool`)
	return s, err
}

// MarkDirty records rows project's handoff does not reflect (re-distilled at the turn's end).
func (l *Ledger) MarkDirty(project string, now time.Time) error {
	return run(l, `INSERT INTO dirty (project, since) VALUES (?, ?) ON CONFLICT DO NOTHING`, project, now.UnixMilli())
}

// Dirty reports whether project has rows its handoff does not reflect.
func (l *Ledger) Dirty(project string) bool {
	return Has(l, `SELECT COUNT(*) FROM dirty WHERE project = ?`, project)
}

// ClearDirty marks project's handoff as up to date.
func (l *Ledger) ClearDirty(project string) error {
	return run(l, `DELETE FROM dirty WHERE project = ?`, project)
}

// Handoff endings stored in the log; "consumed" and "expired" are derived
// (receipts, age), "active" is the absence of all four.
const (
	EndSuperseded = "superseded"
	EndCleared    = "cleared"
)

// HandoffRecord is one published handoff of a project.
type HandoffRecord struct {
	ID, Project, Tool, NativeID string
	SessionID                   int64
	Head, Branch                string // short git HEAD when written
	Hash, Header                string // content hash of handoff.md, its first line
	Goal, Next                  string
	Files                       []string  // project-relative paths the handoff names
	Written, Updated            time.Time // Updated: the last rewrite under this id
	Ended                       string    // "", EndSuperseded or EndCleared
	EndedAt                     time.Time
}

// Decision is one entry of a project's decisions log.
type Decision struct {
	Text, Why string
	Source    string // DecisionUser (carryover decide) or DecisionExtracted
	At        time.Time
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

// IngestOptions says what to ingest and how. Progress gets each line's end offset (hooks: nil).
type IngestOptions struct {
	Adapter       adapters.Adapter
	Hook          adapters.Hook
	Env           adapters.Env
	Project       string
	Deadline, Now time.Time
	Redact        func(string) string   // applied to text, command and file path before they are stored
	Transcripts   []adapters.Transcript // overrides the adapter's own list (handoff --transcript)
	Progress      func(path string, off int64)
}

// Found is what an ingest noticed in the rows it stored.
type Found struct {
	Receipts []string     // carryover handoff headers seen
	Limits   []FoundLimit // rate-limit and quota signals (adapters.Limit)
}

func (f *Found) add(g Found) {
	f.Receipts = append(f.Receipts, g.Receipts...)
	f.Limits = append(f.Limits, g.Limits...)
}

// FileReport is what happened to one transcript.
type FileReport struct {
	Path  string
	Err   error
	Added int
	adapters.TailResult
	Found
}

// FoundLimit is a limit signal read, with its row, session and agent.
type FoundLimit struct {
	Key, Tool, NativeID string
	Limit               adapters.Limit
	At                  time.Time
}

// IngestReport summarizes an ingest.
type IngestReport struct {
	SessionID int64
	Added     int
	Files     []FileReport
	Found
}

// SyncReport is what Sync did.
type SyncReport struct {
	IngestReport
	CaughtUp []FileReport // the project's other transcripts re-read (CatchUp)
	Total    int          // rows added by the ingest and the catch-up
	Notes    []string     // worth a log line (never transcript content)
}

const (
	catchUpWindow = 256  // newest tracked files a catch-up looks at (the deadline bounds the re-reads)
	batchRows     = 4096 // rows a transaction writes while tailing: a cold ingest's memory bound
)

// Sync brings the ledger up to date for one session (hook and `carryover
// handoff`): it ingests the session (after damage: rebuilds the ledger and
// ingests again), catches up the project's other transcripts and records the
// receipts found. It returns the ledger to use from then on (nil: rebuild failed).
func Sync(l *Ledger, o IngestOptions) (*Ledger, SyncReport, error) {
	var rep SyncReport
	ing, err := Ingest(l, o)
	if damaged(ing, err) { // a damaged page shows only when a statement reads it
		if l, err = l.Reopen(); err != nil {
			return nil, rep, fmt.Errorf("ledger is damaged: %w", err)
		}
		if n := l.RecoveryNote(); n != "" {
			rep.Notes = append(rep.Notes, n)
		}
		ing, err = Ingest(l, o)
	}
	rep.IngestReport = ing
	if err != nil {
		return l, rep, fmt.Errorf("ingest: %w", err)
	}
	skip := map[string]bool{}
	for _, f := range ing.Files {
		skip[f.Path] = true
		rep.Notes = append(rep.Notes, f.notes()...)
	}
	if rep.CaughtUp, err = CatchUp(l, o.Project, skip, o); err != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("catch-up: %v", err))
	}
	rep.Total = ing.Added
	receipts := ing.Receipts
	for _, f := range rep.CaughtUp {
		rep.Total += f.Added
		receipts = append(receipts, f.Receipts...)
		rep.Limits = append(rep.Limits, f.Limits...) // another session's: recorded, not announced
	}
	for _, hdr := range receipts {
		if hdr == "" {
			continue
		}
		d := Delivery{Project: o.Project, Header: hdr, Tool: o.Adapter.Name(), SessionID: ing.SessionID, Via: "transcript", At: o.Now}
		if err := l.RecordDelivery(d); err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("record receipt: %v", err))
		}
	}
	return l, rep, nil
}

// Ingest reads what is new for a hook: transcripts from their cursors, the store, the payload's rows.
func Ingest(l *Ledger, o IngestOptions) (IngestReport, error) {
	var rep IngestReport
	ref := SessionRef{Tool: o.Adapter.Name(), NativeID: o.Hook.SessionID, Project: o.Project, Transcript: o.Hook.TranscriptPath}
	if ref.NativeID == "" {
		return rep, errors.New("hook payload has no session id")
	}
	// A known session (same transcript) needs no write here: its batches refresh it.
	if s, err := l.SessionIn(ref.Tool, ref.NativeID, ref.Project); err == nil && (ref.Transcript == "" || s.Transcript == ref.Transcript) {
		rep.SessionID = s.ID
	} else if err := l.inTx(func(tx *sql.Tx) (err error) { rep.SessionID, err = ensureSession(tx, ref, o.Now); return err }); err != nil {
		return rep, err
	}
	if err := o.writeOwnRows(l, ref, &rep); err != nil {
		return rep, err
	}
	if lp, ok := o.Adapter.(adapters.LineParser); ok {
		return rep, o.tailTranscripts(l, lp, ref, &rep)
	}
	return rep, nil
}

// writeOwnRows stores the payload's rows and those of the adapter's store.
func (o IngestOptions) writeOwnRows(l *Ledger, ref SessionRef, rep *IngestReport) error {
	rows := o.Hook.Rows
	if sr, ok := o.Adapter.(adapters.StoreReader); ok {
		more, err := sr.ReadStore(o.Hook, o.Env)
		if err != nil {
			rep.Files = append(rep.Files, FileReport{Path: "store", Err: err})
		}
		rows = append(rows[:len(rows):len(rows)], more...)
	}
	if len(rows) == 0 {
		return nil
	}
	n, err := l.Write(Batch{Session: ref, Rows: o.prepare(rows, &rep.Found, ref)}, o.Now)
	rep.Added += n
	return err
}

// tailTranscripts tails the hook's transcripts (or o.Transcripts).
func (o IngestOptions) tailTranscripts(l *Ledger, lp adapters.LineParser, ref SessionRef, rep *IngestReport) error {
	ts := o.Transcripts
	if ts == nil {
		ts = lp.Transcripts(o.Hook, o.Env)
	}
	for _, t := range ts {
		if o.Transcripts == nil {
			// Paths from a hook payload follow the store policy (adapters.Confined).
			if err := adapters.Confined(o.Adapter, o.Env, t.Path); err != nil {
				rep.Files = append(rep.Files, FileReport{Path: t.Path, Err: err})
				continue
			}
		}
		tref := ref
		if t.SessionID != "" && t.SessionID != ref.NativeID {
			tref = SessionRef{Tool: ref.Tool, NativeID: t.SessionID, Project: o.Project, Transcript: t.Path}
		}
		fr := TailInto(l, lp, tref, t, o)
		rep.Files = append(rep.Files, fr)
		rep.Added += fr.Added
		rep.add(fr.Found)
		if IsBusy(fr.Err) {
			return fr.Err // another process holds the ledger: the next event reads from the cursors
		}
	}
	return nil
}

// prepare redacts rows and collects receipts and limit signals into f.
func (o *IngestOptions) prepare(rows []adapters.Row, f *Found, ref SessionRef) []adapters.Row {
	for i := range rows {
		r := &rows[i]
		if r.Limit != nil && !r.Sidechain {
			f.Limits = append(f.Limits, FoundLimit{Key: r.Key, Tool: ref.Tool, NativeID: ref.NativeID, Limit: *r.Limit, At: r.Time})
		}
		if o.Redact != nil {
			r.Text = o.Redact(r.Text)
			r.Command = o.Redact(r.Command)
			r.FilePath = o.Redact(r.FilePath) // /tmp/ghp_…/out.txt, a key as a file name
		}
		if r.Kind == adapters.KindInjection {
			h, _, _ := strings.Cut(r.Text, " via ")
			f.Receipts = append(f.Receipts, h)
		}
	}
	return rows
}

// TailInto tails one transcript into the ledger in batches, the cursor last:
// an interrupted run re-reads (and deduplicates) rather than skips.
func TailInto(l *Ledger, lp adapters.LineParser, ref SessionRef, t adapters.Transcript, o IngestOptions) FileReport {
	fr := FileReport{Path: t.Path}
	cur, err := l.Cursor(t.Path)
	if err != nil {
		fr.Err = err
		return fr
	}
	tl, err := adapters.OpenTail(t.Path, cur, o.Deadline)
	if err != nil {
		fr.Err = l.rememberMissing(err, ref, t, cur, o.Now)
		return fr
	}
	batch, werr := tailBatches(l, tl, lp, ref, t, o, &fr)
	res, err := tl.Close()
	if err != nil {
		fr.Err = err
		return fr
	}
	if fr.TailResult = res; len(batch) == 0 && res.Cursor == cur {
		return fr // nothing new and the same file: no write transaction at all
	}
	if IsBusy(werr) { // a batch already waited for the lock in vain
		fr.Err = werr
		return fr
	}
	var found Found // the last batch and the cursor go in one transaction
	n, err := l.Write(Batch{Session: ref, Rows: o.prepare(batch, &found, ref), Cursor: &res.Cursor, Sidechain: t.Sidechain}, o.Now)
	fr.Added += n
	fr.add(found)
	if fr.Err = werr; werr == nil {
		fr.Err = err
	}
	return fr
}

// rememberMissing returns err, after giving a transcript not written yet an empty cursor (catch-up).
func (l *Ledger) rememberMissing(err error, ref SessionRef, t adapters.Transcript, cur adapters.Cursor, now time.Time) error {
	if !errors.Is(err, fs.ErrNotExist) || !t.MaybeMissing || cur.Offset != 0 || cur.Head != "" {
		return err
	}
	if _, werr := l.Write(Batch{Session: ref, Cursor: &adapters.Cursor{Path: t.Path}, Sidechain: t.Sidechain}, now); werr != nil {
		return werr
	}
	return err
}

// fullBatch is batchRows rows prepared by the parsing goroutine (the writer only runs SQLite).
type fullBatch struct {
	rows []adapters.Row
	prep *preparedRows
	Found
}

// tailBatches parses the tail's lines while a second goroutine writes the
// full batches (on a cold ingest each takes half the time) and returns the
// last, partial batch and the first write error. One full batch waits while
// another is written and a third filled (~3 MB each; a second waiting one
// bought no speed); written ones come back through free (fresh ones meant
// page faults and GC). The writer starts with the first full batch.
func tailBatches(l *Ledger, tl *adapters.Tailer, lp adapters.LineParser, ref SessionRef, t adapters.Transcript, o IngestOptions, fr *FileReport) ([]adapters.Row, error) {
	full := make(chan fullBatch, 1)
	free := make(chan []adapters.Row, 2)
	done := make(chan error, 1)
	done <- nil // the result while no writer started
	start := sync.OnceFunc(func() {
		<-done
		go func() { done <- l.writeFull(full, free, ref, t.Sidechain, o.Now, fr) }()
	})
	var batch []adapters.Row
	parse := tl.Parser(lp)
	for {
		if batch = readRows(tl, lp.Name(), parse, t, o.Progress, batch); len(batch) < batchRows {
			break
		}
		b := fullBatch{rows: batch}
		o.prepare(batch, &b.Found, ref)
		b.prep = prepareRows(batch, t.Sidechain, o.Now)
		start()
		full <- b
		select {
		case batch = <-free:
		default:
			batch = make([]adapters.Row, 0, batchRows)
		}
	}
	close(full)
	return batch, <-done
}

// readRows appends the next lines' rows to batch, up to batchRows.
func readRows(tl *adapters.Tailer, name string, parse func([]byte, int64) ([]adapters.Row, error), t adapters.Transcript, progress func(string, int64), batch []adapters.Row) []adapters.Row {
	for len(batch) < batchRows {
		line, off, ok := tl.Next()
		if !ok {
			break
		}
		if progress != nil {
			progress(t.Path, off+int64(len(line)))
		}
		rows, err := safeParse(name, parse, line, off)
		for i := range rows {
			rows[i].Sidechain = rows[i].Sidechain || t.Sidechain
		}
		if err == nil {
			batch = append(batch, rows...)
		}
	}
	return batch
}

// writeFull writes a read's full batches, keys deferred, checkpointing rarely; first error.
func (l *Ledger) writeFull(full <-chan fullBatch, free chan<- []adapters.Row, ref SessionRef, sidechain bool, now time.Time, fr *FileReport) error {
	var werr error
	bulk := false
	for b := range full {
		if !bulk {
			bulk = true
			l.bulk(true)
		}
		if werr == nil {
			var n int
			n, werr = l.Write(Batch{Session: ref, Rows: b.rows, Sidechain: sidechain, prep: b.prep, deferKeys: true}, now)
			fr.Added += n
			fr.add(b.Found)
		}
		clear(b.rows) // its texts are garbage now, not kept by the free list
		select {
		case free <- b.rows[:0]:
		default:
		}
	}
	if bulk {
		l.bulk(false)
	}
	return werr
}

// safeParse runs a line parser; a panic (a hostile line) is an error, never the hook's end.
func safeParse(name string, parse func([]byte, int64) ([]adapters.Row, error), line []byte, off int64) (rows []adapters.Row, err error) {
	defer func() {
		if r := recover(); r != nil {
			rows, err = nil, fmt.Errorf("%s parser panicked on the line at offset %d", name, off)
		}
	}()
	return parse(line, off)
}

// CatchUp re-reads the project's tracked transcripts, of any agent, that
// changed: a session whose last hook never fired (Codex on SIGTERM), whose
// agent flushed after its hooks (Copilot CLI -p), a rebuilt ledger's. skip:
// paths just read; the catchUpWindow newest are re-read until o.Deadline.
func CatchUp(l *Ledger, project string, skip map[string]bool, o IngestOptions) ([]FileReport, error) {
	tracked, err := l.Tracked(project, catchUpWindow)
	if err != nil {
		return nil, err
	}
	var out []FileReport
	for _, t := range tracked {
		if skip[t.Path] || (!o.Deadline.IsZero() && time.Now().After(o.Deadline)) {
			continue
		}
		if len(out) > 0 && IsBusy(out[len(out)-1].Err) {
			break // another process holds the ledger
		}
		if lp := catchUpParser(t, o.Env); lp != nil {
			ref := SessionRef{Tool: t.Session.Tool, NativeID: t.Session.NativeID, Project: t.Session.Project}
			out = append(out, TailInto(l, lp, ref, adapters.Transcript{Path: t.Path, SessionID: t.Session.NativeID, Sidechain: t.Sidechain}, o))
		}
	}
	return out, nil
}

// catchUpParser is the parser of a tracked file that changed size and may be read (nil: skip).
func catchUpParser(t TrackedFile, env adapters.Env) adapters.LineParser {
	fi, err := os.Stat(t.Path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == t.Offset {
		return nil
	}
	a, err := adapters.Lookup(t.Session.Tool)
	lp, ok := a.(adapters.LineParser)
	if err != nil || !ok || adapters.Confined(a, env, t.Path) != nil {
		return nil
	}
	return lp
}

// notes say, for the log, what went wrong or was left reading the file.
func (f FileReport) notes() []string {
	var notes []string
	switch {
	case f.Err != nil && errors.Is(f.Err, fs.ErrNotExist):
	case f.Err != nil:
		notes = append(notes, fmt.Sprintf("transcript %s: %v", f.Path, f.Err))
	case f.Reset:
		notes = append(notes, fmt.Sprintf("transcript %s was replaced or truncated; re-read from the start", f.Path))
	}
	if f.Skipped > 0 {
		notes = append(notes, fmt.Sprintf("transcript %s: skipped %d lines over %d bytes", f.Path, f.Skipped, adapters.MaxLine))
	}
	if f.Partial {
		notes = append(notes, fmt.Sprintf("transcript %s: deadline reached; the rest is read at the next event", f.Path))
	}
	return notes
}

// RecoveryNote says, for the log, that the ledger was found corrupt and rebuilt ("" not).
func (l *Ledger) RecoveryNote() string {
	if !l.Recovered {
		return ""
	}
	n := fmt.Sprintf("ledger was corrupt; moved aside to %s and started a new one; %d transcripts still on disk are re-read; %d rows of handoff log, receipts, decisions and pinned tasks salvaged", l.MovedTo, l.Rebuilt, l.Restored)
	if l.RestoreErr != nil {
		n += fmt.Sprintf(" (restoring them failed: %v)", l.RestoreErr)
	}
	return n
}

// damaged reports whether an ingest failed on a damaged ledger (not a transcript or store).
func damaged(rep IngestReport, err error) bool {
	return err != nil && IsCorrupt(err) || slices.ContainsFunc(rep.Files, func(f FileReport) bool {
		return f.Err != nil && f.Path != "store" && IsCorrupt(f.Err)
	})
}

// upsertSession creates or refreshes a session, returning id, next_seq and keys_through.
const upsertSession = `INSERT INTO sessions (tool, native_id, project, transcript, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?)
	ON CONFLICT (tool, native_id, project) DO UPDATE SET last_seen = excluded.last_seen,
		transcript = CASE WHEN excluded.transcript != '' THEN excluded.transcript ELSE sessions.transcript END
	RETURNING id, next_seq, keys_through`

func (r SessionRef) upsertArgs(now time.Time) []any {
	return []any{r.Tool, r.NativeID, r.Project, r.Transcript, now.UnixMilli(), now.UnixMilli()}
}

// ensureSession upserts ref's session and returns its id.
func ensureSession(tx *sql.Tx, ref SessionRef, now time.Time) (id int64, err error) {
	var next, through int64
	err = tx.QueryRow(upsertSession, ref.upsertArgs(now)...).Scan(&id, &next, &through)
	return id, err
}

// Batch is one transcript's new rows and where reading stopped (saved with them).
type Batch struct {
	Session   SessionRef
	Rows      []adapters.Row
	Cursor    *adapters.Cursor
	Sidechain bool
	prep      *preparedRows // Rows already prepared (prepareRows)
	deferKeys bool          // keys stay pending (keys.go): a long read's batches but its last
}

// Write stores a batch in one transaction: the session, its rows (by key:
// a later copy replaces the earlier) and the cursor; it returns how many
// rows were new.
func (l *Ledger) Write(b Batch, now time.Time) (int, error) {
	added := 0
	var sid int64
	write := func(tx *rawTx) (err error) {
		added, sid, err = writeBatch(tx, &l.keys, b, now)
		return err
	}
	err := l.withRawTx(write)
	if errors.Is(err, errKeysToIndex) { // rolled back: index the session's old rows in steps first
		if err = l.catchUpKeys(b.Session); err == nil {
			err = l.withRawTx(write)
		}
	}
	if err != nil {
		l.keys.forget(sid)
		return 0, err
	}
	return added, nil
}

// withRawTx runs fn in a write transaction on the driver's connection, committed on nil.
func (l *Ledger) withRawTx(fn func(*rawTx) error) error {
	ctx := context.Background()
	c, err := l.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Raw(func(dc any) error {
		conn := dc.(driver.ConnBeginTx) // go-sqlite3's connection
		tx, err := conn.BeginTx(ctx, driver.TxOptions{})
		if err != nil {
			return err
		}
		t := &rawTx{conn: conn.(driver.Conn)}
		err = fn(t)
		for _, s := range t.stmts {
			s.Close()
		}
		if err != nil {
			tx.Rollback()
			return err
		}
		return tx.Commit()
	})
}

func writeBatch(tx *rawTx, ks *keyStates, b Batch, now time.Time) (int, int64, error) {
	var sid, next, through int64
	if err := tx.queryRow(upsertSession, b.Session.upsertArgs(now), &sid, &next, &through); err != nil {
		return 0, 0, err
	}
	if st := ks.get(sid); next-through > keyChunk && (st.next != next || st.through != through) {
		return 0, sid, errKeysToIndex // not this process's own read (catchUpKeys)
	}
	kw, err := openKeys(tx, ks, sid, next, through)
	if err != nil {
		return 0, sid, err
	}
	added := 0
	var p *preparedRows
	if len(b.Rows) > 0 {
		if p = b.prep; p == nil {
			p = prepareRows(b.Rows, b.Sidechain, now)
		}
		w := rowWriter{tx: tx, kw: kw, b: &b, sid: sid, next: next}
		if err := w.write(p); err != nil {
			return 0, sid, err
		}
		next, added = w.next, w.added
	}
	stored := through
	if through, err = kw.close(next, !b.deferKeys); err != nil {
		return 0, sid, err
	}
	if err := saveCounters(tx, sid, next, through, stored, p); err != nil {
		return 0, sid, err
	}
	if b.Cursor != nil {
		err = saveCursor(tx, b.Cursor, sid, b.Sidechain, now)
	}
	return added, sid, err
}

// headPart is adapters.HeadPart in SQL: the head up to its first '@'.
func headPart(col string) string { return `substr(` + col + `, 1, instr(` + col + ` || '@', '@') - 1)` }

// saveCursor stores c unless the stored cursor of the same file is past it
// (a slower concurrent snapshot may finish after a faster one), in one
// statement; the one naming the session id (it rewrites a cursors_session
// page) only when the first changed nothing (another session's file).
func saveCursor(tx *rawTx, c *adapters.Cursor, sid int64, sidechain bool, now time.Time) error {
	q := `INSERT INTO cursors (path, session_id, sidechain, offset, dev, ino, head, head_len, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (path) DO UPDATE SET %ssidechain = excluded.sidechain, offset = excluded.offset,
			dev = excluded.dev, ino = excluded.ino, head = excluded.head, head_len = excluded.head_len, updated = excluded.updated
		WHERE NOT (cursors.ino = excluded.ino AND cursors.dev = excluded.dev AND cursors.offset > excluded.offset AND ` + headPart("cursors.head") + ` = ` + headPart("excluded.head") + `)`
	args := []any{c.Path, sid, sidechain, c.Offset, int64(c.Dev), int64(c.Ino), c.Head, int64(c.HeadLen), now.UnixMilli()}
	if n, err := tx.execCount(fmt.Sprintf(q, "")+` AND cursors.session_id = excluded.session_id`, args...); n > 0 {
		return err
	}
	return tx.execOnce(fmt.Sprintf(q, "session_id = excluded.session_id, "), args...)
}

// saveCounters stores next_seq, keys_through, p's last activity and tokens in one statement.
func saveCounters(tx *rawTx, sid, next, through, stored int64, p *preparedRows) (err error) {
	if p != nil {
		err = tx.execOnce(`UPDATE sessions SET next_seq = ?1, keys_through = ?2, last_active = MAX(last_active, ?3),
			tokens_used = CASE WHEN ?4 > 0 THEN ?4 ELSE tokens_used END, tokens_max = CASE WHEN ?4 > 0 THEN ?5 ELSE tokens_max END
			WHERE id = ?6`, next, through, p.lastTS, p.tokUsed, p.tokMax, sid)
	} else if through != stored {
		err = tx.execOnce(`UPDATE sessions SET keys_through = ? WHERE id = ?`, through, sid)
	}
	return err
}

// optCols are row columns usually at their default. A row binds only those
// it sets: a bound value is a cgo call, and on a cold ingest binding cost as
// much as the insert. A batch under oneFormRows (a hook's) binds them all in
// one statement: a prepare per form (~30 µs, 4–6 a Stop) cost more.
const oneFormRows = 256

var optCols = [...]string{"tool_name", "call_id", "file_path", "command", "exit_code", "sidechain", "tokens_used", "tokens_max"}

// preparedRows is a batch's rows collapsed and turned into arguments.
type preparedRows struct {
	rows            []adapters.Row
	ts              []int64
	forms           []rowForm
	args            [][]driver.NamedValue // per row: key, seq (set when written), ts, text, the optional columns its form sets
	lastTS          int64
	tokUsed, tokMax int64
}

// rowForm is the shape of a row's INSERT: the optional columns it binds,
// role and kind as literals (a bound text costs a copy, a lock and a cgo call).
type rowForm struct {
	mask       uint8
	role, kind string
}

// literal reports whether s can be written into SQL as '<s>' as it is.
func literal(s string) bool {
	if len(s) == 0 || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c == '_' || c == ' ') {
			return false
		}
	}
	return true
}

func prepareRows(rows []adapters.Row, sidechain bool, now time.Time) *preparedRows {
	p := &preparedRows{}
	for _, r := range rows {
		if r.Kind == adapters.KindUsage && !(r.Sidechain || sidechain) {
			p.tokUsed, p.tokMax = r.TokensUsed, r.TokensMax
		}
	}
	p.rows = collapse(rows)
	p.ts = make([]int64, len(p.rows))
	p.forms = make([]rowForm, len(p.rows))
	p.args = make([][]driver.NamedValue, len(p.rows))
	slab := make([]driver.NamedValue, 0, len(p.rows)*15)
	one := len(p.rows) < oneFormRows
	for i, r := range p.rows {
		p.ts[i] = r.Time.UnixMilli()
		if r.Time.IsZero() {
			p.ts[i] = now.UnixMilli()
		}
		p.lastTS = max(p.lastTS, p.ts[i])
		start := len(slab)
		add := func(v any) { slab = append(slab, driver.NamedValue{Ordinal: len(slab) - start + 1, Value: v}) }
		add(r.Key)
		add(nil) // seq
		add(p.ts[i])
		add(r.Text)
		f := rowForm{role: r.Role, kind: string(r.Kind)}
		if one || !literal(f.role) || !literal(f.kind) {
			f.role, f.kind = "", "" // bound instead
			add(r.Role)
			add(string(r.Kind))
		}
		opt := func(bit uint8, set bool, v any) {
			if set || one {
				f.mask |= bit
				add(v)
			}
		}
		opt(1<<0, r.ToolName != "", r.ToolName)
		opt(1<<1, r.CallID != "", r.CallID)
		opt(1<<2, r.FilePath != "", r.FilePath)
		opt(1<<3, r.Command != "", r.Command)
		opt(1<<4, r.ExitCode != nil, exitValue(r.ExitCode))
		sc := int64(0)
		if r.Sidechain || sidechain {
			sc = 1
		}
		opt(1<<5, sc == 1, sc)
		opt(1<<6, r.TokensUsed != 0, r.TokensUsed)
		opt(1<<7, r.TokensMax != 0, r.TokensMax)
		p.forms[i] = f
		p.args[i] = slab[start:len(slab):len(slab)]
	}
	return p
}

func exitValue(code *int) any {
	if code == nil {
		return nil
	}
	return int64(*code)
}

// insertStmt returns the (cached) INSERT for rows of form f in session sid.
func insertStmt(tx *rawTx, cache map[rowForm]driver.Stmt, sid int64, f rowForm) (driver.Stmt, error) {
	if st := cache[f]; st != nil {
		return st, nil
	}
	cols, vals := "session_id, key, seq, ts, text, role, kind", strconv.FormatInt(sid, 10)+", ?, ?, ?, ?, ?, ?"
	if f.role != "" {
		vals = strconv.FormatInt(sid, 10) + ", ?, ?, ?, ?, '" + f.role + "', '" + f.kind + "'"
	}
	for i, c := range optCols {
		if f.mask&(1<<i) != 0 {
			cols += ", " + c
			vals += ", ?"
		}
	}
	st, err := tx.prepare(`INSERT INTO rows (` + cols + `) VALUES (` + vals + `)`)
	cache[f] = st
	return st, err
}

// rowWriter stores a batch's rows: new keys inserted at next, known ones updated in place.
type rowWriter struct {
	tx    *rawTx
	kw    *keyWriter
	b     *Batch
	sid   int64
	next  int64
	added int
	stmts map[rowForm]driver.Stmt
	upd   driver.Stmt
}

func (w *rowWriter) write(p *preparedRows) error {
	hs := make([]int64, len(p.rows))
	for i, r := range p.rows {
		hs[i] = keyHash(r.Key)
	}
	if err := w.kw.prefetch(hs); err != nil {
		return err
	}
	w.stmts = map[rowForm]driver.Stmt{}
	for i, r := range p.rows {
		seq, old, err := w.kw.find(r.Key, hs[i])
		if err == nil && seq == 0 {
			seq = w.next // the seq insert gives it
			err = w.insert(p, i, hs[i])
		} else if err == nil {
			err = w.update(p, i, seq, old)
		}
		if err == nil && r.Kind == adapters.KindRewind {
			err = w.rewind(r.Text, seq) // again on a re-read: it revived the rows
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// rewind marks the session's rows from the one keyed from (or "turns:N": the N last prompts' turns) up to the rewind
// row at seq abandoned, their text dropped, and forgets the project's distill state: it is rebuilt without them. A
// start not found abandons nothing. Rare (the user rewound), so plain statements.
func (w *rowWriter) rewind(from string, seq int64) error {
	q, arg := `SELECT COALESCE(MIN(seq), 0) FROM rows WHERE session_id = ?1 AND seq < ?2 AND key = ?3`, any(from)
	if n, ok := strings.CutPrefix(from, "turns:"); ok {
		k, _ := strconv.Atoi(n)
		q = `SELECT COALESCE((SELECT seq FROM rows WHERE session_id = ?1 AND seq < ?2 AND kind = 'prompt' AND sidechain = 0
			ORDER BY seq DESC LIMIT 1 OFFSET ?3), 0)`
		arg = max(k, 1) - 1
	}
	var start int64
	if err := w.tx.queryRow(q, []any{w.sid, seq, arg}, &start); err != nil || start == 0 {
		return err
	}
	err := w.tx.execOnce(`UPDATE rows SET kind = 'abandoned', text = '', command = '', file_path = '' WHERE session_id = ? AND seq >= ? AND seq < ?`, w.sid, start, seq)
	if err == nil {
		err = w.tx.execOnce(`DELETE FROM distill_state WHERE project = ?`, w.b.Session.Project)
	}
	return err
}

func (w *rowWriter) insert(p *preparedRows, i int, h int64) error {
	args := p.args[i]
	args[1].Value = w.next
	st, err := insertStmt(w.tx, w.stmts, w.sid, p.forms[i])
	if err != nil {
		return err
	}
	if _, err := st.(driver.StmtExecContext).ExecContext(context.Background(), args); err != nil {
		return err
	}
	w.kw.added(h, w.next, w.b.deferKeys)
	w.next++
	w.added++
	return nil
}

// update replaces the row at seq (stored as old) by a later copy that changed.
func (w *rowWriter) update(p *preparedRows, i int, seq int64, old storedRow) (err error) {
	r := p.rows[i]
	exit := exitValue(r.ExitCode)
	if old == (storedRow{r.Text, string(r.Kind), exit}) {
		return nil
	}
	if err = w.tx.once(&w.upd, `UPDATE rows SET ts = ?, role = ?, kind = ?, tool_name = ?, call_id = ?, file_path = ?, command = ?, exit_code = ?, text = ?, sidechain = ?, tokens_used = ?, tokens_max = ?
		WHERE session_id = ? AND seq = ?`); err != nil {
		return err
	}
	return w.tx.exec(w.upd, p.ts[i], r.Role, string(r.Kind), r.ToolName, r.CallID, r.FilePath, r.Command, exit, r.Text, r.Sidechain || w.b.Sidechain, r.TokensUsed, r.TokensMax, w.sid, seq)
}

// collapse keeps one entry per key, as the upsert would (a later copy that
// changes the text, kind or exit code replaces the earlier in place): Claude
// Code repeats a message's usage on each line, each an insert and an update.
func collapse(rows []adapters.Row) []adapters.Row {
	seen := make(map[string]int, len(rows))
	var out []adapters.Row // nil until the first repeat: positions are indexes until then
	for i, r := range rows {
		j, dup := seen[r.Key]
		if !dup {
			if out != nil {
				seen[r.Key] = len(out)
				out = append(out, r)
			} else {
				seen[r.Key] = i
			}
			continue
		}
		if out == nil {
			out = append(make([]adapters.Row, 0, len(rows)), rows[:i]...)
		}
		if p := out[j]; p.Text != r.Text || p.Kind != r.Kind || exitValue(p.ExitCode) != exitValue(r.ExitCode) {
			out[j] = r
		}
	}
	if out == nil {
		return rows
	}
	return out
}

// keyChunk is the unindexed rows a catchUpKeys transaction indexes: ~0.2 s (a variable for tests).
var keyChunk int64 = 1 << 16

var (
	// errKeysBehind is catchUpKeys stopped by the deadline: like a held lock
	// (IsBusy), the rows are read again at the next event.
	errKeysBehind = errors.New("ledger: still indexing the row keys of a session stored before schema 12; continues at the next event")
	// errKeysToIndex rolls back a write whose session has more unindexed
	// rows than one transaction indexes (catchUpKeys, then the write again).
	errKeysToIndex = errors.New("ledger: the session's rows need indexing first")
)

// catchUpKeys indexes the rows of ref's session that neither a key table
// nor this process holds (schema 11, a crashed read) keyChunk rows a
// transaction until fewer are left (the write indexes those): millions of
// rows cost a few hooks their update, not every hook its deadline.
func (l *Ledger) catchUpKeys(ref SessionRef) error {
	for done := false; !done; {
		var sid int64
		err := l.withRawTx(func(tx *rawTx) error {
			var next, through int64
			if err := tx.queryRow(`SELECT id, next_seq, keys_through FROM sessions WHERE tool = ? AND native_id = ? AND project = ?`, []any{ref.Tool, ref.NativeID, ref.Project}, &sid, &next, &through); err != nil {
				done = err == sql.ErrNoRows
				return err
			}
			if st := l.keys.get(sid); next-through <= keyChunk || (st.next == next && st.through == through) {
				done = true // few enough, or this process's own read: its keys are in memory
				return nil
			}
			if !l.deadline.IsZero() && time.Now().After(l.deadline) {
				return errKeysBehind
			}
			last, err := flushFromRows(tx, sid, through, keyChunk)
			if err == nil {
				err = tx.execOnce(`UPDATE sessions SET keys_through = ? WHERE id = ?`, last+1, sid)
			}
			l.keys.forget(sid)
			return err
		})
		if err != nil && !done {
			return err
		}
	}
	return nil
}

// Row keys (issue 17: linear cold ingest). A row is identified by its
// adapter's key (a message uuid and block index, a call id). The keys are
// random: a unique index on them (schema 6–11) put every insert at a random
// place in a B-tree as large as the session (a cold 1 GB ingest wrote 111,000
// index pages against the rows' 17,000: 3.5 s against 1.9 s). So keys live
// in two tables of (session, 64-bit FNV-1a hash, seq), ~16 bytes an entry:
// row_keys by hash, written only in key order and in bulk; keys_recent by
// seq, where a hook's few new keys are appended (one page, where a random
// row_keys page a row was 27 of a Stop's 46) and move into row_keys
// keyRecentMax at a time. A long read keeps its keys in memory (pending, a
// seqIndex) and writes them, sorted, with its last batch. Invariant: every
// row with seq < keys_through has its entry in one of the tables; later rows
// are pending. The reading process finds repeats in memory; any other writer
// first indexes them from the rows (flushFromRows), so a crashed or
// concurrent read never lets a row in twice. A hash match is always checked
// against the stored key. A session from before schema 12 starts all
// pending and is indexed in steps (catchUpKeys).

const (
	// keyFlushRows bounds a long read's pending keys (then written with the
	// batch): 786,432 fill a seqIndex of 2^20 slots (12 MB) to 3/4; a dense
	// 1 GB transcript's ~750,000 are written once at its end (every 131,072
	// cost 10 % of its speed; a Go map of 524,288 took it to 64.5 MB).
	keyFlushRows = 3 << 18
	// keyMaxSlots is the most slots a seqIndex grows to (the batch crossing
	// keyFlushRows overflows into the map); 2^21 took a cold 1.3 GB ingest
	// to 123 MiB peak RSS (manual path), 87 (hook's).
	keyMaxSlots = 1 << 20
	// keyRecentMax is the span of seqs keys_recent covers per session before
	// its keys move into row_keys: a lookup scans them (4,096 are ~4 pages),
	// a move touches up to a row_keys page a key, once per ~100 hooks.
	keyRecentMax = 4096
)

// keyHash is the 64-bit FNV-1a hash of a row key, as SQLite stores it.
func keyHash(key string) int64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(key); i++ {
		h = (h ^ uint64(key[i])) * 1099511628211
	}
	return int64(h)
}

// seqIndex maps key hashes to their rows' seqs: open addressing, 12 bytes a
// slot, at most 3/4 full (a Go map took ~37 bytes an entry).
type seqIndex struct {
	slots []keySlot
	extra map[int64][]int64 // a hash's further seqs, seqs past 2^32, a full table's overflow
	n     int               // entries, extra ones included
	used  int               // occupied slots
}

// keySlot is a hash in two halves and its row's seq (0: empty; no row has seq 0).
type keySlot struct{ hi, lo, seq uint32 }

func (s keySlot) hash() int64 { return int64(uint64(s.hi)<<32 | uint64(s.lo)) }

// slot returns the index of h's slot, or of the empty slot where it goes.
func (x *seqIndex) slot(h int64) int {
	mask := len(x.slots) - 1
	i := int((uint64(h)*0x9E3779B97F4A7C15)>>32) & mask // Fibonacci hashing spreads FNV's low bits
	for x.slots[i].seq != 0 && x.slots[i].hash() != h {
		i = (i + 1) & mask
	}
	return i
}

func (x *seqIndex) add(h, seq int64) {
	full := 4*(x.used+1) > 3*len(x.slots)
	if full && len(x.slots) < keyMaxSlots {
		x.grow()
		full = false
	}
	x.n++
	i := x.slot(h)
	if !full && x.slots[i].seq == 0 && seq > 0 && seq <= math.MaxUint32 {
		x.slots[i] = keySlot{uint32(uint64(h) >> 32), uint32(h), uint32(seq)}
		x.used++
		return
	}
	if x.extra == nil {
		x.extra = map[int64][]int64{}
	}
	x.extra[h] = append(x.extra[h], seq)
}

func (x *seqIndex) grow() {
	old := x.slots
	x.slots = make([]keySlot, max(64, 2*len(old)))
	for _, s := range old {
		if s.seq != 0 {
			x.slots[x.slot(s.hash())] = s
		}
	}
}

// seqsOf appends the seqs of hash h to dst.
func (x *seqIndex) seqsOf(dst []int64, h int64) []int64 {
	if x.n == 0 {
		return dst
	}
	if i := x.slot(h); x.slots[i].seq != 0 {
		dst = append(dst, int64(x.slots[i].seq))
	}
	return append(dst, x.extra[h]...)
}

// drain yields the entries in key order (hash, then seq) and empties the
// index, sorted in place (a sorted copy held a second 12 MB: 21 MB heap peak).
func (x *seqIndex) drain() iter.Seq2[int64, int64] {
	n := 0
	for _, s := range x.slots {
		if s.seq != 0 { // n ≤ i: a slot moves only after it was read
			x.slots[n] = s
			n++
		}
	}
	slots := x.slots[:n]
	slices.SortFunc(slots, func(a, b keySlot) int {
		return compareEntries(keyEntry{a.hash(), int64(a.seq)}, keyEntry{b.hash(), int64(b.seq)})
	})
	var more []keyEntry // shared hashes and seqs past 2^32: rare
	for h, seqs := range x.extra {
		for _, seq := range seqs {
			more = append(more, keyEntry{h, seq})
		}
	}
	slices.SortFunc(more, compareEntries)
	*x = seqIndex{}
	return func(yield func(h, seq int64) bool) {
		for len(slots) > 0 || len(more) > 0 {
			var e keyEntry
			if len(slots) > 0 {
				e = keyEntry{slots[0].hash(), int64(slots[0].seq)}
			}
			if len(slots) == 0 || len(more) > 0 && compareEntries(more[0], e) < 0 {
				e, more = more[0], more[1:]
			} else {
				slots = slots[1:]
			}
			if !yield(e.h, e.seq) {
				return
			}
		}
	}
}

// keyState is a session's next_seq and keys_through as this process left them, and pending keys.
type keyState struct {
	next, through int64
	pending       seqIndex
}

type keyStates struct {
	mu sync.Mutex
	m  map[int64]*keyState
}

func (k *keyStates) get(sid int64) *keyState {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[int64]*keyState{}
	}
	s := k.m[sid]
	if s == nil {
		s = &keyState{next: -1}
		k.m[sid] = s
	}
	return s
}

// forget drops a rolled-back session's state: the next write reads the ledger.
func (k *keyStates) forget(sid int64) {
	k.mu.Lock()
	delete(k.m, sid)
	k.mu.Unlock()
}

// keyWriter finds repeats and records new rows' keys in one transaction.
type keyWriter struct {
	tx         *rawTx
	sid        int64
	st         *keyState
	keyAt      driver.Stmt       // the key of a row
	recent     []byte            // new keys for keys_recent: JSON [[seq, hash], ...
	recentFrom int64             // the lowest seq in keys_recent (0: none)
	indexed    bool              // the key tables may hold entries of the session
	hits       map[int64][]int64 // their entries of the batch's hashes (prefetch)
	buf        []int64
}

// openKeys starts a transaction's key work, first indexing pending rows another writer left.
func openKeys(tx *rawTx, ks *keyStates, sid, next, through int64) (*keyWriter, error) {
	st := ks.get(sid)
	if st.next != next || st.through != through {
		if through < next {
			if _, err := flushFromRows(tx, sid, through, -1); err != nil {
				return nil, err
			}
			through = next
		}
		st.pending = seqIndex{}
		st.next, st.through = next, through
	}
	return &keyWriter{tx: tx, sid: sid, st: st, indexed: through > 1}, nil
}

// prefetch looks up the batch's hashes in both key tables in one query (one
// per row cost a hook's 50 new rows 50 cgo calls to find nothing; loading
// keys_recent into Go ~0.8 ms). The hashes go in as one JSON array: one
// bound value, a statement of fixed text (80 placeholders: a long parse
// every hook). Its last row (seq 0, never a row's) is keys_recent's lowest
// seq for close, an index lookup (a COUNT took 150 µs at 3,000 entries).
func (w *keyWriter) prefetch(hs []int64) error {
	if !w.indexed || len(hs) == 0 {
		return nil
	}
	w.hits = map[int64][]int64{}
	b := append(make([]byte, 0, 21*len(hs)+2), '[')
	for i, h := range hs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, h, 10)
	}
	rows, err := w.tx.queryOnce(`SELECT khash, seq FROM row_keys WHERE session_id = ?1 AND khash IN (SELECT value FROM json_each(?2))
		UNION ALL SELECT khash, seq FROM keys_recent WHERE session_id = ?1 AND khash IN (SELECT value FROM json_each(?2))
		UNION ALL SELECT COALESCE(MIN(seq), 0), 0 FROM keys_recent WHERE session_id = ?1`, w.sid, string(append(b, ']')))
	if err != nil {
		return err
	}
	defer rows.Close()
	v := make([]driver.Value, 2)
	for rows.Next(v) == nil {
		h, _ := v[0].(int64)
		if seq, _ := v[1].(int64); seq != 0 {
			w.hits[h] = append(w.hits[h], seq)
		} else {
			w.recentFrom = h
		}
	}
	return nil
}

// storedRow is a stored row's text, kind and exit code (nil: none), compared with a repeat.
type storedRow struct {
	text, kind string
	exit       any
}

// find returns the seq of the stored row with key (hash h), or 0, and the row.
func (w *keyWriter) find(key string, h int64) (int64, storedRow, error) {
	w.buf = w.st.pending.seqsOf(w.buf[:0], h)
	w.buf = append(w.buf, w.hits[h]...)
	for _, seq := range w.buf {
		if old, same, err := w.keyIs(seq, key); same || err != nil {
			return seq, old, err
		}
	}
	return 0, storedRow{}, nil
}

// keyIs reports whether the row at seq has key (not: a hash collision, or
// gc removed it), and the row: an unchanged repeat (46 of a Stop's 82 rows)
// then costs no UPDATE.
func (w *keyWriter) keyIs(seq int64, key string) (storedRow, bool, error) {
	if err := w.tx.once(&w.keyAt, `SELECT key, text, kind, exit_code FROM rows WHERE session_id = `+strconv.FormatInt(w.sid, 10)+` AND seq = ?`); err != nil {
		return storedRow{}, false, err
	}
	rows, err := w.tx.query(w.keyAt, seq)
	if err != nil {
		return storedRow{}, false, err
	}
	defer rows.Close()
	v := make([]driver.Value, 4)
	same := rows.Next(v) == nil && text(v[0]) == key
	return storedRow{text: text(v[1]), kind: text(v[2]), exit: v[3]}, same, nil
}

// added records a new row's key: pending for a long read's batch (deferred),
// else for keys_recent, written by close in one statement (~3 µs a row less).
func (w *keyWriter) added(h, seq int64, deferred bool) {
	if deferred {
		w.st.pending.add(h, seq)
		return
	}
	if w.recentFrom == 0 {
		w.recentFrom = seq // keys_recent held none of the session's (prefetch)
	}
	if len(w.recent) > 0 {
		w.recent = append(w.recent, ',')
	}
	w.recent = fmt.Appendf(w.recent, "[%d,%d]", seq, h)
}

// close ends the transaction's key work and returns keys_through; a read's
// last batch (flush), or one past keyFlushRows, writes the pending keys.
func (w *keyWriter) close(next int64, flush bool) (int64, error) {
	st := w.st
	through := st.through
	if flush || st.pending.n >= keyFlushRows {
		if st.pending.n > 0 {
			if err := writeEntries(w.tx, w.sid, st.pending.drain()); err != nil {
				return 0, err
			}
		}
		through = next
	}
	if len(w.recent) > 0 {
		if err := w.writeRecent(next); err != nil {
			return 0, err
		}
	}
	st.next, st.through = next, through
	return through, nil
}

// writeRecent appends the new keys to keys_recent and, once its seqs span
// keyRecentMax, moves them into row_keys in key order (each page written once).
func (w *keyWriter) writeRecent(next int64) error {
	if err := w.tx.execOnce(`INSERT OR IGNORE INTO keys_recent (session_id, seq, khash) SELECT ?, value ->> 0, value ->> 1 FROM json_each(?)`,
		w.sid, "["+string(w.recent)+"]"); err != nil || next-w.recentFrom < keyRecentMax {
		return err
	}
	if err := w.tx.execOnce(`INSERT OR IGNORE INTO row_keys (session_id, khash, seq)
		SELECT session_id, khash, seq FROM keys_recent WHERE session_id = ? ORDER BY khash, seq`, w.sid); err != nil {
		return err
	}
	return w.tx.execOnce(`DELETE FROM keys_recent WHERE session_id = ?`, w.sid)
}

// flushFromRows indexes at most n (all: -1) rows of sid from seq from on; it returns the last.
func flushFromRows(tx *rawTx, sid, from, n int64) (int64, error) {
	rows, err := tx.queryOnce(`SELECT seq, key FROM rows WHERE session_id = ? AND seq >= ? ORDER BY seq LIMIT `+strconv.FormatInt(n, 10), sid, from) // a literal: see RowsAfter
	if err != nil {
		return 0, err
	}
	last := from - 1
	var es []keyEntry
	v := make([]driver.Value, 2)
	for rows.Next(v) == nil {
		last, _ = v[0].(int64)
		es = append(es, keyEntry{keyHash(text(v[1])), last})
	}
	rows.Close()
	slices.SortFunc(es, compareEntries)
	return last, writeEntries(tx, sid, func(yield func(h, seq int64) bool) {
		for _, e := range es {
			if !yield(e.h, e.seq) {
				return
			}
		}
	})
}

type keyEntry struct{ h, seq int64 }

func compareEntries(a, b keyEntry) int {
	return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.seq, b.seq))
}

// writeEntries inserts entries into row_keys in key order: each B-tree page is written once.
func writeEntries(tx *rawTx, sid int64, entries iter.Seq2[int64, int64]) error {
	ins, err := tx.prepare(`INSERT OR IGNORE INTO row_keys (session_id, khash, seq) VALUES (` + strconv.FormatInt(sid, 10) + `, ?, ?)`)
	for h, seq := range entries {
		if err != nil {
			break
		}
		err = tx.exec(ins, h, seq)
	}
	return err
}

// rawTx is a write transaction on the driver connection, below database/sql:
// binding 15 values a row, its reflection cost more than SQLite's work.
type rawTx struct {
	conn  driver.Conn
	stmts []driver.Stmt // closed when the transaction ends
	args  []driver.NamedValue
}

func (t *rawTx) prepare(q string) (driver.Stmt, error) {
	s, err := t.conn.Prepare(q)
	if err == nil {
		t.stmts = append(t.stmts, s)
	}
	return s, err
}

// once prepares q into *s unless a statement is there already.
func (t *rawTx) once(s *driver.Stmt, q string) (err error) {
	if *s == nil {
		*s, err = t.prepare(q)
	}
	return err
}

// bind fills t.args from values (nil, int64, int, bool, string, []byte).
func (t *rawTx) bind(values []any) []driver.NamedValue {
	t.args = t.args[:0]
	for i, v := range values {
		switch x := v.(type) {
		case int:
			v = int64(x)
		case bool:
			v = int64(0)
			if x {
				v = int64(1)
			}
		}
		t.args = append(t.args, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	return t.args
}

func (t *rawTx) exec(s driver.Stmt, values ...any) error {
	_, err := s.(driver.StmtExecContext).ExecContext(context.Background(), t.bind(values))
	return err
}

func (t *rawTx) query(s driver.Stmt, values ...any) (driver.Rows, error) {
	return s.(driver.StmtQueryContext).QueryContext(context.Background(), t.bind(values))
}

// queryOnce prepares and runs one query.
func (t *rawTx) queryOnce(q string, values ...any) (driver.Rows, error) {
	s, err := t.prepare(q)
	if err != nil {
		return nil, err
	}
	return t.query(s, values...)
}

// execOnce prepares and runs one statement.
func (t *rawTx) execOnce(q string, values ...any) error {
	_, err := t.execCount(q, values...)
	return err
}

// execCount prepares and runs one statement and returns the rows it changed.
func (t *rawTx) execCount(q string, values ...any) (int64, error) {
	s, err := t.prepare(q)
	if err != nil {
		return 0, err
	}
	res, err := s.(driver.StmtExecContext).ExecContext(context.Background(), t.bind(values))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// queryRow scans a one-off query's first row's integers into dest (none: sql.ErrNoRows).
func (t *rawTx) queryRow(q string, args []any, dest ...*int64) error {
	rows, err := t.queryOnce(q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	vals := make([]driver.Value, len(rows.Columns()))
	if err := rows.Next(vals); err == io.EOF {
		return sql.ErrNoRows
	} else if err != nil {
		return err
	}
	for i, d := range dest {
		*d, _ = vals[i].(int64)
	}
	return nil
}

// text is a TEXT column's value.
func text(v driver.Value) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	s, _ := v.(string)
	return s
}
