// Package e2e runs the built carryover binary as a process: against the real
// agent CLIs (installed from npm at pinned versions) talking to fake model
// servers, under injected faults, and in the whole-process benchmarks.
package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// carryoverBin is the binary built once for the package's tests.
var carryoverBin string

// staticTags keep a static Linux build free of what glibc can only load
// dynamically: NSS (user and host lookups) and SQLite's dlopen of extensions.
const staticTags = "netgo,osusergo,sqlite_omit_load_extension"

func TestMain(m *testing.M) { os.Exit(runSuite(m)) }

func runSuite(m *testing.M) int {
	root, err := newRunDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(root)
	if msg := diskShortfall(root); msg != "" {
		fmt.Fprintln(os.Stderr, "e2e: FAIL: "+msg)
		return 1
	}
	carryoverBin = filepath.Join(root, "bin", "carryover")
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Join(filepath.Dir(file), "..", "..")
	// Built as users get it: the release's flags (.goreleaser.yaml), so on
	// Linux a static binary (no dynamic loader or libc relocations at each
	// hook's start, see README, Numbers).
	args := []string{"build", "-tags", "urfave_cli_no_docs", "-o", carryoverBin, "."}
	if runtime.GOOS == "linux" {
		args = []string{"build", "-tags", "urfave_cli_no_docs," + staticTags, "-ldflags", "-linkmode=external -extldflags=-static", "-o", carryoverBin, "."}
	}
	build := exec.Command("go", args...)
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building carryover failed: %v\n%s", err, out)
		return 1
	}
	lowest := watchFree(root)
	code := m.Run()
	if low := lowest(); code != 0 && low < lowFree {
		fmt.Fprintf(os.Stderr, "e2e: the disk under %s ran full during the run (ENOSPC; %s free at the lowest): the failures above may be that, not bugs\n", root, mb(low))
	}
	return code
}

// hookRun is one invocation of `carryover snapshot` as a hook would do it.
type hookRun struct {
	Stdout, Stderr string
	Code           int
}

// runHook runs the binary with payload on stdin and env (a full env list).
func runHook(t testing.TB, env []string, tool, event string, payload any) hookRun {
	t.Helper()
	var in []byte
	switch p := payload.(type) {
	case []byte:
		in = p
	case string:
		in = []byte(p)
	default:
		in, _ = json.Marshal(p)
	}
	cmd := exec.Command(carryoverBin, "snapshot", "--tool", tool, "--event", event)
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return hookRun{out.String(), errb.String(), code}
}

// hookCommand is the shell command an agent's hook config runs.
func hookCommand(tool, event string, env ...string) string {
	var b strings.Builder
	for _, e := range env {
		b.WriteString(e + " ")
	}
	fmt.Fprintf(&b, "%q snapshot --tool %s --event %s", carryoverBin, tool, event)
	return b.String()
}
