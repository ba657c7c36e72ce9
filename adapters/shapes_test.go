package adapters

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/go-version"
)

// TestAiderShapes: --transcript reads the file it is given; the newest
// session with nothing readable (only /add, /drop) falls back to the latest
// with content; /ask and /copy-context arguments are requests in any
// language; a history without a start header is one session.
func TestAiderShapes(t *testing.T) {
	dir := filepath.Join("..", "testdata", "adapters", "aider", "0.86-shapes")
	hist := filepath.Join(dir, ".aider.chat.history.md")
	rows, err := aider{}.ReadStore(Hook{TranscriptPath: hist, Project: t.TempDir()}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	var prompts []string
	for _, r := range rows {
		if r.Kind == KindPrompt {
			prompts = append(prompts, r.Text)
		}
	}
	want := []string{"как устроен модуль оплаты?", "请检查一下缓存的失效逻辑"}
	if strings.Join(prompts, "|") != strings.Join(want, "|") {
		t.Errorf("prompts = %q, want %q (the empty last session must fall back to the one before)", prompts, want)
	}
	d, err := aiderLister{}.Describe(hist)
	if err != nil || !strings.HasPrefix(d.ID, "20251002T090000") {
		t.Errorf("Describe = %+v, %v; want the 09:00 session (the newest with content)", d, err)
	}
	all, _ := aiderLister{}.ListSessions(Env{WorkDir: dir, Getenv: func(string) string { return "" }}, "")
	if len(all) != 1 || all[0].ID != d.ID {
		t.Errorf("list --all = %+v; want the one session with content, found from the working directory", all)
	}
	loose := filepath.Join(dir, "no-header.aider.chat.history.md")
	rows, err = aider{}.ReadStore(Hook{TranscriptPath: loose, Project: t.TempDir()}, Env{})
	if err != nil || len(rows) == 0 {
		t.Fatalf("a history without a header yielded %d rows, %v", len(rows), err)
	}
}

// TestGeminiDocShape: the pre-0.39 document is described (id, preview,
// count) and refused with its position, never its content, when broken.
func TestGeminiDocShape(t *testing.T) {
	doc, _ := filepath.Glob(filepath.Join("..", "testdata", "adapters", "gemini", "pre-0.39-document", "*.json"))
	if len(doc) != 1 {
		t.Fatalf("fixture missing: %v", doc)
	}
	s, err := geminiLister{}.Describe(doc[0])
	if err != nil || s.ID != "4d2e1f00-0000-4000-8000-000000000003" || s.MessageCount != 2 || s.Preview == "" {
		t.Errorf("Describe = %+v, %v", s, err)
	}
	bad := filepath.Join(t.TempDir(), "session-x.json")
	os.WriteFile(bad, []byte(`{"sessionId":"s","messages":[{"id":"secret-text`), 0o600)
	_, err = gemini{}.ReadStore(Hook{TranscriptPath: bad}, Env{})
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("broken document: err = %v", err)
	}
}

// TestClaudeOldSubagentLayout: a 1.0.x session's top-level agent-*.jsonl
// files are found by the parent's sessionId; other sessions' are not.
func TestClaudeOldSubagentLayout(t *testing.T) {
	dir := t.TempDir()
	main := filepath.Join(dir, "aaa.jsonl")
	os.WriteFile(main, []byte(`{"sessionId":"aaa","type":"user"}`+"\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "agent-1.jsonl"), []byte(`{"parentUuid":null,"isSidechain":true,"sessionId":"aaa","type":"user"}`+"\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "agent-2.jsonl"), []byte(`{"sessionId": "bbb","type":"user"}`+"\n"), 0o600)
	ts := claude{}.Transcripts(Hook{TranscriptPath: main, SessionID: "aaa"}, Env{})
	if len(ts) != 2 || filepath.Base(ts[1].Path) != "agent-1.jsonl" || !ts[1].Sidechain {
		t.Errorf("Transcripts = %+v", ts)
	}
}

