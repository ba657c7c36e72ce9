package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHandoffStdoutTTYStripsEscapes: transcript text with terminal escapes
// (a title change, a screen clear, an OSC 52 clipboard write) reaches
// `handoff --stdout` on a terminal without them. RESUME.md (and a pipe)
// lose them too: every string of a resume prompt is cleaned of escapes,
// controls and invisible characters (resume.cleanText), since a file that
// `cat` shows must not drive the terminal and a model gains nothing from
// them; the words around them stay.
func TestHandoffStdoutTTYStripsEscapes(t *testing.T) {
	project := t.TempDir()
	tr := filepath.Join(t.TempDir(), "s.jsonl")
	prompt := "fix the parser \x1b]0;pwned\x07\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07 now"
	line := fmt.Sprintf(`{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":%q},"uuid":"u1","timestamp":"2026-11-21T10:00:00Z","promptSource":"sdk","sessionId":"s1"}`+"\n", prompt)
	line = strings.ReplaceAll(line, `\x1b`, `\u001b`)
	line = strings.ReplaceAll(line, `\a`, `\u0007`)
	if err := os.WriteFile(tr, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tty := range []bool{true, false} {
		e, out, errb := manualEnv(t, nil, nil)
		e.StdoutTTY = tty
		code := Main([]string{"carryover", "handoff", "--transcript", tr, "--source", "claude", "--project", project, "--stdout", "--no-clipboard"}, e)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		got := out.String()
		if !strings.Contains(got, "fix the parser") {
			t.Fatalf("the prompt is not in the output:\n%s", got)
		}
		if tty && strings.ContainsAny(got, "\x1b\x07") {
			t.Errorf("escapes reached a terminal: %q", got)
		}
		if strings.ContainsAny(got, "\x1b\x07") || !strings.Contains(got, "now") {
			t.Errorf("escapes reached the output, or the words around them did not (tty %v): %q", tty, got)
		}
	}
}

// TestLogLinesAreSanitised: a session id or path from a payload cannot
// break a log line or carry a terminal escape into it.
func TestLogLinesAreSanitised(t *testing.T) {
	e, _, _ := manualEnv(t, nil, nil)
	log := newLogger(e)
	log.Prefix = "snapshot session=" + "ab\x1b]0;t\x07\n2026-01-01T00:00:00Z forged "
	log.Printf("transcript %s: %v", "/tmp/x\r\ny\u2028z", "boom\x1b[2J")
	b, err := os.ReadFile(filepath.Join(e.Home(), "carryover.log"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 1 || strings.ContainsAny(string(b), "\x1b\x07\r\u2028") {
		t.Errorf("log line not sanitised: %q", b)
	}
}
