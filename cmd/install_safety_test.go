package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallRefusesReadOnlyConfig: a read-only settings.json is not
// replaced; install says which file and what to do, and exits non-zero.
func TestInstallRefusesReadOnlyConfig(t *testing.T) {
	f := newInstallFixture(t, map[string]string{"claude": `2.1.197 (Claude Code)\n`})
	settings := filepath.Join(f.home, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	orig := []byte("{\"theme\": \"dark\"}\n")
	os.WriteFile(settings, orig, 0o444)
	if code := f.run(t, "install", "--tools", "claude", "--yes"); code == 0 {
		t.Fatalf("install exit 0 over a read-only settings.json:\n%s", f.out)
	}
	out := f.out.String()
	if !strings.Contains(out, "failed   Claude Code 2.1.197: "+settings+" is read-only") || !strings.Contains(out, "chmod u+w") {
		t.Errorf("output lacks the refusal and the fix:\n%s", out)
	}
	if b, _ := os.ReadFile(settings); string(b) != string(orig) {
		t.Errorf("settings.json changed: %q", b)
	}
	if fi, _ := os.Stat(settings); fi.Mode().Perm() != 0o444 {
		t.Errorf("mode changed: %v", fi.Mode().Perm())
	}
	if _, err := os.Stat(settings + ".carryover.bak"); err == nil {
		t.Errorf("a backup was written for a file that was not changed")
	}
}

// TestUninstallNamesKeptBackup: when the user changed a config after
// install, uninstall keeps the backup and says where it is.
func TestUninstallNamesKeptBackup(t *testing.T) {
	f := newInstallFixture(t, map[string]string{"claude": `2.1.197 (Claude Code)\n`})
	settings := filepath.Join(f.home, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	os.WriteFile(settings, []byte("{\"theme\": \"dark\"}\n"), 0o644)
	if code := f.run(t, "install", "--tools", "claude", "--yes"); code != 0 {
		t.Fatalf("install exit %d:\n%s%s", code, f.out, f.errb)
	}
	b, _ := os.ReadFile(settings)
	os.WriteFile(settings, []byte(strings.Replace(string(b), "dark", "light", 1)), 0o644)
	if code := f.run(t, "uninstall"); code != 0 {
		t.Fatalf("uninstall exit %d:\n%s%s", code, f.out, f.errb)
	}
	if !strings.Contains(f.out.String(), "note     kept "+settings+".carryover.bak") {
		t.Errorf("uninstall does not name the kept backup:\n%s", f.out)
	}
	if got, _ := os.ReadFile(settings); string(got) != "{\"theme\": \"light\"}\n" {
		t.Errorf("settings.json = %q", got)
	}
}
