package distill

import "strings"

// Dedupe returns the items of in trimmed, without blank ones and repeats,
// in first-seen order: the one dedupe of the pipeline (distill and the
// resume prompt alike).
func Dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		s = strings.TrimSpace(s)
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
