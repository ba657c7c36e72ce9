package adapters

import (
	"path/filepath"
)

// aiderLister lists the sessions of a project's .aider.chat.history.md
// (aiderSessionsAt). Aider keeps no global store: --all lists nothing more.
type aiderLister struct{}

func (aiderLister) Stores(env Env) []string { return nil }

func (aiderLister) ListSessions(env Env, project string) ([]NativeSession, error) {
	if project == "" {
		return nil, nil
	}
	path := aiderHistoryPath(Hook{Project: project}, env)
	ss, err := aiderSessionsAt(path)
	if err != nil {
		return nil, nil // no history: no sessions
	}
	var out []NativeSession
	for _, a := range ss {
		out = append(out, NativeSession{Tool: "aider", ID: a.ID, Path: a.Path, Project: project, LastActive: a.Start,
			MessageCount: a.Prompts, CountEstimated: true, Preview: preview(a.FirstPrompt)})
	}
	return out, nil
}

func (aiderLister) Describe(path string) (NativeSession, error) {
	ss, err := aiderSessionsAt(path)
	if err != nil || len(ss) == 0 {
		return NativeSession{}, errNoSession
	}
	a := ss[len(ss)-1]
	return NativeSession{Tool: "aider", ID: a.ID, Path: a.Path, Project: filepath.Dir(path), LastActive: a.Start,
		MessageCount: a.Prompts, CountEstimated: true, Preview: preview(a.FirstPrompt)}, nil
}
