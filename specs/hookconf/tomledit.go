package hookconf

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"
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

// SetTopLevelKey returns b with the top-level key set to literal (a TOML
// value: `"brief"`, `true`, `["claude"]`). An existing assignment before the
// first table is replaced through the end of its value (arrays may span
// lines; a trailing comment stays); otherwise the line is inserted before
// the first table. The result must parse and hold the key.
func SetTopLevelKey(b []byte, key, literal string) ([]byte, error) {
	line := key + " = " + literal
	firstTable := len(b)
	if m := tableLine().FindIndex(b); m != nil {
		firstTable = m[0]
	}
	keyLine := regexp.MustCompile(`(?m)^[ \t]*(` + regexp.QuoteMeta(key) + `|"` + regexp.QuoteMeta(key) + `")[ \t]*=`)
	var out []byte
	if m := keyLine.FindSubmatchIndex(b[:firstTable]); m != nil {
		end := m[1]
		depth := 0
		var quote byte // the open string's quote character, 0 outside strings
		for ; end < len(b); end++ {
			c := b[end]
			if quote != 0 {
				if c == '\\' && quote == '"' {
					end++
				} else if c == quote {
					quote = 0
				} else if c == '\n' {
					break // an unterminated string: stop at the line's end
				}
				continue
			}
			switch {
			case c == '"' || c == '\'':
				quote = c
			case c == '[':
				depth++
			case c == ']':
				depth--
			case (c == '\n' || c == '#') && depth <= 0:
				goto done
			}
		}
	done:
		tail := b[end:]
		if len(tail) > 0 && tail[0] == '#' {
			line += " "
		}
		out = append(append(append([]byte{}, b[:m[2]]...), line...), tail...) // keeps the indentation
	} else {
		head := append([]byte{}, b[:firstTable]...)
		if len(head) > 0 && head[len(head)-1] != '\n' {
			head = append(head, '\n')
		}
		ins := line + "\n"
		if firstTable < len(b) {
			ins += "\n"
		}
		out = append(append(head, ins...), b[firstTable:]...)
	}
	var check map[string]any
	if err := toml.Unmarshal(out, &check); err != nil {
		return nil, fmt.Errorf("the file would not be valid TOML after setting %s (%v); fix it by hand", key, err)
	}
	if _, ok := check[key]; !ok {
		return nil, fmt.Errorf("could not set %s; edit the file by hand", key)
	}
	return out, nil
}
