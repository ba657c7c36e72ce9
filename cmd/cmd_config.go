package cmd

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/pelletier/go-toml/v2"
	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/publish/config"
	"github.com/carryover/carryover/publish/safefile"
	"github.com/carryover/carryover/specs/hookconf"
)

// `carryover config`: the resolved configuration with where each value came
// from (like `git config --show-origin`), the warnings of both files, and
// `config set KEY VALUE [--project]`, which edits one key keeping comments.

// configSetOptions: inProject edits <project>/.carryover.toml instead of
// config.toml.
type configSetOptions struct {
	key, value, project string
	inProject           bool
}

// keyArgs checks that c has n arguments (KEY, or KEY VALUE).
func keyArgs(c *cli.Context, n int, what string) error {
	if c.NArg() != n {
		return usageErrorf(helpFor(c), "config %s; keys: %s", what, strings.Join(config.LeafNames(), ", "))
	}
	return nil
}

func configCommand(e *Env) *cli.Command {
	editFlags := func(verb string) []cli.Flag {
		return []cli.Flag{&cli.BoolFlag{Name: "project", Usage: verb + " the project's .carryover.toml"},
			&cli.StringFlag{Name: "project-dir", Usage: "the project (default: the git root of the current directory)"}}
	}
	editOptions := func(c *cli.Context) configSetOptions {
		return configSetOptions{key: c.Args().Get(0), value: c.Args().Get(1), inProject: c.Bool("project"), project: c.String("project-dir")}
	}
	return &cli.Command{
		Name:  "config",
		Usage: "show the configuration in effect and where each value comes from; `config get|set|unset KEY` reads or changes one key",
		Description: "Values come from the defaults, ~/.carryover/config.toml ($CARRYOVER_HOME/config.toml) and the\n" +
			"project's .carryover.toml. Unknown keys and invalid values are listed as warnings.",
		Flags:  []cli.Flag{projectFlag, &cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		Action: func(c *cli.Context) error { return runConfig(e, c.String("project"), c.Bool("json")) },
		Subcommands: []*cli.Command{{
			Name:      "get",
			Usage:     "print the value of KEY in effect (dotted for a table's key: limits.warn_percent)",
			ArgsUsage: "KEY",
			Flags:     []cli.Flag{projectFlag, &cli.BoolFlag{Name: "json", Usage: "print JSON"}},
			Action: func(c *cli.Context) error {
				if err := keyArgs(c, 1, "get takes one KEY"); err != nil {
					return err
				}
				return runConfigGet(e, c.Args().First(), c.String("project"), c.Bool("json"))
			},
		}, {
			Name:      "set",
			Usage:     "set KEY to VALUE in config.toml (or, with --project, in the project's .carryover.toml)",
			ArgsUsage: "KEY VALUE",
			Flags:     editFlags("write"),
			Action: func(c *cli.Context) error {
				if err := keyArgs(c, 2, "set takes KEY VALUE"); err != nil {
					return err
				}
				return runConfigSet(e, editOptions(c))
			},
		}, {
			Name:      "unset",
			Usage:     "remove KEY from config.toml (or, with --project, from the project's .carryover.toml), keeping comments",
			ArgsUsage: "KEY",
			Flags:     editFlags("edit"),
			Action: func(c *cli.Context) error {
				if err := keyArgs(c, 1, "unset takes one KEY"); err != nil {
					return err
				}
				return runConfigUnset(e, editOptions(c))
			},
		}},
	}
}

func runConfig(e *Env, projectFlag string, asJSON bool) error {
	project, err := currentProject(e, projectFlag)
	if err != nil {
		return err
	}
	vals, errs := resolveConfig(e, project)
	if asJSON {
		var warns []string
		for _, w := range errs {
			warns = append(warns, w.Error())
		}
		type value struct {
			Key    string `json:"key"`
			Value  any    `json:"value"` // a JSON value: "ask", true, 90, ["claude"], {"warn": 75}
			Origin string `json:"origin"`
			File   string `json:"file,omitempty"`
			Doc    string `json:"doc"`
		}
		out := []value{}
		for _, v := range vals {
			out = append(out, value{v.Key, tomlValue(v.Value), v.Origin, v.File, v.Doc})
		}
		return printJSON(e.Stdout, struct {
			Values   []value  `json:"values"`
			Warnings []string `json:"warnings"`
		}{out, nonNil(warns)})
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 0, 2, ' ', 0)
	for _, v := range vals {
		origin := v.Origin
		if v.File != "" {
			origin += "  " + v.File
		}
		fmt.Fprintf(tw, "%s = %s\t%s\n", v.Key, v.Value, origin)
	}
	tw.Flush()
	for _, w := range errs {
		fmt.Fprintf(e.Stdout, "warning: %v\n", w)
	}
	return nil
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

// configFileFor is the file `config set/unset` edits, its mode, and the
// project whose view to report.
func configFileFor(e *Env, k config.Leaf, o configSetOptions) (path string, perm fs.FileMode, project string, err error) {
	path, perm = e.ConfigPath(), 0o600
	if o.inProject || o.project != "" {
		if k.GlobalOnly {
			return "", 0, "", exitf(ExitError, "%s is only read from the global config; drop --project", k.Path())
		}
		if project, err = currentProject(e, o.project); err != nil {
			return "", 0, "", err
		}
		// The project file is meant to be committed and shared.
		return config.ProjectPath(project), 0o644, project, nil
	}
	project, _ = currentProject(e, "")
	return path, perm, project, nil
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
	for _, v := range vals {
		if v.Key != k.Name {
			continue
		}
		out := effective{value: tomlValue(v.Value), lit: v.Value, where: v.Origin, origin: v.Origin, file: v.File}
		if v.File != "" {
			out.where += " " + v.File
		}
		if k.Inner != "" {
			m, _ := out.value.(map[string]any)
			out.value = m[k.Inner]
			out.lit = config.Literal(out.value)
			out.origin, out.file, out.where = innerOrigin(e, project, k, out.lit)
		}
		return out, true
	}
	return effective{}, false
}

// innerOrigin is the file that set k.Inner to lit: a table's origin is
// not its keys'.
func innerOrigin(e *Env, project string, k config.Leaf, lit string) (origin, file, where string) {
	origin, where = "default", "default"
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
		if x, ok := hookconf.LookupPath(raw, []string{k.Name, k.Inner}); ok && config.Literal(x) == lit {
			origin, file, where = f[0], f[1], f[0]+" "+f[1]
		}
	}
	return origin, file, where
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
	if asJSON {
		return printJSON(e.Stdout, struct {
			Key    string `json:"key"`
			Value  any    `json:"value"`
			Origin string `json:"origin"`
			File   string `json:"file,omitempty"`
		}{k.Path(), v.value, v.origin, v.file})
	}
	// Plain for scripts: a string unquoted, a list comma-separated (what
	// `config set` takes back).
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
	return nil
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
	if err := config.EditFile(path, perm, func(b []byte) ([]byte, error) {
		out, ch, err := hookconf.UnsetKey(b, k.Path())
		changed = ch
		return out, err
	}); err != nil {
		return exitf(ExitError, "%v", err)
	}
	v, _ := effectiveValue(e, project, k)
	if !changed {
		fmt.Fprintf(e.Stdout, "%s is not set in %s (it is %s, from %s)\n", k.Path(), path, v.lit, v.where)
		return nil
	}
	fmt.Fprintf(e.Stdout, "unset %s in %s; it is now %s, from %s\n", k.Path(), path, v.lit, v.where)
	return nil
}

// tomlValue decodes a TOML literal ("\"ask\"", "[\"a\"]", "{warn = 75}")
// into the JSON value it stands for.
func tomlValue(lit string) any {
	var m map[string]any
	if err := toml.Unmarshal([]byte("v = "+lit), &m); err != nil {
		return lit
	}
	return m["v"]
}

// Config is ~/.carryover/config.toml, with what <project>/.carryover.toml
// may add under config.ProjectPolicy (a project file may only make
// carryover safer).
type Config = config.Config

// ConfigPath is the global config file.
func (e *Env) ConfigPath() string { return filepath.Join(e.Home(), "config.toml") }

// LoadConfig reads the global config and the project's override. Missing
// files are fine; a broken file is reported and ignored (defaults apply),
// and so is each project setting the policy ignores.
func LoadConfig(e *Env, project string) (Config, []error) {
	return config.Load(e.ConfigPath(), e.UserHome(), project)
}

// resolveConfig is each documented key's effective value and its origin.
func resolveConfig(e *Env, project string) ([]config.Value, []error) {
	return config.Resolve(e.ConfigPath(), e.UserHome(), project)
}
