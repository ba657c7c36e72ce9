package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/service"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// Main runs carryover with args and returns the exit code.
func Main(args []string, env *Env) int {
	// The hook's command line, in the one form hookconf writes, skips building the CLI: its 25 commands and urfave's
	// parsing were ~0.65 ms of CPU of a ~20 ms incremental Stop (BenchmarkSnapshotIncremental).
	if len(args) == 6 && args[1] == "snapshot" && args[2] == "--tool" && args[4] == "--event" {
		runSnapshot(env, args[3], args[5])
		return ExitOK
	}
	app := NewApp(env)
	err := app.Run(interspersed(app, args))
	var ue *usageError
	var ee *exitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ue):
		fmt.Fprintf(env.Stderr, "carryover: error: %s\ncarryover: hint: run `%s` for the usage\n", ue.msg, ue.help)
		return ExitUsage
	case errors.As(err, &ee):
		if ee.msg != "" {
			fmt.Fprintf(env.Stderr, "carryover: %s\n", ee.msg)
		}
		return ee.code
	}
	fmt.Fprintf(env.Stderr, "carryover: %v\n", err)
	return ExitError
}

// Snapshot is the hook entry point: the watchdog around service.OnHook and the one write to stdout. Whatever happens it
// returns normally; the only stdout is a valid injection (or nothing), every problem goes to the log.
func Snapshot(e *Env, tool, event string) {
	start := time.Now()
	log := newLogger(e)
	log.Prefix = fmt.Sprintf("snapshot tool=%s event=%s ", tool, event)
	defer func() {
		if r := recover(); r != nil {
			log.Printf("internal error (recovered): %v", r)
		}
	}()
	var out []byte
	fb := &service.Fallback{}
	wlog := *log // the watchdog's own copy: OnHook grows log's prefix
	b := snapshotBudget(e, tool, event)
	finished, err := runBy(start.Add(b+watchdogGrace(b)), func() error {
		var err error
		out, err = service.OnHook(e.service(), tool, event, start, log, fb)
		return err
	})
	if !finished { // OnHook is left behind as the process exits; session start still gets the last published handoff the home's digests vouch for (no ledger needed)
		wlog.Printf("stopped waiting after %s (internal deadline %s): something the hook was reading or waiting for did not answer (a ledger locked by another process?); the next event catches up",
			time.Since(start).Round(time.Millisecond), b)
		writeInjection(e, fb.Inject(event, &wlog), &wlog)
		return
	}
	if err != nil {
		logOrStderr(e, log, err)
	}
	writeInjection(e, out, log) // one write: a valid injection
	log.Printf("done in %s", time.Since(start).Round(time.Millisecond))
}

// snapshotBudget is the internal deadline of tool's event (the default for an unknown tool).
func snapshotBudget(e *Env, tool, event string) time.Duration {
	if agent, ok := adapters.ByName(tool); ok {
		c := agent.Class(event)
		return service.Budget(e.Getenv, c) + agent.FlushWaitFor(c)
	}
	return service.Budget(e.Getenv, adapters.ClassOther)
}

func adapterEnv(e *Env) adapters.Env { return adapters.Env{Getenv: e.Getenv, Home: e.UserHome()} }

// service is what the project service reads of the process.
func (e *Env) service() service.Env {
	return service.Env{Home: e.Home(), Agent: adapterEnv(e), Stdin: e.Stdin, Stderr: e.Stderr, WorkDir: e.WorkDir, Now: e.Now}
}

// logOrStderr logs err, or, when the log cannot grow (read-only or full home), writes it to stderr, which agents show
// only in their debug views for a hook that exits 0.
func logOrStderr(e *Env, log *service.Log, err error) {
	size := func() int64 {
		fi, err := os.Stat(log.Path)
		if err != nil {
			return -1
		}
		return fi.Size()
	}
	before := size()
	log.Printf("%v", err)
	if size() == before && e.Stderr != nil {
		msg := err.Error()
		if log.Redact != nil {
			msg = log.Redact(msg)
		}
		fmt.Fprintf(e.Stderr, "carryover: %s (and %s could not be written)\n", publish.OneLine(log.Prefix+msg), log.Path)
	}
}

// writeInjection prints the injection; an agent that closed the hook's stdout early gets a log line, not a hook killed
// by SIGPIPE (runSnapshot ignores it: the write fails with EPIPE instead).
func writeInjection(e *Env, b []byte, log *service.Log) {
	if len(b) == 0 {
		return
	}
	if _, err := e.Stdout.Write(b); err != nil {
		log.Printf("write injection to stdout: %v (the agent closed it early?)", err)
	}
}

// snapshotHeap bounds the hook's Go heap; below it the collector does not run at all: an incremental snapshot ends
// before it would matter, and a cold ingest of a huge transcript spends its CPU on parsing and SQLite, not on
// collections that free little (batches are reused). Peak RSS stays well under 64 MB (BenchmarkColdIngest).
const snapshotHeap = 40 << 20

func snapshotCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "snapshot",
		Usage: "record a hook event (run by agent hooks; reads the hook JSON on stdin)",
		Description: "Tails the agent's transcript into the ledger, refreshes .carryover/handoff.md and, on\n" +
			"session start, prints the handoff in the agent's injection envelope. It always exits 0;\n" +
			"problems go to $CARRYOVER_HOME/carryover.log.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tool", Usage: "agent: " + strings.Join(adapters.Names(), ", ")},
			&cli.StringFlag{Name: "event", Usage: "the agent's native hook event name"},
		},
		Action: func(c *cli.Context) error {
			runSnapshot(e, c.String("tool"), c.String("event"))
			return nil
		},
		OnUsageError: func(c *cli.Context, err error, _ bool) error { // never break the agent, even on a bad stub
			newLogger(e).Printf("snapshot: bad arguments: %v", err)
			return nil
		},
	}
}