// TestDriftWarning: a transcript from a newer minor version than the
// newest known shape warns once, naming agent and version.
func TestDriftWarning(t *testing.T) {
	if w := DriftWarning("claude", []byte(`{"version":"2.1.300"}`)); w != "" {
		t.Errorf("a patch release warned: %q", w)
	}
	w := DriftWarning("claude", []byte(`{"type":"user","version":"2.3.0"}`))
	if !strings.Contains(w, "claude 2.3.0") || !strings.Contains(w, "update carryover") {
		t.Errorf("DriftWarning = %q", w)
	}
	if w := DriftWarning("codex", []byte(`{"payload":{"cli_version":"0.42.0"}}`)); w != "" {
		t.Errorf("an old version warned: %q", w)
	}
	hist := "# aider chat started at 2025-01-01 10:00:00\n\n> Aider v0.86.1\n\n# aider chat started at 2026-01-01 10:00:00\n\n> Aider v1.0.0\n"
	if w := DriftWarning("aider", []byte(hist)); !strings.Contains(w, "aider 1.0.0") {
		t.Errorf("aider drift = %q; want the newest session's version", w)
	}
	if w := DriftWarning("aider", []byte("> Aider v0.91.0\n")); w != "" {
		t.Errorf("an aider minor release warned: %q", w)
	}
}

// FuzzGeminiDocument: the document reader never panics.
func FuzzGeminiDocument(f *testing.F) {
	doc, _ := filepath.Glob(filepath.Join("..", "testdata", "adapters", "gemini", "pre-0.39-*", "*.json"))
	for _, p := range doc {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := parseGeminiDoc("checkpoint-f.json", b)
		if err == nil {
			for _, r := range geminiRewrite(d.Messages) {
				if r.Key == "" {
					t.Fatalf("row without a key: %+v", r)
				}
			}
		}
	})
}

// TestSurveyCountsUnknown: status's survey counts lines of unknown types
// (a future Codex payload, a new Claude line type) and non-JSON lines,
// and names a newer recorded version.
func TestSurveyCountsUnknown(t *testing.T) {
	codexFile := filepath.Join("..", "testdata", "adapters", "codex", "0.7x-events", "rollout-event-prompts.jsonl")
	sv := SurveySessions("codex", []string{codexFile})
	if sv.Sessions != 1 || sv.Unknown != 2 || sv.Failed != 0 || sv.Lines != 11 {
		t.Errorf("codex survey = %+v; want 11 lines, 2 unknown (a future payload and a future line type)", sv)
	}
	p := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(p, []byte(`{"type":"user","version":"3.0.1","message":{"role":"user","content":"hi there you"},"uuid":"u"}`+"\n{\"type\":\"hologram\"}\nnot json\n"), 0o600)
	sv = SurveySessions("claude", []string{p, filepath.Join(t.TempDir(), "gone.jsonl")})
	if sv.Unknown != 1 || sv.Failed != 1 || sv.Unread != 1 || len(sv.Drift) != 1 {
		t.Errorf("claude survey = %+v", sv)
	}
}

// TestVSCodeManualPath: list reads VS Code's own stores (chatSessions
// first, a transcript only for a session without one) and a chatSessions
// file given as --transcript is replayed.
func TestVSCodeManualPath(t *testing.T) {
	user, _ := filepath.Abs(filepath.Join("..", "testdata", "adapters", "vscode-copilot", "User"))
	// The portable layout is the simplest to point at the fixture.
	port := t.TempDir()
	os.MkdirAll(filepath.Join(port, "user-data"), 0o700)
	if err := os.Symlink(user, filepath.Join(port, "user-data", "User")); err != nil {
		t.Fatal(err)
	}
	ss, err := vscodeLister{}.ListSessions(Env{Getenv: func(k string) string {
		if k == "VSCODE_PORTABLE" {
			return port
		}
		return ""
	}}, "")
	if err != nil || len(ss) < 2 {
		t.Fatalf("ListSessions = %+v, %v; want the fixture's sessions", ss, err)
	}
	ids := map[string]int{}
	for _, s := range ss {
		ids[s.ID]++
		if s.Preview == "" {
			t.Errorf("session %s has no preview", s.ID)
		}
	}
	for id, n := range ids {
		if n > 1 {
			t.Errorf("session %s listed %d times", id, n)
		}
	}
	store, _ := filepath.Glob(filepath.Join(user, "workspaceStorage", "*", "chatSessions", "*.jsonl"))
	rows, err := vscode{}.ReadStore(Hook{TranscriptPath: store[0], SessionID: "x"}, Env{})
	if err != nil || len(rows) == 0 {
		t.Errorf("ReadStore(--transcript chatSessions file) = %d rows, %v", len(rows), err)
	}
}

