package adapters

import (
	"strings"
	"testing"
)

// TestBoundPrompt: a pasted spec becomes a few lines (request, title,
// trailing request, "(pasted, N lines)") with no heading marks; a typed
// prompt is kept as it is.
func TestBoundPrompt(t *testing.T) {
	typed := "Fix the login bug.\n\n## Context\nIt fails on Safari."
	if got := BoundPrompt(typed); got != typed {
		t.Errorf("typed prompt changed: %q", got)
	}
	var b strings.Builder
	b.WriteString("Implement this spec. Keep the API stable.\n\n# Payments API v2\n\n")
	for i := 0; i < 3998; i++ {
		b.WriteString("## Section\n- item with details\n")
	}
	b.WriteString("Start with the refund endpoint please\n")
	got := BoundPrompt(b.String())
	lines := strings.Split(got, "\n")
	if len(lines) > 4 {
		t.Errorf("bounded prompt has %d lines: %q", len(lines), got)
	}
	for _, want := range []string{"Implement this spec.", "Title: Payments API v2", "Start with the refund endpoint please", "(pasted, 8001 lines)"} {
		if !strings.Contains(got, want) {
			t.Errorf("bounded prompt %q lacks %q", got, want)
		}
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "#") {
			t.Errorf("a heading survived: %q", l)
		}
	}
	// The Claude fast parser and the oracle bound it alike (the diff tests
	// compare them; here the row itself).
	line := `{"type":"user","uuid":"u1","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":` + jsonQuote(b.String()) + `}}`
	rows, _ := claude{}.ParseLine([]byte(line), 0)
	want, _ := oracleParseLine([]byte(line), 0)
	if len(rows) != 1 || rows[0].Text != got || len(want) != 1 || want[0].Text != got {
		t.Errorf("claude rows %+v / oracle %+v, want text %q", rows, want, got)
	}
}

func jsonQuote(s string) string {
	r := strings.NewReplacer("\\", "\\\\", "\"", "\\\"", "\n", "\\n")
	return `"` + r.Replace(s) + `"`
}
