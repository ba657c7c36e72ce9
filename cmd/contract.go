// Package cmd is carryover's command line: urfave/cli commands that parse flags, call the project service
// (publish/service) over an injected Env and format the output. Every command follows the contract in this file:
//   - exit codes: the Exit* constants (`carryover help exit-codes`); 0 also for an empty result, 2 for a bad command
//     line (usageErrorf) or an id that matches nothing (exitf(ExitNotFound, …) naming the closest ids);
//   - "did you mean" by publish.EditDistance, the one distance for commands, flags, config keys, history and sessions;
//   - a command without ArgsUsage takes no arguments (argsRule); flags may come after arguments (interspersed);
//     -h/--help everywhere, ending with an example from commandExamples;
//   - --json only through printJSON: one object, schema_version first, snake_case keys, lists under a named key
//     (never null: nonNil), JSON values. Walked by testdata/script/json_contract.txtar.
package cmd

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/publish"
)

// Version, Commit and Date are set by release builds (-ldflags "-X github.com/carryover/carryover/cmd.Version=1.2.3
// ..."), else read from the build info (buildVersion).
var Version, Commit, Date string

// commands builds the subcommands in the order the help lists them.
func commands(env *Env) []*cli.Command {
	var cs []*cli.Command
	for _, c := range []func(*Env) *cli.Command{
		captureCommand, clearCommand, completionCommand, configCommand, decideCommand, detectCommand, doctorCommand, explainCommand, forgetCommand, gcCommand,
		handoffCommand, historyCommand, ignoreCommand, infoCommand, installCommand, listCommand, refreshCommand, resumeCommand, runCommand,
		snapshotCommand, statusCommand, taskCommand, uninstallCommand, versionCommand,
	} {
		cs = append(cs, ownHelp(c(env), ""))
	}
	return cs
}

// NewApp builds the CLI over env. Help and version flags and the help command are the app's own, not urfave's globals
// (shared by every app: in-process runs race); a usage error is two lines (usageError), not the help page.
func NewApp(env *Env) *cli.App {
	suggestOnce.Do(setSuggestions)
	return &cli.App{
		Name:   "carryover",
		Usage:  "keep AI coding agents on task across sessions, compactions and tool switches",
		Reader: env.Stdin, Writer: env.Stdout, ErrWriter: env.Stderr,
		Commands: append(commands(env), helpCommand()),
		HideHelp: true, HideHelpCommand: true, HideVersion: true,
		Flags:          []cli.Flag{helpFlag(), &cli.BoolFlag{Name: "version", Aliases: []string{"v"}, Usage: "print the version"}},
		Action:         rootAction,
		OnUsageError:   onUsageError,
		ExitErrHandler: func(*cli.Context, error) {},
	}
}

// ownHelp gives cmd and its subcommands their help flag, example, argument rule and carryover's usage errors.
func ownHelp(cmd *cli.Command, parent string) *cli.Command {
	path := strings.TrimSpace(parent + " " + cmd.Name)
	addExample(cmd, path)
	argsRule(cmd)
	cmd.HideHelp = true
	cmd.Flags = append(cmd.Flags, helpFlag())
	if cmd.OnUsageError == nil {
		cmd.OnUsageError = onUsageError
	}
	for _, s := range cmd.Subcommands {
		ownHelp(s, path)
	}
	return cmd
}

func helpFlag() cli.Flag {
	return &cli.BoolFlag{Name: "help", Aliases: []string{"h"}, Usage: "show help"}
}

func helpCommand() *cli.Command {
	cmd := &cli.Command{
		Name: "help", Aliases: []string{"h"}, Usage: "show the commands, one command's help, or a topic: exit-codes",
		ArgsUsage: "[command|topic]", HideHelp: true,
		Action: func(c *cli.Context) error {
			switch name := c.Args().First(); {
			case name == "exit-codes":
				_, err := fmt.Fprint(c.App.Writer, exitCodesHelp)
				return err
			case name != "" && c.App.Command(name) == nil:
				return unknownCommand("carryover --help", name, c.App.Commands)
			case name != "":
				return cli.ShowCommandHelp(c, name)
			}
			return cli.ShowAppHelp(c)
		},
	}
	addExample(cmd, "help")
	return cmd
}

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

