package adapters

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/carryover/carryover/adapters/internal/claudejson"
)

// Claude is the Claude Code adapter.
var Claude Adapter = claude{}

// claudeAgent is what carryover knows about the agent besides its files.
var claudeAgent = &Agent{
	Name:     "claude",
	Display:  "Claude Code",
	Aliases:  []string{"claude-code"},
	Adapter:  Claude,
	Lister:   claudeLister{},
	Envelope: EnvelopeHookSpecific,
	Format: Format{Newest: "2.1.332", Version: JSONVersion, Shapes: []string{
		"Claude Code 1.0.x JSONL (no promptSource; inline isSidechain subagents; top-level agent-*.jsonl)",
		"Claude Code 2.0.x JSONL (compact_boundary, isCompactSummary, <system-reminder> in results)",
		"Claude Code 2.1.x JSONL (promptSource, attachments, <session>/subagents/agent-*.jsonl)",
	}},
	Events: map[string]Class{
		"SessionStart": ClassStart, "UserPromptSubmit": ClassPrompt,
		"PreToolUse": ClassTool, "PostToolUse": ClassTool, "PostToolUseFailure": ClassTool,
		"Stop": ClassStop, "PreCompact": ClassCompact, "SessionEnd": ClassEnd,
		// Fires instead of Stop when the turn ends on an API error; its
		// "error" says which (rate_limit, overloaded, billing_error, …).
		"StopFailure": ClassFailure,
	},
	// Lines of every type carry "sessionId"; Gemini's files do too, so this
	// sniff is broad and yields to theirs.
	Sniff: func(b []byte) bool {
		return containsAll(b, `"sessionId"`) && containsAny(b, `"type":"user"`, `"type":"assistant"`, `"type":"queue-operation"`)
	},
	SniffBroad: true,
	// PostToolUse additionalContext reaches the model (a system message).
	ToolContextEvent: "PostToolUse",
	SystemMessage:    true,
	Launch:           []string{"claude"},
	ContextWindow:    200_000,
	// Cursor and Copilot read CLAUDE.md as well, so it always gets the pointer.
	MemoryFile: "CLAUDE.md", MemoryFileAlways: true,
	// Claude Code prints a hook's systemMessage in the terminal.
	UserMessage: true,
	// Cursor runs Claude Code's ~/.claude/settings.json hooks.
	ForeignHost: func(getenv func(string) string) string {
		if getenv("CURSOR_VERSION") != "" {
			return "Claude Code stub running inside Cursor (CURSOR_VERSION is set); Cursor's own stub handles it"
		}
		return ""
	},
	// `claude -p --resume` drops SessionStart output: the handoff goes out
	// with the first UserPromptSubmit instead, once.
	DeferStartInjection: func(h Hook, getenv func(string) string) bool {
		return h.Source == "resume" && getenv("CLAUDE_CODE_ENTRYPOINT") == "sdk-cli"
	},
	CreateTools: []string{"Write"},
	PlanTools:   []string{"TodoWrite"},
	KnownTypes: set("user", "assistant", "attachment", "system", "summary", "queue-operation", "last-prompt",
		"file-history-snapshot", "mode", "permission-mode", "custom-title", "ai-title", "tag", "progress",
		"relocated", "agent-name", "agent-color", "agent-setting", "isolation-latch", "worktree-state", "pr-link",
		"bridge-session", "attribution-snapshot", "content-replacement", "fork-context-ref",
		// 2.1.332: request bookkeeping (the request as sent repeats the prompt; read as nothing)
		"api-request", "api-request-blob", "api-request-shape", "atis-latch", "tools-used", "cost-state",
		// 2.1.332's loader table of line types besides the conversation's (none carries the user's work)
		"file-history-delta", "continued-in", "resume-head-vouch", "data-flow-records", "data-flow-incomplete",
		"derived-from", "api-request-resumed", "frame-link", "ended-by-model", "artifact-comment-monitor",
		"artifact-autoreact-ledger", "history-suppression", "session-owner", "dev-mods", "memory-mode", "observer-ref",
		"host-row", "repl-mode", "hybrid-organization"),
	PluginEnabled: claudePluginEnabled,
	ProjectEnv:    "CLAUDE_PROJECT_DIR",
}

var (
	_ TailParser  = claude{}
	_ StoreRooter = claude{}
	_ Lister      = claudeLister{}
)

type claude struct{}

func (claude) Name() string { return "claude" }

func (claude) ParseHook(event string, b []byte, env Env) (Hook, error) {
	h, p, err := claudeShapedHook("claude", event, b)
	if err != nil {
		return Hook{}, err
	}
	if env.Getenv != nil {
		h.Project = env.Getenv("CLAUDE_PROJECT_DIR")
	}
	if kind := p.str("error"); kind != "" && strings.EqualFold(h.Event, "StopFailure") {
		msg := p.str("last_assistant_message")
		if d := p.str("error_details"); d != "" {
			msg += "\n" + d
		}
		h.Limit = LimitFromFailure(kind, msg, time.Now())
	}
	return h, nil
}

// LimitFromFailure maps a Claude Code StopFailure error kind ("rate_limit",
// "overloaded", "billing_error", …) and its message to a limit (nil for
// the kinds that are not one).
func LimitFromFailure(kind, message string, at time.Time) *Limit {
	switch kind {
	case "rate_limit":
		return cmp.Or(LimitFromError(message, 429, at), &Limit{Kind: LimitRate, Reached: true})
	case "overloaded":
		return LimitFromError(message, 529, at)
	case "billing_error":
		// Out of credits or over a spend limit: a wall until the user acts.
		return cmp.Or(LimitFromError(message, 0, at), &Limit{Kind: LimitUsage, Reached: true})
	case "unknown", "":
		// Only an error text that says so.
		return LimitFromError(message, APIErrorStatus(message), at)
	}
	return nil
}

