package adapters

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/carryover/carryover/publish/redact"
	"github.com/carryover/carryover/publish/safefile"
)

// Agent is what carryover knows of one agent whatever its version; each
// descriptor lives in its adapter file, All lists them. What varies by
// version or concerns install is in specs/tools.toml.
type Agent struct {
	Name     string           // carryover's name (--tool, --source, tools.toml)
	Display  string           // the name for people
	Aliases  []string         // other names accepted for --source, --target and --launch
	Adapter  Adapter          // parses hook payloads and reads the session store
	Lister   Lister           // lists sessions from the native store; nil when it has none
	Format   Format           // what the adapter reads, written down (shapes by version)
	Envelope Envelope         // how a hook's stdout reaches the model, for every supported version (the hook cannot ask the version)
	Events   map[string]Class // native hook event names (compared case-insensitively) to what they mean; unlisted: ClassOther
	// Sniff reports whether a transcript's first 64 KiB are this agent's
	// (`handoff --transcript`); a SniffBroad one wins only when no other does.
	Sniff         func(head []byte) bool
	SniffBroad    bool
	Launch        []string // the argv that starts the agent on a first message (appended); nil: carryover cannot
	ContextWindow int      // the tokens a resume prompt for the agent is budgeted against; 0: not a resume target
	// MemoryFile is the project file besides AGENTS.md that gets the pointer
	// block when this agent publishes or it exists (always: MemoryFileAlways).
	MemoryFile       string
	MemoryFileAlways bool
	ProjectEnv       string   // the variable set to the project root for hooks ("" none); doctor sets it
	Instructions     []string // other project files read as instructions (the resume prompt carries them)
	// ForeignHost says why this agent's hook stub runs inside another agent
	// ("" when not): agents load each other's hook files.
	ForeignHost      func(getenv func(string) string) string
	ToolContextEvent string // the tool event whose additionalContext reaches the model ("" none): where carryover says the context is filling up
	SystemMessage    bool   // a "systemMessage" in a hook's JSON stdout is shown to the user (limit notices go there, else stderr)
	// DeferStartInjection: a SessionStart's output would be dropped; the
	// handoff goes out with the next prompt event.
	DeferStartInjection func(h Hook, getenv func(string) string) bool
	UserMessage         bool // the agent shows a hook's top-level "systemMessage" to the user (the startup banner goes there; others get it as the first line)
	// AwaitFlush waits, at most until deadline, for the agent to write all
	// before the hook to its transcript, and reports whether it did. Stop, End
	// and Compact wait at most FlushWait more (Copilot CLI: 0.1–1 s late).
	AwaitFlush func(h Hook, env Env, deadline time.Time) bool
	FlushWait  time.Duration
	// CreateTools create the file they name (new, not edited); PlanTools take
	// the agent's task list (raw in the call row's Text). Case-insensitive.
	CreateTools      []string
	PlanTools        []string
	ReadFlag         string // the flag that makes the agent read a file at start ("" none): `carryover run` passes the handoff
	SnapshotAfterRun bool   // no hooks: `carryover run` reads the session into the ledger when the agent exits
	SurveyFromEnd    bool   // the newest session is at the end of the file (one history file per project): a survey reads its tail
	// PluginEnabled is the id of carryover's plugin when the agent's settings
	// enable it (""): its hooks stand in for installed ones.
	PluginEnabled func(settings []byte) string
	// KnownTypes are the line (and payload) types the reader knows; a survey
	// counts others as unknown, a format change's first sign (nil: none).
	KnownTypes    map[string]bool
	DocumentStore func(path string) bool // transcripts a survey only opens (one JSON or SQLite document rewritten whole)
}

// FlushWaitFor is how long a hook of class c waits for the transcript (0: not).
func (a *Agent) FlushWaitFor(c Class) time.Duration {
	if a.AwaitFlush == nil || !slices.Contains([]Class{ClassStop, ClassEnd, ClassCompact}, c) {
		return 0
	}
	return a.FlushWait
}

// Class is what a native hook event means to carryover.
type Class string

