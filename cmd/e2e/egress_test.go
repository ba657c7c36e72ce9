package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryover/carryover/publish/redact/redacttest"
)

// egressTranscript is a Claude transcript in which one secret-bearing line
// is the task, a failing command and its error, a decision and the next
// step — so every egress would carry it if redaction missed it.
func egressTranscript(sid, text string) string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	lines := []string{
		`{"type":"user","uuid":"u1","sessionId":"` + sid + `","timestamp":"2026-11-21T08:00:00Z","promptSource":"sdk","message":{"role":"user","content":` + q("Deploy the service with this config: "+text) + `}}`,
		`{"type":"assistant","uuid":"a1","sessionId":"` + sid + `","timestamp":"2026-11-21T08:00:01Z","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":` + q("deploy --config '"+text+"'") + `}}]}}`,
		`{"type":"user","uuid":"u2","sessionId":"` + sid + `","timestamp":"2026-11-21T08:00:02Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":` + q("Exit code 1\nerror: rejected "+text) + `}]}}`,
		`{"type":"assistant","uuid":"a2","sessionId":"` + sid + `","timestamp":"2026-11-21T08:00:03Z","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":` + q("We decided to use the staging key because "+text+". Next I will retry with "+text+".") + `}]}}`,
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestSecretEgress runs every line of the seeded secret corpus through the
// hook path and the manual path and counts leaks at each egress: handoff.md
// (project and global), the SessionStart injection, AGENTS.md/CLAUDE.md,
// carryover.log, the ledger file, RESUME.md, the handoff stdout and
// session.json. Target: 0. A control run with `redact = false` proves the
// secrets do reach those egresses when redaction is off.
func TestSecretEgress(t *testing.T) {
	lines, err := redacttest.SecretLines("../../testdata/redact/secrets.txt")
	if err != nil {
		t.Fatal(err)
	}
	leaks := map[string]int{}
	check := func(egress, content string, secrets []string) {
		for _, s := range secrets {
			w := min(12, len(s))
			for i := 0; i+w <= len(s); i++ {
				if j := strings.Index(content, s[i:i+w]); j >= 0 {
					if os.Getenv("EGRESS_DEBUG") != "" {
						t.Logf("%s: %q", egress, content[max(0, j-80):min(len(content), j+60)])
					}
					leaks[egress]++
					return
				}
			}
		}
	}
	run := func(t *testing.T, l redacttest.SecretLine, redactOn bool) map[string]string {
		root := t.TempDir()
		home, project := filepath.Join(root, "home"), filepath.Join(root, "proj")
		os.MkdirAll(project, 0o755)
		os.MkdirAll(filepath.Join(home, ".carryover"), 0o700)
		if !redactOn {
			os.WriteFile(filepath.Join(home, ".carryover", "config.toml"), []byte("redact = false\n"), 0o600)
		}
		sid := fmt.Sprintf("egress-%d", l.Line)
		tr := filepath.Join(root, sid+".jsonl")
		os.WriteFile(tr, []byte(egressTranscript(sid, l.Text)), 0o600)
		env := []string{"HOME=" + home, "CARRYOVER_HOME=" + filepath.Join(home, ".carryover"), "CLAUDE_PROJECT_DIR=" + project, "PATH=" + os.Getenv("PATH")}
		runHook(t, env, "claude", "Stop", map[string]any{"session_id": sid, "transcript_path": tr, "cwd": project})
		inj := runHook(t, env, "claude", "SessionStart", map[string]any{"session_id": sid + "-next", "transcript_path": tr + ".next", "cwd": project, "source": "startup"})
		out := map[string]string{"injection": inj.Stdout}
		hout, _, _ := runCarryover(t, env, project, "handoff", "--transcript", tr, "--source", "claude", "--project", project, "--stdout", "--no-clipboard")
		out["handoff stdout"] = hout
		runCarryover(t, env, project, "capture", "--transcript", tr, "--source", "claude", "--project", project)
		for name, p := range map[string]string{
			"handoff.md": filepath.Join(project, ".carryover", "handoff.md"), "global handoff.md": filepath.Join(home, ".carryover", "handoff.md"),
			"AGENTS.md": filepath.Join(project, "AGENTS.md"), "CLAUDE.md": filepath.Join(project, "CLAUDE.md"),
			"carryover.log": filepath.Join(home, ".carryover", "carryover.log"), "RESUME.md": filepath.Join(project, ".carryover", "RESUME.md"),
			"session.json": filepath.Join(project, ".carryover", "session.json"), "ledger": filepath.Join(home, ".carryover", "ledger.sqlite"),
		} {
			b, _ := os.ReadFile(p)
			if name == "ledger" {
				wal, _ := os.ReadFile(p + "-wal")
				b = append(b, wal...)
			}
			out[name] = string(b)
		}
		return out
	}
	// Control: without redaction the secret reaches the handoff and the injection.
	ctl := run(t, lines[0], false)
	if !strings.Contains(ctl["handoff.md"], lines[0].Secrets[0]) || !strings.Contains(strings.ReplaceAll(ctl["injection"], `\u0026`, "&"), lines[0].Secrets[0][:8]) {
		t.Fatalf("control run: the secret did not reach handoff.md/injection with redact = false, so this test would prove nothing")
	}
	for _, l := range lines {
		for egress, content := range run(t, l, true) {
			check(egress, content, l.Secrets)
		}
	}
	total := 0
	for egress, n := range leaks {
		t.Errorf("%s leaked %d of %d secret lines", egress, n, len(lines))
		total += n
	}
	t.Logf("%d secret lines × 10 egresses: %d leaks", len(lines), total)
}