// apiErrorRE finds the status in Claude Code's "API Error: 429 {…}";
// 2.1.197 writes "API Error: Request rejected (429) · …" for a 429.
var apiErrorRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*\[?API Error:? ?(?:\(?([1-5][0-9][0-9])\b|[^\n(]{0,60}\(([1-5][0-9][0-9])\))`)
})

// APIErrorStatus is the HTTP status an agent's "API Error: N …" text
// starts with (0 when it has none).
func APIErrorStatus(text string) int {
	if m := apiErrorRE().FindStringSubmatch(text[:min(len(text), 96)]); m != nil {
		n, _ := strconv.Atoi(m[1] + m[2])
		return n
	}
	return 0
}

// StoreRoots is Claude Code's config dir: $CLAUDE_CONFIG_DIR, else ~/.claude.
func (claude) StoreRoots(env Env) []string {
	var roots []string
	if env.Getenv != nil {
		if d := env.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
			roots = append(roots, d)
		}
	}
	if env.Home != "" {
		roots = append(roots, filepath.Join(env.Home, ".claude"))
	}
	return roots
}

// Transcripts is the main transcript plus any subagent files next to it
// (<dir>/<session>/subagents/agent-*.jsonl).
func (claude) Transcripts(h Hook, env Env) []Transcript {
	if h.TranscriptPath == "" {
		return nil
	}
	ts := []Transcript{{Path: h.TranscriptPath, SessionID: h.SessionID, MaybeMissing: true}}
	base := strings.TrimSuffix(h.TranscriptPath, ".jsonl")
	subs, _ := filepath.Glob(filepath.Join(base, "subagents", "agent-*.jsonl"))
	for _, s := range subs {
		ts = append(ts, Transcript{Path: s, SessionID: h.SessionID, Sidechain: true})
	}
	return append(ts, claudeOldSubagents(h.TranscriptPath, h.SessionID)...)
}

// claudeOldSubagents finds the 1.0.x layout: subagent files next to the
// main transcript (<slug>/agent-<id>.jsonl) whose lines carry the parent's
// sessionId. Only the first 4 KB of each is read; at most 256 files are
// looked at (newest first), so a slug directory holding years of them
// costs a bounded few milliseconds on the hook path.
func claudeOldSubagents(main, session string) []Transcript {
	if session == "" || strings.HasPrefix(filepath.Base(main), "agent-") {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(main), "agent-*.jsonl"))
	if len(files) == 0 {
		return nil
	}
	type cand struct {
		path string
		mod  time.Time
	}
	cs := make([]cand, 0, len(files))
	for _, f := range files {
		if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() {
			cs = append(cs, cand{f, fi.ModTime()})
		}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].mod.After(cs[j].mod) })
	if len(cs) > 256 {
		cs = cs[:256]
	}
	want := []byte(`"sessionId":"` + session + `"`)
	var out []Transcript
	buf := make([]byte, 4096)
	for _, c := range cs {
		f, err := os.Open(c.path)
		if err != nil {
			continue
		}
		n, _ := io.ReadFull(f, buf)
		f.Close()
		if bytes.Contains(bytes.ReplaceAll(buf[:n], []byte(`": "`), []byte(`":"`)), want) {
			out = append(out, Transcript{Path: c.path, SessionID: session, Sidechain: true})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// claudeSkip are line types that never carry rows; checked on raw bytes
// before decoding so big metadata lines cost nothing.
var claudeSkip = []string{
	`"type":"queue-operation"`, `"type":"last-prompt"`, `"type":"file-history-snapshot"`,
	`"type":"mode"`, `"type":"permission-mode"`,
}

// claudeSkipped reports whether head contains one of claudeSkip: they all
// start with "type":" so one search finds the candidates.
func claudeSkipped(head []byte) bool {
	const typeKey = `"type":"`
	for i := 0; ; i++ {
		j := bytes.Index(head[i:], []byte(typeKey))
		if j < 0 {
			return false
		}
		i += j
		for _, s := range claudeSkip {
			if len(head)-i >= len(s) && string(head[i:i+len(s)]) == s {
				return true
			}
		}
	}
}

// containsAt is bytes.Contains(s, needle) for a needle whose byte at k is
// rare in transcripts: it looks for that byte first (bytes.Index would
// look for needle[0], and '"' is everywhere in JSON).
func containsAt(s []byte, needle string, k int) bool {
	for i := k; i < len(s); i++ {
		j := bytes.IndexByte(s[i:], needle[k])
		if j < 0 {
			return false
		}
		i += j
		if start := i - k; start+len(needle) <= len(s) && string(s[start:start+len(needle)]) == needle {
			return true
		}
	}
	return false
}

// shellExitRE: the exit code a BashOutput or TaskOutput result reports of a background shell that finished
// ("<status>failed</status>\n\n<exit_code>1</exit_code>"), at a line's start: output quoting the tag is no status.
var shellExitRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^<exit_code>(-?\d+)</exit_code>`) })

// shellExit is a tool result's exit code and kind: an error when a background shell it reports failed. Only a text
// holding the tag meets the expression: a Stop's other results skip compiling and running it (20 KB of Go heap each,
// 70 KB for its backtracker's bitmaps: ~20 page faults a Stop).
func shellExit(text string) (*int, Kind) {
	var m []string
	if strings.Contains(text, "<exit_code>") {
		m = shellExitRE().FindStringSubmatch(text)
	}
	if m == nil {
		return nil, KindToolResult
	}
	n, _ := strconv.Atoi(m[1])
	if n != 0 {
		return intPtr(n), KindError
	}
	return intPtr(n), KindToolResult
}

// exitCodeRE finds a failed command's exit code in a tool error (codex
// and cursor use it too).
var exitCodeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)exit(?:ed with)? code:? (-?\d+)`) })

