package specs

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// HookFile is the layout of an agent's hook config file, as data, so a new
// agent whose file has a known shape needs no Go code. Settings files are
// JSON with a top-level "hooks" object keyed by native event, a list per event:
//
//	grouped: [{"matcher"?: M, "hooks": [handler…]}…]  (Claude Code, Codex, Gemini CLI)
//	flat:    [handler…]                                (Copilot CLI, Cursor, VS Code, Windsurf)
//
// Shape "whole" is for hooks that are files of their own (Pi's extension,
// Cline's executable hooks): carryover renders the template (hookfiles/,
// Slot* placeholders) and owns the file byte for byte. A config path ending
// in /{{event}} is one file per event (~/.cline/hooks/TaskStart), else one
// file relays every event; it lives in the user's folders (~ or ${VAR}),
// never in a project.
type HookFile struct {
	Shape    string `toml:"shape"`    // grouped, flat or whole
	Template string `toml:"template"` // whole: the file in specs/hookfiles/
	Mode     int    `toml:"mode"`     // whole: permission bits (0o755 for an executable)

	content string // the template's text, set by validate
	// CommandKeys are the handler fields that may hold a command (how
	// carryover recognises its own entries).
	CommandKeys []string      `toml:"command_keys"`
	Skeleton    []string      `toml:"skeleton"` // top-level fields of a file carryover creates (Field syntax)
	Handler     []string      `toml:"handler"`  // one handler's fields, in order (Field syntax)
	Warnings    []HookWarning `toml:"warnings"`
	Trust       *TrustHash    `toml:"trust"` // with the tool's trust path: how entries there are hashed
}

// TrustHash is how an agent (Codex) hashes each handler it runs only once
// its hash is trusted: the events it hashes and their labels, and the
// events whose matcher it ignores, whose timeout it clamps to 1-3 s, and
// that keep additionalContextLimit.
type TrustHash struct {
	Labels    map[string]string `toml:"labels"`
	NoMatcher []string          `toml:"no_matcher"`
	Clamp3s   []string          `toml:"clamp_3s"`
	Context   []string          `toml:"context_limit"`
}

// HookWarning is something to tell the user about the settings file: Set
// when Key (dotted) holds a value (Is: only that JSON value; "{value}" in
// Set names it), Unset when it is absent.
type HookWarning struct {
	Key, Is, Set, Unset string
}

// Shapes of a hook file.
const (
	ShapeGrouped = "grouped"
	ShapeFlat    = "flat"
	ShapeWhole   = "whole"
)

// Placeholder is a value filled in per hook.
type Placeholder string

// Placeholders a handler field may hold. A field whose placeholder has no
// value for a hook (timeout 0, no matcher) is left out.
const (
	PhCommand   Placeholder = "$command"    // the stub command
	PhTimeout   Placeholder = "$timeout"    // the hook's timeout in seconds
	PhTimeoutMs Placeholder = "$timeout_ms" // the same in milliseconds
	PhMatcher   Placeholder = "$matcher"    // the hook's matcher
)

// Placeholders of a whole file's template; EventSlot in its config path
// stands for the native event name.
const (
	SlotExeSh   = "{{exe_sh}}"   // carryover's absolute path as one shell word
	SlotExeJSON = "{{exe_json}}" // the same as a JSON (and JS/TS) string literal
	SlotTool    = "{{tool}}"     // the tool's name
	EventSlot   = "{{event}}"    // the native event (per-event files only)
)

var (
	placeholders = []Placeholder{PhCommand, PhTimeout, PhTimeoutMs, PhMatcher}
	wholeSlots   = []string{SlotExeSh, SlotExeJSON, SlotTool, EventSlot}
	slotRE       = regexp.MustCompile(`\{\{[^{}]*\}\}`)
)

//go:embed hookfiles
var hookFiles embed.FS

// Whole reports whether carryover writes the hook file whole.
func (h *HookFile) Whole() bool { return h != nil && h.Shape == ShapeWhole }

// Content is a whole file's template text.
func (h *HookFile) Content() string { return h.content }

// Field parses one "key=value" layout field. The value is a Placeholder
// ("$…"), a bool (true, false), an integer, or else a string.
func Field(s string) (key string, val any, err error) {
	key, v, ok := strings.Cut(s, "=")
	if n, err := strconv.Atoi(v); err == nil {
		val = n
	}
	switch {
	case !ok || key == "":
		return "", nil, fmt.Errorf("field %q: want key=value", s)
	case strings.HasPrefix(v, "$") && !slices.Contains(placeholders, Placeholder(v)):
		return "", nil, fmt.Errorf("field %q: unknown placeholder; expected one of %v", s, placeholders)
	case strings.HasPrefix(v, "$"):
		return key, Placeholder(v), nil
	case v == "true" || v == "false":
		return key, v == "true", nil
	case val != nil:
		return key, val, nil
	}
	return key, v, nil
}

func (h *HookFile) validate() error {
	switch {
	case h.Shape == ShapeWhole:
		return h.validateWhole()
	case h.Shape != ShapeGrouped && h.Shape != ShapeFlat:
		return fmt.Errorf("shape %q: expected %q, %q or %q", h.Shape, ShapeGrouped, ShapeFlat, ShapeWhole)
	case h.Template != "" || h.Mode != 0:
		return fmt.Errorf("template and mode belong to shape %q", ShapeWhole)
	case len(h.CommandKeys) == 0:
		return errors.New("command_keys is empty")
	}
	return h.validateFields()
}

