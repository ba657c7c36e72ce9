package hookconf

import (
	"fmt"
	"slices"
	"strings"

	"github.com/carryover/carryover/specs"
	"github.com/pelletier/go-toml/v2"
)

// State of carryover's hooks in one agent's config.
type State string

const (
	// StatePresent: every wanted stub is installed exactly.
	StatePresent State = "present"
	// StateMissing: no carryover stub (or no file).
	StateMissing State = "missing"
	// StateDrifted: stubs exist but differ (binary path, events, timeouts, trust).
	StateDrifted State = "drifted"
	// StateNoHooks: the agent has no hooks (Aider) or this version gets none.
	StateNoHooks State = "no hooks"
)

// Status describes one agent's hook configuration.
type Status struct {
	Tool, Path string
	State      State
	// Detail says what is wrong in words ("" when present).
	Detail string
	// Hooks lists native events that carry carryover stubs now.
	Hooks    []string
	Warnings []string
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
	f, b, exists, err := load(t, files)
	if err != nil {
		return st, err
	}
	if !exists || blank(b) {
		st.State, st.Detail = StateMissing, "file does not exist; run `carryover install`"
		return st, nil
	}
	root, err := parseJSON(b)
	if err != nil {
		return st, fmt.Errorf("%s: %w", t.Path, err)
	}
	id, err := identify(t, exe, files)
	if err != nil {
		return st, err
	}
	_, items, err := f.scan(root, id)
	if err != nil {
		return st, fmt.Errorf("%s: %w", t.Path, err)
	}
	st.Hooks = eventsOf(items)
	st.Warnings = f.warnings(b)
	st.State, st.Detail, err = f.judge(t, cap, exe, b, id, items, files)
	return st, err
}

// judge is the state of carryover's items in the file b against what
// install writes, and of Codex's trust entries for them.
func (f format) judge(t Target, cap specs.Capability, exe string, b []byte, id stubID, items []ourItem, files FS) (State, string, error) {
	if len(items) == 0 {
		return StateMissing, "no carryover hooks; run `carryover install`", nil
	}
	want := f.desired(cap, id)
	if !matches(items, want) {
		return StateDrifted, drift(items, hookNames(cap), exe) + "; run `carryover refresh`", nil
	}
	if f.trust && t.TrustPath != "" {
		d, err := trustDrift(t, b, id, files)
		if err != nil {
			return "", "", err
		}
		if d != "" {
			return StateDrifted, d + "; run `carryover refresh`", nil
		}
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
	for _, it := range items {
		if s := fmt.Sprint(it.value); !strings.Contains(s, quote(exe)+" snapshot") {
			parts = append(parts, "stubs do not run "+exe)
			break
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "stubs differ from this version's hooks (timeouts, matchers or duplicates)")
	}
	return strings.Join(parts, "; ")
}

func trustDrift(t Target, hooksJSON []byte, id stubID, files FS) (string, error) {
	want, err := codexTrust(t.Path, hooksJSON, id.ours)
	if err != nil {
		return "", fmt.Errorf("%s: %w", t.Path, err)
	}
	b, _, err := read(files, t.TrustPath)
	if err != nil {
		return "", err
	}
	var doc map[string]any
	if err := toml.Unmarshal(b, &doc); err != nil {
		return "", fmt.Errorf("%s: not valid TOML (%v)", t.TrustPath, err)
	}
	state := map[string]any{}
	if h, ok := doc["hooks"].(map[string]any); ok {
		if s, ok := h["state"].(map[string]any); ok {
			state = s
		}
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
