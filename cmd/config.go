package cmd

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/carryover/carryover/publish/config"
)

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

// statusProjects is the current directory's project and every project
// status reports.
func statusProjects(e *Env, st StatusReport) []string {
	var ps []string
	if p, err := currentProject(e, ""); err == nil {
		ps = append(ps, p)
	}
	for _, p := range st.Projects {
		ps = append(ps, p.Project)
	}
	return ps
}

func printConfigWarnings(w io.Writer, warns []string) {
	if len(warns) == 0 {
		return
	}
	fmt.Fprintln(w, "\nConfig (fix these keys; see `carryover config`)")
	for _, s := range warns {
		fmt.Fprintf(w, "  warning: %s\n", s)
	}
}

// configWarnings is every config problem of the global file and of each
// project's file, once each (`carryover status` shows them).
func configWarnings(e *Env, projects []string) []string {
	return config.Warnings(e.ConfigPath(), e.UserHome(), projects)
}
