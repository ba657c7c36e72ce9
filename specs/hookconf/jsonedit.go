package hookconf

// This file edits JSON documents as text so that everything carryover does not
// own keeps its bytes: key order, indentation, line breaks and comments (JSONC).
// A small parser records the byte span of every value; edits splice text at
// those spans. Inserting an item after the last one and removing that item are
// exact inverses, which is what makes install → uninstall byte-identical.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

type jnode struct {
	kind       byte // '{' object, '[' array, 's' string, 'n' number, 'l' literal (true/false/null)
	start, end int  // value span [start, end)
	members    []jmember
	elems      []*jnode
	str        string // decoded string value
	lit        string // number or literal text
}

type jmember struct {
	key              string
	keyStart, keyEnd int
	val              *jnode
}

func (n *jnode) member(key string) (int, *jnode) {
	idx, val := -1, (*jnode)(nil)
	for i, m := range n.members { // the last duplicate wins, as in most parsers
		if m.key == key {
			idx, val = i, m.val
		}
	}
	return idx, val
}

// value converts the node to plain Go values (map[string]any, []any, string,
// float64, bool, nil), the same shapes encoding/json produces.
func (n *jnode) value() any {
	switch n.kind {
	case '{':
		m := make(map[string]any, len(n.members))
		for _, mb := range n.members {
			m[mb.key] = mb.val.value()
		}
		return m
	case '[':
		a := make([]any, 0, len(n.elems))
		for _, e := range n.elems {
			a = append(a, e.value())
		}
		return a
	case 's':
		return n.str
	case 'n':
		f, _ := strconv.ParseFloat(n.lit, 64)
		return f
	default: // true, false or null
		if n.lit == "null" {
			return nil
		}
		return n.lit == "true"
	}
}

var errJSONSyntax = errors.New("not valid JSON")

// parseJSON parses b, allowing a BOM, // and /* */ comments and a trailing
// comma (JSONC): they are blanked in a copy of the same length that
// encoding/json's tokenizer reads, so every span indexes b.
func parseJSON(b []byte) (*jnode, error) {
	p := &jparser{b: blankJSONC(b)}
	p.d = json.NewDecoder(bytes.NewReader(p.b))
	p.d.UseNumber()
	n, err := p.val(0)
	if err == nil {
		if _, end := p.d.Token(); end != io.EOF {
			err = errors.New("unexpected data after the top-level value")
		}
	}
	if err != nil {
		var se *json.SyntaxError
		at := len(b)
		if errors.As(err, &se) {
			at = min(int(se.Offset), len(b))
		}
		return nil, fmt.Errorf("%w: line %d: %v", errJSONSyntax, 1+bytes.Count(b[:at], []byte("\n")), err)
	}
	return n, nil
}

type jparser struct {
	b []byte
	d *json.Decoder
}

// next is where the next token starts.
func (p *jparser) next() int {
	i := int(p.d.InputOffset())
	for i < len(p.b) && strings.IndexByte(" \t\r\n,:", p.b[i]) >= 0 {
		i++
	}
	return i
}

func (p *jparser) val(depth int) (*jnode, error) {
	if depth >= 200 {
		return nil, errors.New("nested too deeply")
	}
	n := &jnode{start: p.next()}
	tok, err := p.d.Token()
	switch t := tok.(type) {
	case json.Delim: // { or [: a closer here is the tokenizer's error
		n.kind = byte(t)
		for err == nil && p.d.More() {
			err = p.item(n, depth)
		}
		if err == nil {
			_, err = p.d.Token()
		}
	case string:
		n.kind, n.str = 's', t
	case json.Number:
		n.kind, n.lit = 'n', t.String()
	case bool:
		n.kind, n.lit = 'l', strconv.FormatBool(t)
	default:
		n.kind, n.lit = 'l', "null"
	}
	n.end = int(p.d.InputOffset())
	return n, err
}

