package resume

import "strings"

// defuseHeadings escapes markdown headings in text quoted into the resume
// prompt (a pasted spec's "## Payments", an assistant's "# Summary"), so
// they cannot open sections of the prompt the receiving agent reads as
// carryover's own ("## Resume Now"). Lines inside ``` fences are left
// alone (shell comments). "\#" renders as a literal '#'.
func defuseHeadings(s string) string {
	if !strings.Contains(s, "#") {
		return s
	}
	lines := strings.Split(s, "\n")
	fenced := false
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced || len(l)-len(t) > 3 || !strings.HasPrefix(t, "#") {
			continue
		}
		h := strings.TrimLeft(t, "#")
		if n := len(t) - len(h); n <= 6 && (h == "" || h[0] == ' ' || h[0] == '\t') {
			lines[i] = l[:len(l)-len(t)] + `\` + t
		}
	}
	return strings.Join(lines, "\n")
}
