package e2e

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestNinthAgent adds a made-up agent exactly as README's "Adding an agent"
// says — one adapter file, one line in adapters.All, fixtures, one [[tool]]
// entry in specs/tools.toml — to a copy of this repository, and then runs
// the adapter tests (conformance, descriptors, sniffing), the specs and
// hookconf tests, and the built binary's install --dry-run, install, status
// and a SessionStart/Stop hook pair on it. It fails if anything else would
// have had to change. The agent's files are testdata/ninth-agent/.
func TestNinthAgent(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	repo := filepath.Join(t.TempDir(), "repo")
	copyRepo(t, root, repo)

	// The documented steps.
	add := filepath.Join(root, "testdata", "ninth-agent")
	copyTree(t, filepath.Join(add, "adapters"), filepath.Join(repo, "adapters"))
	copyTree(t, filepath.Join(add, "testdata"), filepath.Join(repo, "testdata"))
	row, err := os.ReadFile(filepath.Join(add, "specs", "tools.toml"))
	if err != nil {
		t.Fatal(err)
	}
	appendFile(t, filepath.Join(repo, "specs", "tools.toml"), row)
	agentGo := filepath.Join(repo, "adapters", "agent.go")
	b, err := os.ReadFile(agentGo)
	if err != nil {
		t.Fatal(err)
	}
	const last = "\taiderAgent,\n}"
	if !bytes.Contains(b, []byte(last)) {
		t.Fatalf("adapters/agent.go: All no longer ends with %q; update this test and README together", last)
	}
	b = bytes.Replace(b, []byte(last), []byte("\taiderAgent,\n\tninthAgent,\n}"), 1)
	if err := os.WriteFile(agentGo, b, 0o644); err != nil {
		t.Fatal(err)
	}

	goRun := func(args ...string) string {
		t.Helper()
		c := exec.Command("go", args...)
		c.Dir = repo
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	out := goRun("test", "-count=1", "-run", "TestConformance|TestAll|TestSniff|TestForeignHost", "-v", "./adapters/")
	if !strings.Contains(out, "--- PASS: TestConformance/ninth") {
		t.Fatalf("conformance did not run over the ninth agent:\n%s", out)
	}
	goRun("test", "-count=1", "./specs/...")
	bin := filepath.Join(t.TempDir(), "carryover")
	goRun("build", "-tags", "urfave_cli_no_docs", "-o", bin, ".")

	// A fake `ninth` on PATH: install detects it by its version output.
	home, project, pathDir := t.TempDir(), t.TempDir(), t.TempDir()
	fake := filepath.Join(pathDir, "ninth")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho 'ninth 1.2.3'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "CARRYOVER_HOME=" + filepath.Join(home, ".carryover"), "PATH=" + pathDir + string(os.PathListSeparator) + os.Getenv("PATH"), "NO_COLOR=1"}
	run := func(stdin string, args ...string) (string, string) {
		t.Helper()
		c := exec.Command(bin, args...)
		c.Env, c.Dir, c.Stdin = env, project, strings.NewReader(stdin)
		var o, e bytes.Buffer
		c.Stdout, c.Stderr = &o, &e
		if err := c.Run(); err != nil {
			t.Fatalf("carryover %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, o.String(), e.String())
		}
		return o.String(), e.String()
	}
	hooks := filepath.Join(home, ".ninth", "hooks.json")
	if o, _ := run("", "install", "--tools", "ninth", "--yes", "--dry-run"); !strings.Contains(o, "hooks.json") || !strings.Contains(o, "snapshot --tool ninth --event Stop") {
		t.Errorf("install --dry-run shows no change to %s:\n%s", hooks, o)
	}
	if _, err := os.Stat(hooks); err == nil {
		t.Fatal("install --dry-run wrote the hook file")
	}
	run("", "install", "--tools", "ninth", "--yes")
	var doc struct {
		Version int                         `json:"version"`
		Hooks   map[string][]map[string]any `json:"hooks"`
	}
	hb, err := os.ReadFile(hooks)
	if err != nil {
		t.Fatalf("install wrote no hook file: %v", err)
	}
	if err := json.Unmarshal(hb, &doc); err != nil || doc.Version != 1 || len(doc.Hooks) != 3 {
		t.Fatalf("hook file (flat layout, skeleton version=1, 3 events) = %v:\n%s", err, hb)
	}
	if h := doc.Hooks["Stop"]; len(h) != 1 || h[0]["type"] != "command" || !strings.Contains(h[0]["command"].(string), "--tool ninth --event Stop") || h[0]["timeout"] != float64(10) {
		t.Errorf("Stop handler = %v", h)
	}
	if o, _ := run("", "status"); !strings.Contains(o, "Ninth Agent") || !strings.Contains(o, "1.2.3") {
		t.Errorf("status does not show the ninth agent with its version:\n%s", o)
	}

	// A session: the hooks record it, distil a handoff and inject it.
	transcript := filepath.Join(home, ".ninth", "sessions", "n-1.jsonl")
	copyFile(t, filepath.Join(add, "testdata", "adapters", "ninth", "session.jsonl"), transcript)
	payload := `{"session_id":"n-1","transcript_path":"` + transcript + `","cwd":"` + project + `"}`
	run(payload, "snapshot", "--tool", "ninth", "--event", "Stop")
	handoff, err := os.ReadFile(filepath.Join(project, ".carryover", "handoff.md"))
	if err != nil || !bytes.Contains(handoff, []byte("--verbose flag")) || !bytes.Contains(handoff, []byte("go test ./...")) {
		t.Fatalf("no handoff with the task and the failing command (%v):\n%s", err, handoff)
	}
	o, _ := run(`{"session_id":"n-2","cwd":"`+project+`","source":"startup"}`, "snapshot", "--tool", "ninth", "--event", "SessionStart")
	var inj struct {
		AdditionalContext string `json:"additionalContext"`
	}
	if err := json.Unmarshal([]byte(o), &inj); err != nil || !strings.Contains(inj.AdditionalContext, "--verbose flag") {
		t.Errorf("SessionStart output is not the handoff in the flat-camel envelope (%v): %q", err, o)
	}
}

// copyRepo copies the files git knows (tracked or not ignored) of root to dst.
func copyRepo(t *testing.T, root, dst string) {
	t.Helper()
	c := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	c.Dir = root
	out, err := c.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if f == "" || strings.HasPrefix(f, "testdata/ninth-agent/") {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(root, f)); err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the work tree, or a symlink
		}
		copyFile(t, filepath.Join(root, f), filepath.Join(dst, f))
	}
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		copyFile(t, p, filepath.Join(dst, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}
