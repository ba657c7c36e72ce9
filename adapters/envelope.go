package adapters

import (
	"encoding/json"
	"fmt"
)

// Envelope names how an agent expects injected context on a hook's stdout.
// specs/ rows name one of these; Wrap renders it.
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
	var v any
	switch e {
	case EnvelopeHookSpecific:
		m := map[string]any{"hookSpecificOutput": map[string]string{"hookEventName": event, "additionalContext": text}}
		if msg != "" {
			m["systemMessage"] = msg
		}
		v = m
	case EnvelopeHookSpecificNoEvent:
		v = map[string]any{"hookSpecificOutput": map[string]string{"additionalContext": text}}
	case EnvelopeFlatCamel:
		v = map[string]string{"additionalContext": text}
	case EnvelopeFlatSnake:
		v = map[string]string{"additional_context": text}
	default:
		return nil, fmt.Errorf("unknown injection envelope %q; expected one of %v", e, Envelopes)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