// Exit codes shared by every command (`carryover help exit-codes`).
const (
	ExitOK          = 0
	ExitError       = 1   // anything else that went wrong
	ExitUsage       = 2   // a bad command line: unknown command or flag, extra or missing argument
	ExitNotFound    = 2   // what was named is not there: a session, a handoff, a decision
	ExitParse       = 3   // a file could not be read or parsed (transcript, session.json)
	ExitCompression = 4   // the handoff does not fit the token budget
	ExitCancelled   = 130 // the user cancelled (Ctrl-C, q in a picker)
)

// exitError carries an exit code and a message that says what to do next.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func exitf(code int, format string, args ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, args...)}
}

// exitCodesHelp is `carryover help exit-codes` (and the README's table).
const exitCodesHelp = `Exit codes (the same for every command):
  0    success, including an empty result (an empty list, nothing to clean)
  1    error: something went wrong; the message says what to do next
  2    usage or not found: an unknown command, flag or extra argument, or a
       session, handoff or decision id that matches nothing (the closest are named)
  3    unreadable: a transcript or session file could not be read or parsed
  4    budget: the handoff does not fit the requested token budget
  130  cancelled by the user (Ctrl-C, or q in a picker)
The hook entry, carryover snapshot, always exits 0.
`

// jsonSchemaVersion versions every --json output: it changes when a key goes or changes meaning, not for new keys.
const jsonSchemaVersion = 1

// printJSON writes v, which must encode as an object, as --json output: schema_version first, then v's keys.
func printJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(b) < 2 || b[0] != '{' {
		return fmt.Errorf("internal error: --json output must be an object, got %.20s", b)
	}
	if string(b) != "{}" {
		b[0] = ','
	} else {
		b = b[1:]
	}
	var ind bytes.Buffer
	if err := json.Indent(&ind, append([]byte(`{"schema_version":`+fmt.Sprint(jsonSchemaVersion)), b...), "", "  "); err != nil {
		return err
	}
	ind.WriteByte('\n')
	_, err = w.Write(ind.Bytes())
	return err
}

// output prints v as --json output, else runs text.
func output(e *Env, asJSON bool, v any, text func()) error {
	if asJSON {
		return printJSON(e.Stdout, v)
	}
	text()
	return nil
}

// usageError is a mistake in the command line (unknown command or flag, an
// extra or missing argument): ExitUsage, as two lines:
//
//	carryover: error: flag provided but not defined: -x; did you mean --all?
//	carryover: hint: run `carryover list --help` for the usage
type usageError struct{ msg, help string } // help: the command that shows the usage

func (e *usageError) Error() string { return e.msg }

func usageErrorf(help, format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), help: help}
}

func helpFor(c *cli.Context) string {
	if c.Command == nil || c.Command.Name == "" {
		return "carryover --help"
	}
	return "carryover " + fullName(c) + " --help"
}

// fullName is "history show" for history's show subcommand.
func fullName(c *cli.Context) string {
	var names []string
	for _, x := range c.Lineage() {
		if x.Command != nil && x.Command.Name != "" && x.Command.Name != c.App.Name {
			names = append([]string{x.Command.Name}, names...)
		}
	}
	return strings.Join(names, " ")
}

