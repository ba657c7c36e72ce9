package redacttest

import (
	"testing"

	"github.com/carryover/carryover/publish/redact"
)

func TestFakeEveryKind(t *testing.T) {
	for _, k := range redact.Kinds() {
		a, b := Fake(k, 1), Fake(k, 1)
		if a == "" || a != b {
			t.Errorf("Fake(%s, 1) = %q, %q; want the same non-empty string", k, a, b)
		}
	}
	if Fake("nope", 1) != "" {
		t.Error(`Fake("nope") should be empty`)
	}
}
