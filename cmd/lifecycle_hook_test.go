package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// lifecycleEnv is an in-process hook environment whose clock the test
// moves (the lifecycle's statuses are functions of time).
type lifecycleEnv struct {
	e       *Env
	out     *bytes.Buffer
	now     time.Time
	project string
}

func newLifecycleEnv(t *testing.T) *lifecycleEnv {
	t.Helper()
	le := &lifecycleEnv{project: t.TempDir(), out: &bytes.Buffer{}, now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	home := t.TempDir()
	vars := map[string]string{"HOME": home, "CARRYOVER_HOME": filepath.Join(home, ".carryover")}
	le.e = &Env{Stdout: le.out, Stderr: &bytes.Buffer{}, Getenv: func(k string) string { return vars[k] },
		Now: func() time.Time { return le.now }}
	return le
}

// snap runs one hook event and returns its stdout.
func (le *lifecycleEnv) snap(tool, event string, payload map[string]any) string {
	le.out.Reset()
	payload["cwd"] = le.project
	b, _ := json.Marshal(payload)
	le.e.Stdin = bytes.NewReader(b)
	Snapshot(le.e, tool, event)
	return le.out.String()
}

func (le *lifecycleEnv) run(t *testing.T, args ...string) string {
	t.Helper()
	le.out.Reset()
	le.e.WorkDir = le.project
	if code := Main(append([]string{"carryover"}, args...), le.e); code != 0 {
		t.Fatalf("carryover %v exited %d: %s", args, code, le.e.Stderr)
	}
	return le.out.String()
}

// TestLifecycleAcrossSessions: session 1 (Claude Code) publishes HO-x;
// session 2 (Codex) receives it and history shows it consumed by Codex;
// session 3 starting while 2 works is told it was already resumed; a
// resumed session 2 does not get it twice; a decision and a pinned task
// reach the next injection; past expire_after only a one-line notice.
func TestLifecycleAcrossSessions(t *testing.T) {
	le := newLifecycleEnv(t)
	src, err := os.ReadFile("../testdata/adapters/claude/session-tools.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	tr := filepath.Join(t.TempDir(), "s1.jsonl")
	os.WriteFile(tr, src, 0o600)
	le.snap("claude", "Stop", map[string]any{"session_id": "4fbd56c9-cd10-4412-a9cc-58af839aaddf", "transcript_path": tr})
	const id = "HO-20261121-120000-4fbd56c9"
	b, _ := os.ReadFile(filepath.Join(le.project, ".carryover", "handoff.md"))
	if first, _, _ := strings.Cut(string(b), "\n"); !strings.HasSuffix(first, " · "+id) {
		t.Fatalf("header %q lacks %s", first, id)
	}

	le.now = le.now.Add(5 * time.Minute)
	got := le.snap("codex", "SessionStart", map[string]any{"session_id": "019a-codex-two", "source": "startup"})
	if !strings.Contains(got, "carryover · "+filepath.Base(le.project)+" · handoff "+id+" from claude 5m ago · Resuming: Add a retry helper") {
		t.Fatalf("codex start lacks the banner as first line:\n%s", got)
	}
	if strings.Contains(got, "systemMessage") {
		t.Error("codex got a systemMessage")
	}
	if h := le.run(t, "history"); !strings.Contains(h, id+"  consumed") || !strings.Contains(h, "received by codex session 019a-codex-t") {
		t.Fatalf("history does not show the handoff consumed by codex:\n%s", h)
	}
	var st StatusReport
	json.Unmarshal([]byte(le.run(t, "status", "--json")), &st)
	if len(st.Projects) != 1 || st.Projects[0].Lifecycle == nil || st.Projects[0].Lifecycle.Status != "consumed" || st.Projects[0].Lifecycle.ConsumedBy[0].Agent != "codex" {
		t.Fatalf("status --json lifecycle: %+v", st.Projects)
	}

	le.now = le.now.Add(3 * time.Minute)
	got = le.snap("claude", "SessionStart", map[string]any{"session_id": "third-session", "source": "startup"})
	if !strings.Contains(got, "already resumed by codex session 019a-cod 3m ago") {
		t.Fatalf("the parallel session is not told:\n%s", got)
	}
	if !strings.Contains(got, `"systemMessage":"carryover · `) {
		t.Errorf("claude got no systemMessage banner:\n%s", got)
	}

	if got := le.snap("codex", "SessionStart", map[string]any{"session_id": "019a-codex-two", "source": "resume"}); got != "" {
		t.Errorf("a resumed session got the handoff twice:\n%s", got)
	}

	le.run(t, "decide", "Use Postgres advisory locks, not Redis", "--why", "one service fewer")
	le.run(t, "task", "Finish the CSV importer")
	got = le.snap("claude", "SessionStart", map[string]any{"session_id": "fourth-session", "source": "startup"})
	for _, want := range []string{"Use Postgres advisory locks, not Redis (why: one service fewer)", "[pinned by the user", "Resuming: Finish the CSV importer"} {
		if !strings.Contains(got, want) {
			t.Errorf("next injection lacks %q:\n%s", want, got)
		}
	}

	le.now = le.now.Add(8 * 24 * time.Hour)
	got = le.snap("claude", "SessionStart", map[string]any{"session_id": "fifth-session", "source": "startup"})
	if !strings.Contains(got, "carryover: a handoff from 8d ago exists: carryover history show "+id) || strings.Contains(got, "## Task") {
		t.Fatalf("expired handoff injected whole or without the notice:\n%s", got)
	}
}
