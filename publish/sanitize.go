package publish

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Transcript content (prompts, file names, commands, error text), hook
// payload fields (session ids) and a cloned repository's .git (branch
// names) all reach handoff.md, the log and the terminal. None of them may
// forge structure there: a line break that starts a fake "# RESUME
// PROTOCOL" header or a pointer marker, or a terminal escape that rewrites
// what the user sees. These functions are the one place that decides what
// survives.

// StripTerminal removes terminal escape sequences (CSI, OSC, DCS and the
// other ESC forms, 7- and 8-bit), every control character except newline
// and tab, and every invisible character (Invisible) from s, and replaces
// invalid UTF-8. It is what `handoff --stdout` and `history show` print on
// a terminal, and what every structural check of carryover's own output
// runs after.
func StripTerminal(s string) string { return clean(s, false) }

// OneLine is StripTerminal for a single line: newlines, tabs and the
// Unicode line and paragraph separators become spaces.
func OneLine(s string) string { return clean(s, true) }

func clean(s string, oneLine bool) string {
	if isPlain(s, oneLine) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if s[i] == 0x1b { // ESC: skip the whole sequence
			i = skipEscape(s, i)
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteString("\uFFFD")
		case opensString(r):
			i = skipString(s, i+n, r == 0x9b)
			continue
		default:
			writeClean(&b, s[i:i+n], r, oneLine)
		}
		i += n
	}
	return b.String()
}

// opensString reports the 8-bit CSI, OSC, DCS, PM, APC and SOS: the
// sequence they open is skipped.
func opensString(r rune) bool {
	return r == 0x9b || r == 0x9d || r == 0x90 || r == 0x9e || r == 0x9f || r == 0x98
}

// writeClean writes the rune r (its bytes enc) as clean keeps it: line
// breaks and tabs (spaces in one line), other controls as a space or
// nothing, invisible characters dropped.
func writeClean(b *strings.Builder, enc string, r rune, oneLine bool) {
	switch {
	case r == '\n' || r == '\t':
		if oneLine {
			b.WriteByte(' ')
		} else {
			b.WriteRune(r)
		}
	case r == '\u2028' || r == '\u2029' || r == '\u0085':
		b.WriteByte(' ')
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		if oneLine || r == '\r' {
			b.WriteByte(' ')
		}
	case Invisible(r):
		// Dropped, not replaced: "\u200b# RESUME PROTOCOL" must become
		// the "# RESUME PROTOCOL" the heading check then escapes.
	default:
		b.WriteString(enc)
	}
}

// Invisible reports whether r is drawn as nothing, or only changes how
// the characters around it are drawn, so that what a model or a person
// reads differs from what carryover's checks see: Unicode's format
// characters (Cf: the zero-width space, joiners and marks U+200B–U+200F,
// the bidirectional embeddings, overrides and isolates U+202A–U+202E and
// U+2066–U+2069, the word joiner and invisible operators U+2060–U+2064,
// U+FEFF, the soft hyphen, the tag characters U+E0000–U+E007F that can
// spell a hidden ASCII message), the variation selectors (U+FE00–U+FE0F,
// U+E0100–U+E01EF: 256 of them can carry a byte each behind one visible
// character) and the other default-ignorable code points (Hangul fillers,
// U+034F, the unassigned rest of plane 14). Removing them costs a joined
// emoji its join and nothing a handoff needs.
func Invisible(r rune) bool {
	if r < 0xad {
		return false // the common case, without a table lookup
	}
	return unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}

// isPlain reports whether s needs no cleaning (the common case, checked
// without allocating).
func isPlain(s string, oneLine bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return false // decode it properly
		}
		if c < 0x20 || c == 0x7f {
			if !oneLine && (c == '\n' || c == '\t') {
				continue
			}
			return false
		}
	}
	return true
}

// skipEscape returns the index after the escape sequence starting at s[i]
// (ESC).
func skipEscape(s string, i int) int {
	i++
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[': // CSI: parameters and intermediates, then a final byte
		return skipString(s, i+1, true)
	case ']', 'P', 'X', '^', '_': // OSC, DCS, SOS, PM, APC: up to ST or BEL
		return skipString(s, i+1, false)
	}
	// Two- or three-byte forms: intermediates (0x20–0x2f), then a final.
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) {
		i++
	}
	return i
}

// skipString skips a CSI's parameters up to its final byte (csi), or a
// control string up to its terminator (BEL, ESC \ or 8-bit ST), from s[i].
func skipString(s string, i int, csi bool) int {
	for i < len(s) {
		c := s[i]
		if csi {
			if c >= 0x40 && c <= 0x7e {
				return i + 1
			}
			if c < 0x20 || c >= 0x7f { // not part of a CSI: stop here
				return i
			}
			i++
			continue
		}
		switch {
		case c == 0x07:
			return i + 1
		case c == 0x1b:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			return i + 1
		case c == 0xc2 && i+1 < len(s) && s[i+1] == 0x9c: // 8-bit ST
			return i + 2
		}
		i++
	}
	return i
}

// contentLine makes one line of transcript-derived content safe to place
// in handoff.md: one line, no escapes, and nothing a reader (a model, a
// receipt scanner, the pointer-block editor) could take for carryover's
// own structure — a leading '#' (a header, or a fake "# RESUME PROTOCOL"),
// the [CARRYOVER] tag or the pointer markers.
func contentLine(s string) string {
	s = OneLine(s)
	if strings.Contains(s, "CARRYOVER") {
		s = strings.NewReplacer("[CARRYOVER]", "(CARRYOVER)", startMarker, "<!-- CARRYOVER START -->", endMarker, "<!-- CARRYOVER END -->").Replace(s)
	}
	if t := strings.TrimLeftFunc(s, unicode.IsSpace); startsStructure(t) {
		s = `\` + t
	}
	return s
}

// startsStructure reports whether a line whose leading white space is
// trimmed (t) would read as carryover's structure: a heading, whatever
// space (an ideographic or no-break one) stands before its '#', the
// full-width and small number signs a model reads as one, or a code
// fence, which could close the quoted block a content line sits in.
func startsStructure(t string) bool {
	return strings.HasPrefix(t, "#") || strings.HasPrefix(t, "\uff03") || strings.HasPrefix(t, "\ufe5f") ||
		strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")
}
