package publish

import (
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/distill"
)

// TestRenderTopThousand: however long the goal, the latest request and the
// next action, and however full the other sections, all three start within
// the first 1,000 characters and the caps hold.
func TestRenderTopThousand(t *testing.T) {
	long := func(w string) string { return strings.Repeat(w+" ", 200) }
	h := distill.Handoff{Tool: "copilot-cli", Task: long("goal"), Latest: long("latest"), Next: long("nextstep"),
		SetAside: []string{long("aside")}}
	for i := range 30 {
		h.Decisions = append(h.Decisions, long("decision"))
		h.Questions = append(h.Questions, long("question"))
		h.Files = append(h.Files, distill.File{Path: strings.Repeat("dir/", 20) + "f.go"})
		h.Refs = append(h.Refs, long("ref"))
		_ = i
	}
	for _, mode := range []string{ModeAsk, ModeBrief, ModeSilent} {
		out := Render(h, RenderOptions{Now: time.Unix(0, 0), Mode: mode, Session: strings.Repeat("s", 40)})
		top := out[:min(len(out), 1000)]
		for _, w := range []string{"goal goal", "Latest request: latest", "nextstep nextstep"} {
			if !strings.Contains(top, w) {
				t.Errorf("%s: %q is not within the first 1,000 characters:\n%s", mode, w, top)
			}
		}
		if n := strings.Count(out, "\n"); n > MaxLines || len(out) > MaxChars {
			t.Errorf("%s: %d lines, %d chars", mode, n, len(out))
		}
	}
}

// TestQualityLine: status reads the coverage line of a rendered handoff, and
// nothing from a file that is not carryover's or not a regular file.
func TestQualityLine(t *testing.T) {
	dir := t.TempDir()
	h := distill.Handoff{Tool: "claude", Task: "Fix the login", Next: "Run the tests"}
	p := dir + "/handoff.md"
	if err := WriteAtomic(p, []byte(Render(h, RenderOptions{Now: time.Unix(0, 0)}))); err != nil {
		t.Fatal(err)
	}
	if got, want := QualityLine(p), h.Quality().String(); got != want || !strings.HasPrefix(got, "quality 37% (3/8; missing: files,") {
		t.Errorf("QualityLine = %q; want %q", got, want)
	}
	if err := WriteAtomic(p, []byte("quality 100%\n")); err != nil {
		t.Fatal(err)
	}
	if got := QualityLine(p); got != "" {
		t.Errorf("a file that is not a handoff gave %q", got)
	}
	if got := QualityLine(dir); got != "" {
		t.Errorf("a directory gave %q", got)
	}
}
