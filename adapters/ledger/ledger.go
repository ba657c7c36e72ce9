// Package ledger is carryover's SQLite store of normalized session rows:
// $CARRYOVER_HOME/ledger.sqlite. It is append-only from the user's point of
// view (rows are upserted by their stable key, never deleted), keeps a
// per-transcript cursor, and outlives the agents' own transcripts.
package ledger

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3"

	"github.com/carryover/carryover/adapters"
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

// upsertSession creates a session (args: tool, native id, project,
// transcript, first and last seen) or refreshes its last_seen, and its
// transcript when given. A session is one (tool, native id, project).
const upsertSession = `INSERT INTO sessions (tool, native_id, project, transcript, first_seen, last_seen)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (tool, native_id, project) DO UPDATE SET
			last_seen = excluded.last_seen,
			transcript = CASE WHEN excluded.transcript != '' THEN excluded.transcript ELSE sessions.transcript END`

// ensureSession returns the session id, creating it, and refreshes its
// transcript when given.
func ensureSession(tx *sql.Tx, ref SessionRef, now time.Time) (int64, error) {
	_, err := tx.Exec(upsertSession, ref.Tool, ref.NativeID, ref.Project, ref.Transcript, now.UnixMilli(), now.UnixMilli())
	if err != nil {
		return 0, err
	}
	var id int64
	err = tx.QueryRow(`SELECT id FROM sessions WHERE tool = ? AND native_id = ? AND project = ?`, ref.Tool, ref.NativeID, ref.Project).Scan(&id)
	return id, err
}

// Touch records that a session was seen (without rows) and returns its id.
func (l *Ledger) Touch(ref SessionRef, now time.Time) (int64, error) {
	tx, err := l.db.Begin()
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	id, err := ensureSession(tx, ref, now)
	if err != nil {
		return 0, err
	}
	return id, tx.Commit()
}

// Batch is one transcript's worth of new rows and where reading stopped.
type Batch struct {
	Session SessionRef
	Rows    []adapters.Row
	// Cursor, when non-nil, is saved in the same transaction as the rows.
	Cursor    *adapters.Cursor
	Sidechain bool
	// prep is Rows already prepared (prepareRows), when the caller did it.
	prep *preparedRows
	// deferKeys leaves the rows' keys pending (keys.go): set on the batches
	// of a long read but its last, which writes them all at once.
	deferKeys bool
}

// Write stores a batch in one transaction: the session, its rows (upserted
// by key: re-reading the same bytes adds nothing, a later copy of a row
// replaces the earlier one) and the cursor. It returns how many rows were new.
func (l *Ledger) Write(b Batch, now time.Time) (int, error) {
	added := 0
	var sid int64
	write := func(tx *rawTx) error {
		var err error
		added, sid, err = writeBatch(tx, &l.keys, b, now)
		return err
	}
	err := l.withRawTx(write)
	if errors.Is(err, errKeysToIndex) {
		// Rolled back: index the session's old rows in steps first.
		if err = l.catchUpKeys(b.Session); err == nil {
			err = l.withRawTx(write)
		}
	}
	if err != nil {
		if sid != 0 {
			l.keys.forget(sid)
		}
		return 0, err
	}
	return added, nil
}

const updateRow = `UPDATE rows SET ts = ?, role = ?, kind = ?, tool_name = ?, call_id = ?, file_path = ?, command = ?, exit_code = ?, text = ?, sidechain = ?, tokens_used = ?, tokens_max = ?
		WHERE session_id = ? AND seq = ? AND (text != ? OR kind != ? OR exit_code IS NOT ?)`

// optCols are the row columns whose value is usually the column default
// (empty, NULL or 0). A row binds only those it sets: each bound value is a
// cgo call, and on a cold ingest binding cost as much as SQLite's insert.
var optCols = [...]string{"tool_name", "call_id", "file_path", "command", "exit_code", "sidechain", "tokens_used", "tokens_max"}

// preparedRows is a batch made ready for its write transaction: rows
// collapsed (see collapse) and turned into statement arguments. A cold
// ingest prepares each batch on the parsing goroutine, so the writing one
// only talks to SQLite (it was the slower of the two).
type preparedRows struct {
	rows  []adapters.Row
	ts    []int64
	forms []rowForm
	// args per row: key, seq (filled in at write time), ts, text, then the
	// optional columns its form sets.
	args            [][]driver.NamedValue
	lastTS          int64
	tokUsed, tokMax int64
}

