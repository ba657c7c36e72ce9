package publish

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
)

func TestNewID(t *testing.T) {
	at := time.Date(2026, 11, 23, 21, 4, 5, 0, time.FixedZone("CET", 3600))
	tests := []struct{ session, want string }{
		{"4fbd56c9-cd10-4412-a9cc-58af839aaddf", "HO-20261123-200405-4fbd56c9"},
		{"abc", "HO-20261123-200405-abc"},
		{"../../etc/x y", "HO-20261123-200405-etcxy"},
		{"", "HO-20261123-200405-nosess"},
		{"rollout-2026", "HO-20261123-200405-rollout-"},
	}
	for _, tt := range tests {
		got := NewID(at, tt.session)
		if got != tt.want {
			t.Errorf("NewID(%q) = %q; want %q", tt.session, got, tt.want)
		}
		if !ValidID(got) {
			t.Errorf("ValidID(%q) = false", got)
		}
		if h := Header(at, "claude") + " · " + got; IDOf(h) != got {
			t.Errorf("IDOf(%q) = %q; want %q", h, IDOf(h), got)
		}
	}
	for _, bad := range []string{"", "HO-2026", "HO-20261123-200405-", "HO-20261123-200405-abc/../x", "x HO-20261123-200405-abc"} {
		if ValidID(bad) {
			t.Errorf("ValidID(%q) = true", bad)
		}
	}
	if IDOf(Header(at, "claude")) != "" {
		t.Error("a header without an id has one")
	}
	if got, ok := IDTime("HO-20261123-200405-abc"); !ok || !got.Equal(time.Date(2026, 11, 23, 20, 4, 5, 0, time.UTC)) {
		t.Errorf("IDTime = %v, %v", got, ok)
	}
}

func TestHistoryDedupeAndRotation(t *testing.T) {
	project := t.TempDir()
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	var ids []string
	owned := map[string]bool{}
	for i := 0; i < 5; i++ {
		id := NewID(at.Add(time.Duration(i)*time.Minute), "sess")
		ids = append(ids, id)
		owned[id] = true
		if wrote, err := WriteHistory(project, id, "# text "+id, 3, owned); err != nil || !wrote {
			t.Fatalf("WriteHistory(%s) = %v, %v", id, wrote, err)
		}
	}
	if wrote, err := WriteHistory(project, ids[4], "# text "+ids[4], 3, owned); err != nil || wrote {
		t.Errorf("unchanged content rewritten: %v, %v", wrote, err)
	}
	if wrote, _ := WriteHistory(project, ids[4], "# changed", 3, owned); !wrote {
		t.Error("changed content not written")
	}
	got, err := HistoryIDs(project)
	if err != nil || strings.Join(got, ",") != strings.Join(ids[2:], ",") {
		t.Fatalf("HistoryIDs = %v, %v; want %v", got, err, ids[2:])
	}
	if s, _ := ReadHistory(project, ids[4]); s != "# changed" {
		t.Errorf("ReadHistory = %q", s)
	}
	if _, err := WriteHistory(project, "../evil", "x", 3, owned); err == nil {
		t.Error("an invalid id was written")
	}
	// A symlinked history directory is refused, nothing written through it.
	p2, outside := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(p2, ".carryover"), 0o700)
	os.Symlink(outside, filepath.Join(p2, ".carryover", HistoryDir))
	if _, err := WriteHistory(p2, ids[0], "x", 3, owned); err == nil {
		t.Error("wrote through a symlinked history dir")
	}
	if es, _ := os.ReadDir(outside); len(es) != 0 {
		t.Errorf("files appeared outside: %v", es)
	}
}

func TestMatchID(t *testing.T) {
	ids := []string{"HO-20261101-120000-aaaa", "HO-20261102-120000-bbbb", "HO-20261102-130000-cccc"}
	tests := []struct {
		arg, match string
		ok         bool
		closest    string
	}{
		{"HO-20261101-120000-aaaa", "HO-20261101-120000-aaaa", true, ""},
		{"HO-20261101", "HO-20261101-120000-aaaa", true, ""},
		{"HO-20261102", "", false, "HO-20261102-130000-cccc"},
		{"HO-20261101-120000-aaab", "", false, "HO-20261101-120000-aaaa"},
		{"ho-20261102-120000-bbbb", "", false, "HO-20261102-120000-bbbb"},
	}
	for _, tt := range tests {
		m, ok, c := MatchID(ids, tt.arg)
		if m != tt.match || ok != tt.ok || c != tt.closest {
			t.Errorf("MatchID(%q) = %q, %v, %q; want %q, %v, %q", tt.arg, m, ok, c, tt.match, tt.ok, tt.closest)
		}
	}
}

