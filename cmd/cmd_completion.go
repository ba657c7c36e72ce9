package cmd

// `carryover completion bash|zsh|fish|powershell` prints a completion script made from the command tree itself
// (commands, subcommands, flags, flag values): it never drifts from the CLI, and completing runs no carryover process.
// Each shell's script is a template (completion/*.tmpl) over that tree.

import (
	"embed"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/template"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/publish/config"
	"github.com/carryover/carryover/publish/resume"
	"github.com/carryover/carryover/specs"
)

func completionCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash, zsh, fish or PowerShell",
		ArgsUsage: "bash|zsh|fish|powershell",
		Description: "bash:  echo 'source <(carryover completion bash)' >> ~/.bashrc\n" +
			"zsh:   echo 'source <(carryover completion zsh)' >> ~/.zshrc\n" +
			"fish:  carryover completion fish > ~/.config/fish/completions/carryover.fish\n" +
			"PowerShell:  carryover completion powershell | Out-String | Add-Content $PROFILE",
		Action: func(c *cli.Context) error { return runCompletion(e, c.Args().First()) },
	}
}

func runCompletion(e *Env, shell string) error {
	tree := completionTree(commands(e))
	switch shell {
	case "bash", "zsh", "fish", "powershell", "pwsh":
		return completionScripts().ExecuteTemplate(e.Stdout, strings.Replace(shell, "pwsh", "powershell", 1)+".tmpl", completionData{tree, flagValues()})
	}
	return usageErrorf("carryover completion --help", "which shell? `carryover completion bash`, `zsh`, `fish` or `powershell`")
}

// completionData is what the bash, zsh and PowerShell templates (completion/*.tmpl) fill in: the command tree and the
// values of flags that take a fixed set.
type completionData struct {
	Tree   []compCmd
	Values map[string][]string
}

// Top are the words after `carryover`: the commands, --help and --version.
func (d completionData) Top() []string { return append(names(d.Tree), "--help", "--version") }

//go:embed completion
var completionFiles embed.FS

// completionScripts parses the templates at the first completion, never at start-up.
var completionScripts = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Funcs(template.FuncMap{
		"join": func(xs []string) string { return strings.Join(xs, " ") }, "q": strconv.Quote,
		"zshQuote": zshQuote, "psArray": psArray, "paths": commandPaths, "names": names, "fishQuote": fishQuote,
	}).ParseFS(completionFiles, "completion/*.tmpl"))
})

// compCmd is one command (or subcommand) for completion; Args are the positional arguments worth completing.
type compCmd struct {
	Name, Usage string
	flags       []compFlag
	Subs        []compCmd
	Args        []string
}

// compFlag: names long first; values completes the value (nil: none or free text); takes: the flag takes a value.
type compFlag struct {
	names  []string
	usage  string
	values []string
	takes  bool
}

// flagValues are the values worth completing, by flag name.
func flagValues() map[string][]string {
	return map[string][]string{
		"tools":  specs.Names(),
		"source": adapters.ListerNames(),
		"resume": config.ResumeModes,
		"target": resume.Targets(),
		"format": {"md", "yaml", "json"},
	}
}

func completionTree(cs []*cli.Command) []compCmd {
	vals := flagValues()
	var out []compCmd
	for _, c := range cs {
		if c.Hidden {
			continue
		}
		cc := compCmd{Name: c.Name, Usage: c.Usage}
		for _, f := range c.Flags {
			if f.Names()[0] == "help" {
				continue // the writers add --help themselves
			}
			names := f.Names()
			sort.SliceStable(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
			cf := compFlag{names: names}
			if d, ok := f.(cli.DocGenerationFlag); ok {
				cf.usage, cf.takes = d.GetUsage(), d.TakesValue()
			}
			if cf.takes {
				cf.values = vals[names[0]]
			}
			cc.flags = append(cc.flags, cf)
		}
		cc.Subs = completionTree(c.Subcommands)
		switch c.Name { // the positional arguments of commands that take a fixed set
		case "completion":
			cc.Args = []string{"bash", "zsh", "fish", "powershell"}
		case "get", "set", "unset":
			cc.Args = config.LeafNames()
		}
		out = append(out, cc)
	}
	return out
}

func dash(n string) string { return strings.Repeat("-", min(len(n), 2)) + n } // -h, --help

// Words are c's subcommands, its argument values, its flags and --help.
func (c compCmd) Words() []string {
	ws := c.Args
	for _, s := range c.Subs {
		ws = append(ws, s.Name)
	}
	for _, f := range c.flags {
		for _, n := range f.names {
			ws = append(ws, dash(n))
		}
	}
	return append(ws, "--help")
}

func names(tree []compCmd) []string {
	var ns []string
	for _, c := range tree {
		ns = append(ns, c.Name)
	}
	return ns
}

// zshQuote makes s safe inside a single-quoted word; zshDesc also inside an _arguments option's [description].
func zshQuote(s string) string { return strings.ReplaceAll(s, "'", "'\\''") }

func zshDesc(s string) string {
	return zshQuote(strings.NewReplacer("[", "\\[", "]", "\\]").Replace(s))
}

// ZshSpecs are c's _arguments specs: its flags, then its argument values or files.
func (c compCmd) ZshSpecs() string {
	var out []string
	for _, f := range c.flags {
		for _, n := range f.names {
			spec := dash(n) + "[" + zshDesc(f.usage) + "]"
			if f.takes {
				spec += ":" + n + ":"
				if len(f.values) > 0 {
					spec += "(" + strings.Join(f.values, " ") + ")"
				} else {
					spec += "_files"
				}
			}
			out = append(out, "'"+spec+"'")
		}
	}
	if len(c.Args) > 0 {
		out = append(out, "'1:argument:("+strings.Join(c.Args, " ")+")'")
	} else {
		out = append(out, "'*:file:_files'")
	}
	return strings.Join(out, " ")
}

// FishFlags are fish's lines completing c's flags when cond holds.
func (c compCmd) FishFlags(cond string) string {
	var out strings.Builder
	for _, f := range c.flags {
		line := "complete -c carryover -n '" + cond + "'"
		for _, n := range f.names {
			line += map[bool]string{false: " -l ", true: " -s "}[len(n) == 1] + n
		}
		if f.takes {
			line += " -r"
			if len(f.values) > 0 {
				line += " -f -a " + fishQuote(strings.Join(f.values, " "))
			}
		}
		out.WriteString(line + " -d " + fishQuote(f.usage) + "\n")
	}
	return out.String()
}

func fishQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

// commandPaths are the words of each command path ("config", "config set"), for PowerShell's completer.
func commandPaths(prefix string, cs []compCmd) (out []compPath) {
	for _, c := range cs {
		path := strings.TrimSpace(prefix + " " + c.Name)
		out = append(out, compPath{path, c.Words()})
		out = append(out, commandPaths(path, c.Subs)...)
	}
	return out
}

type compPath struct {
	Path  string
	Words []string
}

func psArray(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = "'" + strings.ReplaceAll(x, "'", "''") + "'"
	}
	return "@(" + strings.Join(q, ", ") + ")"
}
