package cmd

import (
	"fmt"
	"github.com/carryover/carryover/publish/config"
	"os"
	"path/filepath"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/publish"
)

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
			args, remove, list := c.Args().Slice(), c.Bool("remove"), c.Bool("list")
			if len(args) > 1 {
				return usageErrorf("carryover ignore --help", "ignore takes at most one directory")
			}
			if list {
				if len(args) > 0 || remove {
					return usageErrorf("carryover ignore --help", "--list takes no directory and no --remove")
				}
				return runIgnoreList(e)
			}
			dir := ""
			if len(args) == 1 {
				dir = args[0]
			}
			return runIgnore(e, dir, remove)
		},
	}
}

func runIgnoreList(e *Env) error {
	cfg, _ := LoadConfig(e, "")
	if len(cfg.Ignore) == 0 {
		fmt.Fprintln(e.Stdout, "no ignored projects (`carryover ignore DIR` adds one)")
		return nil
	}
	for _, p := range cfg.Ignore {
		fmt.Fprintln(e.Stdout, p)
	}
	return nil
}

func runIgnore(e *Env, dir string, remove bool) error {
	project, err := ignoreTarget(e, dir)
	if err != nil {
		return err
	}
	cfg, _ := LoadConfig(e, "")
	list := slices.Clone(cfg.Ignore)
	if remove {
		i := slices.IndexFunc(list, func(p string) bool { return sameDir(e, p, project) })
		if i < 0 {
			if cfg.Ignores(project) {
				return exitf(ExitError, "%s is ignored because a directory above it is listed; remove that one (`carryover ignore --list`)", project)
			}
			return exitf(ExitNotFound, "%s is not ignored (`carryover ignore --list`)", project)
		}
		list = slices.Delete(list, i, i+1)
	} else {
		if cfg.Ignores(project) {
			fmt.Fprintf(e.Stdout, "%s is already ignored\n", project)
			return nil
		}
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

// ignoreTarget is DIR as an absolute, symlink-free path (the current
// project when empty).
func ignoreTarget(e *Env, dir string) (string, error) {
	if dir == "" {
		return currentProject(e, "")
	}
	abs, err := absPath(e, dir)
	if err != nil {
		return "", err
	}
	return publish.Canonical(abs), nil
}

// sameDir reports whether a listed path p names dir (~ expanded, symlinks
// resolved).
func sameDir(e *Env, p, dir string) bool {
	if len(p) > 1 && p[:2] == "~/" {
		p = filepath.Join(e.UserHome(), p[2:])
	}
	return publish.Canonical(p) == filepath.Clean(dir)
}
