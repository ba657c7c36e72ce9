package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		if got := closestHint(k, known); !strings.Contains(got, want) {
			t.Errorf("closestHint(%q) = %q, want %q", k, got, want)
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
		got, err := setTOMLKey([]byte(tt.before), tt.key, tt.lit)
		if err != nil || string(got) != tt.want {
			t.Errorf("setTOMLKey(%q, %s, %s) = %q, %v; want %q", tt.before, tt.key, tt.lit, got, err, tt.want)
		}
	}
	if _, err := setTOMLKey([]byte("a = [\n"), "resume", `"ask"`); err == nil {
		t.Error("a broken file was edited without an error")
	}
}
