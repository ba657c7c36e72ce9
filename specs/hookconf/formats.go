package hookconf

// A format is a hook file layout from specs/tools.toml (specs.HookFile:
// grouped or flat) plus the few per-agent checks that are code, not layout
// (extras below).

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/carryover/carryover/specs"
)

type format struct {
	grouped  bool
	cmdKeys  []string                               // fields that may hold a command
	skeleton ordered                                // top-level keys of a file carryover creates
	handler  func(h specs.Hook, cmd string) ordered // one handler (flat: one entry)
	warn     func(doc map[string]any) []string      // optional checks on the final document
	trust    bool                                   // Codex: trust hashes in config.toml
}

// extras are per-agent checks and second files: code, keyed by agent name.
var extras = map[string]struct {
	warn  func(doc map[string]any) []string
	trust bool
}{
	"claude": {warn: claudeWarnings},
	"codex":  {trust: true},
	"gemini": {warn: geminiWarnings},
}

// formatFor builds t's format from its layout. An agent with a config file
// and no layout is an error, never an empty plan (specs.Load rejects such a
// table too).
func formatFor(t Target) (format, error) {
	l := t.Layout
	if l == nil {
		return format{}, fmt.Errorf("%s: no hook_file layout in specs/tools.toml; carryover cannot write its hooks", t.Tool)
	}
	skeleton, err := layoutFields(l.Skeleton)
	fields, herr := layoutFields(l.Handler)
	if err := cmp.Or(err, herr); err != nil {
		return format{}, err
	}
	f := format{grouped: l.Shape == specs.ShapeGrouped, cmdKeys: l.CommandKeys, skeleton: skeleton}
	f.handler = func(h specs.Hook, cmd string) ordered {
		var o ordered
		for _, fl := range fields {
			v := fl.v
			switch v {
			case specs.PhCommand:
				v = cmd
			case specs.PhTimeout, specs.PhTimeoutMs:
				if h.Timeout <= 0 {
					continue
				}
				v = h.Timeout
				if fl.v == specs.PhTimeoutMs {
					v = h.Timeout * 1000
				}
			case specs.PhMatcher:
				if h.Matcher == "" {
					continue
				}
				v = h.Matcher
			}
			o = append(o, kv{fl.k, v})
		}
		return o
	}
	x := extras[t.Tool]
	f.warn, f.trust = x.warn, x.trust
	return f, nil
}

// layoutFields parses a layout's "key=value" fields (specs.Field).
func layoutFields(fields []string) (ordered, error) {
	var o ordered
	for _, fld := range fields {
		k, v, err := specs.Field(fld)
		if err != nil {
			return nil, err
		}
		o = append(o, kv{k, v})
	}
	return o, nil
}

// load is t's format and its hook file (exists false when it is missing).
func load(t Target, files FS) (format, []byte, bool, error) {
	f, err := formatFor(t)
	if err != nil {
		return f, nil, false, err
	}
	b, exists, err := read(files, t.Path)
	return f, b, exists, err
}

func claudeWarnings(doc map[string]any) []string {
	if v, ok := doc["cleanupPeriodDays"]; ok {
		return []string{fmt.Sprintf("cleanupPeriodDays is %v in Claude Code settings: Claude Code deletes older transcripts; carryover's ledger keeps only what it has already read", v)}
	}
	return []string{"Claude Code deletes transcripts older than 30 days by default (cleanupPeriodDays); carryover's ledger keeps what it reads from now on — raise cleanupPeriodDays to keep the originals"}
}

func geminiWarnings(doc map[string]any) []string {
	if hc, ok := doc["hooksConfig"].(map[string]any); ok && hc["enabled"] == false {
		return []string{"hooksConfig.enabled is false in Gemini CLI settings: no hook runs until it is true"}
	}
	return nil
}

