package hookconf

// Settings files (shape grouped or flat): install, uninstall and status, edited as text so everything carryover does
// not own keeps its bytes (key order, indentation, line breaks, JSONC comments). A small parser records each value's
// byte span and edits splice text there; appending an item after the last one and removing it again are exact inverses,
// which makes install → uninstall byte-identical.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/carryover/carryover/specs"
)

type format struct {
	grouped          bool
	cmdKeys          []string // fields that may hold a command
	skeleton, fields ordered  // a created file's top-level keys; one handler's fields, placeholders unfilled
	warns            []specs.HookWarning
}

// formatFor builds t's format (no layout is an error, never an empty plan).
func formatFor(t Target) (format, error) {
	l := t.Layout
	if l == nil {
		return format{}, fmt.Errorf("%s: no hook_file layout in specs/tools.toml; carryover cannot write its hooks", t.Tool)
	}
	var all ordered
	for _, fld := range slices.Concat(l.Skeleton, l.Handler) {
		k, v, err := specs.Field(fld)
		if err != nil {
			return format{}, err
		}
		all = append(all, kv{k, v})
	}
	n := len(l.Skeleton)
	return format{grouped: l.Shape == specs.ShapeGrouped, cmdKeys: l.CommandKeys, warns: l.Warnings,
		skeleton: all[:n:n], fields: all[n:]}, nil
}

// entry is what carryover appends to an event's list: one handler, in a group when grouped. A placeholder without a
// value for h (timeout 0, no matcher) leaves its field out.
func (f format) entry(h specs.Hook, cmd string) ordered {
	vals := map[any]any{specs.PhCommand: cmd}
	if h.Timeout > 0 {
		vals[specs.PhTimeout], vals[specs.PhTimeoutMs] = h.Timeout, h.Timeout*1000
	}
	if h.Matcher != "" {
		vals[specs.PhMatcher] = h.Matcher
	}
	var hd, g ordered
	for _, fl := range f.fields {
		v, ok := fl.v, true
		if _, ph := v.(specs.Placeholder); ph {
			v, ok = vals[v]
		}
		if ok {
			hd = append(hd, kv{fl.k, v})
		}
	}
	if !f.grouped {
		return hd
	}
	if h.Matcher != "" {
		g = append(g, kv{"matcher", h.Matcher})
	}
	return append(g, kv{"hooks", []any{hd}})
}

// desired is the wanted entry per event, in hook order.
func (f format) desired(cap specs.Capability, id stubID) ordered {
	var d ordered
	for _, h := range cap.Hooks() {
		d = append(d, kv{h.Native, f.entry(h, StubCommand(id.exe, id.tool, h.Native))})
	}
	return d
}

// ourItem is one carryover entry, or handler inside someone else's group (handlerIdx >= 0): arr is the event's list
// (member eventIdx of "hooks"), idx the entry's index there, handlers a grouped entry's "hooks" list.
type ourItem struct {
	event         string
	eventIdx, idx int
	arr, handlers *jnode
	handlerIdx    int
	value         any
}

// nodes are the item's handler nodes.
func (it ourItem) nodes() []*jnode {
	switch {
	case it.handlers == nil:
		return it.arr.elems[it.idx : it.idx+1]
	case it.handlerIdx < 0:
		return it.handlers.elems
	}
	return it.handlers.elems[it.handlerIdx : it.handlerIdx+1]
}

func (f format) command(n *jnode) string {
	for _, k := range f.cmdKeys {
		if _, v := n.member(k); v != nil && v.kind == 's' {
			return v.value().(string)
		}
	}
	return ""
}

// groupHandlers is the "hooks" list of a grouped entry (nil when none).
func groupHandlers(e *jnode) *jnode {
	if _, hs := e.member("hooks"); hs != nil && hs.kind == '[' {
		return hs
	}
	return nil
}

