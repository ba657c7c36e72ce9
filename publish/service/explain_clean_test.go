package service

import "testing"

// TestContentOneLineHostile: `explain` prints transcript text on a terminal.
// It printed an OSC 8 link's target and a clipboard write's body (their ESC
// dropped, the rest kept) and every bidi override and zero-width character.
func TestContentOneLineHostile(t *testing.T) {
	for in, want := range map[string]string{
		"fix \x1b]8;;https://evil.example/x\x1b\\the\x1b]8;;\x1b\\ bug\u202e\u200b now": "fix the bug now",
		// held out: 8-bit OSC 52, a tag-character message, a CSI, a line break
		"run\u009d52;c;ZWNobyBwd25lZA==\u009c tests\U000E0041\U000E0042\x1b[2J\r\nok": "run tests ok",
	} {
		if got := contentOneLine(in, 200); got != want {
			t.Errorf("contentOneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
