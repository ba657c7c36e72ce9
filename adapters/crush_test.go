package adapters_test

import (
	"crypto/sha256"
	"database/sql"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/carryover/carryover/adapters"
)

// crushProject builds <project>/.crush/crush.db from a fixture script and
// returns the project and the database.
func crushProject(t *testing.T, script string) (string, string) {
	t.Helper()
	project := filepath.Join(t.TempDir(), "ledgerly")
	return project, placeSQLite(t, script, filepath.Join(project, ".crush", "crush.db"))
}

// TestCrushHookRead: the PreToolUse hook's payload (session id, cwd) and
// CRUSH_PROJECT_DIR lead to the project's database; the session's rows
// and its sub-agent's are read, nothing is written next to the database,
// and an unknown session reads nothing (never another session).
func TestCrushHookRead(t *testing.T) {
	project, db := crushProject(t, "session.sql")
	before, _ := os.ReadFile(db)
	entries := func() int { es, _ := os.ReadDir(filepath.Dir(db)); return len(es) }
	n := entries()
	env := adapters.Env{Getenv: func(k string) string {
		if k == "CRUSH_PROJECT_DIR" {
			return project
		}
		return ""
	}}
	h, err := adapters.Crush.ParseHook("PreToolUse", []byte(`{"event":"PreToolUse","session_id":"s-new","cwd":"`+filepath.Join(project, "export")+`","tool_name":"bash"}`), env)
	if err != nil || h.Project != project || h.SessionID != "s-new" {
		t.Fatalf("hook = %+v, %v", h, err)
	}
	sr := adapters.Crush.(adapters.StoreReader)
	rows, err := sr.ReadStore(h, env)
	if err != nil {
		t.Fatal(err)
	}
	var fail, side bool
	for _, r := range rows {
		if r.Kind == adapters.KindError && r.ExitCode != nil && *r.ExitCode == 1 && strings.Contains(r.Text, "TestWriteRowComma") {
			fail = true
		}
		side = side || r.Sidechain
		if strings.Contains(r.Text, "loadCfg") {
			t.Errorf("a row of another session: %+v", r)
		}
	}
	if !fail || !side {
		t.Errorf("failing command found %v, sub-agent rows %v", fail, side)
	}
	// Without CRUSH_PROJECT_DIR: the nearest .crush above cwd.
	os.MkdirAll(filepath.Join(project, "export", "csv"), 0o755)
	if rs, err := sr.ReadStore(adapters.Hook{Tool: "crush", SessionID: "s-new", Cwd: filepath.Join(project, "export", "csv")}, adapters.Env{}); err != nil || len(rs) != len(rows) {
		t.Errorf("from a subdirectory: %d rows (want %d), %v", len(rs), len(rows), err)
	}
	if rs, err := sr.ReadStore(adapters.Hook{Tool: "crush", SessionID: "nope", Project: project}, env); err != nil || len(rs) != 0 {
		t.Errorf("unknown session: %d rows, %v", len(rs), err)
	}
	if rs, err := sr.ReadStore(adapters.Hook{Tool: "crush", SessionID: "s-new", Project: t.TempDir()}, env); err == nil || len(rs) != 0 {
		t.Errorf("no database: %d rows, %v", len(rs), err)
	}
	after, _ := os.ReadFile(db)
	if sha256.Sum256(before) != sha256.Sum256(after) {
		t.Error("reading changed Crush's database")
	}
	if m := entries(); m != n {
		es, _ := os.ReadDir(filepath.Dir(db))
		t.Errorf("reading left files beside Crush's database: %d entries, was %d: %v", m, n, es)
	}
}