func onUsageError(c *cli.Context, err error, isSubcommand bool) error {
	help, flags := "carryover --help", c.App.Flags
	if isSubcommand {
		help = helpFor(c)
		if c.Command != nil {
			flags = c.Command.Flags
		}
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok && !strings.ContainsAny(name, " \t") {
		if s := cli.SuggestFlag(flags, strings.TrimLeft(name, "-"), false); s != "" {
			msg += "; did you mean " + s + "?"
		}
	}
	return &usageError{msg: msg, help: help}
}

// suggestOnce sets urfave/cli's suggestions (package globals) to carryover's one edit distance instead of its
// Jaro-Winkler, so "did you mean" agrees everywhere; at the first NewApp, not at every start (the hook's).
var suggestOnce sync.Once

func setSuggestions() {
	cli.SuggestFlag = func(flags []cli.Flag, provided string, _ bool) string {
		var names []string
		for _, f := range flags {
			names = append(names, f.Names()...)
		}
		if best, ok := closest(provided, names); ok {
			return dash(best)
		}
		return ""
	}
	cli.SuggestCommand = func(cmds []*cli.Command, provided string) string {
		if best, ok := closest(provided, commandNames(cmds)); ok {
			return fmt.Sprintf("did you mean %q?", best)
		}
		return ""
	}
}

// closest is the candidate nearest to s (publish.EditDistance) if near enough: at most 2 edits, or a third of s.
func closest(s string, candidates []string) (string, bool) {
	best, bestD := publish.Nearest(s, candidates, strings.ToLower)
	return best, best != "" && bestD <= max(2, len([]rune(s))/3)
}

func commandNames(cmds []*cli.Command) []string {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	return names
}

// unknownCommand is the usage error for a (sub)command that is not one.
func unknownCommand(help, name string, cmds []*cli.Command) error {
	msg := fmt.Sprintf("unknown command %q", name)
	if best, ok := closest(name, commandNames(cmds)); ok {
		msg += fmt.Sprintf("; did you mean %q?", best)
	} else if len(cmds) <= 6 {
		msg += "; it is one of " + strings.Join(commandNames(cmds), ", ")
	}
	return usageErrorf(help, "%s", msg)
}

// argsRule makes an argument the command does not take a usage error: a command without ArgsUsage takes none, one with
// subcommands only their names. The hook entry (snapshot) is exempt: it never fails.
func argsRule(cmd *cli.Command) {
	if cmd.ArgsUsage != "" || cmd.SkipFlagParsing || cmd.Name == "snapshot" || cmd.Action == nil {
		return
	}
	action := cmd.Action
	cmd.Action = func(c *cli.Context) error {
		if c.NArg() == 0 {
			return action(c)
		}
		if subs := c.Command.Subcommands; len(subs) > 0 {
			return unknownCommand(helpFor(c), c.Args().First(), subs)
		}
		return usageErrorf(helpFor(c), "%s takes no arguments, got %q", fullName(c), strings.Join(c.Args().Slice(), " "))
	}
}

func addExample(cmd *cli.Command, path string) {
	if ex, ok := commandExamples[path]; ok {
		cmd.Description = strings.TrimPrefix(cmd.Description+"\n\nEXAMPLES:\n   "+strings.ReplaceAll(ex, "\n", "\n   "), "\n\n")
	}
}

// commandExamples end each command's --help, by its full name.
var commandExamples = map[string]string{
	"capture":       "carryover capture                      # .carryover/session.json of the latest session",
	"clear":         "carryover clear                        # new sessions start without the current handoff",
	"completion":    "source <(carryover completion bash)",
	"config":        "carryover config --json\ncarryover config get limits.warn_percent",
	"config get":    "carryover config get limits.warn_percent",
	"config set":    "carryover config set limits.warn_percent 80\ncarryover config set resume brief --project",
	"config unset":  "carryover config unset limits.warn_percent",
	"decide":        "carryover decide \"use sqlite, not postgres\" --why \"single binary\"\ncarryover decide --list\ncarryover decide --drop d-3f2a1c",
	"detect":        "carryover detect --json",
	"doctor":        "carryover doctor || echo \"fix the hooks listed above\"",
	"explain":       "carryover explain                      # each handoff line with the rule and rows behind it\ncarryover explain --json",
	"forget":        "carryover forget 4fbd56 --dry-run      # what would go\ncarryover forget 4fbd56",
	"ignore":        "carryover ignore                       # this directory: hooks here store nothing\ncarryover ignore --list\ncarryover ignore --remove",
	"gc":            "carryover gc --older-than 90d --dry-run",
	"handoff":       "carryover handoff                      # the latest session of this project\ncarryover handoff 4fbd56 --stdout       # a session by id prefix\ncarryover handoff --pick                # choose from a list on this terminal",
	"history":       "carryover history --json",
	"history clean": "carryover history clean --older-than 30d --dry-run",
	"history show":  "carryover history show HO-20261121",
	"info":          "carryover info --json",
	"install":       "carryover install --tools claude,codex --yes",
	"list":          "carryover list --all --limit 0 --json\ncarryover handoff \"$(carryover list --pick)\"",
	"refresh":       "carryover refresh",
	"resume":        "carryover resume --file .carryover/session.json --stdout",
	"run":           "carryover run -- claude\ncarryover run -- claude --help          # the agent's own help",
	"snapshot":      "echo '{}' | carryover snapshot --tool claude --event SessionStart",
	"status":        "carryover status --json",
	"task":          "carryover task \"ship the retry helper\"\ncarryover task --done",
	"uninstall":     "carryover uninstall",
	"version":       "carryover version --json",
	"help":          "carryover help exit-codes",
}

// versionInfo is `carryover version`: -ldflags -X cmd.Version (release builds) or the module version (go install
// …@v1.2.3), and the commit and its time the Go toolchain stamps from git (vcs.revision, vcs.time).
type versionInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"` // "" when the build had no git metadata
	Date     string `json:"date"`   // the commit's time, RFC 3339
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
}

