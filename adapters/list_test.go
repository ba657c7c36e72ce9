package adapters_test

import (
	"database/sql"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
)

var updateList = flag.Bool("update-list", false, "rewrite testdata/stores/list.golden.json")

func storeEnv(home string) adapters.Env {
	return adapters.Env{Home: home, Getenv: func(string) string { return "" }}
}

func listAll(t *testing.T, env adapters.Env, project string) []adapters.NativeSession {
	t.Helper()
	var all []adapters.NativeSession
	for _, name := range adapters.ListerNames() {
		l, _ := adapters.ListerFor(name)
		ss, err := l.ListSessions(env, project)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		all = append(all, ss...)
	}
	adapters.SortSessions(all)
	return all
}

// TestListFixtureStores lists the fixture stores of all four agents.
func TestListFixtureStores(t *testing.T) {
	home, _ := filepath.Abs("../testdata/stores/home")
	all := listAll(t, storeEnv(home), "")
	for i := range all {
		all[i].Path = strings.TrimPrefix(all[i].Path, home)
	}
	got, _ := json.MarshalIndent(all, "", "  ")
	p := "../testdata/stores/list.golden.json"
	if *updateList {
		os.WriteFile(p, append(got, '\n'), 0o644)
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(want)) != strings.TrimSpace(string(got)) {
		t.Errorf("list differs from %s (go test ./adapters -run TestListFixtureStores -update-list):\n%s", p, got)
	}
	tools := map[string]int{}
	for _, s := range all {
		tools[s.Tool]++
		if s.ID == "" || s.Preview == "" || s.MessageCount == 0 || s.LastActive.IsZero() || s.Project == "" {
			t.Errorf("%s %s: incomplete %+v", s.Tool, s.ID, s)
		}
	}
	for _, tool := range []string{"claude", "codex", "gemini", "copilot-cli"} {
		if tools[tool] == 0 {
			t.Errorf("no %s sessions listed", tool)
		}
	}
	for i := 1; i < len(all); i++ {
		if all[i].LastActive.After(all[i-1].LastActive) {
			t.Errorf("not newest first at %d", i)
		}
	}
}

