package adapters

import (
	"math/rand"
	"strings"
	"testing"
	"time"
)

// TestClipReadsPrefix holds clip to what claudeRows.clipped relies on:
// clip(s, n) depends only on s[:n+clipReach] once len(s) > n, so unquoting a
// long string only that far gives the same row text, secrets crossing the
// cut included.
func TestClipReadsPrefix(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabet := []string{"a", "b", " ", "\n", "\t", "é", "€", "😀", "\xff", "xyz", "  ", "password=", "ghp_", "Hunter2x", "-----BEGIN RSA PRIVATE KEY-----\n"}
	for range 3000 {
		var b strings.Builder
		for range rng.Intn(80) {
			b.WriteString(alphabet[rng.Intn(len(alphabet))])
		}
		s := b.String()
		if len(s) == 0 {
			continue
		}
		n := rng.Intn(len(s))
		pad := s + strings.Repeat("Zq9/", (clipReach+len(s))/4) // a long key body after it
		want := clip(pad, n)
		for _, end := range []int{n + clipReach, n + clipReach + 1, len(pad)} {
			if got := clip(pad[:min(end, len(pad))], n); got != want {
				t.Fatalf("clip(%q, %d) = %q but clip of its first %d bytes = %q", s, n, want, end, got)
			}
		}
	}
}

func FuzzClaudeTime(f *testing.F) {
	for _, s := range []string{"2026-11-21T08:59:37.203Z", "2026-11-21T08:59:37Z", "2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z",
		"2026-11-21T08:59:37.123456789Z", "2026-11-21T08:59:37.1234567891Z", "2026-11-21T08:59:37.Z", "2026-11-21T24:00:00Z",
		"2026-11-21T08:59:60Z", "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z", "0000-01-01T00:00:00Z", "2026-11-21T08:59:37+02:00",
		"2026-11-21 08:59:37Z", "+026-11-21T08:59:37Z", "2026-11-31T08:59:37Z", "2100-02-29T08:59:37Z", "2000-02-29T08:59:37Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := claudeTime([]byte(s))
		if !ok {
			return // time.Parse decides
		}
		want, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || got != want {
			t.Fatalf("claudeTime(%q) = %v, time.Parse = %v, %v", s, got, want, err)
		}
	})
}
