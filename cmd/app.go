// Package cmd holds carryover's command-line interface: thin urfave/cli
// commands over functions that take an injected Env.
package cmd

import (
	"errors"
	"fmt"
	"sort"

	"github.com/urfave/cli/v2"
)

// Exit codes shared by every command.
const (
	ExitOK          = 0
	ExitError       = 1 // generic failure; also "no agents detected"
	ExitNotFound    = 2 // session not found
	ExitParse       = 3 // capture/parse error
	ExitCompression = 4 // could not fit the budget
)

// ExitError carries an exit code and a message with a hint.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func exitf(code int, format string, args ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, args...)}
}

// Version is set by the build (-ldflags "-X .../cmd.Version=...").
var Version = "dev"

// commands builds the subcommands, sorted by name. Each cmd_<name>.go file
// registers its constructor with register() in an init function, so adding a
// command touches one file.
func commands(env *Env) []*cli.Command {
	var cs []*cli.Command
	for _, c := range commandConstructors {
		cs = append(cs, c(env))
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	return cs
}

var commandConstructors []func(*Env) *cli.Command

func register(c func(*Env) *cli.Command) { commandConstructors = append(commandConstructors, c) }

// NewApp builds the CLI application over env.
func NewApp(env *Env) *cli.App {
	return &cli.App{
		Name:                 "carryover",
		Usage:                "keep AI coding agents on task across sessions, compactions and tool switches",
		Version:              Version,
		Reader:               env.Stdin,
		Writer:               env.Stdout,
		ErrWriter:            env.Stderr,
		Commands:             commands(env),
		EnableBashCompletion: true,
		ExitErrHandler:       func(*cli.Context, error) {},
	}
}

// Main runs carryover with args and returns the process exit code.
func Main(args []string, env *Env) int {
	app := NewApp(env)
	err := app.Run(args)
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintf(env.Stderr, "carryover: %s\n", ee.msg)
		}
		return ee.code
	}
	fmt.Fprintf(env.Stderr, "carryover: %v\n", err)
	return ExitError
}
