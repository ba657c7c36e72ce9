package adapters

import (
	"bytes"
	"sort"
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
