package limits

import (
	"github.com/carryover/carryover/publish/config"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
)

func agent(t *testing.T, name string) *adapters.Agent {
	t.Helper()
	a, ok := adapters.ByName(name)
	if !ok {
		t.Fatalf("no agent %s", name)
	}
	return a
}

// TestLevelPerAgent is the threshold math with each agent's window: the
// one its usage lines report (Codex's model_context_window, Copilot's
// maxPromptTokens), else its descriptor's.
func TestLevelPerAgent(t *testing.T) {
	ip := func(n int) *int { return &n }
	tests := []struct {
		agent     string
		used, max int64 // max 0: the usage lines give none
		cfg       config.Walls
		want      distill.ContextLevel
		pct       int
	}{
		{"claude", 0, 200_000, config.Walls{}, distill.ContextOK, 0},
		{"claude", 129_999, 200_000, config.Walls{}, distill.ContextOK, 64},
		{"claude", 130_000, 200_000, config.Walls{}, distill.ContextEarlyWarn, 65},
		{"claude", 150_000, 200_000, config.Walls{}, distill.ContextWarn, 75},
		{"claude", 169_999, 200_000, config.Walls{}, distill.ContextWarn, 84},
		{"claude", 170_000, 200_000, config.Walls{}, distill.ContextCritical, 85},
		{"claude", 250_000, 200_000, config.Walls{}, distill.ContextCritical, 100}, // a 1M-context model past 200k: capped
		{"claude", 170_000, 0, config.Walls{}, distill.ContextCritical, 85},        // the descriptor's 200k
		{"codex", 219_640, 258_400, config.Walls{}, distill.ContextCritical, 85},   // 0.169's reported window for gpt-5.5
		{"codex", 219_639, 258_400, config.Walls{}, distill.ContextWarn, 84},
		{"codex", 170_000, 0, config.Walls{}, distill.ContextCritical, 85},
		{"gemini", 786_432, 1_048_576, config.Walls{}, distill.ContextWarn, 75},
		{"gemini", 681_575, 0, config.Walls{}, distill.ContextEarlyWarn, 65},
		{"copilot-cli", 108_800, 128_000, config.Walls{}, distill.ContextCritical, 85},
		{"copilot-cli", 83_200, 0, config.Walls{}, distill.ContextEarlyWarn, 65},
		{"cursor", 48_000, 0, config.Walls{}, distill.ContextWarn, 75},
		{"claude", 100_000, 200_000, config.Walls{Context: config.ContextConfig{EarlyWarn: ip(40), Warn: ip(45), Critical: ip(50)}}, distill.ContextCritical, 50},
		{"claude", 90_000, 200_000, config.Walls{Context: config.ContextConfig{EarlyWarn: ip(40), Warn: ip(45), Critical: ip(50)}}, distill.ContextWarn, 45},
		// thresholds that do not rise fall back to 65/75/85
		{"claude", 100_000, 200_000, config.Walls{Context: config.ContextConfig{Warn: ip(90), Critical: ip(50)}}, distill.ContextOK, 50},
		{"windsurf", 1_000_000, 0, config.Walls{}, distill.ContextOK, 0}, // no window known
	}
	for _, tt := range tests {
		lvl, pct := Level(ledger.Session{TokensUsed: tt.used, TokensMax: tt.max}, agent(t, tt.agent), tt.cfg)
		if lvl != tt.want || pct != tt.pct {
			t.Errorf("Level(%s, %d/%d) = %s %d%%; want %s %d%%", tt.agent, tt.used, tt.max, lvl, pct, tt.want, tt.pct)
		}
	}
}

func TestConfigProblems(t *testing.T) {
	ip := func(n int) *int { return &n }
	fp := func(f float64) *float64 { return &f }
	c := config.Walls{Limits: config.LimitsConfig{WarnPercent: fp(120), MaxRestarts: ip(-1)}, Context: config.ContextConfig{Warn: ip(95)}}
	if p := c.Problems(); len(p) != 3 {
		t.Errorf("Problems() = %q; want 3", p)
	}
	if c.WarnPercent() != config.DefaultWarnPercent || c.MaxRestarts() != config.DefaultMaxRestarts {
		t.Errorf("defaults not used for bad values")
	}
}

// rig is a ledger with one Claude session of a project.
type rig struct {
	l    *ledger.Ledger
	proj *publish.Project
	sid  int64
	now  time.Time
}