// claudeBlock is a content block as encoding/json decodes it. ParseLine no
// longer uses it (see claudejson.Block); list_claude.go does.
type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     claudeInput     `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

type claudeInput struct {
	FilePath     string `json:"file_path"`
	NotebookPath string `json:"notebook_path"`
	Command      string `json:"command"`
	Description  string `json:"description"`
	Content      string `json:"content"`
	NewString    string `json:"new_string"`
	Edits        []struct {
		NewString string `json:"new_string"`
	} `json:"edits"`
}

// claudeContextWindow is the context size used for used/max figures.
const claudeContextWindow = 200000

// claudeDecoders reuses decoders (and their buffers) across lines.
var claudeDecoders = sync.Pool{New: func() any { return new(claudejson.Decoder) }}

// ParseLine reads one transcript line. The fields it needs are decoded by
// claudejson.Decoder (adapters/internal/claudejson), which reproduces what the previous
// pickFields + json.Unmarshal implementation gave, and only the text rows
// keep is unquoted. That implementation lives on in claude_oracle_test.go:
// the differential tests and fuzzers (claude_diff_test.go,
// claude_gen_test.go) hold both to the same rows.
func (claude) ParseLine(line []byte, off int64) ([]Row, error) {
	return claudeParseLine(line, off, nil), nil
}

// claudeParseLine is ParseLine; a non-nil link gets the line's uuid and kind.
func claudeParseLine(line []byte, off int64, link *claudeLink) []Row {
	if claudeSkipped(line[:min(len(line), 64)]) {
		if link != nil && link.only {
			return nil
		}
		return claudeScrub(claudeQueue(line, off)) // no uuid
	}
	// Attachments (skill listings, re-attached files: kilobytes each) matter
	// only when they carry carryover's own injection. Their "attachment"
	// key comes before the "type" key, within the envelope's first fields.
	// A queued_command is a prompt typed while Claude Code worked, delivered
	// mid-turn: no user line ever carries it.
	if head := line[:min(len(line), 400)]; containsAt(head, `"attachment":{`, 13) && !containsAt(line, "[CARRYOVER]", 5) &&
		!containsAt(head, `"queued_command"`, 1) {
		if link != nil { // its uuid follows the attachment: the last one
			link.sidechain = bytes.Contains(head, []byte(`"isSidechain":true`))
			link.uuid, link.start = claudeStringAt(line, claudeUUIDKey, bytes.LastIndex), true
		}
		return nil
	}
	d := claudeDecoders.Get().(*claudejson.Decoder)
	var rows []Row
	if link == nil || !link.only {
		rows = claudeParse(d, line, off)
	} else {
		d.Decode(line) // the link alone: claudeBefore reads up to 16 KB of lines on every tail
	}
	if link != nil {
		link.fill(&d.Line, d.Raw, line)
	}
	d.Reset() // drop references into line before pooling
	claudeDecoders.Put(d)
	return claudeScrub(rows)
}

// TailParser parses a tail's lines as ParseLine does and notices a rewind: the user pressed Esc-Esc and went back to
// an earlier prompt, or edited one. Claude Code then appends the new branch as children of an earlier line, so a
// main-thread line (not a tool result: parallel calls' results hang off their own calls) whose parentUuid is not the
// previous main-thread line starts a branch, and the rows of the lines after its parent are abandoned (a KindRewind
// row before the line's rows names the first). The state is one uuid; for the tail's first line it comes from the
// lines in the 16 KB before from, and any doubt is settled by claudeBranchStart, which reads back to the parent. A file
// whose lines do not chain (a parent never written: hand-made or rewritten lines) is looked at no further, so no tail
// reads back more than once. A rewind to the very first prompt writes a null parentUuid, as the first line and a
// compact_boundary do: it is one only after a line that named its parent (files that write null or no parents on
// every line, as hand-made ones do, never chained) and without the boundary's logicalParentUuid.
func (claude) TailParser(f io.ReaderAt, from int64) func([]byte, int64) ([]Row, error) {
	ch := &claudeChain{f: f, from: from}
	return ch.parse
}

type claudeChain struct {
	f       io.ReaderAt
	from    int64
	prev    []byte // the uuid of the last main-thread line (empty: none)
	chained bool   // that line named its parent
	known   bool   // prev is known: a line was read, or the bytes before from looked at
	broken  bool   // the lines do not chain: no rewind is looked for
	spent   int64  // bytes read back past the first 64 KB window, by every fork of this tail (claudeReadBack)
}

func (ch *claudeChain) parse(line []byte, off int64) ([]Row, error) {
	var link claudeLink
	rows := claudeParseLine(line, off, &link)
	if len(link.uuid) == 0 || link.sidechain {
		return rows, nil
	}
	if !ch.known {
		ch.prev, ch.chained, ch.broken = claudeBefore(ch.f, ch.from)
	}
	parent := claudeParent(line)
	if ch.forks(line, parent, &link) {
		key, found := claudeBranchStart(ch.f, parent, off, &ch.spent)
		ch.broken = !found
		if key != "" {
			r := Row{Key: "rewind:" + string(link.uuid), Role: "user", Kind: KindRewind, Text: key}
			if ts := claudeStringAt(line, claudeTimeKey, bytes.LastIndex); ts != nil {
				r.Time, _ = claudeTime(ts)
			}
			rows = append([]Row{r}, rows...)
		}
	}
	ch.prev, ch.known, ch.chained = append(ch.prev[:0], link.uuid...), true, len(parent) > 0
	return rows, nil
}

// forks reports whether a main-thread line with parent starts a branch (see TailParser); with none, only a turn's
// start can (a prompt or a hook attachment: a hand-made assistant line may write null too).
func (ch *claudeChain) forks(line, parent []byte, link *claudeLink) bool {
	switch head := line[:min(len(line), 512)]; {
	case link.toolResult || ch.broken:
		return false
	case len(parent) == 0:
		return ch.chained && link.start && bytes.Contains(head, claudeNullParent) && !bytes.Contains(head, []byte(`"logicalParentUuid"`))
	}
	return !bytes.Equal(parent, ch.prev)
}

// claudeLink is what the rewind check needs of a line: its uuid, and whether it is a subagent's, a tool result or a
// turn's start (a prompt or an attachment). only, set by the caller: the line's rows are not wanted.
type claudeLink struct {
	uuid                         []byte // in the line
	sidechain, toolResult, start bool
	only                         bool
}

// fill sets link from line, decoded as l. A prompt stored anew (2.1.332) is written under a fresh uuid with
// sentAsUuid, the one it was sent as and its children's parentUuid: the chain goes on from that one (else a false
// rewind back to the first copy). Only prompts are looked at (no tool result, meta line or compact summary): the
// 16 KB a tail's check reads cost the same as before.
func (link *claudeLink) fill(l *claudejson.Line, raw, line []byte) {
	link.uuid, link.sidechain = l.UUID.Of(raw), l.IsSidechain
	for _, b := range l.Message.Blocks[:l.Message.NBlocks] {
		link.toolResult = link.toolResult || rawEqual(b.Type.Of(raw), "tool_result")
	}
	if link.start = !link.toolResult && !l.IsMeta && !l.IsCompactSummary && rawEqual(l.Type.Of(raw), "user"); !link.start {
		return
	}
	if sent := claudeStringAt(line, claudeSentAsKey, bytes.Index); sent != nil {
		link.uuid = sent
	}
}

// claudeParent is a line's parentUuid (empty: null or absent); Claude Code writes it first.
func claudeParent(line []byte) []byte {
	return claudeStringAt(line[:min(len(line), 512)], claudeParentKey, bytes.Index)
}

var claudeParentKey, claudeUUIDKey, claudeTimeKey = []byte(`"parentUuid":"`), []byte(`"uuid":"`), []byte(`"timestamp":"`)
var claudeNullParent, claudeSentAsKey = []byte(`"parentUuid":null`), []byte(`"sentAsUuid":"`)

// claudeStringAt is the string value after key in b, the occurrence find picks (nil: none).
func claudeStringAt(b, key []byte, find func(s, sep []byte) int) []byte {
	i := find(b, key)
	if i < 0 {
		return nil
	}
	v := b[i+len(key):]
	return v[:max(0, bytes.IndexByte(v, '"'))]
}

// claudeBefore reads the complete lines in the 16 KB before offset end: the uuid of the last main-thread line, whether
// it named its parent, and whether any of them fails to chain to the main-thread line before it (broken; tool results
// aside). A turn ends on short lines (a reply, a turn_duration); a longer last line costs claudeBranchStart's read back.
func claudeBefore(f io.ReaderAt, end int64) (prev []byte, chained, broken bool) {
	buf := make([]byte, min(end, 16<<10))
	start := end - int64(len(buf))
	if n, _ := f.ReadAt(buf, start); n != len(buf) {
		return nil, false, false
	}
	var want []byte // the parentUuid of the later main-thread line, if it is no tool result
	for len(buf) > 0 {
		i := bytes.LastIndexByte(buf[:len(buf)-1], '\n')
		if i < 0 && start > 0 {
			break // the first line is cut
		}
		l := buf[i+1:]
		link := claudeLink{only: true}
		claudeParseLine(l, start+int64(i+1), &link)
		if len(link.uuid) > 0 && !link.sidechain {
			if len(want) > 0 && !bytes.Equal(want, link.uuid) {
				return prev, chained, true
			}
			if prev == nil {
				prev, chained = link.uuid, len(claudeParent(l)) > 0
			}
			if want = nil; !link.toolResult {
				want = claudeParent(l)
			}
		}
		buf = buf[:i+1]
	}
	return prev, chained, false
}

// claudeBranchStart finds, before offset end, the line whose uuid is parent, or for no parent the last main-thread
// line that has none and is no compact_boundary (the conversation's first): found, and the key of the first
// main-thread row after the parent (from the first line on), where the branch a rewind abandoned starts ("" when
// nothing there made rows).
func claudeBranchStart(f io.ReaderAt, parent []byte, end int64, spent *int64) (key string, found bool) {
	want := append(append(append([]byte{}, claudeUUIDKey...), parent...), '"')
	match := func(b []byte, _ bool) int { return bytes.LastIndex(b, want) }
	if len(parent) == 0 {
		match = claudeRoot
	}
	at := claudeReadBack(f, end, match, spent)
	if at < 0 {
		return "", false
	}
	return claudeFirstRow(f, at, end, len(parent) == 0), true
}

// claudeReadBack is the offset of match's find in the bytes before end ((-1: none), read back 64 KB, then in 1 MB
// windows up to 64 MB back: only a fork costs this, and 64 MB is about 20 ms. spent counts the bytes past the first
// window that every fork of one tail read, and stops at 64 MB too: a cold ingest of a 16 MB file whose every prompt
// forked far back read it again per fork (quadratic: TestFaultMatrix/kill-9 ran for 20 minutes), so a hook's time
// stays bounded; a rewind further back, or past the tail's budget, is missed. match gets a window and whether it
// starts the file.
func claudeReadBack(f io.ReaderAt, end int64, match func(b []byte, first bool) int, spent *int64) int64 {
	buf := make([]byte, min(end, 64<<10))
	for stop := end; end-stop < 64<<20 && (stop == end || *spent < 64<<20); {
		start := max(0, stop-int64(len(buf)))
		b := buf[:stop-start]
		if n, _ := f.ReadAt(b, start); n != len(b) {
			return -1
		}
		if stop != end {
			*spent += int64(len(b))
		}
		if i := match(b, start == 0); i >= 0 {
			return start + int64(i)
		} else if start == 0 {
			return -1
		}
		if len(buf) < 1<<20 {
			buf = make([]byte, min(end, 1<<20))
		}
		stop = start + 1024 // windows overlap: a key cut by one is whole in the next
	}
	return -1
}

// claudeRoot is where in b the last main-thread line with a null parentUuid and no logicalParentUuid (not a
// compact_boundary) starts (-1: none); its start must be in b (or b starts the file: first).
func claudeRoot(b []byte, first bool) int {
	for i := bytes.LastIndex(b, claudeNullParent); i >= 0; i = bytes.LastIndex(b[:i], claudeNullParent) {
		ls := bytes.LastIndexByte(b[:i], '\n') + 1
		head := b[ls:min(len(b), ls+512)]
		if (ls > 0 || first) && i-ls < 512 && !bytes.Contains(head, []byte(`"isSidechain":true`)) &&
			!bytes.Contains(head, []byte(`"logicalParentUuid"`)) {
			return ls
		}
	}
	return -1
}

// claudeFirstRow is the key of the first main-thread row of the lines from off up to end: from the line holding off
// on, or from the one after it.
func claudeFirstRow(f io.ReaderAt, off, end int64, from bool) string {
	r := bufio.NewReaderSize(io.NewSectionReader(f, off, end-off), 64<<10)
	for !from {
		l, err := r.ReadSlice('\n')
		off, from = off+int64(len(l)), err != bufio.ErrBufferFull
	}
	for {
		l, err := r.ReadBytes('\n')
		for _, row := range claudeParseLine(bytes.TrimSuffix(l, []byte("\n")), off, nil) {
			if !row.Sidechain { // an inline subagent's lines sit between its call and result
				return row.Key
			}
		}
		if off += int64(len(l)); err != nil {
			return ""
		}
	}
}

// claudeQueue reads a queue-operation line: a prompt typed while Claude Code worked enters the queue ("enqueue", its
// content), leaves it delivered ("dequeue", then a user line; "remove", then a queued_command attachment) or is taken
// back into the input box ("popAll"). The delivering prompt row follows, so only a prompt still queued when the
// session ended stays the user's unanswered request (KindQueued); popAll empties the queue (a row with no text).
// Slash and shell commands and the harness's notifications are never requests.
func claudeQueue(line []byte, off int64) []Row {
	head := line[:min(len(line), 96)]
	pop := bytes.Contains(head, []byte(`"operation":"popAll"`))
	if !pop && !bytes.Contains(head, []byte(`"operation":"enqueue"`)) {
		return nil
	}
	var q struct {
		Timestamp   string
		Content     json.RawMessage
		IsSidechain bool
	}
	if json.Unmarshal(line, &q) != nil || q.IsSidechain {
		return nil
	}
	r := Row{Key: "queue:" + strconv.FormatInt(off, 10), Role: "user", Kind: KindQueued}
	r.Time, _ = time.Parse(time.RFC3339Nano, q.Timestamp)
	var s string
	switch {
	case pop:
	case json.Unmarshal(q.Content, &s) == nil:
		if !claudeQueuedRequest(strings.TrimSpace(s)) {
			return nil
		}
		r.Text = promptText(s)
	default:
		if r.Text = blocksPrompt(q.Content); r.Text == "" {
			return nil
		}
	}
	return []Row{r}
}

// claudeQueuedRequest reports whether queued text t is a request: not a slash or shell command, nor the harness's.
func claudeQueuedRequest(t string) bool {
	return t != "" && !strings.HasPrefix(t, "/") && !strings.HasPrefix(t, "!") && !claudeNotRequest([]byte(t)) && !claudeTaskNotification([]byte(t))
}

// claudeParse decodes line with d and returns its rows.
func claudeParse(d *claudejson.Decoder, line []byte, off int64) []Row {
	if !d.Decode(line) {
		return nil // a line we cannot read is skipped, never fatal
	}
	w := claudeRows{d: d, l: &d.Line, off: off, scratch: d.Scratch}
	l := &d.Line
	switch {
	case rawEqual(w.b(l.Type), "user"):
		w.user()
	case rawEqual(w.b(l.Type), "assistant"):
		w.assistant()
	case rawEqual(w.b(l.Type), "attachment"):
		w.attachment()
	case rawEqual(w.b(l.Type), "system"):
		if rawEqual(w.b(l.Subtype), "compact_boundary") {
			r := w.newRow(w.key())
			r.Role, r.Kind = "system", KindCompaction
			r.Text = "context compacted"
			if l.HasCompact {
				r.Text = w.concat("context compacted (", w.str(w.b(l.Compact.Trigger)), ")")
				r.TokensUsed = l.Compact.PreTokens
			}
			w.emit(r)
		}
	}
	d.Scratch = w.scratch[:0] // keep the grown buffer
	return w.rows
}

// claudeRows builds the rows of one decoded line. Their strings are
// unquoted into one buffer (strs), so a line costs one allocation for all
// of them instead of one per string; strings.Builder never changes bytes
// it has handed out, so each row's strings stay valid.
type claudeRows struct {
	d       *claudejson.Decoder
	l       *claudejson.Line
	off     int64
	strs    strings.Builder
	rows    []Row
	scratch []byte // unquoting space (the decoder's, reused)

	keyStr  string // key(), once made
	base    Row    // newRow's template, once made
	hasBase bool
}

// b returns the bytes of a span of the line.
func (w *claudeRows) b(s claudejson.Span) []byte { return s.Of(w.d.Raw) }

// add copies b into strs and returns it as a string.
func (w *claudeRows) add(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if w.strs.Cap() == 0 {
		w.strs.Grow(max(len(b), w.sizeHint()))
	}
	start := w.strs.Len()
	w.strs.Write(b)
	return w.strs.String()[start:]
}

// sizeHint guesses how many bytes the line's row strings take, so that
// strs is allocated once: the raw sizes of the fields rows keep, capped as
// rows clip them (an overestimate: not every field makes a row).
func (w *claudeRows) sizeHint() int {
	l, m := w.l, &w.l.Message
	n := 64 + l.UUID.Len() + 2*m.ID.Len()
	if m.IsText {
		n += min(m.Text.Len(), maxPrompt+1)
	}
	for i := range m.Blocks[:m.NBlocks] {
		b := &m.Blocks[i]
		in := &b.Input
		edit := in.Content.Len() + in.NewString.Len() + in.Todos.Len()
		for _, e := range in.Edits[:in.NEdits] {
			edit += e.Len() + 1
		}
		n += 8 + l.UUID.Len() + b.ID.Len() + b.Name.Len() + b.ToolUseID.Len() + in.FilePath.Len() +
			min(b.Text.Len(), maxPrompt+1) + min(b.Content.Len(), maxResult+1) + min(in.Command.Len(), maxResult+1) +
			2*(min(in.Description.Len(), 201)+min(edit, maxResult+1)) // the edit text is appended to the description
	}
	return min(n, 32<<10)
}

// concat returns the concatenation of ss, in strs.
func (w *claudeRows) concat(ss ...string) string {
	buf := w.scratch[:0]
	for _, s := range ss {
		buf = append(buf, s...)
	}
	w.scratch = buf
	return w.add(buf)
}

// str returns the raw JSON string content unquoted.
func (w *claudeRows) str(raw []byte) string {
	return w.unquote(raw, -1)
}

// unquote returns the raw JSON string content unquoted, up to limit
// bytes as claudejson.AppendUnquoted counts them.
func (w *claudeRows) unquote(raw []byte, limit int) string {
	if limit >= 0 && limit < len(raw) {
		if claudejson.ASCIIRun(raw[:limit], 0) == limit {
			return w.add(raw[:limit]) // plain ASCII up to the limit: as it is
		}
	} else if claudejson.ASCIIRun(raw, 0) == len(raw) {
		return w.add(raw)
	}
	w.scratch, _, _ = claudejson.AppendUnquoted(w.scratch[:0], raw, limit)
	return w.add(w.scratch)
}

// clipped returns clip(unquoted raw, n) but unquotes only the first
// n+clipReach bytes or so: clip(s, n) reads no further than s[n+clipReach]
// (far enough to see a secret crossing the cut; TestClipReadsPrefix holds it
// to that), and a 1 MB Write content needs no more.
func (w *claudeRows) clipped(raw []byte, n int) string {
	return clip(w.unquote(raw, n+clipReach), n)
}

// rawEqual reports whether the raw JSON string content unquotes to s.
func rawEqual(raw []byte, s string) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == s // s is ASCII: invalid UTF-8 never equals it
	}
	var buf [32]byte
	dec, more, _ := claudejson.AppendUnquoted(buf[:0], raw, len(s)+1)
	return !more && string(dec) == s
}

