package distill

import (
	"slices"
	"strings"
	"testing"
)

// An OSC 8 hyperlink's target is hidden from whoever reads the text: references keep what is shown, never the target
// (which, cleaned of its escapes later, came out glued to the link text: "…/xclick").
func TestReferencesDropOSC8Target(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"See \x1b]8;;https://evil.example/x\x1b\\click\x1b]8;;\x1b\\ and https://docs.example/a.", "https://docs.example/a"},
		{"read \x1b]8;;https://evil.example/y\x1b\\https://docs.example/b\x1b]8;;\x1b\\ first", "https://docs.example/b"},
		// held out: BEL terminators and link parameters
		{"open \x1b]8;id=42;https://evil.example/z\ahere\x1b]8;;\a, per https://docs.example/c", "https://docs.example/c"},
	} {
		got := references(tt.in, strings.ToLower(tt.in), false)
		if !slices.Equal(got, []string{tt.want}) {
			t.Errorf("references(%q) = %q, want [%q]", tt.in, got, tt.want)
		}
	}
}
