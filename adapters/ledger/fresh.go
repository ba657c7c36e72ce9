package ledger

import (
	"database/sql"
	"slices"
	"sync"
)

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

// salvageFirst are the tables a new ledger creates first, in this order.
var salvageFirst = []string{"sessions", "cursors", "handoff_log", "decisions", "pinned_task", "handoffs", "deliveries", "published"}

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
			return 2*len(salvageFirst) + 2 // indexes (and anything else) last
		}
		if i := slices.Index(salvageFirst, o.name); i >= 0 {
			return i
		}
		return len(salvageFirst) // other tables in the migrations' order
	}
	slices.SortStableFunc(objs, func(a, b obj) int { return rank(a) - rank(b) })
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.sql
	}
	return out, nil
}
