package hookconf

import (
	"fmt"
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
	a, b := splitLines(string(p.Before)), splitLines(string(p.After))
	var out strings.Builder
	switch { // a whole hook file's mode, as git shows it (an executable hook needs it)
	case p.whole && p.Created && p.Mode != 0:
		fmt.Fprintf(&out, "new file mode 100%o\n", p.Mode)
	case p.chmod:
		fmt.Fprintf(&out, "new mode 100%o\n", p.Mode)
	}
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, to)
	for _, h := range hunks(a, b, 3) {
		out.WriteString(h)
	}
	return out.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
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
	var ops []op
	for _, l := range a[:p] {
		ops = append(ops, op{' ', l})
	}
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	if len(ma)*len(mb) > 4<<20 {
		for _, l := range ma {
			ops = append(ops, op{'-', l})
		}
		for _, l := range mb {
			ops = append(ops, op{'+', l})
		}
	} else {
		n, m := len(ma), len(mb)
		lcs := make([][]int, n+1)
		for i := range lcs {
			lcs[i] = make([]int, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && ma[i] == mb[j]:
				ops = append(ops, op{' ', ma[i]})
				i++
				j++
			case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
				ops = append(ops, op{'+', mb[j]})
				j++
			default:
				ops = append(ops, op{'-', ma[i]})
				i++
			}
		}
	}
	for _, l := range a[len(a)-s:] {
		ops = append(ops, op{' ', l})
	}
	return ops
}

func hunks(a, b []string, ctx int) []string {
	ops := script(a, b)
	var out []string
	i := 0
	for i < len(ops) {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(0, i-ctx)
		end := i
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
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		aStart, bStart := 1, 1
		for _, o := range ops[:start] {
			if o.kind != '+' {
				aStart++
			}
			if o.kind != '-' {
				bStart++
			}
		}
		var body strings.Builder
		aN, bN := 0, 0
		for _, o := range ops[start:end] {
			body.WriteByte(o.kind)
			body.WriteString(o.line)
			if !strings.HasSuffix(o.line, "\n") {
				body.WriteString("\n\\ No newline at end of file\n")
			}
			if o.kind != '+' {
				aN++
			}
			if o.kind != '-' {
				bN++
			}
		}
		if aN == 0 {
			aStart--
		}
		if bN == 0 {
			bStart--
		}
		out = append(out, fmt.Sprintf("@@ -%d,%d +%d,%d @@\n", aStart, aN, bStart, bN)+body.String())
		i = end
	}
	return out
}
