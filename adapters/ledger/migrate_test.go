package ledger

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
)

// TestMigrateFromEveryVersion builds a ledger at each older schema version,
// stores rows in it, and checks that Open upgrades it without losing them
// and that the hook-path queries still find their indexes.
func TestMigrateFromEveryVersion(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	for v := 1; v < len(migrations); v++ {
		t.Run(fmt.Sprint("v", v), func(t *testing.T) {
			dir := t.TempDir()
			db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, FileName))
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range migrations[:v] {
				if _, err := db.Exec(m); err != nil {
					t.Fatal(err)
				}
			}
			db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, v))
			db.Exec(`INSERT INTO sessions (id, tool, native_id, project, first_seen, last_seen, next_seq) VALUES (1, 'claude', 's', '/p', 0, 0, 4)`)
			for i, kind := range []string{"prompt", "tool_call", "error"} {
				if _, err := db.Exec(`INSERT INTO rows (session_id, key, seq, ts, role, kind, call_id, file_path, text) VALUES (1, ?, ?, 0, 'user', ?, 'c1', ?, 'x')`,
					fmt.Sprint("k", i), i+1, kind, map[bool]string{true: "a.go"}[kind == "tool_call"]); err != nil {
					t.Fatal(err)
				}
			}
			db.Close()

			l, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			var got int
			l.db.QueryRow(`PRAGMA user_version`).Scan(&got)
			if got != len(migrations) {
				t.Fatalf("schema %d after Open, want %d", got, len(migrations))
			}
			// Push the three rows out of the recent window so the anchor
			// and call queries (INDEXED BY) must find them.
			var rows []adapters.Row
			for i := 0; i < recentWindow+5; i++ {
				rows = append(rows, adapters.Row{Key: fmt.Sprint("t", i), Role: "assistant", Kind: adapters.KindText, Text: "t"})
			}
			rows = append(rows, adapters.Row{Key: "e2", Role: "tool", Kind: adapters.KindError, CallID: "c1", Text: "boom"})
			if _, err := l.Write(Batch{Session: SessionRef{Tool: "claude", NativeID: "s", Project: "/p"}, Rows: rows}, now); err != nil {
				t.Fatal(err)
			}
			rs, err := l.RecentRows("/p")
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, r := range rs {
				if r.Kind != adapters.KindText {
					kinds = append(kinds, string(r.Kind)+":"+r.Key)
				}
			}
			if want := "prompt:k0 tool_call:k1 error:k2 error:e2"; strings.Join(kinds, " ") != want {
				t.Fatalf("recent rows %v, want %s", kinds, want)
			}
		})
	}
}

func TestCollapse(t *testing.T) {
	one, two := 1, 2
	rows := []adapters.Row{
		{Key: "a", Text: "x"},
		{Key: "u", Kind: adapters.KindUsage, TokensUsed: 5},
		{Key: "b", Text: "y"},
		{Key: "u", Kind: adapters.KindUsage, TokensUsed: 9}, // same text: the first copy stays
		{Key: "a", Text: "x2"},                              // changed: replaces in place
		{Key: "c", ExitCode: &one},
		{Key: "c", ExitCode: &two},
	}
	got := collapse(rows)
	want := []adapters.Row{{Key: "a", Text: "x2"}, {Key: "u", Kind: adapters.KindUsage, TokensUsed: 5}, {Key: "b", Text: "y"}, {Key: "c", ExitCode: &two}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("collapse:\n got %v\nwant %v", got, want)
	}
	if rows[0].Text != "x" {
		t.Fatal("collapse changed its input")
	}
	plain := rows[:3]
	if got := collapse(plain); &got[0] != &plain[0] {
		t.Fatal("no repeats: want the input back")
	}
}

