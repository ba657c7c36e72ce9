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

// TestClipDropsASecretCrossingTheCut covers secrets whose first part alone
// is no longer a secret to Find, so that only looking past the cut can
// tell: a quoted password with a space cut before its closing quote, a JWT
// longer than the 256 bytes the word rule looks back, and a key block whose
// line-numbered body is cut before its END line.
func TestClipDropsASecretCrossingTheCut(t *testing.T) {
	jwt := jwtHdr + "." + jwtPay + strings.Repeat("Ab3", 100) + "." + jwtSig
	pem := "-----BEGIN RSA " + "PRIVATE KEY-----\n"
	for i := range 30 {
		pem += strings.Repeat(" ", 5) + string(rune('0'+i%10)) + "\u2192" + mix40 + mix40[:24] + "\n"
	}
	pem += "-----END RSA " + "PRIVATE KEY-----"
	for _, c := range []struct{ name, before, secret, after string }{
		{"quoted password", `db.connect(password="`, "Hunter2 Prod", `")`},
		{"long jwt", "auth ", jwt, " done"},
		{"numbered key", "notes\n", pem, "\nafter"},
	} {
		s := c.before + c.secret + c.after
		for n := len(c.before) + 1; n < len(c.before)+len(c.secret); n += 7 {
			got := String(Clip(s, n))
			for i := 0; i+8 <= len(c.secret); i++ {
				if piece := c.secret[i : i+8]; strings.TrimSpace(piece) == piece && strings.Contains(got, piece) && !strings.Contains(c.before, piece) {
					t.Fatalf("%s: Clip(s, %d) then String kept %q: %q", c.name, n, piece, got)
				}
			}
		}
	}
	// What comes before the secret is kept.
	if got := Clip("keep this, then "+jwt, 40); !strings.HasPrefix(got, "keep this, then") {
		t.Errorf("Clip dropped more than the secret: %q", got)
	}
}
