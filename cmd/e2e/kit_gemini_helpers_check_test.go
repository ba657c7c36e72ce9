package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The -record flag may also be defined by other test files of this package;
// define it only when nobody has yet, and read it through flag.Lookup.
var _ = gcDefineRecordFlag()

func gcDefineRecordFlag() bool {
	if flag.Lookup("record") == nil {
		flag.Bool("record", false, "copy transcripts and hook logs of the real-agent smoke tests into testdata/recorded/")
	}
	return true
}

func gcRecording() bool {
	f := flag.Lookup("record")
	return f != nil && f.Value.String() == "true"
}

// gcHookEntry is one line written by gcLogHook.
type gcHookEntry struct {
	Event      string          `json:"event"`
	EventsSize *int64          `json:"events_size,omitempty"`
	Stdin      json.RawMessage `json:"stdin"`
}

// gcLogHook returns a shell command that appends {"event":E,"stdin":PAYLOAD}
// as one line to logPath. When copilotHome is set it also records the size
// of the session's events.jsonl at hook time (-1 when absent) as
// events_size.
func gcLogHook(logPath, event, copilotHome string) string {
	if copilotHome == "" {
		// No shell variables: Gemini CLI expands $VAR and ${VAR:-default} in
		// settings.json strings, hook commands included, before the shell
		// sees them.
		return fmt.Sprintf(`printf '{"event":"%%s","stdin":%%s}\n' %s "$(cat)" >> %s`,
			gcShellQuote(event), gcShellQuote(logPath))
	}
	return fmt.Sprintf(`p=$(cat); sid=$(printf '%%s' "$p" | sed -n 's/.*"sessionId":"\([^"]*\)".*/\1/p' | head -n 1); `+
		`sz=$(stat -c %%s %s/session-state/"$sid"/events.jsonl 2>/dev/null || echo -1); `+
		`printf '{"event":"%%s","events_size":%%s,"stdin":%%s}\n' %s "$sz" "${p:-null}" >> %s`,
		gcShellQuote(copilotHome), gcShellQuote(event), gcShellQuote(logPath))
}

func gcShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func gcReadHookLog(t *testing.T, path string) []gcHookEntry {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("hook log: %v (no hook ran?)", err)
	}
	var out []gcHookEntry
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e gcHookEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("hook log line is not JSON: %v: %.200s", err, sc.Text())
		}
		out = append(out, e)
	}
	return out
}

func gcEvents(es []gcHookEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Event)
	}
	return out
}

func gcFirst(es []gcHookEntry, event string) (gcHookEntry, bool) {
	for _, e := range es {
		if e.Event == event {
			return e, true
		}
	}
	return gcHookEntry{}, false
}

// gcField returns a top-level string field of a hook payload.
func gcField(e gcHookEntry, key string) string {
	var m map[string]any
	_ = json.Unmarshal(e.Stdin, &m)
	s, _ := m[key].(string)
	return s
}

// gcGitRepo creates dir as a git repository with one commit.
func gcGitRepo(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid", "commit", "-q", "-m", "init"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

func gcReadFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// gcRecord copies files (destination name -> source path) into
// testdata/recorded/<tool>/ with a README, when the test runs with -record.
func gcRecord(t *testing.T, tool, readme string, files map[string]string) {
	t.Helper()
	if !gcRecording() {
		return
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("record: cannot find the module root from %s", root)
	}
	dir := filepath.Join(root, "testdata", "recorded", tool)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, src := range files {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatalf("record %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(readme), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %d files into %s", len(files)+1, dir)
}

// gcWriteTemp writes data to a new file in a temp dir and returns its path.
func gcWriteTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
