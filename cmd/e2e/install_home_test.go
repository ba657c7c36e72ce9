package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestInstallOddCarryoverHome: with a CARRYOVER_HOME whose path holds URI
// syntax ('#', '?', '%', spaces), install wires the real Claude Code, its
// hooks store the session in the ledger inside that home (and nowhere
// else), status reads it back, and uninstall restores settings.json (with
// its empty "hooks" object) byte for byte, leaving no backup behind.
func TestInstallOddCarryoverHome(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	coHome := filepath.Join(root, "carry over #1 ?mode=memory %41")
	claudeBin := filepath.Dir(Install(t, "claude"))
	settings := filepath.Join(home, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	orig := []byte(`{"skipDangerousModePermissionPrompt":true,"hooks":{}}`)
	os.WriteFile(settings, orig, 0o644)
	env := MergeEnv(BaseEnv(home), "PATH="+claudeBin+":/usr/local/bin:/usr/bin:/bin", "CARRYOVER_HOME="+coHome)

	out, errOut, code := runCarryover(t, env, root, "install", "--tools", "claude", "--yes")
	if code != 0 || !strings.Contains(out, "Claude Code 2.1.197") {
		t.Fatalf("install exit %d\n%s\n%s", code, out, errOut)
	}

	dir := filepath.Join(root, "proj")
	InitGitRepo(t, dir)
	task := "Odd home check: write the marker file"
	f := NewAnthropic(t, writeTurns("claude", dir, "Next I will check the marker."))
	if r := RunClaude(t, ClaudeOpts{Home: home, Dir: dir, BaseURL: f.URL(), Prompt: task, Env: []string{"CARRYOVER_HOME=" + coHome}}); r.ExitCode != 0 {
		t.Fatalf("claude: %s", r)
	}
	log, _ := os.ReadFile(filepath.Join(coHome, "carryover.log"))
	if h, err := os.ReadFile(filepath.Join(dir, ".carryover", "handoff.md")); err != nil || !strings.Contains(string(h), task) {
		t.Fatalf("no handoff from the hooks (%v):\n%s\nlog:\n%s", err, h, log)
	}
	if fi, err := os.Stat(filepath.Join(coHome, "ledger.sqlite")); err != nil || fi.Size() == 0 {
		t.Fatalf("ledger in the carryover home: %v %v\nlog:\n%s", fi, err, log)
	}
	// Nothing beside the home: SQLite did not open a truncated or decoded
	// variant of the path.
	entries, _ := os.ReadDir(root)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	if want := []string{filepath.Base(coHome), "home", "proj"}; !slices.Equal(names, want) {
		t.Errorf("files in %s = %q; want %q", root, names, want)
	}

	sj, _, code := runCarryover(t, env, dir, "status", "--json")
	var st struct {
		Ledger struct {
			Path   string
			ByTool map[string]int `json:"sessions_by_tool"`
		}
	}
	if err := json.Unmarshal([]byte(sj), &st); err != nil || code != 0 {
		t.Fatalf("status exit %d: %v\n%s", code, err, sj)
	}
	if st.Ledger.Path != filepath.Join(coHome, "ledger.sqlite") || st.Ledger.ByTool["claude"] < 1 {
		t.Errorf("status ledger = %+v", st.Ledger)
	}

	out, errOut, code = runCarryover(t, env, root, "uninstall")
	if code != 0 {
		t.Fatalf("uninstall exit %d\n%s\n%s", code, out, errOut)
	}
	if got, _ := os.ReadFile(settings); string(got) != string(orig) {
		t.Errorf("settings.json not restored:\nbefore %q\nafter  %q", orig, got)
	}
	if _, err := os.Stat(settings + ".carryover.bak"); err == nil {
		t.Errorf("uninstall left the backup although the restore is byte-identical:\n%s", out)
	}
}
