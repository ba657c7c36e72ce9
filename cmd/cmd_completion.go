package cmd

// `carryover completion bash|zsh|fish|powershell` prints a completion script made from the command tree itself
// (commands, subcommands, flags, flag values): it never drifts from the CLI, and completing runs no carryover process.

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

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
	w := map[string]func(io.Writer, []compCmd){"bash": writeBash, "zsh": writeZsh, "fish": writeFish, "powershell": writePowerShell, "pwsh": writePowerShell}[shell]
	if w == nil {
		return usageErrorf("carryover completion --help", "which shell? `carryover completion bash`, `zsh`, `fish` or `powershell`")
	}
	w(e.Stdout, completionTree(commands(e)))
	return nil
}

// compCmd is one command (or subcommand) for completion; args are the positional arguments worth completing.
type compCmd struct {
	name, usage string
	flags       []compFlag
	subs        []compCmd
	args        []string
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
		cc := compCmd{name: c.Name, usage: c.Usage}
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
		cc.subs = completionTree(c.Subcommands)
		switch c.Name { // the positional arguments of commands that take a fixed set
		case "completion":
			cc.args = []string{"bash", "zsh", "fish", "powershell"}
		case "get", "set", "unset":
			cc.args = config.LeafNames()
		}
		out = append(out, cc)
	}
	return out
}

func dash(n string) string { return strings.Repeat("-", min(len(n), 2)) + n } // -h, --help

// words are c's subcommands, its argument values, its flags and --help.
func (c compCmd) words() []string {
	ws := c.args
	for _, s := range c.subs {
		ws = append(ws, s.name)
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
		ns = append(ns, c.name)
	}
	return ns
}

func writeBash(w io.Writer, tree []compCmd) {
	fmt.Fprint(w, `# carryover bash completion. Load it in ~/.bashrc:
#   source <(carryover completion bash)
_carryover() {
  local cur prev cmd sub i
  cur="${COMP_WORDS[COMP_CWORD]}"
  prev="${COMP_WORDS[COMP_CWORD-1]}"
  cmd="" sub=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "${COMP_WORDS[i]}" in
      -*) ;;
      *) if [[ -z "$cmd" ]]; then cmd="${COMP_WORDS[i]}"; elif [[ -z "$sub" ]]; then sub="${COMP_WORDS[i]}"; fi ;;
    esac
  done
  local words="" prefix="${cur%"${cur##*,}"}" # lists: complete after the last comma
  case "$prev" in
`)
	// Values of flags, whatever the command (the names mean the same everywhere).
	vals := flagValues()
	for _, n := range slices.Sorted(maps.Keys(vals)) {
		fmt.Fprintf(w, "    --%s) COMPREPLY=($(compgen -P \"$prefix\" -W %q -- \"${cur##*,}\")); return ;;\n", n, strings.Join(vals[n], " "))
	}
	fmt.Fprint(w, "  esac\n  case \"$cmd $sub\" in\n")
	for _, c := range tree {
		for _, s := range c.subs {
			fmt.Fprintf(w, "    \"%s %s\") words=%q ;;\n", c.name, s.name, strings.Join(s.words(), " "))
		}
		fmt.Fprintf(w, "    \"%s \"*) words=%q ;;\n", c.name, strings.Join(c.words(), " "))
	}
	fmt.Fprintf(w, "    *) words=%q ;;\n  esac\n", strings.Join(names(tree), " ")+" --help --version")
	fmt.Fprint(w, `  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _carryover carryover
`)
}

// zshQuote makes s safe inside a single-quoted word; zshDesc also inside an _arguments option's [description].
func zshQuote(s string) string { return strings.ReplaceAll(s, "'", "'\\''") }

func zshDesc(s string) string {
	return zshQuote(strings.NewReplacer("[", "\\[", "]", "\\]").Replace(s))
}

func writeZsh(w io.Writer, tree []compCmd) {
	fmt.Fprint(w, `#compdef carryover
# carryover zsh completion. Load it in ~/.zshrc (after compinit):
#   source <(carryover completion zsh)
# or save it as _carryover in a directory on $fpath.
_carryover() {
  local -a commands
  commands=(
`)
	for _, c := range tree {
		fmt.Fprintf(w, "    '%s:%s'\n", c.name, zshQuote(c.usage))
	}
	fmt.Fprint(w, `  )
  if (( CURRENT == 2 )); then
    _describe -t commands 'carryover command' commands
    return
  fi
  local cmd=$words[2]
  case $cmd in
`)
	for _, c := range tree {
		fmt.Fprintf(w, "    %s)\n", c.name)
		if len(c.subs) > 0 {
			fmt.Fprint(w, "      if (( CURRENT == 3 )); then\n        local -a subs\n        subs=(")
			for _, s := range c.subs {
				fmt.Fprintf(w, " '%s:%s'", s.name, zshQuote(s.usage))
			}
			fmt.Fprint(w, " )\n        _describe -t commands 'subcommand' subs\n        return\n      fi\n")
			for _, s := range c.subs {
				fmt.Fprintf(w, "      [[ $words[3] == %s ]] && { _arguments -s %s; return; }\n", s.name, zshSpecs(s.flags, s.args))
			}
		}
		fmt.Fprintf(w, "      _arguments -s %s\n      ;;\n", zshSpecs(c.flags, c.args))
	}
	fmt.Fprint(w, `  esac
}
if [[ "${funcstack[1]}" == "_carryover" ]]; then
  _carryover "$@"
else
  compdef _carryover carryover
fi
`)
}

