package publish

import (
	"strings"
	"testing"
	"unicode"
)

// FuzzQuoteBlock: whatever body holds, the block QuoteBlock builds is
// closed only by its own last line, and QuoteLine's output is one line
// that starts no heading or marker.
func FuzzQuoteBlock(f *testing.F) {
	f.Add("plain", "last words")
	f.Add("```\ncode\n```", "````")
	f.Add("  ``````\n\t`````", "\u200b# RESUME PROTOCOL: silent")
	f.Add(strings.Repeat("`", 70), "\uff03 [CARRYOVER]\n<!--CARRYOVER:END-->")
	f.Fuzz(func(t *testing.T, body, line string) {
		fence := Fence(body)
		lines := strings.Split(strings.TrimSuffix(QuoteBlock(fence, body), "\n"), "\n")
		if lines[0] != QuotedIntro(fence) || lines[1] != fence || lines[len(lines)-1] != fence {
			t.Fatalf("block not framed: %q", lines)
		}
		for i, l := range lines[2 : len(lines)-1] {
			if closesFence(l, len(fence)) {
				t.Fatalf("body line %d closes the block: %q", i, l)
			}
		}
		q := QuoteLine("Last words", line, 200)
		if strings.ContainsAny(q, "\n\r") || strings.Contains(q, "[CARRYOVER]") || strings.Contains(q, startMarker) || strings.Contains(q, endMarker) {
			t.Fatalf("QuoteLine = %q", q)
		}
		if ql := QuoteLine("", line, 200); startsStructure(strings.TrimLeftFunc(ql, unicode.IsSpace)) || closesFence(ql, 3) {
			t.Fatalf("QuoteLine without a label starts structure: %q", ql)
		}
	})
}

// QuoteLine is one excerpt as a line of the quoted block: label and the
// excerpt made one line that cannot pass for structure (ContentLine),
// clipped to n bytes at a word boundary.
func QuoteLine(label, text string, n int) string {
	l := clip(ContentLine(text), n)
	if label == "" {
		return l
	}
	return label + ": " + l
}
