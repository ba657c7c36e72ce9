package resume

import (
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/resume")

const goldenDir = "../../testdata/resume"

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join(goldenDir, name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test ./publish/resume -update)", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from the golden file; run go test ./publish/resume -update and review the diff", name)
	}
}

// TestGoldenPerTarget renders the fixture session for each target budget.
func TestGoldenPerTarget(t *testing.T) {
	cases := []struct {
		name string
		o    Options
	}{
		{"claude", Options{Target: "claude"}},
		{"universal", Options{Target: "universal"}},
		{"cursor", Options{Target: "cursor"}},
		{"tokens-4000", Options{Tokens: 4000}},
		{"tokens-1200", Options{Tokens: 1200}},
		{"tokens-500", Options{Tokens: 500}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustBuild(t, fixtureSession(), c.o)
			if r.Tokens > r.Budget {
				t.Fatalf("estimate %d over budget %d", r.Tokens, r.Budget)
			}
			var stats strings.Builder
			for _, l := range r.Layers {
				stats.WriteString(l.Name + "=" + l.Status + " ")
			}
			golden(t, "prompt."+c.name+".md", []byte("<!-- budget "+itoa(r.Budget)+" tokens, estimate "+itoa(r.Tokens)+"; "+strings.TrimSpace(stats.String())+" -->\n"+r.Text))
		})
	}
	// Budgets that make layers truncate, in priority order.
	r := mustBuild(t, fixtureSession(), Options{Tokens: 1200})
	st := map[string]string{}
	for _, l := range r.Layers {
		st[l.Name] = l.Status
	}
	if st["task"] != Included || st["recent"] == Included || st["older"] != Dropped {
		t.Errorf("1200 tokens: layer statuses %v", st)
	}
}

func TestStructuredGolden(t *testing.T) {
	h := Structured(fixtureSession())
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"yaml", "json"} {
		b, err := h.Encode(f)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "handoff."+f, b)
		// Round trip: parse, validate, encode again.
		l, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: parse back: %v", f, err)
		}
		if l.Handoff == nil {
			t.Fatalf("%s: parsed as a session", f)
		}
		b2, _ := l.Handoff.Encode(f)
		if string(b2) != string(b) {
			t.Errorf("%s does not round-trip:\n%s\nvs\n%s", f, b, b2)
		}
	}
}

func TestSessionJSONRoundTrip(t *testing.T) {
	s := fixtureSession()
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	l, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if l.Session == nil {
		t.Fatal("parsed as a handoff")
	}
	b2, _ := l.Session.Marshal()
	if string(b) != string(b2) {
		t.Error("session.json does not round-trip")
	}
	a := mustBuild(t, s, Options{Target: "cursor"})
	c := mustBuild(t, *l.Session, Options{Target: "cursor"})
	if a.Text != c.Text {
		t.Error("prompt from the re-read session.json differs")
	}
}

func TestValidation(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string // field names reported
	}{
		{"missing goal and now", "version: \"1.0\"\nstatus: partial\n", []string{"goal", "now"}},
		{"bad enums", "version: \"1.0\"\ngoal: g\nnow: n\nstatus: done\noutcome: WIN\ntokens_pct: 140\n", []string{"status", "outcome", "tokens_pct"}},
		{"bad version and date", "version: \"2.0\"\ndate: 21/11/2026\ngoal: g\nnow: n\n", []string{"version", "date"}},
		{"session bad role", `{"version":"1.0","source":"claude","task":{"description":"x"},"conversation":{"messages":[{"role":"robot","content":"hi"}]},"filesChanged":[{"path":"a","changeType":"renamed"}]}`,
			[]string{"conversation.messages[0].role", "filesChanged[0].changeType"}},
		{"session no source", `{"version":"1.0","task":{"description":"x"}}`, []string{"source"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.in))
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want a ValidationError", err)
			}
			var got []string
			for _, f := range ve.Fields {
				got = append(got, f.Field)
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("fields %v, want %v (%v)", got, c.want, err)
			}
		})
	}
	if _, err := Parse([]byte("just some text\n")); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("plain text: %v", err)
	}
	if _, err := Parse([]byte(`{"goal": "secret-value-123", "now": 5}`)); err == nil || strings.Contains(err.Error(), "secret-value-123") {
		t.Errorf("decode error must not quote content: %v", err)
	}
}