func newRig(t *testing.T, tokens int64) *rig {
	t.Helper()
	l, err := ledger.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	root := t.TempDir()
	now := time.Date(2026, 11, 23, 14, 0, 0, 0, time.UTC)
	ref := ledger.SessionRef{Tool: "claude", NativeID: "sess-1", Project: root}
	rows := []adapters.Row{
		{Key: "u1", Time: now.Add(-5 * time.Minute), Role: "user", Kind: adapters.KindPrompt, Text: "Port the billing job to the new queue"},
		{Key: "a1", Time: now.Add(-4 * time.Minute), Role: "assistant", Kind: adapters.KindText, Text: "Moved the producer; next I will move the consumer."},
		{Key: "a1#u", Time: now.Add(-4 * time.Minute), Role: "assistant", Kind: adapters.KindUsage, TokensUsed: tokens, TokensMax: 200_000},
	}
	if _, err := l.Write(ledger.Batch{Session: ref, Rows: rows}, now); err != nil {
		t.Fatal(err)
	}
	s, err := l.Session("claude", "sess-1")
	if err != nil {
		t.Fatal(err)
	}
	p := &publish.Project{Root: root, Home: t.TempDir(), Now: now, Repo: func() *distill.Repo { return nil }}
	return &rig{l: l, proj: p, sid: s.ID, now: now}
}

func (r *rig) act(t *testing.T, event string, found ...ledger.FoundLimit) Outcome {
	a := agent(t, "claude")
	return Act(Options{Ledger: r.l, Project: r.proj, Agent: a, Class: a.Class(event), Hook: adapters.Hook{Tool: "claude", Event: event, SessionID: "sess-1"},
		SessionID: r.sid, Found: found, Config: config.Walls{}, Loc: time.UTC, Handoff: func() (distill.Handoff, error) {
			st, _, err := distill.Refresh(r.l, r.proj.Root, r.now)
			if err != nil {
				return distill.Handoff{}, err
			}
			return st.Handoff(distill.Options{Project: r.proj.Root}), nil
		}})
}