// scan finds carryover's entries in a parsed document.
func (f format) scan(root *jnode, id stubID) (hooks *jnode, items []ourItem, err error) {
	if root.kind != '{' {
		return nil, nil, errors.New("the file is not a JSON object; fix it or move it away, then run the command again")
	}
	if _, hooks = root.member("hooks"); hooks == nil {
		return nil, nil, nil
	}
	if hooks.kind != '{' {
		return nil, nil, errors.New(`"hooks" is not an object; fix it, then run the command again`)
	}
	for ei, m := range hooks.members {
		for i, e := range m.val.elems { // only a list has elems (Gemini's legacy "enabled" is no event)
			items = f.scanEntry(items, id, ourItem{event: m.key, eventIdx: ei, arr: m.val, idx: i, handlerIdx: -1}, e)
		}
	}
	return hooks, items, nil
}

// scanEntry appends carryover's items in entry e: the entry when it is ours or, grouped, when all its handlers are;
// else each handler that is.
func (f format) scanEntry(items []ourItem, id stubID, it ourItem, e *jnode) []ourItem {
	if !f.grouped {
		if id.ours(f.command(e), it.event) {
			it.value = e.value()
			items = append(items, it)
		}
		return items
	}
	if it.handlers = groupHandlers(e); it.handlers == nil {
		return items
	}
	var mine []int
	for hi, h := range it.handlers.elems {
		if id.ours(f.command(h), it.event) {
			mine = append(mine, hi)
		}
	}
	if len(mine) > 0 && len(mine) == len(it.handlers.elems) {
		it.value = e.value()
		return append(items, it)
	}
	for _, hi := range mine {
		it.handlerIdx, it.value = hi, it.handlers.elems[hi].value()
		items = append(items, it)
	}
	return items
}

// matches reports whether the document's carryover entries are exactly want (whole entries, one per event).
func matches(items []ourItem, want ordered) bool {
	got := map[string]any{}
	for _, it := range items {
		if it.handlerIdx >= 0 {
			return false
		}
		got[it.event] = it.value
	}
	return len(got) == len(items) && reflect.DeepEqual(got, plain(want))
}

// removeOne deletes one carryover item; an emptied event list goes, then an emptied "hooks" object, unless the file
// before install (bk, its backup bkb) had that list or object empty: then it is emptied back to the backup's own bytes
// ("[]", "[ ]", "{\r\n }").
func removeOne(b []byte, root, hooks *jnode, it ourItem, bk *jnode, bkb []byte) []byte {
	switch {
	case it.handlerIdx >= 0:
		return removeItem(b, it.handlers, it.handlerIdx)
	case len(it.arr.elems) > 1:
		return removeItem(b, it.arr, it.idx)
	case emptyAt(bk, bkb, "hooks", it.event) != "":
		return splice(b, it.arr.start, it.arr.end, emptyAt(bk, bkb, "hooks", it.event))
	case len(hooks.members) > 1:
		return removeItem(b, hooks, it.eventIdx)
	case emptyAt(bk, bkb, "hooks") != "":
		return splice(b, hooks.start, hooks.end, emptyAt(bk, bkb, "hooks"))
	}
	hi, _ := root.member("hooks")
	return removeItem(b, root, hi)
}

// emptyAt is the bytes (of b, parsed as n) of the empty list or object at path (member keys from the root); "" when
// there is none.
func emptyAt(n *jnode, b []byte, path ...string) string {
	for _, k := range path {
		_, n = n.member(k)
	}
	if n == nil || n.kind != '{' && n.kind != '[' || len(n.members)+len(n.elems) > 0 {
		return ""
	}
	return string(b[n.start:n.end])
}

