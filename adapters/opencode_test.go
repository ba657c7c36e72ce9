package adapters_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
)

const ocFixture = "../testdata/adapters/opencode/1.18/store.sql"

// ocHome builds the fixture as XDG_DATA_HOME/<tool>/<tool>.db and returns
// an Env pointing at it.
func ocHome(t testing.TB, tool, fixture string) (adapters.Env, string) {
	t.Helper()
	db := BuildSQLite(t, fixture)
	data := t.TempDir()
	path := filepath.Join(data, tool, tool+".db")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, suf := range []string{"", "-wal", "-shm"} {
		if b, err := os.ReadFile(db + suf); err == nil {
			if err := os.WriteFile(path+suf, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	env := adapters.Env{Home: t.TempDir(), Getenv: func(k string) string {
		if k == "XDG_DATA_HOME" {
			return data
		}
		return ""
	}}
	return env, path
}

// TestOpenCodeLister: sessions per project from the directory column,
// subagent sessions left out, the quoted prompt unwrapped as the preview,
// the database found under XDG_DATA_HOME.
func TestOpenCodeLister(t *testing.T) {
	env, _ := ocHome(t, "opencode", ocFixture)
	l, _ := adapters.ListerFor("opencode")
	all, err := l.ListSessions(env, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 {
		t.Fatalf("want 2 top-level sessions, got %+v", all)
	}
	shop, _ := l.ListSessions(env, "/work/shop")
	if len(shop) != 1 || shop[0].ID != "ses_fixture01" || shop[0].MessageCount != 8 ||
		shop[0].Preview != "Paginate GET /orders with a cursor, keep the old offset parameter working" {
		t.Errorf("sessions of /work/shop: %+v", shop)
	}
	if ss, _ := l.ListSessions(env, "/work/sh"); len(ss) != 0 {
		t.Errorf("a path prefix that is not a parent folder matched: %+v", ss)
	}
	// Kilo's lister reads kilo/kilo.db, not OpenCode's.
	kl, _ := adapters.ListerFor("kilo")
	if ss, err := kl.ListSessions(env, ""); err != nil || len(ss) != 0 {
		t.Errorf("kilo listed OpenCode's sessions: %+v %v", ss, err)
	}
}

// TestOpenCodeDBPath: OPENCODE_DB (absolute, or relative to the data
// folder) wins over the default name.
func TestOpenCodeDBPath(t *testing.T) {
	env, path := ocHome(t, "opencode", ocFixture)
	data := filepath.Dir(filepath.Dir(path))
	if err := os.Rename(path, filepath.Join(filepath.Dir(path), "other.db")); err != nil {
		t.Fatal(err)
	}
	os.Rename(path+"-wal", filepath.Join(filepath.Dir(path), "other.db-wal"))
	os.Rename(path+"-shm", filepath.Join(filepath.Dir(path), "other.db-shm"))
	l, _ := adapters.ListerFor("opencode")
	if ss, _ := l.ListSessions(env, ""); len(ss) != 0 {
		t.Fatalf("found sessions in a database that is not there: %+v", ss)
	}
	for _, v := range []string{"other.db", filepath.Join(data, "opencode", "other.db")} {
		e := env
		e.Getenv = func(k string) string {
			switch k {
			case "XDG_DATA_HOME":
				return data
			case "OPENCODE_DB":
				return v
			}
			return ""
		}
		if ss, err := l.ListSessions(e, ""); err != nil || len(ss) != 2 {
			t.Errorf("OPENCODE_DB=%s: %d sessions, %v", v, len(ss), err)
		}
		rows, err := adapters.OpenCode.(adapters.StoreReader).ReadStore(adapters.Hook{SessionID: "ses_fixture01"}, e)
		if err != nil || len(rows) == 0 {
			t.Errorf("OPENCODE_DB=%s: ReadStore %d rows, %v", v, len(rows), err)
		}
	}
}

// TestOpenCodeFailureByExitCode: a shell part OpenCode marks completed is a
// failure when its exit code is not 0, whatever its output says; one that
// exits 0 with alarming output is not.
func TestOpenCodeFailureByExitCode(t *testing.T) {
	env, path := ocHome(t, "opencode", ocFixture)
	w, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, q := range []string{
		`INSERT INTO part VALUES ('prt_z1', 'msg_a03', 'ses_fixture01', 1790001060000, 1790001060000,
		 '{"type":"tool","tool":"bash","callID":"c_z1","state":{"status":"completed","input":{"command":"make lint"},"output":"all good","metadata":{"exit":3}}}')`,
		`INSERT INTO part VALUES ('prt_z2', 'msg_a03', 'ses_fixture01', 1790001060001, 1790001060001,
		 '{"type":"tool","tool":"bash","callID":"c_z2","state":{"status":"completed","input":{"command":"grep -c error build.log"},"output":"error: 12 errors, FAILED","metadata":{"exit":0}}}')`,
	} {
		if _, err := w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := adapters.OpenCode.(adapters.StoreReader).ReadStore(adapters.Hook{SessionID: "ses_fixture01"}, env)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]adapters.Row{}
	for _, r := range rows {
		got[r.Key] = r
	}
	if r := got["prt_z1#result"]; r.Kind != adapters.KindError || r.ExitCode == nil || *r.ExitCode != 3 {
		t.Errorf("exit 3 with quiet output: %+v", r)
	}
	if r := got["prt_z2#result"]; r.Kind != adapters.KindToolResult || r.ExitCode == nil || *r.ExitCode != 0 {
		t.Errorf("exit 0 with failing words: %+v", r)
	}
}

// TestOpenCodeReadWhileWriting: the agent holds a write transaction on its
// live WAL database (OpenCode sets busy_timeout 5000 and would wait on a
// lock of ours); carryover reads at once, sees the committed rows, never
// the uncommitted one, and the agent commits while carryover's read is
// still open. immutable=1 is shown wrong on the same file: it ignores the
// -wal file, where a live database keeps its recent pages.
func TestOpenCodeReadWhileWriting(t *testing.T) {
	env, path := ocHome(t, "opencode", ocFixture)
	w, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=0&_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	ctx := context.Background()
	conn, err := w.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO part VALUES ('prt_new', 'msg_a03', 'ses_fixture01', 1790001099000, 1790001099000,
		'{"type":"text","text":"not committed yet"}')`); err != nil {
		t.Fatal(err)
	}
	sr := adapters.OpenCode.(adapters.StoreReader)
	start := time.Now()
	rows, err := sr.ReadStore(adapters.Hook{SessionID: "ses_fixture01"}, env)
	if err != nil {
		t.Fatalf("read while the agent writes: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the read waited %s", d) // a hang, not a speed figure
	}
	for _, r := range rows {
		if r.Key == "prt_new" {
			t.Error("read an uncommitted row")
		}
	}
	if len(rows) < 20 {
		t.Errorf("read %d rows of the committed session", len(rows))
	}

	// A reader holding its snapshot open does not stop the agent's commit.
	r, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&_query_only=1")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rs, err := r.Query(`SELECT id FROM part WHERE session_id = 'ses_fixture01'`)
	if err != nil {
		t.Fatal(err)
	}
	rs.Next()
	if _, err := conn.ExecContext(ctx, `COMMIT`); err != nil {
		t.Errorf("the agent could not commit while carryover read (busy_timeout 0): %v", err)
	}
	rs.Close()
	rows, _ = sr.ReadStore(adapters.Hook{SessionID: "ses_fixture01"}, env)
	found := false
	for _, r := range rows {
		found = found || r.Key == "prt_new"
	}
	if !found {
		t.Error("the committed row is not read")
	}
	for _, suf := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + suf); err != nil {
			t.Errorf("the read removed %s%s: %v", filepath.Base(path), suf, err)
		}
	}

	// The agent still has the database open, so its commit sits in the
	// -wal file (SQLite checkpoints at 1,000 pages or when the last
	// connection closes): immutable=1 ignores the WAL and misses it, which
	// is why the reader uses mode=ro. In a real 1.18.30 run the main file
	// was 4 KiB and everything (2.4 MB) was in the WAL.
	im, _ := sql.Open("sqlite3", "file:"+path+"?immutable=1")
	defer im.Close()
	var n int
	if err := im.QueryRow(`SELECT COUNT(*) FROM part WHERE id = 'prt_new'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("immutable=1 saw the row still in the WAL (n=%d, %v): the comment above is wrong", n, err)
	}
}

// TestOpenCodeUnquote: `opencode run "…"` prompts lose their quotes; a
// prompt that only starts or ends with a quotation keeps them.
func TestOpenCodeUnquote(t *testing.T) {
	for in, want := range map[string]string{
		`"Fix the login bug"`:                   "Fix the login bug",
		`"Réparer le \"login\""`:                `Réparer le "login"`,
		`"cursor" must stay opaque`:             `"cursor" must stay opaque`,
		`use the "fast" path`:                   `use the "fast" path`,
		`"a" and "b"`:                           `"a" and "b"`,
		"\"修复登录错误 和 测试\"":                       "修复登录错误 和 测试",
		`""`:                                    `""`,
		`plain`:                                 "plain",
		`"unterminated and spaced`:              `"unterminated and spaced`,
		"  \"spaced out\"\n":                    "spaced out",
		`"he said "hi" and left"`:               `"he said "hi" and left"`,
		`"quotes \"escaped\" at the \"end\""`:   `quotes "escaped" at the "end"`,
		`"backslash path C:\\temp is kept"`:     `backslash path C:\\temp is kept`,
		`"ends with a quote mark \""`:           `ends with a quote mark "`,
		`"multi` + "\n" + `line prompt"`:        "multi\nline prompt",
		`"emoji 🚀 launch"`:                      "emoji 🚀 launch",
		`"x"`:                                   `"x"`,
		`'single quoted here'`:                  `'single quoted here'`,
		`"“curly” quotes inside are not ASCII"`: `“curly” quotes inside are not ASCII`,
		`fix "the login bug" now`:               "fix the login bug now",
		`review "src/a b.go" and "src/c d.go"`:  "review src/a b.go and src/c d.go",
		`"two  spaces inside"`:                  "two  spaces inside",
	} {
		if got := adapters.OpenCodeUnquote(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

// TestOpenCodeNotADatabase: a text file handed to --transcript as OpenCode's
// is refused with a reason, not read as an empty session.
func TestOpenCodeNotADatabase(t *testing.T) {
	p := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(p, []byte("just some notes\n"), 0o644)
	l, _ := adapters.ListerFor("opencode")
	if _, err := l.Describe(p); err == nil {
		t.Error("a text file was described as an OpenCode session")
	}
	if _, err := adapters.OpenCode.(adapters.StoreReader).ReadStore(adapters.Hook{SessionID: "x", TranscriptPath: p}, adapters.Env{}); err == nil || strings.Contains(err.Error(), "just some") {
		t.Errorf("ReadStore of a text file: %v", err)
	}
}

// BenchmarkOpenCodeRead reads one session of 2,000 parts (400 steps of a
// text, a shell call with its result, a step-finish and a patch) from a
// database that also holds 20 other sessions: what every hook event of a
// long OpenCode session costs (ReadStore re-reads the session).
func BenchmarkOpenCodeRead(b *testing.B) {
	env, path := ocHome(b, "opencode", ocFixture)
	w, err := sql.Open("sqlite3", path)
	if err != nil {
		b.Fatal(err)
	}
	tx, _ := w.Begin()
	for s := 0; s < 21; s++ {
		sid := "ses_bench" + strings.Repeat("x", s)
		tx.Exec(`INSERT INTO session VALUES (?, 'p', NULL, 's', '/bench', 't', '1.18.33', 1, 2, NULL)`, sid)
		for m := 0; m < 400; m++ {
			mid := sid + "_m" + time.Duration(m).String()
			tx.Exec(`INSERT INTO message VALUES (?, ?, ?, ?, '{"role":"assistant","tokens":{"input":100}}')`, mid, sid, m, m)
			for p, data := range []string{
				`{"type":"text","text":"Running the tests again after the change to the handler."}`,
				`{"type":"tool","tool":"bash","callID":"c","state":{"status":"completed","input":{"command":"go test ./..."},"output":"ok  \tx\t0.1s\n","metadata":{"exit":0}}}`,
				`{"type":"step-start"}`,
				`{"type":"step-finish","tokens":{"input":1000,"cache":{"read":10,"write":0}}}`,
				`{"type":"patch","files":["a.go"]}`,
			} {
				tx.Exec(`INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)`, mid+"_p"+time.Duration(p).String(), mid, sid, m*10+p, m*10+p, data)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	w.Close()
	sr := adapters.OpenCode.(adapters.StoreReader)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rows, err := sr.ReadStore(adapters.Hook{SessionID: "ses_bench"}, env)
		if err != nil || len(rows) < 1200 {
			b.Fatalf("%d rows, %v", len(rows), err)
		}
	}
}
