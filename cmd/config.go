package cmd

import (
	"path/filepath"

	"github.com/carryover/carryover/publish"
)

// Config is ~/.carryover/config.toml, with what <project>/.carryover.toml
// may add under publish.ProjectPolicy (a project file may only make
// carryover safer).
type Config = publish.Config

// ConfigPath is the global config file.
func (e *Env) ConfigPath() string { return filepath.Join(e.Home(), "config.toml") }

// LoadConfig reads the global config and the project's override. Missing
// files are fine; a broken file is reported and ignored (defaults apply),
// and so is each project setting the policy ignores.
func LoadConfig(e *Env, project string) (Config, []error) {
	return publish.LoadConfigWith(e.ConfigPath(), project, decodeConfig)
}