// validateFields checks the skeleton's and the handler's fields.
func (h *HookFile) validateFields() error {
	for _, f := range h.Skeleton {
		if _, v, err := Field(f); err != nil {
			return fmt.Errorf("skeleton: %w", err)
		} else if _, ok := v.(Placeholder); ok {
			return fmt.Errorf("skeleton field %q: placeholders belong in handler", f)
		}
	}
	cmd := false
	for _, f := range h.Handler {
		k, v, err := Field(f)
		if err != nil {
			return fmt.Errorf("handler: %w", err)
		}
		if v == PhCommand && !slices.Contains(h.CommandKeys, k) {
			return fmt.Errorf("handler writes the command to %q, which is not in command_keys", k)
		}
		cmd = cmd || v == PhCommand
	}
	if !cmd {
		return errors.New("handler has no $command field")
	}
	return h.validateNotes()
}

// validateNotes checks the warnings and the trust rules.
func (h *HookFile) validateNotes() error {
	for _, e := range h.Trust.events() {
		if _, ok := h.Trust.Labels[e]; !ok {
			return fmt.Errorf("trust: event %s has no label", e)
		}
	}
	for _, w := range h.Warnings {
		if w.Key == "" || w.Set+w.Unset == "" {
			return fmt.Errorf("warning %+v: want key and set or unset", w)
		}
	}
	return nil
}

func (h *HookFile) validateWhole() error {
	if len(h.CommandKeys)+len(h.Skeleton)+len(h.Handler)+len(h.Warnings) > 0 {
		return fmt.Errorf("shape %q takes template and mode, not command_keys, skeleton or handler", ShapeWhole)
	}
	if h.Template == "" || strings.ContainsAny(h.Template, `/\`) {
		return fmt.Errorf("shape %q needs template, a file name in specs/hookfiles", ShapeWhole)
	}
	if err := h.readTemplate(); err != nil {
		return fmt.Errorf("template %q%w", h.Template, err)
	}
	// The owner reads and writes it; nobody else may write it (it runs
	// with the user's rights).
	if h.Mode&0o600 != 0o600 || h.Mode&^0o755 != 0 {
		return fmt.Errorf("mode %#o: want the owner's read and write bits and no write bit for group or others (e.g. 0o644, 0o755)", h.Mode)
	}
	return nil
}

// readTemplate loads the whole file's template and checks its slots.
func (h *HookFile) readTemplate() error {
	b, err := fs.ReadFile(hookFiles, "hookfiles/"+h.Template)
	if err != nil {
		return fmt.Errorf(": %w", err)
	}
	h.content = string(b)
	for _, s := range slotRE.FindAllString(h.content, -1) {
		if !slices.Contains(wholeSlots, s) {
			return fmt.Errorf(": unknown placeholder %s; expected one of %v", s, wholeSlots)
		}
	}
	if !strings.Contains(h.content, SlotExeSh) && !strings.Contains(h.content, SlotExeJSON) {
		return fmt.Errorf(" never names carryover (%s or %s)", SlotExeSh, SlotExeJSON)
	}
	return nil
}

// validateWhole checks a whole-file tool's paths and rows: paths in the
// user's folders, one file per event exactly when the template names the
// event, and a single file naming every event its rows hook (it relays
// them itself).
func (tl *Tool) validateWhole() error {
	h := tl.HookFile
	perEvent, err := tl.wholePaths()
	if err != nil {
		return err
	}
	if !perEvent && strings.Contains(h.content, EventSlot) {
		return fmt.Errorf("template %q names %s but the config path writes one file for every event", h.Template, EventSlot)
	}
	for _, r := range tl.Rows {
		for _, hk := range append(slices.Clone(r.Inject), r.Snapshot...) {
			switch {
			case perEvent && strings.ContainsAny(hk.Native, `/\.:*?<>|`):
				return fmt.Errorf("row %s: event %q cannot be a file name", r.ID, hk.Native)
			case !perEvent && !strings.Contains(h.content, `"`+hk.Native+`"`):
				return fmt.Errorf("row %s hooks %s but template %q never relays it (no %q in it)", r.ID, hk.Native, h.Template, `"`+hk.Native+`"`)
			}
		}
	}
	return nil
}

// wholePaths checks the config paths of a whole-file tool and reports
// whether they name one file per event.
func (tl *Tool) wholePaths() (perEvent bool, err error) {
	for _, p := range tl.Config.every() {
		if !strings.HasPrefix(p, "~/") && !strings.HasPrefix(p, "${") {
			return false, fmt.Errorf("config %q: a whole hook file lives in the user's folders (start it with ~/ or ${VAR}), never in a project", p)
		}
		if strings.Contains(p, EventSlot) {
			if !strings.HasSuffix(p, "/"+EventSlot) {
				return false, fmt.Errorf("config %q: %s must be the file name", p, EventSlot)
			}
			perEvent = true
		}
	}
	return perEvent, nil
}

// events lists every event the trust rules name but the labels.
func (t *TrustHash) events() []string {
	if t == nil {
		return nil
	}
	return slices.Concat(t.NoMatcher, t.Clamp3s, t.Context)
}
