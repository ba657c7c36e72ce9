package hookconf

// Settings files (hook_file shape grouped or flat): install, uninstall, status.

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/carryover/carryover/specs"
)

type format struct {
	grouped  bool
	cmdKeys  []string // fields that may hold a command
	skeleton ordered  // top-level keys of a file carryover creates
	fields   ordered  // one handler's fields, placeholders unfilled
	warns    []specs.HookWarning
}

// formatFor builds t's format from its layout (none is an error, never an
// empty plan).
func formatFor(t Target) (format, error) {
	l := t.Layout
	if l == nil {
		return format{}, fmt.Errorf("%s: no hook_file layout in specs/tools.toml; carryover cannot write its hooks", t.Tool)
	}
	f := format{grouped: l.Shape == specs.ShapeGrouped, cmdKeys: l.CommandKeys, warns: l.Warnings}
	for i, fields := range [][]string{l.Skeleton, l.Handler} {
		for _, fld := range fields {
			k, v, err := specs.Field(fld)
			if err != nil {
				return format{}, err
			}
			if i == 0 {
				f.skeleton = append(f.skeleton, kv{k, v})
			} else {
				f.fields = append(f.fields, kv{k, v})
			}
		}
	}
	return f, nil
}

// entry is what carryover appends to an event's list: one handler, in a
// group for a grouped format. A placeholder without a value for h (timeout
// 0, no matcher) leaves its field out.
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

type desired struct {
	event string
	entry ordered
}

func (f format) desired(cap specs.Capability, id stubID) []desired {
	var d []desired
	for _, h := range cap.Hooks() {
		d = append(d, desired{h.Native, f.entry(h, StubCommand(id.exe, id.tool, h.Native))})
	}
	return d
}

// ourItem is one carryover entry (or handler inside someone else's group).
type ourItem struct {
	event      string
	eventIdx   int    // member index in hooks
	arr        *jnode // the event's list
	idx        int    // entry index in arr
	handlers   *jnode // grouped: the entry's hooks list
	handlerIdx int    // -1: the whole entry is carryover's
	value      any
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
	if n == nil || n.kind != '{' {
		return ""
	}
	for _, k := range f.cmdKeys {
		if _, v := n.member(k); v != nil && v.kind == 's' {
			return v.str
		}
	}
	return ""
}

