package config

import (
	"github.com/pelletier/go-toml/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestEveryFieldIsAKey: every key Config decodes (its toml tags) is a documented key, so decode never reports a
// field's own key as unknown.
func TestEveryFieldIsAKey(t *testing.T) {
	typ := reflect.TypeOf(Config{})
	for i := range typ.NumField() {
		if name, _, _ := strings.Cut(typ.Field(i).Tag.Get("toml"), ","); name != "" && name != "-" {
			if _, ok := LookupKey(name); !ok {
				t.Errorf("Config field %s decodes key %q, which keys does not document", typ.Field(i).Name, name)
			}
		}
	}
}

func TestProjectConfigMayOnlyMakeSafer(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	global := filepath.Join(home, "config.toml")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	projFile := filepath.Join(proj, ProjectConfigName)
	cases := []struct {
		name, global, project string
		redact                bool
		resume                string
		ignored               []string // substrings, one per ignored item
	}{
		{"no files", "", "", true, "", nil},
		{"project turns redaction off", "", "redact = false\n", true, "", []string{"redact = false"}},
		{"user turns it off", "redact = false\n", "", false, "", nil},
		{"project turns it back on", "redact = false\n", "redact = true\n", true, "", nil},
		{"project asks for less visible resume", "", "resume = \"silent\"\n", true, "", []string{`resume = "silent"`}},
		{"project asks for more visible resume", "resume = \"brief\"\n", "resume = \"ask\"\n", true, "ask", nil},
		{"trusted project may weaken", "trusted_projects = [" + tomlQuote(proj) + "]\n", "redact = false\nresume = \"silent\"\n", false, "silent", nil},
		{"trusted elsewhere only", "trusted_projects = [\"/somewhere/else\"]\n", "redact = false\n", true, "", []string{"redact = false"}},
		{"project cannot trust itself", "", "trusted_projects = [" + tomlQuote(proj) + "]\nredact = false\n", true, "", []string{"redact = false", "trusted_projects in"}},
		{"tools and unknown keys", "", "tools = [\"claude\"]\nexec = \"rm -rf ~\"\n", true, "", []string{"tools in", `unknown setting "exec"`}},
		{"bad resume value", "", "resume = \"loud\"\n", true, "", []string{"not one of"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(global)
			os.Remove(projFile)
			if c.global != "" {
				write(global, c.global)
			}
			if c.project != "" {
				write(projFile, c.project)
			}
			cfg, errs := loadPlain(global, "", proj)
			if cfg.RedactOn() != c.redact || cfg.Resume != c.resume {
				t.Errorf("redact=%v resume=%q, want %v %q", cfg.RedactOn(), cfg.Resume, c.redact, c.resume)
			}
			if len(cfg.Ignored) != len(c.ignored) || len(errs) != len(c.ignored) {
				t.Fatalf("ignored %q (errors %v), want %d items", cfg.Ignored, errs, len(c.ignored))
			}
			all := strings.Join(cfg.Ignored, "\n")
			for _, want := range c.ignored {
				if !strings.Contains(all, want) {
					t.Errorf("ignored %q does not mention %q", cfg.Ignored, want)
				}
			}
		})
	}
}

// TestProjectConfigSymlinkNotFollowed: a project's .carryover.toml that is
// a symlink (to a file elsewhere on the machine) is not read.
func TestProjectConfigSymlinkNotFollowed(t *testing.T) {
	home, proj, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	target := filepath.Join(elsewhere, "c.toml")
	os.WriteFile(target, []byte("redact = true\nresume = \"ask\"\n"), 0o600)
	os.Symlink(target, filepath.Join(proj, ProjectConfigName))
	cfg, errs := loadPlain(filepath.Join(home, "config.toml"), home, proj)
	if cfg.Resume != "" || len(errs) != 1 {
		t.Fatalf("cfg %+v errs %v; want the symlink refused with one error", cfg, errs)
	}
}

func tomlQuote(s string) string { return "'" + s + "'" }

// loadPlain is Load decoding without the key table: the policy's tests
// hand it values the table would have warned about and dropped.
func loadPlain(globalPath, home, project string) (Config, []error) {
	return load(globalPath, home, project, func(path string, b []byte, global bool) (Config, map[string]any, []error, error) {
		var keys map[string]any
		var c Config
		if err := toml.Unmarshal(b, &keys); err != nil {
			return c, nil, nil, err
		}
		if err := toml.Unmarshal(b, &c); err != nil {
			return Config{}, nil, nil, err
		}
		return c, keys, nil, nil
	})
}