// TestQueryPlans keeps the hook-path queries on their indexes: without
// statistics SQLite has chosen whole-session scans before.
func TestQueryPlans(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for q, want := range map[string]string{
		`SELECT ` + rowCols + ` FROM rows WHERE session_id = 1 AND seq IN (5, 9, 12)`:                                                      "USING PRIMARY KEY (session_id=? AND seq=?)",
		`SELECT ` + rowCols + ` FROM rows WHERE session_id = 1 AND seq > 5 ORDER BY seq LIMIT 10`:                                          "USING PRIMARY KEY (session_id=? AND seq>?)",
		`SELECT ` + rowCols + ` FROM rows WHERE session_id = 1 ORDER BY seq DESC LIMIT 10`:                                                 "USING PRIMARY KEY (session_id=?)",
		`SELECT ` + rowCols + ` FROM rows WHERE session_id = 1 AND seq BETWEEN 5 AND 300 AND kind = 'tool_call' AND call_id = 'c' LIMIT 1`: "USING PRIMARY KEY (session_id=? AND seq>? AND seq<?)",
		`UPDATE rows SET text = 'x' WHERE session_id = 1 AND seq = 7`:                                                                      "USING PRIMARY KEY (session_id=? AND seq=?)",
		`SELECT id FROM sessions s WHERE s.project = '/p' ORDER BY MAX(s.last_active, s.last_seen) DESC LIMIT 5`:                           "INDEX sessions_project (project=?)",
		`SELECT d.at FROM deliveries d WHERE d.project = '/p' ORDER BY d.at DESC LIMIT 5`:                                                  "(project=?)",
		`SELECT e.at FROM limit_events e WHERE e.project = '/p' AND e.reached = 1 ORDER BY e.at DESC LIMIT 200`:                            "INDEX limit_events_project (project=?)",
		`SELECT c.path FROM cursors c JOIN sessions s ON s.id = c.session_id WHERE s.project = '/p'`:                                       "INDEX cursors_session (session_id=?)",
		`SELECT khash, seq FROM row_keys WHERE session_id = 1 AND khash IN (SELECT value FROM json_each('[1,2]'))`:                         "USING PRIMARY KEY (session_id=? AND khash=?)",
		`SELECT seq FROM row_keys WHERE session_id = 1 AND khash = 42`:                                                                     "USING PRIMARY KEY (session_id=? AND khash=?)",
	} {
		var plan []string
		rows, err := l.db.Query(`EXPLAIN QUERY PLAN ` + q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, parent, unused int
			var detail string
			rows.Scan(&id, &parent, &unused, &detail)
			plan = append(plan, detail)
		}
		rows.Close()
		if !strings.Contains(strings.Join(plan, "; "), want) {
			t.Errorf("%s\nplan: %v\nwant: %s", q, plan, want)
		}
	}
}

// TestRecentRowsKeepsOldFailuresCommand: an error older than the recent
// window comes back through the anchor index, and its command (a tool call
// without a file) through the sequence lookback.
func TestRecentRowsKeepsOldFailuresCommand(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	one := 1
	rows := []adapters.Row{
		{Key: "p", Role: "user", Kind: adapters.KindPrompt, Text: "build it"},
		{Key: "c", Role: "assistant", Kind: adapters.KindToolCall, ToolName: "Bash", CallID: "call-9", Command: "make"},
		{Key: "x", Role: "assistant", Kind: adapters.KindToolCall, ToolName: "Bash", CallID: "call-10", Command: "ls"},
		{Key: "e", Role: "tool", Kind: adapters.KindError, CallID: "call-9", ExitCode: &one, Text: "make: *** no rule"},
	}
	for i := 0; i < recentWindow+20; i++ {
		rows = append(rows, adapters.Row{Key: fmt.Sprint("t", i), Role: "assistant", Kind: adapters.KindText, Text: "t"})
	}
	if _, err := l.Write(Batch{Session: SessionRef{Tool: "claude", NativeID: "s", Project: "/p"}, Rows: rows}, time.Now()); err != nil {
		t.Fatal(err)
	}
	rs, err := l.RecentRows("/p")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		if r.Kind != adapters.KindText {
			got = append(got, r.Key+":"+r.Command)
		}
	}
	if want := "p: c:make e:"; strings.Join(got, " ") != want {
		t.Fatalf("got %q, want %q", strings.Join(got, " "), want)
	}
}