// rowForm is the shape of a row's INSERT: which optional columns it binds
// (optCols) and its role and kind, which are written into the statement
// as literals. Each bound text costs SQLite a copy, a lock and a cgo call,
// and a cold ingest binds hundreds of thousands of rows; the session id is
// a literal too (see insertStmt).
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
	slab := make([]driver.NamedValue, 0, len(p.rows)*8)
	for i, r := range p.rows {
		ts := r.Time.UnixMilli()
		if r.Time.IsZero() {
			ts = now.UnixMilli()
		}
		p.ts[i] = ts
		p.lastTS = max(p.lastTS, ts)
		start := len(slab)
		add := func(v any) { slab = append(slab, driver.NamedValue{Ordinal: len(slab) - start + 1, Value: v}) }
		add(r.Key)
		add(nil) // seq
		add(ts)
		add(r.Text)
		f := rowForm{role: r.Role, kind: string(r.Kind)}
		if !literal(f.role) || !literal(f.kind) {
			f.role, f.kind = "", "" // bound instead
			add(r.Role)
			add(string(r.Kind))
		}
		opt := func(bit uint8, set bool, v any) {
			if set {
				f.mask |= bit
				add(v)
			}
		}
		opt(1<<0, r.ToolName != "", r.ToolName)
		opt(1<<1, r.CallID != "", r.CallID)
		opt(1<<2, r.FilePath != "", r.FilePath)
		opt(1<<3, r.Command != "", r.Command)
		if r.ExitCode != nil {
			opt(1<<4, true, int64(*r.ExitCode))
		}
		opt(1<<5, r.Sidechain || sidechain, int64(1))
		opt(1<<6, r.TokensUsed != 0, r.TokensUsed)
		opt(1<<7, r.TokensMax != 0, r.TokensMax)
		p.forms[i] = f
		p.args[i] = slab[start:len(slab):len(slab)]
	}
	return p
}

// insertStmt returns the (cached) INSERT for rows of form f in session sid.
func insertStmt(tx *rawTx, cache map[rowForm]driver.Stmt, sid int64, f rowForm) (driver.Stmt, error) {
	if st := cache[f]; st != nil {
		return st, nil
	}
	cols := "session_id, key, seq, ts, text, role, kind"
	vals := strconv.FormatInt(sid, 10) + ", ?, ?, ?, ?, "
	if f.role == "" {
		vals += "?, ?"
	} else {
		vals += "'" + f.role + "', '" + f.kind + "'"
	}
	for i, c := range optCols {
		if f.mask&(1<<i) != 0 {
			cols += ", " + c
			vals += ", ?"
		}
	}
	st, err := tx.prepare(`INSERT INTO rows (` + cols + `) VALUES (` + vals + `)`)
	if err != nil {
		return nil, err
	}
	cache[f] = st
	return st, nil
}

func writeBatch(tx *rawTx, ks *keyStates, b Batch, now time.Time) (int, int64, error) {
	ref := b.Session
	if _, err := tx.execOnce(upsertSession, ref.Tool, ref.NativeID, ref.Project, ref.Transcript, now.UnixMilli(), now.UnixMilli()); err != nil {
		return 0, 0, err
	}
	var sid, next, through int64
	if err := tx.queryRow(`SELECT id, next_seq, keys_through FROM sessions WHERE tool = ? AND native_id = ? AND project = ?`, []any{ref.Tool, ref.NativeID, ref.Project}, &sid, &next, &through); err != nil {
		return 0, 0, err
	}
	if next-through > keyChunk {
		if st := ks.get(sid); st.next != next || st.through != through {
			return 0, sid, errKeysToIndex // not this process's own read (catchUpKeys)
		}
	}
	added, err := writeRows(tx, ks, sid, next, through, b, now)
	return added, sid, err
}

