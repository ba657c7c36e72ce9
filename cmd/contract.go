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
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/publish"
)

// Version, Commit and Date are set by release builds (-ldflags "-X
// github.com/carryover/carryover/cmd.Version=1.2.3 ..."); otherwise they
// come from the build info (see buildVersion).
var Version, Commit, Date string

// commands builds the subcommands (in the order the help lists them),
// each with its own help flag and carryover's usage errors (see NewApp).
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

// NewApp builds the CLI application over env. The help and version flags
// and the help command are the app's own, not urfave's package-level ones
// (which every app would share and write: in-process runs race), and a
// usage error is two lines, not the help page:
//
//	carryover: error: flag provided but not defined: -x
//	carryover: hint: run `carryover handoff --help` for its flags
func NewApp(env *Env) *cli.App {
	return &cli.App{
		Name:            "carryover",
		Usage:           "keep AI coding agents on task across sessions, compactions and tool switches",
		Reader:          env.Stdin,
		Writer:          env.Stdout,
		ErrWriter:       env.Stderr,
		Commands:        append(commands(env), helpCommand()),
		HideHelp:        true,
		HideHelpCommand: true,
		HideVersion:     true,
		Flags:           []cli.Flag{helpFlag(), &cli.BoolFlag{Name: "version", Aliases: []string{"v"}, Usage: "print the version"}},
		Action:          rootAction,
		OnUsageError:    onUsageError,
		ExitErrHandler:  func(*cli.Context, error) {},
	}
}

// ownHelp gives cmd and its subcommands their own help flag, examples and
// carryover's usage errors.
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
		Name: "help", Aliases: []string{"h"}, Usage: "show the commands, one command's help, or a topic: " + strings.Join(slices.Sorted(maps.Keys(helpTopics)), ", "),
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

// Main runs carryover with args and returns the exit code.
func Main(args []string, env *Env) int {
	// The hook's command line, in the one form hookconf writes, skips
	// building the CLI: its 25 commands and urfave's parsing were ~0.65 ms
	// of CPU of a ~20 ms incremental Stop (perf over
	// BenchmarkSnapshotIncremental). Any other form parses as usual.
	if len(args) == 6 && args[1] == "snapshot" && args[2] == "--tool" && args[4] == "--event" {
		runSnapshot(env, args[3], args[5])
		return ExitOK
	}
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

// jsonSchemaVersion is the version of every command's --json output. It
// changes only when a key is removed or changes meaning; new keys do not
// change it.
const jsonSchemaVersion = 1

// printJSON writes v, which must encode as a JSON object, as carryover's
// --json output: schema_version first, then v's keys (snake_case; lists
// under a named key; values as JSON types, never TOML text).
func printJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(b) < 2 || b[0] != '{' {
		return fmt.Errorf("internal error: --json output must be an object, got %.20s", b)
	}
	var out bytes.Buffer
	out.WriteString(`{"schema_version":` + fmt.Sprint(jsonSchemaVersion))
	if string(b) != "{}" {
		out.WriteByte(',')
	}
	out.Write(b[1:])
	var ind bytes.Buffer
	if err := json.Indent(&ind, out.Bytes(), "", "  "); err != nil {
		return err
	}
	ind.WriteByte('\n')
	_, err = w.Write(ind.Bytes())
	return err
}

// usageError is a mistake in the command line: an unknown command or flag,
// an extra or missing argument. It exits with ExitUsage, as two lines:
//
//	carryover: error: flag provided but not defined: -x; did you mean --all?
//	carryover: hint: run `carryover list --help` for the usage
type usageError struct {
	msg  string
	help string // the command that shows the usage
}

func (e *usageError) Error() string { return e.msg }

func usageErrorf(help, format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), help: help}
}

