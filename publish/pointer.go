package publish

import "strings"

// StripPointer removes carryover's own pointer block (EnsurePointer) from a
// memory file's text.
func StripPointer(s string) string {
	i, j := strings.Index(s, startMarker), strings.Index(s, endMarker)
	if i >= 0 && j > i {
		return s[:i] + s[j+len(endMarker):]
	}
	return s
}
