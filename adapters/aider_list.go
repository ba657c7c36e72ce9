package adapters

import (
	"path/filepath"
)

// aiderLister lists the sessions of a project's .aider.chat.history.md
// (AiderSessions). Aider keeps no global store: --all lists nothing more.
type aiderLister struct{}

func (aiderLister) Stores(env Env) []string { return nil }

func (aiderLister) ListSessions(env Env, project string) ([]NativeSession, error) {
	dirs := []string{project}
	if project == "" {
		// --all: aider keeps no global store; its histories are found
		// where carryover runs and in the home directory.
		dirs = []string{env.WorkDir, env.Home}
	}
	var out []NativeSession
	seen := map[string]bool{}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		path := aiderHistoryPath(Hook{Project: d}, env)
		if seen[path] {
			continue
		}
		seen[path] = true
		ss, err := aiderSessionsAt(path)
		if err != nil {
			continue // no history: no sessions
		}
		for _, a := range ss {
			if a.Rows == 0 {
				continue // an aborted start or only /add, /drop: nothing to hand off
			}
			p := d
			if project == "" {
				p = filepath.Dir(a.Path)
			}
			out = append(out, NativeSession{Tool: "aider", ID: a.ID, Path: a.Path, Project: p, LastActive: a.Start,
				MessageCount: a.Prompts, CountEstimated: true, Preview: preview(a.FirstPrompt)})
		}
	}
	return out, nil
}

func (aiderLister) Describe(path string) (NativeSession, error) {
	ss, err := aiderSessionsAt(path)
	if err != nil || len(ss) == 0 {
		return NativeSession{}, errNoSession
	}
	a := ss[len(ss)-1]
	for i := len(ss) - 1; i >= 0; i-- {
		if ss[i].Rows > 0 { // the newest session with content (ReadStore reads the same)
			a = ss[i]
			break
		}
	}
	return NativeSession{Tool: "aider", ID: a.ID, Path: a.Path, Project: filepath.Dir(path), LastActive: a.Start,
		MessageCount: a.Prompts, CountEstimated: true, Preview: preview(a.FirstPrompt)}, nil
}