func TestListProjectFilter(t *testing.T) {
	home, _ := filepath.Abs("../testdata/stores/home")
	cases := map[string][]string{
		"/home/dev-a/src/retrylib":   {"claude"},
		"/home/dev-b/src/retry-lib":  {"codex"},
		"/home/dev-c/src/retryq":     {"copilot-cli", "copilot-cli", "gemini"},
		"/home/dev-c/src/retryq-not": nil,
	}
	for project, want := range cases {
		var got []string
		for _, s := range listAll(t, storeEnv(home), project) {
			got = append(got, s.Tool)
		}
		if strings.Join(sorted(got), ",") != strings.Join(want, ",") {
			t.Errorf("%s: %v, want %v", project, got, want)
		}
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// TestListCodexIndex: with state_5.sqlite present the thread index is used
// (title, archived flag, cwd), and stale rows whose rollout is gone are skipped.
func TestListCodexIndex(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".codex", "sessions", "2026", "11", "21")
	os.MkdirAll(dir, 0o755)
	src, _ := os.ReadFile("../testdata/adapters/codex/rollout-tools.jsonl")
	rollout := filepath.Join(dir, "rollout-2026-11-21T08-51-29-01a1fd4d-b021-7fb2-8398-fa776910c773.jsonl")
	os.WriteFile(rollout, src, 0o600)
	db, err := sql.Open("sqlite3", filepath.Join(home, ".codex", "state_5.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT, created_at_ms INTEGER, updated_at_ms INTEGER, recency_at_ms INTEGER, cwd TEXT, title TEXT, first_user_message TEXT, archived INTEGER);
		INSERT INTO threads VALUES ('01a1fd4d-b021-7fb2-8398-fa776910c773', ?, 0, 0, 1895251089802, '/home/dev-b/src/retry-lib', 'Indexed title', '', 0);
		INSERT INTO threads VALUES ('gone', '/nonexistent/rollout.jsonl', 0, 0, 1895251089802, '/home/dev-b/src/retry-lib', 'stale', '', 0);
		INSERT INTO threads VALUES ('old', ?, 0, 0, 1, '/home/dev-b/src/retry-lib', 'archived', '', 1);`, rollout, rollout)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	l, _ := adapters.ListerFor("codex")
	ss, err := l.ListSessions(storeEnv(home), "/home/dev-b/src/retry-lib")
	if err != nil || len(ss) != 1 {
		t.Fatalf("%v %+v", err, ss)
	}
	s := ss[0]
	if s.ID != "01a1fd4d-b021-7fb2-8398-fa776910c773" || !s.LastActive.Equal(time.UnixMilli(1895251089802)) {
		t.Errorf("index not used: %+v", s)
	}
	if s.Preview == "" {
		t.Errorf("preview %q", s.Preview)
	}
}

// TestListHugeTranscript: a 1 GB transcript (sparse) is listed from its
// head and tail, with an estimated message count. That the count is an
// estimate is the proof that the middle was not read; the time is only
// logged (a busy machine says nothing about the mechanism).
func TestListHugeTranscript(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".claude", "projects", adapters.ClaudeSlug("/w/big"))
	os.MkdirAll(dir, 0o700)
	path := filepath.Join(dir, "11111111-2222-3333-4444-555555555555.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	line := `{"type":"user","sessionId":"11111111-2222-3333-4444-555555555555","cwd":"/w/big","timestamp":"2026-11-21T08:00:00Z","promptSource":"typed","message":{"role":"user","content":"Make the importer stream"}}` + "\n"
	f.WriteString(strings.Repeat(line, 100))
	const size = 1 << 30
	tail := `{"type":"assistant","sessionId":"11111111-2222-3333-4444-555555555555","cwd":"/w/big","timestamp":"2026-11-21T09:30:00Z","message":{"role":"assistant","content":[{"type":"text","text":"done"}]}}` + "\n"
	if err := f.Truncate(size - int64(len(tail)) - 1); err != nil {
		t.Fatalf("cannot make a sparse 1 GB file: %v", err)
	}
	f.Seek(0, 2)
	f.WriteString("\n" + tail)
	f.Close()
	defer os.Remove(path)
	l, _ := adapters.ListerFor("claude")
	start := time.Now()
	ss, err := l.ListSessions(storeEnv(home), "/w/big")
	el := time.Since(start)
	if err != nil || len(ss) != 1 {
		t.Fatalf("%v %+v", err, ss)
	}
	t.Logf("listed a 1 GB transcript in %s: %+v", el, ss[0])
	if !ss[0].CountEstimated || ss[0].Preview != "Make the importer stream" || ss[0].LastActive.Hour() != 9 {
		t.Errorf("%+v", ss[0])
	}
}

// TestListMidSizeTranscript: a transcript past the head and tail samples
// but under the scan limit is counted exactly, a line longer than the
// sample once.
func TestListMidSizeTranscript(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".claude", "projects", adapters.ClaudeSlug("/w/mid"))
	os.MkdirAll(dir, 0o700)
	user := `{"type":"user","sessionId":"s","cwd":"/w/mid","timestamp":"2026-11-21T08:00:00Z","message":{"role":"user","content":"Port the parser"}}` + "\n"
	reply := `{"type":"assistant","sessionId":"s","cwd":"/w/mid","timestamp":"2026-11-21T08:00:01Z","message":{"role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("x", 2<<20) + `"}]}}` + "\n"
	body := strings.Repeat(user, 3000) + reply + strings.Repeat(user, 3000)
	if err := os.WriteFile(filepath.Join(dir, "s.jsonl"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	l, _ := adapters.ListerFor("claude")
	ss, err := l.ListSessions(storeEnv(home), "/w/mid")
	if err != nil || len(ss) != 1 || ss[0].CountEstimated || ss[0].MessageCount != 6001 {
		t.Fatalf("%v %+v", err, ss)
	}
}

func BenchmarkListFixtureStores(b *testing.B) {
	home, _ := filepath.Abs("../testdata/stores/home")
	env := storeEnv(home)
	for i := 0; i < b.N; i++ {
		for _, name := range adapters.ListerNames() {
			l, _ := adapters.ListerFor(name)
			l.ListSessions(env, "")
		}
	}
}
