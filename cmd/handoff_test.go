package cmd

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// manualEnv is an Env over buffers for the manual-path tests.
func manualEnv(t *testing.T, vars map[string]string, clip func(string) error) (*Env, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	var out, errb bytes.Buffer
	if vars == nil {
		vars = map[string]string{}
	}
	if _, ok := vars["CARRYOVER_HOME"]; !ok {
		vars["CARRYOVER_HOME"] = t.TempDir()
	}
	if _, ok := vars["HOME"]; !ok {
		vars["HOME"] = t.TempDir()
	}
	wd, _ := os.Getwd() // the test's package directory: relative paths in tests are relative to it
	return &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] },
		Now: func() time.Time { return scriptNow }, Clipboard: clip, WorkDir: wd}, &out, &errb
}

func TestOSC52Bytes(t *testing.T) {
	if got, want := OSC52("hi", false), "\x1b]52;c;aGk=\a"; got != want {
		t.Errorf("OSC52 = %q, want %q", got, want)
	}
	if got, want := OSC52("hi", true), "\x1bPtmux;\x1b\x1b]52;c;aGk=\a\x1b\\"; got != want {
		t.Errorf("OSC52 in tmux = %q, want %q", got, want)
	}
}

func TestCopyText(t *testing.T) {
	const text = "resume prompt ✓"
	osc := "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte(text)) + "\a"
	cases := []struct {
		name     string
		vars     map[string]string
		clipErr  error
		tty      bool
		wantClip bool
		wantOut  string
		wantNote string
	}{
		{"system clipboard", nil, nil, false, true, "", "copied to the clipboard"},
		{"clipboard fails, terminal", nil, errors.New("xclip not found\nmore"), true, true, osc, "OSC 52"},
		{"clipboard fails, no terminal", nil, errors.New("xclip not found"), false, true, "", "clipboard unavailable: xclip not found; the prompt is in /p/RESUME.md"},
		{"ssh with terminal", map[string]string{"SSH_TTY": "/dev/pts/1"}, nil, true, false, osc, "OSC 52) over SSH"},
		{"ssh without terminal", map[string]string{"SSH_CONNECTION": "1 2 3 4"}, nil, false, false, "", "the prompt is in /p/RESUME.md"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			e, out, _ := manualEnv(t, c.vars, func(s string) error { got = append(got, s); return c.clipErr })
			e.StdoutTTY = c.tty
			note := copyText(e, text, "/p/RESUME.md")
			if (len(got) > 0) != c.wantClip || (c.wantClip && got[0] != text) {
				t.Errorf("clipboard writes %q", got)
			}
			if out.String() != c.wantOut {
				t.Errorf("stdout %q, want %q", out.String(), c.wantOut)
			}
			if !strings.Contains(note, c.wantNote) || strings.Contains(note, "\n") {
				t.Errorf("note %q, want %q", note, c.wantNote)
			}
		})
	}
}

// secretTranscript is a Claude transcript whose prompt carries a secret.
func secretTranscript(t *testing.T, dir string) (string, string) {
	t.Helper()
	secret := "ghp_" + strings.Repeat("A1b2C3d4", 5) // 36-char GitHub token shape
	line := `{"type":"user","uuid":"u1","sessionId":"aaaabbbb-cccc-dddd-eeee-ffff00001111","cwd":"/x","timestamp":"2026-11-21T08:00:00Z","promptSource":"typed","message":{"role":"user","content":"Deploy with token ` + secret + ` and fix the failing login test"}}` + "\n" +
		`{"type":"assistant","uuid":"a1","sessionId":"aaaabbbb-cccc-dddd-eeee-ffff00001111","cwd":"/x","timestamp":"2026-11-21T08:00:05Z","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"Next I will export GITHUB_TOKEN=` + secret + ` and rerun."}]}}` + "\n"
	p := filepath.Join(dir, "secret.jsonl")
	if err := os.WriteFile(p, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, secret
}

// TestEgressRedacted: the secret reaches none of RESUME.md, stdout, the
// clipboard, session.json or the YAML handoff.
func TestEgressRedacted(t *testing.T) {
	project := t.TempDir()
	tr, secret := secretTranscript(t, t.TempDir())
	var clip []string
	e, out, errb := manualEnv(t, nil, func(s string) error { clip = append(clip, s); return nil })
	sel := selection{transcript: tr, project: project}
	for _, format := range []string{"md", "yaml", "json"} {
		if err := runHandoff(e, sel, outputOptions{target: "universal", format: format, stdout: true}); err != nil {
			t.Fatalf("%s: %v (%s)", format, err, errb)
		}
	}
	if err := runCapture(e, sel, true); err != nil {
		t.Fatal(err)
	}
	check := func(what, s string) {
		if strings.Contains(s, secret) {
			t.Errorf("%s leaks the secret", what)
		}
	}
	check("stdout", out.String())
	check("stderr", errb.String())
	for _, c := range clip {
		check("clipboard", c)
	}
	for _, f := range []string{"RESUME.md", "RESUME.yaml", "RESUME.json", "session.json"} {
		b, err := os.ReadFile(filepath.Join(project, ".carryover", f))
		if err != nil {
			t.Fatal(err)
		}
		check(f, string(b))
		if !strings.Contains(string(b), "REDACTED") {
			t.Errorf("%s: no redaction marker", f)
		}
	}
	if len(clip) != 3 || !strings.Contains(out.String(), "fix the failing login test") {
		t.Errorf("clipboard writes %d; stdout %q", len(clip), out.String())
	}
}

func TestLaunchNeverPutsPromptInArgv(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var argv []string
	project := t.TempDir()
	e, _, _ := manualEnv(t, map[string]string{"PATH": bin}, nil)
	e.StartProcess = func(dir string, a []string) error { argv = a; return nil }
	text := strings.Repeat("very long prompt ", 20000)
	err := deliver(e, project, text, "stats", outputOptions{format: "md", noClipboard: true, launch: "claude"}, func(s string) string { return s })
	if err != nil {
		t.Fatal(err)
	}
	if len(argv) != 2 || !strings.HasSuffix(argv[0], "/claude") || strings.Contains(argv[1], "very long prompt") || !strings.Contains(argv[1], "RESUME.md") {
		t.Errorf("argv %q", argv)
	}
}
