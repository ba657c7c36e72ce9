//go:build !windows

package safefile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/carryover/carryover/publish/safefile"
)

func mustDir(t *testing.T, p string) *safefile.Dir {
	t.Helper()
	d, err := safefile.OpenDir(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestWriteRefusesSymlinkAndSpecial(t *testing.T) {
	root := t.TempDir()
	victim := filepath.Join(root, "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o644)
	proj := filepath.Join(root, "proj")
	os.Mkdir(proj, 0o755)
	os.Symlink(victim, filepath.Join(proj, "link"))
	os.Symlink("../victim", filepath.Join(proj, "rel"))
	if err := syscall.Mkfifo(filepath.Join(proj, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := mustDir(t, proj)
	for _, n := range []string{"link", "rel"} {
		if err := d.Write(n, []byte("evil"), safefile.Options{Mode: 0o600}); !errors.Is(err, safefile.ErrSymlink) {
			t.Errorf("%s: %v, want ErrSymlink", n, err)
		}
	}
	if err := d.Write("fifo", []byte("x"), safefile.Options{Mode: 0o600}); !errors.Is(err, safefile.ErrNotRegular) {
		t.Errorf("fifo: %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("victim changed: %q", b)
	}
	ents, _ := os.ReadDir(proj)
	if len(ents) != 3 {
		t.Errorf("left files behind: %v", ents)
	}
}

func TestWriteReplacesHardLinkNotInPlace(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other")
	os.WriteFile(other, []byte("other\n"), 0o644)
	os.Link(other, filepath.Join(dir, "f"))
	d := mustDir(t, dir)
	if err := d.Write("f", []byte("new"), safefile.Options{Mode: 0o600, KeepMode: true}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(other); string(b) != "other\n" {
		t.Errorf("the other link changed: %q", b)
	}
	fi, _ := os.Stat(filepath.Join(dir, "f"))
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %o not kept", fi.Mode().Perm())
	}
}

func TestSubRefusesSymlinkAndNeverCreatesParent(t *testing.T) {
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, "elsewhere"), 0o700)
	os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(root, ".carryover"))
	d := mustDir(t, root)
	if _, err := d.Sub(".carryover", true, 0o700); !errors.Is(err, safefile.ErrSymlink) {
		t.Errorf("symlinked dir: %v", err)
	}
	gone := filepath.Join(root, "gone")
	if _, err := safefile.OpenDir(gone); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing dir: %v", err)
	}
	if _, err := os.Stat(gone); err == nil {
		t.Errorf("missing dir was created")
	}
}

func TestReadFileNeverBlocks(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	syscall.Mkfifo(fifo, 0o600)
	os.Symlink("/dev/zero", filepath.Join(dir, "zero"))
	os.WriteFile(filepath.Join(dir, "big"), make([]byte, 100), 0o600)
	os.WriteFile(filepath.Join(dir, "ok"), []byte("ok"), 0o600)
	os.Symlink("ok", filepath.Join(dir, "okLink"))
	done := make(chan struct{})
	go func() {
		defer close(done)
		d := mustDir(t, dir)
		cases := []struct {
			name string
			want error
		}{{"fifo", safefile.ErrNotRegular}, {"zero", safefile.ErrSymlink}, {"big", safefile.ErrTooLarge}, {"okLink", safefile.ErrSymlink}}
		for _, c := range cases {
			if _, err := d.ReadFile(c.name, 10); !errors.Is(err, c.want) {
				t.Errorf("Dir.ReadFile(%s): %v, want %v", c.name, err, c.want)
			}
		}
		if _, err := safefile.ReadFile(filepath.Join(dir, "zero"), 10); !errors.Is(err, safefile.ErrNotRegular) {
			t.Errorf("ReadFile(/dev/zero link): %v", err)
		}
		if _, err := safefile.ReadFile(fifo, 10); !errors.Is(err, safefile.ErrNotRegular) {
			t.Errorf("ReadFile(fifo): %v", err)
		}
		if _, err := safefile.ReadFileNoFollow(filepath.Join(dir, "okLink"), 10); !errors.Is(err, safefile.ErrSymlink) {
			t.Errorf("ReadFileNoFollow(link): %v", err)
		}
		if b, err := safefile.ReadFile(filepath.Join(dir, "okLink"), 10); err != nil || string(b) != "ok" {
			t.Errorf("ReadFile(link to ok) = %q, %v", b, err)
		}
		if b, err := d.ReadFile("ok", 2); err != nil || string(b) != "ok" {
			t.Errorf("ReadFile(ok) = %q, %v", b, err)
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute): // a hang, not a speed bound
		t.Fatal("a read blocked")
	}
}

func TestRemoveStaleTempsOnlyOwn(t *testing.T) {
	dir := t.TempDir()
	d := mustDir(t, dir)
	if err := d.Write("handoff.md", []byte("x"), safefile.Options{Mode: 0o600}); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("t"), mode)
		os.Chmod(p, mode)
		os.Chtimes(p, old, old)
		return p
	}
	stale := mk(".handoff.md.carryover-tmp-0123456789abcdef", 0o600)
	committed := mk(".handoff.md.carryover-tmp-fedcba9876543210", 0o644) // as git checks out
	other := mk(".handoff.md.tmp123", 0o600)
	fresh := filepath.Join(dir, ".x.carryover-tmp-00112233445566aa")
	os.WriteFile(fresh, nil, 0o600)
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("v"), 0o600)
	os.Chtimes(victim, old, old)
	link := filepath.Join(dir, ".y.carryover-tmp-00112233445566bb")
	os.Symlink(victim, link)
	hard := filepath.Join(dir, ".z.carryover-tmp-00112233445566cc")
	os.Link(victim, hard)
	d.RemoveStaleTemps(time.Minute)
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("stale temp kept")
	}
	for _, p := range []string{committed, other, fresh, link, hard, victim} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s deleted", filepath.Base(p))
		}
	}
	names, _ := os.ReadDir(dir)
	for _, n := range names {
		if strings.Contains(n.Name(), "handoff.md.carryover-tmp") && n.Name() != filepath.Base(committed) {
			t.Errorf("left %s", n.Name())
		}
	}
}
