package adapters

import (
	"bytes"
	"io"
	"os"
)

// Sniff guesses the agent that wrote a transcript from its first 64 KB
// ("" when it cannot tell). JSON keys are matched with or without the
// space some writers put after the colon.
func Sniff(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, b)
	b = bytes.ReplaceAll(b[:n], []byte(`": "`), []byte(`":"`))
	has := func(s string) bool { return bytes.Contains(b, []byte(s)) }
	switch {
	case has(`"type":"session_meta"`):
		return "codex"
	case has(`"type":"session.start"`):
		return "copilot-cli"
	case has(`"projectHash"`), has(`"sessionId"`) && has(`"startTime"`):
		return "gemini"
	case has(`# aider chat started at`):
		return "aider"
	case has(`"sessionId"`) && (has(`"type":"user"`) || has(`"type":"assistant"`) || has(`"type":"queue-operation"`)):
		return "claude"
	}
	return ""
}
