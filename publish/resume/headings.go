package resume

import "strings"

// defuseHeadings escapes markdown headings in text quoted into the resume
// prompt (a pasted spec's "## Payments", an assistant's "# Summary"), so
// they cannot open sections of the prompt the receiving agent reads as
// carryover's own ("## Resume Now"). Lines inside a code fence are left
// alone (shell comments); a fence closes as CommonMark closes it (the same
// character, at least as long, nothing after), and one left open at the
// end is closed, so that the next item starts outside any code block.
// "\#" renders as a literal '#'.
func defuseHeadings(s string) string {
	if !strings.Contains(s, "#") && !strings.Contains(s, "```") && !strings.Contains(s, "~~~") {
		return s
	}
	lines := strings.Split(s, "\n")
	open := "" // the fence of the code block the line is in
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		if len(l)-len(t) > 3 {
			continue
		}
		if f := fenceOf(t); f != "" {
			switch {
			case open == "":
				open = f
			case f[0] == open[0] && len(f) >= len(open) && strings.TrimSpace(t[len(f):]) == "":
				open = ""
			}
			continue
		}
		if open != "" || !strings.HasPrefix(t, "#") {
			continue
		}
		h := strings.TrimLeft(t, "#")
		if n := len(t) - len(h); n <= 6 && (h == "" || h[0] == ' ' || h[0] == '\t') {
			lines[i] = l[:len(l)-len(t)] + `\` + t
		}
	}
	if open != "" {
		lines = append(lines, open)
	}
	return strings.Join(lines, "\n")
}

// fenceOf is the run of backticks or tildes (three or more) that opens t,
// "" when t opens no fence.
func fenceOf(t string) string {
	if len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return ""
	}
	n := len(t) - len(strings.TrimLeft(t, t[:1]))
	if n < 3 {
		return ""
	}
	return t[:n]
}
