package hookconf

// Codex runs user hooks only when config.toml holds a matching
//
//	[hooks.state."<abs path of hooks.json>:<event label>:<group>:<handler>"]
//	trusted_hash = "sha256:<hex>"
//
// (the hash of the normalised handler, see codexNorm and codexDigest; checked
// against hashes codex-cli 0.169.0 itself accepted, in
// cmd/e2e/kit_codex_trust_check_test.go). carryover edits config.toml as text: it appends one
// table per stub, marked "# carryover" on the header line, and removes only
// marked tables, so the user's comments and layout stay untouched.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"sync"

	"github.com/pelletier/go-toml/v2"
)

var codexLabels = map[string]string{
	"PreToolUse": "pre_tool_use", "PermissionRequest": "permission_request", "PostToolUse": "post_tool_use",
	"PreCompact": "pre_compact", "PostCompact": "post_compact", "SessionStart": "session_start",
	"SessionEnd": "session_end", "UserPromptSubmit": "user_prompt_submit", "SubagentStart": "subagent_start",
	"SubagentStop": "subagent_stop", "Stop": "stop", "PreModelRequest": "pre_model_request",
	"PostModelRequest": "post_model_request", "Interrupt": "interrupt",
}

var (
	codexNoMatcher = map[string]bool{"UserPromptSubmit": true, "Stop": true, "SessionEnd": true, "Interrupt": true, "PreModelRequest": true, "PostModelRequest": true}
	codexClamp3    = map[string]bool{"SessionEnd": true, "Interrupt": true}
	codexCtx       = map[string]bool{"PreToolUse": true, "PostToolUse": true, "SessionStart": true, "UserPromptSubmit": true, "SubagentStart": true}
)

// TrustEntry is one [hooks.state."Key"] trusted_hash = Hash entry.
type TrustEntry struct{ Key, Hash string }

// codexTrust computes the trust entries of the handlers in a hooks.json
// document declared at path that match accepts (nil: all). Unknown events
// are skipped.
func codexTrust(path string, hooksJSON []byte, match func(cmd, event string) bool) ([]TrustEntry, error) {
	root, err := parseJSON(hooksJSON)
	if err != nil {
		return nil, err
	}
	if root.kind != '{' {
		return nil, fmt.Errorf("%s is not a JSON object", path)
	}
	_, hooks := root.member("hooks")
	if hooks == nil || hooks.kind != '{' {
		return nil, nil
	}
	var out []TrustEntry
	for _, m := range hooks.members {
		label, ok := codexLabels[m.key]
		if !ok || m.val.kind != '[' {
			continue
		}
		for gi, g := range m.val.elems {
			es, err := codexGroupTrust(path, m.key, label, gi, g, match)
			if err != nil {
				return nil, err
			}
			out = append(out, es...)
		}
	}
	return out, nil
}

// codexGroupTrust is the trust entries of the handlers of matcher group
// gi of event (labelled label) that match accepts.
func codexGroupTrust(path, event, label string, gi int, g *jnode, match func(cmd, event string) bool) ([]TrustEntry, error) {
	if g.kind != '{' {
		return nil, nil
	}
	_, hs := g.member("hooks")
	if hs == nil || hs.kind != '[' {
		return nil, nil
	}
	var matcher any
	if _, mn := g.member("matcher"); mn != nil && mn.kind != 'l' && !codexNoMatcher[event] {
		matcher = mn.value()
	}
	var out []TrustEntry
	for hi, h := range hs.elems {
		hv, ok := h.value().(map[string]any)
		if !ok {
			continue
		}
		if cmd, _ := hv["command"].(string); match != nil && !match(cmd, event) {
			continue
		}
		ident := map[string]any{"event_name": label, "hooks": []any{codexNorm(event, hv)}}
		if matcher != nil {
			ident["matcher"] = matcher
		}
		sum, err := codexDigest(ident)
		if err != nil {
			return nil, err
		}
		out = append(out, TrustEntry{Key: fmt.Sprintf("%s:%s:%d:%d", path, label, gi, hi), Hash: sum})
	}
	return out, nil
}

