package publish

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCheckHandoffSidecar(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	text := []byte(HeaderPrefix + "2026-11-23T08:00:00Z from claude\n# RESUME PROTOCOL: ask\n")
	if why := CheckHandoff(text, home, project, nil); !strings.Contains(why, "did not write it") {
		t.Fatalf("unrecorded handoff: %q", why)
	}
	for i := 0; i < 100; i++ { // appended until the file is full, then rewritten with the newest
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
	kept := sidecarDigests(SidecarPath(home, project))
	if fi, err := os.Stat(SidecarPath(home, project)); err != nil || fi.Size() > sidecarMax || len(kept) < keepDigests {
		t.Fatalf("sidecar: %v, %d digests", err, len(kept))
	}
	if kept[len(kept)-1] != Digest(text) || kept[len(kept)-2] != Digest([]byte{99}) || slices.Contains(kept, Digest([]byte{0})) {
		t.Fatalf("the sidecar lost the newest digests or kept the oldest: %d kept", len(kept))
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