// item parses the next member of object n or element of array n.
func (p *jparser) item(n *jnode, depth int) error {
	if n.kind == '[' {
		v, err := p.val(depth + 1)
		n.elems = append(n.elems, v)
		return err
	}
	ks := p.next()
	k, err := p.d.Token()
	if err != nil {
		return err
	}
	key, _ := k.(string)
	ke := int(p.d.InputOffset())
	v, err := p.val(depth + 1)
	n.members = append(n.members, jmember{key: key, keyStart: ks, keyEnd: ke, val: v})
	return err
}

// blankJSONC is b with its BOM, comments and trailing commas (after an
// item, before a closer) as spaces; line breaks stay, for error lines.
func blankJSONC(b []byte) []byte {
	c := bytes.Clone(b)
	if bytes.HasPrefix(c, []byte("\xef\xbb\xbf")) {
		copy(c, "   ")
	}
	comma, prev := -1, byte(0) // a comma that may be trailing; the last other byte but blanks
	for i := 0; i < len(c); i++ {
		switch rest := c[i:]; {
		case bytes.HasPrefix(rest, []byte("//")) || bytes.HasPrefix(rest, []byte("/*")):
			i += spaceOut(rest) - 1
			continue
		case c[i] == '"':
			i += strLen(rest) - 1
		case c[i] == ',' && comma < 0 && prev != '[' && prev != '{':
			comma = i
			continue
		case (c[i] == ']' || c[i] == '}') && comma >= 0:
			c[comma] = ' '
		case strings.IndexByte(" \t\r\n", c[i]) >= 0:
			continue
		}
		comma, prev = -1, c[i]
	}
	return c
}

// spaceOut blanks the comment rest starts with, but its line breaks, and
// returns its length (an unterminated one runs to the end).
func spaceOut(rest []byte) int {
	n := len(rest)
	if j := bytes.IndexByte(rest, '\n'); rest[1] == '/' && j >= 0 {
		n = j
	} else if j := bytes.Index(rest[2:], []byte("*/")); rest[1] == '*' && j >= 0 {
		n = j + 4
	}
	for k, ch := range rest[:n] {
		if ch != '\n' && ch != '\r' {
			rest[k] = ' '
		}
	}
	return n
}

// strLen is the length of the string literal rest starts with.
func strLen(rest []byte) int {
	for k := 1; k < len(rest); k++ {
		switch rest[k] {
		case '\\':
			k++
		case '"':
			return k + 1
		}
	}
	return len(rest)
}

// style is the document's formatting, detected once per document.
type style struct {
	unit   string // one indent level
	keySep string // between a key and its value, e.g. ": "
	spaced bool   // single-line containers use ", " and ": "
}

func detectStyle(b []byte, root *jnode) style {
	st := style{unit: "  ", keySep: ": ", spaced: true}
	if root == nil || root.kind != '{' || len(root.members) == 0 {
		return st
	}
	m := root.members[0]
	if ind, ok := ownLine(b, m.keyStart); ok {
		base := lineIndent(b, root.start)
		if strings.HasPrefix(ind, base) && len(ind) > len(base) {
			st.unit = ind[len(base):]
		}
	}
	if sep := string(b[m.keyEnd:m.val.start]); strings.TrimSpace(sep) == ":" && !strings.Contains(sep, "\n") {
		st.keySep = sep
		st.spaced = strings.HasSuffix(sep, " ")
	}
	return st
}

// lineIndent returns the leading whitespace of the line holding pos.
func lineIndent(b []byte, pos int) string {
	line := b[lineStart(b, pos):]
	return string(line[:len(line)-len(bytes.TrimLeft(line, " \t"))])
}

// ownLine reports whether only whitespace precedes pos on its line, and that whitespace.
func ownLine(b []byte, pos int) (string, bool) {
	pre := string(b[lineStart(b, pos):pos])
	return pre, strings.TrimLeft(pre, " \t") == ""
}

func splice(b []byte, start, end int, repl string) []byte {
	return slices.Concat(b[:start], []byte(repl), b[end:])
}

