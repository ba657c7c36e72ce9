package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/carryover/carryover/publish/safefile"
	"github.com/pelletier/go-toml/v2"
)

// maxConfig is the largest config file carryover reads (a real one is a
// few hundred bytes).
const maxConfig = 1 << 20

// Config is ~/.carryover/config.toml, overridden per project by
// <project>/.carryover.toml.
type Config struct {
	// Resume is the resume protocol: ask, brief or silent.
	Resume string `toml:"resume"`
	// Redact turns secret redaction off when false.
	Redact *bool `toml:"redact"`
	// Tools is the install selection (written by `carryover install`).
	Tools []string `toml:"tools"`
	// ExpireAfter ("7d", "12h") and HistoryKeep are the handoff lifecycle
	// settings; read from the global config only.
	ExpireAfter string `toml:"expire_after"`
	HistoryKeep int    `toml:"history_keep"`
}

// RedactOn reports whether redaction is on (default true).
func (c Config) RedactOn() bool { return c.Redact == nil || *c.Redact }

// ConfigPath is the global config file.
func (e *Env) ConfigPath() string { return filepath.Join(e.Home(), "config.toml") }

// LoadConfig reads the global config and the project's override. Missing
// files are fine; a broken file is reported and ignored (defaults apply).
func LoadConfig(e *Env, project string) (Config, []error) {
	var c Config
	var errs []error
	for _, p := range []string{e.ConfigPath(), filepath.Join(project, ".carryover.toml")} {
		if project == "" && p != e.ConfigPath() {
			continue
		}
		b, err := safefile.ReadFile(p, maxConfig) // a project's may be a FIFO or /dev/zero
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var o Config
		if err := toml.Unmarshal(b, &o); err != nil {
			errs = append(errs, fmt.Errorf("%s: %v (fix the file; defaults are used meanwhile)", p, err))
			continue
		}
		if o.Resume != "" {
			c.Resume = o.Resume
		}
		if o.Redact != nil {
			c.Redact = o.Redact
		}
		if o.Tools != nil && p == e.ConfigPath() {
			c.Tools = o.Tools
		}
		if p == e.ConfigPath() {
			c.ExpireAfter, c.HistoryKeep = o.ExpireAfter, o.HistoryKeep
		}
	}
	return c, errs
}
