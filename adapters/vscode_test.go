package adapters_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryover/carryover/adapters"
)

const (
	vscodeFixtures = fixtureDir + "/vscode-copilot"
	vscodeWS       = "workspaceStorage/2f4f3a6c1d9b8e7a6c5b4a3928171615"
	vscodeDryRun   = "6d2b8f0e-4c1a-4e7b-9f3d-8a5c2e1b0d97"
	vscodeEdge     = "3e7a9c11-5b2d-4f60-9a8e-7d1c0b2a4f33"
	vscodeFlat     = "0c9d8e7f-1a2b-4c3d-8e9f-0a1b2c3d4e5f"
)

func vscodeAdapters(t testing.TB) (adapters.LineParser, adapters.StoreReader) {
	t.Helper()
	lp, ok1 := adapters.VSCode.(adapters.LineParser)
	sr, ok2 := adapters.VSCode.(adapters.StoreReader)
	if !ok1 || !ok2 {
		t.Fatal("vscode-copilot must be both a LineParser (transcript) and a StoreReader (chatSessions)")
	}
	return lp, sr
}

// vscodeHome is a temp home whose ~/.config/Code/User is the fixture User dir.
func vscodeHome(t *testing.T) (string, adapters.Env) {
	t.Helper()
	home := t.TempDir()
	user, err := filepath.Abs(filepath.Join(vscodeFixtures, "User"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".config", "Code"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(user, filepath.Join(home, ".config", "Code", "User")); err != nil {
		t.Fatal(err)
	}
	return home, mapEnv(home)
}

func fixtureTranscript(t *testing.T, root, id string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(root, vscodeWS, "GitHub.copilot-chat", "transcripts", id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVSCodeParseHook(t *testing.T) {
	const sid = vscodeDryRun
	uri := "vscode-chat-session://local/" + base64.RawURLEncoding.EncodeToString([]byte(sid))
	tests := []struct {
		name, event, payload string
		want                 adapters.Hook
	}{
		{"documented camelCase common fields", "SessionStart",
			`{"timestamp":"2026-09-03T08:15:00.000Z","cwd":"/p","sessionId":"` + sid + `","hookEventName":"SessionStart","transcript_path":"/t/` + sid + `.jsonl","source":"new"}`,
			adapters.Hook{Tool: "vscode-copilot", Event: "SessionStart", SessionID: sid, Cwd: "/p", TranscriptPath: "/t/" + sid + ".jsonl", Source: "startup"}},
		{"later snake_case fields, null transcript", "",
			`{"hook_event_name":"Stop","session_id":"` + sid + `","cwd":"/p","transcript_path":null,"stop_hook_active":false}`,
			adapters.Hook{Tool: "vscode-copilot", Event: "Stop", SessionID: sid, Cwd: "/p"}},
		{"session resource URI is decoded", "UserPromptSubmit",
			`{"sessionId":"` + uri + `","prompt":"hello world","cwd":"/p"}`,
			adapters.Hook{Tool: "vscode-copilot", Event: "UserPromptSubmit", SessionID: sid, Cwd: "/p", Prompt: "hello world"}},
		{"padded base64url URI", "Stop",
			`{"sessionId":"vscode-chat-session://local/` + base64.URLEncoding.EncodeToString([]byte("abc1")) + `"}`,
			adapters.Hook{Tool: "vscode-copilot", Event: "Stop", SessionID: "abc1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := adapters.VSCode.ParseHook(tc.event, []byte(tc.payload), adapters.Env{})
			if err != nil {
				t.Fatal(err)
			}
			if !equalJSON(h, tc.want) {
				t.Errorf("got %+v\nwant %+v", h, tc.want)
			}
		})
	}
	if _, err := adapters.VSCode.ParseHook("Stop", []byte("null"), adapters.Env{}); err == nil {
		t.Error("null payload accepted")
	}
}

// TestVSCodeStoreGolden replays each chatSessions fixture (found through
// the hook's transcript_path) and compares with store-<id>.golden.
func TestVSCodeStoreGolden(t *testing.T) {
	_, sr := vscodeAdapters(t)
	for _, id := range []string{vscodeDryRun, vscodeEdge, vscodeFlat} {
		t.Run(id, func(t *testing.T) {
			h := adapters.Hook{SessionID: id, TranscriptPath: fixtureTranscript(t, filepath.Join(vscodeFixtures, "User"), id)}
			rows, err := sr.ReadStore(h, adapters.Env{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) == 0 {
				t.Fatal("no rows")
			}
			again, _ := sr.ReadStore(h, adapters.Env{})
			if !equalJSON(rows, again) {
				t.Fatal("reading the same store twice gave different rows")
			}
			seen := map[string]bool{}
			for i, r := range rows {
				if r.Key == "" || seen[r.Key] {
					t.Errorf("row %d: empty or duplicate key %q", i, r.Key)
				}
				seen[r.Key] = true
				if r.Kind == adapters.KindToolCall && r.ToolName == "" {
					t.Errorf("row %d: tool call without a name", i)
				}
			}
			golden(t, filepath.Join(vscodeFixtures, "store-"+id+".golden"), rows)
		})
	}
}

func findRows(rows []adapters.Row, f func(adapters.Row) bool) []adapters.Row {
	var out []adapters.Row
	for _, r := range rows {
		if f(r) {
			out = append(out, r)
		}
	}
	return out
}

// TestVSCodeReplayQuirks checks the hand-made edge-case log: a compacted
// kind:0 first line, push with truncation index, two objects on one line,
// junk and unknown kinds, a half-written last line, re-listed tool calls,
// multi-file edits, failed and cancelled requests, sub-agent children and
// carryover's own handoff in a hook part.
func TestVSCodeReplayQuirks(t *testing.T) {
	_, sr := vscodeAdapters(t)
	h := adapters.Hook{SessionID: vscodeEdge, TranscriptPath: fixtureTranscript(t, filepath.Join(vscodeFixtures, "User"), vscodeEdge)}
	rows, err := sr.ReadStore(h, adapters.Env{})
	if err != nil {
		t.Fatal(err)
	}
	kind := func(k adapters.Kind) func(adapters.Row) bool {
		return func(r adapters.Row) bool { return r.Kind == k }
	}
	var prompts []string
	for _, r := range findRows(rows, kind(adapters.KindPrompt)) {
		prompts = append(prompts, r.Text)
	}
	if got := strings.Join(prompts, "|"); got != "Rename sync to mirror everywhere|apply the patch and run the tests|what failed?|never mind" {
		t.Errorf("prompts = %q (the unsent draft in inputState must not be one)", got)
	}
	files := map[string]string{}
	for _, r := range findRows(rows, kind(adapters.KindToolCall)) {
		if r.FilePath != "" {
			if _, dup := files[r.FilePath]; dup {
				t.Errorf("file %s recorded twice", r.FilePath)
			}
			files[r.FilePath] = r.Text
		}
	}
	for f, want := range map[string]string{
		"/home/dev/proj/cmd/sync.go":        "mirror",                // multi_replace (its textEditGroup is not repeated)
		"/home/dev/proj/cmd/root.go":        "TODO: drop alias",      // multi_replace, second file
		"/home/dev/proj/cmd/mirror.go":      "new line",              // apply_patch
		"/home/dev/proj/cmd/mirror_test.go": "FIXME: cover dry-run",  // apply_patch, added file
		"/home/dev/proj/docs/README.md":     "TODO: document mirror", // edit-mode textEditGroup
	} {
		if !strings.Contains(files[f], want) {
			t.Errorf("file %s: text %q lacks %q", f, files[f], want)
		}
	}
	if _, ok := files["/home/dev/proj/cmd/other.go"]; ok {
		t.Error("a codeblockUri that is not an edit was taken as an edit")
	}
	patch := findRows(rows, func(r adapters.Row) bool { return r.ToolName == "apply_patch" })
	if len(patch) != 2 || patch[0].CallID != "call_patch" {
		t.Errorf("apply_patch rows = %+v, want 2 (the pending copy truncated away)", patch)
	}
	term := findRows(rows, func(r adapters.Row) bool { return r.CallID == "call_term" })
	if len(term) != 2 || term[0].Command != "go test ./cmd/..." || term[1].Kind != adapters.KindError || term[1].ExitCode == nil || *term[1].ExitCode != 2 {
		t.Errorf("terminal rows = %+v, want one call and one error with exit 2 (re-listed call deduplicated)", term)
	}
	inj := findRows(rows, kind(adapters.KindInjection))
	if len(inj) != 1 || !strings.HasPrefix(inj[0].Text, "# [CARRYOVER] Last updated 2026-09-03T08:00:00Z from claude") {
		t.Errorf("injection rows = %+v", inj)
	}
	side := findRows(rows, func(r adapters.Row) bool { return r.Sidechain })
	if len(side) != 2 || side[0].CallID != "call_grep" {
		t.Errorf("sidechain rows = %+v, want the sub-agent's grep call and result", side)
	}
	errs := findRows(rows, func(r adapters.Row) bool { return r.Kind == adapters.KindError && r.ToolName == "model API" })
	if len(errs) != 1 || !strings.Contains(errs[0].Text, "rate limit") {
		t.Errorf("request errors = %+v, want only the failed request (not the cancelled one)", errs)
	}
	text := findRows(rows, kind(adapters.KindText))
	var texts []string
	for _, r := range text {
		texts = append(texts, r.Text)
	}
	if got := strings.Join(texts, "|"); !strings.Contains(got, "Renaming now.") || !strings.Contains(got, "Patch applied; the build fails.") {
		t.Errorf("assistant text = %q: consecutive markdown parts must merge; both objects of a line must apply", got)
	}
}

// TestVSCodeCompactedStoreSameRows: VS Code rewrites the log as one kind:0
// line after 1024 entries; the rewritten file must give the same rows.
func TestVSCodeCompactedStoreSameRows(t *testing.T) {
	_, sr := vscodeAdapters(t)
	read := func(root string) []adapters.Row {
		ws, _ := filepath.Abs(root)
		h := adapters.Hook{SessionID: vscodeDryRun, TranscriptPath: filepath.Join(ws, "GitHub.copilot-chat", "transcripts", vscodeDryRun+".jsonl")}
		rows, err := sr.ReadStore(h, adapters.Env{})
		if err != nil || len(rows) == 0 {
			t.Fatalf("%s: %d rows, %v", root, len(rows), err)
		}
		return rows
	}
	log := read(filepath.Join(vscodeFixtures, "User", vscodeWS))
	compacted := read(filepath.Join(vscodeFixtures, "compacted", "workspaceStorage", "9c9c9c9c9c9c9c9c9c9c9c9c9c9c9c9c"))
	if !equalJSON(log, compacted) {
		t.Error("the compacted store gives other rows than the mutation log")
	}
}

// TestVSCodeOneSourcePerSession: with a chatSessions file the transcript is
// not tailed; without one it is (MaybeMissing). Found by session id under
// ~/.config/Code/User when the hook has no transcript_path.
func TestVSCodeOneSourcePerSession(t *testing.T) {
	lp, sr := vscodeAdapters(t)
	home, env := vscodeHome(t)
	h := adapters.Hook{SessionID: vscodeDryRun}
	if ts := lp.Transcripts(h, env); len(ts) != 0 {
		t.Errorf("transcripts = %+v although chatSessions has the session", ts)
	}
	rows, err := sr.ReadStore(h, env)
	if err != nil || len(rows) == 0 {
		t.Fatalf("store found by scan: %d rows, %v", len(rows), err)
	}
	// A session known only from its transcript (newer builds without chatSessions).
	ws := filepath.Join(home, ".vscode-server", "data", "User", "workspaceStorage", "abc", "GitHub.copilot-chat", "transcripts")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	only := filepath.Join(ws, "7f000000-0000-4000-8000-000000000001.jsonl")
	if err := os.WriteFile(only, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := lp.Transcripts(adapters.Hook{SessionID: "7f000000-0000-4000-8000-000000000001"}, env)
	if len(ts) != 1 || ts[0].Path != only || !ts[0].MaybeMissing {
		t.Errorf("transcript-only session: %+v", ts)
	}
	if rows, err := sr.ReadStore(adapters.Hook{SessionID: "7f000000-0000-4000-8000-000000000001"}, env); err != nil || rows != nil {
		t.Errorf("no store must be no rows and no error, got %d rows, %v", len(rows), err)
	}
	// The hook's transcript_path names the workspace even before the file exists.
	tp := filepath.Join(home, "ws", "h1", "GitHub.copilot-chat", "transcripts", "new-session.jsonl")
	ts = lp.Transcripts(adapters.Hook{SessionID: "new-session", TranscriptPath: tp}, env)
	if len(ts) != 1 || ts[0].Path != tp || !ts[0].MaybeMissing {
		t.Errorf("new session: %+v", ts)
	}
	if ts := lp.Transcripts(adapters.Hook{SessionID: "../x"}, env); len(ts) != 0 {
		t.Errorf("path-like session id: %+v", ts)
	}
}

// TestVSCodeKeysShared: the transcript and chatSessions name the same
// prompt and tool calls with the same keys, so a session read from both
// (transcript first, chatSessions once it appears) keeps one copy.
func TestVSCodeKeysShared(t *testing.T) {
	lp, sr := vscodeAdapters(t)
	tr := ParseFile(t, lp, filepath.Join(vscodeFixtures, "transcript-dry-run.jsonl"))
	h := adapters.Hook{SessionID: vscodeDryRun, TranscriptPath: fixtureTranscript(t, filepath.Join(vscodeFixtures, "User"), vscodeDryRun)}
	st, err := sr.ReadStore(h, adapters.Env{})
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]adapters.Row{}
	for _, r := range st {
		keys[r.Key] = r
	}
	for _, r := range tr {
		if r.Kind == adapters.KindText {
			continue
		}
		s, ok := keys[r.Key]
		if !ok {
			t.Errorf("transcript row %q (%s) has no chatSessions twin", r.Key, r.Kind)
			continue
		}
		if s.Kind != r.Kind || s.CallID != r.CallID {
			t.Errorf("key %q: store %s/%s, transcript %s/%s", r.Key, s.Kind, s.CallID, r.Kind, r.CallID)
		}
	}
	// Hook tool_use_id carries a __vscode-<n> suffix; rows carry the bare id.
	for _, r := range st {
		if strings.Contains(r.CallID, "__vscode-") {
			t.Errorf("row %q keeps the __vscode suffix", r.Key)
		}
	}
}

// TestVSCodeStoreAnywhere: a "Chat: Export Chat…" file (no sessionId, any
// name) and a chatSessions mutation log copied out of its chatSessions/
// folder (under a .json name) are recognised by their content, not their
// path: sniffed, described and read.
func TestVSCodeStoreAnywhere(t *testing.T) {
	_, sr := vscodeAdapters(t)
	lister, _ := adapters.ListerFor("vscode-copilot")
	for name, wantID := range map[string]string{
		"Copilot chat about CSV importer.json": "export-",
		"attached-to-bug-report.json":          vscodeEdge,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(vscodeFixtures, "exports", name)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := adapters.SniffTranscript(b[:min(len(b), 64<<10)]); got != "vscode-copilot" {
				t.Errorf("sniffed as %q", got)
			}
			d, err := lister.Describe(path)
			if err != nil || !strings.HasPrefix(d.ID, wantID) || d.Preview == "" {
				t.Fatalf("Describe = %+v, %v; want id %s…", d, err, wantID)
			}
			rows, err := sr.ReadStore(adapters.Hook{SessionID: d.ID, TranscriptPath: path}, adapters.Env{})
			if err != nil || len(rows) == 0 {
				t.Fatalf("ReadStore: %d rows, %v", len(rows), err)
			}
		})
	}
	// Its first bytes decide; Copilot CLI's events and Claude's lines are not stores.
	for _, head := range []string{`{"type":"session.start","data":{}}`, `{"requests":[]}`, `[{"role":"user"}]`} {
		if adapters.SniffTranscript([]byte(head)) == "vscode-copilot" {
			t.Errorf("%s sniffed as a VS Code store", head)
		}
	}
}