// strip removes every carryover item, re-parsing after each removal; bk is the parsed backup bkb (nil: none).
func (f format) strip(b []byte, id stubID, bk *jnode, bkb []byte) ([]byte, bool, error) {
	removed := false
	for range 10000 {
		root, err := parseJSON(b)
		if err != nil {
			return nil, false, err
		}
		hooks, items, err := f.scan(root, id)
		if err != nil || len(items) == 0 {
			return b, removed, err
		}
		b = removeOne(b, root, hooks, items[len(items)-1], bk, bkb)
		removed = true
	}
	return nil, false, errors.New("too many carryover entries")
}

// install is the file (before; nil when missing) holding exactly cap's stubs: unchanged when it does already, else with
// carryover's entries stripped and the wanted ones appended in the file's own style. The result is re-parsed and
// checked before it is returned.
func (f format) install(before []byte, cap specs.Capability, id stubID) ([]byte, error) {
	want := f.desired(cap, id)
	if blank(before) {
		return []byte(render(append(slices.Clone(f.skeleton), kv{"hooks", lists(want)}), "", style{unit: "  ", keySep: ": "}, true) + "\n"), nil
	}
	root, err := parseJSON(before)
	if err != nil {
		return nil, fmt.Errorf("%w; fix it or move it away, then run the command again", err)
	}
	st := detectStyle(before, root)
	if _, items, err := f.scan(root, id); err != nil || matches(items, want) {
		return before, err
	}
	b, _, err := f.strip(before, id, nil, nil)
	for i, done := 0, false; i < len(want) && !done && err == nil; i++ {
		b, done, err = addDesired(b, want, i, st)
	}
	if err != nil {
		return nil, err
	}
	if root, err = parseJSON(b); err != nil {
		return nil, fmt.Errorf("internal error: edited file does not parse: %w", err)
	}
	if _, items, err := f.scan(root, id); err != nil || !matches(items, want) {
		return nil, errors.New("internal error: edited file does not hold the expected hooks")
	}
	return b, nil
}

// lists is a "hooks" object of the wanted entries.
func lists(want ordered) ordered {
	hooks := ordered{}
	for _, d := range want {
		hooks = append(hooks, kv{d.k, []any{d.v}})
	}
	return hooks
}

// addDesired adds want[i] to b in its style; done when b had no "hooks" object, now added with all of want[i:].
func addDesired(b []byte, want ordered, i int, st style) (_ []byte, done bool, _ error) {
	d := want[i]
	root, err := parseJSON(b)
	if err != nil {
		return nil, false, fmt.Errorf("internal error re-reading the edited file: %w", err)
	}
	rootMulti := len(root.members) == 0 || strings.Contains(string(b[root.start:root.end]), "\n")
	_, hooks := root.member("hooks") // an object: install's scan refused any other "hooks", and edits keep it one
	if hooks == nil {
		return appendItem(b, root, "hooks", lists(want[i:]), st, rootMulti), true, nil
	}
	_, list := hooks.member(d.k)
	switch {
	case list == nil:
		return appendItem(b, hooks, d.k, []any{d.v}, st, rootMulti), false, nil
	case list.kind != '[':
		return nil, false, fmt.Errorf("hooks.%s is not a list; fix it, then run the command again", d.k)
	}
	return appendItem(b, list, "", d.v, st, rootMulti), false, nil
}

// warnings are the layout's warnings about the settings file b: Set when the key holds a value (Is: that JSON value),
// Unset when it is absent.
// warnings are the settings file's warnings that hold; off, those of them that turn the agent's hooks off.
func (f format) warnings(b []byte) (out, off []string) {
	root, err := parseJSON(b)
	if err != nil || len(f.warns) == 0 {
		return nil, nil
	}
	doc, _ := root.value().(map[string]any)
	for _, w := range f.warns {
		if msg := warning(w, doc); msg != "" {
			out = append(out, msg)
			if w.Off {
				off = append(off, msg)
			}
		}
	}
	return out, off
}

