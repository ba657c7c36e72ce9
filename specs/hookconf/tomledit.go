package hookconf

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// carryover edits TOML files it shares with their owners (Codex's
// config.toml, its own config.toml) by splicing text, never by re-encoding:
// comments, order and spacing stay. This file and codex.go's marked trust
// tables are the one TOML editor.

// tomlQuote quotes s as a TOML basic string.
func tomlQuote(s string) string {
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

// carryover's own files are edited key by key: a key is located with
// go-toml/v2's own parser (unstable.Parser: each expression's byte range),
// not with patterns, so a key inside a multi-line array, a string holding
// "[x]" or a quoted key is found or left alone exactly as TOML reads it.
// Dotted keys (limits.warn_percent) live in their table ([limits]).

// tomlLayout is where things are in a TOML document.
type tomlLayout struct {
	// kv is the byte range [start, end) of the assignment of the wanted key
	// (the key through its value; a trailing comment is outside it), and
	// keyEnd where its key text ends; start < 0 when it is not assigned.
	start, end, keyEnd int
	// inline: the key is inside an inline table or under a key assigned a
	// value (`limits = {…}`); such a file is left to the user.
	inline bool
	// firstTable is the offset of the first table header (len(b) if none).
	firstTable int
	// tableEnd is where the wanted key's table ends: after its last
	// expression's line (-1 when the table has no header).
	tableEnd int
}

// locateTOMLKey finds path (["limits", "warn_percent"]) in b.
func locateTOMLKey(b []byte, path []string) (tomlLayout, error) {
	lay := tomlLayout{start: -1, firstTable: len(b), tableEnd: -1}
	p := unstable.Parser{}
	p.Reset(b)
	var table []string
	inWanted := false // inside the header of path's table
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			// A header's own range is not recorded by the parser; its
			// key's is, and the header is that key's line.
			it := e.Key()
			it.Next()
			at := int(it.Node().Raw.Offset)
			if lay.firstTable == len(b) {
				lay.firstTable = lineStart(b, at)
			}
			table = keyParts(e.Key())
			if e.Kind == unstable.ArrayTable {
				table = append(table, "[]") // never a documented key's table
			}
			inWanted = len(path) > 1 && slices.Equal(table, path[:len(path)-1])
			if inWanted {
				lay.tableEnd = lineEnd(b, at)
			}
		case unstable.KeyValue:
			full := append(slices.Clone(table), keyParts(e.Key())...)
			start := int(e.Raw.Offset)
			end := start + int(e.Raw.Length)
			if inWanted {
				lay.tableEnd = lineEnd(b, end)
			}
			switch {
			case slices.Equal(full, path):
				lay.start, lay.end = start, end
				lay.keyEnd = start + bytes.IndexByte(b[start:end], '=')
			case len(full) < len(path) && slices.Equal(full, path[:len(full)]):
				lay.inline = true // `limits = {…}` or `limits = 1`
			}
		}
	}
	if err := p.Error(); err != nil {
		return lay, fmt.Errorf("the file is not valid TOML (%v); fix it by hand", err)
	}
	return lay, nil
}

func keyParts(it unstable.Iterator) []string {
	var out []string
	for it.Next() {
		out = append(out, string(it.Node().Data))
	}
	return out
}

func lineStart(b []byte, i int) int { return bytes.LastIndexByte(b[:i], '\n') + 1 }

// lineEnd is just after the newline ending the line that holds i (len(b)
// on the last line).
func lineEnd(b []byte, i int) int {
	if j := bytes.IndexByte(b[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(b)
}

// SetKey returns b with key (dotted for a key inside a table) set to
// literal (a TOML value: `"brief"`, `true`, `["claude"]`). An existing
// assignment is replaced through the end of its value (a trailing comment
// stays); a new top-level key goes before the first table, a new table key
// at the end of its table, creating the table at the end of the file if
// needed. The result must parse and hold the key.
func SetKey(b []byte, key, literal string) ([]byte, error) {
	path := strings.Split(key, ".")
	lay, err := locateTOMLKey(b, path)
	if err != nil {
		return nil, err
	}
	if lay.inline {
		return nil, fmt.Errorf("%s is set inline (%s = {…}); edit the file by hand", key, path[0])
	}
	name := path[len(path)-1]
	var out []byte
	switch {
	case lay.start >= 0:
		keyText := strings.TrimRight(string(b[lay.start:lay.keyEnd]), " \t")
		out = slices.Concat(b[:lay.start], []byte(keyText+" = "+literal), b[lay.end:])
	case len(path) == 1:
		head := b[:lay.firstTable]
		ins := name + " = " + literal + "\n"
		if len(head) > 0 && head[len(head)-1] != '\n' {
			ins = "\n" + ins
		}
		if lay.firstTable < len(b) {
			ins += "\n"
		}
		out = slices.Concat(head, []byte(ins), b[lay.firstTable:])
	case lay.tableEnd >= 0:
		ins := name + " = " + literal + "\n"
		if lay.tableEnd > 0 && b[lay.tableEnd-1] != '\n' {
			ins = "\n" + ins
		}
		out = slices.Concat(b[:lay.tableEnd], []byte(ins), b[lay.tableEnd:])
	default:
		var pre string
		if len(b) > 0 {
			pre = "\n"
			if b[len(b)-1] != '\n' {
				pre = "\n\n"
			}
		}
		out = slices.Concat(b, []byte(pre+"["+strings.Join(path[:len(path)-1], ".")+"]\n"+name+" = "+literal+"\n"))
	}
	var check map[string]any
	if err := toml.Unmarshal(out, &check); err != nil {
		return nil, fmt.Errorf("the file would not be valid TOML after setting %s (%v); fix it by hand", key, err)
	}
	if _, ok := LookupPath(check, path); !ok {
		return nil, fmt.Errorf("could not set %s; edit the file by hand", key)
	}
	return out, nil
}

// UnsetKey returns b without key's assignment (its whole line, with a
// trailing comment on it); changed is false when the key was not set.
func UnsetKey(b []byte, key string) (out []byte, changed bool, err error) {
	path := strings.Split(key, ".")
	lay, err := locateTOMLKey(b, path)
	if err != nil {
		return nil, false, err
	}
	if lay.inline {
		return nil, false, fmt.Errorf("%s is set inline (%s = {…}); edit the file by hand", key, path[0])
	}
	if lay.start < 0 {
		return b, false, nil
	}
	from, to := lay.start, lineEnd(b, lay.end)
	if strings.TrimSpace(string(b[lineStart(b, from):from])) == "" {
		from = lineStart(b, from) // the line held only this key: drop it whole
	} else {
		to = lay.end
	}
	out = slices.Concat(b[:from], b[to:])
	var check map[string]any
	if err := toml.Unmarshal(out, &check); err != nil {
		return nil, false, fmt.Errorf("the file would not be valid TOML after removing %s (%v); fix it by hand", key, err)
	}
	return out, true, nil
}

// LookupPath is the value at a dotted path in a decoded document.
func LookupPath(m map[string]any, path []string) (any, bool) {
	var v any = m
	for _, p := range path {
		t, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = t[p]; !ok {
			return nil, false
		}
	}
	return v, true
}
