package adapters

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzAiderParse runs the history parser over arbitrary text (seeded with
// sessions of the real sample and the hand-made current-format history).
func FuzzAiderParse(f *testing.F) {
	for _, p := range []string{
		filepath.Join("..", "testdata", "adapters", "aider", "current", ".aider.chat.history.md"),
		filepath.Join("..", "testdata", "adapters", "aider", "project", ".aider.chat.history.md"),
		filepath.Join("..", "testdata", "adapters", "aider", "0.86-shapes", ".aider.chat.history.md"),
		filepath.Join("..", "testdata", "adapters", "aider", "0.86-shapes", "no-header.aider.chat.history.md"),
		filepath.Join("..", "testdata", "adapters", "aider", "declined-interrupted", ".aider.chat.history.md"),
		filepath.Join("..", "testdata", "adapters", "aider", "heldout-declined-interrupted-de", ".aider.chat.history.md"),
	} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, s := range strings.SplitAfter(string(b), "\n# aider chat started at") {
			if len(s) > 4096 {
				s = s[:4096]
			}
			f.Add("# aider chat started at" + s)
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, c := range splitAiderSessions(text, "/p/.aider.chat.history.md") {
			for _, r := range parseAiderSession(c) {
				if r.Key == "" || (r.Kind == KindToolCall && r.ToolName == "") {
					t.Fatalf("bad row %+v", r)
				}
			}
		}
	})
}
