package adapters_test

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryover/carryover/adapters"
)

// FuzzOpenCodeExport feeds `opencode export` documents (seeded from the
// fixture) to the reader: it must never panic, every row must be usable,
// and an error must not echo the document.
func FuzzOpenCodeExport(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join(fixtureDir, "opencode", "1.18", "export.json")); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"info":{"id":"ses_x"},"messages":[{"info":{"role":"user"},"parts":[{"type":"text","text":"\"a b\""}]}]}`))
	f.Add([]byte(`{"info":{"id":"ses_x"},"messages":[{"info":{"role":"assistant","error":{"name":"APIError","data":{"statusCode":429}}},"parts":[]}]}`))
	sr := adapters.OpenCode.(adapters.StoreReader)
	l, _ := adapters.ListerFor("opencode")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, doc []byte) {
		path := filepath.Join(dir, "export.json")
		if err := os.WriteFile(path, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		rows, err := sr.ReadStore(adapters.Hook{Tool: "opencode", SessionID: "s", TranscriptPath: path}, adapters.Env{})
		if err != nil {
			if len(doc) > 8 && bytes.Contains([]byte(err.Error()), doc) {
				t.Fatal("error echoes the document")
			}
			return
		}
		usableRows(t, rows)
		_, _ = l.Describe(path)
	})
}

// FuzzOpenCodeStore writes fuzzed message and part JSON into a database
// built from the fixture and reads the session back through SQLite.
func FuzzOpenCodeStore(f *testing.F) {
	f.Add([]byte(`{"role":"assistant"}`), []byte(`{"type":"tool","tool":"bash","state":{"status":"completed","input":{"command":"x"},"metadata":{"exit":1}}}`))
	f.Add([]byte(`{"role":"user"}`), []byte(`{"type":"text","text":"\"quoted prompt here\""}`))
	f.Add([]byte(`{"role":"assistant","summary":true,"error":{"name":"MessageAbortedError"}}`), []byte(`{"type":"step-finish","tokens":{"input":-5,"cache":{"read":9}}}`))
	f.Add([]byte(`null`), []byte(`{"type":"tool","tool":"apply_patch","state":{"status":"error","input":{"patchText":"*** Add File: a"},"error":"rejected permission"}}`))
	db := BuildSQLite(f, filepath.Join(fixtureDir, "opencode", "1.18", "store.sql"))
	w, err := sql.Open("sqlite3", db)
	if err != nil {
		f.Fatal(err)
	}
	defer w.Close()
	sr := adapters.OpenCode.(adapters.StoreReader)
	f.Fuzz(func(t *testing.T, msg, part []byte) {
		if _, err := w.Exec(`UPDATE message SET data = ? WHERE id = 'msg_a03'`, string(msg)); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Exec(`UPDATE part SET data = ? WHERE id = 'prt_a03d'`, string(part)); err != nil {
			t.Fatal(err)
		}
		rows, err := sr.ReadStore(adapters.Hook{Tool: "opencode", SessionID: "ses_fixture01", TranscriptPath: db}, adapters.Env{})
		if err != nil {
			t.Fatal(err)
		}
		usableRows(t, rows)
	})
}

// FuzzOpenCodeUnquote: the text `opencode run` stores for any arguments
// (each one holding a space quoted, its quotes escaped) unquotes to the
// arguments joined by spaces; any other text never panics.
func FuzzOpenCodeUnquote(f *testing.F) {
	f.Add("Fix the login bug")
	f.Add("fix\x00the bug\x00now")
	f.Add(`say "hi" there`)
	f.Fuzz(func(t *testing.T, s string) {
		_ = adapters.OpenCodeUnquote(s)
		args := strings.Split(s, "\x00")
		var stored []string
		spaced := false
		for _, a := range args {
			if a == "" || strings.HasSuffix(a, `\`) || strings.Contains(a, `\"`) {
				return // run writes `"a \"` for `a \`, the same as for `a "`: ambiguous
			}
			if strings.Contains(a, " ") {
				stored, spaced = append(stored, `"`+strings.ReplaceAll(a, `"`, `\"`)+`"`), true
			} else if strings.Contains(a, `"`) {
				return // a bare argument with a quote: run's text is ambiguous
			} else {
				stored = append(stored, a)
			}
		}
		text := strings.Join(stored, " ")
		if !spaced || strings.TrimSpace(text) != text {
			return
		}
		if got, want := adapters.OpenCodeUnquote(text), strings.Join(args, " "); got != want {
			t.Fatalf("unquote(%q) = %q, want %q", text, got, want)
		}
	})
}

func usableRows(t *testing.T, rows []adapters.Row) {
	t.Helper()
	for i, r := range rows {
		if r.Key == "" || r.Kind == "" || (r.Kind == adapters.KindToolCall && r.ToolName == "") {
			t.Fatalf("row %d unusable: %+v", i, r)
		}
	}
}