// rawHasPrefix reports whether the raw JSON string content unquotes to a
// string starting with prefix.
func rawHasPrefix(raw []byte, prefix string) bool {
	var buf [32]byte
	dec, _, _ := claudejson.AppendUnquoted(buf[:0], raw, len(prefix))
	return strings.HasPrefix(string(dec), prefix)
}

// contains reports whether the raw JSON string content unquotes to a
// string containing the ASCII needle.
func (w *claudeRows) contains(raw []byte, needle string) bool {
	if bytes.Contains(raw, []byte(needle)) {
		return true // an escape cannot end inside an ASCII run that follows it
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return false // unquoting only replaces invalid UTF-8 by non-ASCII bytes
	}
	w.scratch, _, _ = claudejson.AppendUnquoted(w.scratch[:0], raw, -1)
	return bytes.Contains(w.scratch, []byte(needle))
}

// key is the line's row key: its uuid, else its offset.
func (w *claudeRows) key() string {
	if w.keyStr == "" {
		if w.l.UUID.Len() > 0 {
			w.keyStr = w.str(w.b(w.l.UUID))
		} else {
			w.keyStr = w.add(strconv.AppendInt(append(w.scratch[:0], "off:"...), w.off, 10))
		}
	}
	return w.keyStr
}

// indexKey is key + "#" + i.
func (w *claudeRows) indexKey(i int) string {
	k := w.key()
	buf := append(append(w.scratch[:0], k...), '#')
	w.scratch = strconv.AppendInt(buf, int64(i), 10)
	return w.add(w.scratch)
}

