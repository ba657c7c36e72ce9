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
			open = nextFence(open, f, t)
			continue
		}
		if open == "" && heading(t) {
			lines[i] = l[:len(l)-len(t)] + `\` + t
		}
	}
	if open != "" {
		lines = append(lines, open)
	}
	return strings.Join(lines, "\n")
}

// nextFence is the open fence after a line t that starts with fence f:
// f opens a block when none is open, and closes the open one when it is
// the same character, at least as long, with nothing after.
func nextFence(open, f, t string) string {
	switch {
	case open == "":
		return f
	case f[0] == open[0] && len(f) >= len(open) && strings.TrimSpace(t[len(f):]) == "":
		return ""
	}
	return open
}

// heading reports a markdown ATX heading: one to six '#', then a space,
// a tab or the end.
func heading(t string) bool {
	if !strings.HasPrefix(t, "#") {
		return false
	}
	h := strings.TrimLeft(t, "#")
	return len(t)-len(h) <= 6 && (h == "" || h[0] == ' ' || h[0] == '\t')
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