// entry is what carryover appends to an event's list.
func (f format) entry(h specs.Hook, cmd string) ordered {
	hd := f.handler(h, cmd)
	if !f.grouped {
		return hd
	}
	var g ordered
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

// scan finds carryover's entries in a parsed document.
func (f format) scan(root *jnode, id stubID) (hooks *jnode, items []ourItem, err error) {
	if root.kind != '{' {
		return nil, nil, errors.New("the file is not a JSON object; fix it or move it away, then run the command again")
	}
	_, hooks = root.member("hooks")
	if hooks == nil {
		return nil, nil, nil
	}
	if hooks.kind != '{' {
		return nil, nil, errors.New(`"hooks" is not an object; fix it, then run the command again`)
	}
	for ei, m := range hooks.members {
		if m.val.kind != '[' {
			continue // not an event list (e.g. Gemini's legacy "enabled")
		}
		for i, e := range m.val.elems {
			items = f.scanEntry(items, id, m.key, ei, m.val, i, e)
		}
	}
	return hooks, items, nil
}

// scanEntry appends carryover's items in entry i (e) of the event's list:
// the entry when it is ours or, grouped, when all its handlers are; else
// each handler that is.
func (f format) scanEntry(items []ourItem, id stubID, event string, ei int, list *jnode, i int, e *jnode) []ourItem {
	if !f.grouped {
		if id.ours(f.command(e), event) {
			items = append(items, ourItem{event, ei, list, i, nil, -1, e.value()})
		}
		return items
	}
	if e.kind != '{' {
		return items
	}
	_, hs := e.member("hooks")
	if hs == nil || hs.kind != '[' {
		return items
	}
	var mine []int
	for hi, h := range hs.elems {
		if id.ours(f.command(h), event) {
			mine = append(mine, hi)
		}
	}
	if len(mine) > 0 && len(mine) == len(hs.elems) {
		return append(items, ourItem{event, ei, list, i, hs, -1, e.value()})
	}
	for _, hi := range mine {
		items = append(items, ourItem{event, ei, list, i, hs, hi, hs.elems[hi].value()})
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
		if it.handlerIdx >= 0 {
			return false
		}
		if _, dup := got[it.event]; dup {
			return false
		}
		got[it.event] = it.value
	}
	for _, d := range want {
		g, ok := got[d.event]
		if !ok || !reflect.DeepEqual(g, plain(d.entry)) {
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
func removeOne(b []byte, root, hooks *jnode, it ourItem, bk *backupDoc) []byte {
	switch {
	case it.handlerIdx >= 0:
		return removeItem(b, it.handlers, it.handlerIdx)
	case len(it.arr.elems) > 1:
		return removeItem(b, it.arr, it.idx)
	case bk.emptyAt("hooks", it.event) != "":
		return splice(b, it.arr.start, it.arr.end, bk.emptyAt("hooks", it.event))
	case len(hooks.members) > 1:
		return removeItem(b, hooks, it.eventIdx)
	case bk.emptyAt("hooks") != "":
		return splice(b, hooks.start, hooks.end, bk.emptyAt("hooks"))
	default:
		hi, _ := root.member("hooks")
		return removeItem(b, root, hi)
	}
}

// backupDoc is the parsed backup install took (nil: none).
type backupDoc struct {
	b    []byte
	root *jnode
}

func parseBackup(b []byte, ok bool) *backupDoc {
	if !ok {
		return nil
	}
	root, err := parseJSON(b)
	if err != nil || root == nil || root.kind != '{' {
		return nil
	}
	return &backupDoc{b, root}
}

// emptyAt returns the backup's bytes of the empty list or object at path
// (member keys from the root), or "" when the backup has none there.
func (d *backupDoc) emptyAt(path ...string) string {
	if d == nil {
		return ""
	}
	n := d.root
	for _, k := range path {
		if n == nil || n.kind != '{' {
			return ""
		}
		_, n = n.member(k)
	}
	if n == nil || n.kind != '{' && n.kind != '[' || len(n.members)+len(n.elems) > 0 {
		return ""
	}
	return string(d.b[n.start:n.end])
}

// strip removes every carryover item, re-parsing after each removal.
func (f format) strip(b []byte, id stubID, bk *backupDoc) ([]byte, bool, error) {
	removed := false
	for range 10000 {
		root, err := parseJSON(b)
		if err != nil {
			return nil, false, err
		}
		hooks, items, err := f.scan(root, id)
		if err != nil {
			return nil, false, err
		}
		if len(items) == 0 {
			return b, removed, nil
		}
		b = removeOne(b, root, hooks, items[len(items)-1], bk)
		removed = true
	}
	return nil, false, errors.New("too many carryover entries")
}

func blank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

func (f format) install(before []byte, exists bool, cap specs.Capability, id stubID) ([]byte, []string, []string, error) {
	want, events := f.desired(cap, id), hookNames(cap)
	if !exists || blank(before) {
		out := f.fresh(want)
		return out, events, f.warnings(out), nil
	}
	root, err := parseJSON(before)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w; fix it or move it away, then run the command again", err)
	}
	st := detectStyle(before, root)
	if _, items, err := f.scan(root, id); err != nil {
		return nil, nil, nil, err
	} else if matches(items, want) {
		return before, events, f.warnings(before), nil
	}
	b, _, err := f.strip(before, id, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	for i, done := 0, false; i < len(want) && !done; i++ {
		if b, done, err = addDesired(b, want, i, st); err != nil {
			return nil, nil, nil, err
		}
	}
	if err := f.holds(b, id, want); err != nil {
		return nil, nil, nil, err
	}
	return b, events, f.warnings(b), nil
}

// fresh is a new file holding the skeleton and the wanted entries.
func (f format) fresh(want []desired) []byte {
	top := append(ordered{}, f.skeleton...)
	top = append(top, kv{"hooks", desiredLists(want)})
	return []byte(render(top, "", style{unit: "  ", keySep: ": "}, true) + "\n")
}

// desiredLists is a "hooks" object of the wanted entries, each in its
// event's list.
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
	rootMulti := len(root.members) == 0 || bytes.IndexByte(b[root.start:root.end], '\n') >= 0
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

// holds checks that the edited document parses and holds exactly the
// wanted entries.
func (f format) holds(b []byte, id stubID, want []desired) error {
	root, err := parseJSON(b)
	if err != nil {
		return fmt.Errorf("internal error: edited file does not parse: %w", err)
	}
	if _, items, err := f.scan(root, id); err != nil || !matches(items, want) {
		return errors.New("internal error: edited file does not hold the expected hooks")
	}
	return nil
}

func (f format) warnings(b []byte) []string {
	if f.warn == nil {
		return nil
	}
	root, err := parseJSON(b)
	if err != nil {
		return nil
	}
	doc, _ := root.value().(map[string]any)
	return f.warn(doc)
}

func (f format) uninstall(before []byte, id stubID, backup []byte, hasBackup bool) ([]byte, bool, error) {
	if blank(before) {
		return before, false, nil
	}
	b, removed, err := f.strip(before, id, parseBackup(backup, hasBackup))
	if err != nil {
		return nil, false, fmt.Errorf("%w; fix it, then run the command again", err)
	}
	if !removed {
		return before, false, nil
	}
	if !hasBackup && f.isSkeleton(b) {
		return nil, true, nil
	}
	return b, false, nil
}

// isSkeleton reports whether b holds nothing but the top-level keys of a
// file carryover creates (an empty "hooks" object counts as absent).
func (f format) isSkeleton(b []byte) bool {
	root, err := parseJSON(b)
	if err != nil {
		return false
	}
	v, ok := root.value().(map[string]any)
	if !ok {
		return false
	}
	if h, ok := v["hooks"].(map[string]any); ok && len(h) == 0 {
		delete(v, "hooks")
	}
	return reflect.DeepEqual(v, plain(append(ordered{}, f.skeleton...)))
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
