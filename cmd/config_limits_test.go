package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigWalls: [limits] and [context] are read, shown by `carryover
// config`, and a misspelt key inside them is warned with the closest one.
func TestConfigWalls(t *testing.T) {
	project := t.TempDir()
	e, _ := hookEnv(t, project)
	os.MkdirAll(e.Home(), 0o700)
	os.WriteFile(e.ConfigPath(), []byte("[limits]\nwarn_percent = 80\nmax_restarts = 2\n[context]\nwarn = 70\ncritical = 90\n"), 0o600)
	cfg, errs := LoadConfig(e, project)
	w := cfg.Walls()
	if len(errs) != 0 || w.WarnPercent() != 80 || w.MaxRestarts() != 2 || w.Thresholds().Warn != 70 || w.Thresholds().Critical != 90 {
		t.Fatalf("config = %+v %+v, errs %v", cfg.Limits, cfg.Context, errs)
	}
	vals, _ := resolveConfig(e, project)
	var got []string
	for _, v := range vals {
		if v.Key == "limits" || v.Key == "context" {
			got = append(got, v.Key+"="+v.Value)
		}
	}
	if want := "limits={auto_resume = true, warn_percent = 80, max_restarts = 2} context={early_warn = 65, warn = 70, critical = 90, restart_at_critical = true}"; strings.Join(got, " ") != want {
		t.Errorf("config shows %q; want %q", strings.Join(got, " "), want)
	}
	os.WriteFile(e.ConfigPath(), []byte("[context]\ncritcal = 90\n"), 0o600)
	_, errs = LoadConfig(e, project)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `unknown key "critcal" in [context]; did you mean "critical"?`) {
		t.Errorf("errs = %v", errs)
	}
	os.WriteFile(filepath.Join(e.Home(), "config.toml"), []byte("[limits]\nwarn_percent = 250\n"), 0o600)
	if _, errs = LoadConfig(e, project); len(errs) != 1 || !strings.Contains(errs[0].Error(), "within 1..100") {
		t.Errorf("errs = %v", errs)
	}
}
