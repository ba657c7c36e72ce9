package hookconf

import (
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/utils/diff"
)

// Diff renders p as a unified diff (3 lines of context); "" when unchanged.
func Diff(p Plan) string {
	if !p.Changed() {
		return ""
	}
	var out strings.Builder
	diffHeader(&out, p)
	ops := script(string(p.Before), string(p.After))
	for i := 0; i < len(ops); i++ {
		if ops[i].kind != ' ' {
			end := hunkEnd(ops, i, 3)
			out.WriteString(formatHunk(ops, max(0, i-3), end))
			i = end - 1
		}
	}
	return out.String()
}

// diffHeader writes p's mode line, if any, and its file names.
func diffHeader(out *strings.Builder, p Plan) {
	from, to := p.Path, p.Path
	if p.Before == nil {
		from = "/dev/null"
	}
	if p.Delete {
		to = "/dev/null"
	}
	switch { // a whole hook file's mode, as git shows it (an executable hook needs it)
	case p.whole && p.Created && p.Mode != 0:
		fmt.Fprintf(out, "new file mode 100%o\n", p.Mode)
	case p.chmod:
		fmt.Fprintf(out, "new mode 100%o\n", p.Mode)
	}
	fmt.Fprintf(out, "--- %s\n+++ %s\n", from, to)
}

type op struct {
	kind byte // ' ', '-', '+'
	line string
}

// script is the line edit script from a to b, by go-git's line diff
// (go-diff's Myers with an hour's time limit: in practice the output
// depends on the input alone).
func script(a, b string) []op {
	var ops []op
	for _, d := range diff.Do(a, b) {
		kind := "- +"[d.Type+1] // diffmatchpatch.DiffDelete -1, DiffEqual 0, DiffInsert 1
		for l := range strings.Lines(d.Text) {
			ops = append(ops, op{kind, l})
		}
	}
	return ops
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
