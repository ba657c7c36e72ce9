package adapters

import (
	"errors"
	"path/filepath"
)

// StoreRooter is an optional capability: the directories an agent keeps its
// session store under (Confined).
type StoreRooter interface {
	StoreRoots(env Env) []string
}

var ErrOutsideStore = errors.New("transcript path leads through a symlink out of the agent's session store; not read")

// Confined applies the hook path's transcript path policy: a path that
// involves no symlink is read wherever it is (the agent named it; custom
// stores and `handoff --transcript` live anywhere); one that does is
// followed only when it resolves under one of the agent's store roots
// (each root taken as written and resolved, so a symlinked ~/.claude still
// works). Adapters without StoreRooter are not restricted; a path that does
// not exist (yet) is not judged here.
func Confined(a Adapter, env Env, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil || resolved == abs {
		return nil
	}
	sr, ok := a.(StoreRooter)
	if !ok {
		return nil
	}
	for _, root := range sr.StoreRoots(env) {
		r, err := filepath.EvalSymlinks(root)
		if root != "" && (under(resolved, filepath.Clean(root)) || err == nil && under(resolved, r)) {
			return nil
		}
	}
	return ErrOutsideStore
}

// under reports whether p is dir or inside it (both clean and absolute).
func under(p, dir string) bool { return dir == "/" || InProject(p, dir) }