// writeRows is writeBatch for the session sid, whose next_seq is next and
// keys_through is through.
func writeRows(tx *rawTx, ks *keyStates, sid, next, through int64, b Batch, now time.Time) (int, error) {
	if b.Cursor != nil && cursorAhead(tx, b.Cursor) {
		b.Cursor = nil
	}
	added := 0
	stored := through
	kw, _, err := openKeys(tx, ks, sid, next, through) // the keys_through it reports is kw.close's too
	if err != nil {
		return 0, err
	}
	if len(b.Rows) > 0 {
		p := b.prep
		if p == nil {
			p = prepareRows(b.Rows, b.Sidechain, now)
		}
		w := rowWriter{tx: tx, kw: kw, b: &b, sid: sid, next: next}
		if err := w.write(p); err != nil {
			return 0, err
		}
		next, added = w.next, w.added
		if through, err = kw.close(next, !b.deferKeys); err != nil {
			return 0, err
		}
		// One statement (each is parsed anew in a hook's process): the
		// token counts change only when the batch carried usage.
		if _, err := tx.execOnce(`UPDATE sessions SET next_seq = ?1, keys_through = ?2, last_active = MAX(last_active, ?3),
			tokens_used = CASE WHEN ?4 > 0 THEN ?4 ELSE tokens_used END, tokens_max = CASE WHEN ?4 > 0 THEN ?5 ELSE tokens_max END
			WHERE id = ?6`, next, through, p.lastTS, p.tokUsed, p.tokMax, sid); err != nil {
			return 0, err
		}
		stored = through
	} else if through, err = kw.close(next, !b.deferKeys); err != nil {
		return 0, err
	}
	if through != stored {
		// A cursor-only write that indexed pending rows (another writer's,
		// or this read's when its last batch had no rows of its own).
		if _, err := tx.execOnce(`UPDATE sessions SET keys_through = ? WHERE id = ?`, through, sid); err != nil {
			return 0, err
		}
	}
	if c := b.Cursor; c != nil {
		return added, saveCursor(tx, c, sid, b.Sidechain, now)
	}
	return added, nil
}

// cursorAhead reports whether the stored cursor of the same file is past
// c: a cursor never moves backwards on the same file (a slower concurrent
// snapshot may finish after a faster one).
func cursorAhead(tx *rawTx, c *adapters.Cursor) bool {
	var off, ino, dev int64
	var head string
	err := tx.queryRow(`SELECT offset, ino, dev, head FROM cursors WHERE path = ?`, []any{c.Path}, &off, &ino, &dev, &head)
	return err == nil && uint64(ino) == c.Ino && uint64(dev) == c.Dev && off > c.Offset && adapters.HeadPart(head) == adapters.HeadPart(c.Head)
}

func saveCursor(tx *rawTx, c *adapters.Cursor, sid int64, sidechain bool, now time.Time) error {
	_, err := tx.execOnce(`INSERT INTO cursors (path, session_id, sidechain, offset, dev, ino, head, head_len, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (path) DO UPDATE SET session_id = excluded.session_id, sidechain = excluded.sidechain, offset = excluded.offset,
			dev = excluded.dev, ino = excluded.ino, head = excluded.head, head_len = excluded.head_len, updated = excluded.updated`,
		c.Path, sid, sidechain, c.Offset, int64(c.Dev), int64(c.Ino), c.Head, int64(c.HeadLen), now.UnixMilli())
	return err
}

// rowWriter stores a batch's prepared rows of session sid: new keys are
// inserted at next, known ones updated in place.
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
		seq, err := w.kw.find(r.Key, hs[i])
		if err != nil {
			return err
		}
		if seq == 0 {
			err = w.insert(p, i, hs[i])
		} else {
			err = w.update(p, i, seq)
		}
		if err != nil {
			return err
		}
	}
	return nil
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
	if err := w.kw.added(h, w.next, w.b.deferKeys); err != nil {
		return err
	}
	w.next++
	w.added++
	return nil
}

// update stores a later copy of the row at seq: it replaces the row's
// fields when its text, kind or exit code changed.
func (w *rowWriter) update(p *preparedRows, i int, seq int64) error {
	if w.upd == nil {
		var err error
		if w.upd, err = w.tx.prepare(updateRow); err != nil {
			return err
		}
	}
	r := p.rows[i]
	var exit any
	if r.ExitCode != nil {
		exit = int64(*r.ExitCode)
	}
	side := r.Sidechain || w.b.Sidechain
	_, err := w.tx.exec(w.upd, p.ts[i], r.Role, string(r.Kind), r.ToolName, r.CallID, r.FilePath, r.Command, exit, r.Text, side, r.TokensUsed, r.TokensMax, w.sid, seq, r.Text, string(r.Kind), exit)
	return err
}

