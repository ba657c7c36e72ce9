package cmd

import (
	"github.com/carryover/carryover/publish/service"

	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// claudeLines writes a Claude Code transcript of the given messages (a
// string is a user prompt; a map is an assistant or tool-result content
// block list under "assistant" or "user").
func claudeTranscript(t *testing.T, sid, cwd string, msgs ...any) string {
	t.Helper()
	var b strings.Builder
	at := time.Date(2026, 11, 21, 11, 0, 0, 0, time.UTC)
	for i, m := range msgs {
		at = at.Add(time.Minute)
		line := map[string]any{"uuid": fmt.Sprintf("u%03d", i), "timestamp": at.Format(time.RFC3339Nano), "sessionId": sid, "cwd": cwd, "isSidechain": false}
		switch m := m.(type) {
		case string:
			line["type"], line["message"] = "user", map[string]any{"role": "user", "content": m}
		case map[string]any:
			for role, content := range m {
				line["type"], line["message"] = role, map[string]any{"role": role, "content": content}
			}
		}
		j, _ := json.Marshal(line)
		b.Write(j)
		b.WriteByte('\n')
	}
	p := filepath.Join(t.TempDir(), sid+".jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func asst(blocks ...map[string]any) map[string]any { return map[string]any{"assistant": blocks} }
func textBlock(s string) map[string]any            { return map[string]any{"type": "text", "text": s} }
func use(id, name string, in map[string]any) map[string]any {
	return map[string]any{"type": "tool_use", "id": id, "name": name, "input": in}
}
func toolResult(id, out string, isErr bool) map[string]any {
	return map[string]any{"user": []map[string]any{{"type": "tool_result", "tool_use_id": id, "content": out, "is_error": isErr}}}
}

// TestExplainEveryLine: every line of a rendered handoff — task, pinned
// task, latest request, instructions, next action, stops, last words,
// plan, files, failures, questions, decisions (extracted and the user's),
// references, action items, git and session — has an entry in `carryover
// explain --json`, in its section, with the rows it came from (or, for the
// lines no session wrote, a rule naming the source: the user's command,
// the repository, carryover's own summary).
func TestExplainEveryLine(t *testing.T) {
	le := newLifecycleEnv(t)
	os.MkdirAll(filepath.Join(le.project, ".git", "refs", "heads"), 0o755)
	os.WriteFile(filepath.Join(le.project, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	p := le.project
	tr := claudeTranscript(t, "5e0d1c2b-0000-4000-8000-00000000e1a1", p,
		"Add rate limiting to the upload endpoint in server/upload.go. Keep the public API unchanged.",
		asst(textBlock("I'll plan this first."), use("t1", "TodoWrite", map[string]any{"todos": []map[string]any{
			{"content": "Add a token bucket to server/upload.go", "status": "completed", "activeForm": "Adding"},
			{"content": "Write tests for the limiter", "status": "pending", "activeForm": "Writing"}}})),
		toolResult("t1", "Todos have been modified successfully", false),
		asst(use("t2", "Write", map[string]any{"file_path": filepath.Join(p, "server", "limit.go"), "content": "package server\n// TODO: make the burst configurable\n"})),
		toolResult("t2", "File created successfully", false),
		asst(use("t3", "Bash", map[string]any{"command": "go test ./server/...", "description": "run tests"})),
		toolResult("t3", "--- FAIL: TestUploadLimit\nlimit_test.go:12: got 200, want 429\nexit status 1", true),
		"Also log each rejected request. Never log the client IP address.",
		asst(textBlock("Noted: rejected requests will be logged without the address.")),
		"Also add a Retry-After header. We use a token bucket, not a fixed window.",
		asst(textBlock("Decision: we store the limiter state in memory per instance, not in Redis. See https://datatracker.ietf.org/doc/html/rfc6585 for status 429.\n\nTODO: document the limit in docs/api.md.\n\nShould the burst be configurable per route?")),
	)
	le.snap("claude", "Stop", map[string]any{"session_id": "5e0d1c2b-0000-4000-8000-00000000e1a1", "transcript_path": tr})
	le.run(t, "decide", "Return 429 with a JSON body", "--why", "clients parse it")
	le.run(t, "task", "Ship upload rate limiting")
	le.now = le.now.Add(time.Minute)
	le.snap("claude", "Stop", map[string]any{"session_id": "5e0d1c2b-0000-4000-8000-00000000e1a1", "transcript_path": tr})
	b, err := os.ReadFile(filepath.Join(p, ".carryover", "handoff.md"))
	if err != nil {
		t.Fatal(err)
	}
	handoff := string(b)
	var ex struct {
		Lines []service.ExplainLine `json:"lines"`
	}
	if err := json.Unmarshal([]byte(le.run(t, "explain", "--json")), &ex); err != nil {
		t.Fatal(err)
	}
	titles := map[string]string{"## Task": "Task", "## Next action": "Next action", "## Stopped by the user": "Stopped by the user",
		"## The user's instructions": "Instructions", "## Set aside": "Set aside", "## Last words": "Last words", "## Plan": "Plan",
		"## Recent files": "Recent files", "## Failed approaches": "Failed approaches", "## Open questions": "Open questions",
		"## Decisions": "Decisions", "## References": "References", "## Action items": "Action items", "## Git": "Git", "## Session": "Session"}
	sec, seen := "", map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(handoff), "\n") {
		if strings.HasPrefix(line, "## ") {
			sec = ""
			for prefix, name := range titles {
				if strings.HasPrefix(line, prefix) {
					sec = name
				}
			}
			if sec == "" {
				t.Errorf("section %q is not known to the test", line)
			}
			seen[sec] = true
			continue
		}
		if sec == "" || sec == "Last words" && !strings.HasPrefix(line, "> ") && line != "" {
			continue // the header; the quoted block's fence lines
		}
		if !explained(ex.Lines, sec, line) {
			t.Errorf("%s line has no explain entry: %q", sec, line)
		}
	}
	for _, want := range []string{"Task", "Next action", "Instructions", "Plan", "Recent files", "Failed approaches", "Open questions", "Decisions", "References", "Git", "Session"} {
		if !seen[want] {
			t.Errorf("the handoff has no %s section (the test's session should fill it):\n%s", want, handoff)
		}
	}
	// Evidence, not only text: a session line names its rows; a line of
	// the user's command or the repository says so.
	for _, l := range ex.Lines {
		switch {
		case strings.Contains(l.Rule, "`carryover task`") || strings.Contains(l.Rule, "`carryover decide`"):
			if !strings.Contains(l.Rule, "source: the user") {
				t.Errorf("%s %q: rule %q does not name the user as source", l.Section, l.Text, l.Rule)
			}
		case l.Section == "Git":
			if !strings.Contains(l.Rule, "repository") {
				t.Errorf("git line rule %q does not name the repository", l.Rule)
			}
		case l.Section == "Session":
		default:
			if len(l.Rows) == 0 {
				t.Errorf("%s %q (rule %q) has no evidence rows", l.Section, l.Text, l.Rule)
			}
			for _, r := range l.Rows {
				if r.Agent != "claude" || r.Seq <= 0 || r.Kind == "" || r.Time.IsZero() {
					t.Errorf("%s %q: evidence row %+v lacks agent, seq, kind or time", l.Section, l.Text, r)
				}
			}
		}
	}
	// The rows are the right ones: a plan item (and the next action taken
	// from it) and a file come from the calls that wrote them, a failure
	// from its error, a reference from the prose that named it.
	kinds := map[string]string{"Plan": "tool_call", "Next action": "tool_call", "Recent files": "tool_call",
		"Failed approaches": "error", "References": "text", "Instructions": "prompt"}
	for _, l := range ex.Lines {
		if want, ok := kinds[l.Section]; ok && (len(l.Rows) == 0 || l.Rows[len(l.Rows)-1].Kind != want) {
			t.Errorf("%s %q: evidence %+v, want a %s row", l.Section, l.Text, l.Rows, want)
		}
	}
	if t.Failed() {
		t.Logf("handoff:\n%s", handoff)
		j, _ := json.MarshalIndent(ex.Lines, "", " ")
		t.Logf("explain:\n%s", j)
	}
}

// explained reports whether an explain entry of section sec states the
// rendered line (its text, possibly clipped, is in the line).
func explained(lines []service.ExplainLine, sec, line string) bool {
	norm := func(s string) string {
		s = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "> "), "- "))
		s = strings.TrimPrefix(strings.TrimPrefix(s, "[ ] "), "[x] ")
		return strings.Trim(s, "`")
	}
	l := norm(line)
	if l == "" {
		return true
	}
	for _, e := range lines {
		if e.Section != sec {
			continue
		}
		x := strings.TrimSuffix(norm(e.Text), "…")
		if len(x) > 40 {
			x = x[:40]
		}
		if x != "" && (strings.Contains(l, x) || strings.Contains(norm(e.Text), strings.TrimSuffix(l, "…"))) {
			return true
		}
	}
	return false
}