func warning(w specs.HookWarning, doc map[string]any) string {
	v, set := LookupPath(doc, strings.Split(w.Key, "."))
	js, _ := marshal(v)
	switch {
	case set && (w.Is == "" || string(js) == w.Is):
		return strings.ReplaceAll(w.Set, "{value}", fmt.Sprint(v))
	case !set:
		return w.Unset
	}
	return ""
}

// uninstall is before without carryover's entries, or del when nothing else is left of a file install created. When
// nothing but carryover changed the file since the backup (nil: none), the backup's exact bytes come back (key order,
// spacing, an empty "hooks": {}); so does a blank original (install wrote the skeleton around its hooks).
func (f format) uninstall(before []byte, id stubID, backup []byte) (after []byte, del bool, err error) {
	after = before
	if !blank(before) {
		var removed bool
		bk, _ := parseJSON(backup) // nil when none, or not JSON; emptyAt finds nothing in a value but an object
		if after, removed, err = f.strip(before, id, bk, backup); err != nil {
			return nil, false, fmt.Errorf("%w; fix it, then run the command again", err)
		}
		if !removed {
			after = before
		} else if backup == nil && f.isSkeleton(after) {
			return nil, true, nil
		}
	}
	if backup != nil && (sameJSON(after, backup) || blank(backup) && f.isSkeleton(after)) {
		after = backup
	}
	return after, false, nil
}

// isSkeleton reports whether b holds nothing but the top-level keys of a file carryover creates (an empty "hooks"
// object counts as absent).
func (f format) isSkeleton(b []byte) bool {
	var v map[string]any
	if json.Unmarshal(blankJSONC(b), &v) != nil {
		return false
	}
	if h, isMap := v["hooks"].(map[string]any); isMap && len(h) == 0 {
		delete(v, "hooks")
	}
	return reflect.DeepEqual(v, plain(f.skeleton))
}

// sameJSON reports whether a and b are the same JSON value (false when either is not JSON). An empty list or object and
// a missing key count as the same only where carryover adds and removes them: the "hooks" object and the event lists in
// it ("Stop": [], "Notification": {}).
func sameJSON(a, b []byte) bool {
	var x, y map[string]any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(dropEmptyHooks(x), dropEmptyHooks(y))
}

// dropEmptyHooks deletes m's empty event lists and objects, then an empty "hooks" object.
func dropEmptyHooks(m map[string]any) map[string]any {
	h, ok := m["hooks"].(map[string]any)
	for k, v := range h {
		a, isList := v.([]any)
		o, isObj := v.(map[string]any)
		if isList && len(a) == 0 || isObj && len(o) == 0 {
			delete(h, k)
		}
	}
	if ok && len(h) == 0 {
		delete(m, "hooks")
	}
	return m
}

func hookNames(cap specs.Capability) []string {
	var out []string
	for _, h := range cap.Hooks() {
		out = append(out, h.Native)
	}
	return out
}

// State of carryover's hooks in one agent's config.
type State string

const (
	StatePresent State = "present"  // every wanted stub is installed exactly
	StateMissing State = "missing"  // no carryover stub (or no file)
	StateDrifted State = "drifted"  // stubs differ (binary path, events, timeouts, trust)
	StateNoHooks State = "no hooks" // the agent (Aider) or this version has no hooks
)

// Status describes one agent's hook configuration: Detail says what is wrong, Hooks the native events carrying
// carryover stubs now.
type Status struct {
	Tool, Path string
	State      State
	Detail     string
	Hooks      []string
	Warnings   []string
	Off        []string // the Warnings that turn the agent's hooks off
}

