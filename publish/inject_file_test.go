package publish

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
)

// TestInjectFileBanner: without the ledger (watchdog fallback, a locked
// ledger), a session start still gets the banner Deliver shows, computed
// from the verified handoff's own header and sections: id, agent, age,
// the pinned task before the extracted goal, the next action. An expired
// handoff is a one-line notice, a cleared one nothing, an old one without
// an id goes out as before.
func TestInjectFileBanner(t *testing.T) {
	written := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	id := NewID(written, "4fbd56c9-cd10")
	h := distill.Handoff{Tool: "codex", Task: "Finish the importer", Next: "wire the admin page"}
	text := Render(h, RenderOptions{Now: written.Add(20 * time.Minute), ID: id, Pinned: &ledger.PinnedTask{Text: "Ship the CSV importer"}})
	claude, _ := adapters.ByName("claude")
	gemini, _ := adapters.ByName("gemini")
	p := &Project{Root: "/src/proj", Now: written.Add(3 * time.Hour), Repo: func() *distill.Repo { return nil }}

	rec, ok := RecordOfText(text)
	if !ok || rec.ID != id || rec.Tool != "codex" || rec.Goal != "Ship the CSV importer" || rec.Next != "wire the admin page" ||
		!rec.Written.Equal(written) || !rec.Updated.Equal(written.Add(20*time.Minute)) {
		t.Fatalf("RecordOfText = %+v, %v", rec, ok)
	}
	if PinnedOfText(text) != "Ship the CSV importer" {
		t.Errorf("PinnedOfText = %q", PinnedOfText(text))
	}
	want := "carryover · proj · handoff " + id + " from codex 2h ago · Resuming: Ship the CSV importer · Next: wire the admin page"
	if want != Banner(p.Root, rec, p.Now, nil) {
		t.Fatalf("banner wording changed: %q", Banner(p.Root, rec, p.Now, nil))
	}

	// Claude shows systemMessage to the user; the context is the handoff.
	w, hdr := p.InjectFile(claude, "SessionStart", text)
	var out struct {
		SystemMessage string `json:"systemMessage"`
		HSO           struct {
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(w, &out); err != nil {
		t.Fatalf("%v: %s", err, w)
	}
	if out.SystemMessage != want || !strings.HasPrefix(out.HSO.AdditionalContext, HeaderOf(text)) || hdr != HeaderOf(text) {
		t.Errorf("claude fallback: message %q, context starts %q, header %q", out.SystemMessage, clip(out.HSO.AdditionalContext, 80), hdr)
	}
	// Elsewhere the banner is the first line.
	w, _ = p.InjectFile(gemini, "SessionStart", text)
	if !strings.Contains(string(w), want+`\n# [CARRYOVER]`) {
		t.Errorf("gemini fallback lacks the banner as first line: %s", clip(string(w), 300))
	}

	// Expired: the one-line notice only.
	p.Now = written.Add(8 * 24 * time.Hour)
	if w, hdr := p.InjectFile(claude, "SessionStart", text); !strings.Contains(string(w), "a handoff from 7d ago exists: carryover history show "+id) ||
		strings.Contains(string(w), "Finish the importer") || hdr != "" {
		t.Errorf("expired fallback: %s (header %q)", w, hdr)
	}
	p.ExpireAfter = 30 * 24 * time.Hour
	if w, _ := p.InjectFile(claude, "SessionStart", text); !strings.Contains(string(w), "Resuming: Ship the CSV importer") {
		t.Errorf("expire_after not honoured: %s", clip(string(w), 200))
	}

	// Cleared: the stub Clear writes is not injected.
	stub := Header(written, "codex") + " · " + id + "\n# RESUME PROTOCOL: ask — x\n## Task\n(none: the user cleared the last handoff; `carryover history show " + id + "` prints it)\n## Next action\nAsk the user what to work on.\n"
	if w, _ := p.InjectFile(claude, "SessionStart", stub); w != nil {
		t.Errorf("a cleared handoff was injected: %s", w)
	}

	// No id (older carryover): as Inject renders it, no banner.
	old := Render(h, RenderOptions{Now: written})
	w1, _ := p.InjectFile(gemini, "SessionStart", old)
	w2, _ := p.Inject(gemini, "SessionStart", old)
	if string(w1) != string(w2) || strings.Contains(string(w1), "carryover · ") {
		t.Errorf("a handoff without an id: %s", w1)
	}
	// A header that only looks like one: no banner from a bad stamp.
	if _, ok := RecordOfText(HeaderPrefix + "yesterday from x · " + id + "\n"); ok {
		t.Error("a header with a bad time was read")
	}
}
