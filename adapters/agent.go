package adapters

import (
	"bytes"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Agent is everything carryover knows about one agent that does not depend
// on the agent's version: its names, how its hook events and stdout work,
// how to recognise and start it. Each agent's descriptor lives in its
// adapter file (claude.go, codex.go, ...) beside the parser; All lists them.
// What varies by version or concerns install (hook rows, config paths,
// version detection, hook-file layout) is in specs/tools.toml.
type Agent struct {
	// Name is carryover's name for the agent (--tool, --source, tools.toml).
	Name string
	// Display is the agent's name for people.
	Display string
	// Aliases are other names accepted for --source, --target and --launch.
	Aliases []string
	// Adapter parses the agent's hook payloads and reads its session store.
	Adapter Adapter
	// Lister lists sessions from the native store; nil when it has none.
	Lister Lister
	// Format is what the adapter reads, written down (shapes by version).
	Format Format
	// Envelope is how a hook's stdout reaches the model. It is the same for
	// every version carryover supports, and the hook path cannot afford to
	// ask the agent its version.
	Envelope Envelope
	// Events maps native hook event names (compared case-insensitively) to
	// what they mean to carryover; an event not listed is ClassOther.
	Events map[string]Class
	// Sniff reports whether the first 64 KiB of a transcript file are this
	// agent's (`handoff --transcript` without --source).
	Sniff func(head []byte) bool
	// SniffBroad marks a Sniff that may also accept other agents' files;
	// it wins only when no other agent's Sniff does.
	SniffBroad bool
	// Launch is the argv that starts the agent on a first message (the
	// message is appended); nil when carryover cannot start it.
	Launch []string
	// ContextWindow is the model context (tokens) a resume prompt for the
	// agent is budgeted against; 0 when the agent is not a resume target.
	ContextWindow int
	// MemoryFile is the project file the agent reads besides AGENTS.md that
	// gets carryover's pointer block: written when this agent publishes or
	// the file exists, or always when MemoryFileAlways.
	MemoryFile       string
	MemoryFileAlways bool
	// ProjectEnv is the environment variable the agent sets to the project
	// root for its hooks ("" none): `doctor` sets it when it runs a stub.
	ProjectEnv string
	// Instructions are other project files the agent reads as its
	// instructions (Codex's AGENTS.md, Cursor's .cursorrules): the resume
	// prompt carries them with the memory files (InstructionFiles).
	Instructions []string
	// ForeignHost says why this agent's hook stub is running inside another
	// agent ("" when it is not): agents load each other's hook files.
	ForeignHost func(getenv func(string) string) string
	// ToolContextEvent is the tool event whose additionalContext (in
	// Envelope) reaches the model ("" none): carryover tells the agent there
	// that its context is filling up.
	ToolContextEvent string
	// SystemMessage says a "systemMessage" field in a hook's JSON stdout is
	// shown to the user (carryover's limit notices go there, else stderr).
	SystemMessage bool
	// DeferStartInjection reports that a SessionStart's output would be
	// dropped, so the handoff goes out with the next prompt event instead.
	DeferStartInjection func(h Hook, getenv func(string) string) bool
	// UserMessage marks an agent that shows a hook's top-level
	// "systemMessage" to the user (the startup banner goes there; other
	// agents get it as the injection's first line).
	UserMessage bool
	// AwaitFlush, when set, waits until the agent has written to its
	// transcript everything that happened before the hook fired, at most
	// until deadline, and reports whether it has (false: read what is
	// there; the next event catches up). Hooks of class Stop, End and
	// Compact call it before ingesting, for at most FlushWait, which the
	// hook's internal deadline grows by (still well inside the agent's
	// hook timeout). Copilot CLI writes events.jsonl 0.1–1 s behind its
	// hooks (copilot.go).
	AwaitFlush func(h Hook, env Env, deadline time.Time) bool
	FlushWait  time.Duration
	// CreateTools are the agent's tools whose call creates the file it
	// names (distill tells a new file from an edited one); PlanTools those
	// whose input is the agent's own task list (kept raw in the call row's
	// Text for distill's plan). Compared case-insensitively.
	CreateTools []string
	PlanTools   []string
	// ReadFlag is the command-line flag that makes the agent read a file
	// when it starts ("" none): `carryover run` passes the handoff with it.
	ReadFlag string
	// SnapshotAfterRun marks an agent without hooks: `carryover run` reads
	// its session into the ledger when it exits, as a hook would have.
	SnapshotAfterRun bool
	// SurveyFromEnd: the newest session is at the end of the transcript
	// file (one history file per project), so a survey reads its tail.
	SurveyFromEnd bool
	// PluginEnabled, given the agent's settings file, returns the id of
	// carryover's plugin for the agent when the settings enable it ("" when
	// not): its hooks stand in for installed ones.
	PluginEnabled func(settings []byte) string
	// KnownTypes are the line types (and payload types) the agent's reader
	// knows, whether or not they yield rows; a survey counts a line of
	// another type as unknown, the first sign of a format change. nil: only
	// lines that are not JSON count.
	KnownTypes map[string]bool
	// DocumentStore marks transcripts the survey only opens (one JSON or
	// SQLite document rewritten whole, not JSON lines).
	DocumentStore func(path string) bool
}

// FlushWaitFor is how long a hook of class c waits for the agent's
// transcript to catch up (0: it does not wait).
func (a *Agent) FlushWaitFor(c Class) time.Duration {
	if a.AwaitFlush == nil || (c != ClassStop && c != ClassEnd && c != ClassCompact) {
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

// Is reports whether name is the agent's name or one of its aliases.
func (a *Agent) Is(name string) bool {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == a.Name {
		return true
	}
	for _, al := range a.Aliases {
		if name == al {
			return true
		}
	}
	return false
}

// All is every agent carryover knows, in display order. Adding an agent is
// one adapter file, one line here, its fixtures under testdata/adapters and
// one [[tool]] entry in specs/tools.toml (see README, "Adding an agent").
// CheckAgents runs over it when the package loads.
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

// CheckAgents reports the first descriptor that breaks the table's rules:
// a name and a display name, names and aliases used once, the adapter
// named as the descriptor, and a lister for every agent whose sessions are
// files carryover reads or recognises (list, handoff --source and
// --transcript need it).
func CheckAgents(all []*Agent) error {
	seen := map[string]bool{}
	for _, a := range all {
		if a == nil || a.Name == "" || a.Display == "" {
			return errorString("an agent has no name or display name")
		}
		for _, n := range append([]string{a.Name}, a.Aliases...) {
			if seen[n] {
				return errorString("name or alias " + strconv.Quote(n) + " is used twice")
			}
			seen[n] = true
		}
		if a.Adapter == nil || a.Adapter.Name() != a.Name {
			return errorString(a.Name + ": the descriptor's Adapter is missing or has another name")
		}
		_, lines := a.Adapter.(LineParser)
		_, store := a.Adapter.(StoreReader)
		if a.Lister == nil && (lines || store || a.Sniff != nil) {
			return errorString(a.Name + ": its sessions are files carryover reads, so it needs a Lister (list, handoff --source, handoff --transcript)")
		}
	}
	return nil
}

// CreatesFile reports whether a call of toolName, by any agent, creates
// the file it names (the agents' CreateTools).
func CreatesFile(toolName string) bool {
	return anyTool(toolName, func(a *Agent) []string { return a.CreateTools })
}

// PlanTool reports whether toolName is an agent's task-list tool (the
// agents' PlanTools).
func PlanTool(toolName string) bool {
	return anyTool(toolName, func(a *Agent) []string { return a.PlanTools })
}

func anyTool(name string, list func(*Agent) []string) bool {
	for _, a := range All {
		for _, t := range list(a) {
			if strings.EqualFold(t, name) {
				return true
			}
		}
	}
	return false
}

// ByName returns the agent called name (or one of its aliases).
func ByName(name string) (*Agent, bool) {
	for _, a := range All {
		if a.Is(name) {
			return a, true
		}
	}
	return nil, false
}

// Lookup returns the adapter of the agent called name.
func Lookup(name string) (Adapter, error) {
	for _, a := range All {
		if a.Name == name {
			return a.Adapter, nil
		}
	}
	return nil, ErrUnknownTool
}

// Names lists every agent's name, sorted.
func Names() []string {
	var n []string
	for _, a := range All {
		n = append(n, a.Name)
	}
	sort.Strings(n)
	return n
}

// InstructionFiles are the project files agents read as instructions
// (each agent's MemoryFile and Instructions, in table order, once each).
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

// Displays lists every agent's name for people, in display order.
func Displays() []string {
	var n []string
	for _, a := range All {
		n = append(n, a.Display)
	}
	return n
}

// ListerFor returns the session lister of an agent.
func ListerFor(name string) (Lister, bool) {
	for _, a := range All {
		if a.Name == name && a.Lister != nil {
			return a.Lister, true
		}
	}
	return nil, false
}

// ListerNames lists the agents with a session lister, sorted.
func ListerNames() []string {
	var out []string
	for _, a := range All {
		if a.Lister != nil {
			out = append(out, a.Name)
		}
	}
	sort.Strings(out)
	return out
}

// SniffTranscript guesses the agent that wrote a transcript from its first
// bytes: the one agent whose Sniff accepts them, a broad sniffer only when no
// specific one does; "" when none or several do.
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

// containsAll reports whether b contains every one of subs (a Sniff helper).
func containsAll(b []byte, subs ...string) bool {
	for _, s := range subs {
		if !bytes.Contains(b, []byte(s)) {
			return false
		}
	}
	return true
}

// containsAny reports whether b contains one of subs (a Sniff helper).
func containsAny(b []byte, subs ...string) bool {
	for _, s := range subs {
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}
