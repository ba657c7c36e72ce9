package cmd

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"golang.org/x/term"
)

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
