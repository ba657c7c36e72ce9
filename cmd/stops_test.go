package cmd

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/resume"
)

// transcriptHandoff is handoff.md as the hook path would write it from a
// transcript read with `carryover handoff --transcript FILE --source TOOL`.
func transcriptHandoff(t *testing.T, path, tool string) string {
	t.Helper()
	home, proj := t.TempDir(), t.TempDir()
	e, out, errb := manualEnv(t, map[string]string{"CARRYOVER_HOME": home}, func(string) error { return nil })
	if rc := Main([]string{"carryover", "handoff", "--transcript", path, "--source", tool, "--project", proj,
		"--format", "json", "--stdout", "--no-clipboard"}, e); rc != 0 {
		t.Fatalf("%s: exit %d: %s", path, rc, errb)
	}
	var h resume.Handoff
	if err := json.Unmarshal(out.Bytes(), &h); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s, err := l.Session(tool, h.Session)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := l.Rows(s.ID, 4000)
	d := distill.Distill(rows, distill.Options{Project: proj})
	return publish.Render(d, publish.RenderOptions{Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Session: h.Session})
}

// mdSection is the body of the handoff section whose title starts with title.
func mdSection(md, title string) string {
	var b strings.Builder
	in := false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "## ") {
			in = strings.HasPrefix(l, title)
			continue
		}
		if in {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// TestStopsLandAsStops: in every agent's own format (fixtures of ours,
// testdata/distill/stops), a refused tool call and an interruption are
// listed under "Stopped by the user", never as a failed approach, an open
// "unresolved" question or a next action to redo.
func TestStopsLandAsStops(t *testing.T) {
	for _, c := range []struct {
		tool, file         string
		refused, interrupt []string // commands (or their heads) the user stopped
	}{
		{"claude", "claude.jsonl", []string{"DROP TABLE coupons_legacy"}, []string{"pg_dump shop"}},
		{"codex", "codex.jsonl", []string{"git push --force origin release-notes"}, []string{"npm run build:docs"}},
		{"gemini", "gemini.jsonl", []string{"node-pools delete pool-b"}, []string{"node-pools list"}},
		{"vscode-copilot", "vscode-copilot.json", nil, []string{"npx openapi-generator-cli generate"}},
		{"copilot-cli", "copilot-cli.jsonl", []string{"./scripts/refund --all", "delete from invoices"}, []string{"./scripts/refund --dry-run"}},
	} {
		t.Run(c.tool, func(t *testing.T) {
			md := transcriptHandoff(t, "../testdata/distill/stops/"+c.file, c.tool)
			stopped := mdSection(md, "## Stopped by the user")
			failed := mdSection(md, "## Failed approaches")
			questions := mdSection(md, "## Open questions")
			next := mdSection(md, "## Next action")
			for _, cmd := range c.refused {
				if !strings.Contains(stopped, "the user refused: ") || !strings.Contains(stopped, cmd) {
					t.Errorf("refused %q is not under Stopped by the user", cmd)
				}
			}
			for _, cmd := range c.interrupt {
				if !strings.Contains(stopped, "the user interrupted: ") || !strings.Contains(stopped, cmd) {
					t.Errorf("interrupted %q is not under Stopped by the user", cmd)
				}
			}
			for _, cmd := range append(append([]string(nil), c.refused...), c.interrupt...) {
				if strings.Contains(failed, cmd) || strings.Contains(questions, cmd) {
					t.Errorf("%q is listed as a failure or an unresolved question", cmd)
				}
				if strings.Contains(next, cmd) && !strings.Contains(strings.ToLower(next), "ask") {
					t.Errorf("the next action redoes %q without asking: %s", cmd, next)
				}
			}
			if strings.Contains(next, "still-failing") {
				t.Errorf("the next action retries a stop as a failure: %s", next)
			}
			if t.Failed() {
				t.Logf("handoff.md:\n%s", md)
			}
		})
	}
}

// TestResearchSessionsKeepSubstance: a research or question-and-answer
// session that edits nothing (fixtures of ours, testdata/distill/research:
// Gemini CLI and Codex, two wordings) hands over its source, its open
// question and its next step.
func TestResearchSessionsKeepSubstance(t *testing.T) {
	for _, c := range []struct {
		tool, file, ref, question, next string
	}{
		{"gemini", "gemini-research.jsonl", "https://example.org/notes/append-only-logs.html", "should transcripts outlive the session", "draft the \"Transcript layout\" section"},
		{"codex", "codex-answer.jsonl", "https://www.postgresql.org/docs/17/release-17.html", "offer 17 in the eu-west region", "run the migration suite against a postgres:17 container"},
	} {
		t.Run(c.tool, func(t *testing.T) {
			md := transcriptHandoff(t, "../testdata/distill/research/"+c.file, c.tool)
			if !strings.Contains(mdSection(md, "## References"), c.ref) {
				t.Errorf("the reference %q is lost", c.ref)
			}
			if !strings.Contains(mdSection(md, "## Open questions"), c.question) {
				t.Errorf("the open question %q is lost", c.question)
			}
			if !strings.Contains(mdSection(md, "## Next action"), c.next) {
				t.Errorf("the next step %q is not the next action", c.next)
			}
			if t.Failed() {
				t.Logf("handoff.md:\n%s", md)
			}
		})
	}
}
