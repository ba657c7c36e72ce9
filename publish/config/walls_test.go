package config

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestProjectWalls: an untrusted project's [context] and [limits] apply over
// the user's only where they make carryover less intrusive (issue 21).
func TestProjectWalls(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	global := filepath.Join(home, "config.toml")
	os.WriteFile(global, []byte("[limits]\nmax_restarts = 4\n[context]\ncritical = 90\n"), 0o600)
	os.WriteFile(filepath.Join(project, ProjectConfigName), []byte("[limits]\nmax_restarts = 50\nwarn_percent = 80.0\n[context]\nwarn = 70\n"), 0o600)
	c, errs := loadPlain(global, "", project)
	if *c.Limits.MaxRestarts != 4 || c.Limits.WarnPercent != nil || c.Context.Warn != nil || *c.Context.Critical != 90 {
		t.Errorf("merged = %+v / %+v", c.Limits, c.Context)
	}
	if len(errs) != 3 || !strings.Contains(errs[1].Error(), "max_restarts = 50") || !strings.Contains(errs[2].Error(), "warn_percent = 80") ||
		!strings.Contains(errs[0].Error(), "early_warn/warn/critical = 65/70/90") {
		t.Errorf("errs = %v; want the raised max_restarts, the earlier warn_percent and warn ignored", errs)
	}
	os.WriteFile(filepath.Join(project, ProjectConfigName), []byte("[limits]\nmax_restarts = 1\nwarn_percent = 95.0\nauto_resume = false\n[context]\nearly_warn = 80\nwarn = 88\ncritical = 95\nrestart_at_critical = false\n"), 0o600)
	c, errs = loadPlain(global, "", project)
	if *c.Limits.MaxRestarts != 1 || *c.Limits.WarnPercent != 95 || *c.Limits.AutoResume || *c.Context.EarlyWarn != 80 ||
		*c.Context.Warn != 88 || *c.Context.Critical != 95 || *c.Context.RestartAtCritical || len(errs) != 0 {
		t.Errorf("less intrusive settings not all honoured: %+v / %+v, %v", c.Limits, c.Context, errs)
	}
}

// TestProjectWallsPlanted: the shapes a planted .carryover.toml takes to
// make carryover more intrusive are each ignored for an untrusted project
// and honoured for a trusted one.
func TestProjectWallsPlanted(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	global := filepath.Join(home, "config.toml")
	for _, tc := range []struct{ user, planted string }{
		{"", "[context]\ncritical = 3\n"},
		{"", "[context]\nearly_warn = 1\nwarn = 2\ncritical = 3\n"},
		{"", "[context]\nwarn = 10\n"},
		// Raising early_warn past warn is invalid: the defaults (65/75/85)
		// would be earlier than the user's own 90/95/99.
		{"[context]\nearly_warn = 90\nwarn = 95\ncritical = 99\n", "[context]\nearly_warn = 97\n"},
		{"[limits]\nwarn_percent = 95.0\n", "[limits]\nwarn_percent = 150.0\n"},
		{"[limits]\nwarn_percent = 95.0\n", "[limits]\nwarn_percent = 20.0\n"},
		{"[limits]\nmax_restarts = 2\n", "[limits]\nmax_restarts = -1\n"},
		{"", "[limits]\nmax_restarts = 1000\n"},
		{"[limits]\nauto_resume = false\n", "[limits]\nauto_resume = true\n"},
		{"[context]\nrestart_at_critical = false\n", "[context]\nrestart_at_critical = true\n"},
	} {
		os.WriteFile(global, []byte(tc.user), 0o600)
		os.WriteFile(filepath.Join(project, ProjectConfigName), []byte(tc.planted), 0o600)
		want, _ := loadPlain(global, "", "")
		got, errs := loadPlain(global, "", project)
		if g, w := wallsOf(got), wallsOf(want); g != w {
			t.Errorf("user %q + planted %q: %s; want the user's %s", tc.user, tc.planted, g, w)
		}
		if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), IgnoredPrefix) {
			t.Errorf("planted %q: errs = %v; want one ignored setting", tc.planted, errs)
		}
		os.WriteFile(global, []byte("trusted_projects = ["+strconv.Quote(project)+"]\n"+tc.user), 0o600)
		if got, errs := loadPlain(global, "", project); wallsOf(got) == wallsOf(want) || len(errs) != 0 {
			t.Errorf("trusted project: planted %q not honoured (%v)", tc.planted, errs)
		}
	}
}

func wallsOf(c Config) string {
	s := ""
	for _, p := range []*int{c.Limits.MaxRestarts, c.Context.EarlyWarn, c.Context.Warn, c.Context.Critical} {
		if p == nil {
			s += "- "
		} else {
			s += strconv.Itoa(*p) + " "
		}
	}
	for _, p := range []*bool{c.Limits.AutoResume, c.Context.RestartAtCritical} {
		if p == nil {
			s += "- "
		} else if *p {
			s += "on "
		} else {
			s += "off "
		}
	}
	if c.Limits.WarnPercent != nil {
		s += strconv.Itoa(int(*c.Limits.WarnPercent))
	}
	return s
}
