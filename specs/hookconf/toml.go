package hookconf

// TOML files carryover shares with their owners (its own config.toml, Codex's) are edited by splicing text, never
// re-encoded, so comments, order and spacing stay: its own key by key (SetKey, UnsetKey), Codex's trust entries as
// tables carryover appends and marks.

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/carryover/carryover/specs"
	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// tomlQuote quotes s as a TOML basic string: JSON's escapes are all TOML's, and DEL, which TOML forbids raw, is escaped
// too.
func tomlQuote(s string) string {
	b, _ := marshal(s)
	return strings.ReplaceAll(string(b), "\x7f", `\u007f`)
}

// tomlLayout is where things are in a TOML document: [start, end) the wanted key's assignment through its value (not a
// trailing comment; start < 0: not assigned) and keyEnd where its key ends; inline: the key is under an inline table or
// a value (`limits = {…}`, left to the user); firstTable the first header's line (len(b) if none); tableEnd after the
// wanted key's table's last line (-1: no header).
type tomlLayout struct {
	start, end, keyEnd, firstTable, tableEnd int
	inline                                   bool
}

// locateTOMLKey finds the dotted key in b with go-toml/v2's own parser (each expression's byte range), not with
// patterns, so a key inside a multi-line array, a string holding "[x]" or a quoted key is found or left alone exactly
// as TOML reads it.
func locateTOMLKey(b []byte, key string) (lay tomlLayout, path []string, err error) {
	path = strings.Split(key, ".")
	lay = tomlLayout{start: -1, firstTable: len(b), tableEnd: -1}
	p := unstable.Parser{}
	p.Reset(b)
	var table []string
	inWanted := false // inside the header of path's table
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			var at int
			table, at = tableHeader(e)
			lay.firstTable = min(lay.firstTable, lineStart(b, at))
			if inWanted = len(path) > 1 && slices.Equal(table, path[:len(path)-1]); inWanted {
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
				lay.inline = true
			}
		}
	}
	if err := p.Error(); err != nil {
		return lay, path, fmt.Errorf("the file is not valid TOML (%v); fix it by hand", err)
	}
	if lay.inline {
		return lay, path, fmt.Errorf("%s is set inline (%s = {…}); edit the file by hand", key, path[0])
	}
	return lay, path, nil
}

// tableHeader is a header's key (an array table's ends in "[]", never a documented key's table) and its offset. The
// parser records no range for a header, only for its key, which is on the header's line.
func tableHeader(e *unstable.Node) ([]string, int) {
	it := e.Key()
	it.Next()
	table := keyParts(e.Key())
	if e.Kind == unstable.ArrayTable {
		table = append(table, "[]")
	}
	return table, int(it.Node().Raw.Offset)
}

func keyParts(it unstable.Iterator) []string {
	var out []string
	for it.Next() {
		out = append(out, string(it.Node().Data))
	}
	return out
}

func lineStart(b []byte, i int) int { return bytes.LastIndexByte(b[:i], '\n') + 1 }