// groupHandlers is the "hooks" list of a grouped entry (nil when none).
func groupHandlers(e *jnode) *jnode {
	if e.kind != '{' {
		return nil
	}
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

// scanEntry appends carryover's items in entry e: the entry when it is
// ours or, grouped, when all its handlers are; else each handler that is.
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

// matches reports whether the document's carryover entries are exactly want.
func matches(items []ourItem, want []desired) bool {
	if len(items) != len(want) {
		return false
	}
	got := map[string]any{}
	for _, it := range items {
		if _, dup := got[it.event]; dup || it.handlerIdx >= 0 {
			return false
		}
		got[it.event] = it.value
	}
	for _, d := range want {
		if g, ok := got[d.event]; !ok || !reflect.DeepEqual(g, plain(d.entry)) {
			return false
		}
	}
	return true
}

// removeOne deletes one carryover item; an emptied event list goes, and an
// emptied "hooks" object goes with it, unless the file before install
// (bk, its backup) had that list or object, empty: then it is emptied back
// to the backup's own bytes ("[]", "[ ]", "{\r\n  }"), so uninstall
// gives back what install was given.
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

// emptyAt returns the bytes (of b, parsed as n) of the empty list or
// object at path (member keys from the root); "" when there is none.
func emptyAt(n *jnode, b []byte, path ...string) string {
	for _, k := range path {
		if n == nil || n.kind != '{' {
			return ""
		}
		_, n = n.member(k)
	}
	if n == nil || n.kind != '{' && n.kind != '[' || len(n.members)+len(n.elems) > 0 {
		return ""
	}
	return string(b[n.start:n.end])
}

// strip removes every carryover item, re-parsing after each removal; bk
// is the parsed backup bkb (nil: none).
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

// install is the file (before; nil when missing) holding exactly cap's
// stubs: unchanged when it does already, else with carryover's entries
// stripped and the wanted ones appended in the file's own style.
func (f format) install(before []byte, cap specs.Capability, id stubID) ([]byte, error) {
	want := f.desired(cap, id)
	if blank(before) {
		hooks := desiredLists(want)
		return []byte(render(append(append(ordered{}, f.skeleton...), kv{"hooks", hooks}), "", style{unit: "  ", keySep: ": "}, true) + "\n"), nil
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
	return b, f.verify(b, want, id)
}

// verify checks that the edited file b parses and holds exactly want.
func (f format) verify(b []byte, want []desired, id stubID) error {
	root, err := parseJSON(b)
	if err != nil {
		return fmt.Errorf("internal error: edited file does not parse: %w", err)
	}
	if _, items, err := f.scan(root, id); err != nil || !matches(items, want) {
		return errors.New("internal error: edited file does not hold the expected hooks")
	}
	return nil
}

// desiredLists is a "hooks" object of the wanted entries.
func desiredLists(want []desired) ordered {
	hooks := ordered{}
	for _, d := range want {
		hooks = append(hooks, kv{d.event, []any{d.entry}})
	}
	return hooks
}

// addDesired adds want[i] to the document b in its style; done when b had
// no "hooks" object, now added with all of want[i:].
func addDesired(b []byte, want []desired, i int, st style) (_ []byte, done bool, _ error) {
	d := want[i]
	root, err := parseJSON(b)
	if err != nil {
		return nil, false, fmt.Errorf("internal error re-reading the edited file: %w", err)
	}
	rootMulti := len(root.members) == 0 || strings.Contains(string(b[root.start:root.end]), "\n")
	_, hooks := root.member("hooks")
	switch {
	case hooks == nil:
		return appendItem(b, root, "hooks", desiredLists(want[i:]), st, rootMulti), true, nil
	case hooks.kind != '{':
		return nil, false, errors.New(`"hooks" is not an object; fix it, then run the command again`)
	}
	_, list := hooks.member(d.event)
	switch {
	case list == nil:
		return appendItem(b, hooks, d.event, []any{d.entry}, st, rootMulti), false, nil
	case list.kind != '[':
		return nil, false, fmt.Errorf("hooks.%s is not a list; fix it, then run the command again", d.event)
	}
	return appendItem(b, list, "", d.entry, st, rootMulti), false, nil
}

// warnings are the layout's warnings about the settings file b.
func (f format) warnings(b []byte) []string {
	root, err := parseJSON(b)
	if err != nil || len(f.warns) == 0 {
		return nil
	}
	doc, _ := root.value().(map[string]any)
	var out []string
	for _, w := range f.warns {
		if msg := warning(w, doc); msg != "" {
			out = append(out, msg)
		}
	}
	return out
}

// warning is what w says about the settings doc ("" for nothing).
func warning(w specs.HookWarning, doc map[string]any) string {
	v, set := LookupPath(doc, strings.Split(w.Key, "."))
	js, _ := marshal(v, "", "")
	switch {
	case set && (w.Is == "" || string(js) == w.Is):
		return strings.ReplaceAll(w.Set, "{value}", fmt.Sprint(v))
	case !set:
		return w.Unset
	}
	return ""
}

// uninstall is before without carryover's entries, or del when nothing
// else is left of a file install created. When nothing but carryover
// changed the file since the backup (nil: none), the backup's exact bytes
// come back (key order, spacing, an empty "hooks": {}); so does a blank
// original (install wrote the skeleton around its hooks).
func (f format) uninstall(before []byte, id stubID, backup []byte) (after []byte, del bool, err error) {
	after = before
	if !blank(before) {
		var removed bool
		if after, removed, err = f.strip(before, id, objectOf(backup), backup); err != nil {
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

// objectOf is b parsed when it holds a JSON object (nil otherwise).
func objectOf(b []byte) *jnode {
	if n, _ := parseJSON(b); n != nil && n.kind == '{' {
		return n
	}
	return nil
}

// isSkeleton reports whether b holds nothing but the top-level keys of a
// file carryover creates (an empty "hooks" object counts as absent).
func (f format) isSkeleton(b []byte) bool {
	root, err := parseJSON(b)
	if err != nil {
		return false
	}
	v, ok := root.value().(map[string]any)
	if h, isMap := v["hooks"].(map[string]any); isMap && len(h) == 0 {
		delete(v, "hooks")
	}
	return ok && reflect.DeepEqual(v, plain(append(ordered{}, f.skeleton...)))
}

// sameJSON reports whether a and b are the same JSON value (false when
// either is not JSON). An empty list or object and a missing key count as
// the same only where carryover adds and removes them: the "hooks" object
// and the event lists in it ("Stop": [], "Notification": {}).
func sameJSON(a, b []byte) bool {
	var x, y map[string]any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(dropEmptyHooks(x), dropEmptyHooks(y))
}

// dropEmptyHooks deletes m's empty event lists and objects, then an empty
// "hooks" object.
func dropEmptyHooks(m map[string]any) map[string]any {
	h, ok := m["hooks"].(map[string]any)
	for k, v := range h {
		if a, isList := v.([]any); isList && len(a) == 0 {
			delete(h, k)
		}
		if o, isObj := v.(map[string]any); isObj && len(o) == 0 {
			delete(h, k)
		}
	}
	if ok && len(h) == 0 {
		delete(m, "hooks")
	}
	return m
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

// Status describes one agent's hook configuration.
type Status struct {
	Tool, Path string
	State      State
	Detail     string   // what is wrong, in words
	Hooks      []string // native events that carry carryover stubs now
	Warnings   []string
}

// Check reports the state of cap's hooks for t.
func Check(t Target, cap specs.Capability, exe string, files FS) (Status, error) {
	st := Status{Tool: t.Tool, Path: t.Path}
	if t.Path == "" || len(cap.Hooks()) == 0 {
		st.State = StateNoHooks
		return st, nil
	}
	if t.Layout.Whole() {
		return checkWhole(t, cap, exe, files)
	}
	f, root, b, err := parseTarget(t, files)
	if errors.Is(err, errJSONSyntax) {
		err = fmt.Errorf("%s: %w", t.Path, err)
	}
	if err != nil {
		return st, err
	}
	if root == nil {
		st.State, st.Detail = StateMissing, "file does not exist; run `carryover install`"
		return st, nil
	}
	id, err := identify(t, exe, files)
	if err != nil {
		return st, err
	}
	_, items, err := f.scan(root, id)
	if err != nil {
		return st, fmt.Errorf("%s: %w", t.Path, err)
	}
	st.Hooks, st.Warnings = eventsOf(items), f.warnings(b)
	st.State, st.Detail, err = f.judge(t, cap, exe, b, id, items, files)
	return st, err
}

// parseTarget is t's format and its parsed settings file (root nil when
// the file is missing or blank).
func parseTarget(t Target, files FS) (f format, root *jnode, b []byte, err error) {
	if f, err = formatFor(t); err == nil {
		b, _, err = read(files, t.Path)
	}
	if err != nil || blank(b) {
		return f, nil, b, err
	}
	root, err = parseJSON(b)
	return f, root, b, err
}

// judge is the state of carryover's items in the file b against what
// install writes, and of Codex's trust entries for them.
func (f format) judge(t Target, cap specs.Capability, exe string, b []byte, id stubID, items []ourItem, files FS) (State, string, error) {
	if len(items) == 0 {
		return StateMissing, "no carryover hooks; run `carryover install`", nil
	}
	if !matches(items, f.desired(cap, id)) {
		return StateDrifted, drift(items, hookNames(cap), exe) + "; run `carryover refresh`", nil
	}
	if t.TrustPath == "" || t.Layout.Trust == nil {
		return StatePresent, "", nil
	}
	if d, err := trustDrift(t, b, id, files); err != nil || d != "" {
		return StateDrifted, d + "; run `carryover refresh`", err
	}
	return StatePresent, "", nil
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

// Stub is one carryover hook command as the agent's config holds it.
type Stub struct {
	Event   string // the native event the agent runs it on
	Command string // exactly as written in the file
}

// Stubs lists carryover's stubs in t's hook config, in file order, whatever
// absolute binary they run (`doctor` runs them to find a moved binary). A
// file the agent could not parse is an error.
func Stubs(t Target, files FS) ([]Stub, error) {
	if t.Path == "" || t.Layout == nil {
		return nil, nil
	}
	if t.Layout.Whole() {
		return wholeStubs(t, files)
	}
	f, root, _, err := parseTarget(t, files)
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
