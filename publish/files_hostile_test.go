package publish_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/safefile"
)

func TestOwnFilesNeverThroughSymlinks(t *testing.T) {
	root := t.TempDir()
	victimDir := filepath.Join(root, "home")
	os.Mkdir(victimDir, 0o755)
	bashrc := filepath.Join(victimDir, ".bashrc")
	os.WriteFile(bashrc, []byte("export OK=1\n"), 0o644)

	t.Run("symlinked-file", func(t *testing.T) {
		proj := filepath.Join(root, "p1")
		os.MkdirAll(filepath.Join(proj, ".carryover"), 0o755)
		os.Symlink(bashrc, filepath.Join(proj, ".carryover", "handoff.md"))
		if err := publish.WriteOwn(proj, "handoff.md", []byte("# [CARRYOVER] evil")); !errors.Is(err, safefile.ErrSymlink) {
			t.Errorf("WriteOwn: %v", err)
		}
		if _, err := publish.ReadHandoffFile(proj); !errors.Is(err, safefile.ErrSymlink) {
			t.Errorf("ReadHandoff: %v", err)
		}
	})
	t.Run("symlinked-dir", func(t *testing.T) {
		proj := filepath.Join(root, "p2")
		os.Mkdir(proj, 0o755)
		os.Symlink(victimDir, filepath.Join(proj, ".carryover"))
		if err := publish.WriteOwn(proj, ".bashrc", []byte("evil")); !errors.Is(err, safefile.ErrSymlink) {
			t.Errorf("WriteOwn: %v", err)
		}
		if _, err := os.Stat(filepath.Join(victimDir, ".gitignore")); err == nil {
			t.Errorf(".gitignore written through the symlinked directory")
		}
		if _, err := publish.ReadHandoffFile(proj); !errors.Is(err, safefile.ErrSymlink) {
			t.Errorf("ReadHandoff: %v", err)
		}
	})
	t.Run("symlinked-gitignore", func(t *testing.T) {
		proj := filepath.Join(root, "p3")
		os.MkdirAll(filepath.Join(proj, ".carryover"), 0o755)
		os.Symlink(bashrc, filepath.Join(proj, ".carryover", ".gitignore"))
		if err := publish.EnsureDir(proj); !errors.Is(err, safefile.ErrSymlink) {
			t.Errorf("EnsureDir: %v", err)
		}
	})
	if b, _ := os.ReadFile(bashrc); string(b) != "export OK=1\n" {
		t.Fatalf(".bashrc changed: %q", b)
	}
	ents, _ := os.ReadDir(victimDir)
	if len(ents) != 1 {
		t.Errorf("files appeared in the victim directory: %v", ents)
	}
}

func TestOwnGitignoreReplacesNegation(t *testing.T) {
	proj := t.TempDir()
	os.MkdirAll(filepath.Join(proj, ".carryover"), 0o755)
	os.WriteFile(filepath.Join(proj, ".carryover", ".gitignore"), []byte("*\n!handoff.md\n"), 0o644)
	if err := publish.EnsureDir(proj); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, ".carryover", ".gitignore")); string(b) != publish.OwnGitignore {
		t.Errorf(".gitignore = %q", b)
	}
}

func TestProjectNeverRecreated(t *testing.T) {
	proj := filepath.Join(t.TempDir(), "deleted")
	for _, f := range []func() error{
		func() error { return publish.EnsureDir(proj) },
		func() error { return publish.WriteOwn(proj, "handoff.md", []byte("x")) },
		func() error { _, err := publish.EnsurePointer(filepath.Join(proj, "AGENTS.md")); return err },
		func() error {
			return (&publish.Project{Root: proj, Home: filepath.Join(filepath.Dir(proj), "home")}).WriteProject("x", "claude")
		},
	} {
		if err := f(); err == nil {
			t.Errorf("a write into a missing project succeeded")
		}
	}
	if err := publish.EnsureDir(proj); !errors.Is(err, publish.ErrProjectGone) {
		t.Errorf("EnsureDir: %v", err)
	}
	if _, err := os.Stat(proj); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the project directory was re-created")
	}
}

func TestUserFilesHardLinkSpecialGit(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "p")
	os.MkdirAll(filepath.Join(proj, ".git"), 0o755)
	outside := filepath.Join(root, "outside.md")
	os.WriteFile(outside, []byte("mine\n"), 0o644)
	os.Link(outside, filepath.Join(proj, "AGENTS.md"))
	syscall.Mkfifo(filepath.Join(proj, "CLAUDE.md"), 0o644)
	os.WriteFile(filepath.Join(proj, ".git", "config"), []byte("[core]\n"), 0o644)
	os.Symlink(".git/config", filepath.Join(proj, "GEMINI.md"))
	for name, why := range map[string]string{
		"AGENTS.md": "hard links",
		"CLAUDE.md": "not a regular file",
		"GEMINI.md": "into the repository's .git",
	} {
		_, err := publish.EnsurePointer(filepath.Join(proj, name))
		if !errors.Is(err, publish.ErrLeftAlone) || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v, want left alone: %s", name, err, why)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "mine\n" {
		t.Errorf("hard-linked file changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf(".git/config changed: %q", b)
	}
}

// TestRemoveOwnFileNeverThroughSymlinks: `forget` deletes a handoff.md
// through RemoveOwnFile; a .carryover (or handoff.md) planted as a symlink
// out of the project never makes it delete the file it points at.
func TestRemoveOwnFileNeverThroughSymlinks(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(root, "outside")
	os.MkdirAll(outside, 0o755)
	victim := filepath.Join(outside, "handoff.md")
	os.WriteFile(victim, []byte("someone else's\n"), 0o644)

	dirLink := filepath.Join(root, "a")
	os.MkdirAll(dirLink, 0o755)
	os.Symlink(outside, filepath.Join(dirLink, ".carryover"))
	if err := publish.RemoveOwnFile(dirLink, "handoff.md"); err == nil {
		t.Error("removed through a symlinked .carryover")
	}

	fileLink := filepath.Join(root, "b")
	os.MkdirAll(filepath.Join(fileLink, ".carryover"), 0o755)
	os.Symlink(victim, filepath.Join(fileLink, ".carryover", "handoff.md"))
	publish.RemoveOwnFile(fileLink, "handoff.md") // removes the link itself, at most
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("the file a planted link pointed at is gone: %v", err)
	}

	own := filepath.Join(root, "c")
	os.MkdirAll(filepath.Join(own, ".carryover"), 0o755)
	os.WriteFile(filepath.Join(own, ".carryover", "handoff.md"), []byte("x"), 0o644)
	if err := publish.RemoveOwnFile(own, "handoff.md"); err != nil {
		t.Errorf("its own handoff.md: %v", err)
	}
	if _, err := os.Stat(filepath.Join(own, ".carryover", "handoff.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("its own handoff.md is still there: %v", err)
	}
}
