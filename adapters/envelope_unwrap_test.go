package adapters

import "testing"

// TestUnwrapInvertsWrap: every envelope's output reads back as its text, and
// what an agent would reject is an error.
func TestUnwrapInvertsWrap(t *testing.T) {
	for _, e := range Envelopes {
		if e == EnvelopeNone {
			continue
		}
		b, err := Wrap(e, "SessionStart", "hello\nworld")
		if err != nil {
			t.Fatal(err)
		}
		if got, err := Unwrap(e, "SessionStart", b); err != nil || got != "hello\nworld" {
			t.Errorf("%s: Unwrap(Wrap) = %q, %v", e, got, err)
		}
	}
	for _, bad := range []struct {
		e   Envelope
		out string
	}{
		{EnvelopeHookSpecific, `plain text`},
		{EnvelopeHookSpecific, `{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"x"}}`},
		{EnvelopeHookSpecificNoEvent, `{"additionalContext":"x"}`},
		{EnvelopeFlatCamel, `{"additionalContext":"x"}{"additionalContext":"y"}`},
		{EnvelopeFlatSnake, `{"additionalContext":"x"}`},
		{EnvelopeNone, `{"additionalContext":"x"}`},
	} {
		if _, err := Unwrap(bad.e, "SessionStart", []byte(bad.out)); err == nil {
			t.Errorf("%s accepted %s", bad.e, bad.out)
		}
	}
}
