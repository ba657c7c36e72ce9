//go:build linux

package e2e

import (
	"archive/tar"
	"bytes"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/publish/service"
)

// Planted sessions without git (issue 23): a project unpacked from an
// archive is no git repository, so "git tracks it" cannot tell a shipped
// session file from the user's own. What does: an agent writes its session
// file in place, moving its modified and changed times together, while
// tar, unzip, cp -p and rsync -a set the modified time and the kernel
// stamps the changed time then; and tar run as root keeps the archive's
// owner. The defence was written from Aider's history unpacked by tar; the
// held-out cases are another agent's in-project store (Crush's
// .crush/crush.db) unpacked by unzip, and an archive owned by someone else.

// unpacked is a hostileRepo whose project is a plain directory (no .git).
func unpacked(t *testing.T) *hostileRepo {
	h := newHostileRepo(t, nil)
	if err := os.RemoveAll(h.in(".git")); err != nil {
		t.Fatal(err)
	}
	return h
}

// untar unpacks files (name → content) into dir with the system's tar, from
// an archive whose entries are dated mtime and owned by uid.
func untar(t *testing.T, dir string, mtime time.Time, uid int, files map[string]string) {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for name, data := range files {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: mtime, Uid: uid, Gid: uid, Typeflag: tar.TypeReg})
		tw.Write([]byte(data))
	}
	tw.Close()
	archive := filepath.Join(t.TempDir(), "release.tar")
	os.WriteFile(archive, b.Bytes(), 0o644)
	if out, err := exec.Command("tar", "-xf", archive, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
}

func TestHostilePlantedUnpacked(t *testing.T) {
	yesterday := time.Now().Add(-24 * time.Hour).Format("2006-01-02 15:04:05")
	weekAgo := time.Now().Add(-7 * 24 * time.Hour)

	// Control: the user's own Aider history, written in place and newer
	// than the Claude session, is chosen unnamed.
	h := unpacked(t)
	os.WriteFile(h.in(".aider.chat.history.md"), []byte(aiderHistory(yesterday, "rename the retry helper")), 0o644)
	if _, errOut, code := h.run("handoff", "--stdout", "--no-clipboard"); code != 0 || !strings.Contains(errOut, "using aider session") {
		t.Fatalf("the user's own Aider history was not chosen (exit %d):\n%s", code, errOut)
	}

	// Written from: the same file shipped in a tarball.
	h = unpacked(t)
	untar(t, h.project, weekAgo, os.Getuid(), map[string]string{".aider.chat.history.md": aiderHistory(yesterday, plantedTask)})
	out, errOut, code := h.run("handoff", "--stdout", "--no-clipboard")
	if code != 0 || !strings.Contains(errOut, "using claude session") || !strings.Contains(errOut, service.NotYoursUnpacked) {
		t.Fatalf("handoff exit %d; want the Claude session and the unpacked history passed over:\n%s", code, errOut)
	}
	noPlanted(t, "handoff", out)
	if list, _, _ := h.run("list", "--json"); !strings.Contains(list, `"not_yours": "`+service.NotYoursUnpacked) {
		t.Errorf("list --json does not mark the unpacked session:\n%s", list)
	}
	if out, errOut, code := h.run("handoff", "--transcript", ".aider.chat.history.md", "--stdout", "--no-clipboard"); code != 0 || !strings.Contains(out, plantedTask) {
		t.Errorf("--transcript names the unpacked history and must read it: exit %d\n%s", code, errOut)
	}
	// The user's Aider appends to it: the file is written here now, and
	// the newest session in it, the user's, is chosen.
	f, _ := os.OpenFile(h.in(".aider.chat.history.md"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(aiderHistory(time.Now().Add(-time.Hour).Format("2006-01-02 15:04:05"), "rename the retry helper"))
	f.Close()
	out, errOut, _ = h.run("handoff", "--stdout", "--no-clipboard")
	if !strings.Contains(errOut, "using aider session") || !strings.Contains(out, "rename the retry helper") {
		t.Errorf("after the user's Aider wrote to the history, its own session was not chosen:\n%s", errOut)
	}
	noPlanted(t, "handoff after the user's write", out)

	t.Run("held-out/crush-unzip", func(t *testing.T) {
		h := unpacked(t)
		_, file, _, _ := runtime.Caller(0)
		script, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "testdata", "adapters", "crush", "0.9x", "session.sql"))
		if err != nil {
			t.Fatal(err)
		}
		src := t.TempDir()
		db, _ := sql.Open("sqlite3", "file:"+filepath.Join(src, ".crush", "crush.db")+"?_journal_mode=DELETE")
		os.MkdirAll(filepath.Join(src, ".crush"), 0o755)
		if _, err := db.Exec(string(script) + ";PRAGMA journal_mode=DELETE"); err != nil {
			t.Fatal(err)
		}
		db.Close()
		os.Chtimes(filepath.Join(src, ".crush", "crush.db"), weekAgo, weekAgo)
		zip := filepath.Join(t.TempDir(), "release.zip")
		if out, err := exec.Command("sh", "-c", "cd "+src+" && zip -qr "+zip+" .crush && cd "+h.project+" && unzip -q "+zip).CombinedOutput(); err != nil {
			t.Fatalf("zip: %v\n%s", err, out)
		}
		list, _, _ := h.run("list", "--source", "crush", "--json")
		if !strings.Contains(list, `"agent": "crush"`) || strings.Count(list, `"agent": "crush"`) != strings.Count(list, `"not_yours": "`+service.NotYoursUnpacked) {
			t.Errorf("list --json does not mark every unzipped Crush session:\n%s", list)
		}
		if _, errOut, code := h.run("handoff", "--source", "crush", "--stdout", "--no-clipboard"); code == 0 || !strings.Contains(errOut, "no session of yours") {
			t.Errorf("handoff --source crush of an unzipped crush.db: exit %d\n%s", code, errOut)
		}
	})
	t.Run("held-out/foreign-owner", func(t *testing.T) {
		if os.Getuid() != 0 {
			// CI runs as root: there a skip would prove nothing, so it fails instead.
			if os.Getenv("CI") == "true" {
				t.Fatal("CI must run as root: only root's tar keeps an archive's owner, which this check needs")
			}
			t.Skip("only root's tar keeps an archive's owner")
		}
		h := unpacked(t)
		untar(t, h.project, time.Now(), 4242, map[string]string{".aider.chat.history.md": aiderHistory(yesterday, plantedTask)})
		out, errOut, _ := h.run("handoff", "--stdout", "--no-clipboard")
		if !strings.Contains(errOut, "using claude session") || !strings.Contains(errOut, service.NotYoursOwner) {
			t.Errorf("handoff did not pass over a history owned by uid 4242:\n%s", errOut)
		}
		noPlanted(t, "handoff", out)
	})
}
