package hookconf

import (
	"fmt"
	"slices"
	"strings"
)

// Diff renders p as a unified diff (3 lines of context); "" when unchanged.
func Diff(p Plan) string {
	if !p.Changed() {
		return ""
	}
	from, to := p.Path, p.Path
	if p.Before == nil {
		from = "/dev/null"
	}
	if p.Delete {
		to = "/dev/null"
	}
	var out strings.Builder
	switch { // a whole hook file's mode, as git shows it (an executable hook needs it)
	case p.whole && p.Created && p.Mode != 0:
		fmt.Fprintf(&out, "new file mode 100%o\n", p.Mode)
	case p.chmod:
		fmt.Fprintf(&out, "new mode 100%o\n", p.Mode)
	}
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, to)
	ops := script(slices.Collect(strings.Lines(string(p.Before))), slices.Collect(strings.Lines(string(p.After))))
	for i := 0; i < len(ops); i++ {
		if ops[i].kind != ' ' {
			end := hunkEnd(ops, i, 3)
			out.WriteString(formatHunk(ops, max(0, i-3), end))
			i = end - 1
		}
	}
	return out.String()
}

type op struct {
	kind byte // ' ', '-', '+'
	line string
}

// script is an LCS edit script; inputs over 4M cells fall back to
// "delete all, add all".
func script(a, b []string) []op {
	// trim the common prefix and suffix first: config edits are local
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	ops := appendOps(nil, ' ', a[:p])
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	if len(ma)*len(mb) > 4<<20 {
		ops = appendOps(appendOps(ops, '-', ma), '+', mb)
	} else {
		ops = appendLCS(ops, ma, mb)
	}
	return appendOps(ops, ' ', a[len(a)-s:])
}

func appendOps(ops []op, kind byte, lines []string) []op {
	for _, l := range lines {
		ops = append(ops, op{kind, l})
	}
	return ops
}

// appendLCS appends the edit script from a to b along a longest common
// subsequence.
func appendLCS(ops []op, a, b []string) []op {
	n, m := len(a), len(b)
	lcs := lcsTable(a, b)
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, op{' ', a[i]})
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			ops = append(ops, op{'+', b[j]})
			j++
		default:
			ops = append(ops, op{'-', a[i]})
			i++
		}
	}
	return ops
}

// lcsTable holds at [i][j] the length of the longest common subsequence
// of a[i:] and b[j:].
func lcsTable(a, b []string) [][]int {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	return lcs
}

// hunkEnd is where the hunk of the change at end ends: ctx lines after
// its last change, taking in changes at most 2*ctx unchanged lines apart.
func hunkEnd(ops []op, end, ctx int) int {
	for end < len(ops) {
		if ops[end].kind != ' ' {
			end++
			continue
		}
		run := end
		for run < len(ops) && ops[run].kind == ' ' {
			run++
		}
		if run-end > 2*ctx || run == len(ops) {
			return min(end+ctx, len(ops))
		}
		end = run
	}
	return end
}

// sides counts the lines of ops on the old side (a) and the new (b).
func sides(ops []op) (a, b int) {
	for _, o := range ops {
		if o.kind != '+' {
			a++
		}
		if o.kind != '-' {
			b++
		}
	}
	return a, b
}

// formatHunk is ops[start:end] as a unified diff hunk.
func formatHunk(ops []op, start, end int) string {
	aStart, bStart := sides(ops[:start])
	aN, bN := sides(ops[start:end])
	// a range of lines starts at its first line, an empty one at the line before
	if aN > 0 {
		aStart++
	}
	if bN > 0 {
		bStart++
	}
	var body strings.Builder
	for _, o := range ops[start:end] {
		body.WriteByte(o.kind)
		body.WriteString(o.line)
		if !strings.HasSuffix(o.line, "\n") {
			body.WriteString("\n\\ No newline at end of file\n")
		}
	}
	return fmt.Sprintf("@@ -%d,%d +%d,%d @@\n", aStart, aN, bStart, bN) + body.String()
}