func helpFor(c *cli.Context) string {
	if c == nil || c.Command == nil || c.Command.Name == "" {
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

// undefinedFlag is compiled at a usage error, not at every start.
var undefinedFlag = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^flag provided but not defined: -+(\S+)$`) })

func onUsageError(c *cli.Context, err error, isSubcommand bool) error {
	help := "carryover --help"
	if isSubcommand {
		help = helpFor(c)
	}
	msg := err.Error()
	if m := undefinedFlag().FindStringSubmatch(msg); m != nil {
		var flags []cli.Flag
		if c.Command != nil && isSubcommand {
			flags = c.Command.Flags
		} else {
			flags = c.App.Flags
		}
		if s := cli.SuggestFlag(flags, m[1], false); s != "" {
			msg += "; did you mean " + s + "?"
		}
	}
	return &usageError{msg: msg, help: help}
}

func init() {
	// urfave/cli's suggestions, with carryover's one edit distance (the
	// one config keys and history ids use) instead of its Jaro-Winkler, so
	// "did you mean" agrees everywhere.
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

// closest is the candidate nearest to s by publish.EditDistance, when it is
// near enough to be what was meant (at most 2 edits, or a third of s).
func closest(s string, candidates []string) (string, bool) {
	best, bestD := "", -1
	for _, c := range candidates {
		if d := publish.EditDistance(strings.ToLower(s), strings.ToLower(c)); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(2, len([]rune(s))/3) {
		return "", false
	}
	return best, true
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

// unknownCommand is the usage error for a command (or subcommand) that is
// not one.
func unknownCommand(help, name string, cmds []*cli.Command) error {
	msg := fmt.Sprintf("unknown command %q", name)
	if best, ok := closest(name, commandNames(cmds)); ok {
		msg += fmt.Sprintf("; did you mean %q?", best)
	} else if len(cmds) <= 6 {
		msg += "; it is one of " + strings.Join(commandNames(cmds), ", ")
	}
	return usageErrorf(help, "%s", msg)
}

// argsRule wraps cmd's action so that an argument the command does not
// take is a usage error instead of being ignored: a command without
// ArgsUsage takes none, and one with subcommands takes only their names.
// The hook entry (snapshot) is exempt: it never fails.
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
	ex, ok := commandExamples[path]
	if !ok {
		return
	}
	if cmd.Description != "" {
		cmd.Description += "\n\n"
	}
	cmd.Description += "EXAMPLES:\n   " + strings.ReplaceAll(strings.TrimSpace(ex), "\n", "\n   ")
}

// commandExamples is the example every command's --help ends with, by its
// full name.
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

// versionInfo is what `carryover version` reports, from the build:
// -ldflags -X cmd.Version (release builds) or the module version (go
// install …@v1.2.3), and the commit and its time that the Go toolchain
// stamps from git (vcs.revision, vcs.time).
type versionInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"` // "" when the build had no git metadata
	Date     string `json:"date"`   // the commit's time, RFC 3339
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
}

func buildVersion() versionInfo {
	v := versionInfo{Version: Version, Commit: Commit, Date: Date}
	if v.Commit == "none" || strings.HasPrefix(v.Date, "0001-") {
		// GoReleaser's placeholders when it could not read git.
		v.Commit, v.Date = "", ""
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = &debug.BuildInfo{}
	}
	v.Go = bi.GoVersion
	set := map[string]string{}
	for _, s := range bi.Settings {
		set[s.Key] = s.Value
	}
	v.Commit, v.Date = cmp.Or(v.Commit, set["vcs.revision"]), cmp.Or(v.Date, set["vcs.time"])
	v.Modified = Commit == "" && set["vcs.modified"] == "true"
	v.Version = cmp.Or(v.Version, bi.Main.Version) // "v1.2.3" from go install, "(devel)" from a checkout
	if v.Version == "" || v.Version == "(devel)" {
		// A build from a checkout: name the commit, like a Go pseudo-version.
		v.Version = "0.0.0-devel"
		if v.Commit != "" {
			v.Version += "+" + v.Commit[:min(12, len(v.Commit))]
		}
	}
	return v
}

func (v versionInfo) String() string {
	s := "carryover " + v.Version
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
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

func versionCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print carryover's version, commit and build date",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		Action: func(c *cli.Context) error {
			v := buildVersion()
			if c.Bool("json") {
				return printJSON(e.Stdout, v)
			}
			_, err := fmt.Fprintln(e.Stdout, v.String())
			return err
		},
	}
}

// helpTopics are `carryover help TOPIC` pages that are not commands.
var helpTopics = map[string]string{"exit-codes": exitCodesHelp}

// interspersed moves a command's flags before its arguments, so that
// `carryover handoff 4fbd56 --stdout` means what it says (urfave/cli stops
// reading flags at the first argument). Which flags take a value comes
// from the command's own flag list; "--" ends the flags, and a command
// that parses its own (run) is left alone.
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 3 {
		return args
	}
	cmd, i := commandOf(app, args)
	if cmd == nil || cmd.SkipFlagParsing {
		return args
	}
	flags, pos := splitFlags(args[i:], valueFlags(cmd))
	out := append(append([]string{}, args[:i]...), flags...)
	return append(out, pos...)
}

// commandOf is the (sub)command args name after the program, and the
// index of the first argument after it.
func commandOf(app *cli.App, args []string) (cmd *cli.Command, i int) {
	i, cmds := 1, app.Commands
	for i < len(args) {
		var next *cli.Command
		for _, c := range cmds {
			if c.HasName(args[i]) {
				next = c
			}
		}
		if next == nil {
			break
		}
		cmd, cmds = next, next.Subcommands
		i++
	}
	return cmd, i
}

// valueFlags tells, by name, which of cmd's flags take a value (all but
// the boolean ones).
func valueFlags(cmd *cli.Command) map[string]bool {
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	return takesValue
}

// splitFlags separates rest into the flags (with their values) and the
// positional arguments; everything from "--" on is positional.
func splitFlags(rest []string, takesValue map[string]bool) (flags, pos []string) {
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		if a == "--" {
			pos = append(pos, rest[j:]...)
			break
		}
		if len(a) > 1 && a[0] == '-' {
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && takesValue[name] && j+1 < len(rest) {
				flags = append(flags, rest[j+1])
				j++
			}
			continue
		}
		pos = append(pos, a)
	}
	return flags, pos
}

// nonNil makes an empty list print as [] in --json, never null.
func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}
