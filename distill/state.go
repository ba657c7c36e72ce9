package distill

import (
	"sort"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
)

// StateVersion changes whenever State's meaning or its encoding
// (state_codec.go) changes; a stored state of another version is rebuilt
// from the ledger. Version 1 was JSON.
const StateVersion = 2

// Bounds on what a State remembers, so it stays small however long the
// project's history grows.
const (
	maxCalls     = 64
	maxEdits     = 60
	maxFailures  = 100
	maxDone      = 40
	maxTurnTexts = 50
	maxSeen      = 120
	keepDecided  = 6
)

// State is the running distillation of a project's rows. Add folds one row
// in; Handoff reads the result. Marshal and LoadState (state_codec.go) keep
// it in the ledger as a compact binary blob, so the hook path folds in only
// new rows.
//
// Adding a field, here or in Call, Edit, Failure or Done? Write and read it
// in enc.state / dec.state (or the element's enc/dec pair) in
// state_codec.go, at the same position in both, and bump StateVersion.
// TestStateCodecFields fails until every field round-trips. Times are kept
// in UTC without a monotonic reading (Add normalises them), which is what
// LoadState gives back.
type State struct {
	Version   int
	Tool      string
	SessionID int64
	LastAt    time.Time
	Rows      int
	Prompts   int
	Task      string
	TaskAt    time.Time
	// Fallback is the latest prompt or long compaction summary, the task when
	// no prompt is substantive.
	Fallback   string
	FallbackAt time.Time
	Tokens     Tokens

	Seq         int64 // order of the rows folded in
	Calls       map[string]Call
	CallOrder   []string
	FailedCalls map[string]bool
	Edits       []Edit
	TestFails   []int64 // Seq of failing test/build commands (newest last, bounded)
	Failures    []Failure
	FailureKeys []string
	Done        []Done
	Decided     []string
	Seen        []string
	TurnTexts   []string // assistant prose since the latest prompt
	LastText    string   // newest assistant prose at all
}

// Call is what the state keeps of a tool call for pairing.
type Call struct {
	ToolName, Command string
}

// Edit is one file write, kept until the handoff is read: a later error on
// its call removes it.
type Edit struct {
	Path    string
	Call    string
	At      time.Time
	Seq     int64
	Created bool
	Todos   []string
}

// Done is one completed step; Call ties an edit to its call.
type Done struct {
	Text string
	Call string
}

// NewState returns an empty state.
func NewState() *State {
	return &State{Version: StateVersion, Calls: map[string]Call{}, FailedCalls: map[string]bool{}}
}

