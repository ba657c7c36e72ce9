package adapters_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryover/carryover/adapters"
)

var cursorEnv = adapters.Env{Getenv: func(string) string { return "" }}

// cursorHooks parses testdata/adapters/cursor/hooks.payloads.
func cursorHooks(t *testing.T) []adapters.Hook {
	t.Helper()
	f, err := os.Open(filepath.Join(fixtureDir, "cursor", "hooks.payloads"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var hs []adapters.Hook
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct {
			Event   string          `json:"event"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		h, err := adapters.CursorIDE.ParseHook(rec.Event, rec.Payload, cursorEnv)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	return hs
}

func TestCursorParseHookFields(t *testing.T) {
	hs := cursorHooks(t)
	const conv = "b60ae0c1-2f85-4c4d-b3e5-b512f9b06e4c"
	for i, h := range hs {
		if h.SessionID != conv {
			t.Errorf("hook %d (%s): session %q", i, h.Event, h.SessionID)
		}
		if h.Project != "/tmp/host-test/cursor-workspace" {
			t.Errorf("hook %d: project %q, want workspace_roots[0]", i, h.Project)
		}
	}
	if hs[0].Event != "beforeSubmitPrompt" || !strings.HasPrefix(hs[0].Prompt, "You are exercising") {
		t.Errorf("beforeSubmitPrompt: event %q prompt %q", hs[0].Event, hs[0].Prompt)
	}
	if hs[0].TranscriptPath != "" {
		t.Errorf("transcript_path null should give no path, got %q", hs[0].TranscriptPath)
	}
	if !strings.HasSuffix(hs[2].TranscriptPath, "/agent-transcripts/"+conv+"/"+conv+".jsonl") {
		t.Errorf("transcript path %q", hs[2].TranscriptPath)
	}
	// CURSOR_PROJECT_DIR when workspace_roots is missing.
	h, err := adapters.CursorIDE.ParseHook("stop", []byte(`{"conversation_id":"c1"}`), adapters.Env{Getenv: func(k string) string {
		if k == "CURSOR_PROJECT_DIR" {
			return "/p"
		}
		return ""
	}})
	if err != nil || h.Project != "/p" || h.Event != "stop" {
		t.Errorf("fallback project: %+v %v", h, err)
	}
	if _, err := adapters.CursorIDE.ParseHook("stop", []byte(`not json "secret"`), cursorEnv); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("bad payload error %v", err)
	}
}

func TestCursorHookRows(t *testing.T) {
	hs := cursorHooks(t)
	byCall := map[string][]adapters.Row{}
	var all []adapters.Row
	for _, h := range hs {
		for _, r := range h.Rows {
			if r.CallID != "" {
				byCall[r.CallID] = append(byCall[r.CallID], r)
			}
			all = append(all, r)
		}
	}
	// Pre* and other events carry no rows; post* do.
	for _, h := range hs {
		switch h.Event {
		case "preToolUse", "beforeSubmitPrompt", "stop", "subagentStop", "sessionStart", "sessionEnd":
			if len(h.Rows) != 0 {
				t.Errorf("%s: %d rows, want none", h.Event, len(h.Rows))
			}
		}
	}
	tests := []struct {
		name     string
		callID   string
		tool     string
		file     string
		command  string
		kind     adapters.Kind
		exit     *int
		wantText string
	}{
		{"shell ok", "25c45009-ca76-4283-9371-b9146187c78d", "Shell", "", "pwd", adapters.KindToolResult, ptr(0), "/tmp/host-test/cursor-workspace\n"},
		{"write", "call-e9be6a5e-b7b6-4f51-a276-11f12b6c0e83-5|fc_11d0162b-5607-95d3-b74e-8ac934bd945a_1", "Write", "/tmp/host-test/cursor-workspace/probe-note.txt", "", adapters.KindToolResult, nil, ""},
		{"shell fails", "call-hand-made-0001|fc_hand-made_0", "Shell", "", "go test ./...", adapters.KindError, ptr(1), "--- FAIL"},
		{"edit fails", "call-hand-made-0002|fc_hand-made_1", "StrReplace", "/tmp/host-test/cursor-workspace/main.go", "", adapters.KindError, nil, "old_string not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := byCall[tc.callID]
			if len(rs) != 2 {
				t.Fatalf("rows for %q: %d (tool_use_id newline must become |)", tc.callID, len(rs))
			}
			call, res := rs[0], rs[1]
			if call.Kind != adapters.KindToolCall || call.ToolName != tc.tool || call.FilePath != tc.file || call.Command != tc.command {
				t.Errorf("call %+v", call)
			}
			if res.Kind != tc.kind || !strings.Contains(res.Text, tc.wantText) {
				t.Errorf("result kind %s text %q", res.Kind, res.Text)
			}
			if (tc.exit == nil) != (res.ExitCode == nil) || (tc.exit != nil && *tc.exit != *res.ExitCode) {
				t.Errorf("exit %v want %v", res.ExitCode, tc.exit)
			}
			if strings.Contains(call.Key, "\n") {
				t.Errorf("key with newline %q", call.Key)
			}
		})
	}
	var edit, shell bool
	for _, r := range all {
		if r.ToolName == "afterFileEdit" && r.FilePath == "/tmp/host-test/cursor-workspace/main.go" && strings.Contains(r.Text, "TODO: handle c") {
			edit = true
		}
		if r.Command == "make lint" {
			shell = true
		}
	}
	if !edit || !shell {
		t.Errorf("afterFileEdit row %v, afterShellExecution row %v", edit, shell)
	}
	// Same payload, same keys.
	again := cursorHooks(t)
	for i := range hs {
		if !equalJSON(hs[i].Rows, again[i].Rows) {
			t.Errorf("hook %d rows differ between parses", i)
		}
	}
}

func ptr(n int) *int { return &n }

func TestCursorTranscriptUserText(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		kinds []adapters.Kind
		want  string
	}{
		{"wrapped", "<user_query>\nfix it\n</user_query>", []adapters.Kind{adapters.KindPrompt}, "fix it"},
		{"timestamp", "<timestamp>Thursday, Sep 3</timestamp>\n<user_query>\nfix it\n</user_query>", []adapters.Kind{adapters.KindPrompt}, "fix it"},
		{"plain", "fix it", []adapters.Kind{adapters.KindPrompt}, "fix it"},
		{"context block", "<attached_files>\nsecret\n</attached_files>", nil, ""},
		{"handoff then query", "# [CARRYOVER] Last updated 2026-09-03 08:00 from claude\nstuff\n<user_query>\ngo on with the task\n</user_query>",
			[]adapters.Kind{adapters.KindInjection, adapters.KindPrompt}, "go on with the task"},
		{"handoff only", "# [CARRYOVER] Last updated 2026-09-03 08:00 from claude\nstuff", []adapters.Kind{adapters.KindInjection}, "# [CARRYOVER] Last updated 2026-09-03 08:00 from claude"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			line, _ := json.Marshal(map[string]any{"role": "user", "message": map[string]any{"content": []any{map[string]any{"type": "text", "text": tc.text}}}})
			rows, err := adapters.CursorIDE.(adapters.LineParser).ParseLine(line, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(tc.kinds) {
				t.Fatalf("rows %+v", rows)
			}
			for i, k := range tc.kinds {
				if rows[i].Kind != k {
					t.Errorf("row %d kind %s want %s", i, rows[i].Kind, k)
				}
			}
			if len(rows) > 0 && rows[len(rows)-1].Text != tc.want {
				t.Errorf("text %q want %q", rows[len(rows)-1].Text, tc.want)
			}
		})
	}
}

func TestCursorTranscripts(t *testing.T) {
	home := t.TempDir()
	lp := adapters.CursorIDE.(adapters.LineParser)
	env := adapters.Env{Home: home, Getenv: func(string) string { return "" }}
	h := adapters.Hook{SessionID: "abc", Project: "/tmp/host-test/cursor-workspace"}
	dir := filepath.Join(home, ".cursor", "projects", "tmp-host-test-cursor-workspace", "agent-transcripts")
	ts := lp.Transcripts(h, env)
	if len(ts) != 2 || ts[0].Path != filepath.Join(dir, "abc", "abc.jsonl") || ts[1].Path != filepath.Join(dir, "abc.jsonl") || !ts[0].MaybeMissing {
		t.Fatalf("no file yet: %+v", ts)
	}
	// The CLI layout once it exists; subagents below it.
	if err := os.MkdirAll(filepath.Join(dir, "subagents"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "abc.jsonl"), []byte("{}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "subagents", "s1.jsonl"), []byte("{}\n"), 0o644)
	ts = lp.Transcripts(h, env)
	if len(ts) != 2 || ts[0].Path != filepath.Join(dir, "abc.jsonl") || !ts[1].Sidechain {
		t.Fatalf("cli layout: %+v", ts)
	}
	// A path from the hook wins.
	h.TranscriptPath = "/x/y.jsonl"
	if ts = lp.Transcripts(h, env); ts[0].Path != "/x/y.jsonl" {
		t.Fatalf("hook path: %+v", ts)
	}
	if ts = lp.Transcripts(adapters.Hook{SessionID: "../../etc", Project: "/p"}, env); len(ts) != 0 {
		t.Fatalf("unsafe id used in a path: %+v", ts)
	}
}

// cursorFixtureDB builds the global state.vscdb from the committed rows
// file under home's Linux Cursor User directory and returns its path.
func cursorFixtureDB(t *testing.T, home string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtureDir, "cursor", "state-vscdb-rows.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, ".config", "Cursor", "User", "globalStorage", "state.vscdb")
	os.MkdirAll(filepath.Dir(path), 0o755)
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range []string{
		`CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)`,
		`CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)`,
		`CREATE TABLE composerHeaders (composerId TEXT, workspaceId TEXT, createdAt INTEGER, lastUpdatedAt INTEGER, isArchived INTEGER, isSubagent INTEGER, recency INTEGER, checkpointAt INTEGER, value TEXT)`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var rec struct {
			DB, Table, Key string
			Value          json.RawMessage
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.DB != "globalStorage/state.vscdb" {
			continue
		}
		switch rec.Table {
		case "cursorDiskKV", "ItemTable":
			if _, err := db.Exec(`INSERT INTO `+rec.Table+` (key, value) VALUES (?, ?)`, rec.Key, string(rec.Value)); err != nil {
				t.Fatal(err)
			}
		case "composerHeaders":
			var c map[string]any
			json.Unmarshal(rec.Value, &c)
			v, _ := json.Marshal(c["value"])
			db.Exec(`INSERT INTO composerHeaders VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, c["composerId"], c["workspaceId"], c["createdAt"], c["lastUpdatedAt"], c["isArchived"], c["isSubagent"], c["recency"], c["checkpointAt"], string(v))
		}
	}
	return path
}