// TestCursorManualPath: list reads ~/.cursor/projects/<slug>/agent-transcripts
// for a project (flat and nested layouts), never subagent files.
func TestCursorManualPath(t *testing.T) {
	home := t.TempDir()
	proj := "/home/ana/shop"
	b, err := os.ReadFile(filepath.Join("..", "testdata", "adapters", "cursor", "agent-transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, ".cursor", "projects", cursorSlug(proj), "agent-transcripts")
	for _, p := range []string{"c1.jsonl", "c2/c2.jsonl", "c2/subagents/s1.jsonl"} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o700)
		os.WriteFile(filepath.Join(dir, p), b, 0o600)
	}
	ss, err := cursorLister{}.ListSessions(Env{Home: home, Getenv: func(string) string { return "" }}, proj)
	if err != nil || len(ss) != 2 {
		t.Fatalf("ListSessions = %+v, %v; want c1 and c2", ss, err)
	}
	for _, s := range ss {
		if s.Project != proj || s.Preview == "" || (s.ID != "c1" && s.ID != "c2") {
			t.Errorf("session %+v", s)
		}
	}
}

// TestGeminiHeaderWithoutProjectHash: early 0.39 JSONL headers have no
// projectHash; Describe (list, --transcript) still finds the session.
func TestGeminiHeaderWithoutProjectHash(t *testing.T) {
	f, _ := filepath.Glob(filepath.Join("..", "testdata", "adapters", "gemini", "0.39-header-without-projecthash", "*.jsonl"))
	if len(f) != 1 {
		t.Fatal("fixture missing")
	}
	s, err := geminiLister{}.Describe(f[0])
	if err != nil || s.ID != "9c1d0000-0000-4000-8000-000000000004" || s.Preview == "" {
		t.Errorf("Describe = %+v, %v", s, err)
	}
	b, _ := os.ReadFile(f[0])
	if got := SniffTranscript(b); got != "gemini" {
		t.Errorf("SniffTranscript = %q, want gemini", got)
	}
}