// runSnapshot is the snapshot command's action: the process's settings for a hook, then the event.
func runSnapshot(e *Env, tool, event string) {
	signal.Ignore(syscall.SIGPIPE)
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(snapshotHeap)
	Snapshot(e, tool, event)
}

// newLogger appends to $CARRYOVER_HOME/carryover.log.
func newLogger(e *Env) *service.Log { return service.NewLog(e.Home(), e.Now) }

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// watchdogGrace is how long past its internal deadline a snapshot may run before the hook gives up on it: half the
// budget, at most 500 ms, so Claude's SessionEnd (0.9 s budget) ends within the 1.5 s Claude gives the hook. The
// snapshot's own deadlines keep a slow run well inside it; the watchdog is for what has none: a read blocked on a
// network file system, a ledger held by another process (reads are bounded too: safefile).
func watchdogGrace(budget time.Duration) time.Duration { return min(budget/2, 500*time.Millisecond) }

// runBy runs fn on another goroutine until deadline; ok is false when the deadline came first: fn is abandoned as the
// process exits (its writes are atomic renames and ledger transactions, left whole: the kill -9 tests).
func runBy(deadline time.Time, fn func() error) (ok bool, err error) {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("internal error (recovered): %v", r)
			}
		}()
		done <- fn()
	}()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case err := <-done:
		return true, err
	case <-t.C:
		return false, nil
	}
}

// Env is everything a command touches outside its arguments: main builds it from the process, tests from buffers.
type Env struct {
	Stdin                          io.Reader
	Stdout, Stderr                 io.Writer
	Getenv                         func(string) string // "" when unset
	Now                            func() time.Time
	Clipboard                      func(string) error // writes to the system clipboard
	StdinTTY, StdoutTTY, StderrTTY bool
	Executable                     string   // the running carryover binary, absolute (written into hook stubs)
	WorkDir                        string   // "" when it cannot be read
	Environ                        []string // what subprocesses (agents' --version) start from; carryover adds what it needs
	// StartProcess runs an agent attached to the terminal (--launch); nil runs it with Stdin, Stdout and Stderr.
	StartProcess func(dir string, argv []string) error
	// MakeRaw puts the terminal on Stdin into raw mode (pickers) and returns
	// what restores it; nil or an error: no raw mode.
	MakeRaw  func() (restore func(), err error)
	progress func(path string, off int64) // set by a spinner while it shows bytes read
}

// OSEnv is the Env of the running process.
func OSEnv() *Env {
	exe, err := os.Executable()
	if err != nil {
		exe = "carryover"
	}
	wd, _ := os.Getwd()
	e := &Env{
		WorkDir: wd, Environ: os.Environ(), Executable: exe,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Getenv: os.Getenv, Now: time.Now,
		StdinTTY: term.IsTerminal(int(os.Stdin.Fd())), StdoutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		StderrTTY: term.IsTerminal(int(os.Stderr.Fd())),
		MakeRaw: func() (func(), error) {
			fd := int(os.Stdin.Fd())
			st, err := term.MakeRaw(fd)
			if err != nil {
				return nil, err
			}
			return func() { _ = term.Restore(fd, st) }, nil
		},
	}
	e.Clipboard = func(text string) error { return systemClipboard(e, text) }
	return e
}

// systemClipboard writes text to the clipboard: through the Win32 API on Windows (env_windows.go), elsewhere through
// the first of clipboardPrograms in PATH, looked up when a command copies — atotto/clipboard searched PATH for them in
// its init, in every process: ~50 stats, 0.2 ms of each hook.
var systemClipboard = func(e *Env, text string) error {
	for _, argv := range clipboardPrograms {
		if argv[0] == "wl-copy" && e.Getenv("WAYLAND_DISPLAY") == "" {
			continue
		}
		if p := lookPath(e, argv[0]); p != "" {
			c := exec.Command(p, argv[1:]...)
			c.Stdin = strings.NewReader(text)
			return c.Run()
		}
	}
	return errors.New("no clipboard program in PATH (wl-copy, xclip, xsel)")
}

// clipboardPrograms take text for the clipboard on stdin (atotto/clipboard's list, and macOS's pbcopy).
var clipboardPrograms = [][]string{{"wl-copy"}, {"xclip", "-in", "-selection", "clipboard"}, {"xsel", "--input", "--clipboard"},
	{"termux-clipboard-set"}, {"clip.exe"}, {"pbcopy"}}

// startProcess runs argv in dir attached to e's streams (see StartProcess).
func (e *Env) startProcess(dir string, argv []string) error {
	if e.StartProcess != nil {
		return e.StartProcess(dir, argv)
	}
	c := exec.Command(argv[0], argv[1:]...)
	c.Dir = dir
	c.Stdin, c.Stdout, c.Stderr = e.Stdin, e.Stdout, e.Stderr
	return c.Run()
}

// Home is carryover's state directory: $CARRYOVER_HOME, else ~/.carryover.
func (e *Env) Home() string {
	if h := e.Getenv("CARRYOVER_HOME"); h != "" {
		return h
	}
	return e.UserHome() + "/.carryover"
}

// UserHome is the user's home directory from $HOME.
func (e *Env) UserHome() string {
	if h := e.Getenv("HOME"); h != "" {
		return h
	}
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return "/"
}
