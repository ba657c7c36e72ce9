package cmd

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

func setTOMLKey(b []byte, key, literal string) ([]byte, error) {
	return hookconf.SetKey(b, key, literal)
}

func unsetTOMLKey(b []byte, key string) ([]byte, bool, error) { return hookconf.UnsetKey(b, key) }

func lookupPath(m map[string]any, path []string) (any, bool) { return hookconf.LookupPath(m, path) }

// setTOMLKeyInFile applies setTOMLKey to path, creating the file (and its
// directory) with perm when missing.
func setTOMLKeyInFile(path, key, literal string, perm fs.FileMode) error {
	return editTOMLFile(path, perm, func(b []byte) ([]byte, error) { return setTOMLKey(b, key, literal) })
}

func editTOMLFile(path string, perm fs.FileMode, edit func([]byte) ([]byte, error)) error {
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
