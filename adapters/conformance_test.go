package adapters_test

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryover/carryover/adapters"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixtureDir holds one folder per adapter:
//
//	testdata/adapters/<tool>/*.jsonl        transcripts (LineParser); a name
//	                                        containing ".sidechain." is a subagent file
//	testdata/adapters/<tool>/*.rows.golden  the rows each transcript yields
//	testdata/adapters/<tool>/hooks.payloads {"event":…,"payload":{…}} per line
const fixtureDir = "../testdata/adapters"

var validKinds = map[adapters.Kind]bool{
	adapters.KindPrompt: true, adapters.KindText: true, adapters.KindToolCall: true, adapters.KindToolResult: true,
	adapters.KindError: true, adapters.KindCompaction: true, adapters.KindInjection: true, adapters.KindUsage: true,
	adapters.KindLimit: true, adapters.KindRefused: true, adapters.KindInterrupted: true, adapters.KindHarness: true, adapters.KindQueued: true,
	adapters.KindRewind: true,
}

// TestConformance runs every registered adapter over its fixtures: rows are
// deterministic, well-formed and match the golden files; hook payloads parse
// to a session id; no adapter lacks fixtures.
func TestConformance(t *testing.T) {
	for _, name := range adapters.Names() {
		t.Run(name, func(t *testing.T) {
			a, _ := adapters.Lookup(name)
			dir := filepath.Join(fixtureDir, name)
			if _, err := os.Stat(dir); err != nil {
				t.Fatalf("adapter %s has no fixtures in %s", name, dir)
			}
			hooks := filepath.Join(dir, "hooks.payloads")
			if _, err := os.Stat(hooks); err == nil {
				checkHooks(t, a, hooks)
			}
			docs, _ := filepath.Glob(filepath.Join(dir, "*", "*.json"))
			if sr, ok := a.(adapters.StoreReader); ok {
				for _, f := range docs {
					t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
						rows, err := sr.ReadStore(adapters.Hook{Tool: name, SessionID: "fixture", TranscriptPath: f}, adapters.Env{Getenv: func(string) string { return "" }})
						if err != nil {
							t.Fatal(err)
						}
						golden(t, strings.TrimSuffix(f, ".json")+".rows.golden", rows)
					})
				}
				// SQLite stores are fixtures as SQL text, built at test
				// time; the session read is the one the lister describes.
				sqls, _ := filepath.Glob(filepath.Join(dir, "*", "*.sql"))
				for _, f := range sqls {
					t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
						db := BuildSQLite(t, f)
						l, ok := adapters.ListerFor(name)
						if !ok {
							t.Fatalf("%s has SQL fixtures but no lister", name)
						}
						d, err := l.Describe(db)
						if err != nil {
							t.Fatal(err)
						}
						rows, err := sr.ReadStore(adapters.Hook{Tool: name, SessionID: d.ID, TranscriptPath: db}, adapters.Env{Getenv: func(string) string { return "" }})
						if err != nil {
							t.Fatal(err)
						}
						checkRows(t, rows)
						golden(t, strings.TrimSuffix(f, ".sql")+".rows.golden", rows)
					})
				}
			}
			lp, ok := a.(adapters.LineParser)
			if !ok {
				return
			}
			files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
			// Per-version shapes: testdata/adapters/<tool>/<version-or-shape>/.
			shaped, _ := filepath.Glob(filepath.Join(dir, "*", "*.jsonl"))
			files = append(files, shaped...)
			if len(files) == 0 {
				t.Fatalf("line-parsing adapter %s has no *.jsonl fixtures", name)
			}
			for _, f := range files {
				t.Run(strings.TrimPrefix(f, dir+string(filepath.Separator)), func(t *testing.T) {
					rows := ParseFile(t, lp, f)
					again := ParseFile(t, lp, f)
					if !equalJSON(rows, again) {
						t.Fatal("parsing the same bytes twice gave different rows")
					}
					checkRows(t, rows)
					golden(t, strings.TrimSuffix(f, ".jsonl")+".rows.golden", rows)
				})
			}
		})
	}
}

// checkRows fails on a row without a key, of an unknown kind, or a tool
// call without a tool name.
func checkRows(t *testing.T, rows []adapters.Row) {
	t.Helper()
	for i, r := range rows {
		if r.Key == "" {
			t.Errorf("row %d has no key", i)
		}
		if !validKinds[r.Kind] {
			t.Errorf("row %d has unknown kind %q", i, r.Kind)
		}
		if (r.Kind == adapters.KindToolCall) && r.ToolName == "" {
			t.Errorf("row %d: tool call without a tool name", i)
		}
	}
}

// BuildSQLite runs the SQL script at path into a new database file (in a
// temporary folder) and returns its path.
func BuildSQLite(t testing.TB, path string) string {
	t.Helper()
	script, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(path), ".sql")+".db")
	c, err := sql.Open("sqlite3", db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Exec(string(script)); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return db
}

// ParseFile parses every complete line of a fixture.
func ParseFile(t testing.TB, lp adapters.LineParser, path string) []adapters.Row {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []adapters.Row
	var off int64
	parse := lp.ParseLine // a TailParser's, reading the whole file as one tail (the ingest's)
	if tp, ok := lp.(adapters.TailParser); ok {
		parse = tp.TailParser(bytes.NewReader(data), 0)
	}
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if !bytes.HasSuffix(line, []byte("\n")) {
			break
		}
		rs, err := parse(line[:len(line)-1], off)
		if err != nil {
			t.Fatalf("line at %d: %v", off, err)
		}
		if strings.Contains(path, ".sidechain.") {
			for i := range rs {
				rs[i].Sidechain = true
			}
		}
		rows = append(rows, rs...)
		off += int64(len(line))
	}
	return rows
}

func checkHooks(t *testing.T, a adapters.Adapter, path string) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	n := 0
	for sc.Scan() {
		var rec struct {
			Event   string          `json:"event"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("bad hooks.payloads line: %v", err)
		}
		h, err := a.ParseHook(rec.Event, rec.Payload, adapters.Env{Getenv: func(string) string { return "" }})
		if err != nil {
			t.Errorf("%s: %v", rec.Event, err)
			continue
		}
		if h.SessionID == "" {
			t.Errorf("%s: no session id", rec.Event)
		}
		n++
	}
	if n == 0 {
		t.Error("hooks.payloads is empty")
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func golden(t *testing.T, path string, rows []adapters.Row) {
	t.Helper()
	var buf bytes.Buffer
	for _, r := range rows {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./adapters -run TestConformance -update)", err)
	}
	if !bytes.Equal(want, buf.Bytes()) {
		t.Errorf("rows differ from %s (run with -update and review the diff)", path)
	}
}