func buildVersion() versionInfo {
	v := versionInfo{Version: Version, Commit: Commit, Date: Date}
	if v.Commit == "none" || strings.HasPrefix(v.Date, "0001-") { // GoReleaser's placeholders without git
		v.Commit, v.Date = "", ""
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = &debug.BuildInfo{}
	}
	set := map[string]string{}
	for _, s := range bi.Settings {
		set[s.Key] = s.Value
	}
	v.Go, v.Commit, v.Date = bi.GoVersion, cmp.Or(v.Commit, set["vcs.revision"]), cmp.Or(v.Date, set["vcs.time"])
	v.Modified = Commit == "" && set["vcs.modified"] == "true"
	v.Version = cmp.Or(v.Version, bi.Main.Version) // "v1.2.3" from go install, "(devel)" from a checkout
	if v.Version == "" || v.Version == "(devel)" { // name the commit, like a Go pseudo-version
		v.Version = "0.0.0-devel"
		if v.Commit != "" {
			v.Version += "+" + v.Commit[:min(12, len(v.Commit))]
		}
	}
	return v
}

func (v versionInfo) String() string {
	var parts []string
	if v.Commit != "" {
		c := v.Commit[:min(12, len(v.Commit))]
		if v.Modified {
			c += " (modified)"
		}
		parts = append(parts, "commit "+c)
	}
	if v.Date != "" {
		parts = append(parts, "built from "+v.Date)
	}
	if v.Commit == "" {
		parts = append(parts, "commit unknown: built without git metadata (-buildvcs=false or outside a clone)")
	}
	if v.Go != "" {
		parts = append(parts, v.Go)
	}
	return "carryover " + v.Version + " (" + strings.Join(parts, ", ") + ")"
}

func versionCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print carryover's version, commit and build date",
		Flags: []cli.Flag{jsonFlag("print JSON")},
		Action: func(c *cli.Context) error {
			v := buildVersion()
			return output(e, c.Bool("json"), v, func() { fmt.Fprintln(e.Stdout, v.String()) })
		},
	}
}

// interspersed moves a command's flags before its arguments (urfave/cli stops at the first), so `carryover handoff
// 4fbd56 --stdout` works. Non-boolean flags take the next word; "--" ends the flags; run (own parsing) is left alone.
func interspersed(app *cli.App, args []string) []string {
	var cmd *cli.Command
	i, cmds := 1, app.Commands
	for ; i < len(args); i++ {
		j := slices.IndexFunc(cmds, func(c *cli.Command) bool { return c.HasName(args[i]) })
		if j < 0 {
			break
		}
		cmd, cmds = cmds[j], cmds[j].Subcommands
	}
	if cmd == nil || cmd.SkipFlagParsing {
		return args
	}
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	flags, pos := slices.Clone(args[:i]), []string{}
	for rest := args[i:]; len(rest) > 0; rest = rest[1:] {
		a := rest[0]
		if a == "--" {
			pos = append(pos, rest...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		if name := strings.TrimLeft(a, "-"); !strings.Contains(name, "=") && takesValue[name] && len(rest) > 1 {
			flags, rest = append(flags, rest[1]), rest[1:]
		}
	}
	return append(flags, pos...)
}

// nonNil makes an empty list print as [] in --json, never null.
func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// jsonFlag is every command's --json.
func jsonFlag(usage string) cli.Flag { return &cli.BoolFlag{Name: "json", Usage: usage} }