// newRow returns a row with the line's time and sidechain flag set.
func (w *claudeRows) newRow(key string) Row {
	if !w.hasBase {
		ts, ok := claudeTime(w.b(w.l.Timestamp))
		if !ok {
			ts, _ = time.Parse(time.RFC3339Nano, w.str(w.b(w.l.Timestamp)))
		}
		w.base, w.hasBase = Row{Time: ts, Sidechain: w.l.IsSidechain}, true
	}
	r := w.base
	r.Key = key
	return r
}

// claudeTime is time.Parse(time.RFC3339Nano, raw) for the UTC timestamps
// Claude Code writes (2026-11-21T08:59:37.203Z), without making a string
// of raw; ok is false for any other shape (time.Parse decides those).
func claudeTime(raw []byte) (t time.Time, ok bool) {
	n := len(raw)
	if n < len("2006-01-02T15:04:05Z") || raw[n-1] != 'Z' || !claudeTimeSeparators(raw) {
		return t, false
	}
	var v [len(claudeTimeFields)]int
	for i, f := range claudeTimeFields {
		if v[i] = claudeDigits(raw[f.at : f.at+f.n]); v[i] < f.lo || v[i] > f.hi {
			return t, false
		}
	}
	year, month, day := v[0], time.Month(v[1]), v[2]
	if day > claudeMonthDays(year, month) {
		return t, false
	}
	nsec, ok := claudeNanos(raw[19 : n-1])
	if !ok {
		return t, false
	}
	return time.Date(year, month, day, v[3], v[4], v[5], nsec, time.UTC), true
}

// claudeTimeFields are where the digits of year, month, day, hour,
// minute and second stand in 2006-01-02T15:04:05, and their range.
var claudeTimeFields = [...]struct{ at, n, lo, hi int }{
	{0, 4, 0, 9999}, {5, 2, 1, 12}, {8, 2, 1, 31}, {11, 2, 0, 23}, {14, 2, 0, 59}, {17, 2, 0, 59},
}

func claudeTimeSeparators(raw []byte) bool {
	return raw[4] == '-' && raw[7] == '-' && raw[10] == 'T' && raw[13] == ':' && raw[16] == ':'
}

// claudeDigits is the number b spells, -1 unless b is all digits.
func claudeDigits(b []byte) int {
	v := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return -1
		}
		v = v*10 + int(c-'0')
	}
	return v
}

