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

// commandList is every subcommand's constructor (one cmd_<name>.go file
// each); the help lists them sorted by name.
// (A function, not a variable: completion walks the commands.)
func commandList() []func(*Env) *cli.Command {
	return []func(*Env) *cli.Command{
		captureCommand, clearCommand, completionCommand, configCommand, decideCommand, detectCommand, doctorCommand, explainCommand, forgetCommand, gcCommand,
		handoffCommand, historyCommand, ignoreCommand, infoCommand, installCommand, listCommand, refreshCommand, resumeCommand, runCommand,
		snapshotCommand, statusCommand, taskCommand, uninstallCommand,
	}
}

// commands builds the subcommands, sorted by name, each with its own help
// flag and carryover's usage errors (see NewApp).
func commands(env *Env) []*cli.Command {
	var cs []*cli.Command
	for _, c := range commandList() {
		cs = append(cs, ownHelp(c(env)))
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
	return cs
}

// NewApp builds the CLI application over env. The help and version flags
// and the help command are the app's own, not urfave's package-level ones
// (which every app would share and write: in-process runs race), and a
// usage error is two lines, not the help page:
//
//	carryover: error: flag provided but not defined: -x
//	carryover: hint: run `carryover handoff --help` for its flags
func NewApp(env *Env) *cli.App {
	return &cli.App{
		Name:                 "carryover",
		Usage:                "keep AI coding agents on task across sessions, compactions and tool switches",
		Version:              Version,
		Reader:               env.Stdin,
		Writer:               env.Stdout,
		ErrWriter:            env.Stderr,
		Commands:             append(commands(env), helpCommand()),
		EnableBashCompletion: true,
		HideHelp:             true,
		HideHelpCommand:      true,
		HideVersion:          true,
		Flags:                []cli.Flag{helpFlag(), &cli.BoolFlag{Name: "version", Aliases: []string{"v"}, Usage: "print the version"}},
		Action:               rootAction,
		OnUsageError:         onUsageError,
		ExitErrHandler:       func(*cli.Context, error) {},
	}
}

// ownHelp gives cmd and its subcommands their own help flag and carryover's
// usage errors.
func ownHelp(cmd *cli.Command) *cli.Command {
	cmd.HideHelp = true
	cmd.Flags = append(cmd.Flags, helpFlag())
	if cmd.OnUsageError == nil {
		cmd.OnUsageError = onUsageError
	}
	for _, s := range cmd.Subcommands {
		ownHelp(s)
	}
	return cmd
}

func helpFlag() cli.Flag {
	return &cli.BoolFlag{Name: "help", Aliases: []string{"h"}, Usage: "show help"}
}

func helpCommand() *cli.Command {
	return &cli.Command{
		Name: "help", Aliases: []string{"h"}, Usage: "show the commands, or one command's help", ArgsUsage: "[command]", HideHelp: true,
		Action: func(c *cli.Context) error {
			if name := c.Args().First(); name != "" {
				if c.App.Command(name) == nil {
					return usageErrorf("carryover --help", "unknown command %q", name)
				}
				return cli.ShowCommandHelp(c, name)
			}
			return cli.ShowAppHelp(c)
		},
	}
}

// rootAction runs for `carryover` with no command (or an unknown one).
func rootAction(c *cli.Context) error {
	switch {
	case c.Bool("version"):
		fmt.Fprintf(c.App.Writer, "%s version %s\n", c.App.Name, c.App.Version)
		return nil
	case c.Args().Present():
		return usageErrorf("carryover --help", "unknown command %q", c.Args().First())
	}
	return cli.ShowAppHelp(c)
}

// usageError is a mistake in the command line: a bad flag, a missing
// argument. It exits with ExitError.
type usageError struct {
	msg  string
	help string // the command that shows the usage
}

func (e *usageError) Error() string { return e.msg }

func usageErrorf(help, format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), help: help}
}

func onUsageError(c *cli.Context, err error, isSubcommand bool) error {
	help := "carryover --help"
	if c.Command != nil && c.Command.Name != "" && isSubcommand {
		help = "carryover " + c.Command.Name + " --help"
	}
	return &usageError{msg: err.Error(), help: help}
}

// Main runs carryover with args and returns the process exit code.
func Main(args []string, env *Env) int {
	app := NewApp(env)
	err := app.Run(args)
	if err == nil {
		return ExitOK
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(env.Stderr, "carryover: error: %s\n", ue.msg)
		fmt.Fprintf(env.Stderr, "carryover: hint: run `%s` for the usage\n", ue.help)
		return ExitError
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
