package publish

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProjectWalls: a project's [context] and [limits] apply over the
// user's, but an untrusted project may only lower max_restarts.
func TestProjectWalls(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	global := filepath.Join(home, "config.toml")
	os.WriteFile(global, []byte("[limits]\nmax_restarts = 4\n[context]\ncritical = 90\n"), 0o600)
	os.WriteFile(filepath.Join(project, ProjectConfigName), []byte("[limits]\nmax_restarts = 50\nwarn_percent = 80.0\n[context]\nwarn = 70\n"), 0o600)
	c, errs := LoadConfig(global, project)
	if *c.Limits.MaxRestarts != 4 || *c.Limits.WarnPercent != 80 || *c.Context.Warn != 70 || *c.Context.Critical != 90 {
		t.Errorf("merged = %+v / %+v", c.Limits, c.Context)
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "max_restarts = 50") {
		t.Errorf("errs = %v; want the raised max_restarts ignored", errs)
	}
	os.WriteFile(filepath.Join(project, ProjectConfigName), []byte("[limits]\nmax_restarts = 1\n"), 0o600)
	if c, _ := LoadConfig(global, project); *c.Limits.MaxRestarts != 1 {
		t.Errorf("a lower max_restarts was not honoured: %d", *c.Limits.MaxRestarts)
	}
}