// render formats v (plain values or ordered objects) in the document's
// style. Multi-line output starts at the current position; continuation
// lines start with prefix.
func render(v any, prefix string, st style, multi bool) string {
	if !multi {
		b, _ := marshal(v, "", "")
		if st.spaced {
			return respace(string(b), ": ", ", ")
		}
		return string(b)
	}
	b, _ := marshal(v, prefix, st.unit)
	return respace(string(b), st.keySep, ",")
}

// marshal is v as JSON without HTML escaping (paths and commands stay
// readable), indented when prefix or unit is set, without the final newline.
func marshal(v any, prefix, unit string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, unit)
	err := enc.Encode(v)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), err
}

// respace rewrites the separators outside strings: each ":" (and the
// space after it) to colon, each "," to comma.
func respace(s, colon, comma string) string {
	var b strings.Builder
	in, esc := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && c == ':':
			b.WriteString(colon)
			i += len(s[i+1:]) - len(strings.TrimPrefix(s[i+1:], " "))
			continue
		case !in && c == ',':
			b.WriteString(comma)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

type span struct{ start, end int }

func itemSpans(n *jnode) []span {
	var s []span
	for _, m := range n.members {
		s = append(s, span{m.keyStart, m.val.end})
	}
	for _, e := range n.elems {
		s = append(s, span{e.start, e.end})
	}
	return s
}

// removeItem deletes item idx of container n (object member or array element).
func removeItem(b []byte, n *jnode, idx int) []byte {
	items := itemSpans(n)
	switch {
	case len(items) == 1:
		return splice(b, n.start+1, n.end-1, "")
	case idx > 0:
		return splice(b, items[idx-1].end, items[idx].end, "")
	default:
		return splice(b, items[0].start, items[1].start, "")
	}
}

// appendItem adds text-rendered item after the last item of container n.
// key is "" for arrays. rootMulti says whether empty containers should open
// on new lines.
func appendItem(b []byte, n *jnode, key string, v any, st style, rootMulti bool) []byte {
	head := ""
	if n.kind == '{' {
		q, _ := json.Marshal(key)
		head = string(q) + st.keySep
	}
	items := itemSpans(n)
	if len(items) == 0 {
		ind := lineIndent(b, n.start)
		if rootMulti || bytes.IndexByte(b[n.start:n.end], '\n') >= 0 {
			text := "\n" + ind + st.unit + head + render(v, ind+st.unit, st, true) + "\n" + ind
			return splice(b, n.start+1, n.end-1, text)
		}
		return splice(b, n.start+1, n.end-1, head+render(v, "", st, false))
	}
	last := items[len(items)-1]
	sep := itemSep(b, items, st)
	multi := strings.Contains(sep, "\n")
	prefix := ""
	if multi {
		prefix = strings.ReplaceAll(sep[strings.LastIndexByte(sep, '\n')+1:], "\r", "")
	}
	return splice(b, last.end, last.end, ","+sep+head+render(v, prefix, st, multi))
}

// itemSep is what follows the comma between the last two items (blanks
// only), else a line break to the last item's indent, or a space.
func itemSep(b []byte, items []span, st style) string {
	last := items[len(items)-1]
	if len(items) >= 2 {
		gap := string(b[items[len(items)-2].end:last.start])
		if i := strings.IndexByte(gap, ','); i >= 0 && strings.TrimLeft(gap[i+1:], " \t\r\n") == "" && gap[i+1:] != "" {
			return gap[i+1:]
		}
	}
	if ind, ok := ownLine(b, last.start); ok {
		return "\n" + ind
	} else if st.spaced {
		return " "
	}
	return ""
}

// kv and ordered render JSON objects with a fixed key order.
type kv struct {
	k string
	v any
}

type ordered []kv

func (o ordered) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, p := range o {
		k, _ := json.Marshal(p.k)
		v, err := marshal(p.v, "", "")
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

// plain converts ordered values to the shapes value() returns, for comparison.
func plain(v any) any {
	b, _ := json.Marshal(v) // only carryover's own values
	var out any
	json.Unmarshal(b, &out)
	return out
}
