package cmd

import (
	"github.com/carryover/carryover/publish/config"
	"github.com/carryover/carryover/specs/hookconf"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// TestConfigWarningInHookLog: a misspelt key in the project's
// .carryover.toml is named in carryover.log by the hook, with the file
// and the closest valid key, and the valid keys beside it still apply.
func TestConfigWarningInHookLog(t *testing.T) {
	project := t.TempDir()
	e, out := hookEnv(t, project)
	// The user turned redaction off; the project turns it back on (a
	// project file may only make carryover safer, so that is honoured).
	os.MkdirAll(e.Home(), 0o700)
	os.WriteFile(e.ConfigPath(), []byte("redact = false\n"), 0o600)
	os.WriteFile(filepath.Join(project, ".carryover.toml"), []byte("resume_mode = \"brief\"\nredact = true\n"), 0o644)
	os.MkdirAll(filepath.Join(project, ".carryover"), 0o700)
	os.WriteFile(filepath.Join(project, ".carryover", "handoff.md"), []byte("# carryover handoff\n"), 0o600)
	runSnap(e, "SessionStart", map[string]any{"session_id": "s1", "transcript_path": filepath.Join(project, "none.jsonl"), "cwd": project, "source": "startup"})
	log, _ := os.ReadFile(filepath.Join(e.Home(), "carryover.log"))
	want := filepath.Join(project, ".carryover.toml") + `: unknown key "resume_mode" ignored; did you mean "resume"?`
	if !strings.Contains(string(log), want) {
		t.Fatalf("log lacks %q:\n%s", want, log)
	}
	_ = out
	cfg, _ := LoadConfig(e, project)
	if !cfg.RedactOn() {
		t.Error("redact = true beside the unknown key was not applied")
	}
}

func TestClosestKey(t *testing.T) {
	known := []string{"resume", "redact", "tools"}
	for k, want := range map[string]string{
		"resume_mode": `did you mean "resume"?`,
		"Resume":      `did you mean "resume"?`,
		"redaction":   `did you mean "redact"?`,
		"tool":        `did you mean "tools"?`,
		"xyzzyplugh":  `the closest valid key is`,
	} {
		if got := config.ClosestHint(k, known); !strings.Contains(got, want) {
			t.Errorf("config.ClosestHint(%q) = %q, want %q", k, got, want)
		}
	}
}

// TestSetTOMLKey: one key changes, every other byte stays.
func TestSetTOMLKey(t *testing.T) {
	for _, tt := range []struct{ before, key, lit, want string }{
		{"", "resume", `"brief"`, "resume = \"brief\"\n"},
		{"# c\nresume = 'ask' # why\nredact = true\n", "resume", `"silent"`, "# c\nresume = \"silent\" # why\nredact = true\n"},
		{"redact = true\n[extra]\nresume = 1\n", "resume", `"ask"`, "redact = true\nresume = \"ask\"\n\n[extra]\nresume = 1\n"},
		{"tools = [\n  \"a\", # x\n  \"b\",\n]\nredact = false\n", "tools", `["claude"]`, "tools = [\"claude\"]\nredact = false\n"},
		{"  redact = true", "redact", "false", "  redact = false"},
	} {
		got, err := hookconf.SetKey([]byte(tt.before), tt.key, tt.lit)
		if err != nil || string(got) != tt.want {
			t.Errorf("hookconf.SetKey(%q, %s, %s) = %q, %v; want %q", tt.before, tt.key, tt.lit, got, err, tt.want)
		}
	}
	if _, err := hookconf.SetKey([]byte("a = [\n"), "resume", `"ask"`); err == nil {
		t.Error("a broken file was edited without an error")
	}
}

// TestSetTOMLKeyDotted: a key inside a table is found by the TOML parser,
// replaced in place, added at the end of its table, or the table created.
func TestSetTOMLKeyDotted(t *testing.T) {
	for _, tt := range []struct{ before, key, lit, want string }{
		{"", "limits.warn_percent", "80", "[limits]\nwarn_percent = 80\n"},
		{"resume = \"ask\"\n", "limits.warn_percent", "80", "resume = \"ask\"\n\n[limits]\nwarn_percent = 80\n"},
		{"# mine\n[limits] # walls\nwarn_percent = 90 # was 95\nauto_resume = true\n\n[context]\nwarn = 70\n",
			"limits.warn_percent", "80",
			"# mine\n[limits] # walls\nwarn_percent = 80 # was 95\nauto_resume = true\n\n[context]\nwarn = 70\n"},
		{"[limits]\nauto_resume = true\n\n[context]\nwarn = 70\n", "limits.max_restarts", "3",
			"[limits]\nauto_resume = true\nmax_restarts = 3\n\n[context]\nwarn = 70\n"},
		{"[limits]\n", "limits.max_restarts", "3", "[limits]\nmax_restarts = 3\n"},
		// A dotted key at the top level is the same key.
		{"limits.warn_percent = 90\n", "limits.warn_percent", "70", "limits.warn_percent = 70\n"},
		// A string holding "[limits]" and a same-named key in another table are not it.
		{"note = \"\"\"\n[limits]\nwarn_percent = 1\n\"\"\"\n[other]\nwarn_percent = 2\n", "limits.warn_percent", "80",
			"note = \"\"\"\n[limits]\nwarn_percent = 1\n\"\"\"\n[other]\nwarn_percent = 2\n\n[limits]\nwarn_percent = 80\n"},
		// A top-level key goes before the first table.
		{"[limits]\nwarn_percent = 90\n", "resume", `"brief"`, "resume = \"brief\"\n\n[limits]\nwarn_percent = 90\n"},
	} {
		got, err := hookconf.SetKey([]byte(tt.before), tt.key, tt.lit)
		if err != nil || string(got) != tt.want {
			t.Errorf("hookconf.SetKey(%q, %s, %s) =\n%q, %v; want\n%q", tt.before, tt.key, tt.lit, got, err, tt.want)
		}
	}
	if _, err := hookconf.SetKey([]byte("limits = {warn_percent = 90}\n"), "limits.warn_percent", "80"); err == nil || !strings.Contains(err.Error(), "inline") {
		t.Errorf("inline table edited: %v", err)
	}
}

func TestUnsetTOMLKey(t *testing.T) {
	for _, tt := range []struct{ before, key, want string }{
		{"# c\nresume = \"ask\" # why\nredact = true\n", "resume", "# c\nredact = true\n"},
		{"[limits]\nwarn_percent = 80 # mine\nauto_resume = true\n", "limits.warn_percent", "[limits]\nauto_resume = true\n"},
		{"tools = [\n  \"a\",\n  \"b\",\n]\nredact = false\n", "tools", "redact = false\n"},
		{"redact = true", "redact", ""},
	} {
		got, changed, err := hookconf.UnsetKey([]byte(tt.before), tt.key)
		if err != nil || !changed || string(got) != tt.want {
			t.Errorf("hookconf.UnsetKey(%q, %s) = %q, %v, %v; want %q", tt.before, tt.key, got, changed, err, tt.want)
		}
	}
	if got, changed, err := hookconf.UnsetKey([]byte("[other]\nresume = 1\n"), "resume"); changed || err != nil || string(got) != "[other]\nresume = 1\n" {
		t.Errorf("unset of an absent key changed the file: %q %v %v", got, changed, err)
	}
}

func FuzzSetTOMLKey(f *testing.F) {
	f.Add("# c\n[limits]\nwarn_percent = 90 # x\n", "limits.warn_percent")
	f.Add("resume = 'ask'\n[context]\nwarn = 1\n", "resume")
	f.Add("a = [\n 1,\n]\n", "context.warn")
	f.Fuzz(func(t *testing.T, doc, key string) {
		if key == "" || strings.ContainsAny(key, " \t\n\"'=#[]{}") || strings.Contains(key, "..") || key[0] == '.' || key[len(key)-1] == '.' {
			return
		}
		out, err := hookconf.SetKey([]byte(doc), key, "42")
		if err != nil {
			return
		}
		var m map[string]any
		if toml.Unmarshal(out, &m) != nil {
			t.Fatalf("set %s made invalid TOML: %q", key, out)
		}
		if v, ok := hookconf.LookupPath(m, strings.Split(key, ".")); !ok || v != int64(42) {
			t.Fatalf("set %s: value %v in %q", key, v, out)
		}
		back, changed, err := hookconf.UnsetKey(out, key)
		if err != nil || !changed {
			t.Fatalf("unset %s after set: %v %v", key, changed, err)
		}
		if toml.Unmarshal(back, &m) != nil {
			t.Fatalf("unset %s made invalid TOML: %q", key, back)
		}
	})
}
