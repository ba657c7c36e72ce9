// Package cmd holds carryover's command-line interface: thin urfave/cli
// commands over functions that take an injected Env.
//
// The scripting contract lives in contract.go, and every command follows it:
//   - exit codes: the Exit* constants (`carryover help exit-codes`): 0 also
//     for an empty result, 2 for a bad command line (usageErrorf) or an id
//     that matches nothing (exitf(ExitNotFound, …) naming the closest ids);
//   - a mistyped command or flag gets "did you mean" by publish.EditDistance,
//     the one distance for config keys, history and session ids as well;
//   - a command without ArgsUsage takes no arguments (argsRule); flags may
//     come after arguments (interspersed);
//   - -h/--help everywhere, ending with an example from commandExamples;
//   - --json output only through printJSON: one object, schema_version
//     first, snake_case keys, lists under a named key (never null: nonNil),
//     JSON values (never TOML text or Go field names). Walked by
//     testdata/script/json_contract.txtar.
package cmd

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"
)

// Version, Commit and Date are set by release builds (-ldflags "-X
// github.com/carryover/carryover/cmd.Version=1.2.3 ..."); otherwise they
// come from the build info (see buildVersion).
var Version, Commit, Date string

// commandList is every subcommand's constructor (one cmd_<name>.go file
// each); the help lists them sorted by name.
// (A function, not a variable: completion walks the commands.)
func commandList() []func(*Env) *cli.Command {
	return []func(*Env) *cli.Command{
		captureCommand, clearCommand, completionCommand, configCommand, decideCommand, detectCommand, doctorCommand, explainCommand, forgetCommand, gcCommand,
		handoffCommand, historyCommand, ignoreCommand, infoCommand, installCommand, listCommand, refreshCommand, resumeCommand, runCommand,
		snapshotCommand, statusCommand, taskCommand, uninstallCommand, versionCommand,
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
	return ownHelpAt(cmd, "")
}

func ownHelpAt(cmd *cli.Command, parent string) *cli.Command {
	path := strings.TrimSpace(parent + " " + cmd.Name)
	addExample(cmd, path)
	argsRule(cmd)
	cmd.HideHelp = true
	cmd.Flags = append(cmd.Flags, helpFlag())
	if cmd.OnUsageError == nil {
		cmd.OnUsageError = onUsageError
	}
	for _, s := range cmd.Subcommands {
		ownHelpAt(s, path)
	}
	return cmd
}

func helpFlag() cli.Flag {
	return &cli.BoolFlag{Name: "help", Aliases: []string{"h"}, Usage: "show help"}
}

func helpCommand() *cli.Command {
	cmd := &cli.Command{
		Name: "help", Aliases: []string{"h"}, Usage: "show the commands, one command's help, or a topic: " + strings.Join(sortedTopics(), ", "),
		ArgsUsage: "[command|topic]", HideHelp: true,
		Action: func(c *cli.Context) error {
			name := c.Args().First()
			if t, ok := helpTopics[name]; ok {
				_, err := fmt.Fprint(c.App.Writer, t)
				return err
			}
			if name != "" {
				if c.App.Command(name) == nil {
					return unknownCommand("carryover --help", name, c.App.Commands)
				}
				return cli.ShowCommandHelp(c, name)
			}
			return cli.ShowAppHelp(c)
		},
	}
	addExample(cmd, "help")
	return cmd
}

// rootAction runs for `carryover` with no command (or an unknown one).
func rootAction(c *cli.Context) error {
	switch {
	case c.Bool("version"):
		_, err := fmt.Fprintln(c.App.Writer, buildVersion().String())
		return err
	case c.Args().Present():
		return unknownCommand("carryover --help", c.Args().First(), c.App.Commands)
	}
	return cli.ShowAppHelp(c)
}

// Main runs carryover with args and returns the process exit code.
func Main(args []string, env *Env) int {
	app := NewApp(env)
	err := app.Run(interspersed(app, args))
	if err == nil {
		return ExitOK
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(env.Stderr, "carryover: error: %s\n", ue.msg)
		fmt.Fprintf(env.Stderr, "carryover: hint: run `%s` for the usage\n", ue.help)
		return ExitUsage
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