func zshSpecs(fs []compFlag, args []string) string {
	var out []string
	for _, f := range fs {
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
	if len(args) > 0 {
		out = append(out, "'1:argument:("+strings.Join(args, " ")+")'")
	} else {
		out = append(out, "'*:file:_files'")
	}
	return strings.Join(out, " ")
}

func writeFish(w io.Writer, tree []compCmd) {
	fmt.Fprint(w, "# carryover fish completion. Install it with:\n#   carryover completion fish > ~/.config/fish/completions/carryover.fish\n")
	all := strings.Join(names(tree), " ")
	for _, c := range tree {
		fmt.Fprintf(w, "complete -c carryover -n 'not __fish_seen_subcommand_from %s' -f -a %s -d %s\n", all, c.name, fishQuote(c.usage))
	}
	for _, c := range tree {
		cond := "__fish_seen_subcommand_from " + c.name
		top := cond
		if len(c.subs) > 0 {
			top += "; and not __fish_seen_subcommand_from " + strings.Join(names(c.subs), " ")
		}
		for _, s := range c.subs {
			fmt.Fprintf(w, "complete -c carryover -n '%s' -f -a %s -d %s\n", top, s.name, fishQuote(s.usage))
			sc := cond + "; and __fish_seen_subcommand_from " + s.name
			if len(s.args) > 0 {
				fmt.Fprintf(w, "complete -c carryover -n '%s' -f -a %s\n", sc, fishQuote(strings.Join(s.args, " ")))
			}
			fishFlags(w, sc, s.flags)
		}
		if len(c.args) > 0 {
			fmt.Fprintf(w, "complete -c carryover -n '%s' -f -a %s\n", top, fishQuote(strings.Join(c.args, " ")))
		}
		fishFlags(w, top, c.flags)
	}
}

func fishFlags(w io.Writer, cond string, fs []compFlag) {
	for _, f := range fs {
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
		line += " -d " + fishQuote(f.usage)
		fmt.Fprintln(w, line)
	}
}

func fishQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

// writePowerShell writes a native argument completer: the words of each command path ("", "config", "config set") and
// the values of flags, as data; the script block picks by the words typed before the cursor.
func writePowerShell(w io.Writer, tree []compCmd) {
	fmt.Fprint(w, `# carryover PowerShell completion. Load it from your profile:
#   carryover completion powershell | Out-String | Add-Content $PROFILE
Register-ArgumentCompleter -Native -CommandName carryover -ScriptBlock {
  param($wordToComplete, $commandAst, $cursorPosition)
  $words = @{
`)
	fmt.Fprintf(w, "    '' = %s\n", psArray(append(names(tree), "--help", "--version")))
	var walk func(prefix string, cs []compCmd)
	walk = func(prefix string, cs []compCmd) {
		for _, c := range cs {
			path := strings.TrimSpace(prefix + " " + c.name)
			fmt.Fprintf(w, "    '%s' = %s\n", path, psArray(c.words()))
			walk(path, c.subs)
		}
	}
	walk("", tree)
	fmt.Fprint(w, "  }\n  $values = @{\n")
	vals := flagValues()
	for _, n := range slices.Sorted(maps.Keys(vals)) {
		fmt.Fprintf(w, "    '--%s' = %s\n", n, psArray(vals[n]))
	}
	fmt.Fprint(w, `  }
  $typed = @($commandAst.CommandElements | Select-Object -Skip 1 | ForEach-Object { $_.ToString() })
  if ($wordToComplete -ne '' -and $typed.Count -gt 0) { $typed = @($typed | Select-Object -First ($typed.Count - 1)) }
  $path = ''
  foreach ($t in $typed) {
    if ($t.StartsWith('-')) { continue }
    $next = ($path + ' ' + $t).Trim()
    if ($words.ContainsKey($next)) { $path = $next }
  }
  $prev = if ($typed.Count -gt 0) { $typed[-1] } else { '' }
  $prefix = ''
  $word = $wordToComplete
  if ($values.ContainsKey($prev)) {
    $candidates = $values[$prev]
    $i = $word.LastIndexOf(',')
    if ($i -ge 0) { $prefix = $word.Substring(0, $i + 1); $word = $word.Substring($i + 1) }
  } else {
    $candidates = $words[$path]
  }
  $candidates | Where-Object { $_ -like "$word*" } | ForEach-Object {
    [System.Management.Automation.CompletionResult]::new($prefix + $_, $prefix + $_, 'ParameterValue', $_)
  }
}
`)
}

func psArray(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = "'" + strings.ReplaceAll(x, "'", "''") + "'"
	}
	return "@(" + strings.Join(q, ", ") + ")"
}