func codexNorm(event string, h map[string]any) map[string]any {
	t, has := h["timeout"].(float64)
	switch {
	case codexClamp3[event] && !has:
		t = 1
	case codexClamp3[event]:
		t = min(max(t, 1), 3)
	case !has:
		t = 600
	default:
		t = max(t, 1)
	}
	async, _ := h["async"].(bool)
	out := map[string]any{"type": "command", "command": h["command"], "timeout": t, "async": async}
	if sm, ok := h["statusMessage"]; ok && sm != nil {
		out["statusMessage"] = sm
	}
	if acl, ok := h["additionalContextLimit"]; ok && acl != nil && acl != float64(2500) && codexCtx[event] {
		out["additionalContextLimit"] = acl
	}
	return out
}

// codexDigest is sha256 over JSON with sorted keys, compact separators, and
// no HTML escaping (serde_json's output).
func codexDigest(v any) (string, error) {
	b, err := marshal(v, "", "")
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

const trustMarker = "# carryover"

// trustHeader and trustHashLine are compiled at first use, not at process
// start (the hook process never edits config.toml).
var trustHeader = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^\[hooks\.state\."((?:[^"\\]|\\.)*)"\][ \t]*# carryover[ \t]*\r?$`)
})
var trustHashLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^[ \t]*trusted_hash[ \t]*=[ \t]*"([^"]*)"`)
})

func tomlUnquote(s string) string {
	var v struct {
		K string `toml:"k"`
	}
	if err := toml.Unmarshal([]byte("k = \""+s+"\""), &v); err != nil {
		return s
	}
	return v.K
}

type trustBlock struct {
	start, end int // removal span, including the blank line carryover added before it
	key, hash  string
}

// trustBlocks finds carryover's marked tables in config.toml.
func trustBlocks(b []byte) []trustBlock {
	var out []trustBlock
	for _, m := range trustHeader().FindAllSubmatchIndex(b, -1) {
		hs, he := m[0], m[1]
		end := tableEnd(b, he)
		blk := trustBlock{start: blankBefore(b, hs), end: end, key: tomlUnquote(string(b[m[2]:m[3]]))}
		if hm := trustHashLine().FindSubmatch(b[he:end]); hm != nil {
			blk.hash = string(hm[1])
		}
		out = append(out, blk)
	}
	return out
}

// tableEnd is the end of a table's body, whose header ends at he: its
// following lines up to the next table header or EOF, without the blank
// lines at its end.
func tableEnd(b []byte, he int) int {
	pos, lastContent := he, he
	for li, ln := range bytes.SplitAfter(b[he:], []byte("\n")) {
		t := bytes.TrimSpace(ln)
		if li > 0 && bytes.HasPrefix(t, []byte("[")) {
			break
		}
		pos += len(ln)
		if li == 0 || len(t) > 0 {
			lastContent = pos
		}
	}
	return lastContent
}

// blankBefore is where a table starting at hs starts with the blank line
// carryover added before it, if there is one (\n or \r\n).
func blankBefore(b []byte, hs int) int {
	switch {
	case hs >= 2 && b[hs-1] == '\n' && b[hs-2] == '\n':
		return hs - 1
	case hs >= 3 && b[hs-1] == '\n' && b[hs-2] == '\r' && b[hs-3] == '\n':
		return hs - 2
	}
	return hs
}

