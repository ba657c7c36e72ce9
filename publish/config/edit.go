package config

// carryover's own TOML files (config.toml, .carryover.toml) are edited key
// by key through the one TOML editor, hookconf.SetKey/UnsetKey: one key,
// top-level or dotted (limits.warn_percent), every other byte kept,
// comments and layout included. `install` writes tools and resume with it,
// `config set`/`config unset` any documented key.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/carryover/carryover/specs/hookconf"
)

// SetKeyInFile sets key to literal in the TOML file at path, creating the
// file (and its directory) with perm when missing.
func SetKeyInFile(path, key, literal string, perm fs.FileMode) error {
	return EditFile(path, perm, func(b []byte) ([]byte, error) { return hookconf.SetKey(b, key, literal) })
}

// EditFile applies edit to the file at path (empty when missing) and
// writes the result when it changed.
func EditFile(path string, perm fs.FileMode, edit func([]byte) ([]byte, error)) error {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	out, err := edit(b)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(out, b) {
		return nil
	}
	return hookconf.OSFS{}.WriteFile(path, out, perm)
}
