package adapters_test

import (
	"bytes"
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
		d := adapters.OpenDescriptionFile(home) // a new process each time
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
	d := adapters.OpenDescriptionFile(t.TempDir())
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

// TestDescriptionFileKeeping: nothing described, nothing written (a warm
// list writes no file); a damaged or foreign file is an empty cache; a
// write drops the descriptions of files gone since and leaves no
// temporary file.
func TestDescriptionFileKeeping(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home") // created by the first write
	cache := filepath.Join(home, adapters.ListCacheName)
	d := adapters.OpenDescriptionFile(home)
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Fatalf("a flush with nothing described made %s", home)
	}
	dir := t.TempDir()
	here, gone := filepath.Join(dir, "here.jsonl"), filepath.Join(dir, "gone.jsonl")
	for _, p := range []string{here, gone} {
		os.WriteFile(p, []byte("x\n"), 0o600)
		fi, _ := os.Stat(p)
		d.Store("claude", p, adapters.StatStamp(fi), adapters.NativeSession{ID: filepath.Base(p)}, true)
	}
	os.Remove(gone)
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(cache)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("cache file: %v, %v", fi, err)
	}
	d = adapters.OpenDescriptionFile(home)
	hereFi, _ := os.Stat(here)
	if s, ok, found := d.Lookup("claude", here, adapters.StatStamp(hereFi)); !found || !ok || s.ID != "here.jsonl" {
		t.Errorf("kept description: %+v %v %v", s, ok, found)
	}
	if _, _, found := d.Lookup("claude", gone, adapters.FileStamp{Size: 2}); found {
		t.Error("a gone file's description was kept")
	}
	ents, _ := os.ReadDir(home)
	if len(ents) != 1 {
		t.Errorf("home holds %d entries, want only %s", len(ents), adapters.ListCacheName)
	}
	for _, junk := range []string{"{not json", `{"version":999,"entries":[{"tool":"claude","path":"` + here + `"}]}`} {
		os.WriteFile(cache, []byte(junk), 0o600)
		if _, _, found := adapters.OpenDescriptionFile(home).Lookup("claude", here, adapters.StatStamp(hereFi)); found {
			t.Errorf("%q read as a cache", junk)
		}
	}
}

// TestDescriptionFileForget: forget drops a session's descriptions, by id
// or by transcript path, from the file, and keeps the others.
func TestDescriptionFileForget(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	d := adapters.OpenDescriptionFile(home)
	var stamps []adapters.FileStamp
	for i, name := range []string{"a.jsonl", "b.jsonl", "c.jsonl"} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("x\n"), 0o600)
		fi, _ := os.Stat(p)
		stamps = append(stamps, adapters.StatStamp(fi))
		d.Store("claude", p, stamps[i], adapters.NativeSession{ID: name[:1], Preview: "secret plan " + name}, true)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := adapters.OpenDescriptionFile(home).Forget("a", filepath.Join(dir, "b.jsonl")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(home, adapters.ListCacheName))
	if bytes.Contains(b, []byte("a.jsonl")) || bytes.Contains(b, []byte("b.jsonl")) || !bytes.Contains(b, []byte("c.jsonl")) {
		t.Errorf("after forget:\n%s", b)
	}
}