// Check reports the state of cap's hooks for t.
func Check(t Target, cap specs.Capability, exe string, files FS) (Status, error) {
	st := Status{Tool: t.Tool, Path: t.Where(), State: StateNoHooks}
	if t.Path == "" || len(cap.Hooks()) == 0 {
		return st, nil
	}
	o, err := ownerOf(t, exe, files)
	if err == nil && t.Layout.Whole() {
		return o.checkWhole(cap, files)
	}
	f, root, b, err := parseTarget(t, files, err)
	if errors.Is(err, errJSONSyntax) {
		err = fmt.Errorf("%s: %w", t.Path, err)
	}
	if err != nil || root == nil { // the caller reports an error as drift
		st.State, st.Detail = StateMissing, "file does not exist; run `carryover install`"
		return st, err
	}
	_, items, err := f.scan(root, o.id())
	if err != nil {
		return st, fmt.Errorf("%s: %w", t.Path, err)
	}
	st.Hooks = eventsOf(items)
	st.Warnings, st.Off = f.warnings(b)
	st.State, st.Detail, err = f.judge(t, cap, exe, b, o.id(), items, files)
	return st, err
}

// judge is the state of carryover's items in the file b against what install writes, and of Codex's trust entries for
// them.
func (f format) judge(t Target, cap specs.Capability, exe string, b []byte, id stubID, items []ourItem, files FS) (State, string, error) {
	if len(items) == 0 {
		return StateMissing, "no carryover hooks; run `carryover install`", nil
	}
	if !matches(items, f.desired(cap, id)) {
		return StateDrifted, drift(items, hookNames(cap), exe) + "; run `carryover refresh`", nil
	}
	if t.TrustPath != "" && t.Layout.Trust != nil {
		if d, err := trustDrift(t, b, id, files); err != nil || d != "" {
			return StateDrifted, d + "; run `carryover refresh`", err
		}
	}
	return StatePresent, "", nil
}

// parseTarget is t's format and its parsed settings file (root nil when the file is missing or blank), after an earlier
// error err.
func parseTarget(t Target, files FS, err error) (f format, root *jnode, b []byte, _ error) {
	if err == nil {
		f, err = formatFor(t)
	}
	if err == nil {
		b, _, err = read(files, t.Path)
	}
	if err != nil || blank(b) {
		return f, nil, b, err
	}
	root, err = parseJSON(b)
	return f, root, b, err
}

// eventsOf lists the native events holding carryover entries.
func eventsOf(items []ourItem) []string {
	var out []string
	for _, it := range items {
		if !slices.Contains(out, it.event) {
			out = append(out, it.event)
		}
	}
	return out
}

func drift(items []ourItem, wantEv []string, exe string) string {
	got := eventsOf(items)
	missing := slices.DeleteFunc(slices.Clone(wantEv), func(e string) bool { return slices.Contains(got, e) })
	extra := slices.DeleteFunc(slices.Clone(got), func(e string) bool { return slices.Contains(wantEv, e) })
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "missing events "+strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		parts = append(parts, "extra events "+strings.Join(extra, ", "))
	}
	if slices.ContainsFunc(items, func(it ourItem) bool { return !strings.Contains(fmt.Sprint(it.value), quote(exe)+" snapshot") }) {
		parts = append(parts, "stubs do not run "+exe)
	}
	if len(parts) == 0 {
		parts = append(parts, "stubs differ from this version's hooks (timeouts, matchers or duplicates)")
	}
	return strings.Join(parts, "; ")
}

// Stub is one carryover hook command: the native event the agent runs it on, and the command exactly as written in the
// file.
type Stub struct{ Event, Command string }

// Stubs lists carryover's stubs in t's hook config, in file order, whatever absolute binary they run (`doctor` runs
// them to find a moved binary). A file the agent could not parse is an error.
func Stubs(t Target, files FS) ([]Stub, error) {
	if t.Path == "" || t.Layout == nil {
		return nil, nil
	}
	o, err := ownerOf(t, "", files)
	if err == nil && t.Layout.Whole() {
		return o.wholeStubs(files)
	}
	f, root, _, err := parseTarget(t, files, err)
	if err != nil || root == nil {
		return nil, err
	}
	_, items, err := f.scan(root, stubID{tool: t.Tool, any: true})
	var out []Stub
	for _, it := range items {
		for _, n := range it.nodes() {
			out = append(out, Stub{Event: it.event, Command: f.command(n)})
		}
	}
	return out, err
}

