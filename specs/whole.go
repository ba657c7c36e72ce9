package specs

import (
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
)

// Hook files carryover writes whole (hook_file shape "whole"): an agent
// whose hooks are files of their own rather than entries in a settings
// file. The tool's config path names the file; when it holds EventSlot,
// one file is written per hook event (Cline: ~/.cline/hooks/TaskStart …),
// else one file carries every event (Pi: one extension). The content is a
// template from hookfiles/ with these placeholders filled in by
// specs/hookconf:
//
//	{{exe_sh}}   carryover's absolute path as one shell word
//	{{exe_json}} the same as a JSON (and JS/TS) string literal
//	{{tool}}     the tool's name
//	{{event}}    the native event (per-event files only)
//
// A whole file lives in the user's own config folders, never in a project:
// its path must start with "~" or an environment variable.

//go:embed hookfiles
var hookFiles embed.FS

// EventSlot in a whole-file config path stands for the native event name.
const EventSlot = "{{event}}"

// Template placeholders (see above).
const (
	SlotExeSh   = "{{exe_sh}}"
	SlotExeJSON = "{{exe_json}}"
	SlotTool    = "{{tool}}"
)

var (
	wholeSlots = []string{SlotExeSh, SlotExeJSON, SlotTool, EventSlot}
	slotRE     = regexp.MustCompile(`\{\{[^{}]*\}\}`)
)

// Whole reports whether carryover writes the hook file whole.
func (h *HookFile) Whole() bool { return h != nil && h.Shape == ShapeWhole }

// Content is a whole file's template text.
func (h *HookFile) Content() string { return h.content }

func (h *HookFile) validateWhole() error {
	if len(h.CommandKeys)+len(h.Skeleton)+len(h.Handler) > 0 {
		return fmt.Errorf("shape %q takes template and mode, not command_keys, skeleton or handler", ShapeWhole)
	}
	if h.Template == "" || strings.ContainsAny(h.Template, `/\`) {
		return fmt.Errorf("shape %q needs template, a file name in specs/hookfiles", ShapeWhole)
	}
	b, err := fs.ReadFile(hookFiles, "hookfiles/"+h.Template)
	if err != nil {
		return fmt.Errorf("template %q: %w", h.Template, err)
	}
	h.content = string(b)
	for _, s := range slotRE.FindAllString(h.content, -1) {
		if !slices.Contains(wholeSlots, s) {
			return fmt.Errorf("template %q: unknown placeholder %s; expected one of %v", h.Template, s, wholeSlots)
		}
	}
	if !strings.Contains(h.content, SlotExeSh) && !strings.Contains(h.content, SlotExeJSON) {
		return fmt.Errorf("template %q never names carryover (%s or %s)", h.Template, SlotExeSh, SlotExeJSON)
	}
	// The owner reads and writes it; nobody else may write it (it runs
	// with the user's rights).
	if h.Mode&0o600 != 0o600 || h.Mode&^0o755 != 0 {
		return fmt.Errorf("mode %#o: want the owner's read and write bits and no write bit for group or others (e.g. 0o644, 0o755)", h.Mode)
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
