package adapters_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/carryover/carryover/adapters"
)

func TestConfined(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	store := filepath.Join(home, ".claude", "projects", "p")
	os.MkdirAll(store, 0o700)
	outside := filepath.Join(dir, "outside.jsonl")
	os.WriteFile(outside, []byte("{}\n"), 0o600)
	inside := filepath.Join(store, "a.jsonl")
	os.WriteFile(inside, []byte("{}\n"), 0o600)
	os.Symlink(outside, filepath.Join(store, "escape.jsonl"))
	os.Symlink(inside, filepath.Join(store, "alias.jsonl"))
	os.Symlink(inside, filepath.Join(dir, "into-store.jsonl"))
	// A dotfiles-style symlinked config dir.
	real := filepath.Join(dir, "dotfiles", "claude")
	os.MkdirAll(filepath.Join(real, "projects"), 0o700)
	os.WriteFile(filepath.Join(real, "projects", "b.jsonl"), []byte("{}\n"), 0o600)
	home2 := filepath.Join(dir, "home2")
	os.MkdirAll(home2, 0o700)
	os.Symlink(real, filepath.Join(home2, ".claude"))

	claude, _ := adapters.Lookup("claude")
	env := func(h string, vars map[string]string) adapters.Env {
		return adapters.Env{Home: h, Getenv: func(k string) string { return vars[k] }}
	}
	for _, tc := range []struct {
		path string
		env  adapters.Env
		ok   bool
	}{
		{inside, env(home, nil), true},
		{outside, env(home, nil), true}, // no symlink involved: read where the agent says
		{filepath.Join(store, "escape.jsonl"), env(home, nil), false},
		{filepath.Join(store, "alias.jsonl"), env(home, nil), true},
		{filepath.Join(dir, "into-store.jsonl"), env(home, nil), true},
		{filepath.Join(home2, ".claude", "projects", "b.jsonl"), env(home2, nil), true},
		{filepath.Join(store, "escape.jsonl"), env(home, map[string]string{"CLAUDE_CONFIG_DIR": dir}), true},
		{filepath.Join(store, "missing.jsonl"), env(home, nil), true},
	} {
		err := adapters.Confined(claude, tc.env, tc.path)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, adapters.ErrOutsideStore)) {
			t.Errorf("Confined(%s) = %v, want ok=%v", tc.path, err, tc.ok)
		}
	}
}
