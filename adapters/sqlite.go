package adapters

import (
	"database/sql"
	"io"
	"net/url"
	"path/filepath"
	"strings"
)

// sqliteRO are the options every agent database is opened with (Cursor,
// OpenCode, Kilo; Crush while its WAL exists): read-only and query-only, so
// carryover never writes, checkpoints or locks the agent's live database; a
// WAL reader does not block the writer, and 500 ms is the longest wait for
// a lock a checkpoint holds.
const sqliteRO = "?mode=ro&_busy_timeout=500&_query_only=1"

// openSQLite opens the SQLite file at path with the DSN options query as a
// file: URL (so a path with '?' or '#' stays a path).
func openSQLite(path, query string) (*sql.DB, error) {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return sql.Open("sqlite3", (&url.URL{Scheme: "file", Path: p}).String()+query)
}

// isSQLiteFile reports whether path is a regular file that starts with
// SQLite's header (Cursor's state.vscdb, Crush's crush.db, OpenCode's).
func isSQLiteFile(path string) bool {
	f, err := openRegular(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	return string(head[:n]) == "SQLite format 3\x00"
}
