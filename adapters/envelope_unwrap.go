package adapters

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Unwrap reads hook stdout the way an agent whose envelope is e does and
// returns the injected text: the inverse of Wrap, and as strict as the
// agents are (one JSON object, the text where e puts it). `carryover
// doctor` uses it to check what a start hook really prints.
func Unwrap(e Envelope, event string, out []byte) (string, error) {
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return "", nil
	}
	if e == EnvelopeNone {
		return "", fmt.Errorf("printed %d bytes, but this agent reads no hook output", len(out))
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("not one JSON object (%v)", err)
	}
	if dec.More() {
		return "", fmt.Errorf("more than one JSON value")
	}
	text := func(m map[string]any, key string) (string, error) {
		s, ok := m[key].(string)
		if !ok {
			return "", fmt.Errorf("no %q string in the %s envelope", key, e)
		}
		return s, nil
	}
	switch e {
	case EnvelopeHookSpecific, EnvelopeHookSpecificNoEvent:
		h, ok := v["hookSpecificOutput"].(map[string]any)
		if !ok {
			return "", fmt.Errorf("no hookSpecificOutput object in the %s envelope", e)
		}
		if e == EnvelopeHookSpecific {
			if ev, _ := h["hookEventName"].(string); ev != event {
				return "", fmt.Errorf("hookEventName is %q, the agent expects %q", ev, event)
			}
		}
		return text(h, "additionalContext")
	case EnvelopeFlatCamel:
		return text(v, "additionalContext")
	case EnvelopeFlatSnake:
		return text(v, "additional_context")
	}
	return "", fmt.Errorf("unknown injection envelope %q", e)
}
