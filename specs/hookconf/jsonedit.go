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

type jparser struct {
	b     []byte
	i     int
	depth int
}

var errJSONSyntax = errors.New("not valid JSON")

// parseJSON parses b, allowing // and /* */ comments and trailing commas.
func parseJSON(b []byte) (*jnode, error) {
	p := &jparser{b: b}
	if bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) {
		p.i = 3
	}
	p.ws()
	n, err := p.val()
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(b) {
		return nil, p.errf("unexpected data after the top-level value")
	}
	return n, nil
}

func (p *jparser) errf(msg string) error {
	line := 1 + bytes.Count(p.b[:min(p.i, len(p.b))], []byte("\n"))
	return fmt.Errorf("%w: line %d: %s", errJSONSyntax, line, msg)
}

func (p *jparser) ws() {
	for p.i < len(p.b) {
		rest, n := p.b[p.i:], 1
		switch {
		case bytes.HasPrefix(rest, []byte("//")):
			n = bytes.IndexByte(rest, '\n') // the newline is the next blank
		case bytes.HasPrefix(rest, []byte("/*")):
			if n = bytes.Index(rest[2:], []byte("*/")); n >= 0 {
				n += 4
			}
		case strings.IndexByte(" \t\n\r", rest[0]) < 0:
			return
		}
		if n < 0 {
			n = len(rest)
		}
		p.i += n
	}
}

func (p *jparser) val() (*jnode, error) {
	if p.i >= len(p.b) {
		return nil, p.errf("unexpected end of file")
	}
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > 200 {
		return nil, p.errf("nested too deeply")
	}
	switch c := p.b[p.i]; {
	case c == '{' || c == '[':
		return p.container(c)
	case c == '"':
		return p.str()
	case strings.IndexByte("-0123456789", c) >= 0:
		s := p.i
		for p.i < len(p.b) && strings.IndexByte("+-0123456789.eE", p.b[p.i]) >= 0 {
			p.i++
		}
		if lit := string(p.b[s:p.i]); json.Valid([]byte(lit)) {
			return &jnode{kind: 'n', start: s, end: p.i, lit: lit}, nil
		}
		return nil, p.errf("bad number")
	}
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(p.b[p.i:], []byte(lit)) {
			p.i += len(lit)
			return &jnode{kind: 'l', start: p.i - len(lit), end: p.i, lit: lit}, nil
		}
	}
	return nil, p.errf("unexpected character")
}

func (p *jparser) str() (*jnode, error) {
	s := p.i
	p.i++
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '\\':
			p.i += 2
			continue
		case '"':
			p.i++
			var v string
			if err := json.Unmarshal(p.b[s:p.i], &v); err != nil {
				p.i = s
				return nil, p.errf("bad string")
			}
			return &jnode{kind: 's', start: s, end: p.i, str: v}, nil
		case '\n':
			return nil, p.errf("newline in string")
		}
		p.i++
	}
	return nil, p.errf("unterminated string")
}

// container parses an object ('{') or an array ('['), allowing a
// trailing comma.
func (p *jparser) container(kind byte) (*jnode, error) {
	n := &jnode{kind: kind, start: p.i}
	closer, what := byte(']'), "array"
	if kind == '{' {
		closer, what = '}', "object"
	}
	p.i++
	for {
		p.ws()
		if p.i >= len(p.b) {
			return nil, p.errf("unterminated " + what)
		}
		if p.b[p.i] == closer {
			p.i++
			n.end = p.i
			return n, nil
		}
		if len(n.members)+len(n.elems) > 0 {
			if p.b[p.i] != ',' {
				return nil, p.errf("expected , or " + string(closer))
			}
			p.i++
			p.ws()
			if p.i < len(p.b) && p.b[p.i] == closer { // trailing comma
				continue
			}
		}
		if err := p.item(n); err != nil {
			return nil, err
		}
	}
}

// item parses the next member of object n or element of array n.
func (p *jparser) item(n *jnode) error {
	if n.kind == '[' {
		v, err := p.val()
		n.elems = append(n.elems, v)
		return err
	}
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return p.errf("expected a key")
	}
	k, err := p.str()
	if err != nil {
		return err
	}
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != ':' {
		return p.errf("expected :")
	}
	p.i++
	p.ws()
	v, err := p.val()
	n.members = append(n.members, jmember{key: k.str, keyStart: k.start, keyEnd: k.end, val: v})
	return err
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
	var sep string
	if len(items) >= 2 {
		gap := string(b[items[len(items)-2].end:last.start])
		if i := strings.IndexByte(gap, ','); i >= 0 && strings.TrimLeft(gap[i+1:], " \t\r\n") == "" {
			sep = gap[i+1:]
		}
	}
	if sep == "" {
		if ind, ok := ownLine(b, last.start); ok {
			sep = "\n" + ind
		} else if st.spaced {
			sep = " "
		}
	}
	multi := strings.Contains(sep, "\n")
	prefix := ""
	if multi {
		prefix = strings.ReplaceAll(sep[strings.LastIndexByte(sep, '\n')+1:], "\r", "")
	}
	return splice(b, last.end, last.end, ","+sep+head+render(v, prefix, st, multi))
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