// TestBudgetProperty: for random sessions and budgets the prompt never
// exceeds the budget, and P1 (goal and resume-now) is always present.
func TestBudgetProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("retry backoff jitter pytest assertion failed import config handler cache 重试 テスト {\"a\":1} -> :: 42 0x1f ✓ λ")
	text := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(" \n"[r.IntN(8)/7])
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		return b.String()
	}
	for i := 0; i < 200; i++ {
		s := Session{Version: Version, Source: "codex", SessionID: "s" + itoa(i), CapturedAt: time.Unix(1.8e9, 0)}
		s.Task.Description = "GOALMARK " + text(r.IntN(400))
		s.Task.InProgress = text(r.IntN(50))
		for j := r.IntN(30); j > 0; j-- {
			s.Task.Completed = append(s.Task.Completed, text(r.IntN(20)+1))
			s.Decisions = append(s.Decisions, text(r.IntN(40)+1))
			s.Blockers = append(s.Blockers, text(r.IntN(40)+1))
		}
		for j := r.IntN(20); j > 0; j-- {
			s.FilesChanged = append(s.FilesChanged, FileChange{Path: "f" + itoa(j), ChangeType: "modified", Diff: text(r.IntN(800))})
		}
		for j := r.IntN(300); j > 0; j-- {
			s.Conversation.Messages = append(s.Conversation.Messages, Message{Role: []string{"user", "assistant", "tool"}[j%3], Content: text(r.IntN(300))})
		}
		budget := 250 + r.IntN(20000)
		res, err := Build(s, Options{Tokens: budget})
		var be *BudgetError
		if errors.As(err, &be) {
			continue // too small even for the frame: reported, not overrun
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := Estimate(res.Text); got > budget {
			t.Fatalf("case %d: %d tokens over budget %d", i, got, budget)
		}
		if !strings.Contains(res.Text, "GOALMARK") || !strings.Contains(res.Text, "## Resume Now") {
			t.Fatalf("case %d (budget %d): P1 missing", i, budget)
		}
		if res.Layers[0].Status == Dropped {
			t.Fatalf("case %d: P1 dropped", i)
		}
		for _, l := range res.Layers {
			if l.Priority <= 3 && l.Status == Dropped && l.Items > 0 {
				// allowed only when nothing at all fits after P1
				if Estimate(res.Text)+60 < budget {
					t.Fatalf("case %d: P%d %s dropped with %d tokens to spare", i, l.Priority, l.Name, budget-Estimate(res.Text))
				}
			}
		}
	}
}

func TestBudgetTooSmall(t *testing.T) {
	_, err := Build(fixtureSession(), Options{Tokens: 50})
	var be *BudgetError
	if !errors.As(err, &be) {
		t.Fatalf("err = %v", err)
	}
}

// TestBudgets: 60 % of each window. Gemini CLI's is 1,048,576 (2^20, as its usage
// rows report it), no longer the rounded 1,000,000 a second copy held.
func TestBudgets(t *testing.T) {
	for target, want := range map[string]int{"claude": 120000, "codex": 120000, "gemini": 629145, "copilot-cli": 76800, "cursor": 38400, "universal": 19200, "claude-code": 120000, "": 19200} {
		if got, err := Budget(target, 0); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", target, got, err, want)
		}
	}
	if _, err := Budget("notepad", 0); err == nil {
		t.Error("unknown target accepted")
	}
	if got, _ := Budget("notepad", 777); got != 777 {
		t.Error("--tokens must win")
	}
}

func TestStructuredFit(t *testing.T) {
	h := Structured(fixtureSession())
	trimmed, err := h.Fit("yaml", 200)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := h.Encode("yaml")
	if !trimmed || Estimate(string(b)) > 200 || h.Goal == "" || h.Now == "" {
		t.Errorf("fit: trimmed=%v tokens=%d goal=%q now=%q", trimmed, Estimate(string(b)), h.Goal, h.Now)
	}
}
