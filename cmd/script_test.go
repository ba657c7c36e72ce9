package cmd

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/specs"
	"github.com/rogpeppe/go-internal/testscript"
)

// scriptNow is the clock of the CLI scripts.
var scriptNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// TestScripts runs testdata/script/*.txtar, in parallel. `carryover` runs in
// process with the script's environment and working directory (all in its
// Env: there are no package-level seams); `exitcode N` checks the exit code
// of the last `carryover`.
func TestScripts(t *testing.T) {
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join(repo, "testdata", "script"),
		Setup: func(env *testscript.Env) error {
			env.Setenv("REPO", repo)
			env.Setenv("CARRYOVER_HOME", filepath.Join(env.WorkDir, ".carryover-home"))
			// HOME beside the work directory, not above it: the home
			// directory and its ancestors are never projects (no file is
			// written there), and the scripts' project is $WORK.
			env.Setenv("HOME", env.WorkDir+"-home")
			// testscript removes $WORK, not this sibling: without this, each run left its go-test-script* dir behind.
			env.Defer(func() { os.RemoveAll(env.WorkDir + "-home") })
			env.Setenv("NO_COLOR", "1")
			// The agent table, so scripts do not list its agents: $AGENTS
			// (names, space-separated, table order) and $AGENT_COUNT.
			names := specs.Names()
			env.Setenv("AGENTS", strings.Join(names, " "))
			env.Setenv("AGENT_COUNT", strconv.Itoa(len(names)))
			// The carryover executable hook stubs run (see TestMain).
			for _, dir := range filepath.SplitList(env.Getenv("PATH")) {
				if p := filepath.Join(dir, scriptExeName); publish.Exists(p) {
					env.Setenv("CARRYOVER_EXE", p)
					break
				}
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"carryover": func(ts *testscript.TestScript, neg bool, args []string) {
				var stdin bytes.Buffer
				// `env HOOK=file` feeds file (with $VARS expanded) to the
				// next carryover's stdin: a hook payload naming $WORK.
				if f := ts.Getenv("HOOK"); f != "" {
					stdin.WriteString(os.Expand(ts.ReadFile(f), ts.Getenv))
					ts.Setenv("HOOK", "")
				}
				e := &Env{
					Stdin: &stdin, Stdout: ts.Stdout(), Stderr: ts.Stderr(),
					Getenv:     ts.Getenv,
					Now:        func() time.Time { return scriptNow },
					Clipboard:  func(string) error { return errors.New("no clipboard in tests") },
					WorkDir:    ts.MkAbs("."),
					Environ:    scriptEnviron(ts),
					Executable: ts.Getenv("CARRYOVER_EXE"),
				}
				code := Main(append([]string{"carryover"}, args...), e)
				ts.Setenv("EXIT", strconv.Itoa(code))
				if (code != 0) != neg {
					ts.Fatalf("carryover exited %d", code)
				}
			},
			// jsoncheck checks the last command's stdout against the --json
			// contract (cmd/contract.go): see checkJSONContract.
			"jsoncheck": func(ts *testscript.TestScript, neg bool, args []string) {
				if err := checkJSONContract([]byte(ts.ReadFile("stdout"))); (err != nil) != neg {
					ts.Fatalf("--json contract: %v", err)
				}
			},
			"exitcode": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 {
					ts.Fatalf("usage: exitcode N")
				}
				if got := ts.Getenv("EXIT"); (got == args[0]) == neg {
					ts.Fatalf("exit code %s, want %s", got, args[0])
				}
			},
		},
	})
}

// scriptEnviron is the script's environment for subprocesses.
func scriptEnviron(ts *testscript.TestScript) []string {
	var out []string
	for _, k := range []string{"PATH", "HOME", "CARRYOVER_HOME", "NO_COLOR", "TMPDIR"} {
		if v := ts.Getenv(k); v != "" {
			out = append(out, k+"="+v)
		}
	}
	return out
}
