package adapters

import "encoding/json"

// WrapWithMessage is Wrap with msg added as the top-level "systemMessage"
// that Claude Code shows the user (only for EnvelopeHookSpecific; other
// envelopes get Wrap's output unchanged).
func WrapWithMessage(e Envelope, event, text, msg string) ([]byte, error) {
	if msg == "" || e != EnvelopeHookSpecific || text == "" {
		return Wrap(e, event, text)
	}
	b, err := json.Marshal(map[string]any{
		"systemMessage":      msg,
		"hookSpecificOutput": map[string]string{"hookEventName": event, "additionalContext": text},
	})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