// jnode is a parsed JSON value with its byte span [start, end).
type jnode struct {
	kind       byte // '{' object, '[' array, 's' string, 'n' number, 'l' true/false/null
	start, end int
	members    []jmember
	elems      []*jnode
	src        []byte // the blanked document the spans index
}

type jmember struct {
	key              string
	keyStart, keyEnd int
	val              *jnode
}

// member is the last member named key (the last duplicate wins, as in most parsers); nil for none, or when n is nil or
// no object.
func (n *jnode) member(key string) (int, *jnode) {
	idx, val := -1, (*jnode)(nil)
	for i := 0; n != nil && i < len(n.members); i++ {
		if n.members[i].key == key {
			idx, val = i, n.members[i].val
		}
	}
	return idx, val
}

// value is the node as the plain values encoding/json produces (FuzzParseJSON holds it to that).
func (n *jnode) value() (v any) {
	json.Unmarshal(n.src[n.start:n.end], &v)
	return v
}

var errJSONSyntax = errors.New("not valid JSON")

// parseJSON parses b, allowing a BOM, // and /* */ comments and trailing commas (JSONC): they are blanked in a copy of
// the same length that encoding/json's tokenizer reads, so every span indexes b.
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
	n := &jnode{start: p.next(), src: p.b}
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
		n.kind = 's'
	case json.Number:
		n.kind = 'n'
	default: // bool or nil
		n.kind = 'l'
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

// blankJSONC is b with its BOM, comments and trailing commas (after an item, before a closer) as spaces; line breaks
// stay, for error lines.
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

// spaceOut blanks the comment rest starts with, but its line breaks, and returns its length (an unterminated one runs
// to the end).
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

// style is a document's formatting: one indent level, the text between a key and its value, and whether single-line
// containers use ", " and ": ".
type style struct {
	unit, keySep string
	spaced       bool
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
		st.keySep, st.spaced = sep, strings.HasSuffix(sep, " ")
	}
	return st
}

// lineIndent is the leading whitespace of the line holding pos.
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

// render formats v (plain values or ordered objects) in the document's style, as encoding/json would but with its
// separators; multi-line output continues on lines starting with prefix.
func render(v any, prefix string, st style, multi bool) string {
	keySep, sep, inner := ":", ",", prefix+st.unit
	if multi {
		keySep, sep = st.keySep, ",\n"+inner
	} else if st.spaced {
		keySep, sep = ": ", ", "
	}
	var items []string
	open, end := "[", "]"
	switch x := v.(type) {
	case ordered:
		open, end = "{", "}"
		for _, p := range x {
			k, _ := json.Marshal(p.k)
			items = append(items, string(k)+keySep+render(p.v, inner, st, multi))
		}
	case []any:
		for _, e := range x {
			items = append(items, render(e, inner, st, multi))
		}
	default:
		b, _ := marshal(v)
		return string(b)
	}
	if len(items) == 0 || !multi {
		return open + strings.Join(items, sep) + end
	}
	return open + "\n" + inner + strings.Join(items, sep) + "\n" + prefix + end
}

// marshal is v as compact JSON without HTML escaping (paths and commands stay readable) and without the final newline.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), err
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
	}
	return splice(b, items[0].start, items[1].start, "")
}

// appendItem adds v, rendered, after the last item of container n (key "" for an array). rootMulti: an empty container
// opens on new lines.
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

// itemSep is what follows the comma between the last two items (blanks only), else a line break to the last item's
// indent, or a space.
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

// plain converts carryover's own values to the shapes value() returns: it decodes them as encoding/json does.
func plain(v any) (out any) {
	json.Unmarshal([]byte(render(v, "", style{}, false)), &out)
	return out
}
