package cmd

// `carryover config`: the resolved configuration with where each value came
// from (like `git config --show-origin`), the warnings of both files, and
// `config set KEY VALUE [--project]`, which edits one key keeping comments.

import (
	"fmt"
	"github.com/pelletier/go-toml/v2"
	"io/fs"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"
)

type configOptions struct {
	project string
	asJSON  bool
}

type configSetOptions struct {
	key, value string
	// inProject writes <project>/.carryover.toml instead of config.toml.
	inProject bool
	project   string
}

func configCommand(e *Env) *cli.Command {
	projectFlag := &cli.StringFlag{Name: "project", Usage: "project directory (default: the git root of the current directory)"}
	return &cli.Command{
		Name:  "config",
		Usage: "show the configuration in effect and where each value comes from; `config set KEY VALUE` changes it",
		Description: "Values come from the defaults, ~/.carryover/config.toml ($CARRYOVER_HOME/config.toml) and the\n" +
			"project's .carryover.toml. Unknown keys and invalid values are listed as warnings.",
		Flags: []cli.Flag{projectFlag, &cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		Action: func(c *cli.Context) error {
			return runConfig(e, configOptions{project: c.String("project"), asJSON: c.Bool("json")})
		},
		Subcommands: []*cli.Command{{
			Name:      "set",
			Usage:     "set KEY to VALUE in config.toml (or, with --project, in the project's .carryover.toml)",
			ArgsUsage: "KEY VALUE",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "project", Usage: "write the project's .carryover.toml"},
				&cli.StringFlag{Name: "project-dir", Usage: "the project (default: the git root of the current directory)"},
			},
			Action: func(c *cli.Context) error {
				o := configSetOptions{inProject: c.Bool("project"), project: c.String("project-dir")}
				// Flags may follow KEY VALUE (`config set resume brief --project`),
				// which urfave/cli leaves among the arguments.
				var args []string
				rest := c.Args().Slice()
				for i := 0; i < len(rest); i++ {
					switch a := rest[i]; {
					case a == "--project" || a == "-project":
						o.inProject = true
					case (a == "--project-dir" || a == "-project-dir") && i+1 < len(rest):
						o.project = rest[i+1]
						i++
					case strings.HasPrefix(a, "--project-dir="):
						o.project = strings.TrimPrefix(a, "--project-dir=")
					default:
						args = append(args, a)
					}
				}
				if len(args) != 2 {
					return exitf(ExitError, "usage: carryover config set KEY VALUE [--project]; keys: %s", strings.Join(configKeyNames(), ", "))
				}
				o.key, o.value = args[0], args[1]
				return runConfigSet(e, o)
			},
		}},
	}
}

func configKeyNames() []string {
	var out []string
	for _, k := range configKeys {
		out = append(out, k.Name)
	}
	return out
}

func runConfig(e *Env, o configOptions) error {
	project, err := currentProject(e, o.project)
	if err != nil {
		return err
	}
	vals, errs := resolveConfig(e, project)
	if o.asJSON {
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
	k, ok := lookupConfigKey(o.key)
	if !ok {
		return exitf(ExitError, "unknown key %q; %s (valid keys: %s)", o.key, closestHint(o.key, configKeyNames()), strings.Join(configKeyNames(), ", "))
	}
	lit, err := k.parse(o.value)
	if err != nil {
		return exitf(ExitError, "%v", err)
	}
	path, perm := e.ConfigPath(), 0o600
	project := ""
	if o.inProject || o.project != "" {
		if k.GlobalOnly {
			return exitf(ExitError, "%s is only read from the global config; drop --project", k.Name)
		}
		if project, err = currentProject(e, o.project); err != nil {
			return err
		}
		// The project file is meant to be committed and shared.
		path, perm = projectConfigPath(project), 0o644
	}
	if err := setTOMLKeyInFile(path, k.Name, lit, fsMode(perm)); err != nil {
		return exitf(ExitError, "%v", err)
	}
	fmt.Fprintf(e.Stdout, "set %s = %s in %s\n", k.Name, lit, path)
	// Say so when another file (or the merge policy) decides the value.
	if project == "" {
		project, _ = currentProject(e, "")
	}
	vals, _ := resolveConfig(e, project)
	for _, v := range vals {
		if v.Key == k.Name && v.Value != lit {
			where := v.Origin
			if v.File != "" {
				where += " " + v.File
			}
			fmt.Fprintf(e.Stdout, "note: %s is %s here, from %s\n", k.Name, v.Value, where)
		}
	}
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

// configSettings is every key's value in effect, as JSON values.
func configSettings(e *Env, project string) map[string]any {
	vals, _ := resolveConfig(e, project)
	out := map[string]any{}
	for _, v := range vals {
		out[v.Key] = tomlValue(v.Value)
	}
	return out
}

func fsMode(p int) fs.FileMode { return fs.FileMode(p) }