func claudeMonthDays(year int, month time.Month) int {
	switch month {
	case time.February:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}

// claudeNanos reads the fraction after the seconds: none, or "." and 1
// to 9 digits, scaled to nanoseconds.
func claudeNanos(frac []byte) (int, bool) {
	if len(frac) == 0 {
		return 0, true
	}
	if frac[0] != '.' || len(frac) < 2 || len(frac) > 10 {
		return 0, false
	}
	nsec := claudeDigits(frac[1:])
	for range 10 - len(frac) {
		nsec *= 10
	}
	return nsec, nsec >= 0
}

func (w *claudeRows) emit(r Row) {
	if w.rows == nil {
		// Room for the most rows this line can yield.
		n := 1
		if m := &w.l.Message; !m.IsText {
			n = m.NBlocks
			if rawEqual(w.b(w.l.Type), "assistant") {
				n++ // the usage row
			}
		}
		w.rows = make([]Row, 0, max(n, 1))
	}
	w.rows = append(w.rows, r)
}

func (w *claudeRows) user() {
	l := w.l
	m := &l.Message
	if !l.HasMessage || l.IsMeta {
		return
	}
	harness := l.Origin.Len() > 0 && claudeOriginHarness(w.b(l.Origin))
	if m.IsText {
		w.userText(w.b(m.Text), harness)
		return
	}
	image, texts := -1, len(w.rows)
	for i := range m.Blocks[:m.NBlocks] {
		b := &m.Blocks[i]
		switch {
		case rawEqual(w.b(b.Type), "tool_result"):
			w.toolResult(i, b)
		case rawEqual(w.b(b.Type), "text"):
			w.userBlockText(i, w.b(b.Text), harness)
		case rawEqual(w.b(b.Type), "image"):
			image = i
		}
	}
	w.imagePrompt(image, len(w.rows) > texts || harness)
}

// imagePrompt: an image (block i; -1 none) pasted with no words (they would be a text block: said) is a request of
// its own.
func (w *claudeRows) imagePrompt(i int, said bool) {
	if i >= 0 && !said && !w.hasToolResult() && !w.l.IsSidechain {
		w.textRow(w.indexKey(i), "user", KindPrompt, imageOnly)
	}
}

// imageOnly is the text of a prompt that is an image alone: the handoff cannot carry its bytes.
const imageOnly = "[image]"

// textRow emits a row of role, kind and text.
func (w *claudeRows) textRow(key, role string, kind Kind, text string) {
	r := w.newRow(key)
	r.Role, r.Kind, r.Text = role, kind, text
	w.emit(r)
}

// claudeNotRequest reports user text that the TUI, a `!` shell command or
// a `#` memory note wrote: not a request.
func claudeNotRequest(s []byte) bool {
	return rawHasPrefix(s, "<local-command-") || rawHasPrefix(s, "<bash-") || rawHasPrefix(s, "<user-memory-input>")
}

// userText reads a user message whose content is one string.
func (w *claudeRows) userText(s []byte, harness bool) {
	l := w.l
	switch {
	case harness:
		w.textRow(w.key(), "user", KindHarness, w.clipped(s, maxText))
	case l.IsCompactSummary:
		w.textRow(w.key(), "system", KindCompaction, w.clipped(s, maxText))
	case rawHasPrefix(s, "<command-"):
		if req, ok := claudeCommandPrompt(w.str(s)); ok {
			w.textRow(w.key(), "user", KindPrompt, promptText(req))
		}
	case rawHasPrefix(s, "[Request interrupted by user for tool use"):
		// follows the tool_result that already says so (KindRefused, KindInterrupted)
	case rawHasPrefix(s, "[Request interrupted by user"):
		w.stopRow(w.key(), s)
	case claudeTaskNotification(s):
		w.textRow(w.key(), "user", KindHarness, w.clipped(s, maxText))
	case claudeNotRequest(s):
	case l.PromptSource.Len() == 0 && l.IsSidechain && l.HasParent:
		// a subagent's only prompt is its first line (its task)
	case w.contains(s, "[CARRYOVER]") && IsCarryoverText(w.str(s)):
		w.textRow(w.key(), "user", KindInjection, w.firstLine(s))
	default:
		w.textRow(w.key(), "user", KindPrompt, w.prompt(s))
	}
}

// userBlockText reads the text block i of a user message.
func (w *claudeRows) userBlockText(i int, t []byte, harness bool) {
	l := w.l
	switch {
	case l.IsCompactSummary:
		w.textRow(w.indexKey(i), "system", KindCompaction, w.clipped(t, maxText))
	case l.PromptSource.Len() == 0 && (w.hasToolResult() || (l.IsSidechain && l.HasParent)):
	case rawHasPrefix(t, "[Request interrupted by user for tool use"):
		// the tool_result before it says so
	case rawHasPrefix(t, "[Request interrupted by user"):
		w.stopRow(w.indexKey(i), t)
	case harness || claudeTaskNotification(t):
		w.textRow(w.indexKey(i), "user", KindHarness, w.clipped(t, maxText))
	default:
		w.textRow(w.indexKey(i), "user", KindPrompt, w.prompt(t))
	}
}

// toolResult reads the tool_result block i.
func (w *claudeRows) toolResult(i int, b *claudejson.Block) {
	r := w.newRow(w.indexKey(i))
	r.Role, r.CallID, r.Kind = "tool", w.str(w.b(b.ToolUseID)), KindToolResult
	if !b.IsError {
		w.scratch = w.toolResultText(w.scratch[:0], b.Content, maxResult+clipReach)
		r.Text = clip(w.add(w.scratch), maxResult)
		r.ExitCode, r.Kind = shellExit(r.Text)
		w.emit(r)
		return
	}
	r.Kind = KindError
	// The exit code may be anywhere: unquote the whole text.
	w.scratch = w.toolResultText(w.scratch[:0], b.Content, -1)
	if k := claudeStopped(w.scratch); k != "" {
		r.Kind = k // the user stopped it: not a failure
	} else if m := exitCodeRE().FindSubmatch(w.scratch); m != nil {
		n, _ := strconv.Atoi(string(m[1]))
		r.ExitCode = intPtr(n)
	}
	r.Text = clip(w.add(w.scratch[:min(len(w.scratch), maxResult+clipReach)]), maxResult)
	w.emit(r)
}

// stopRow records the "[Request interrupted by user]" marker: the user
// stopped the turn (KindInterrupted, no call).
func (w *claudeRows) stopRow(key string, raw []byte) {
	if w.l.IsSidechain {
		return
	}
	r := w.newRow(key)
	r.Role, r.Kind, r.Text = "user", KindInterrupted, w.firstLine(raw)
	w.emit(r)
}

// prompt is a prompt row's text from the raw string: clipped as it is,
// or, when it may hold more than PastedLines lines (escaped newlines
// counted on the raw bytes, an upper bound unless \u000a is used),
// unquoted whole and bounded (promptText).
func (w *claudeRows) prompt(raw []byte) string {
	if bytes.Count(raw, []byte(`\n`)) < PastedLines && !bytes.Contains(raw, []byte(`\u000`)) {
		return w.clipped(raw, maxPrompt)
	}
	return w.add([]byte(promptText(w.str(raw))))
}

// hasToolResult reports whether the line's content holds a tool_result
// block (its text blocks are then the harness's, never a prompt).
func (w *claudeRows) hasToolResult() bool {
	m := &w.l.Message
	for i := range m.Blocks[:m.NBlocks] {
		if rawEqual(w.b(m.Blocks[i].Type), "tool_result") {
			return true
		}
	}
	return false
}

// firstLine returns the first line of the unquoted raw string, clipped to
// 200 bytes (reading no more than that of it).
func (w *claudeRows) firstLine(raw []byte) string {
	const n = 200
	s, _, _ := claudejson.AppendUnquoted(w.scratch[:0], raw, n+clipReach)
	w.scratch = s
	if i := bytes.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return clip(w.add(s), n)
}

// toolResultText appends the text of a tool_result content (a string or a
// list of text parts, joined by newlines) to dst, stopping after limit
// bytes like claudejson.AppendUnquoted. It reproduces the old code, which unquoted a
// long string only up to a cut after 2*maxResult of its raw bytes (so a
// long text is that prefix, even if it unquotes to fewer than maxResult
// bytes), and which yielded "" for a list that did not decode.
func (w *claudeRows) toolResultText(dst []byte, content claudejson.Span, limit int) []byte {
	raw := w.b(content)
	switch {
	case len(raw) > 0 && raw[0] == '"':
		if cut, ok := claudeStringPrefix(raw, 2*maxResult); ok {
			dst, _, _ = claudejson.AppendUnquoted(dst, raw[1:cut], limit)
			return dst
		}
		dst, _, _ = claudejson.AppendUnquoted(dst, raw[1:len(raw)-1], limit)
		return dst
	case len(raw) > 0 && raw[0] == '[':
		parts, ok := w.d.ToolResultParts(content)
		if !ok {
			return dst
		}
		start := len(dst)
		for _, p := range parts {
			if !rawEqual(w.b(p.Type), "text") {
				continue
			}
			if limit >= 0 && len(dst)-start >= limit {
				break
			}
			if len(dst) > start {
				dst = append(dst, '\n')
			}
			room := -1
			if limit >= 0 {
				room = max(limit-(len(dst)-start), 0)
			}
			dst, _, _ = claudejson.AppendUnquoted(dst, w.b(p.Text), room)
		}
	}
	return dst // null, absent, or another type: no text
}

// claudeStringPrefix is where the old code cut a long tool_result string
// literal raw before unquoting it: after about n raw bytes, between
// escapes. ok is false when it did not cut: raw is short, or the cut
// split a \uXXXX escape (the cut literal then failed to decode, and the
// old code decoded the whole string instead).
func claudeStringPrefix(raw []byte, n int) (cut int, ok bool) {
	if len(raw) <= n+64 || raw[0] != '"' {
		return 0, false
	}
	i, lastEsc := 1, -1
	for i < n {
		switch raw[i] {
		case '\\':
			lastEsc = i
			i += 2
		case '"':
			return 0, false // ends early (cannot happen: raw is one long literal)
		default:
			i++
		}
	}
	if lastEsc >= 0 && raw[lastEsc+1] == 'u' && i < lastEsc+6 {
		return 0, false
	}
	return i, true
}

func (w *claudeRows) assistant() {
	l := w.l
	m := &l.Message
	if !l.HasMessage {
		return
	}
	w.usage()
	for i := range m.Blocks[:m.NBlocks] {
		b := &m.Blocks[i]
		switch {
		case rawEqual(w.b(b.Type), "text"):
			w.assistantText(i, w.b(b.Text))
		case rawEqual(w.b(b.Type), "tool_use"):
			w.emit(w.toolUse(i, b))
		}
	}
}

// usage emits the message's token usage, keyed by the message id (Claude
// Code repeats it on every line of a message); a synthetic message has
// none.
func (w *claudeRows) usage() {
	m := &w.l.Message
	if !m.HasUsage || rawEqual(w.b(m.Model), "<synthetic>") || m.ID.Len() == 0 {
		return
	}
	used := m.Usage.Input + m.Usage.CacheCreation + m.Usage.CacheRead + m.Usage.Output
	if used <= 0 {
		return
	}
	r := w.newRow(w.concat("usage:", w.str(w.b(m.ID))))
	r.Role, r.Kind = "assistant", KindUsage
	r.TokensUsed, r.TokensMax = used, claudeContextWindow
	w.emit(r)
}

// assistantText emits text block i; an API error the client wrote as the
// assistant's text is an error row.
func (w *claudeRows) assistantText(i int, raw []byte) {
	if w.blank(raw) {
		return
	}
	text := w.clipped(raw, maxText)
	r := w.newRow(w.blockKey(i))
	r.Role, r.Kind, r.Text = "assistant", KindText, text
	if w.l.IsAPIError {
		r.Kind, r.ToolName = KindError, "model API"
		r.Limit = LimitFromError(text, APIErrorStatus(text), r.Time)
	}
	w.emit(r)
}

// toolUse is the call row of tool_use block i: the file an edit writes,
// the command Bash runs, the description and the edit's text.
func (w *claudeRows) toolUse(i int, b *claudejson.Block) Row {
	r := w.newRow(w.blockKey(i))
	name := w.str(w.b(b.Name))
	r.Role, r.Kind, r.ToolName, r.CallID = "assistant", KindToolCall, name, w.str(w.b(b.ID))
	in := &b.Input
	switch name {
	case "Write", "Edit", "MultiEdit":
		r.FilePath = w.str(w.b(in.FilePath))
	case "NotebookEdit":
		r.FilePath = w.str(w.b(in.NotebookPath))
	case "Bash":
		r.Command = w.clipped(w.b(in.Command), maxResult)
	}
	r.Text = w.clipped(w.b(in.Description), 200)
	if id := w.clipped(w.b(in.BashID), 80) + w.clipped(w.b(in.TaskID), 80); id != "" {
		r.Text = id // BashOutput's, TaskOutput's shell: distill links it to the command that started it
	}
	if edit := w.editText(name, in); edit != "" {
		r.Text = w.concat(r.Text, "\n", edit)
	}
	return r
}

// blockKey is the key of an assistant block: the first keeps the line's.
func (w *claudeRows) blockKey(i int) string {
	if i == 0 {
		return w.key()
	}
	return w.indexKey(i)
}

// blank reports whether the unquoted raw string is only white space. It
// unquotes only until the first non-space.
func (w *claudeRows) blank(raw []byte) bool {
	s, more, _ := claudejson.AppendUnquoted(w.scratch[:0], raw, 64)
	for len(bytes.TrimSpace(s)) == 0 && more {
		s, more, _ = claudejson.AppendUnquoted(w.scratch[:0], raw, 2*len(s))
	}
	w.scratch = s
	return len(bytes.TrimSpace(s)) == 0
}

// editText keeps the new text of an edit, clipped, so distill can see
// TODO/FIXME lines it added: "" or "\n" + the clipped text.
func (w *claudeRows) editText(name string, in *claudejson.Input) string {
	const n = maxResult
	var s []byte
	switch name {
	case "TodoWrite":
		// The agent's plan, raw JSON: distill reads its items and statuses.
		if in.Todos.Len() == 0 {
			return ""
		}
		s = append(w.scratch[:0], w.b(in.Todos)...)
	case "Write", "Edit":
		raw := in.Content
		if name == "Edit" {
			raw = in.NewString
		}
		if raw.Len() == 0 {
			return ""
		}
		s, _, _ = claudejson.AppendUnquoted(w.scratch[:0], w.b(raw), n+clipReach)
	case "MultiEdit":
		// Every edit's new text followed by a newline: as much as clip
		// reads of it.
		if in.NEdits == 0 {
			return ""
		}
		s = w.scratch[:0]
		for _, e := range in.Edits[:in.NEdits] {
			var more bool
			s, more, _ = claudejson.AppendUnquoted(s, w.b(e), max(n+clipReach-len(s), 0))
			if more || len(s) >= n+clipReach {
				break
			}
			s = append(s, '\n')
		}
	default:
		return ""
	}
	w.scratch = s
	return clip(w.add(s), n)
}

func (w *claudeRows) attachment() {
	a, ok := w.d.Attachment(w.l.Attachment)
	if !ok {
		return
	}
	// The text is a whole handoff, of which the row keeps one line: keep
	// it out of strs (the row's strings would hold on to it).
	unquote := func(raw claudejson.Span) string {
		s, _, _ := claudejson.AppendUnquoted(nil, w.b(raw), -1)
		return string(s)
	}
	var text string
	switch {
	case rawEqual(w.b(a.Type), "hook_additional_context"):
		if parts, ok := w.d.StringList(a.Content); ok {
			ss := make([]string, len(parts))
			for i, p := range parts {
				ss[i] = unquote(p)
			}
			text = strings.Join(ss, "\n")
		}
	case rawEqual(w.b(a.Type), "hook_success"):
		text = unquote(a.Stdout)
	case rawEqual(w.b(a.Type), "queued_command"):
		w.queued(a)
		return
	}
	if !IsCarryoverText(text) {
		return
	}
	r := w.newRow(w.key())
	r.Role, r.Kind = "system", KindInjection
	r.Text = carryoverHeader(text) + " via " + w.str(w.b(a.Hook))
	w.emit(r)
}

// queued reads a queued_command attachment (2.1.x): what the user typed
// while Claude Code worked (commandMode "prompt", origin human or none), or
// a background task's notification the harness queued (harness text). A
// prompt with pasted images is a list of blocks: its text blocks are read.
func (w *claudeRows) queued(a claudejson.AttachmentFields) {
	mode := w.b(a.CommandMode)
	harness := rawEqual(mode, "task-notification") || (a.Origin.Len() > 0 && claudeOriginHarness(w.b(a.Origin)))
	if !harness && len(mode) > 0 && !rawEqual(mode, "prompt") {
		return // a `!` shell command, a slash command's expansion: not a request
	}
	text := w.queuedText(w.b(a.Prompt), harness)
	if strings.TrimSpace(text) == "" {
		return
	}
	kind := KindPrompt
	if harness {
		kind, text = KindHarness, clip(text, maxText)
	}
	w.textRow(w.key(), "user", kind, text)
}

// queuedText is a queued_command's prompt p (raw JSON: a string, or a list
// of blocks) as its row's text.
func (w *claudeRows) queuedText(p []byte, harness bool) string {
	switch {
	case len(p) >= 2 && p[0] == '"' && harness:
		return w.clipped(p[1:len(p)-1], maxText)
	case len(p) >= 2 && p[0] == '"':
		if claudeNotRequest(p[1 : len(p)-1]) {
			return ""
		}
		return w.prompt(p[1 : len(p)-1])
	case harness:
		return claudeBlocksText(p)
	}
	return blocksPrompt(p)
}

// blocksPrompt is the prompt of a JSON list of content blocks: its text, or imageOnly for an image alone.
func blocksPrompt(p []byte) string {
	if t := claudeBlocksText(p); t != "" || !bytes.Contains(p, []byte(`"image"`)) {
		return promptText(t)
	}
	return imageOnly
}

// claudeBlocksText joins the text blocks of a JSON list of content blocks.
func claudeBlocksText(raw []byte) string {
	var blocks []struct{ Type, Text string }
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// carryoverHeader returns the "# [CARRYOVER] Last updated …" line of an
// injected handoff (the delivery receipt's identity).
func carryoverHeader(text string) string {
	i := strings.Index(text, "[CARRYOVER]")
	if i < 0 {
		return ""
	}
	// The envelope may have been JSON-escaped in a hook's stdout.
	rest := text[i:]
	if j := strings.IndexAny(rest, "\n\\\""); j >= 0 {
		rest = rest[:j]
	}
	return "# " + strings.TrimSpace(rest)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return clip(s, 200)
}

// claudePluginEnabled is the id (carryover@<marketplace>) of carryover's
// Claude Code plugin when settings (Claude Code's user settings.json)
// enable it, else "".
func claudePluginEnabled(settings []byte) string {
	var s struct {
		Enabled map[string]bool `json:"enabledPlugins"`
	}
	if json.Unmarshal(settings, &s) != nil {
		return ""
	}
	var ids []string
	for id, on := range s.Enabled {
		if on && strings.HasPrefix(id, "carryover@") {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}

// Claude Code transcript shapes carryover reads (see
// ../shared/agents/claude-code.md §3.3 and testdata/adapters/claude/):
//
//   - 1.0.x (2025): no promptSource on prompts; subagents inline in the main
//     file (isSidechain) or in top-level <slug>/agent-<id>.jsonl files whose
//     lines carry the parent's sessionId; custom slash commands echo as
//     <command-message>…<command-name>/x</command-name><command-args>…;
//     prompts may be a list of text blocks.
//   - 2.0.x: the same, with compact_boundary + isCompactSummary and Read
//     results carrying a <system-reminder> the harness appended.
//   - 2.1.x: promptSource on typed and -p prompts, subagents in
//     <session>/subagents/agent-*.jsonl, the compaction summary may be a
//     text block.
//
// A real prompt is therefore a main-thread user line whose content is text
// that is not isMeta, not a tool result, not a harness wrapper and not a
// compaction summary; promptSource only confirms it.

// claudeControlCommands are built-in slash commands that steer the session
// rather than ask for work: their echo is never the request.
var claudeControlCommands = map[string]bool{
	"clear": true, "compact": true, "exit": true, "quit": true, "model": true, "cost": true, "config": true,
	"help": true, "login": true, "logout": true, "status": true, "resume": true, "memory": true,
	"permissions": true, "hooks": true, "mcp": true, "agents": true, "doctor": true, "vim": true, "theme": true,
	"bug": true, "release-notes": true, "terminal-setup": true, "add-dir": true, "export": true, "context": true,
	"usage": true, "rewind": true, "statusline": true, "ide": true, "upgrade": true, "privacy-settings": true,
	"output-style": true, "todos": true, "bashes": true, "continue": true, "fast": true, "effort": true,
	"plugin": true, "sandbox": true, "stats": true, "feedback": true, "rename": true, "tasks": true,
}

// claudeCommandPrompt returns the request carried by a slash-command echo
// (`<command-message>…</command-message><command-name>/x</command-name>
// <command-args>…</command-args>`): its arguments, or "/x" for a command
// without arguments that is not a session control (/init, /review). ok is
// false for control commands, local-command output and anything else.
func claudeCommandPrompt(s string) (string, bool) {
	if !strings.HasPrefix(s, "<command-") {
		return "", false
	}
	name := strings.TrimPrefix(strings.TrimSpace(tagText(s, "command-name")), "/")
	if name == "" || claudeControlCommands[name] {
		return "", false
	}
	if args := strings.TrimSpace(tagText(s, "command-args")); args != "" {
		return args, true
	}
	return "/" + name, true
}

// tagText returns the text between <tag> and </tag> in s ("" when absent).
func tagText(s, tag string) string {
	i := strings.Index(s, "<"+tag+">")
	if i < 0 {
		return ""
	}
	s = s[i+len(tag)+2:]
	if j := strings.Index(s, "</"+tag+">"); j >= 0 {
		return s[:j]
	}
	return s
}

// claudeInterrupted reports the harness's "[Request interrupted by user…]"
// marker, which old versions write as a user text.
func claudeInterrupted(s string) bool {
	return strings.HasPrefix(strings.TrimSpace(s), "[Request interrupted by user")
}

// claudeStopped classifies an is_error tool_result's text from Claude
// Code's fixed messages: REJECT ("The user doesn't want to proceed with this
// tool use…", the user answered No, possibly with feedback) is a refusal;
// CANCEL ("The user doesn't want to take this action right now…", Esc at
// the prompt or during the call) and "[Request interrupted by user…" are
// interruptions. Anything else is an ordinary error ("").
func claudeStopped(text []byte) Kind {
	t := bytesTrimLeft(text)
	switch {
	case hasPrefixFold(t, "The user doesn't want to proceed with this tool use"), hasPrefixFold(t, "The user does not want to proceed with this tool use"):
		return KindRefused
	case hasPrefixFold(t, "The user doesn't want to take this action right now"), hasPrefixFold(t, "[Request interrupted by user"):
		return KindInterrupted
	}
	return ""
}

func bytesTrimLeft(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}

// hasPrefixFold reports whether b starts with p, ASCII case and the
// apostrophe's typographic form (’) ignored.
func hasPrefixFold(b []byte, p string) bool {
	s := strings.ReplaceAll(string(b[:min(len(b), len(p)+8)]), "’", "'")
	return len(s) >= len(p) && strings.EqualFold(s[:len(p)], p)
}

// claudeTaskNotification reports Claude Code's <task-notification> user
// message (a background command's or, from 2.1.33x, a background
// subagent's completion), which the harness writes in the user's role.
func claudeTaskNotification(s []byte) bool {
	return hasPrefixFold(s, "<task-notification>")
}

// claudeOriginHarness reads a user line's "origin" (Claude Code 2.1:
// {"kind":…}; absent or "human" for what the user typed): a
// task-notification, an auto-continuation or a peer agent's message is the
// harness writing in the user's role (Claude Code's own "is this the
// human" test is: not isMeta, no toolUseResult, origin absent or human).
// "channel" (the user writing from another client) stays the user's.
func claudeOriginHarness(raw []byte) bool {
	if len(raw) == 0 || raw[0] != '{' {
		return false
	}
	var o struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return false
	}
	return o.Kind != "" && o.Kind != "human" && o.Kind != "channel"
}

// harnessTags are wrappers the agent harness (not the user or the model)
// puts into transcript text. Their content never reaches a handoff.
var harnessTags = []string{
	"system-reminder", "local-command-stdout", "local-command-stderr", "local-command-caveat",
	"command-name", "command-message", "command-args", "user-prompt-submit-hook",
}

// StripHarness removes harness-inserted blocks (<system-reminder>…</…> and
// friends) from text; an unterminated block (clipped) is cut to the end.
// Text without a '<' is returned as it is, at the cost of one scan.
func StripHarness(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	changed := false
	for _, tag := range harnessTags {
		open, close := "<"+tag+">", "</"+tag+">"
		for {
			i := strings.Index(s, open)
			if i < 0 {
				break
			}
			changed = true
			rest := s[i+len(open):]
			if j := strings.Index(rest, close); j >= 0 {
				s = s[:i] + rest[j+len(close):]
			} else {
				s = s[:i]
			}
		}
	}
	if !changed {
		return s
	}
	return strings.TrimSpace(s)
}

// claudeScrub is the last step of both Claude line parsers (the fast one
// and its oracle): harness text out of every row, prompts that held only
// harness text dropped.
func claudeScrub(rows []Row) []Row {
	out := rows[:0]
	for _, r := range rows {
		switch r.Kind {
		case KindPrompt, KindQueued, KindToolResult, KindError, KindText:
			t := StripHarness(r.Text)
			if r.Kind == KindPrompt && t == "" {
				continue
			}
			r.Text = t
		}
		out = append(out, r)
	}
	return out
}

// ExplicitTranscripts is what `--transcript FILE` reads: FILE itself and,
// for agents that keep subagents in files of their own, those files too
// (a session's subagents are part of its work).
func ExplicitTranscripts(a Adapter, h Hook, env Env) []Transcript {
	if isSQLiteFile(h.TranscriptPath) {
		return []Transcript{} // a database: read by the store reader, never tailed
	}
	ts := []Transcript{{Path: h.TranscriptPath, SessionID: h.SessionID}}
	lp, ok := a.(LineParser)
	if !ok {
		return ts
	}
	for _, t := range lp.Transcripts(h, env) {
		if t.Sidechain && t.Path != h.TranscriptPath {
			ts = append(ts, t)
		}
	}
	return ts
}
