// Package ledger is carryover's SQLite store, $CARRYOVER_HOME/ledger.sqlite:
// session rows (upserted by their stable key), cursors, row keys,
// migrations and transactions; it outlives the agents' transcripts.
// ledger.go opens and reads it, ingest.go reads transcripts in and writes
// them with their row keys, gc.go prunes and forgets, recover.go rebuilds a
// damaged file.
package ledger

import (
	"cmp"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"encoding/json"
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
	keys              keyStates // the pending row keys this process wrote (ingest.go)
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
	// Row keys move to compact tables (ingest.go). Existing rows are pending
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
	db, err := sql.Open(ledgerDriver(), FileURI(path, "_busy_timeout="+strconv.FormatInt(busyMillis(deadline), 10)+"&_synchronous=NORMAL&_txlock=immediate&_foreign_keys=0"))
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
		if v == 0 && freshSchema() != nil {
			stmts = freshStmts
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

var (
	freshOnce  sync.Once
	freshStmts []string
)

// freshSchema is the migrations' end schema, read back from running them in
// memory (nil if that failed: they are replayed), ordered for salvage: root
// pages sit at the file's front in creation order (replayed, sessions land
// at page 18) and a file cut short keeps its front, so sessions and cursors
// come first (pages 3–6), then the other salvageTables, the indexes last.
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
	type obj struct {
		rank int
		sql  string
	}
	objs, err := All(dbStore{db}, func(r Scanner) (o obj, err error) {
		var table bool
		var name string
		err = r.Scan(&table, &name, &o.sql)
		o.rank = 2*len(salvageTables) + 2
		if table {
			o.rank = 1 + slices.IndexFunc(salvageTables, func(t salvageTable) bool { return t.name == name })
			if o.rank == 0 && name != "sessions" {
				o.rank = len(salvageTables) + 1 // other tables in the migrations' order
			}
		}
		return o, err
	}, `SELECT type = 'table', name, sql FROM sqlite_schema WHERE sql IS NOT NULL -- autoindexes have none
		 AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY rowid`)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(objs, func(a, b obj) int { return a.rank - b.rank })
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.sql
	}
	return out, nil
}

// dbStore is a *sql.DB as a Store (Begin and the ledger's own methods aside).
type dbStore struct{ *sql.DB }

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
	var n int
	_ = s.QueryRow(q, args...).Scan(&n)
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
	bySeq := func(a, b Row) int { return cmp.Compare(a.Seq, b.Seq) }
	slices.SortFunc(out, bySeq)
	if out, err = l.addErrorCalls(s, out); err != nil {
		return nil, err
	}
	slices.SortFunc(out, bySeq)
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
	raw, err := json.Marshal(seqs)
	if err != nil {
		return false, err
	}
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
	ps, err := All(l, ScanValue[sql.NullString], `SELECT project FROM sessions WHERE project != '' UNION SELECT project FROM handoffs
		UNION SELECT project FROM handoff_log UNION SELECT project FROM deliveries ORDER BY 1`)
	var out []string
	for _, p := range ps {
		if p.Valid && strings.TrimSpace(p.String) != "" {
			out = append(out, p.String)
		}
	}
	return out, err
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
	var n int
	err := l.db.QueryRow(`SELECT COUNT(*) FROM published WHERE project = ? AND hash = ?`, project, hash).Scan(&n)
	return n > 0, err
}

// HandoffKnown reports whether the ledger holds project's current handoff (a recovery may not).
func (l *Ledger) HandoffKnown(project string) bool {
	var n int
	err := l.db.QueryRow(`SELECT COUNT(*) FROM handoffs WHERE project = ?`, project).Scan(&n)
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
