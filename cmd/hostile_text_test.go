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
// spell a hidden ASCII message), terminal escapes and C1 controls.
const hostileRunes = "\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\U000E0041\U000E007F\x1b\x07\u009b"

// TestHostileTextEveryOutput plants every hostile rune in the text a
// session carries (a prompt, the agent's words, an edited file's path, a
// command) and in the project's own files (a branch name git accepts,
// with no control character, in .git/HEAD),
// then runs the hook (handoff.md, the SessionStart injection, the log)
// and the commands that print them (status, list, doctor, handoff
// --stdout, history): none may come out, and the words around them stay.
func TestHostileTextEveryOutput(t *testing.T) {
	project := t.TempDir()
	hostile := func(w string) string { return w + "\u200b\u202e\u2066\U000E0041\x1b[2J\x1b]0;pwned\x07\u009b31m" + w }
	os.MkdirAll(filepath.Join(project, ".git", "refs", "heads"), 0o755)
	branch := "fix\u200b\u202egnp.exe\u2066\U000E0041" // a name git accepts: no control character
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
	for _, args := range [][]string{{"status"}, {"list", "--all"}, {"doctor"}, {"handoff", "--stdout", "--no-clipboard", "--project", project}, {"history"}} {
		var so, se bytes.Buffer
		e.Stdout, e.Stderr, e.WorkDir = &so, &se, project
		Main(append([]string{"carryover"}, args...), e)
		texts[args[0]] = so.String() + se.String()
	}
	read("carryover.log", filepath.Join(e.Getenv("CARRYOVER_HOME"), "carryover.log"))
	if !strings.Contains(texts["handoff.md"], "fix the parser") || !strings.Contains(texts["handoff"], "fixgnp.exe") {
		t.Fatalf("the prompt or the branch (cleaned) is not in the handoff:\n%s\n%s", texts["handoff.md"], texts["handoff"])
	}
	for name, s := range texts {
		if i := strings.IndexAny(s, hostileRunes); i >= 0 {
			t.Errorf("%s carries %q: …%q…", name, []rune(s[i:])[0], s[max(0, i-60):min(len(s), i+20)])
		}
	}
}