// collapse returns rows with one entry per key, as the upsert would leave
// them: a later copy that changes the text, kind or exit code replaces the
// earlier one, which keeps its place. Claude Code repeats a message's usage
// on every line of the message; collapsing in memory saves a conflicting
// insert and an update per repeat.
func collapse(rows []adapters.Row) []adapters.Row {
	seen := make(map[string]int, len(rows))
	var out []adapters.Row
	for i, r := range rows {
		j, dup := seen[r.Key]
		if !dup {
			// Until the first repeat, out is nil and positions are indexes.
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
		if p := out[j]; p.Text != r.Text || p.Kind != r.Kind || !sameExit(p.ExitCode, r.ExitCode) {
			out[j] = r
		}
	}
	if out == nil {
		return rows
	}
	return out
}

func sameExit(a, b *int) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
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

// Tracked lists the transcripts of project's sessions, most recently
// updated first, at most limit. Used to catch up on sessions whose final
// hooks never ran or ran before the agent flushed.
func (l *Ledger) Tracked(project string, limit int) ([]TrackedFile, error) {
	rows, err := l.db.Query(`SELECT c.path, c.offset, c.sidechain, s.id, s.tool, s.native_id, s.project
		FROM cursors c JOIN sessions s ON s.id = c.session_id
		WHERE s.project = ? ORDER BY c.updated DESC LIMIT ?`, project, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []TrackedFile
	for rows.Next() {
		var t TrackedFile
		if err := rows.Scan(&t.Path, &t.Offset, &t.Sidechain, &t.Session.ID, &t.Session.Tool, &t.Session.NativeID, &t.Session.Project); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

const sessionCols = `s.id, s.tool, s.native_id, s.project, s.transcript, s.first_seen, s.last_seen, s.last_active, s.title, s.tokens_used, s.tokens_max, s.next_seq - 1 - s.pruned`

func scanSession(sc interface{ Scan(...any) error }) (Session, error) {
	var s Session
	var first, last, active int64
	err := sc.Scan(&s.ID, &s.Tool, &s.NativeID, &s.Project, &s.Transcript, &first, &last, &active, &s.Title, &s.TokensUsed, &s.TokensMax, &s.Rows)
	s.FirstSeen, s.LastSeen = time.UnixMilli(first), time.UnixMilli(last)
	if active > 0 {
		s.LastActive = time.UnixMilli(active)
	} else {
		s.LastActive = s.LastSeen
	}
	return s, err
}

// forProject is the WHERE condition on column for one project, or every
// project when project is empty, with its arguments. Two statements rather
// than `(? = ” OR column = ?)`: SQLite plans a statement once for any
// argument, so that form reads every project's rows even when one is
// asked for (the project indexes go unused).
func forProject(column, project string) (string, []any) {
	if project == "" {
		return "1", nil
	}
	return column + " = ?", []any{project}
}

// Sessions lists sessions, most recently active first. An empty project
// lists every project's; tool filters by agent when set.
func (l *Ledger) Sessions(project, tool string, limit int) ([]Session, error) {
	where, args := forProject("s.project", project)
	q := `SELECT ` + sessionCols + ` FROM sessions s WHERE ` + where + ` AND (? = '' OR s.tool = ?)
		ORDER BY MAX(s.last_active, s.last_seen) DESC, s.id DESC LIMIT ?`
	rows, err := l.db.Query(q, append(args, tool, tool, limit)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Session looks up one session by tool and native id (the most recently
// seen when the id was seen in more than one project).
func (l *Ledger) Session(tool, nativeID string) (Session, error) {
	return scanSession(l.db.QueryRow(`SELECT `+sessionCols+` FROM sessions s WHERE s.tool = ? AND s.native_id = ? ORDER BY s.last_seen DESC, s.id DESC LIMIT 1`, tool, nativeID))
}

// SessionIn looks up a session by tool, native id and project.
func (l *Ledger) SessionIn(tool, nativeID, project string) (Session, error) {
	return scanSession(l.db.QueryRow(`SELECT `+sessionCols+` FROM sessions s WHERE s.tool = ? AND s.native_id = ? AND s.project = ?`, tool, nativeID, project))
}

// SessionByID looks up one session by ledger id.
func (l *Ledger) SessionByID(id int64) (Session, error) {
	return scanSession(l.db.QueryRow(`SELECT `+sessionCols+` FROM sessions s WHERE s.id = ?`, id))
}

// Rows returns the last limit rows of a session in sequence order.
func (l *Ledger) Rows(sessionID int64, limit int) ([]Row, error) {
	s, err := l.SessionByID(sessionID)
	if err != nil {
		return nil, err
	}
	rows, err := l.db.Query(`SELECT session_id, seq, key, ts, role, kind, tool_name, call_id, file_path, command, exit_code, text, sidechain, tokens_used, tokens_max
		FROM (SELECT * FROM rows WHERE session_id = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq`, sessionID, limit)
	if err != nil {
		return nil, err
	}
	return scanRows(rows, s.Tool)
}

// SetTitle records a session's one-line preview.
func (l *Ledger) SetTitle(id int64, title string) error {
	_, err := l.db.Exec(`UPDATE sessions SET title = ? WHERE id = ? AND title = ''`, title, id)
	return err
}