const (
	ClassOther   Class = ""        // publish the handoff if anything changed
	ClassStart   Class = "start"   // a session starts: inject the handoff
	ClassPrompt  Class = "prompt"  // a prompt is submitted (a deferred injection goes out)
	ClassTool    Class = "tool"    // per tool call: store rows, publish later
	ClassStop    Class = "stop"    // the agent's turn ended
	ClassEnd     Class = "end"     // the session ends (the agent allows little time)
	ClassCompact Class = "compact" // the context is about to be compacted
	ClassFailure Class = "failure" // the turn failed (API error, interrupt)
)

// Class returns what the native event means for this agent.
func (a *Agent) Class(event string) Class {
	if c, ok := a.Events[event]; ok {
		return c
	}
	for k, c := range a.Events {
		if strings.EqualFold(k, event) {
			return c
		}
	}
	return ClassOther
}

// Is reports whether name is the agent's name or an alias.
func (a *Agent) Is(name string) bool {
	name = strings.ToLower(strings.TrimSpace(name))
	return name == a.Name || slices.Contains(a.Aliases, name)
}

// All is every agent, in display order. Adding one is an adapter file, a
// line here, fixtures and a [[tool]] in specs/tools.toml (README).
var All = []*Agent{
	claudeAgent,
	codexAgent,
	geminiAgent,
	copilotCLIAgent,
	qwenAgent,
	piAgent,
	clineAgent,
	opencodeAgent,
	kiloAgent,
	cursorAgent,
	vscodeAgent,
	windsurfAgent,
	aiderAgent,
	crushAgent,
}

func init() {
	if err := CheckAgents(All); err != nil {
		panic("adapters.All: " + err.Error())
	}
}

// CheckAgents reports the first descriptor that breaks the table's rules: a
// name, display name and adapter, names and aliases used once, a lister for
// every agent whose sessions are files carryover reads or recognises. It
// calls no adapter method: loading the table runs no agent's code.
func CheckAgents(all []*Agent) error {
	seen := map[string]bool{}
	for _, a := range all {
		if a.Name == "" || a.Display == "" || a.Adapter == nil {
			return errorString("an agent has no name, display name or adapter")
		}
		for _, n := range append([]string{a.Name}, a.Aliases...) {
			if seen[n] {
				return fmt.Errorf("name or alias %q is used twice", n)
			}
			seen[n] = true
		}
		_, lines := a.Adapter.(LineParser)
		_, store := a.Adapter.(StoreReader)
		if a.Lister == nil && (lines || store || a.Sniff != nil) {
			return errorString(a.Name + ": its sessions are files carryover reads, so it needs a Lister (list, handoff --source, handoff --transcript)")
		}
	}
	return nil
}

// CreatesFile reports whether toolName, of any agent, creates its file (CreateTools).
func CreatesFile(toolName string) bool {
	return anyTool(toolName, func(a *Agent) []string { return a.CreateTools })
}

// PlanTool reports whether toolName is an agent's task-list tool (PlanTools).
func PlanTool(toolName string) bool {
	return anyTool(toolName, func(a *Agent) []string { return a.PlanTools })
}

func anyTool(name string, list func(*Agent) []string) bool {
	return slices.ContainsFunc(All, func(a *Agent) bool {
		return slices.ContainsFunc(list(a), func(t string) bool { return strings.EqualFold(t, name) })
	})
}

// ByName returns the agent called name (or one of its aliases).
func ByName(name string) (*Agent, bool) {
	i := slices.IndexFunc(All, func(a *Agent) bool { return a.Is(name) })
	if i < 0 {
		return nil, false
	}
	return All[i], true
}

// named is the agent whose name (not alias) is name, else an empty Agent.
func named(name string) *Agent {
	if i := slices.IndexFunc(All, func(a *Agent) bool { return a.Name == name }); i >= 0 {
		return All[i]
	}
	return &Agent{}
}

// ErrUnknownTool is returned by Lookup.
var ErrUnknownTool = errorString("unknown tool")

// Lookup returns the adapter of the agent called name.
func Lookup(name string) (Adapter, error) {
	if a := named(name); a.Adapter != nil {
		return a.Adapter, nil
	}
	return nil, ErrUnknownTool
}

