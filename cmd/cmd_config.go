package cmd

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/pelletier/go-toml/v2"
	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/config"
	"github.com/carryover/carryover/publish/safefile"
	"github.com/carryover/carryover/specs/hookconf"
)

// `carryover config`: the configuration in effect with where each value comes from (like `git config --show-origin`),
// both files' warnings, and get/set/unset of one key (set and unset keep comments).

// Config is config.toml plus what <project>/.carryover.toml may add under config.ProjectPolicy (only ever safer).
type Config = config.Config

// ConfigPath is the global config file.
func (e *Env) ConfigPath() string { return filepath.Join(e.Home(), "config.toml") }

// LoadConfig reads the global config and the project's override. Missing files are fine; a broken file, and each
// project setting the policy ignores, is reported and ignored (defaults apply).
func LoadConfig(e *Env, project string) (Config, []error) {
	return config.Load(e.ConfigPath(), e.UserHome(), project)
}

// resolveConfig is each documented key's effective value and its origin.
func resolveConfig(e *Env, project string) ([]config.Value, []error) {
	return config.Resolve(e.ConfigPath(), e.UserHome(), project)
}

// configSetOptions: inProject edits <project>/.carryover.toml instead of config.toml.
type configSetOptions struct {
	key, value, project string
	inProject           bool
}

func configCommand(e *Env) *cli.Command {
	// sub is a subcommand taking n arguments (KEY, or KEY VALUE).
	sub := func(name, usage, args string, flags []cli.Flag, run func(*cli.Context) error) *cli.Command {
		n := len(strings.Fields(args))
		return &cli.Command{Name: name, Usage: usage, ArgsUsage: args, Flags: flags, Action: func(c *cli.Context) error {
			if c.NArg() != n {
				what := map[int]string{1: "takes one KEY", 2: "takes KEY VALUE"}[n]
				return usageErrorf(helpFor(c), "config %s %s; keys: %s", name, what, strings.Join(config.LeafNames(), ", "))
			}
			return run(c)
		}}
	}
	edit := func(verb string) []cli.Flag {
		return []cli.Flag{&cli.BoolFlag{Name: "project", Usage: verb + " the project's .carryover.toml"},
			&cli.StringFlag{Name: "project-dir", Usage: "the project (default: the git root of the current directory)"}}
	}
	opts := func(c *cli.Context) configSetOptions {
		return configSetOptions{key: c.Args().Get(0), value: c.Args().Get(1), inProject: c.Bool("project"), project: c.String("project-dir")}
	}
	return &cli.Command{
		Name:  "config",
		Usage: "show the configuration in effect and where each value comes from; `config get|set|unset KEY` reads or changes one key",
		Description: "Values come from the defaults, ~/.carryover/config.toml ($CARRYOVER_HOME/config.toml) and the\n" +
			"project's .carryover.toml. Unknown keys and invalid values are listed as warnings.",
		Flags:  []cli.Flag{projectFlag, jsonFlag("print JSON")},
		Action: func(c *cli.Context) error { return runConfig(e, c.String("project"), c.Bool("json")) },
		Subcommands: []*cli.Command{
			sub("get", "print the value of KEY in effect (dotted for a table's key: limits.warn_percent)", "KEY", []cli.Flag{projectFlag, jsonFlag("print JSON")},
				func(c *cli.Context) error {
					return runConfigGet(e, c.Args().First(), c.String("project"), c.Bool("json"))
				}),
			sub("set", "set KEY to VALUE in config.toml (or, with --project, in the project's .carryover.toml)", "KEY VALUE", edit("write"),
				func(c *cli.Context) error { return runConfigSet(e, opts(c)) }),
			sub("unset", "remove KEY from config.toml (or, with --project, from the project's .carryover.toml), keeping comments", "KEY", edit("edit"),
				func(c *cli.Context) error { return runConfigUnset(e, opts(c)) }),
		},
	}
}

func runConfig(e *Env, projectFlag string, asJSON bool) error {
	project, err := currentProject(e, projectFlag)
	if err != nil {
		return err
	}
	vals, errs := resolveConfig(e, project)
	type value struct {
		Key    string `json:"key"`
		Value  any    `json:"value"` // a JSON value: "ask", true, 90, ["claude"], {"warn": 75}
		Origin string `json:"origin"`
		File   string `json:"file,omitempty"`
		Doc    string `json:"doc"`
	}
	out, warns := []value{}, []string{}
	for _, v := range vals {
		out = append(out, value{v.Key, tomlValue(v.Value), v.Origin, v.File, v.Doc})
	}
	for _, w := range errs {
		warns = append(warns, w.Error())
	}
	return output(e, asJSON, struct {
		Values   []value  `json:"values"`
		Warnings []string `json:"warnings"`
	}{out, warns}, func() {
		tw := tabwriter.NewWriter(e.Stdout, 0, 0, 2, ' ', 0)
		for _, v := range vals {
			fmt.Fprintf(tw, "%s = %s\t%s\n", v.Key, v.Value, strings.TrimSpace(v.Origin+"  "+v.File))
		}
		tw.Flush()
		printLines(e.Stdout, "warning: ", errs...)
	})
}