func TestCursorReadStore(t *testing.T) {
	home := t.TempDir()
	path := cursorFixtureDB(t, home)
	before, _ := os.ReadFile(path)
	sr := adapters.CursorIDE.(adapters.StoreReader)
	env := adapters.Env{Home: home, Getenv: func(string) string { return "" }}
	h := adapters.Hook{SessionID: "5f1c2a9e-3b7d-4e61-9a0c-2d8e4f6b7a10", Project: "/home/dev/proj"}
	rows, err := sr.ReadStore(h, env)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join(fixtureDir, "cursor", "state-vscdb.rows.golden"), rows)
	again, _ := sr.ReadStore(h, env)
	if !equalJSON(rows, again) {
		t.Error("two reads differ")
	}
	var sawEdit, sawFail bool
	for _, r := range rows {
		if r.Kind == adapters.KindToolCall && r.FilePath == "cmd/sync.go" && strings.Contains(r.Text, "dry-run") {
			sawEdit = true
		}
		if r.Kind == adapters.KindError && r.ExitCode != nil && *r.ExitCode == 1 && strings.Contains(r.Text, "FAIL: TestSyncDryRun") {
			sawFail = true
		}
		if r.Time.IsZero() {
			t.Errorf("row %s has no time", r.Key)
		}
	}
	if !sawEdit || !sawFail || rows[0].Kind != adapters.KindPrompt {
		t.Errorf("edit %v, failure %v, first %+v", sawEdit, sawFail, rows[0])
	}
	after, _ := os.ReadFile(path)
	if sha256.Sum256(before) != sha256.Sum256(after) {
		t.Error("ReadStore modified Cursor's database")
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Error("ReadStore left a WAL next to Cursor's database")
	}

	// Unknown conversation: no rows, no error.
	if rs, err := sr.ReadStore(adapters.Hook{SessionID: "nope", Project: "/home/dev/proj"}, env); err != nil || len(rs) != 0 {
		t.Errorf("unknown conversation: %v %v", rs, err)
	}
	// A project Cursor writes transcripts for is read from those, not the DB.
	os.MkdirAll(filepath.Join(home, ".cursor", "projects", "home-dev-proj", "agent-transcripts"), 0o755)
	if rs, err := sr.ReadStore(h, env); err != nil || len(rs) != 0 {
		t.Errorf("transcript era should skip the DB: %d rows, %v", len(rs), err)
	}
	h.Project = "/other"
	h.TranscriptPath = "/x.jsonl"
	if rs, _ := sr.ReadStore(h, env); len(rs) != 0 {
		t.Error("a hook transcript_path should skip the DB")
	}
	// No Cursor at all: a not-exist error (the hook path ignores those).
	if _, err := sr.ReadStore(adapters.Hook{SessionID: "x", Project: "/p"}, adapters.Env{Home: t.TempDir()}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing DB: %v", err)
	}
}
