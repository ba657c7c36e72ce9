package adapters

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// PastedLines is where a prompt stops being a request and becomes a paste
// (a spec, a log, a file): beyond it the row keeps the request around the
// paste, not the paste. 40 lines: the longest hand-typed requests in the
// fixtures and the realworld corpus are under 30 lines; pasted specs and
// logs run from a hundred to thousands.
const PastedLines = 40

// BoundPrompt returns s, or for a paste of more than PastedLines lines a
// few lines that carry the request: the first sentence, the paste's title
// (its first markdown heading, else its first line) and the last line when
// it reads as the request that follows a paste, then "(pasted, N lines)".
// Markdown heading marks are dropped so the paste cannot open sections in
// a handoff.
func BoundPrompt(s string) string {
	n := strings.Count(strings.TrimRight(s, "\n"), "\n") + 1
	if n <= PastedLines {
		return s
	}
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			lines = append(lines, t)
		}
	}
	if len(lines) == 0 {
		return "(pasted, " + strconv.Itoa(n) + " lines)"
	}
	var out []string
	title, isHead := pasteHeading(lines[0])
	if !isHead {
		out = append(out, clipRunes(firstSentence(title), 200))
		title = pasteTitle(lines)
	}
	if title != "" {
		out = append(out, "Title: "+clipRunes(title, 120))
	}
	last, lastHead := pasteHeading(lines[len(lines)-1])
	if len(lines) > 2 && !lastHead && looksLikeRequest(last) && (len(out) == 0 || last != lines[0]) {
		out = append(out, clipRunes(last, 200))
	}
	out = append(out, "(pasted, "+strconv.Itoa(n)+" lines)")
	return strings.Join(out, "\n")
}

// pasteHeading is the text of a markdown heading line (# to ######), or
// the line itself when it is none.
func pasteHeading(l string) (string, bool) {
	t := strings.TrimLeft(l, "#")
	if len(t) < len(l) && len(l)-len(t) <= 6 && strings.HasPrefix(t, " ") {
		return strings.TrimSpace(t), true
	}
	return l, false
}

// pasteTitle is the first heading among a paste's first 12 lines, else
// its second line.
func pasteTitle(lines []string) string {
	for _, l := range lines[1:min(len(lines), 12)] {
		if h, ok := pasteHeading(l); ok {
			return h
		}
	}
	if len(lines) > 1 {
		return lines[1] // not a heading: the loop took it
	}
	return ""
}

// firstSentence is s up to its first sentence end (". ", "? ", "! ", "。").
func firstSentence(s string) string {
	for _, end := range []string{". ", "? ", "! ", "。", "？", "！"} {
		if i := strings.Index(s, end); i > 0 {
			s = s[:i+len(strings.TrimRight(end, " "))]
		}
	}
	return s
}

// looksLikeRequest: a short prose line, not code, a list item or a table
// row (the last line of a pasted file is usually one of those).
func looksLikeRequest(l string) bool {
	if utf8.RuneCountInString(l) > 300 || strings.ContainsAny(l[:1], "-*|`{}[]<>/\\;") {
		return false
	}
	return strings.Count(l, " ") >= 2 || utf8.RuneCountInString(l) >= 8 && !strings.ContainsAny(l, "(){};=")
}

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// promptText is a prompt row's text: bounded, then clipped.
func promptText(s string) string { return clip(BoundPrompt(s), maxPrompt) }
