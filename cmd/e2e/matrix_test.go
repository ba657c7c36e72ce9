package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCrossAgentMatrix: one project per pair; agent A works through a
// distinctive story, then agent B starts a fresh session in the same
// project and its first model request must carry A's task and next action
// under a `from <A>` header. Before that, B runs in a second project of the
// same HOME, which must get nothing of A's.
func TestCrossAgentMatrix(t *testing.T) {
	pairs := []struct{ a, b, word string }{
		{"claude", "codex", "debounce"},
		{"codex", "claude", "memoize"},
		{"claude", "gemini", "throttle"},
		{"gemini", "copilot-cli", "deadline"},
		{"copilot-cli", "claude", "jitter"},
		{"codex", "gemini", "ratelimit"},
		{"qwen", "claude", "backfill"},
	}
	for _, p := range pairs {
		t.Run(p.a+"_to_"+p.b, func(t *testing.T) {
			w := newWorkspace(t, p.a, p.b)
			dir := w.project(t, p.word+"lib")
			other := w.project(t, "otherlib")
			s := story{Word: p.word}

			runAgent(t, p.a, w.home, dir, s.Task(), s.turns(p.a, dir), runOpts{})
			s.checkFiles(t, dir)
			if p.a != "copilot-cli" {
				// Copilot -p flushes its transcript after its hooks: its
				// handoff is written at the next event of the project.
				if h := w.handoff(t, dir); !strings.Contains(h, "Z from "+p.a+" · HO-") || !strings.Contains(h, s.Task()) {
					t.Errorf("after %s the handoff is not %s's:\n%s", p.a, p.a, h)
				}
			}

			// B in another project of the same HOME: nothing of A's.
			ro := runAgent(t, p.b, w.home, other, "List the files here", []Turn{{Text: "There is only README.md."}}, runOpts{})
			for _, body := range ro.Main {
				if i := leak(string(body), "[CARRYOVER]", s.Task(), s.Next(), s.File()); i >= 0 {
					t.Errorf("%s in another project received %s's handoff: …%s…", p.b, p.a, string(body)[max(0, i-600):min(len(body), i+600)])
					break
				}
			}
			if b, err := os.ReadFile(filepath.Join(other, ".carryover", "handoff.md")); err == nil &&
				(leak(string(b), s.Task(), s.Next(), s.File()) >= 0 || !strings.Contains(string(b), "Z from "+p.b+" · HO-")) {
				t.Errorf("the other project's handoff is not its own (%s's):\n%s", p.b, b)
			}

			// B in A's project: the first request carries A's handoff.
			r := runAgent(t, p.b, w.home, dir, "continue", []Turn{{Text: "Resuming. " + s.Next()}}, runOpts{})
			first := r.first(t)
			checkDelivered(t, first, s, p.a)
			for _, want := range []string{storyFailCmd, storyDecision} {
				if !strings.Contains(first, want) {
					t.Errorf("%s's first request lacks %q from %s's handoff", p.b, want, p.a)
				}
			}
			if h := w.handoff(t, dir); !strings.Contains(h, s.Task()) {
				t.Errorf("%s's nudge replaced %s's task:\n%s", p.b, p.a, h)
			}
		})
	}
}

// leak returns the index of the first of needles in body, or -1.
func leak(body string, needles ...string) int {
	for _, n := range needles {
		if i := strings.Index(body, n); i >= 0 {
			return i
		}
	}
	return -1
}
