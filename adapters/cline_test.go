package adapters_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/carryover/carryover/adapters"
)

// clineStore lays the 3.0 fixture out as Cline does:
// <data>/sessions/<id>/<id>.messages.json beside its <id>.json manifest.
func clineStore(t *testing.T) (env adapters.Env, doc string) {
	t.Helper()
	home := t.TempDir()
	b, err := os.ReadFile(filepath.Join(fixtureDir, "cline", "3.0", "session.messages.json"))
	if err != nil {
		t.Fatal(err)
	}
	id := "1772615520004_k7x2q"
	dir := filepath.Join(home, ".cline", "data", "sessions", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	doc = filepath.Join(dir, id+".messages.json")
	manifest := `{"version":1,"session_id":"` + id + `","source":"cli","pid":4242,"status":"running","cwd":"/srv/meter/sub","workspace_root":"/srv/meter","prompt":"x"}`
	if err := os.WriteFile(doc, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, id+".json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return adapters.Env{Home: home, Getenv: func(string) string { return "" }}, doc
}

// TestClineLister: the session is listed for its workspace root (from the
// manifest), the preview is the unwrapped prompt, and the manifest itself
// is not taken for a session.
func TestClineLister(t *testing.T) {
	env, doc := clineStore(t)
	l, _ := adapters.ListerFor("cline")
	ss, err := l.ListSessions(env, "/srv/meter")
	if err != nil || len(ss) != 1 {
		t.Fatalf("ListSessions = %v, %v; want one session", ss, err)
	}
	s := ss[0]
	if s.ID != "1772615520004_k7x2q" || s.Path != doc || s.Project != "/srv/meter" || s.Preview != "Make the tariff parser accept semicolons as separators" || s.MessageCount != 9 || s.LastActive.IsZero() {
		t.Errorf("session = %+v", s)
	}
	if ss, _ := l.ListSessions(env, "/srv/other"); len(ss) != 0 {
		t.Errorf("listed for another project: %v", ss)
	}
	if _, err := l.Describe(filepath.Join(filepath.Dir(doc), "1772615520004_k7x2q.json")); err == nil {
		t.Error("the manifest was described as a session")
	}
	a, _ := adapters.ByName("cline")
	head, _ := os.ReadFile(doc)
	if !a.Sniff(head) {
		t.Error("Sniff does not recognise a Cline session document")
	}
}

// TestClineRewrite: Cline rewrites the document whole; rows read before a
// rewrite keep their keys after it (the ledger upserts by key), and the hook
// path finds the document from the session id alone.
func TestClineRewrite(t *testing.T) {
	env, doc := clineStore(t)
	sr := adapters.Cline.(adapters.StoreReader)
	h, err := adapters.Cline.ParseHook("TaskComplete", []byte(`{"taskId":"conv_1","sessionContext":{"rootSessionId":"1772615520004_k7x2q"},"workspaceRoots":["/srv/meter"]}`), env)
	if err != nil || h.SessionID != "1772615520004_k7x2q" || h.Cwd != "/srv/meter" {
		t.Fatalf("ParseHook = %+v, %v", h, err)
	}
	before, err := sr.ReadStore(h, env)
	if err != nil || len(before) == 0 {
		t.Fatalf("ReadStore = %d rows, %v", len(before), err)
	}
	b, _ := os.ReadFile(doc)
	// a rewrite: the same messages re-indented, one more appended
	b = bytes.Replace(b, []byte("\n  ]\n}"), []byte(`,{"id":"msg_zz","role":"assistant","ts":1772615550000,"content":[{"type":"text","text":"Two callers."}]}]}`), 1)
	b = bytes.ReplaceAll(b, []byte("\n     "), []byte(" "))
	if err := os.WriteFile(doc, b, 0o644); err != nil {
		t.Fatal(err)
	}
	after, err := sr.ReadStore(h, env)
	if err != nil || len(after) != len(before)+1 {
		t.Fatalf("after the rewrite: %d rows (before %d), %v", len(after), len(before), err)
	}
	for i := range before {
		if before[i].Key != after[i].Key || before[i].Text != after[i].Text {
			t.Fatalf("row %d changed across the rewrite: %q → %q", i, before[i].Key, after[i].Key)
		}
	}
	if _, err := sr.ReadStore(adapters.Hook{SessionID: "../x"}, env); err == nil {
		t.Error("a session id with a path in it was read")
	}
}
