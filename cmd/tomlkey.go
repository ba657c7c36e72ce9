package cmd

// setTOMLKey is carryover's one editor of its own TOML files (config.toml,
// .carryover.toml): it sets one top-level key and keeps every other byte,
// comments and layout included. `install` writes tools and resume with it,
// `config set` any documented key.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"sync"

	"github.com/pelletier/go-toml/v2"

	"github.com/carryover/carryover/specs/hookconf"
)

// tableLine is compiled at first use, not at process start (the hook
// process never edits config).
var tableLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^[ \t]*\[`) })

// setTOMLKey returns b with the top-level key set to literal (a TOML value:
// `"brief"`, `true`, `["claude"]`). An existing assignment before the first
// table is replaced through the end of its value (arrays may span lines; a
// trailing comment stays); otherwise the line is inserted before the first
// table. The result must parse and hold the key.
func setTOMLKey(b []byte, key, literal string) ([]byte, error) {
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

// setTOMLKeyInFile applies setTOMLKey to path, creating the file (and its
// directory) with perm when missing.
func setTOMLKeyInFile(path, key, literal string, perm fs.FileMode) error {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	out, err := setTOMLKey(b, key, literal)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if string(out) == string(b) && len(b) > 0 {
		return nil
	}
	return hookconf.OSFS{}.WriteFile(path, out, perm)
}
