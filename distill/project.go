package distill

import "path/filepath"

// ProjectRoot is the project a session belongs to: the agent's own project
// dir when it gives one, else the git root of cwd, else cwd; symlinks
// resolved, so one project has one name in the ledger.
func ProjectRoot(explicit, cwd string) string {
	p := explicit
	if p == "" {
		p = RepoRoot(cwd)
		if p == "" {
			p = cwd
		}
	}
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return p
}
