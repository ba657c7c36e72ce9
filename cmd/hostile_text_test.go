package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileRunes are what must never reach a handoff, an injection, a
// terminal line or a log line from a transcript or a project file:
// zero-width and bidirectional characters, tag characters (which can
// spell a hidden ASCII message), variation selectors (a run of them
// carries a byte each behind one visible character), interlinear
// annotation marks, Hangul fillers, soft hyphens, terminal escapes and
// C1 controls written as UTF-8 (NEL, DCS, ST, OSC, PM, APC, CSI); and
// U+FFFD, which valid input only yields where a field was cut mid-rune.
const hostileRunes = "\ufffd" + "\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\U000E0041\U000E007F\x1b\x07" +
	"\ufe0f\ufe00\U000E0100\U000E01EF\ufff9\ufffa\ufffb\u3164\u115f\u1160\uffa0\u00ad\u0085\u0090\u009c\u009d\u009e\u009f\u009b"

// hostileShapes are the shapes hostile plants, one string each: what a
// string escape carries (an OSC 8 link's target, DCS sixel data, an APC
// kitty-graphics payload, an 8-bit OSC's title) must go with it, so these
// marker words must not come out either.
var hostileShapes = []string{
	"\u200b\u202e\u2066\U000E0041", "\x1b[2J", "\x1b]0;pwned\x07", "\u009b31m",
	"\u2764\ufe0f\ufe00\U000E0100\U000E01EF\U000E0142",                               // a variation-selector run behind a heart
	"\ufff9\ufffaruby\ufffb", "\u3164\u115f\u1160\uffa0", "\u00ad\u00ad\u00ad\u00ad", // annotation, Hangul fillers, soft hyphens
	"\u0085\u0090sixeldata\u009c\u009dtitlebar\u0007\u009fapcdata\u009c\u009epmdata\u009c", // C1 controls as UTF-8
	"\x1b]8;;https://hiddenlink.example/\x1b\\", "\x1b]8;;\x1b\\",                          // OSC 8 around the word
	"\x1bPq#0;2;0;0;0#0~~sixeldata\x1b\\", "\x1b_Gf=100,a=T;apcdata\x1b\\", "\x1b^pmdata\x1b\\",
}

// hiddenWords are what hostileShapes carry inside their escapes.
var hiddenWords = []string{"pwned", "hiddenlink", "sixeldata", "apcdata", "pmdata", "titlebar"}

// TestHostileTextEveryOutput plants every hostile rune in the text a
// session carries (a prompt, the agent's words, an edited file's path, a
// command) and in the project's own files (a branch name git accepts,
// with no control character, in .git/HEAD),
// then runs the hook (handoff.md, the SessionStart injection, the log)
// and the commands that print them (status, list, doctor, handoff
// --stdout, history): none may come out, and the words around them stay.
func TestHostileTextEveryOutput(t *testing.T) {
	project := t.TempDir()
	hostile := func(w string) string { return w + strings.Join(hostileShapes, w) + w }
	os.MkdirAll(filepath.Join(project, ".git", "refs", "heads"), 0o755)
	branch := "fix\u200b\u202egnp.exe\u2066\U000E0041\ufe0f\u3164\u00ad\ufff9" // a name git accepts: no control character
	os.WriteFile(filepath.Join(project, ".git", "HEAD"), []byte("ref: refs/heads/"+branch+"\n"), 0o644)
	os.WriteFile(filepath.Join(project, ".git", "refs", "heads", branch), []byte(strings.Repeat("ab", 20)+"\n"), 0o644)
	e, out := hookEnv(t, project)
	tr := filepath.Join(t.TempDir(), "s.jsonl")
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	lines := []string{
		fmt.Sprintf(`{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":%s},"uuid":"u1","timestamp":"2026-11-21T10:00:00Z","cwd":%q,"sessionId":"s1"}`, q(hostile("Please fix the parser")), project),
		fmt.Sprintf(`{"parentUuid":"u1","isSidechain":false,"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":%s},{"type":"tool_use","id":"t1","name":"Edit","input":{"file_path":%s,"old_string":"a","new_string":"b"}},{"type":"tool_use","id":"t2","name":"Bash","input":{"command":%s}}]},"uuid":"a1","timestamp":"2026-11-21T10:00:05Z","sessionId":"s1"}`,
			q(hostile("I will edit the parser")), q(filepath.Join(project, hostile("parser")+".go")), q("go test ./"+hostile("pkg"))),
		`{"parentUuid":"a1","isSidechain":false,"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"FAIL` + strings.Trim(q(hostile(" boom")), `"`) + `","is_error":true}]},"uuid":"u2","timestamp":"2026-11-21T10:00:09Z","sessionId":"s1"}`,
	}
	os.WriteFile(tr, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	runSnap(e, "Stop", map[string]any{"session_id": "s1", "transcript_path": tr, "cwd": project})
	out.Reset()
	runSnap(e, "SessionStart", map[string]any{"session_id": "s2", "transcript_path": tr + ".new", "cwd": project, "source": "startup"})
	texts := map[string]string{"injection": out.String()}
	// A payload's own fields reach the log line (session=, the path it could not read).
	runSnap(e, "Stop", map[string]any{"session_id": hostile("s3"), "transcript_path": filepath.Join(project, hostile("gone")+".jsonl"), "cwd": project})
	read := func(name, p string) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		texts[name] = string(b)
	}
	read("handoff.md", filepath.Join(project, ".carryover", "handoff.md"))
	for _, args := range [][]string{{"status"}, {"list", "--all"}, {"doctor"}, {"handoff", "--stdout", "--no-clipboard", "--project", project}, {"history"},
		{"explain"}, {"status", "--json"}, {"list", "--all", "--json"}, {"history", "--json"}, {"capture", "--stdout"}} {
		var so, se bytes.Buffer
		e.Stdout, e.Stderr, e.WorkDir = &so, &se, project
		Main(append([]string{"carryover"}, args...), e)
		texts[strings.Join(args, " ")] = so.String() + se.String()
	}
	read("carryover.log", filepath.Join(e.Getenv("CARRYOVER_HOME"), "carryover.log"))
	if !strings.Contains(texts["handoff.md"], "fix the parser") || !strings.Contains(texts["handoff --stdout --no-clipboard --project "+project], "fixgnp.exe") {
		t.Fatalf("the prompt or the branch (cleaned) is not in the handoff:\n%s", texts["handoff.md"])
	}
	for name, s := range texts {
		if i := strings.IndexAny(s, hostileRunes); i >= 0 {
			t.Errorf("%s carries %q: …%q…", name, []rune(s[i:])[0], s[max(0, i-60):min(len(s), i+20)])
		}
		for _, w := range hiddenWords {
			if i := strings.Index(s, w); i >= 0 {
				t.Errorf("%s carries %q, hidden in an escape: …%q…", name, w, s[max(0, i-60):min(len(s), i+20)])
			}
		}
	}
}
