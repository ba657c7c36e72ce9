package cmd

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
)

// fakeAgent stands in for an agent and its hooks: it registers its
// session like a SessionStart hook would, then behaves as $MODE says
// (ctrl-c plays the terminal: SIGINT to the wrapper and an exit 130, with
// a CRITICAL signal pending).
const fakeAgent = `
id=${CARRYOVER_RUN_ID%.*}; gen=${CARRYOVER_RUN_ID##*.}; d="$CARRYOVER_HOME/run/$id"
mkdir -p "$d"; echo "sess-$gen" > "$d/$gen.session.tmp" && mv "$d/$gen.session.tmp" "$d/$gen.session"
echo "$gen" >> "$RUNLOG"
signal() { printf '{"run":"%s","pid":%s,"tool":"","session":"%s","level":"CRITICAL","percent":88}' "$CARRYOVER_RUN_ID" "$CARRYOVER_RUN_PID" "$1" > "$d/$gen.critical.tmp" && mv "$d/$gen.critical.tmp" "$d/$gen.critical"; }
case "$MODE" in
restart-once) if [ "$gen" = 0 ]; then signal "sess-$gen"; exec sleep 30; fi; exit 0 ;;
foreign) signal "sess-someone-else"; sleep 0.3; exit 3 ;;
ctrl-c) kill -INT "$CARRYOVER_RUN_PID"; sleep 0.2; signal "sess-$gen"; exit 130 ;;
always) signal "sess-$gen"; exec sleep 30 ;;
esac
exit 0
`

func runFake(t *testing.T, mode string) (runs []string, stderr string, err error) {
	t.Helper()
	home := t.TempDir()
	runlog := filepath.Join(t.TempDir(), "runs")
	vars := map[string]string{"HOME": home, "CARRYOVER_HOME": filepath.Join(home, ".carryover"), "PATH": os.Getenv("PATH")}
	env := []string{"PATH=" + os.Getenv("PATH"), "CARRYOVER_HOME=" + vars["CARRYOVER_HOME"], "MODE=" + mode, "RUNLOG=" + runlog}
	var errb bytes.Buffer
	e := &Env{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &errb, Getenv: func(k string) string { return vars[k] },
		Now: time.Now, Environ: env}
	err = runAgent(e, runOptions{argv: []string{"sh", "-c", fakeAgent}, project: t.TempDir(), maxRestarts: 10, poll: 20 * time.Millisecond, grace: 5 * time.Second})
	b, _ := os.ReadFile(runlog)
	return strings.Fields(string(b)), errb.String(), err
}

func code(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if err != nil {
		return -1
	}
	return 0
}

func TestRunRestartsAtCritical(t *testing.T) {
	runs, stderr, err := runFake(t, "restart-once")
	if err != nil || strings.Join(runs, ",") != "0,1" {
		t.Fatalf("runs %v, err %v; want 0,1 and success\n%s", runs, err, stderr)
	}
	if !strings.Contains(stderr, "reached 88 % of its context (CRITICAL); restarting it fresh from the handoff (restart 1 of at most 10)") {
		t.Errorf("restart not announced:\n%s", stderr)
	}
}

func TestRunIgnoresAnotherSessionsSignal(t *testing.T) {
	runs, stderr, err := runFake(t, "foreign")
	if code(err) != 3 || len(runs) != 1 {
		t.Fatalf("runs %v, exit %d; want one run and exit 3\n%s", runs, code(err), stderr)
	}
}

func TestRunNeverRestartsAfterCtrlC(t *testing.T) {
	runs, stderr, err := runFake(t, "ctrl-c")
	if code(err) != 130 || len(runs) != 1 {
		t.Fatalf("runs %v, exit %d; want one run and exit 130\n%s", runs, code(err), stderr)
	}
}

func TestRunRestartLimit(t *testing.T) {
	runs, stderr, err := runFake(t, "always")
	if len(runs) != 11 {
		t.Fatalf("%d runs; want 11 (10 restarts)\n%s", len(runs), stderr)
	}
	if !strings.Contains(stderr, "restart limit (10) is reached; not restarting") || err == nil {
		t.Errorf("the 11th restart was not refused (err %v):\n%s", err, stderr)
	}
}

func TestAiderArgs(t *testing.T) {
	p := t.TempDir()
	if got := readArgs(&adapters.Agent{ReadFlag: "--read"}, []string{"aider", "--model", "x"}, p); len(got) != 3 {
		t.Errorf("no handoff: %v", got)
	}
	os.MkdirAll(filepath.Join(p, ".carryover"), 0o700)
	os.WriteFile(filepath.Join(p, ".carryover", "handoff.md"), []byte("# [CARRYOVER]\n"), 0o600)
	if got := strings.Join(readArgs(&adapters.Agent{ReadFlag: "--read"}, []string{"aider", "--model", "x"}, p), " "); got != "aider --read .carryover/handoff.md --model x" {
		t.Errorf("readArgs = %s", got)
	}
}

// TestRunAider: `carryover run -- aider …` passes --read
// .carryover/handoff.md when there is one, and reads aider's chat history
// into the handoff when aider exits (aider has no hooks).
func TestRunAider(t *testing.T) {
	project := t.TempDir()
	hist, err := os.ReadFile("../testdata/adapters/aider/current/.aider.chat.history.md")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	argsFile := filepath.Join(t.TempDir(), "args")
	// The fake aider records its arguments and writes its chat history.
	os.WriteFile(filepath.Join(project, "hist.src"), hist, 0o600)
	script := "#!/bin/sh\necho \"$@\" > " + argsFile + "\ncp hist.src .aider.chat.history.md\n"
	os.WriteFile(filepath.Join(bin, "aider"), []byte(script), 0o755)
	os.MkdirAll(filepath.Join(project, ".carryover"), 0o700)
	home := t.TempDir()
	vars := map[string]string{"HOME": home, "CARRYOVER_HOME": filepath.Join(home, ".carryover"), "PATH": os.Getenv("PATH")}
	var errb bytes.Buffer
	e := &Env{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &errb, Getenv: func(k string) string { return vars[k] },
		Now: time.Now, Environ: []string{"PATH=" + os.Getenv("PATH")}}
	// No handoff yet: no --read.
	if err := runAgent(e, runOptions{argv: []string{filepath.Join(bin, "aider"), "--model", "x"}, project: project, maxRestarts: 10, poll: 20 * time.Millisecond, grace: time.Second}); err != nil {
		t.Fatalf("run: %v\n%s", err, errb.String())
	}
	if a, _ := os.ReadFile(argsFile); strings.TrimSpace(string(a)) != "--model x" {
		t.Errorf("aider args = %q; want no --read before a handoff exists", a)
	}
	h, err := os.ReadFile(filepath.Join(project, ".carryover", "handoff.md"))
	if err != nil || !strings.Contains(string(h), "from aider") {
		t.Fatalf("no handoff from aider's history: %v\n%s\n%s", err, h, errb.String())
	}
	// Now there is one: --read passes it.
	if err := runAgent(e, runOptions{argv: []string{filepath.Join(bin, "aider"), "--model", "x"}, project: project, maxRestarts: 10, poll: 20 * time.Millisecond, grace: time.Second}); err != nil {
		t.Fatal(err)
	}
	if a, _ := os.ReadFile(argsFile); strings.TrimSpace(string(a)) != "--read .carryover/handoff.md --model x" {
		t.Errorf("aider args = %q", a)
	}
}
