package ledger

import (
	"database/sql"
	"fmt"
	"slices"
	"testing"
)

// schemaRows lists a database's schema objects, sorted by name.
func schemaRows(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT type, name, tbl_name, COALESCE(sql, '') FROM sqlite_schema ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var typ, name, tbl, text string
		if err := rows.Scan(&typ, &name, &tbl, &text); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %s on %s: %s", typ, name, tbl, text))
	}
	return out
}

// TestFreshSchema: a new ledger has exactly the schema the migrations end
// with (same tables, columns, indexes, autoindexes), 16 KiB pages,
// incremental auto-vacuum, and the tables salvage reads at the front of the
// file: sessions at page 3 and cursors at page 5 (page 2 is the pointer
// map, 4 and 6 their autoindexes), then the lifecycle tables, before any
// table or index of the rows.
func TestFreshSchema(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	mem, err := sql.Open("sqlite3", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	mem.SetMaxOpenConns(1)
	for _, m := range migrations {
		if _, err := mem.Exec(m); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := schemaRows(t, l.db), schemaRows(t, mem); !slices.Equal(got, want) {
		t.Fatalf("a new ledger's schema differs from the migrations':\n%q\nwant\n%q", got, want)
	}
	if ps, av, v := l.pragmaInt("page_size"), l.pragmaInt("auto_vacuum"), l.pragmaInt("user_version"); ps != pageSize || av != 2 || v != int64(len(migrations)) {
		t.Fatalf("page_size %d, auto_vacuum %d, user_version %d", ps, av, v)
	}
	root := map[string]int{}
	rows, err := l.db.Query(`SELECT name, rootpage FROM sqlite_schema`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		var n int
		rows.Scan(&name, &n)
		root[name] = n
	}
	rows.Close()
	if root["sessions"] != 3 || root["cursors"] != 5 {
		t.Errorf("sessions at page %d, cursors at %d; want 3 and 5", root["sessions"], root["cursors"])
	}
	for _, tb := range salvageTables {
		for _, late := range []string{"rows", "row_keys", "keys_recent", "rows_anchor"} {
			if root[tb.name] == 0 || root[tb.name] > root[late] {
				t.Errorf("%s at page %d, after %s (%d)", tb.name, root[tb.name], late, root[late])
			}
		}
	}
}
