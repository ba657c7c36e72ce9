package cmd

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/publish/resume"
)

// TestRealworldCommittedAider puts each aider history of the realworld
// corpus where the repositories it came from had it — committed at the
// project root — and checks what issue 21 asks: `handoff` with no flags
// never takes it for the user's session (it says it passed it over), while
// `handoff --transcript` still reads it in full, under a ledger key of its
// own, so the project has no session from it. `just realworld` runs it.
func TestRealworldCommittedAider(t *testing.T) {
	dir := realworldDir()
	files, _ := filepath.Glob(filepath.Join(dir, "aider", "*"))
	if len(files) == 0 {
		t.Skipf("no aider histories in the realworld corpus at %s", dir)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is needed to build the repositories")
	}
	sort.Strings(files)
	auto, named := 0, 0
	for _, f := range files {
		proj := t.TempDir()
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(proj, ".aider.chat.history.md"), b, 0o644)
		for _, args := range [][]string{{"init", "-q"}, {"add", ".aider.chat.history.md"}} {
			c := exec.Command("git", args...)
			c.Dir = proj
			if out, err := c.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		home := t.TempDir()
		e, _, errb := manualEnv(t, map[string]string{"CARRYOVER_HOME": home}, func(string) error { return nil })
		rc := Main([]string{"carryover", "handoff", "--project", proj, "--stdout", "--no-clipboard"}, e)
		if rc == 0 {
			auto++
			t.Errorf("%s: handoff took the committed history for the user's session", filepath.Base(f))
		} else if !strings.Contains(errb.String(), "its file is tracked by git") {
			t.Errorf("%s: exit %d without saying why:\n%s", filepath.Base(f), rc, errb)
		}
		e, out, errb := manualEnv(t, map[string]string{"CARRYOVER_HOME": home}, func(string) error { return nil })
		rc = Main([]string{"carryover", "handoff", "--project", proj, "--transcript", filepath.Join(proj, ".aider.chat.history.md"), "--source", "aider",
			"--format", "json", "--stdout", "--no-clipboard"}, e)
		var h resume.Handoff
		if rc != 0 || json.Unmarshal(out.Bytes(), &h) != nil || strings.TrimSpace(h.Goal) == "" {
			t.Errorf("%s: --transcript: exit %d, goal %q\n%s", filepath.Base(f), rc, h.Goal, errb)
			continue
		}
		named++
		l, err := ledger.Open(home)
		if err != nil {
			t.Fatal(err)
		}
		if ss, _ := l.Sessions(proj, "", 10); len(ss) != 0 {
			t.Errorf("%s: the imported history became %d session(s) of the project", filepath.Base(f), len(ss))
		}
		l.Close()
	}
	t.Logf("committed aider histories: %d, taken automatically %d, read with --transcript %d", len(files), auto, named)
}
