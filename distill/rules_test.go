package distill_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
)

// TestRules runs one golden per distill rule: testdata/distill/rules/*.txtar.
// Each archive holds
//
//	rows     the session, one row a line: "kind[ attr=value]*: text" with
//	         \n for a newline in the text. Kinds: prompt, text, compact,
//	         call, result, error, usage, refused, interrupted, harness. Attributes: id (call id), tool,
//	         path, exit, session (a new session of the project from this
//	         row on). A call's text is its command for tool=Bash, else its
//	         input (an edit's new text, a plan's JSON).
//	want     the rendered handoff.md (rewritten by -update)
//	present  lines that must appear in handoff.md (checked even with -update)
//	absent   lines that must not (outside the quoted last words: those
//	         are the agent's, verbatim)
//	evidence "Section | rule words | row numbers": the handoff has a line
//	         in Section chosen by a rule whose name holds the words, drawn
//	         from exactly those rows (their 1-based line numbers in rows)
//
// The archive's comment says what the rule is and why the case is tricky.
func TestRules(t *testing.T) {
	files, _ := filepath.Glob("../testdata/distill/rules/*.txtar")
	if len(files) == 0 {
		t.Fatal("no rule goldens")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(f)
			if err != nil {
				t.Fatal(err)
			}
			parts := map[string]string{}
			for _, af := range ar.Files {
				parts[af.Name] = string(af.Data)
			}
			rows := parseRuleRows(t, parts["rows"])
			got := renderRule(rows)
			if again := renderRule(rows); again != got {
				t.Fatal("not deterministic")
			}
			if n := strings.Count(got, "\n"); n > publish.MaxLines || len(got) > publish.MaxChars {
				t.Errorf("%d lines, %d chars: over the caps", n, len(got))
			}
			for _, l := range nonEmpty(parts["present"]) {
				if !strings.Contains(got, l) {
					t.Errorf("missing %q in:\n%s", l, got)
				}
			}
			unquoted := dropQuoted(got)
			for _, l := range nonEmpty(parts["absent"]) {
				if strings.Contains(unquoted, l) {
					t.Errorf("must not contain %q:\n%s", l, got)
				}
			}
			checkEvidence(t, distill.Distill(rows, distill.Options{Project: "/p"}), parts["evidence"])
			if *update {
				for i := range ar.Files {
					if ar.Files[i].Name == "want" {
						ar.Files[i].Data = []byte(got)
					}
				}
				if _, ok := parts["want"]; !ok {
					ar.Files = append(ar.Files, txtar.File{Name: "want", Data: []byte(got)})
				}
				os.WriteFile(f, txtar.Format(ar), 0o644)
				return
			}
			if parts["want"] != got {
				t.Errorf("handoff differs from %s (run with -update and review):\n%s", f, got)
			}
		})
	}
}

// dropQuoted removes the quoted lines ("> …") of a handoff.
func dropQuoted(md string) string {
	var b strings.Builder
	for _, l := range strings.Split(md, "\n") {
		if !strings.HasPrefix(l, "> ") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// checkEvidence asserts the evidence lines of a rule golden.
func checkEvidence(t *testing.T, h distill.Handoff, spec string) {
	t.Helper()
	for _, l := range nonEmpty(spec) {
		p := strings.Split(l, "|")
		if len(p) != 3 {
			t.Fatalf("evidence line %q: want Section | rule | rows", l)
		}
		sec, rule, want := strings.TrimSpace(p[0]), strings.TrimSpace(p[1]), strings.TrimSpace(p[2])
		found := false
		var seen []string
		for _, e := range h.Evidence {
			var seqs []string
			for _, r := range e.Refs {
				seqs = append(seqs, strconv.FormatInt(r.Seq, 10))
			}
			got := strings.Join(seqs, ",")
			seen = append(seen, e.Section+" | "+e.Rule+" | "+got)
			if e.Section == sec && strings.Contains(e.Rule, rule) && got == want {
				found = true
			}
		}
		if !found {
			t.Errorf("no evidence %q; have:\n%s", l, strings.Join(seen, "\n"))
		}
	}
}

func renderRule(rows []ledger.Row) string {
	h := distill.Distill(rows, distill.Options{Project: "/p"})
	return publish.Render(h, publish.RenderOptions{Now: now, Mode: "brief", Session: "rule"})
}

func nonEmpty(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

func parseRuleRows(t *testing.T, src string) []ledger.Row {
	t.Helper()
	var out []ledger.Row
	sid := int64(1)
	at := now.Add(-time.Hour)
	for n, line := range nonEmpty(src) {
		head, text, _ := strings.Cut(line, ": ")
		head = strings.TrimSuffix(head, ":")
		f := strings.Fields(head)
		if len(f) == 0 {
			t.Fatalf("rows line %d: no kind", n+1)
		}
		r := adapters.Row{Text: strings.NewReplacer(`\n`, "\n", `\t`, "\t").Replace(text)}
		tool := "claude"
		for _, a := range f[1:] {
			k, v, _ := strings.Cut(a, "=")
			switch k {
			case "id":
				r.CallID = v
			case "tool":
				r.ToolName = v
			case "path":
				r.FilePath = v
			case "exit":
				x, _ := strconv.Atoi(v)
				r.ExitCode = &x
			case "session":
				sid, _ = strconv.ParseInt(v, 10, 64)
			case "agent":
				tool = v
			default:
				t.Fatalf("rows line %d: unknown attribute %q", n+1, k)
			}
		}
		switch f[0] {
		case "prompt":
			r.Kind, r.Role = adapters.KindPrompt, "user"
		case "text":
			r.Kind, r.Role = adapters.KindText, "assistant"
		case "compact":
			r.Kind, r.Role = adapters.KindCompaction, "system"
		case "usage":
			r.Kind, r.Role = adapters.KindUsage, "assistant"
		case "call":
			r.Kind, r.Role = adapters.KindToolCall, "assistant"
			if r.ToolName == "Bash" || r.ToolName == "shell" || r.ToolName == "run_shell_command" || r.ToolName == "run_terminal_cmd" {
				r.Command, r.Text = r.Text, ""
			}
		case "result":
			r.Kind, r.Role = adapters.KindToolResult, "tool"
		case "error":
			r.Kind, r.Role = adapters.KindError, "tool"
		case "refused", "interrupted":
			// The adapters' stop kinds (adapters.KindRefused,
			// KindInterrupted): role tool with a call id, else user.
			r.Kind, r.Role = adapters.Kind(f[0]), "tool"
			if r.CallID == "" {
				r.Role = "user"
			}
		case "harness":
			r.Kind, r.Role = adapters.Kind("harness"), "user"
		case "queued":
			r.Kind, r.Role = adapters.KindQueued, "user"
		default:
			t.Fatalf("rows line %d: unknown kind %q", n+1, f[0])
		}
		at = at.Add(time.Minute)
		r.Time = at
		out = append(out, ledger.Row{Row: r, Tool: tool, SessionID: sid, Seq: int64(len(out) + 1)})
	}
	return out
}
