package adapters

import (
	"sort"
)

// Test-only access (this file is compiled only into the tests).

// AiderSessions lists the sessions of project's chat history, oldest first.
func AiderSessions(project string) ([]AiderSession, error) {
	return aiderSessionsAt(aiderHistoryPath(Hook{Project: project}, Env{}))
}

// SortSessions orders sessions newest first (ties by agent and id).
func SortSessions(ss []NativeSession) {
	sort.SliceStable(ss, func(i, j int) bool {
		if !ss[i].LastActive.Equal(ss[j].LastActive) {
			return ss[i].LastActive.After(ss[j].LastActive)
		}
		if ss[i].Tool != ss[j].Tool {
			return ss[i].Tool < ss[j].Tool
		}
		return ss[i].ID < ss[j].ID
	})
}

// OpenCodeUnquote is opencodeUnquote.
func OpenCodeUnquote(s string) string { return opencodeUnquote(s) }