// TestCodexSubagentRollouts: a rollout a thread spawned is read with its
// parent (Transcripts) and listed too, marked as its subagent.
func TestCodexSubagentRollouts(t *testing.T) {
	day := filepath.Join(t.TempDir(), "sessions", "2026", "01", "02")
	os.MkdirAll(day, 0o700)
	parent := filepath.Join(day, "rollout-2026-01-02T10-00-00-aaaa1111-0000-4000-8000-000000000001.jsonl")
	child := filepath.Join(day, "rollout-2026-01-02T10-05-00-bbbb2222-0000-4000-8000-000000000002.jsonl")
	os.WriteFile(parent, []byte(`{"timestamp":"2026-01-02T10:00:00Z","type":"session_meta","payload":{"id":"aaaa1111-0000-4000-8000-000000000001","cwd":"/w"}}`+"\n"), 0o600)
	os.WriteFile(child, []byte(`{"timestamp":"2026-01-02T10:05:00Z","type":"session_meta","payload":{"id":"bbbb2222-0000-4000-8000-000000000002","cwd":"/w","source":{"subagent":{"thread_spawn":{"parent_thread_id":"aaaa1111-0000-4000-8000-000000000001","depth":1}}}}}`+"\n"), 0o600)
	ts := codex{}.Transcripts(Hook{TranscriptPath: parent, SessionID: "aaaa1111-0000-4000-8000-000000000001"}, Env{})
	if len(ts) != 2 || ts[1].Path != child || !ts[1].Sidechain {
		t.Errorf("Transcripts = %+v; want the parent and its spawned rollout", ts)
	}
	if !codexIsSubagent(child) || codexIsSubagent(parent) {
		t.Error("codexIsSubagent is wrong")
	}
	// A review subagent (a named helper, no parent thread) and 0.169's
	// thread_source are subagents too.
	review := filepath.Join(day, "rollout-2026-01-02T10-06-00-cccc3333-0000-4000-8000-000000000003.jsonl")
	os.WriteFile(review, []byte(`{"timestamp":"2026-01-02T10:06:00Z","type":"session_meta","payload":{"id":"cccc3333-0000-4000-8000-000000000003","cwd":"/w","source":{"subagent":"review"}}}`+"\n"), 0o600)
	ts169 := filepath.Join(day, "rollout-2026-01-02T10-07-00-dddd4444-0000-4000-8000-000000000004.jsonl")
	os.WriteFile(ts169, []byte(`{"timestamp":"2026-01-02T10:07:00Z","type":"session_meta","payload":{"id":"dddd4444-0000-4000-8000-000000000004","cwd":"/w","source":"exec","thread_source":"subagent"}}`+"\n"), 0o600)
	ss, err := codexLister{}.ListSessions(Env{Home: t.TempDir(), Getenv: func(k string) string {
		if k == "CODEX_HOME" {
			return filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(day))))
		}
		return ""
	}}, "")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range ss {
		got[s.ID] = s.Preview
	}
	for id, want := range map[string]string{
		"aaaa1111-0000-4000-8000-000000000001": "",
		"bbbb2222-0000-4000-8000-000000000002": "subagent of aaaa1111",
		"cccc3333-0000-4000-8000-000000000003": "subagent (review)",
		"dddd4444-0000-4000-8000-000000000004": "subagent",
	} {
		p, ok := got[id]
		if !ok || !strings.HasPrefix(p, want) || (want == "" && strings.HasPrefix(p, "subagent")) {
			t.Errorf("session %s listed=%v preview %q, want prefix %q", id, ok, p, want)
		}
	}
}

// codexIsSubagent reports whether a subagent wrote the rollout.
func codexIsSubagent(path string) bool {
	sub, _, _ := codexSubagentOf(path)
	return sub
}

// TestDriftEveryAgent: each agent says in its descriptor where its sessions record the agent's version
// (Format.Version), so a new agent warns about a newer format with no edit to a shared list: every agent whose
// pattern is set finds a version in one of its fixtures at least, and the same fixture from a next major version
// warns. An agent whose fixtures record its newest version (in a session file, not a hook payload nor a SQLite store's
// column) must set one.
func TestDriftEveryAgent(t *testing.T) {
	for _, a := range All {
		var files []string
		filepath.WalkDir(filepath.Join("..", "testdata", "adapters", a.Name), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.HasSuffix(p, ".golden") && d.Name() != "README.md" && d.Name() != "hooks.payloads" &&
				filepath.Ext(p) != ".sql" {
				files = append(files, p)
			}
			return nil
		})
		found := false
		for _, p := range files {
			b, _ := os.ReadFile(p)
			b = b[:min(len(b), 64<<10)]
			if a.Format.Version == "" {
				if a.Format.Newest != "" && bytes.Contains(b, []byte(a.Format.Newest)) {
					t.Errorf("%s: %s records %s but Format.Version does not say where", a.Name, p, a.Format.Newest)
				}
				continue
			}
			v := recordedVersion(a.Format.Version, b)
			if v == "" {
				continue
			}
			found = true
			next := strconv.Itoa(must(version.NewVersion(a.Format.Newest)).Segments()[0]+1) + ".0.0"
			if w := DriftWarning(a.Name, bytes.ReplaceAll(b, []byte(v), []byte(next))); !strings.Contains(w, a.Name+" "+next) {
				t.Errorf("%s: %s from version %s: drift warning %q", a.Name, p, next, w)
			}
		}
		if a.Format.Version != "" && !found {
			t.Errorf("%s: Format.Version %q finds no version in its fixtures", a.Name, a.Format.Version)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
