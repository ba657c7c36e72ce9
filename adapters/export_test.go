package adapters

import (
	"sort"
	"strings"
	"time"
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

// CrushMessageRows turns one Crush messages row (role, parts JSON) into rows.
func CrushMessageRows(id, role string, parts []byte) []Row {
	return crushMessageRows(crushMessage{ID: id, Role: role, Parts: parts, Created: 1})
}

// OpenCodeUnquote is opencodeUnquote.
func OpenCodeUnquote(s string) string { return opencodeUnquote(s) }

// Tail reads complete lines of path from cur.Offset, calling fn for each
// with the line's offset (OpenTail, for a caller that pulls lines).
func Tail(path string, cur Cursor, deadline time.Time, fn func(line []byte, off int64)) (TailResult, error) {
	t, err := OpenTail(path, cur, deadline)
	if err != nil {
		return TailResult{Cursor: cur}, err
	}
	for line, off, ok := t.Next(); ok; line, off, ok = t.Next() {
		fn(line, off)
	}
	return t.Close()
}

// HeadPart is a Cursor.Head without the hash before the offset.
func HeadPart(h string) string {
	head, _, _ := strings.Cut(h, "@")
	return head
}
