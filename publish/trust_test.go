package publish

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckHandoffSidecar(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	text := []byte(HeaderPrefix + "2026-11-23T08:00:00Z from claude\n# RESUME PROTOCOL: ask\n")
	if why := CheckHandoff(text, home, project, nil); !strings.Contains(why, "did not write it") {
		t.Fatalf("unrecorded handoff: %q", why)
	}
	for i := 0; i < keepDigests+2; i++ { // older digests fall off, the newest stay
		if err := RecordPublished(home, project, Digest([]byte{byte(i)})); err != nil {
			t.Fatal(err)
		}
	}
	if err := RecordPublished(home, project, Digest(text)); err != nil {
		t.Fatal(err)
	}
	if why := CheckHandoff(text, home, project, nil); why != "" {
		t.Fatalf("recorded handoff refused: %q", why)
	}
	if why := CheckHandoff(append(text, "x\n"...), home, project, nil); why == "" {
		t.Fatal("a changed handoff was accepted")
	}
	if why := CheckHandoff(text, home, t.TempDir(), nil); why == "" {
		t.Fatal("a digest recorded for one project was accepted for another")
	}
	if n := len(sidecarDigests(SidecarPath(home, project))); n != keepDigests {
		t.Fatalf("sidecar keeps %d digests, want %d", n, keepDigests)
	}
	if why := CheckHandoff([]byte("# not carryover\n"), home, project, nil); !strings.Contains(why, "header") {
		t.Fatalf("headerless file: %q", why)
	}
}

// BenchmarkCheckHandoff is what the trust check adds to a hook that finds a
// handoff: a hash of a full-size handoff and a read of the sidecar.
func BenchmarkCheckHandoff(b *testing.B) {
	home, project := b.TempDir(), b.TempDir()
	text := []byte(HeaderPrefix + "2026-11-23T08:00:00Z from claude\n" + strings.Repeat("x", MaxChars-60) + "\n")
	os.MkdirAll(filepath.Join(home, "published"), 0o700)
	RecordPublished(home, project, Digest(text))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if CheckHandoff(text, home, project, nil) != "" {
			b.Fatal("refused")
		}
	}
}
