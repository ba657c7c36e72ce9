package adapters

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
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
	return pick(func(a *Agent) string {
		if a.Lister == nil {
			return ""
		}
		return a.Name
	}, true)
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
	var specific, broad []string
	for _, a := range All {
		if a.Sniff == nil || !a.Sniff(head) {
			continue
		}
		if a.SniffBroad {
			broad = append(broad, a.Name)
		} else {
			specific = append(specific, a.Name)
		}
	}
	switch {
	case len(specific) == 1:
		return specific[0]
	case len(specific) == 0 && len(broad) == 1:
		return broad[0]
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
	dec := json.NewDecoder(bytes.NewReader(out))
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("not one JSON object (%v)", err)
	}
	if dec.More() {
		return "", fmt.Errorf("more than one JSON value")
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