func runConfigSet(e *Env, o configSetOptions) error {
	k, err := leafArg(o.key)
	if err != nil {
		return err
	}
	lit, err := k.Parse(o.value)
	if err != nil {
		return exitf(ExitError, "%v", err)
	}
	path, perm, project, err := configFileFor(e, k, o)
	if err != nil {
		return err
	}
	if err := config.SetKeyInFile(path, k.Path(), lit, perm); err != nil {
		return exitf(ExitError, "%v", err)
	}
	fmt.Fprintf(e.Stdout, "set %s = %s in %s\n", k.Path(), lit, path)
	// Say so when another file (or the merge policy) decides the value.
	if v, ok := effectiveValue(e, project, k); ok && v.lit != lit {
		fmt.Fprintf(e.Stdout, "note: %s is %s here, from %s\n", k.Path(), v.lit, v.where)
	}
	return nil
}

// leafArg resolves a KEY argument, or says which key was meant.
func leafArg(key string) (config.Leaf, error) {
	k, ok := config.LookupLeaf(key)
	if t, isTable := config.LookupKey(key); !ok && isTable && t.Sub != nil {
		return k, exitf(ExitUsage, "%v", t.ParseTable())
	}
	if !ok {
		return k, exitf(ExitUsage, "unknown key %q; %s (valid keys: %s)", key, config.ClosestHint(key, config.LeafNames()), strings.Join(config.LeafNames(), ", "))
	}
	return k, nil
}

// configFileFor is the file `config set/unset` edits, its mode, and the project whose view to report. The project file
// is meant to be committed and shared (0644).
func configFileFor(e *Env, k config.Leaf, o configSetOptions) (path string, perm fs.FileMode, project string, err error) {
	if !o.inProject && o.project == "" {
		project, _ = currentProject(e, "")
		return e.ConfigPath(), 0o600, project, nil
	}
	if k.GlobalOnly {
		return "", 0, "", exitf(ExitError, "%s is only read from the global config; drop --project", k.Path())
	}
	if project, err = currentProject(e, o.project); err != nil {
		return "", 0, "", err
	}
	return config.ProjectPath(project), 0o644, project, nil
}

type effective struct {
	value        any    // as JSON
	lit          string // as TOML
	where        string // "default", "global <file>", "project <file>"
	origin, file string
}

// effectiveValue is k's value in effect in project, and where it is from.
func effectiveValue(e *Env, project string, k config.Leaf) (effective, bool) {
	vals, _ := resolveConfig(e, project)
	i := slices.IndexFunc(vals, func(v config.Value) bool { return v.Key == k.Name })
	if i < 0 {
		return effective{}, false
	}
	v := vals[i]
	out := effective{value: tomlValue(v.Value), lit: v.Value, where: strings.TrimSpace(v.Origin + " " + v.File), origin: v.Origin, file: v.File}
	if k.Inner != "" { // a table's origin is not its keys': find the file that set k.Inner
		m, _ := out.value.(map[string]any)
		out.value = m[k.Inner]
		out.lit = config.Literal(out.value)
		out.origin, out.file, out.where = "default", "", "default"
		files := [][2]string{{"global", e.ConfigPath()}}
		if project != "" {
			files = append(files, [2]string{"project", config.ProjectPath(project)})
		}
		for _, f := range files {
			b, err := safefile.ReadFile(f[1], 1<<20)
			var raw map[string]any
			if err != nil || toml.Unmarshal(b, &raw) != nil {
				continue
			}
			if x, ok := hookconf.LookupPath(raw, []string{k.Name, k.Inner}); ok && config.Literal(x) == out.lit {
				out.origin, out.file, out.where = f[0], f[1], f[0]+" "+f[1]
			}
		}
	}
	return out, true
}

func runConfigGet(e *Env, key, projectFlag string, asJSON bool) error {
	k, err := leafArg(key)
	if err != nil {
		return err
	}
	project, err := currentProject(e, projectFlag)
	if err != nil {
		return err
	}
	v, _ := effectiveValue(e, project, k)
	return output(e, asJSON, struct {
		Key    string `json:"key"`
		Value  any    `json:"value"`
		Origin string `json:"origin"`
		File   string `json:"file,omitempty"`
	}{k.Path(), v.value, v.origin, v.file}, func() {
		// Plain for scripts: a string unquoted, a list comma-separated (what `config set` takes back).
		switch x := v.value.(type) {
		case string:
			fmt.Fprintln(e.Stdout, x)
		case []any:
			parts := make([]string, len(x))
			for i, y := range x {
				parts[i] = fmt.Sprint(y)
			}
			fmt.Fprintln(e.Stdout, strings.Join(parts, ","))
		default:
			fmt.Fprintln(e.Stdout, v.lit)
		}
	})
}

