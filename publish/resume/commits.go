package resume

import "strings"

// maxSubject clips a commit subject (runes); a long first line is still
// one line of the prompt.
const maxSubject = 100

// OneLine keeps the first line of each entry, clipped to maxSubject runes:
// "Recent commits" shows subjects, whatever a session file carries.
func OneLine(entries []string) []string {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		first, _, _ := strings.Cut(strings.TrimSpace(e), "\n")
		first = strings.TrimRight(first, "\r ")
		if r := []rune(first); len(r) > maxSubject {
			first = string(r[:maxSubject-1]) + "…"
		}
		out = append(out, first)
	}
	return out
}