// Add folds one row into the state.
func (st *State) Add(r *ledger.Row) {
	// The state keeps times as LoadState restores them: UTC, no monotonic
	// reading. Same instant; Handoff and its renderings read times in UTC.
	at := r.Time.UTC()
	if !at.IsZero() && at.After(st.LastAt) {
		st.LastAt = at
	}
	if r.Sidechain && r.Kind != adapters.KindToolCall && r.Kind != adapters.KindToolResult && r.Kind != adapters.KindError {
		// A subagent's prompt and prose are its own; its edits, commands
		// and failures are the session's work (a real 1.0.98 session's five
		// subagents wrote 25 files while the main thread wrote one).
		return
	}
	st.Seq++
	st.Rows++
	if r.Kind != adapters.KindUsage && r.Kind != adapters.KindInjection {
		st.Tool, st.SessionID = r.Tool, r.SessionID
	}
	key := callKey(r)
	switch r.Kind {
	case adapters.KindPrompt:
		st.Prompts++
		if substantive(r.Text) {
			st.Task, st.TaskAt = strings.TrimSpace(r.Text), at
		}
		st.Fallback, st.FallbackAt = r.Text, at
		st.TurnTexts = nil
		st.addDecisions(r.Text)
	case adapters.KindCompaction:
		if len(r.Text) > 40 {
			st.Fallback, st.FallbackAt = r.Text, at
		}
	case adapters.KindText:
		st.TurnTexts = append(st.TurnTexts, r.Text)
		if len(st.TurnTexts) > maxTurnTexts {
			st.TurnTexts = st.TurnTexts[len(st.TurnTexts)-maxTurnTexts:]
		}
		st.LastText = r.Text
		st.addDecisions(r.Text)
	case adapters.KindUsage:
		st.Tokens = Tokens{r.TokensUsed, r.TokensMax}
	case adapters.KindToolCall:
		if r.CallID != "" {
			if _, ok := st.Calls[key]; !ok {
				st.CallOrder = append(st.CallOrder, key)
			}
			st.Calls[key] = Call{ToolName: r.ToolName, Command: clip(r.Command, 400)}
			for len(st.CallOrder) > maxCalls {
				delete(st.Calls, st.CallOrder[0])
				st.CallOrder = st.CallOrder[1:]
			}
		}
		if r.FilePath != "" {
			st.Edits = append(st.Edits, Edit{Path: r.FilePath, Call: key, At: at, Seq: st.Seq, Created: createsFile(r), Todos: todoLines(r.Text)})
			if len(st.Edits) > maxEdits {
				st.Edits = st.Edits[len(st.Edits)-maxEdits:]
			}
			st.addDone(Done{Text: "edited " + r.FilePath, Call: key})
		}
	case adapters.KindToolResult:
		if c, ok := st.Calls[key]; ok && c.Command != "" {
			if i := st.failure(normCmd(c.Command)); i >= 0 {
				st.Failures[i].Resolved = true
			}
			st.addDone(Done{Text: "ran `" + clip(oneLine(c.Command), 80) + "`"})
		}
	case adapters.KindError:
		if r.CallID != "" {
			st.FailedCalls[key] = true
		}
		what, cmd := r.ToolName, r.Command
		if c, ok := st.Calls[key]; ok {
			what, cmd = c.ToolName, c.Command
		}
		if cmd != "" {
			what = cmd
		}
		if what == "" {
			what = "error"
		}
		k := normCmd(what)
		f := Failure{What: oneLine(what)}
		if i := st.failure(k); i >= 0 {
			f = st.Failures[i]
			st.Failures = append(st.Failures[:i], st.Failures[i+1:]...)
			st.FailureKeys = append(st.FailureKeys[:i], st.FailureKeys[i+1:]...)
		}
		f.Count++
		f.Resolved = false
		f.At = at
		f.ExitCode = r.ExitCode
		if e := errorLine(r.Text); e != "" {
			f.Error = e
		}
		st.Failures = append(st.Failures, f)
		st.FailureKeys = append(st.FailureKeys, k)
		if len(st.Failures) > maxFailures {
			st.Failures, st.FailureKeys = st.Failures[1:], st.FailureKeys[1:]
		}
		if isTestCmd(cmd) {
			st.TestFails = append(st.TestFails, st.Seq)
			if len(st.TestFails) > 8 {
				st.TestFails = st.TestFails[len(st.TestFails)-8:]
			}
		}
	}
	if len(st.FailedCalls) > maxCalls {
		// Forget failed calls whose edits and steps have aged out.
		live := map[string]bool{}
		for _, e := range st.Edits {
			live[e.Call] = true
		}
		for _, d := range st.Done {
			live[d.Call] = true
		}
		for k := range st.FailedCalls {
			if !live[k] {
				delete(st.FailedCalls, k)
			}
		}
	}
}

func (st *State) failure(k string) int {
	for i := len(st.FailureKeys) - 1; i >= 0; i-- {
		if st.FailureKeys[i] == k {
			return i
		}
	}
	return -1
}

func (st *State) addDone(d Done) {
	st.Done = append(st.Done, d)
	if len(st.Done) > maxDone {
		st.Done = st.Done[len(st.Done)-maxDone:]
	}
}

