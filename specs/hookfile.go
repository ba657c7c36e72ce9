package specs

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// HookFile is the layout of an agent's hook config file, as data: every
// known agent's file is a JSON document with a top-level "hooks" object
// keyed by native event name, holding a list per event, in one of two
// shapes:
//
//	grouped: [{"matcher"?: M, "hooks": [handler…]}…]  (Claude Code, Codex, Gemini CLI)
//	flat:    [handler…]                                (Copilot CLI, Cursor, VS Code, Windsurf)
//
// specs/hookconf reads, writes and checks files of either shape; a new agent
// whose file has one of them needs no Go code.
//
// A third shape, "whole", is for agents whose hooks are files of their own
// (Pi's TS extension, Cline's executable hook files): carryover writes the
// whole file from a template (see whole.go) and owns it byte for byte.
type HookFile struct {
	// Shape is "grouped", "flat" or "whole".
	Shape string `toml:"shape"`
	// Template names the file in specs/hookfiles/ a "whole" file is
	// rendered from; Mode is its permission bits (0o755 for an executable).
	Template string `toml:"template"`
	Mode     int    `toml:"mode"`

	content string // the template's text, set by validate
	// CommandKeys are the handler fields that may hold a command (how
	// carryover recognises its own entries); the handler writes one of them.
	CommandKeys []string `toml:"command_keys"`
	// Skeleton are the top-level fields of a file carryover creates, before
	// "hooks" (Field syntax).
	Skeleton []string `toml:"skeleton"`
	// Handler are the fields of one handler, in order (Field syntax).
	Handler []string `toml:"handler"`
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

var placeholders = []Placeholder{PhCommand, PhTimeout, PhTimeoutMs, PhMatcher}

// Field parses one "key=value" layout field. The value is a Placeholder
// ("$…"), a bool (true, false), an integer, or else a string.
func Field(s string) (key string, val any, err error) {
	key, v, ok := strings.Cut(s, "=")
	if !ok || key == "" {
		return "", nil, fmt.Errorf("field %q: want key=value", s)
	}
	switch {
	case strings.HasPrefix(v, "$"):
		if !slices.Contains(placeholders, Placeholder(v)) {
			return "", nil, fmt.Errorf("field %q: unknown placeholder; expected one of %v", s, placeholders)
		}
		return key, Placeholder(v), nil
	case v == "true" || v == "false":
		return key, v == "true", nil
	}
	if n, err := strconv.Atoi(v); err == nil {
		return key, n, nil
	}
	return key, v, nil
}

func (h *HookFile) validate() error {
	if h.Shape == ShapeWhole {
		return h.validateWhole()
	}
	if h.Shape != ShapeGrouped && h.Shape != ShapeFlat {
		return fmt.Errorf("shape %q: expected %q, %q or %q", h.Shape, ShapeGrouped, ShapeFlat, ShapeWhole)
	}
	if h.Template != "" || h.Mode != 0 {
		return fmt.Errorf("template and mode belong to shape %q", ShapeWhole)
	}
	if len(h.CommandKeys) == 0 {
		return errors.New("command_keys is empty")
	}
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
		if v == PhCommand {
			if !slices.Contains(h.CommandKeys, k) {
				return fmt.Errorf("handler writes the command to %q, which is not in command_keys", k)
			}
			cmd = true
		}
	}
	if !cmd {
		return errors.New("handler has no $command field")
	}
	return nil
}