// TestCrushLiveWAL: Crush holds its database open in WAL mode and is in
// the middle of a write transaction; carryover reads the committed rows
// (also those still only in the WAL) without waiting, and Crush's commit
// afterwards is not blocked.
func TestCrushLiveWAL(t *testing.T) {
	project, path := crushProject(t, "session.sql")
	w, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_busy_timeout=0")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	for _, q := range []string{
		`PRAGMA wal_autocheckpoint = 0`,
		`INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) VALUES ('w1', 's-new', 'user', '[{"type":"text","data":{"text":"committed, only in the WAL"}}]', 1767100100000, 1767100100000)`,
	} {
		if _, err := w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatalf("the writer has no WAL: %v", err)
	}
	tx, err := w.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) VALUES ('w2', 's-new', 'user', '[{"type":"text","data":{"text":"not yet committed"}}]', 1767100200000, 1767100200000)`); err != nil {
		t.Fatal(err)
	}
	sr := adapters.Crush.(adapters.StoreReader)
	rows, err := sr.ReadStore(adapters.Hook{Tool: "crush", SessionID: "s-new", Project: project}, adapters.Env{})
	if err != nil {
		t.Fatalf("read during Crush's write: %v", err)
	}
	var wal, open bool
	for _, r := range rows {
		wal = wal || r.Text == "committed, only in the WAL"
		open = open || r.Text == "not yet committed"
	}
	if !wal || open {
		t.Errorf("WAL row read %v, uncommitted row read %v", wal, open)
	}
	ss, err := crushLister(t).ListSessions(adapters.Env{}, project)
	if err != nil || len(ss) != 2 {
		t.Errorf("list during Crush's write: %d sessions, %v", len(ss), err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("Crush's commit after carryover's reads: %v", err)
	}
}

// TestCrushLister: a project's top-level sessions, newest first, previews
// from the first prompt; sub-agent sessions are not listed; `list --all`
// finds the project through projects.json; Describe is the newest session;
// a crush.db is recognised by its schema.
func TestCrushLister(t *testing.T) {
	project, db := crushProject(t, "session.sql")
	l := crushLister(t)
	ss, err := l.ListSessions(adapters.Env{}, project)
	if err != nil || len(ss) != 2 {
		t.Fatalf("sessions = %+v, %v", ss, err)
	}
	if ss[0].ID != "s-new" || ss[0].Project != project || !strings.HasPrefix(ss[0].Preview, "The CSV export breaks") || ss[0].MessageCount != 14 || ss[0].LastActive.IsZero() {
		t.Errorf("newest = %+v", ss[0])
	}
	if d, err := l.Describe(db); err != nil || d.ID != "s-new" {
		t.Errorf("Describe = %+v, %v", d, err)
	}
	data := t.TempDir()
	os.MkdirAll(filepath.Join(data, "crush"), 0o755)
	os.WriteFile(filepath.Join(data, "crush", "projects.json"), []byte(`{"projects":[{"path":"`+project+`","data_dir":"`+filepath.Join(project, ".crush")+`"},{"path":"/nonexistent/x","data_dir":".crush"}]}`), 0o600)
	env := adapters.Env{Getenv: func(k string) string {
		if k == "XDG_DATA_HOME" {
			return data
		}
		return ""
	}}
	if all, err := l.ListSessions(env, ""); err != nil || len(all) != 2 {
		t.Errorf("list --all = %d sessions, %v", len(all), err)
	}
	// options.data_directory moved a project's database: projects.json
	// names it, and the project's list finds it there.
	moved := filepath.Join(t.TempDir(), "proj2")
	placeSQLite(t, "early.sql", filepath.Join(moved+"-data", "crush.db"))
	os.WriteFile(filepath.Join(data, "crush", "projects.json"), []byte(`{"projects":[{"path":"`+moved+`","data_dir":"`+moved+`-data"}]}`), 0o600)
	if ss, err := l.ListSessions(env, moved); err != nil || len(ss) != 1 || ss[0].ID != "e1" || ss[0].Project != moved {
		t.Errorf("moved data directory: %+v, %v", ss, err)
	}
	head := make([]byte, 64<<10)
	f, _ := os.Open(db)
	n, _ := f.Read(head)
	f.Close()
	if got := adapters.SniffTranscript(head[:n]); got != "crush" {
		t.Errorf("sniffed %q", got)
	}
	_, early := crushProject(t, "early.sql")
	if d, err := l.Describe(early); err != nil || d.ID != "e1" || d.LastActive.Year() != 2025 {
		t.Errorf("early Describe = %+v, %v", d, err)
	}
	if _, err := l.Describe(filepath.Join(fixtureDir, "crush", "0.9x", "session.sql")); err == nil {
		t.Error("a text file was described as a Crush database")
	}
}

// placeSQLite builds a Crush fixture script and moves the database to
// path (closed, so the file is the whole database).
func placeSQLite(t *testing.T, script, path string) string {
	t.Helper()
	b, err := os.ReadFile(BuildSQLite(t, filepath.Join(fixtureDir, "crush", "0.9x", script)))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func crushLister(t *testing.T) adapters.Lister {
	t.Helper()
	l, ok := adapters.ListerFor("crush")
	if !ok {
		t.Fatal("crush has no lister")
	}
	return l
}

// TestCrushHostileStore: a project is hostile. A planted .crush/crush.db
// that is a FIFO is never opened (nothing blocks), one that is not SQLite
// or has other tables is an error that does not echo the file.
func TestCrushHostileStore(t *testing.T) {
	sr := adapters.Crush.(adapters.StoreReader)
	l := crushLister(t)
	for name, plant := range map[string]func(string) error{
		"fifo":    func(p string) error { return mkfifo(p) },
		"garbage": func(p string) error { return os.WriteFile(p, []byte("SECRET-CONTENT not a database at all"), 0o644) },
		"other": func(p string) error {
			db, err := sql.Open("sqlite3", "file:"+p)
			if err != nil {
				return err
			}
			defer db.Close()
			_, err = db.Exec(`CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('SECRET-CONTENT')`)
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			project := t.TempDir()
			p := filepath.Join(project, ".crush", "crush.db")
			os.MkdirAll(filepath.Dir(p), 0o755)
			if name == "fifo" && runtime.GOOS == "windows" {
				t.Skip("no FIFOs on Windows")
			}
			if err := plant(p); err != nil {
				t.Fatal(err)
			}
			rows, err := sr.ReadStore(adapters.Hook{Tool: "crush", SessionID: "s", Project: project}, adapters.Env{})
			if err == nil || len(rows) != 0 || strings.Contains(err.Error(), "SECRET") {
				t.Errorf("ReadStore = %d rows, %v", len(rows), err)
			}
			if _, err := l.Describe(p); err == nil || strings.Contains(err.Error(), "SECRET") {
				t.Errorf("Describe: %v", err)
			}
			if ss, _ := l.ListSessions(adapters.Env{}, project); len(ss) != 0 {
				t.Errorf("listed %v", ss)
			}
		})
	}
}
