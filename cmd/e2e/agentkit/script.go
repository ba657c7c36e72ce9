package agentkit

// Turn is one scripted model reply: optional text followed by tool calls.
// Every fake model server plays a []Turn in order, one turn per request that
// is not a side request (titles, summaries, compaction), and falls back to a
// plain text reply once the script is exhausted.
type Turn struct {
	Text  string
	Calls []Call
	// InputTokens, when set, is reported as the prompt/input token usage of
	// this turn (used to trigger automatic compaction).
	InputTokens int
}

// Call is one tool call in a scripted turn. Name is the agent's own tool
// name (Claude "Write", Codex "shell"/"apply_patch", Gemini "write_file", ...).
type Call struct {
	Name string
	Args map[string]any
}
