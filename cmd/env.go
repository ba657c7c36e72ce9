package cmd

import (
	"io"
	"os"
	"time"

	"github.com/atotto/clipboard"
	"golang.org/x/term"
)

// Env is everything a command touches outside its arguments. main builds it
// from the process; tests build it from buffers and maps.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv looks up an environment variable ("" when unset).
	Getenv func(string) string
	// Now is the clock.
	Now func() time.Time
	// Clipboard writes text to the system clipboard.
	Clipboard func(string) error
	// StdinTTY / StdoutTTY / StderrTTY report whether each stream is a terminal.
	StdinTTY, StdoutTTY, StderrTTY bool
	// Executable is the absolute path of the running carryover binary
	// (written into hook stubs).
	Executable string
	// Environ is the process environment (`carryover run` passes it to the
	// agent it starts); nil means none.
	Environ func() []string
	// MakeRaw puts the terminal on Stdin into raw mode (for the install
	// picker) and returns what restores it; nil or an error: no raw mode.
	MakeRaw func() (restore func(), err error)
}

// OSEnv is the Env of the running process.
func OSEnv() *Env {
	exe, err := os.Executable()
	if err != nil {
		exe = "carryover"
	}
	return &Env{
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		Getenv:     os.Getenv,
		Now:        time.Now,
		Clipboard:  clipboard.WriteAll,
		StdinTTY:   term.IsTerminal(int(os.Stdin.Fd())),
		StdoutTTY:  term.IsTerminal(int(os.Stdout.Fd())),
		StderrTTY:  term.IsTerminal(int(os.Stderr.Fd())),
		Executable: exe,
		Environ:    os.Environ,
		MakeRaw: func() (func(), error) {
			fd := int(os.Stdin.Fd())
			st, err := term.MakeRaw(fd)
			if err != nil {
				return nil, err
			}
			return func() { _ = term.Restore(fd, st) }, nil
		},
	}
}

// Home is carryover's state directory: $CARRYOVER_HOME, else ~/.carryover.
func (e *Env) Home() string {
	if h := e.Getenv("CARRYOVER_HOME"); h != "" {
		return h
	}
	return userHome(e) + "/.carryover"
}

// UserHome is the user's home directory from $HOME.
func (e *Env) UserHome() string { return userHome(e) }

func userHome(e *Env) string {
	if h := e.Getenv("HOME"); h != "" {
		return h
	}
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return "/"
}