// TestDecisionsWithinCaps: a long decisions log never breaks the 50-line
// and 4,000-character caps; the user's decisions come first and what did
// not fit is counted.
func TestDecisionsWithinCaps(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	var log []ledger.Decision
	for i := 0; i < 40; i++ {
		log = append(log, ledger.Decision{Text: fmt.Sprintf("user decision %d about the storage layer and its locking", i), Source: ledger.DecisionUser})
	}
	var extracted []string
	for i := 0; i < 30; i++ {
		extracted = append(extracted, fmt.Sprintf("extracted decision %d", i))
	}
	h := distill.Handoff{Tool: "claude", Task: "Finish the importer", Next: "wire the admin page", Decisions: extracted}
	out := Render(h, RenderOptions{Now: now, ID: "HO-20261101-120000-abc", Decisions: log, Pinned: &ledger.PinnedTask{Text: "Ship the CSV importer"}})
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) > MaxLines || len(out) > MaxChars {
		t.Fatalf("caps broken: %d lines, %d chars", len(lines), len(out))
	}
	if !strings.HasSuffix(lines[0], " · HO-20261101-120000-abc") {
		t.Errorf("header %q lacks the id", lines[0])
	}
	if !strings.Contains(out, "- user decision 0 about") || strings.Contains(out, "extracted decision 0") {
		t.Errorf("the user's decisions do not come first:\n%s", out)
	}
	if !strings.Contains(out, "more: `carryover decide --list`)") {
		t.Errorf("the decisions left out are not counted:\n%s", out)
	}
	if !strings.Contains(out, "[pinned by the user") || !strings.Contains(out, "Ship the CSV importer") || !strings.Contains(out, "own goal: Finish the importer") {
		t.Errorf("pinned task missing:\n%s", out)
	}
	if strings.Index(out, "Ship the CSV importer") > strings.Index(out, "Finish the importer") {
		t.Error("the pinned task does not lead")
	}
	if !strings.Contains(out, "## Next action\nwire the admin page") {
		t.Errorf("next action lost under decisions pressure:\n%s", out)
	}
}

// TestHistoryRotationPlanted: fifty planted HO-2099… files sort after every
// real id; rotation neither counts nor removes them, nor any file it did
// not record, so the real history stays (issue 21).
func TestHistoryRotationPlanted(t *testing.T) {
	project := t.TempDir()
	hist := filepath.Join(project, ".carryover", HistoryDir)
	os.MkdirAll(hist, 0o700)
	planted := map[string]bool{}
	for i := 0; i < 50; i++ {
		id := NewID(time.Date(2099, 1, 1, 0, i, 0, 0, time.UTC), "evil")
		planted[id] = true
		os.WriteFile(filepath.Join(hist, id+".md"), []byte("# planted"), 0o644)
	}
	stranger := NewID(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), "someone")
	os.WriteFile(filepath.Join(hist, stranger+".md"), []byte("# not recorded"), 0o644)
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	owned := map[string]bool{}
	var ids []string
	for i := 0; i < 5; i++ {
		id := NewID(at.Add(time.Duration(i)*time.Minute), "sess")
		ids = append(ids, id)
		owned[id] = true
		if _, err := WriteHistory(project, id, "# text "+id, 3, owned); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := HistoryIDs(project)
	have := map[string]bool{}
	for _, id := range got {
		have[id] = true
	}
	for id := range planted {
		if !have[id] {
			t.Errorf("rotation removed %s, which it did not write", id)
		}
	}
	if !have[stranger] {
		t.Errorf("rotation removed an unrecorded file")
	}
	for i, id := range ids {
		if have[id] != (i >= 2) {
			t.Errorf("%s kept = %v; want the newest 3 of the 5 recorded kept", id, have[id])
		}
	}
	// Without the ledger's record (nil), nothing is rotated.
	if _, err := WriteHistory(project, NewID(at.Add(time.Hour), "sess"), "# x", 1, nil); err != nil {
		t.Fatal(err)
	}
	if n, _ := HistoryIDs(project); len(n) != len(got)+1 {
		t.Errorf("a write without the record removed files: %d -> %d", len(got), len(n))
	}
}

// WriteHistory is writeHistory in project's .carryover (the tests' way in).
func WriteHistory(project, id, text string, keep int, owned map[string]bool) (bool, error) {
	d, err := OpenDir(project)
	if err != nil {
		return false, err
	}
	defer d.Close()
	return writeHistory(d, id, text, keep, owned, distill.OpenRepo(project), project)
}

// FuzzValidID holds the hand-written id check to the pattern it replaced.
func FuzzValidID(f *testing.F) {
	re := regexp.MustCompile(`HO-[0-9]{8}-[0-9]{6}-[0-9A-Za-z_-]{1,8}`)
	for _, s := range []string{"", "HO-20261128-011500-4fbd56c9", "HO-20261128-011500-a", "HO-20261128-011500-abcdefghi",
		"HO-20261128-011500-", "xHO-20261128-011500-ab", "HO-2026112a-011500-ab", "HO-20261128-011500-a.b", "HO-20261128_011500-ab"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if want := re.FindString(id) == id && id != ""; ValidID(id) != want {
			t.Fatalf("ValidID(%q) = %v, the pattern says %v", id, !want, want)
		}
	})
}