// editTrust rewrites carryover's marked tables so they hold exactly want.
func editTrust(before []byte, want []TrustEntry) ([]byte, error) {
	var existing map[string]any
	if err := toml.Unmarshal(before, &existing); err != nil {
		return nil, fmt.Errorf("not valid TOML (%v); fix it, then run the command again", err)
	}
	blocks := trustBlocks(before)
	add, err := trustAdds(blocks, existing, want)
	if err != nil {
		return nil, err
	}
	if sameTrust(blocks, add) {
		return before, nil
	}
	b := append([]byte(nil), before...)
	for i := len(blocks) - 1; i >= 0; i-- {
		b = append(b[:blocks[i].start:blocks[i].start], b[blocks[i].end:]...)
	}
	nl := "\n"
	if bytes.Contains(before, []byte("\r\n")) {
		nl = "\r\n"
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, nl...)
	}
	for _, w := range add {
		if len(b) > 0 {
			b = append(b, nl...)
		}
		b = append(b, "[hooks.state."+tomlQuote(w.Key)+"] "+trustMarker+nl+"trusted_hash = "+tomlQuote(w.Hash)+nl...)
	}
	var check map[string]any
	if err := toml.Unmarshal(b, &check); err != nil {
		return nil, fmt.Errorf("internal error: edited config.toml is not valid TOML (%v); nothing was written", err)
	}
	return b, nil
}

// trustAdds is the entries of want carryover's tables must hold: all but
// those the user's own tables already trust with the same hash (another
// hash is an error).
func trustAdds(blocks []trustBlock, existing map[string]any, want []TrustEntry) ([]TrustEntry, error) {
	ourKeys := map[string]bool{}
	for _, bl := range blocks {
		ourKeys[bl.key] = true
	}
	hooks, _ := existing["hooks"].(map[string]any)
	state, _ := hooks["state"].(map[string]any)
	var add []TrustEntry
	for _, w := range want {
		cur, ok := state[w.Key].(map[string]any) // the user's own entry for this key
		switch {
		case ourKeys[w.Key] || !ok:
			add = append(add, w)
		case cur["trusted_hash"] != w.Hash:
			return nil, fmt.Errorf("already has [hooks.state.%s] with another trusted_hash; remove that table, then run the command again", tomlQuote(w.Key))
		}
	}
	return add, nil
}

// sameTrust reports whether carryover's tables already hold exactly add.
func sameTrust(blocks []trustBlock, add []TrustEntry) bool {
	if len(blocks) != len(add) {
		return false
	}
	for i, bl := range blocks {
		if bl.key != add[i].Key || bl.hash != add[i].Hash {
			return false
		}
	}
	return true
}

// planTrust plans config.toml for the hooks.json content hooksAfter (nil:
// hooks.json is going away or holds no carryover stubs).
func planTrust(t Target, hooksAfter []byte, id stubID, files FS) (Plan, error) {
	before, exists, err := read(files, t.TrustPath)
	if err != nil {
		return Plan{}, err
	}
	var want []TrustEntry
	if hooksAfter != nil {
		if want, err = codexTrust(t.Path, hooksAfter, id.ours); err != nil {
			return Plan{}, fmt.Errorf("%s: %w", t.Path, err)
		}
	}
	p := Plan{Tool: t.Tool, Path: t.TrustPath, Before: before, After: before, Created: !exists && len(want) > 0}
	if !exists && len(want) == 0 {
		return p, nil
	}
	after, err := editTrust(before, want)
	if err != nil {
		return Plan{}, fmt.Errorf("%s: %w", t.TrustPath, err)
	}
	p.After = after
	if exists && len(want) == 0 && !bytes.Equal(before, after) {
		p.After, p.Delete = untrusted(files, t.TrustPath, after)
	}
	for _, w := range want {
		p.Hooks = append(p.Hooks, w.Key)
	}
	return p, nil
}

// untrusted is config.toml once carryover's last tables are gone. Install
// may have ended the user's last line before adding its tables; when that
// newline is all that differs from the backup, the backup's bytes come
// back. A file left empty that install created (no backup) is deleted.
func untrusted(files FS, path string, after []byte) (_ []byte, del bool) {
	backup, hasBackup, err := read(files, path+BackupSuffix)
	if err == nil && hasBackup && !bytes.Equal(after, backup) &&
		bytes.Equal(bytes.TrimRight(after, "\r\n"), bytes.TrimRight(backup, "\r\n")) {
		after = backup
	}
	if err == nil && !hasBackup && len(bytes.TrimSpace(after)) == 0 {
		return nil, true
	}
	return after, false
}
