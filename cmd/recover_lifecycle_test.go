package cmd

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
)

// TestDamagedLedgerKeepsLifecycle: the ledger holding a project's
// handoff log, a decision recorded with `carryover decide` and a pinned
// task is damaged; the next hook moves it aside and rebuilds it, and the
// next session still gets the banner, the decision and the pinned task,
// and history, decide --list and task still show them. "header": the
// damaged file's tables are salvaged; "whole-file": nothing of it is
// readable, and the project's verified handoff.md gives them back.
func TestDamagedLedgerKeepsLifecycle(t *testing.T) {
	for _, damage := range []string{"header", "whole-file"} {
		t.Run(damage, func(t *testing.T) {
			le := newLifecycleEnv(t)
			src, err := os.ReadFile("../testdata/adapters/claude/session-tools.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			tr := filepath.Join(t.TempDir(), "s1.jsonl")
			os.WriteFile(tr, src, 0o600)
			le.snap("claude", "Stop", map[string]any{"session_id": "4fbd56c9-cd10-4412-a9cc-58af839aaddf", "transcript_path": tr})
			const id = "HO-20261121-120000-4fbd56c9"
			le.run(t, "decide", "Use Postgres advisory locks, not Redis", "--why", "one service fewer")
			le.run(t, "task", "Finish the CSV importer")
			le.now = le.now.Add(5 * time.Minute)
			if got := le.snap("codex", "SessionStart", map[string]any{"session_id": "019a-codex-two", "source": "startup"}); !strings.Contains(got, "handoff "+id) {
				t.Fatalf("codex did not receive %s before the damage:\n%s", id, got)
			}

			path := filepath.Join(le.e.Home(), ledger.FileName)
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			n := 100
			if damage == "whole-file" {
				n = int(fi.Size())
				os.Remove(path + "-wal")
			}
			b := make([]byte, n)
			rand.Read(b)
			f, _ := os.OpenFile(path, os.O_WRONLY, 0)
			f.WriteAt(b, 0)
			f.Close()

			le.now = le.now.Add(5 * time.Minute)
			got := le.snap("gemini", "SessionStart", map[string]any{"session_id": "gemini-three", "source": "startup"})
			if moved, _ := filepath.Glob(path + ".corrupt-*"); len(moved) == 0 {
				t.Fatal("the damaged ledger was not moved aside: the test proves nothing")
			}
			for _, want := range []string{"handoff " + id + " from claude 10m ago · Resuming: Finish the CSV importer", "[pinned by the user",
				"Use Postgres advisory locks, not Redis (why: one service fewer)"} {
				if !strings.Contains(got, want) {
					t.Errorf("the session after the rebuild lacks %q:\n%s", want, got)
				}
			}
			if damage == "header" && !strings.Contains(got, "already resumed by codex session 019a-cod 5m ago") {
				t.Errorf("the receipt was not salvaged: the parallel session is not told:\n%s", got)
			}
			if h := le.run(t, "history"); !strings.Contains(h, id) || strings.Contains(h, "unrecorded") {
				t.Errorf("history after the rebuild:\n%s", h)
			}
			if d := le.run(t, "decide", "--list"); !strings.Contains(d, "Use Postgres advisory locks, not Redis") || strings.Contains(d, "extracted") && !strings.Contains(d, "user") {
				t.Errorf("decide --list after the rebuild:\n%s", d)
			}
			if tk := le.run(t, "task"); !strings.Contains(tk, "Finish the CSV importer") {
				t.Errorf("task after the rebuild:\n%s", tk)
			}
		})
	}
}
