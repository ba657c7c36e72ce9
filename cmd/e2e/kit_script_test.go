package e2e

// Turn is one scripted model reply: optional text followed by tool calls.
// Every fake model server plays a []Turn in order, one turn per request that
// is not a side request (titles, summaries, compaction), and falls back to a
// plain text reply once the script is exhausted.
type Turn struct {
	Text  string
	Calls []Call
	// InputTokens, when set, is reported as the prompt/input token usage of
	// this turn (used to trigger automatic compaction, or context levels).
	InputTokens int
	// RateLimited answers this request, and every main request after it,
	// with HTTP 429 in the API's own shape (Anthropic rate_limit_error,
	// OpenAI rate_limit_exceeded with x-ratelimit-* and x-codex-* headers,
	// Gemini RESOURCE_EXHAUSTED): the account has hit its limit.
	RateLimited bool
	// UsedPercent, when set, is the plan usage the OpenAI server reports in
	// x-codex-primary-used-percent (Codex's token_count rate_limits).
	UsedPercent float64
}

// RateLimitReset is when the fake servers' rate limits lift (Unix seconds):
// 2030-01-01 14:20 UTC.
const RateLimitReset = 1893507600

// Call is one tool call in a scripted turn. Name is the agent's own tool
// name (Claude "Write", Codex "shell"/"apply_patch", Gemini "write_file", ...).
type Call struct {
	Name string
	Args map[string]any
}
