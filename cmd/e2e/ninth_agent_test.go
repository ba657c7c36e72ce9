package e2e

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestNinthAgent adds a made-up agent exactly as README's "Adding an agent"
// says — its adapter file (descriptor with a lister), one line in
// adapters.All, its fixtures with the goldens written by -update, one
// [[tool]] entry in specs/tools.toml — to a copy of this repository. In the
// copy it runs the whole suite except the end-to-end tests, then the built
// binary's install, status, every hook event of the agent, list,
// handoff --source and handoff --transcript. It fails if anything else
// would have had to change. The agent's files are testdata/ninth-agent/.
func TestNinthAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole non-end-to-end suite in a copy of the tree")
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	repo := filepath.Join(t.TempDir(), "repo")
	copyRepo(t, root, repo)
	// The copy has no ../shared beside it: its realworld tests (which fail
	// under CI=true without the corpus) read this tree's corpus.
	realworld := os.Getenv("CARRYOVER_REALWORLD")
	if realworld == "" {
		realworld, _ = filepath.Abs(filepath.Join(root, "..", "shared", "realworld"))
	}
	goRun := func(args ...string) string {
		t.Helper()
		c := exec.Command("go", args...)
		c.Dir = repo
		c.Env = append(os.Environ(), "CARRYOVER_REALWORLD="+realworld)
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	// The documented steps. 1: the adapter file.
	add := filepath.Join(root, "testdata", "ninth-agent")
	copyTree(t, filepath.Join(add, "adapters"), filepath.Join(repo, "adapters"))
	// 2: one line in All (at its end, whatever the last agent is).
	agentGo := filepath.Join(repo, "adapters", "agent.go")
	b, err := os.ReadFile(agentGo)
	if err != nil {
		t.Fatal(err)
	}
	all := regexp.MustCompile(`(?s)(var All = \[\]\*Agent\{\n.*?)(\n\})`)
	if !all.Match(b) {
		t.Fatal("adapters/agent.go: no `var All = []*Agent{` list; update this test and README together")
	}
	b = all.ReplaceAll(b, []byte("$1\n\tninthAgent,$2"))
	if err := os.WriteFile(agentGo, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// 3: fixtures, and the goldens the two -update runs write.
	copyTree(t, filepath.Join(add, "testdata"), filepath.Join(repo, "testdata"))
	// 4: the [[tool]] entry.
	row, err := os.ReadFile(filepath.Join(add, "specs", "tools.toml"))
	if err != nil {
		t.Fatal(err)
	}
	appendFile(t, filepath.Join(repo, "specs", "tools.toml"), row)
	goRun("test", "-count=1", "-run", "TestConformance", "./adapters/", "-update")
	goRun("test", "-count=1", "./specs/hookconf/", "-update")
	for got, want := range map[string]string{
		"testdata/adapters/ninth/session.rows.golden":    "session.rows.golden",
		"testdata/hookconf/ninth/missing.install.golden": "missing.install.golden",
	} {
		g, _ := os.ReadFile(filepath.Join(repo, got))
		w, _ := os.ReadFile(filepath.Join(add, "golden", want))
		if len(g) == 0 || !bytes.Equal(g, w) {
			t.Errorf("-update wrote %s unlike testdata/ninth-agent/golden/%s:\n%s", got, want, g)
		}
	}

	// The whole suite but the end-to-end tests, on the tree with the agent.
	list := exec.Command("go", "list", "./...")
	list.Dir = repo
	pkgs, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	args := []string{"test", "-count=1"}
	for _, p := range strings.Fields(string(pkgs)) {
		if !strings.Contains(p, "/cmd/e2e") {
			args = append(args, p)
		}
	}
	out := goRun(append(args[:2:2], append([]string{"-run", "TestConformance", "-v"}, "./adapters/")...)...)
	if !strings.Contains(out, "--- PASS: TestConformance/ninth") {
		t.Fatalf("conformance did not run over the ninth agent:\n%s", out)
	}
	goRun(args...)
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

	// A session in the agent's store, naming the project.
	session, err := os.ReadFile(filepath.Join(add, "testdata", "adapters", "ninth", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	session = bytes.Replace(session, []byte(`{"type":"header",`), []byte(`{"type":"header","cwd":`+strconv.Quote(project)+`,`), 1)
	transcript := filepath.Join(home, ".ninth", "sessions", "n-1.jsonl")
	os.MkdirAll(filepath.Dir(transcript), 0o755)
	if err := os.WriteFile(transcript, session, 0o644); err != nil {
		t.Fatal(err)
	}
	if o, e := run("", "list"); !strings.Contains(o, "ninth") || !strings.Contains(o, "n-1") || strings.Contains(o+e, "gone") {
		t.Errorf("list does not show the ninth session:\n%s%s", o, e)
	}

	// Every hook event of the agent: each exits 0 and records the session;
	// the handoff names the task and the failing command; the start event
	// injects it in the agent's envelope.
	payload := `{"session_id":"n-1","transcript_path":"` + transcript + `","cwd":"` + project + `","prompt":"go on"}`
	a := ninthEvents(t, repo)
	for _, ev := range a {
		if ev == "SessionStart" {
			continue
		}
		run(payload, "snapshot", "--tool", "ninth", "--event", ev)
	}
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

	// The manual paths: the listed session by --source, the file by
	// --transcript (recognised from its content, and with --source).
	for _, args := range [][]string{
		{"handoff", "--source", "ninth", "--no-clipboard"},
		{"handoff", "--transcript", transcript, "--no-clipboard"},
		{"handoff", "--transcript", transcript, "--source", "ninth", "--no-clipboard"},
	} {
		os.Remove(filepath.Join(project, ".carryover", "RESUME.md"))
		_, e := run("", args...)
		resume, err := os.ReadFile(filepath.Join(project, ".carryover", "RESUME.md"))
		if err != nil || !bytes.Contains(resume, []byte("--verbose flag")) || strings.Contains(e, "unknown --source") {
			t.Errorf("%s: no resume prompt with the task (%v):\n%s", strings.Join(args, " "), err, e)
		}
	}
}

// ninthEvents are the native events of the ninth agent's descriptor, read
// from its adapter file (the copy's binary knows them; this test does not
// import adapters).
func ninthEvents(t *testing.T, repo string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, "adapters", "ninth.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)Events: map\[string\]Class\{(.*?)\n\t\}`).FindSubmatch(b)
	if m == nil {
		t.Fatal("ninth.go: no Events map")
	}
	var evs []string
	for _, q := range regexp.MustCompile(`"([A-Za-z_]+)":`).FindAllSubmatch(m[1], -1) {
		evs = append(evs, string(q[1]))
	}
	if len(evs) < 3 {
		t.Fatalf("ninth.go: events %v", evs)
	}
	return evs
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