// lineEnd is just after the line that holds i.
func lineEnd(b []byte, i int) int {
	if j := bytes.IndexByte(b[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(b)
}

// SetKey returns b with key (dotted for a key inside a table) set to literal (a TOML value: `"brief"`, `true`,
// `["claude"]`). An assignment is replaced through the end of its value (a trailing comment stays); a new top-level key
// goes before the first table, a new table key at the end of its table (created at the end of the file if needed). The
// result must parse and hold the key.
func SetKey(b []byte, key, literal string) ([]byte, error) {
	lay, path, err := locateTOMLKey(b, key)
	if err != nil {
		return nil, err
	}
	out := setAt(b, lay, path, literal)
	var check map[string]any
	if err := toml.Unmarshal(out, &check); err != nil {
		return nil, fmt.Errorf("the file would not be valid TOML after setting %s (%v); fix it by hand", key, err)
	}
	if _, ok := LookupPath(check, path); !ok {
		return nil, fmt.Errorf("could not set %s; edit the file by hand", key)
	}
	return out, nil
}

func setAt(b []byte, lay tomlLayout, path []string, literal string) []byte {
	line, table := path[len(path)-1]+" = "+literal+"\n", "["+strings.Join(path[:len(path)-1], ".")+"]\n"
	switch {
	case lay.start >= 0:
		keyText := strings.TrimRight(string(b[lay.start:lay.keyEnd]), " \t")
		return slices.Concat(b[:lay.start], []byte(keyText+" = "+literal), b[lay.end:])
	case len(path) == 1 && lay.firstTable < len(b):
		return insertLine(b, lay.firstTable, line+"\n")
	case len(path) == 1:
		return insertLine(b, lay.firstTable, line)
	case lay.tableEnd >= 0:
		return insertLine(b, lay.tableEnd, line)
	case len(b) > 0:
		return insertLine(b, len(b), "\n"+table+line)
	}
	return []byte(table + line)
}

// insertLine inserts ins at pos, on a line of its own.
func insertLine(b []byte, pos int, ins string) []byte {
	if pos > 0 && b[pos-1] != '\n' {
		ins = "\n" + ins
	}
	return slices.Concat(b[:pos], []byte(ins), b[pos:])
}

// UnsetKey returns b without key's assignment (its whole line, with a trailing comment on it); changed is false when
// the key was not set.
func UnsetKey(b []byte, key string) (out []byte, changed bool, err error) {
	lay, _, err := locateTOMLKey(b, key)
	if err != nil || lay.start < 0 {
		return b, false, err
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

// Codex runs user hooks only when config.toml holds a matching
//
//	[hooks.state."<abs path of hooks.json>:<event label>:<group>:<handler>"]
//	trusted_hash = "sha256:<hex>"
//
// (the hash of the normalised handler; the rules, specs.TrustHash, are data in tools.toml). carryover appends one table
// per stub, marked "# carryover" on the header line, and removes only marked tables.

// TrustEntry is one [hooks.state."Key"] trusted_hash = Hash entry.
type TrustEntry struct{ Key, Hash string }

// codexTrust is the trust entries of the handlers in hooks.json (declared at path) that match accepts (nil: all);
// unknown events are skipped.
func codexTrust(th *specs.TrustHash, path string, hooksJSON []byte, match func(cmd, event string) bool) ([]TrustEntry, error) {
	root, err := parseJSON(hooksJSON)
	if err != nil {
		return nil, err
	}
	var out []TrustEntry
	if _, hooks := root.member("hooks"); hooks != nil { // only an object has members: a list or a string has no "hooks"
		for _, m := range hooks.members {
			for gi, g := range m.val.elems {
				if label, ok := th.Labels[m.key]; ok {
					out = append(out, codexGroupTrust(th, path, m.key, label, gi, g, match)...)
				}
			}
		}
	}
	return out, nil
}

// codexGroupTrust is the trust entries of the handlers of matcher group gi of event (labelled label) that match
// accepts.
func codexGroupTrust(th *specs.TrustHash, path, event, label string, gi int, g *jnode, match func(cmd, event string) bool) []TrustEntry {
	hs := groupHandlers(g)
	if hs == nil {
		return nil
	}
	var matcher any
	if _, mn := g.member("matcher"); mn != nil && mn.kind != 'l' && !slices.Contains(th.NoMatcher, event) {
		matcher = mn.value()
	}
	var out []TrustEntry
	for hi, h := range hs.elems {
		hv, ok := h.value().(map[string]any)
		if cmd, _ := hv["command"].(string); !ok || match != nil && !match(cmd, event) {
			continue
		}
		ident := map[string]any{"event_name": label, "hooks": []any{codexNorm(th, event, hv)}}
		if matcher != nil {
			ident["matcher"] = matcher
		}
		sum, _ := codexDigest(ident)
		out = append(out, TrustEntry{Key: fmt.Sprintf("%s:%s:%d:%d", path, label, gi, hi), Hash: sum})
	}
	return out
}

func codexNorm(th *specs.TrustHash, event string, h map[string]any) map[string]any {
	t, has := h["timeout"].(float64)
	clamp := slices.Contains(th.Clamp3s, event)
	switch {
	case clamp && !has:
		t = 1
	case clamp:
		t = min(max(t, 1), 3)
	case !has:
		t = 600
	default:
		t = max(t, 1)
	}
	async, _ := h["async"].(bool)
	out := map[string]any{"type": "command", "command": h["command"], "timeout": t, "async": async}
	if sm := h["statusMessage"]; sm != nil {
		out["statusMessage"] = sm
	}
	if acl := h["additionalContextLimit"]; acl != nil && acl != float64(2500) && slices.Contains(th.Context, event) {
		out["additionalContextLimit"] = acl
	}
	return out
}

// codexDigest is sha256 over JSON with sorted keys, compact separators and no HTML escaping (serde_json's output).
func codexDigest(v any) (string, error) {
	b, err := marshal(v)
	return "sha256:" + digest(b), err
}

// trustBlock is one table carryover marked: its bytes, key and hash.
type trustBlock struct {
	start, end int
	key, hash  string
}

// trustBlocks finds carryover's marked tables in config.toml with go-toml/v2's parser, as locateTOMLKey finds a key: a
// table [hooks.state."<key>"] whose header line ends in the comment "# carryover", through its last key or comment.
func trustBlocks(b []byte) []trustBlock {
	p := unstable.Parser{KeepComments: true}
	p.Reset(b)
	var out []trustBlock
	var blk *trustBlock // the marked table being read
	for p.NextExpression() {
		e := p.Expression()
		if e.Kind == unstable.Table || e.Kind == unstable.ArrayTable {
			blk = nil
			if m, ok := markedTable(b, e); ok {
				out = append(out, m)
				blk = &out[len(out)-1]
			}
		} else if blk != nil { // a key or a comment
			blk.end = lineEnd(b, int(e.Raw.Offset+e.Raw.Length))
			blk.hash = cmp.Or(trustedHash(e), blk.hash)
		}
	}
	return out
}

// markedTable is the block of the table header e, if carryover marked it; [start, end) includes the blank line
// carryover added before it.
func markedTable(b []byte, e *unstable.Node) (trustBlock, bool) {
	table, at := tableHeader(e)
	start := lineStart(b, at)
	if len(table) != 3 || !bytes.HasPrefix(b[start:], []byte(`[hooks.state."`)) || !isMark(e.Next()) {
		return trustBlock{}, false
	}
	blk := trustBlock{start: start, end: lineEnd(b, at), key: table[2]}
	if pre := b[:blk.start]; bytes.HasSuffix(pre, []byte("\n\n")) {
		blk.start--
	} else if bytes.HasSuffix(pre, []byte("\n\r\n")) {
		blk.start -= 2
	}
	return blk, true
}

// isMark reports whether c is carryover's "# carryover" comment.
func isMark(c *unstable.Node) bool {
	return c != nil && c.Kind == unstable.Comment && strings.TrimRight(string(c.Data), " \t\r") == "# carryover"
}

// trustedHash is the string a trusted_hash assignment e sets ("" for any other expression).
func trustedHash(e *unstable.Node) string {
	if e.Kind != unstable.KeyValue || e.Value().Kind != unstable.String || !slices.Equal(keyParts(e.Key()), []string{"trusted_hash"}) {
		return ""
	}
	return string(e.Value().Data)
}

// trustState is the hooks.state table of a config.toml.
func trustState(b []byte) (map[string]any, error) {
	var doc map[string]any
	if err := toml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	state, _ := LookupPath(doc, []string{"hooks", "state"})
	m, _ := state.(map[string]any)
	return m, nil
}

// editTrust rewrites carryover's marked tables so they hold exactly want.
func editTrust(before []byte, want []TrustEntry) ([]byte, error) {
	state, err := trustState(before)
	if err != nil {
		return nil, fmt.Errorf("not valid TOML (%v); fix it, then run the command again", err)
	}
	blocks := trustBlocks(before)
	add, err := trustAdds(blocks, state, want)
	if err != nil {
		return nil, err
	}
	if slices.EqualFunc(blocks, add, func(bl trustBlock, w TrustEntry) bool { return bl.key == w.Key && bl.hash == w.Hash }) {
		return before, nil
	}
	b := slices.Clone(before)
	for i := len(blocks) - 1; i >= 0; i-- {
		b = slices.Delete(b, blocks[i].start, blocks[i].end)
	}
	b = appendTrust(b, add, bytes.Contains(before, []byte("\r\n")))
	if _, err := trustState(b); err != nil {
		return nil, fmt.Errorf("internal error: edited config.toml is not valid TOML (%v); nothing was written", err)
	}
	return b, nil
}

// appendTrust appends a marked table for each of add, one blank line apart, in the file's line ending.
func appendTrust(b []byte, add []TrustEntry, crlf bool) []byte {
	nl := map[bool]string{false: "\n", true: "\r\n"}[crlf]
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, nl...)
	}
	for _, w := range add {
		if len(b) > 0 {
			b = append(b, nl...)
		}
		b = append(b, "[hooks.state."+tomlQuote(w.Key)+"] # carryover"+nl+"trusted_hash = "+tomlQuote(w.Hash)+nl...)
	}
	return b
}

// trustAdds is the entries of want carryover's tables must hold: all but those the user's own tables already trust with
// the same hash (another hash is an error).
func trustAdds(blocks []trustBlock, state map[string]any, want []TrustEntry) ([]TrustEntry, error) {
	var add []TrustEntry
	for _, w := range want {
		cur, ok := state[w.Key].(map[string]any) // the user's own entry for this key
		switch {
		case !ok || slices.ContainsFunc(blocks, func(bl trustBlock) bool { return bl.key == w.Key }):
			add = append(add, w)
		case cur["trusted_hash"] != w.Hash:
			return nil, fmt.Errorf("already has [hooks.state.%s] with another trusted_hash; remove that table, then run the command again", tomlQuote(w.Key))
		}
	}
	return add, nil
}

// planTrust plans config.toml for the hooks.json content hooksAfter (nil: hooks.json is going away or holds no
// carryover stubs).
func planTrust(t Target, hooksAfter []byte, id stubID, files FS) (Plan, error) {
	before, exists, err := read(files, t.TrustPath)
	if err != nil {
		return Plan{}, err
	}
	want, err := wantTrust(t, hooksAfter, id)
	if err != nil {
		return Plan{}, err
	}
	p := Plan{Tool: t.Tool, Path: t.TrustPath, Before: before, After: before, Created: !exists && len(want) > 0}
	if !exists && len(want) == 0 {
		return p, nil
	}
	if p.After, err = editTrust(before, want); err != nil {
		return Plan{}, fmt.Errorf("%s: %w", t.TrustPath, err)
	}
	if exists && len(want) == 0 && !bytes.Equal(before, p.After) {
		p.After, p.Delete = untrusted(files, t.TrustPath, p.After)
	}
	for _, w := range want {
		p.Hooks = append(p.Hooks, w.Key)
	}
	return p, nil
}

// wantTrust is the trust entries for hooksAfter (none for nil).
func wantTrust(t Target, hooksAfter []byte, id stubID) ([]TrustEntry, error) {
	if hooksAfter == nil {
		return nil, nil
	}
	want, err := codexTrust(t.Layout.Trust, t.Path, hooksAfter, id.ours)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Path, err)
	}
	return want, nil
}

