package ledger

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
)

// TestDescriptionsInvalidated: a cached description is used while the
// transcript's size, mtime and inode are unchanged (across processes: the
// ledger is reopened), and the file is described again when any of the
// three changes.
func TestDescriptionsInvalidated(t *testing.T) {
	home := t.TempDir()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, []byte("one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(path, base, base); err != nil {
		t.Fatal(err)
	}
	calls := 0
	describe := func(p string) (adapters.NativeSession, error) {
		calls++
		b, _ := os.ReadFile(p)
		return adapters.NativeSession{Tool: "claude", ID: "abc", Path: p, Project: "/p", LastActive: base.Add(time.Duration(len(b)) * time.Second),
			MessageCount: len(b), CountEstimated: true, Preview: string(b[:3])}, nil
	}
	list := func() adapters.NativeSession {
		t.Helper()
		l, err := Open(home)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		d, err := l.Descriptions()
		if err != nil {
			t.Fatal(err)
		}
		s, err := adapters.DescribeCached(adapters.Env{Descriptions: d}, "claude", path, describe)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
		return s
	}
	first := list()
	again := list()
	if calls != 1 {
		t.Fatalf("unchanged file described %d times, want 1", calls)
	}
	if first != again || !again.LastActive.Equal(first.LastActive) || again.LastActive.Location().String() != first.LastActive.Location().String() {
		t.Errorf("cached %+v, described %+v", again, first)
	}

	// size
	if err := os.WriteFile(path, []byte("one\ntwo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = os.Chtimes(path, base, base)
	if s := list(); calls != 2 || s.MessageCount != 8 {
		t.Errorf("after a size change: %d calls, %d messages", calls, s.MessageCount)
	}
	list()
	if calls != 2 {
		t.Errorf("described again without a change (%d)", calls)
	}
	// mtime only
	_ = os.Chtimes(path, base.Add(time.Minute), base.Add(time.Minute))
	if list(); calls != 3 {
		t.Errorf("an mtime change kept the cache (%d calls)", calls)
	}
	// inode only: same size and mtime, another file renamed over it
	other := filepath.Join(dir, "new")
	if err := os.WriteFile(other, []byte("six\ntwo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = os.Chtimes(other, base.Add(time.Minute), base.Add(time.Minute))
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	if s := list(); calls != 4 || s.Preview != "six" {
		t.Errorf("a replaced file (new inode) kept the cache: %d calls, preview %q", calls, s.Preview)
	}
}

// TestDescriptionsNotASession: a file that is not a session is remembered
// as such; an I/O failure is not remembered.
func TestDescriptionsNotASession(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	d, _ := l.Descriptions()
	path := filepath.Join(t.TempDir(), "x.jsonl")
	if err := os.WriteFile(path, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	calls := 0
	notSession := func(string) (adapters.NativeSession, error) {
		calls++
		return adapters.NativeSession{}, adapters.ErrNotSession
	}
	env := adapters.Env{Descriptions: d}
	for i := 0; i < 3; i++ {
		if _, err := adapters.DescribeCached(env, "claude", path, notSession); err == nil {
			t.Fatal("not a session accepted")
		}
	}
	if calls != 1 {
		t.Errorf("not-a-session described %d times", calls)
	}
	calls = 0
	failing := func(string) (adapters.NativeSession, error) {
		calls++
		return adapters.NativeSession{}, os.ErrPermission
	}
	for i := 0; i < 2; i++ {
		_, _ = adapters.DescribeCached(env, "codex", path, failing)
	}
	if calls != 2 {
		t.Errorf("an I/O failure was cached (%d calls)", calls)
	}
}

// TestForgetGone: gc drops the descriptions of deleted transcripts only.
func TestForgetGone(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	d, _ := l.Descriptions()
	d.Store("claude", "/gone", adapters.FileStamp{Size: 1}, adapters.NativeSession{ID: "a"}, true)
	d.Store("claude", "/here", adapters.FileStamp{Size: 1}, adapters.NativeSession{ID: "b"}, true)
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if n, err := l.ForgetGone(func(p string) bool { return p == "/gone" }); n != 1 || err != nil {
		t.Fatal(n, err)
	}
	d, _ = l.Descriptions()
	if d.Len() != 1 {
		t.Errorf("%d descriptions left, want 1", d.Len())
	}
}