func TestActOnLimit(t *testing.T) {
	r := newRig(t, 20_000)
	reset := time.Date(2026, 11, 23, 14, 20, 0, 0, time.UTC)
	f := ledger.FoundLimit{Key: "a2", NativeID: "sess-1", Limit: adapters.Limit{Kind: adapters.LimitUsage, Reached: true, ResetsAt: reset}, At: r.now}
	o := r.act(t, "Stop", f)
	want := "carryover: usage limit reached (resets 14:20). Resume prompt ready: .carryover/RESUME.md — paste it into another agent, or run: carryover handoff"
	if o.Notice != want {
		t.Errorf("Notice = %q; want %q", o.Notice, want)
	}
	b, err := os.ReadFile(ResumePath(r.proj.Root))
	if err != nil {
		t.Fatalf("RESUME.md: %v", err)
	}
	for _, s := range []string{"Port the billing job to the new queue", "next I will move the consumer"} {
		if !strings.Contains(string(b), s) {
			t.Errorf("RESUME.md lacks %q:\n%s", s, b)
		}
	}
	// The same signal read again (a re-read transcript) is not news.
	if o := r.act(t, "Stop", f); o.Notice != "" {
		t.Errorf("second Notice = %q; want none", o.Notice)
	}
	ev, err := LastLimits(r.l, "")
	if err != nil || len(ev) != 1 || ev[0].Tool != "claude" || !ev[0].Limit.ResetsAt.Equal(reset) {
		t.Errorf("LastLimits = %+v, %v", ev, err)
	}
	line := StoppedLine(r.l, r.proj.Root, 0, r.now.Add(time.Minute), time.UTC)
	if line != "Note: the previous Claude Code session stopped at a usage limit (it resets 14:20); continue its task from this handoff." {
		t.Errorf("StoppedLine = %q", line)
	}
	// A session that worked after the limit (the user switched to Codex) makes its handoff that work's: no note; the
	// session starting (current) is no such session, whatever it has written.
	later := ledger.Batch{Session: ledger.SessionRef{Tool: "codex", NativeID: "sess-2", Project: r.proj.Root},
		Rows: []adapters.Row{{Key: "c1", Time: r.now.Add(10 * time.Minute), Role: "assistant", Kind: adapters.KindText, Text: "Moved the consumer."}}}
	if _, err := r.l.Write(later, r.now.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	s2, _ := r.l.Session("codex", "sess-2")
	if line := StoppedLine(r.l, r.proj.Root, s2.ID, r.now.Add(11*time.Minute), time.UTC); line == "" {
		t.Error("the starting session's own rows silenced the note")
	}
	if line := StoppedLine(r.l, r.proj.Root, 0, r.now.Add(11*time.Minute), time.UTC); line != "" {
		t.Errorf("a session that worked after the limit still gets %q", line)
	}
}

func TestActApproaching(t *testing.T) {
	r := newRig(t, 20_000)
	near := func(pct float64, key string) ledger.FoundLimit {
		return ledger.FoundLimit{Key: key, NativeID: "sess-1", Limit: adapters.Limit{Kind: adapters.LimitUsage, UsedPercent: pct}, At: r.now}
	}
	if o := r.act(t, "Stop", near(85, "k1")); o.Notice != "" || o.Resume != "" {
		t.Errorf("85 %%: %+v; want nothing", o)
	}
	o := r.act(t, "Stop", near(93, "k2"))
	if !strings.HasPrefix(o.Notice, "carryover: usage limit 93 % used.") || o.Resume == "" {
		t.Errorf("93 %%: %+v", o)
	}
	if o := r.act(t, "Stop", near(97, "k3")); o.Notice != "" {
		t.Errorf("told twice: %q", o.Notice)
	}
	if line := StoppedLine(r.l, r.proj.Root, 0, r.now, time.UTC); line != "" {
		t.Errorf("a warning is no stop: %q", line)
	}
}

func TestActContext(t *testing.T) {
	r := newRig(t, 152_000) // 76 %: WARN
	o := r.act(t, "PreToolUse")
	if o.Level != distill.ContextWarn || o.AgentNote != "" {
		t.Errorf("PreToolUse: %+v; want WARN and no note (its output does not reach the model)", o)
	}
	o = r.act(t, "PostToolUse")
	if o.AgentNote != "carryover: context 76 % full — finish the current step; carryover has saved the handoff (.carryover/handoff.md)." {
		t.Errorf("AgentNote = %q", o.AgentNote)
	}
	if o := r.act(t, "PostToolUse"); o.AgentNote != "" {
		t.Errorf("told twice: %q", o.AgentNote)
	}
	out, stderr := Output(agent(t, "claude"), "PostToolUse", Outcome{AgentNote: "n", Notice: "m"}, false)
	if string(out) != `{"hookSpecificOutput":{"additionalContext":"n","hookEventName":"PostToolUse"},"systemMessage":"m"}`+"\n" || stderr != "" {
		t.Errorf("Output = %s / %q", out, stderr)
	}
	if out, stderr := Output(agent(t, "codex"), "Stop", Outcome{Notice: "m"}, false); out != nil || stderr != "m\n" {
		t.Errorf("codex Output = %s / %q; want the notice on stderr", out, stderr)
	}
	// CRITICAL: RESUME.md once.
	c := newRig(t, 171_000)
	if o := c.act(t, "PostToolUse"); o.Level != distill.ContextCritical || o.Resume == "" {
		t.Errorf("CRITICAL: %+v", o)
	}
	if lvl, _ := ContextOf(c.l, c.sid, agent(t, "claude"), config.Walls{}); lvl != distill.ContextCritical {
		t.Errorf("ContextOf = %s; want CRITICAL", lvl)
	}
}

// TestActCaughtUp: a limit the catch-up read from another agent's session
// is recorded for that session, and not announced in this one.
func TestActCaughtUp(t *testing.T) {
	r := newRig(t, 20_000)
	ref := ledger.SessionRef{Tool: "copilot-cli", NativeID: "cp-1", Project: r.proj.Root}
	if _, err := r.l.Write(ledger.Batch{Session: ref, Rows: []adapters.Row{{Key: "p", Time: r.now, Role: "user", Kind: adapters.KindPrompt, Text: "x"}}}, r.now); err != nil {
		t.Fatal(err)
	}
	f := ledger.FoundLimit{Key: "e1", Tool: "copilot-cli", NativeID: "cp-1", Limit: adapters.Limit{Kind: adapters.LimitRate, Reached: true}, At: r.now}
	if o := r.act(t, "SessionStart", f); o.Notice != "" || o.Resume != "" {
		t.Errorf("another session's limit announced: %+v", o)
	}
	ev, _ := LastLimits(r.l, r.proj.Root)
	if len(ev) != 1 || ev[0].Tool != "copilot-cli" || ev[0].NativeID != "cp-1" {
		t.Errorf("LastLimits = %+v", ev)
	}
}
