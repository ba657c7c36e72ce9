package hookconf

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// carryover edits TOML files it shares with their owners (Codex's
// config.toml, its own config.toml) by splicing text, never by re-encoding:
// comments, order and spacing stay. This file and codex.go's marked trust
// tables are the one TOML editor.

// TOMLString quotes s as a TOML basic string.
func TOMLString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tableLine is compiled at first use, not at process start (the hook
// process imports this package but never edits TOML).
var tableLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^[ \t]*\[`) })

// SetTopLevelKey sets key = value (value is a TOML literal) among the
// top-level keys of b, keeping every other line: it replaces an existing
// assignment (through the end of its value: arrays may span lines; a
// trailing comment stays) or inserts one before the first table. The
// caller checks that the result parses.
func SetTopLevelKey(b []byte, key, value string) []byte {
	line := key + " = " + value
	firstTable := len(b)
	if m := tableLine().FindIndex(b); m != nil {
		firstTable = m[0]
	}
	keyLine := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(key) + `[ \t]*=`)
	if m := keyLine.FindIndex(b[:firstTable]); m != nil {
		end := m[1]
		depth, in := 0, false
		for ; end < len(b); end++ {
			c := b[end]
			if in {
				if c == '\\' {
					end++
				} else if c == '"' {
					in = false
				}
				continue
			}
			if c == '"' {
				in = true
			} else if c == '[' {
				depth++
			} else if c == ']' {
				depth--
			} else if c == '\n' && depth <= 0 {
				break
			} else if c == '#' && depth <= 0 {
				break
			}
		}
		tail := b[end:]
		if len(tail) > 0 && tail[0] == '#' {
			line += " "
		}
		return append(append(append([]byte{}, b[:m[0]]...), line...), tail...)
	}
	head := append([]byte{}, b[:firstTable]...)
	if len(head) > 0 && head[len(head)-1] != '\n' {
		head = append(head, '\n')
	}
	ins := line + "\n"
	if firstTable < len(b) {
		ins += "\n"
	}
	return append(append(head, ins...), b[firstTable:]...)
}