func runConfigUnset(e *Env, o configSetOptions) error {
	k, err := leafArg(o.key)
	if err != nil {
		return err
	}
	path, perm, project, err := configFileFor(e, k, o)
	if err != nil {
		return err
	}
	changed := false
	if err := config.EditFile(path, perm, func(b []byte) (out []byte, err error) {
		out, changed, err = hookconf.UnsetKey(b, k.Path())
		return out, err
	}); err != nil {
		return exitf(ExitError, "%v", err)
	}
	v, _ := effectiveValue(e, project, k)
	if !changed {
		fmt.Fprintf(e.Stdout, "%s is not set in %s (it is %s, from %s)\n", k.Path(), path, v.lit, v.where)
	} else {
		fmt.Fprintf(e.Stdout, "unset %s in %s; it is now %s, from %s\n", k.Path(), path, v.lit, v.where)
	}
	return nil
}

// tomlValue decodes a TOML literal ("\"ask\"", "[\"a\"]", "{warn = 75}") into the JSON value it stands for.
func tomlValue(lit string) any {
	var m map[string]any
	if err := toml.Unmarshal([]byte("v = "+lit), &m); err != nil {
		return lit
	}
	return m["v"]
}

func ignoreCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "ignore",
		Usage:     "leave a project alone: its hooks exit at once, reading, storing and writing nothing",
		ArgsUsage: "[DIR]",
		Description: "Adds DIR (default: the current project) to `ignore` in $CARRYOVER_HOME/config.toml; every\n" +
			"directory under it is ignored too. What carryover already has of the project stays until you\n" +
			"remove it (`carryover forget SESSION`, `carryover uninstall --purge`).",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "remove", Usage: "stop ignoring DIR"},
			&cli.BoolFlag{Name: "list", Usage: "list the ignored projects"},
		},
		Action: func(c *cli.Context) error {
			switch args := c.Args().Slice(); {
			case len(args) > 1:
				return usageErrorf("carryover ignore --help", "ignore takes at most one directory")
			case c.Bool("list") && (len(args) > 0 || c.Bool("remove")):
				return usageErrorf("carryover ignore --help", "--list takes no directory and no --remove")
			case c.Bool("list"):
				cfg, _ := LoadConfig(e, "")
				if len(cfg.Ignore) == 0 {
					fmt.Fprintln(e.Stdout, "no ignored projects (`carryover ignore DIR` adds one)")
				}
				printLines(e.Stdout, "", cfg.Ignore...)
				return nil
			}
			return runIgnore(e, c.Args().First(), c.Bool("remove"))
		},
	}
}

// sameDir reports whether a listed path p names dir (~ expanded, symlinks resolved).
func sameDir(e *Env, p, dir string) bool {
	if strings.HasPrefix(p, "~/") {
		p = filepath.Join(e.UserHome(), p[2:])
	}
	return publish.Canonical(p) == filepath.Clean(dir)
}

func runIgnore(e *Env, dir string, remove bool) error {
	project, err := currentProject(e, "")
	if dir != "" { // DIR as an absolute, symlink-free path
		var abs string
		abs, err = absPath(e, dir)
		project = publish.Canonical(abs)
	}
	if err != nil {
		return err
	}
	cfg, _ := LoadConfig(e, "")
	list := slices.Clone(cfg.Ignore)
	i := slices.IndexFunc(list, func(p string) bool { return sameDir(e, p, project) })
	switch {
	case remove && i < 0 && cfg.Ignores(project):
		return exitf(ExitError, "%s is ignored because a directory above it is listed; remove that one (`carryover ignore --list`)", project)
	case remove && i < 0:
		return exitf(ExitNotFound, "%s is not ignored (`carryover ignore --list`)", project)
	case remove:
		list = slices.Delete(list, i, i+1)
	case cfg.Ignores(project):
		fmt.Fprintf(e.Stdout, "%s is already ignored\n", project)
		return nil
	default:
		list = append(list, project)
	}
	if err := config.SetKeyInFile(e.ConfigPath(), "ignore", config.Strings(list), 0o600); err != nil {
		return exitf(ExitError, "could not update %s: %v", e.ConfigPath(), err)
	}
	if remove {
		fmt.Fprintf(e.Stdout, "no longer ignored: %s\n", project)
		return nil
	}
	fmt.Fprintf(e.Stdout, "ignored: %s — carryover's hooks there now exit at once (undo: carryover ignore --remove %s)\n", project, project)
	if _, err := os.Stat(publish.Dir(project)); err == nil && !publish.NotProject(project, e.UserHome()) {
		fmt.Fprintf(e.Stdout, "note: %s from earlier sessions stays; `carryover uninstall --purge` or deleting it removes it\n", publish.Dir(project))
	}
	return nil
}
