package redact

import (
	"strings"
	"testing"
)

func TestClipNeverKeepsHalfASecret(t *testing.T) {
	secret := "ghp_" + strings.Repeat("a1B2c3D4", 5)
	for n := 1; n < 80; n++ {
		got := Clip("deploy with "+secret+" now please", n)
		if strings.Contains(got, "ghp_") && !strings.Contains(got, secret) {
			t.Fatalf("Clip(%d) kept part of a token: %q", n, got)
		}
		if len(got) > n+len("…") {
			t.Fatalf("Clip(%d) = %d bytes", n, len(got))
		}
	}
	if Clip("héllo wörld", 3) != "…" || Clip("short", 10) != "short" {
		t.Fatalf("%q", Clip("héllo wörld", 3))
	}
}
