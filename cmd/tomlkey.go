package cmd

// setTOMLKey edits carryover's own TOML files (config.toml,
// .carryover.toml) through the one TOML editor, hookconf.SetTopLevelKey: it
// sets one top-level key and keeps every other byte, comments and layout
// included. `install` writes tools and resume with it,
// `config set` any documented key.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/carryover/carryover/specs/hookconf"
)

// setTOMLKey is hookconf.SetTopLevelKey.
func setTOMLKey(b []byte, key, literal string) ([]byte, error) {
	return hookconf.SetTopLevelKey(b, key, literal)
}

// setTOMLKeyInFile applies setTOMLKey to path, creating the file (and its
// directory) with perm when missing.
func setTOMLKeyInFile(path, key, literal string, perm fs.FileMode) error {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	out, err := setTOMLKey(b, key, literal)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if string(out) == string(b) && len(b) > 0 {
		return nil
	}
	return hookconf.OSFS{}.WriteFile(path, out, perm)
}