func (st *State) addDecisions(text string) {
	if !mayDecide(text) {
		return
	}
	for _, s := range sentences(text) {
		if !decisionRE.MatchString(s) || strings.HasSuffix(s, "?") {
			continue
		}
		k := strings.ToLower(s)
		seen := false
		for _, x := range st.Seen {
			if x == k {
				seen = true
				break
			}
		}
		if seen {
			continue
		}
		st.Seen = append(st.Seen, k)
		if len(st.Seen) > maxSeen {
			st.Seen = st.Seen[len(st.Seen)-maxSeen:]
		}
		st.Decided = append(st.Decided, clip(s, 200))
		if len(st.Decided) > keepDecided {
			st.Decided = st.Decided[len(st.Decided)-keepDecided:]
		}
	}
}

// Handoff reads the distilled handoff out of the state.
func (st *State) Handoff(o Options) Handoff {
	h := Handoff{Tool: st.Tool, SessionID: st.SessionID, LastAt: st.LastAt, Rows: st.Rows, Prompts: st.Prompts,
		Task: st.Task, TaskAt: st.TaskAt, Tokens: st.Tokens}

	// Files: last-write-wins over edits whose call did not fail; a failing
	// test after a file's last edit marks it.
	type fileAcc struct {
		f    File
		last int64
	}
	files := map[string]*fileAcc{}
	var todos []string
	for _, e := range st.Edits {
		if st.FailedCalls[e.Call] {
			continue
		}
		p := relPath(o.Project, e.Path)
		acc, ok := files[p]
		if !ok {
			acc = &fileAcc{f: File{Path: p, Created: e.Created}}
			files[p] = acc
		}
		acc.f.At, acc.last = e.At, e.Seq
		todos = append(todos, e.Todos...)
	}
	for _, acc := range files {
		for _, s := range st.TestFails {
			if s > acc.last {
				acc.f.FailedAfter = true
			}
		}
		h.Files = append(h.Files, acc.f)
	}
	sort.SliceStable(h.Files, func(i, j int) bool { return files[h.Files[i].Path].last > files[h.Files[j].Path].last })
	if len(h.Files) > 10 {
		h.Files = h.Files[:10]
	}

	for i := len(st.Failures) - 1; i >= 0; i-- {
		h.Failures = append(h.Failures, st.Failures[i])
	}
	h.Decisions = append([]string(nil), st.Decided...)

	texts := st.TurnTexts
	if len(texts) == 0 && st.LastText != "" {
		texts = []string{st.LastText} // the last turn had no prose
	}
	var next, last string
	for _, t := range texts {
		for _, s := range sentences(t) {
			last = s
			if nextRE.MatchString(s) {
				next = s
			}
			if strings.HasSuffix(s, "?") {
				h.Questions = append(h.Questions, clip(s, 200))
			}
		}
	}
	if next == "" {
		next = last
	}
	h.Next = clip(next, 300)
	for _, f := range h.Failures {
		if !f.Resolved && f.What != "model API" {
			q := "unresolved: `" + clip(f.What, 80) + "`"
			if f.Error != "" {
				q += " — " + clip(f.Error, 100)
			}
			h.Questions = append(h.Questions, q)
		}
	}
	h.Questions = append(h.Questions, dedupe(todos)...)
	if h.Task == "" && st.Fallback != "" {
		h.Task, h.TaskAt = summaryTask(st.Fallback), st.FallbackAt
	}
	for _, d := range st.Done {
		if d.Call != "" && st.FailedCalls[d.Call] {
			continue
		}
		text := d.Text
		if p, ok := strings.CutPrefix(text, "edited "); ok {
			text = "edited " + relPath(o.Project, p)
		}
		h.Done = append(h.Done, text)
	}
	if len(h.Done) > 12 {
		h.Done = h.Done[len(h.Done)-12:]
	}
	return h
}