// untrusted is config.toml once carryover's last tables are gone. Install may have ended the user's last line before
// adding them; when that newline is all that differs from the backup, the backup's bytes come back. A file left blank
// that install created (no backup) is deleted.
func untrusted(files FS, path string, after []byte) (_ []byte, del bool) {
	backup, hasBackup, err := read(files, path+BackupSuffix)
	if err == nil && hasBackup && !bytes.Equal(after, backup) &&
		bytes.Equal(bytes.TrimRight(after, "\r\n"), bytes.TrimRight(backup, "\r\n")) {
		after = backup
	}
	if err == nil && !hasBackup && blank(after) {
		return nil, true
	}
	return after, false
}

// trustDrift says what is wrong with Codex's trust entries for the carryover stubs in hooksJSON ("" when nothing).
func trustDrift(t Target, hooksJSON []byte, id stubID, files FS) (string, error) {
	want, err := wantTrust(t, hooksJSON, id)
	var b []byte
	if err == nil {
		b, _, err = read(files, t.TrustPath)
	}
	if err != nil {
		return "", err
	}
	state, err := trustState(b)
	if err != nil {
		return "", fmt.Errorf("%s: not valid TOML (%v)", t.TrustPath, err)
	}
	for _, w := range want {
		e, _ := state[w.Key].(map[string]any)
		if e == nil || e["trusted_hash"] != w.Hash {
			return "trust entries in " + t.TrustPath + " are missing or stale, so codex skips the hooks silently", nil
		}
		if e["enabled"] == false {
			return "hooks are disabled (enabled = false) in " + t.TrustPath, nil
		}
	}
	return "", nil
}
