// Package adapters turns each agent's native session store and hook payloads
// into carryover's normalized rows.
//
// One agent per file (claude.go, codex.go, ...): its descriptor (Agent), hook
// parsing, store reading and session lister (or <tool>_list.go); a line in
// All (agent.go); fixtures in testdata/adapters/<tool>/. codex.go is the
// template; Claude's hand-written decoder is a speed exception. How an
// adapter reads its store is a capability the ingest probes: LineParser (a
// JSONL transcript tailed from an offset; one rewritten whole is re-read,
// row keys make that idempotent), StoreReader (Cursor's SQLite) or
// HookRecorder (the payloads are the transcript, Windsurf). An agent without
// hooks (Aider) is reached by `carryover handoff` only.
package adapters

import (
	"io"
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
	// The user declined a tool call (Refused) or stopped a turn or call
	// (Interrupted): not a failure to retry without asking. Role "tool" with
	// CallID when it ends a call, else "user"; Text is what the agent was
	// told, clipped (maybe the user's feedback).
	KindRefused     Kind = "refused"
	KindInterrupted Kind = "interrupted"
	KindHarness     Kind = "harness" // text the harness wrote in the user's role (a background task's notification): context, never a request
	KindQueued      Kind = "queued"  // a prompt typed while the agent worked, queued: the request only if no prompt delivers it before the end ("" text: taken back)
	// The user rewound the conversation (Claude Code's Esc-Esc or an edited prompt, Gemini's /rewind, Codex's thread
	// rollback): the session's rows from the row keyed Text up to this one never happened as far as the work goes;
	// Text "turns:N" names the N last prompts' turns instead. The ledger marks them KindAbandoned, which readers skip.
	KindRewind    Kind = "rewind"
	KindAbandoned Kind = "abandoned"
)

// Row is one normalized transcript event; the ledger assigns sequence numbers.
type Row struct {
	// Key identifies the row in its session across re-reads (a line uuid, a
	// message id + block index, a byte offset): the ledger upserts by it.
	Key       string
	Time      time.Time
	Role      string // user, assistant, tool, system
	Kind      Kind
	ToolName  string
	CallID    string // pairs tool_call with tool_result/error
	FilePath  string // file written or edited
	Command   string // shell command run
	ExitCode  *int
	Text      string
	Sidechain bool // a subagent's row; distill ignores it for the task
	// TokensUsed / TokensMax are set on KindUsage rows (context fill).
	TokensUsed, TokensMax int64
	// Limit is a rate-limit or quota signal the ingest reports (not stored).
	Limit *Limit `json:",omitempty"`
}

// Hook is a hook payload normalized across agents.
type Hook struct {
	Tool           string
	Event          string // the native event name carryover was invoked with
	SessionID      string
	TranscriptPath string
	Cwd            string
	Project        string // the project root when the agent says it (CLAUDE_PROJECT_DIR), else from Cwd
	Source         string // SessionStart source: startup, resume, clear, compact
	Prompt         string
	FlushMark      string // written to the transcript once all before the hook is ("" none; AwaitFlush)
	Rows           []Row  // rows derived from the payload itself (HookRecorder agents)
	Limit          *Limit `json:",omitempty"` // the limit the event itself reports; nil for most
}

// Env is what adapters may read of the environment.
type Env struct {
	Getenv       func(string) string
	Home         string           // user's home directory
	WorkDir      string           // where carryover was started ("" hooks): Aider's history is found there
	Descriptions *DescriptionFile // when set, caches listers' transcript descriptions
}

// Adapter is one agent.
type Adapter interface {
	Name() string // carryover's name for the agent (`--tool`)
	// ParseHook normalizes a hook's stdin payload, never failing on unknown
	// fields or echoing payload content in its error.
	ParseHook(event string, payload []byte, env Env) (Hook, error)
}

// Transcript is one file the ingest code should tail for a hook.
type Transcript struct {
	Path         string
	SessionID    string // native session id the file belongs to
	Sidechain    bool
	MaybeMissing bool // the file may not exist yet (new session); not an error
}

// LineParser is implemented by agents whose sessions live in JSONL files.
type LineParser interface {
	Adapter
	Transcripts(h Hook, env Env) []Transcript // the files to tail for this hook
	// ParseLine decodes one complete line at offset (fallback keys); it never
	// panics, and a line it does not understand yields no rows, no error.
	ParseLine(line []byte, offset int64) ([]Row, error)
}

// TailParser is a LineParser whose lines depend on the ones before them (Claude Code's parentUuid tree): the ingest
// parses one tail's lines, from offset from on, with the function it returns, which may read f's bytes before.
type TailParser interface {
	LineParser
	TailParser(f io.ReaderAt, from int64) func(line []byte, offset int64) ([]Row, error)
}

// StoreReader: sessions not in tailable files; every row (the ledger dedups).
type StoreReader interface {
	Adapter
	ReadStore(h Hook, env Env) ([]Row, error)
}
