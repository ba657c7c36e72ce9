package adapters

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Envelope names how an agent expects injected context on a hook's stdout.
// specs/ rows name one of these; Wrap renders it and Unwrap reads it back.
type Envelope string

const (
	// EnvelopeHookSpecific is {"hookSpecificOutput":{"hookEventName":E,"additionalContext":T}}
	// (Claude Code, Codex, VS Code Copilot).
	EnvelopeHookSpecific Envelope = "hook-specific"
	// EnvelopeHookSpecificNoEvent is {"hookSpecificOutput":{"additionalContext":T}} (Gemini CLI).
	EnvelopeHookSpecificNoEvent Envelope = "hook-specific-no-event"
	// EnvelopeFlatCamel is {"additionalContext":T} (Copilot CLI).
	EnvelopeFlatCamel Envelope = "flat-camel"
	// EnvelopeFlatSnake is {"additional_context":T} (Cursor).
	EnvelopeFlatSnake Envelope = "flat-snake"
	// EnvelopeNone means the agent has no hook injection; the handoff reaches
	// the model through the pointer block / rules file only (Windsurf, Aider).
	EnvelopeNone Envelope = "none"
)

// Envelopes lists every envelope Wrap supports.
var Envelopes = []Envelope{EnvelopeHookSpecific, EnvelopeHookSpecificNoEvent, EnvelopeFlatCamel, EnvelopeFlatSnake, EnvelopeNone}

// envelopeKeys is the path of keys to the text in each envelope (but None).
var envelopeKeys = map[Envelope][]string{
	EnvelopeHookSpecific:        {"hookSpecificOutput", "additionalContext"},
	EnvelopeHookSpecificNoEvent: {"hookSpecificOutput", "additionalContext"},
	EnvelopeFlatCamel:           {"additionalContext"},
	EnvelopeFlatSnake:           {"additional_context"},
}

// Wrap renders text in envelope e for the native hook event name event.
// It always returns valid JSON (never plain text starting with '{' or '['),
// or nil for EnvelopeNone or empty text.
func Wrap(e Envelope, event, text string) ([]byte, error) { return WrapWithMessage(e, event, text, "") }

// WrapWithMessage is Wrap with msg added as the top-level "systemMessage"
// that Claude Code shows the user (only for EnvelopeHookSpecific; other
// envelopes get Wrap's output unchanged).
func WrapWithMessage(e Envelope, event, text, msg string) ([]byte, error) {
	if text == "" || e == EnvelopeNone {
		return nil, nil
	}
	keys, ok := envelopeKeys[e]
	if !ok {
		return nil, fmt.Errorf("unknown injection envelope %q; expected one of %v", e, Envelopes)
	}
	v := map[string]any{keys[len(keys)-1]: text}
	if e == EnvelopeHookSpecific {
		v["hookEventName"] = event
	}
	if len(keys) == 2 {
		v = map[string]any{keys[0]: v}
	}
	if e == EnvelopeHookSpecific && msg != "" {
		v["systemMessage"] = msg
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

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
	keys, ok := envelopeKeys[e]
	if !ok {
		return "", fmt.Errorf("unknown injection envelope %q", e)
	}
	if len(keys) == 2 {
		if v, ok = v[keys[0]].(map[string]any); !ok {
			return "", fmt.Errorf("no %s object in the %s envelope", keys[0], e)
		}
		if ev, _ := v["hookEventName"].(string); e == EnvelopeHookSpecific && ev != event {
			return "", fmt.Errorf("hookEventName is %q, the agent expects %q", ev, event)
		}
	}
	s, ok := v[keys[len(keys)-1]].(string)
	if !ok {
		return "", fmt.Errorf("no %q string in the %s envelope", keys[len(keys)-1], e)
	}
	return s, nil
}