// TestSalvageTruncatedFile: a ledger cut short still yields its cursors
// (SQLite refuses a file shorter than its header's page count; Salvage reads
// a padded copy). Both layouts: a new ledger's (incremental auto-vacuum:
// page 2 the pointer map, every root page at the front in creation order,
// the sessions' and cursors' first, fresh.go) and that of a ledger the
// migrations made before auto-vacuum (sessions at page 2, cursors at 7),
// also once converted by `gc --vacuum` (auto-vacuum, the roots in the
// migrations' order: cursors at page 3, sessions at 15).
func TestSalvageTruncatedFile(t *testing.T) {
	for _, layout := range []string{"new", "migrated", "converted"} {
		t.Run(layout, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			if layout != "new" {
				db, err := sql.Open("sqlite3", "file:"+path)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := db.Exec(fmt.Sprintf(`PRAGMA page_size = %d; PRAGMA journal_mode = WAL`, pageSize)); err != nil {
					t.Fatal(err)
				}
				for _, m := range migrations {
					if _, err := db.Exec(m); err != nil {
						t.Fatal(err)
					}
				}
				db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, len(migrations)))
				db.Close()
			}
			l, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if layout == "converted" {
				if err := l.Vacuum(); err != nil {
					t.Fatal(err)
				}
			}
			if av := l.pragmaInt("auto_vacuum"); (av == 2) != (layout != "migrated") {
				t.Fatalf("auto_vacuum %d in the %s layout", av, layout)
			}
			for s := 0; s < 2; s++ {
				var rows []adapters.Row
				for i := 0; i < 800; i++ {
					rows = append(rows, adapters.Row{Key: fmt.Sprint(s, "k", i), Role: "assistant", Kind: adapters.KindText, Text: "some text for the row"})
				}
				if _, err := l.Write(Batch{Session: SessionRef{Tool: "claude", NativeID: fmt.Sprint("s", s), Project: "/p"}, Rows: rows, Cursor: &adapters.Cursor{Path: fmt.Sprint("/t/", s)}}, time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			pages := l.pragmaInt("page_count")
			var last int64 // the last of the sessions' and cursors' root pages
			l.db.QueryRow(`SELECT MAX(rootpage) FROM sqlite_schema WHERE name IN ('sessions', 'cursors')`).Scan(&last)
			l.Close() // checkpoints everything into the file
			whole, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if pages < 30 || (layout == "new") != (last == 5) {
				// About 40 pages; the last root a salvage needs is page
				// 5 in the new layout (7 in the migrated one).
				t.Fatalf("%d pages, sessions and cursors roots up to page %d", pages, last)
			}
			// Cuts at 2/5 of the file (the first roots, not the rows, as
			// the fault matrix cuts) and anywhere past those two roots,
			// on and off page boundaries.
			cuts := []int{len(whole) * 2 / 5}
			for n := int(last) * pageSize; n < len(whole); n += pageSize + 1000 {
				cuts = append(cuts, n)
			}
			for _, cut := range cuts {
				if err := os.WriteFile(path, whole[:cut], 0o600); err != nil {
					t.Fatal(err)
				}
				if got := Salvage(path); len(got) != 2 {
					t.Fatalf("salvaged %d cursors from a ledger cut at %d of %d bytes, want 2", len(got), cut, len(whole))
				}
			}
		})
	}
}

// TestStatePadding: a state reads back as saved at any size; two saves of
// states a few bytes apart keep the row's size (SQLite then overwrites its
// pages in place); a state stored unpadded (older carryover) reads as is.
func TestStatePadding(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	version, sizes := "", map[int64]bool{}
	for _, n := range []int{20000, 20003, 19990, 0, 1, statePad - 8, statePad - 7, 3 * statePad} {
		want := bytes.Repeat([]byte{byte(n), 0, 'x'}, n/3+1)[:n]
		if ok, err := l.SaveState("/p", want, Seqs{1: int64(n)}, version, time.Now()); !ok || err != nil {
			t.Fatal(n, ok, err)
		}
		got, _, v, ok := l.LoadState("/p")
		if !ok || !bytes.Equal(got, want) {
			t.Fatalf("%d bytes saved, %d read back", n, len(got))
		}
		version = v
		var size int64
		l.db.QueryRow(`SELECT length(state) FROM distill_state`).Scan(&size)
		if size%statePad != 0 {
			t.Fatalf("stored %d bytes for %d", size, n)
		}
		if n >= 19990 && n <= 20003 {
			sizes[size] = true
		}
	}
	if len(sizes) != 1 {
		t.Fatalf("states of 19990–20003 bytes stored in %d sizes", len(sizes))
	}
	old := []byte("CS\x05 an older unpadded state\x00pad")
	l.db.Exec(`UPDATE distill_state SET state = ?`, old)
	if got, _, _, ok := l.LoadState("/p"); !ok || !bytes.Equal(got, old) {
		t.Fatalf("unpadded state read as %q", got)
	}
}