// ListerFor returns the session lister of an agent.
func ListerFor(name string) (Lister, bool) {
	l := named(name).Lister
	return l, l != nil
}

// Names lists every agent's name, sorted.
func Names() []string { return pick(func(a *Agent) string { return a.Name }, true) }

// Displays lists every agent's name for people, in display order.
func Displays() []string { return pick(func(a *Agent) string { return a.Display }, false) }

// ListerNames lists the agents with a session lister, sorted.
func ListerNames() []string {
	return pick(func(a *Agent) string { return map[bool]string{true: a.Name}[a.Lister != nil] }, true)
}

// pick lists what f says of each agent ("" left out), in table order or sorted.
func pick(f func(*Agent) string, sorted bool) []string {
	var out []string
	for _, a := range All {
		if s := f(a); s != "" {
			out = append(out, s)
		}
	}
	if sorted {
		slices.Sort(out)
	}
	return out
}

// InstructionFiles are the agents' MemoryFile and Instructions, in table order, once each.
func InstructionFiles() []string {
	var out []string
	for _, a := range All {
		for _, f := range append([]string{a.MemoryFile}, a.Instructions...) {
			if f != "" && !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// SniffTranscript is the one agent whose Sniff accepts a transcript's first
// bytes, a broad one only when no specific one does; "" when none or several.
func SniffTranscript(head []byte) string {
	for _, broad := range []bool{false, true} {
		var hits []string
		for _, a := range All {
			if a.Sniff != nil && a.SniffBroad == broad && a.Sniff(head) {
				hits = append(hits, a.Name)
			}
		}
		if len(hits) > 0 {
			return map[bool]string{true: hits[0]}[len(hits) == 1]
		}
	}
	return ""
}

// containsAll and containsAny are Sniff helpers.
func containsAll(b []byte, subs ...string) bool {
	return !slices.ContainsFunc(subs, func(s string) bool { return !bytes.Contains(b, []byte(s)) })
}

func containsAny(b []byte, subs ...string) bool {
	return slices.ContainsFunc(subs, func(s string) bool { return bytes.Contains(b, []byte(s)) })
}

// set is a string set (Agent.KnownTypes and other tables).
func set(ss ...string) map[string]bool {
	m := make(map[string]bool, len(ss))
	for _, s := range ss {
		m[s] = true
	}
	return m
}

// Envelope is how an agent expects injected context on a hook's stdout
// (specs/ rows name one); Wrap renders it, Unwrap reads it back.
type Envelope string

const (
	EnvelopeHookSpecific        Envelope = "hook-specific"          // {"hookSpecificOutput":{"hookEventName":E,"additionalContext":T}} (Claude Code, Codex, VS Code Copilot)
	EnvelopeHookSpecificNoEvent Envelope = "hook-specific-no-event" // {"hookSpecificOutput":{"additionalContext":T}} (Gemini CLI)
	EnvelopeFlatCamel           Envelope = "flat-camel"             // {"additionalContext":T} (Copilot CLI)
	EnvelopeFlatSnake           Envelope = "flat-snake"             // {"additional_context":T} (Cursor)
	EnvelopeNone                Envelope = "none"                   // no injection: pointer block or rules file (Windsurf, Aider)
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

// Wrap renders text in envelope e for the native event: valid JSON (never
// plain text starting with '{' or '['), or nil for EnvelopeNone or no text.
func Wrap(e Envelope, event, text string) ([]byte, error) { return WrapWithMessage(e, event, text, "") }

// WrapWithMessage is Wrap with msg as the "systemMessage" shown the user (EnvelopeHookSpecific).
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
	return append(b, '\n'), err
}

// Unwrap reads hook stdout as an agent whose envelope is e does: Wrap's
// inverse, as strict as the agents (one JSON object, the text where e puts
// it); `carryover doctor` checks a start hook's output with it.
func Unwrap(e Envelope, event string, out []byte) (string, error) {
	out = bytes.TrimSpace(out)
	keys, ok := envelopeKeys[e]
	switch {
	case len(out) == 0:
		return "", nil
	case e == EnvelopeNone:
		return "", fmt.Errorf("printed %d bytes, but this agent reads no hook output", len(out))
	case !ok:
		return "", fmt.Errorf("unknown injection envelope %q", e)
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil { // a second value is an error too
		return "", fmt.Errorf("not one JSON object (%v)", err)
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

// ErrBadPayload is returned for hook stdin that is not a JSON object.
var ErrBadPayload = errors.New("hook payload is not a JSON object")

// payload is a decoded hook payload or transcript line with lazy fields.
type payload map[string]json.RawMessage

func decodePayload(b []byte) (payload, error) {
	var p payload
	if err := json.Unmarshal(b, &p); err != nil || p == nil {
		return nil, ErrBadPayload
	}
	return p, nil
}

// claudeShapedHook decodes a hook payload of Claude Code's shape, which most
// agents copied (hook_event_name when the command line names no event).
func claudeShapedHook(tool, event string, b []byte) (Hook, payload, error) {
	p, err := decodePayload(b)
	if err != nil {
		return Hook{}, nil, err
	}
	return Hook{Tool: tool, Event: cmp.Or(event, p.str("hook_event_name")), SessionID: p.str("session_id"),
		TranscriptPath: p.str("transcript_path"), Cwd: p.str("cwd"), Source: p.str("source"), Prompt: p.str("prompt")}, p, nil
}

// str returns the first of keys that holds a non-empty JSON string.
func (p payload) str(keys ...string) string {
	for _, k := range keys {
		var s string
		if raw, ok := p[k]; ok && json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// obj returns the nested object at key, or nil.
func (p payload) obj(key string) payload {
	var o payload
	_ = json.Unmarshal(p[key], &o) // absent or not an object: o stays nil
	return o
}

// num returns the first of keys holding a JSON number.
func (p payload) num(keys ...string) (int64, bool) {
	for _, k := range keys {
		var f float64
		if raw, ok := p[k]; ok && json.Unmarshal(raw, &f) == nil {
			return int64(f), true
		}
	}
	return 0, false
}

func intPtr(n int) *int { return &n }

// exitWith records a command's exit code on its result row (non-zero: an error).
func exitWith(r *Row, n int64) {
	r.ExitCode = intPtr(int(n))
	if n != 0 {
		r.Kind = KindError
	}
}

// clip is redact.Clip: no partial word or secret survives a cut (it reads s
// up to n+clipReach to see a secret crossing it).
func clip(s string, n int) string { return redact.Clip(s, n) }

// Text limits at ingest: the ledger keeps what a handoff can use, not whole
// tool outputs; a parser keeps clipReach past a clip's limit.
const (
	maxPrompt = 8 << 10
	maxText   = 4 << 10
	maxResult = 2 << 10
	clipReach = redact.ClipReach
)

// IsCarryoverText reports whether text is carryover's own handoff (an
// injection receipt, not user content): a handoff's first line ("#
// [CARRYOVER] Last updated <date>…" or "… Session handoff"), blanks aside,
// starting the text or a JSON string, after a tag (a recorded envelope) or
// after the banner line ("carryover · <project> · handoff HO-… from …",
// publish.Banner, placed likewise, then a newline, JSON-escaped or not). A
// prompt merely mentioning [CARRYOVER] or quoting a header further down is not.
func IsCarryoverText(text string) bool {
	return strings.Contains(text, "# [CARRYOVER] ") && carryoverHeaderRE().MatchString(text)
}

var carryoverHeaderRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:\A|[">])[ \t]*(?:carryover(?: · [^"<>\n]*)? · handoff HO-[^"<>\n]*(?:\n|\\n)[ \t]*)?# \[CARRYOVER\] (?:Session handoff|Last updated [0-9])`)
})

// planText is a plan tool's input (PlanTools) for the call row's Text, raw
// JSON for distill ("" for other tools); a JSON string holding JSON is unwrapped.
func planText(name string, raw json.RawMessage) string {
	if !PlanTool(name) || len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return clip(s, maxResult)
	}
	return clip(string(raw), maxResult)
}

// PastedLines is where a prompt becomes a paste (a spec, a log): beyond it
// the row keeps the request around the paste. 40: hand-typed requests in the
// fixtures and realworld corpus are under 30 lines, pastes 100 to thousands.
const PastedLines = 40

// promptText is a prompt row's text: bounded, then clipped.
func promptText(s string) string { return clip(BoundPrompt(s), maxPrompt) }

// BoundPrompt returns s, or for a paste over PastedLines lines the lines
// that carry the request: the first sentence, the paste's title (first
// heading, else first line), the last line when it reads as a request, then
// "(pasted, N lines)". Heading marks go: a paste opens no handoff section.
func BoundPrompt(s string) string {
	n := strings.Count(strings.TrimRight(s, "\n"), "\n") + 1
	if n <= PastedLines {
		return s
	}
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			lines = append(lines, t)
		}
	}
	var out []string
	if len(lines) > 0 {
		out = pasteGist(lines)
	}
	return strings.Join(append(out, "(pasted, "+strconv.Itoa(n)+" lines)"), "\n")
}

// pasteGist is BoundPrompt's lines for a paste's non-blank lines.
func pasteGist(lines []string) (out []string) {
	title, isHead := pasteHeading(lines[0])
	if !isHead {
		out = append(out, clipRunes(firstSentence(title), 200))
		title = pasteTitle(lines)
	}
	if title != "" {
		out = append(out, "Title: "+clipRunes(title, 120))
	}
	last, lastHead := pasteHeading(lines[len(lines)-1])
	if len(lines) > 2 && !lastHead && looksLikeRequest(last) && (len(out) == 0 || last != lines[0]) {
		out = append(out, clipRunes(last, 200))
	}
	return out
}

// pasteHeading is a markdown heading line's text (# to ######), else the line.
func pasteHeading(l string) (string, bool) {
	t := strings.TrimLeft(l, "#")
	if len(t) < len(l) && len(l)-len(t) <= 6 && strings.HasPrefix(t, " ") {
		return strings.TrimSpace(t), true
	}
	return l, false
}

// pasteTitle is the first heading of a paste's first 12 lines, else line 2.
func pasteTitle(lines []string) string {
	for _, l := range lines[1:min(len(lines), 12)] {
		if h, ok := pasteHeading(l); ok {
			return h
		}
	}
	if len(lines) > 1 {
		return lines[1]
	}
	return ""
}

// firstSentence is s up to its first sentence end.
func firstSentence(s string) string {
	for _, end := range []string{". ", "? ", "! ", "。", "？", "！"} {
		if i := strings.Index(s, end); i > 0 {
			s = s[:i+len(strings.TrimRight(end, " "))]
		}
	}
	return s
}

// looksLikeRequest: a short prose line, not code, a list item or a table row.
func looksLikeRequest(l string) bool {
	if utf8.RuneCountInString(l) > 300 || strings.ContainsAny(l[:1], "-*|`{}[]<>/\\;") {
		return false
	}
	return strings.Count(l, " ") >= 2 || utf8.RuneCountInString(l) >= 8 && !strings.ContainsAny(l, "(){};=")
}

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// InProject reports whether dir is project or inside it.
func InProject(dir, project string) bool {
	if project == "" {
		return true
	}
	if dir == "" {
		return false
	}
	dir, project = filepath.Clean(dir), filepath.Clean(project)
	return dir == project || strings.HasPrefix(dir, project+string(filepath.Separator))
}

// Cursor is how far a transcript file has been read, and which file it was.
type Cursor struct {
	Path     string
	Offset   int64
	Dev, Ino uint64
	// Head hashes the file's first bytes (up to headLen): a file replaced in
	// place (same inode) changes it. After an '@' it hashes the tailLen bytes
	// before Offset: a file rewritten in place past Offset with the same
	// first kilobyte changes that (without '@': the head alone is checked).
	Head    string
	HeadLen int64
}

const headLen, tailLen = 1024, 1024

// FileID is an open file's device and inode (a replaced transcript's differ).
func FileID(f *os.File) (dev, ino uint64) { return safefile.FileID(f) }

// MaxLine is the longest line decoded; longer ones are skipped (never buffered whole).
const MaxLine = 64 << 20

var (
	ErrNotRegular   = errors.New("transcript is not a regular file") // a FIFO, device, directory…
	ErrOutsideStore = errors.New("transcript path leads through a symlink out of the agent's session store; not read")
)

// TailResult says what a read of a transcript did.
type TailResult struct {
	Cursor  Cursor
	Reset   bool  // the file was replaced or truncated; reading restarted at 0
	Lines   int   // complete lines handed to fn
	Skipped int   // lines over MaxLine
	Bytes   int64 // bytes consumed
	Partial bool  // stopped at the deadline with more to read
}

// Tailer reads a transcript's complete lines from a cursor, one Next at a
// time, up to the last '\n'; it starts over on a replaced or truncated file
// and stops at the deadline.
type Tailer struct {
	res      TailResult
	f        *os.File
	r        *bufio.Reader // nil: nothing (more) to read
	read     bool          // there was something to read
	a        lineAssembler
	off      int64 // where reading started
	head     string
	deadline time.Time
}

// Parser is lp's line parser for this tail (a TailParser's reads the file before the tail).
func (t *Tailer) Parser(lp LineParser) func([]byte, int64) ([]Row, error) {
	if tp, ok := lp.(TailParser); ok {
		return tp.TailParser(t.f, t.off)
	}
	return lp.ParseLine
}

// OpenTail opens path to read from cur (missing: os.ErrNotExist).
func OpenTail(path string, cur Cursor, deadline time.Time) (*Tailer, error) {
	f, fi, err := openTranscript(path)
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	dev, ino := safefile.FileID(f)
	headBuf := make([]byte, min(size, headLen))
	if _, err := io.ReadFull(f, headBuf); err != nil {
		f.Close()
		return nil, fmt.Errorf("read transcript head: %w", err)
	}
	t := &Tailer{f: f, head: sum8(headBuf), deadline: deadline}
	same, err := cur.unchanged(f, dev, ino, size, t.head, headBuf)
	if err != nil {
		f.Close()
		return nil, err
	}
	if t.off = cur.Offset; !same {
		t.res.Reset, t.off = t.off > 0, 0
	}
	t.res.Cursor = Cursor{Path: path, Offset: t.off, Dev: dev, Ino: ino, Head: t.head, HeadLen: int64(len(headBuf))}
	if same && strings.Contains(cur.Head, "@") {
		t.res.Cursor.Head = cur.Head // nothing new: the same bytes before the same offset
	}
	if t.read = t.off < size; t.read {
		// A hook reads a few KB: the buffer fits what there is (lines are
		// assembled whatever its size).
		t.r = bufio.NewReaderSize(io.NewSectionReader(f, t.off, size-t.off), int(min(size-t.off+1, 256<<10)))
	}
	return t, nil
}

// Next returns the next complete line (valid until the next call) and its
// offset; ok is false at the end, at the deadline (Partial) or before an
// incomplete last line.
func (t *Tailer) Next() (line []byte, off int64, ok bool) {
	for t.r != nil {
		if t.res.Lines&255 == 0 && !t.deadline.IsZero() && time.Now().After(t.deadline) {
			t.res.Partial = true
			break
		}
		chunk, err := t.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			t.a.more(chunk)
			continue
		}
		if err != nil { // io.EOF
			break
		}
		start := t.off + t.a.consumed
		if line, ok := t.a.end(chunk); ok {
			t.res.Lines++
			return line[:len(line)-1], start, true
		}
		t.res.Skipped++
	}
	t.r = nil
	return nil, 0, false
}

// Close ends the read and returns what it did, the cursor past the last line.
func (t *Tailer) Close() (TailResult, error) {
	defer t.f.Close()
	res := t.res
	if !t.read {
		return res, nil
	}
	res.Bytes = t.a.consumed
	if res.Cursor.Offset = t.off + t.a.consumed; res.Cursor.Offset == 0 {
		return res, nil
	}
	sum, err := tailSum(t.f, res.Cursor.Offset)
	if err == nil {
		res.Cursor.Head = t.head + "@" + sum
	}
	return res, err
}

// openTranscript opens the regular file at path (else ErrNotRegular) and
// stats it. The stat refuses a FIFO or device unopened; O_NONBLOCK: one
// swapped in after the stat does not hang the open.
func openTranscript(path string) (f *os.File, fi os.FileInfo, err error) {
	fi, err = os.Stat(path)
	if err == nil && fi.Mode().IsRegular() {
		if f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err != nil {
			return nil, nil, err
		}
		if fi, err = f.Stat(); err == nil && fi.Mode().IsRegular() {
			return f, fi, nil
		}
		f.Close()
	}
	return nil, nil, cmp.Or(err, ErrNotRegular)
}

// sum8 is the hex of b's SHA-256's first 8 bytes.
func sum8(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// tailSum hashes the (up to) tailLen bytes of f before off.
func tailSum(f *os.File, off int64) (string, error) {
	buf := make([]byte, min(off, tailLen))
	if _, err := f.ReadAt(buf, off-int64(len(buf))); err != nil {
		return "", fmt.Errorf("read transcript before the cursor: %w", err)
	}
	return sum8(buf), nil
}

// unchanged reports whether f is the file cur was read from, unchanged up
// to cur.Offset: the same device and inode, the offset within its size, the
// same head (head hashes headBuf; of a file grown since, its first HeadLen
// bytes) and bytes before the offset: a transcript rewritten in place can
// keep its inode, first KB and a size past the offset with other lines
// before it (lost rows; a re-read costs only duplicates).
func (cur Cursor) unchanged(f *os.File, dev, ino uint64, size int64, head string, headBuf []byte) (bool, error) {
	curHead, curTail, hasTail := strings.Cut(cur.Head, "@")
	n := int64(len(headBuf))
	if cur.HeadLen > 0 && cur.HeadLen < n {
		head = sum8(headBuf[:cur.HeadLen])
	}
	if cur.Ino != ino || cur.Dev != dev || cur.Offset > size || cur.HeadLen > n || cur.HeadLen > 0 && curHead != head {
		return false, nil
	}
	if !hasTail || cur.Offset <= 0 {
		return true, nil
	}
	t, err := tailSum(f, cur.Offset)
	return err == nil && t == curTail, err
}

// lineAssembler joins a long line's chunks and skips one over MaxLine.
type lineAssembler struct {
	long     []byte // the line being assembled
	pending  int64  // bytes of the line in progress
	consumed int64  // bytes of complete lines
	skipping bool   // the line in progress is over MaxLine
}

func (a *lineAssembler) more(chunk []byte) {
	a.pending += int64(len(chunk))
	if a.skipping = a.skipping || len(a.long)+len(chunk) > MaxLine; a.skipping {
		a.long = nil
	} else {
		a.long = append(a.long, chunk...)
	}
}

// end completes the line in progress with its last chunk (not ok: over MaxLine;
// a line that fit the reader's buffer is the chunk itself, not copied).
func (a *lineAssembler) end(chunk []byte) (line []byte, ok bool) {
	a.consumed, a.pending = a.consumed+a.pending+int64(len(chunk)), 0
	if ok = !a.skipping; a.long != nil {
		chunk, a.long = append(a.long, chunk...), nil
	}
	a.skipping = false
	return chunk, ok
}

// StoreRooter is an optional capability: where an agent's store is (Confined).
type StoreRooter interface {
	StoreRoots(env Env) []string
}

// Confined applies the hook path's transcript policy: a path through no
// symlink is read wherever it is (custom stores, `handoff --transcript`);
// one through a symlink only when it resolves under one of the agent's store
// roots (as written or resolved: a symlinked ~/.claude works). Adapters
// without StoreRooter are not restricted; a missing path is not judged.
func Confined(a Adapter, env Env, path string) error {
	abs, err := filepath.Abs(path)
	resolved, rerr := filepath.EvalSymlinks(abs)
	sr, ok := a.(StoreRooter)
	if err != nil || rerr != nil || resolved == abs || !ok {
		return nil
	}
	for _, root := range sr.StoreRoots(env) {
		r, err := filepath.EvalSymlinks(root)
		if root != "" && (under(resolved, filepath.Clean(root)) || err == nil && under(resolved, r)) {
			return nil
		}
	}
	return ErrOutsideStore
}

// under: p is dir or inside it (both clean and absolute).
func under(p, dir string) bool { return dir == "/" || InProject(p, dir) }
