//go:build linux

package e2e

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCrushFixtureEndToEnd runs carryover's side of a Crush session without
// Crush: its binary cannot be had here (the npm package downloads it from
// GitHub; the Go module proxy refuses the module), so a fake `crush` on
// PATH answers --version and the session is the project's .crush/crush.db
// built from the adapter fixture testdata/adapters/crush/0.9x/session.sql.
// install wires the PreToolUse hook into crush.json beside the user's own
// settings and uninstall gives the file back byte for byte; status says
// the handoff reaches Crush through the pointer block; the hook writes the
// handoff and the pointer block in AGENTS.md and CRUSH.md; list, handoff
// --source and handoff --transcript (recognised from the schema) read the
// session; and a next session in Claude Code receives the handoff.
func TestCrushFixtureEndToEnd(t *testing.T) {
	w := newWorkspace(t, "claude")
	dir := w.project(t, "ledgerly")
	_, file, _, _ := runtime.Caller(0)
	script, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "testdata", "adapters", "crush", "0.9x", "session.sql"))
	if err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(dir, ".crush", "crush.db")
	os.MkdirAll(filepath.Dir(dbPath), 0o755)
	db, err := sql.Open("sqlite3", "file:"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(string(script)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	os.WriteFile(filepath.Join(dir, ".crush", ".gitignore"), []byte("*\n"), 0o644)

	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, "crush"), []byte("#!/bin/sh\necho 'crush version v0.92.1'\n"), 0o755)
	env := append(BaseEnv(w.home), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	cfg := filepath.Join(w.home, ".config", "crush", "crush.json")
	user := []byte("{\n  \"options\": {\n    \"debug\": false\n  }\n}\n")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	os.WriteFile(cfg, user, 0o644)

	if out, errOut, code := runCarryover(t, env, dir, "install", "--tools", "crush", "--yes"); code != 0 {
		t.Fatalf("install --tools crush (exit %d):\n%s%s", code, out, errOut)
	}
	var conf struct {
		Options map[string]any              `json:"options"`
		Hooks   map[string][]map[string]any `json:"hooks"`
	}
	b, _ := os.ReadFile(cfg)
	if err := json.Unmarshal(b, &conf); err != nil || conf.Options == nil || len(conf.Hooks["PreToolUse"]) != 1 ||
		!strings.Contains(conf.Hooks["PreToolUse"][0]["command"].(string), "snapshot --tool crush --event PreToolUse") {
		t.Fatalf("crush.json after install (%v):\n%s", err, b)
	}
	out, _, _ := runCarryover(t, env, dir, "status")
	if !strings.Contains(out, "Crush") || !strings.Contains(out, "0.92.1") || !strings.Contains(out, "restore:") || !strings.Contains(out, "pointer") {
		t.Errorf("status does not say how Crush gets the handoff:\n%s", out)
	}

	// Crush runs the hook before a tool call, in the project.
	payload := `{"event":"PreToolUse","session_id":"s-new","cwd":"` + dir + `","tool_name":"bash","tool_input":{"command":"go test ./export/..."}}`
	c := exec.Command("sh", "-c", conf.Hooks["PreToolUse"][0]["command"].(string))
	c.Env, c.Dir, c.Stdin = append(env, "CRUSH=1", "AGENT=crush", "CRUSH_PROJECT_DIR="+dir), dir, strings.NewReader(payload)
	var o, e bytes.Buffer
	c.Stdout, c.Stderr = &o, &e
	if err := c.Run(); err != nil || o.Len() != 0 {
		t.Fatalf("the PreToolUse hook (%v) printed %q:\n%s", err, o.String(), e.String())
	}
	h := w.handoff(t, dir)
	for _, want := range []string{"quote such fields", "go test ./export/...", "joinQuoted"} {
		if !strings.Contains(h, want) {
			t.Errorf("handoff.md lacks %q:\n%s", want, h)
		}
	}
	for _, f := range []string{"AGENTS.md", "CRUSH.md"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || !strings.Contains(string(b), ".carryover/handoff.md") {
			t.Errorf("no pointer block in %s (%v):\n%s", f, err, b)
		}
	}

	out, errOut, code := runCarryover(t, env, dir, "list", "--source", "crush")
	if code != 0 || !strings.Contains(out, "s-new") || !strings.Contains(out, "s-old") {
		t.Errorf("list --source crush (exit %d):\n%s%s", code, out, errOut)
	}
	out, errOut, code = runCarryover(t, env, dir, "handoff", "--source", "crush", "--stdout", "--no-clipboard")
	if code != 0 || !strings.Contains(out, "quote such fields") || !strings.Contains(out, "go test ./export/...") {
		t.Errorf("handoff --source crush (exit %d):\n%s%s", code, out, errOut)
	}
	out, errOut, code = runCarryover(t, env, dir, "handoff", "--transcript", dbPath, "--stdout", "--no-clipboard")
	if code != 0 || !strings.Contains(errOut, "crush") || !strings.Contains(out, "go test ./export/...") {
		t.Errorf("handoff --transcript without --source (exit %d):\n%s%s", code, out, errOut)
	}
	if es, _ := os.ReadDir(filepath.Dir(dbPath)); len(es) != 2 {
		t.Errorf("files beside Crush's database after carryover read it: %v", es)
	}

	// The next session, in Claude Code, gets the handoff at SessionStart.
	r := runAgent(t, "claude", w.home, dir, "continue", []Turn{{Text: "Resuming."}}, runOpts{})
	if req := r.first(t); !strings.Contains(req, "[CARRYOVER]") || !strings.Contains(req, "quote such fields") {
		t.Errorf("Claude's first model request lacks the Crush handoff:\n%.3000s", req)
	}

	if out, errOut, code := runCarryover(t, env, dir, "uninstall", "--tools", "crush"); code != 0 {
		t.Fatalf("uninstall --tools crush (exit %d):\n%s%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(cfg); !bytes.Equal(b, user) {
		t.Errorf("uninstall did not give crush.json back byte for byte:\n%s", b)
	}
}
