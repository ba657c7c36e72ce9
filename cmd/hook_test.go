package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/publish"
)

// hookEnv is an Env for in-process hook runs in a temp HOME.
func hookEnv(t *testing.T, project string) (*Env, *bytes.Buffer) {
	t.Helper()
	home := t.TempDir()
	vars := map[string]string{"HOME": home, "CARRYOVER_HOME": filepath.Join(home, ".carryover"), "CLAUDE_PROJECT_DIR": project}
	out := &bytes.Buffer{}
	clock := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	return &Env{Stdout: out, Stderr: &bytes.Buffer{}, Getenv: func(k string) string { return vars[k] },
		Now: func() time.Time { clock = clock.Add(time.Minute); return clock }}, out
}

func runSnap(e *Env, event string, payload map[string]any) {
	b, _ := json.Marshal(payload)
	e.Stdin = bytes.NewReader(b)
	Snapshot(e, "claude", event)
}

// TestToolEventsDeferPublish: a tool event stores rows without rewriting
// handoff.md; the next non-tool event publishes what is pending, including
// a new session's SessionStart before it injects.
func TestToolEventsDeferPublish(t *testing.T) {
	project := t.TempDir()
	e, out := hookEnv(t, project)
	src, err := os.ReadFile("../testdata/adapters/claude/session-tools.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	tr := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(tr, []byte(strings.Join(lines[:5], "")), 0o600)
	p := map[string]any{"session_id": "s1", "transcript_path": tr, "cwd": project}
	runSnap(e, "Stop", p)
	handoff := filepath.Join(project, ".carryover", "handoff.md")
	first, err := os.ReadFile(handoff)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(tr, src, 0o600) // the rest of the session, with the failing command
	runSnap(e, "PostToolUse", p)
	if now, _ := os.ReadFile(handoff); !bytes.Equal(now, first) {
		t.Fatal("a tool event rewrote handoff.md")
	}
	out.Reset()
	runSnap(e, "SessionStart", map[string]any{"session_id": "s2", "transcript_path": tr + ".new", "cwd": project, "source": "startup"})
	after, _ := os.ReadFile(handoff)
	if bytes.Equal(after, first) || !strings.Contains(string(after), "cannot access") {
		t.Fatalf("pending rows were not published before the next session started:\n%s", after)
	}
	if !strings.Contains(out.String(), "cannot access") {
		t.Fatalf("the injection is not the up-to-date handoff: %s", out.String())
	}
}

// TestGlobalCopyRestored: a handoff whose body did not change is not
// rewritten, but a missing global copy (~/.carryover/handoff.md) is written.
func TestGlobalCopyRestored(t *testing.T) {
	project := t.TempDir()
	e, _ := hookEnv(t, project)
	tr := filepath.Join(t.TempDir(), "s.jsonl")
	src, err := os.ReadFile("../testdata/adapters/claude/session-tools.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(tr, src, 0o600)
	p := map[string]any{"session_id": "s1", "transcript_path": tr, "cwd": project}
	runSnap(e, "Stop", p)
	global := filepath.Join(e.Home(), "handoff.md")
	want, err := os.ReadFile(global)
	if err != nil {
		t.Fatal(err)
	}
	if local, _ := os.ReadFile(filepath.Join(project, ".carryover", "handoff.md")); !bytes.Equal(local, want) {
		t.Fatal("global and project copies differ")
	}
	// A new carryover home (the old ledger deleted) that kept the record of
	// published handoffs: the re-ingest renders the same body, so
	// handoff.md stays as is, and the global copy is back.
	e2, _ := hookEnv(t, project)
	os.MkdirAll(filepath.Join(e2.Home(), "published"), 0o700)
	side := publish.SidecarPath(e.Home(), project)
	b, _ := os.ReadFile(side)
	os.WriteFile(publish.SidecarPath(e2.Home(), project), b, 0o600)
	runSnap(e2, "Stop", p)
	if local, _ := os.ReadFile(filepath.Join(project, ".carryover", "handoff.md")); !bytes.Equal(local, want) {
		t.Fatal("an unchanged handoff was rewritten")
	}
	if got, err := os.ReadFile(filepath.Join(e2.Home(), "handoff.md")); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("global copy not restored: %v\n%s", err, got)
	}
	// A home with no record of that file: it is not carryover's as far as
	// this home knows, so it is published again (same body), not kept.
	e3, _ := hookEnv(t, project)
	runSnap(e3, "Stop", p)
	local, _ := os.ReadFile(filepath.Join(project, ".carryover", "handoff.md"))
	_, lb, _ := strings.Cut(string(local), "\n")
	_, wb, _ := strings.Cut(string(want), "\n")
	if lb != wb || publish.CheckHandoff(local, e3.Home(), project, nil) != "" {
		t.Fatalf("not re-published (recorded in the new home) with the same body:\n%s", local)
	}
}
