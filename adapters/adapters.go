// Package adapters turns each agent's native session store and hook payloads
// into carryover's normalized rows.
//
// One agent per file (claude.go, codex.go, ...): its descriptor (Agent), its
// hook parsing and store reading, and its session lister (in the same file or
// <tool>_list.go); one line in All (agent.go); fixtures in
// testdata/adapters/<tool>/. codex.go is the plain template to copy; Claude's
// hand-written decoder is a speed exception. Every adapter implements
// Adapter; how it reads its store is an optional capability probed by the
// ingest code:
//
//   - LineParser: an append-only JSONL transcript tailed from a byte offset
//     (Claude Code, Codex, Copilot CLI, Gemini CLI's upsert log). Rewritten
//     files (VS Code Copilot) are the same thing: the tailer notices that the
//     file was replaced and re-reads it; row keys make that idempotent.
//   - StoreReader: a store that is not a tailable file (Cursor's SQLite).
//   - HookRecorder: no readable store at all; the hook payloads themselves
//     are the transcript (Windsurf).
//
// An agent without hooks (Aider) implements LineParser or StoreReader only
// and is reached by `carryover handoff`.
package adapters

import (
	"errors"
	"time"
)

// Kind is what a row records.
type Kind string

const (
	KindPrompt     Kind = "prompt"      // a real user request
	KindText       Kind = "text"        // assistant prose
	KindToolCall   Kind = "tool_call"   // the assistant asked to run a tool
	KindToolResult Kind = "tool_result" // a tool's successful result
	KindError      Kind = "error"       // a failed tool call or an API error
	KindCompaction Kind = "compaction"  // the context was compacted
	KindInjection  Kind = "injection"   // carryover's own handoff, seen in the transcript (a delivery receipt)
	KindUsage      Kind = "usage"       // token figures
	KindLimit      Kind = "limit"       // a rate-limit or quota signal with nothing else to record (Row.Limit)
	// The user stopped something. Neither is a failure to retry: the next
	// agent must not redo it without asking. Both are role "tool" with
	// CallID set when they end a tool call (the call's row says what it
	// was), else role "user" with no CallID (the turn was stopped). Text is
	// what the agent was told, clipped (a refusal may carry the user's
	// feedback). Emitted by every adapter whose store records it:
	//   - KindRefused: the user declined a tool call (Claude Code "The user
	//     doesn't want to proceed with this tool use…"; Codex "exec command
	//     rejected by user"; Gemini CLI status cancelled "…did not allow…";
	//     Copilot CLI error code rejected/denied).
	//   - KindInterrupted: the user interrupted the turn or a running call
	//     (Claude Code "[Request interrupted by user]" and its cancel
	//     message; Codex turn_aborted and "aborted by user"; Gemini CLI
	//     status cancelled otherwise; Copilot CLI "abort" and "Operation
	//     aborted by user"; VS Code a request with isCanceled).
	KindRefused     Kind = "refused"
	KindInterrupted Kind = "interrupted"
	// KindHarness is text the agent's harness wrote in the user's role
	// (Claude Code's <task-notification> for a background task or
	// subagent): context, never a request. Role "user"; Text is the
	// notification with its tags, clipped.
	KindHarness Kind = "harness"
)

// Row is one normalized transcript event. Adapters fill what they know;
// the ledger assigns sequence numbers.
type Row struct {
	// Key identifies the row within its session and is stable across
	// re-reads of the same store (a line uuid, a message id + block index,
	// or a byte offset as a last resort). The ledger upserts by it, which is
	// what makes re-reading a replaced or rewritten transcript harmless.
	Key      string
	Time     time.Time
	Role     string // user, assistant, tool, system
	Kind     Kind
	ToolName string
	CallID   string // pairs tool_call with tool_result/error
	FilePath string // file written or edited
	Command  string // shell command run
	ExitCode *int
	Text     string
	// Sidechain marks subagent rows; distill ignores them for the task.
	Sidechain bool
	// TokensUsed / TokensMax are set on KindUsage rows (context fill).
	TokensUsed, TokensMax int64
	// Limit is a rate-limit or quota signal carried by this row (an API
	// error, Codex's rate_limits on a usage row); nil for most rows. It is
	// not stored with the row: the ingest reports it (see limits.go).
	Limit *Limit `json:",omitempty"`
}

// Hook is a hook payload normalized across agents.
type Hook struct {
	Tool           string
	Event          string // the native event name carryover was invoked with
	SessionID      string
	TranscriptPath string
	Cwd            string
	// Project is the project root when the agent says it outright
	// (CLAUDE_PROJECT_DIR); otherwise the caller derives it from Cwd.
	Project string
	Source  string // SessionStart source: startup, resume, clear, compact
	Prompt  string
	// FlushMark is a string the agent writes into its transcript once every
	// event before this hook is on disk (Copilot CLI: the hook's own
	// hook.start line holds the payload's epoch-ms `"timestamp":N`); ""
	// when the agent has none. Agent.AwaitFlush polls for it.
	FlushMark string
	// Rows are rows derived from the payload itself (HookRecorder agents).
	Rows []Row
	// Limit is the limit the event itself reports (Claude Code's
	// StopFailure error kind); nil for most events.
	Limit *Limit `json:",omitempty"`
}

// Env is what adapters may read of the environment.
type Env struct {
	Getenv func(string) string
	Home   string // user's home directory
	// WorkDir is where carryover was started (manual commands; "" on the
	// hook path). Aider keeps no global store: `list --all` finds its
	// history there.
	WorkDir string
	// Descriptions, when set, caches listers' transcript descriptions
	// (`list` keeps them in carryover's home: DescriptionFile, DescribeCached).
	Descriptions DescriptionCache
}

// Adapter is one agent.
type Adapter interface {
	// Name is carryover's name for the agent (`--tool`).
	Name() string
	// ParseHook normalizes a hook's stdin payload. It must not fail on
	// unknown fields and must not echo payload content in its error.
	ParseHook(event string, payload []byte, env Env) (Hook, error)
}

// Transcript is one file the ingest code should tail for a hook.
type Transcript struct {
	Path      string
	SessionID string // native session id the file belongs to
	Sidechain bool
	// MaybeMissing: the file may not exist yet (new session); not an error.
	MaybeMissing bool
}

// LineParser is implemented by agents whose sessions live in JSONL files.
type LineParser interface {
	Adapter
	// Transcripts lists the files to tail for this hook.
	Transcripts(h Hook, env Env) []Transcript
	// ParseLine decodes one complete line. offset is the line's byte offset
	// in its file (for fallback keys). It must never panic; a line it does
	// not understand yields no rows and no error.
	ParseLine(line []byte, offset int64) ([]Row, error)
}

// StoreReader is implemented by agents whose sessions are not tailable
// files; it returns every row of the session (the ledger deduplicates).
type StoreReader interface {
	Adapter
	ReadStore(h Hook, env Env) ([]Row, error)
}

// ErrUnknownTool is returned by Lookup.
var ErrUnknownTool = errors.New("unknown tool")
