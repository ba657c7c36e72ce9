package distill

import (
	"cmp"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
)

// StateVersion changes with State's meaning or encoding (store.go); a stored state of another version is rebuilt. 1
// was JSON; 3 added the goal/latest split, plan, references, action items, failure targets, errors, causes and
// shell-written files; 4 evidence rows, instructions, refusals and the interruption; 5 every other line's evidence;
// 6 failure keys name a runner's program (`npm run build`, was `npm run`); 7 a script's subcommand (`python
// manage.py test`, was `python manage.py`), LastCallSeq; 8 a package manager's script with or without "run" (`npm test`
// = `npm run test`) and rails' subcommand; 9 a test runner's name filter (`jest cart`, `go test -run X`)
// and an exec wrapper's command (`docker compose run web pytest` is pytest's); 10 the offer the user accepted; 11 a
// failure the user declined (Failure.Declined) and the commands started in the background (Background); 13 how the
// session ended (Ended); 14 how many tests a failing run reported (Failure.Tests).
const StateVersion = 14

// Bounds that keep a State small however long the project's history grows.
const (
	maxCalls, maxEdits, maxFailures, maxDone, maxTurnTexts, maxSeen    = 64, 60, 100, 40, 50, 120
	keepDecided, keepSetAside, keepStops, maxPlan, maxRefs, maxActions = 6, 2, 4, 12, 10, 6
	maxInstructions                                                    = 8 // the goal, then the newest of the rest
	maxErrors                                                          = 3 // distinct error lines of one collapsed failure
	// maxSources: a handoff lists at most 6 decisions, 10 references, 6 action
	// items, a plan and 2 set-aside goals (25); twice that leaves room for
	// facts repeated or superseded since.
	maxSources = 50
)

// State is the running distillation of a project's rows: Add folds one row in, Handoff reads the result, and the hook
// path stores it (Marshal, LoadState) to fold only new rows. A new field here or in Call, Edit, Failure or Done goes
// into codec.state (TestStateCodecFields fails until it round-trips) and bumps StateVersion. Times are UTC without a
// monotonic reading (Add normalises them), as LoadState gives them back.
type State struct {
	Version       int
	Tool          string
	SessionID     int64
	LastAt        time.Time
	Rows, Prompts int
	Task          string // the goal (prose.go)
	TaskAt        time.Time
	GoalWeak      bool // a question or short: a fuller request replaces it
	Latest        string
	LatestAt      time.Time
	SetAside      []string
	// PromptSession: the latest prompt's session; AfterBreak: a compaction
	// or a prompt in another session came since the last request.
	PromptSession int64
	Ended         string // EndOf the main thread's last telling row
	Queued        string // a prompt the user queued that no prompt row has delivered yet
	AfterBreak    bool
	Answered      bool // prose or a tool call followed the latest prompt
	// Fallback: the latest prompt (never a compaction summary), the task when none is substantive.
	Fallback   string
	FallbackAt time.Time
	Tokens     Tokens

	Seq           int64 // order of the rows folded in
	Calls         map[string]Call
	CallOrder     []string
	FailedCalls   map[string]bool
	Edits         []Edit
	TestFails     []int64 // Seq of failing test/build commands (newest last, bounded)
	Failures      []Failure
	FailureKeys   []string
	Done          []Done
	Decided, Seen []string
	TurnTexts     []string // assistant prose since the latest prompt
	LastText      string   // newest assistant prose at all
	Plan          []PlanItem
	Refs, Actions []string
	// CauseKey: the newest failure's, until prose explains it or the next
	// prompt; LastTest: the test/build command last run.
	CauseKey, LastTest string

	Instructions []Note // the task's condensed instructions, the goal first
	Refused      []Note // never failures to retry
	Interrupted  Note
	// Evidence rows of the goal, the latest request and the last text (at LastTextSeq); LastPassSeq: the newest
	// passing verification's Seq; AskSeq: the newest request's (not an acknowledgement's); PlanSession: the plan's writer's session; PendingCall: the newest call without a
	// result (what an interruption stopped); StopSeq: the newest refusal's or interruption's Seq.
	TaskRef, LatestRef, LastTextRef       Ref
	LastTextSeq, LastPassSeq, PlanSession int64
	AskSeq, LastCallSeq                   int64 // LastCallSeq: the newest tool call's
	PendingCall                           string
	StopSeq                               int64
	// Accepted: the offer the user's last word accepted ("Want me to make that change?" → "yes please"), their
	// answer and the step; the next action until the agent writes or calls a tool.
	Accepted Note
	// RowRef is the row being folded; TurnRefs are TurnTexts' rows while the two run parallel (nil once an
	// acknowledgement condensed the turn). Sources are the rows of each decision ("d:"), reference ("r:"), action
	// item ("a:"), plan ("p:") and set-aside goal ("s:"), keyed by kind and text, the newest maxSources.
	RowRef   Ref
	TurnRefs []Ref
	Sources  []Note
	// Background: commands started in the background and not killed since (a dev server), the newest maxBackground.
	Background []string
	// Shells: "id\tcommand" of the commands the harness ran in the background (the newest maxBackground): a later
	// read of that shell (Claude Code's BashOutput) reporting an exit code is that command's end.
	Shells []string
}

type Call struct {
	ToolName, Command, FilePath string
}

// Edit is one file write, kept until the handoff is read: a later error on
// its call removes it.
type Edit struct {
	Path, Call       string
	At               time.Time
	Seq              int64
	Created, Deleted bool
	Todos            []string
	Ref              Ref
}

// Done is one completed step; Call ties an edit to its call.
type Done struct{ Text, Call string }

func NewState() *State {
	return &State{Version: StateVersion, Calls: map[string]Call{}, FailedCalls: map[string]bool{}}
}

// Add folds one row into the state: the bookkeeping, then its kind's step.
func (st *State) Add(r *ledger.Row) {
	at := r.Time.UTC() // as LoadState restores it: same instant, no monotonic reading
	if !at.IsZero() && at.After(st.LastAt) {
		st.LastAt = at
	}
	if r.Sidechain && !sessionWork(r.Kind) {
		// A subagent's prompt and prose are its own; its edits, commands and
		// failures are the session's (a real 1.0.98 session's five subagents
		// wrote 25 files while the main thread wrote one).
		return
	}
	st.Seq++
	st.Rows++
	st.RowRef = refOf(r)
	if e, quiet := EndOf(*r); !quiet && !r.Sidechain {
		st.Ended = e
	}
	if r.Kind != adapters.KindUsage && r.Kind != adapters.KindInjection {
		st.Tool, st.SessionID = r.Tool, r.SessionID
	}
	st.addKind(r, at)
	if len(st.FailedCalls) > maxCalls {
		st.forgetFailedCalls()
	}
}

// EndOf is how row r says its session ended when it is the main thread's last telling row: its kind (interrupted,
// refused, compaction, prompt, text: the agent's reply), "limit" or "api" for a model API error, "" for a tool's call,
// result or failure. Quiet rows say nothing: token figures, carryover's injection, harness notes, a limit warning.
func EndOf(r ledger.Row) (end string, quiet bool) {
	switch {
	case r.Kind == adapters.KindLimit:
		return limitEnd(r.Text)
	case r.Kind == adapters.KindError && r.CallID == "" && r.Role != "tool":
		return apiEnd(r), false
	case r.Kind == adapters.KindQueued && r.Text == "": // the queue taken back into the input box
		return "", true
	}
	return endKinds[r.Kind], quietKinds[r.Kind]
}

// endKinds say how a session ended by themselves; quietKinds never do.
var (
	endKinds = map[adapters.Kind]string{adapters.KindInterrupted: "interrupted", adapters.KindRefused: "refused",
		adapters.KindCompaction: "compaction", adapters.KindPrompt: "prompt", adapters.KindText: "text", adapters.KindQueued: "queued"}
	quietKinds = map[adapters.Kind]bool{adapters.KindUsage: true, adapters.KindInjection: true, adapters.KindHarness: true}
)

// apiEnd is how a model API error (no tool's) ended a session: at the limit it names, else "api".
func apiEnd(r ledger.Row) string {
	if adapters.LimitFromError(r.Text, adapters.APIErrorStatus(r.Text), r.Time) != nil {
		return "limit"
	}
	return "api"
}

// limitEnd is "limit" for a limit row's text that says one was reached (Limit.Phrase; a warning, "80 % used", is
// quiet).
func limitEnd(text string) (string, bool) {
	for _, k := range []adapters.LimitKind{adapters.LimitUsage, adapters.LimitRate, adapters.LimitQuota, adapters.LimitOverloaded} {
		if (&adapters.Limit{Kind: k, Reached: true}).Phrase() == text {
			return "limit", false
		}
	}
	return "", true
}

// ending is how the session ended (EndOf), the agent's reply told apart: a completion report ("done"), a question
// to the user ("asked", its closing words end with a question mark, markup aside), else nothing.
func ending(end string, h *Handoff) string {
	if end != string(adapters.KindText) {
		return end
	}
	last := strings.TrimRight(strings.TrimSpace(h.LastWords), "*_`\"') ")
	switch {
	case h.Completed:
		return "done"
	case strings.HasSuffix(last, "?") || strings.HasSuffix(last, "？"):
		return "asked"
	}
	return ""
}

// Ending is how the session of rows ended, as its main thread's last telling row says (EndOf, ending).
func Ending(rows []ledger.Row, h Handoff) string {
	for i := len(rows) - 1; i >= 0; i-- {
		if e, quiet := EndOf(rows[i]); !quiet && !rows[i].Sidechain {
			return ending(e, &h)
		}
	}
	return ""
}

func sessionWork(k adapters.Kind) bool {
	return k == adapters.KindToolCall || k == adapters.KindToolResult || k == adapters.KindError
}

func (st *State) addKind(r *ledger.Row, at time.Time) {
	switch r.Kind {
	case adapters.KindPrompt:
		st.Queued = ""
		st.addPromptRow(r, at)
	case adapters.KindQueued:
		st.Queued = r.Text // delivered, a prompt row follows; taken back, an empty one
	case adapters.KindCompaction:
		st.AfterBreak = true // a summary is never the task
	case adapters.KindText:
		st.modelAnswered()
		st.addTextRow(r)
	case adapters.KindUsage:
		st.Tokens = Tokens{r.TokensUsed, r.TokensMax}
	case adapters.KindToolCall:
		st.modelAnswered()
		st.addCallRow(r, at)
	case adapters.KindToolResult:
		st.addToolResult(r, at)
	case adapters.KindError:
		st.shellEnded(r)
		st.addErrorRow(r, at)
	case adapters.KindRefused:
		st.addStopRow(r, at, "refusal")
	case adapters.KindInterrupted:
		st.addStopRow(r, at, "interrupt")
	} // KindHarness: the harness's text in the user's role, context, never a request
}

// modelAnswered drops the newest failure when it is a model API error (a rate limit, an overload) the model answered
// after: the API let it work again, so it is no approach to avoid. A Claude Code 429 stayed "do not retry as-is" in
// the handoff after the user switched to Codex and Codex finished the task. One look at the last failure: the error
// is the newest one until the model's next text or call.
func (st *State) modelAnswered() {
	if n := len(st.Failures) - 1; n >= 0 && st.Failures[n].What == "model API" {
		st.Failures, st.FailureKeys = st.Failures[:n], st.FailureKeys[:n]
	}
}

func (st *State) addPromptRow(r *ledger.Row, at time.Time) {
	text, harness := userWords(r.Text)
	if harness { // a task notification, an IDE context block
		return
	}
	if boundaryCommand(text) {
		st.ClearTask()
		return
	}
	r2 := *r
	r2.Text = text
	r = &r2
	st.Prompts++
	// A stop before this request is not this turn's, nor is a call of an earlier turn still running in it (a
	// Codex patch_apply_end has no result row: a turn_aborted after the next prompt named that old patch).
	st.StopSeq, st.PendingCall, st.Accepted = 0, "", Note{}
	// After a compaction or in another session "continue" resumes, it does
	// not say yes to the previous turn; a thank-you answers nothing.
	resumed := st.AfterBreak || st.PromptSession != 0 && r.SessionID != st.PromptSession
	thanks := thanksOnly(r.Text) && !substantive(r.Text)
	st.declineFailures(r.Text)
	declined := !resumed && !thanks && st.answerTurn(r.Text)
	taskBefore := st.Task
	class := st.addPrompt(r.Text, r.SessionID, at)
	st.Fallback, st.FallbackAt = r.Text, at
	st.taskRefs(class, r, taskBefore)
	if class != promptAck {
		st.AskSeq = st.Seq
		st.addInstruction(r.Text, at, refOf(r))
		st.Answered = declined // an acknowledgement asks nothing new: the turn's next step stays; a bare decline answers
	}
	st.endTurn(class, resumed, thanks)
	st.CauseKey = ""
	// The request that sets a goal is a task: only a follow-up's choice
	// verbs are decisions (rule 2).
	low := strings.ToLower(r.Text)
	st.addDecisions(r.Text, low, class == promptFollowUp, class != promptFollowUp && class != promptAck)
	st.addProse(r.Text, low, false, true)
}

// answerTurn records the prompt as the answer to the last turn's last question, unless it sets the goal ("which
// task?" answered by naming it). A bare decline ("no, don't do that", "Non, laisse.") of the turn's question or
// announced step refuses it and asks nothing new: it reports true, and the step is refused work, not the next action.
func (st *State) answerTurn(text string) (declined bool) {
	qs, bare, step := turnQuestions(st.TurnTexts), bareDecline(text), ""
	if len(qs) == 0 && bare {
		step = proposedStep(st.TurnTexts) // only then: this runs on every prompt the hook folds
	}
	if len(qs) == 0 && step == "" || setsGoal(st.classifyPrompt(strings.TrimSpace(text))) {
		return false
	}
	switch {
	case len(qs) > 0:
		st.addAnswer(qs[len(qs)-1], text)
	case bare:
		st.Refused, st.StopSeq = last(append(st.Refused, Note{Text: clip(step, 160), Refs: []Ref{st.RowRef}}), keepStops), st.Seq
	}
	return bare
}

// proposedStep: the turn's last sentence announcing a step ("I'll drop the table and recreate it").
func proposedStep(texts []string) (step string) {
	for _, s := range sentences(strings.Join(texts, "\n")) {
		if forwardLooking(s) || announces(" "+strings.ToLower(s)) {
			step = s
		}
	}
	return step
}

// bareDecline: p opens with declines (lang/ decline_start) and names nothing after them but a verb ("no, don't do
// that", "нет, не надо", "Non, laisse."); "No, use Postgres instead" names a new target: a request.
func bareDecline(p string) bool {
	rest, ok := cutDeclines(strings.ToLower(p))
	return ok && namesNothing(rest)
}

// cutDeclines: low without its opening declines, and whether it had one.
func cutDeclines(low string) (string, bool) {
	t := stripLeadingAcks(low)
	for _, m := range declineStarts.list() {
		if rest, ok := strings.CutPrefix(t, m); ok && wordEnds(rest) {
			rest, _ = cutDeclines(rest)
			return rest, true
		}
	}
	return low, false
}

func (st *State) taskRefs(class promptClass, r *ledger.Row, taskBefore string) {
	switch class {
	case promptGoal, promptNewTask, promptSwitch:
		st.TaskRef = refOf(r)
		st.startTask(class == promptNewTask)
	case promptCorrect: // the corrected goal's instructions stand
		st.TaskRef = refOf(r)
	case promptFollowUp:
		if st.Task != taskBefore { // "back to" a set-aside goal: the detour's instructions are not its
			st.TaskRef = st.sourceRef("s:" + st.Task) // the row that set it first
			st.startTask(false)
		}
	}
}

func (st *State) endTurn(class promptClass, resumed, thanks bool) {
	switch {
	case resumed && class == promptAck, thanks:
		// the turn's questions stay open across a bare resume and a thank-you
	case class == promptAck:
		// "Super, danke!" answers the questions but asks nothing new: the
		// forward-looking sentences stay the next action.
		st.TurnTexts, st.TurnRefs = forwardOnly(st.TurnTexts), nil
	default:
		st.TurnTexts, st.TurnRefs = nil, nil
	}
}

func (st *State) addTextRow(r *ledger.Row) {
	if len(st.TurnRefs) == len(st.TurnTexts) {
		st.TurnRefs = append(st.TurnRefs, refOf(r))
	}
	st.TurnTexts, st.TurnRefs = last(append(st.TurnTexts, r.Text), maxTurnTexts), last(st.TurnRefs, maxTurnTexts)
	st.LastText, st.LastTextRef, st.LastTextSeq = r.Text, refOf(r), st.Seq
	st.Answered, st.Accepted = true, Note{}
	st.Interrupted = Note{} // the agent went on after it
	low := strings.ToLower(r.Text)
	st.addDecisions(r.Text, low, false, false)
	st.addProse(r.Text, low, st.LastCallSeq > st.AskSeq, false)
	if st.CauseKey != "" {
		if c := causeSentence(r.Text, low); c != "" {
			if i := st.failure(st.CauseKey); i >= 0 && st.Failures[i].Cause == "" {
				st.Failures[i].Cause = c
			}
			st.CauseKey = ""
		}
	}
}

func (st *State) addCallRow(r *ledger.Row, at time.Time) {
	key := callKey(r)
	st.Answered, st.LastCallSeq, st.Accepted = true, st.Seq, Note{}
	st.keptDecline()
	if st.Prompts == 0 && st.Fallback == "" && subagentTool(r.ToolName) {
		st.subagentFallback(r, at)
	}
	if adapters.PlanTool(r.ToolName) { // TodoWrite, update_plan, write_todos
		if plan, ok := parsePlan(r.Text); ok {
			st.Plan, st.PlanSession = plan, r.SessionID
			st.setSource("p:", refOf(r))
		}
	}
	if r.CallID != "" {
		st.recordCall(key, r)
	}
	st.callWrites(key, r, at)
}

// subagentFallback: with no prompt recorded (an excerpt), the subagent's work is the session's.
func (st *State) subagentFallback(r *ledger.Row, at time.Time) {
	d := jsonField(r.Text, "description") // the input JSON (Codex), or
	if d == "" && !strings.HasPrefix(strings.TrimSpace(r.Text), "{") {
		d = oneLine(r.Text) // the description itself (the Claude adapter keeps it)
	}
	if d != "" {
		st.Fallback, st.FallbackAt = d, at
	}
}

func (st *State) recordCall(key string, r *ledger.Row) {
	st.PendingCall = key
	if _, ok := st.Calls[key]; !ok {
		st.CallOrder = append(st.CallOrder, key)
	}
	st.Calls[key] = Call{ToolName: r.ToolName, Command: clip(st.shellCommand(r), 400), FilePath: r.FilePath}
	for len(st.CallOrder) > maxCalls {
		delete(st.Calls, st.CallOrder[0])
		st.CallOrder = st.CallOrder[1:]
	}
}

// callWrites records the files call r edits or its command writes, and the command when it runs the tests.
func (st *State) callWrites(key string, r *ledger.Row, at time.Time) {
	if r.FilePath != "" {
		deleted := strings.HasPrefix(r.Text, "*** Delete File:")
		st.addEdit(Edit{Path: r.FilePath, Call: key, At: at, Seq: st.Seq, Created: createsFile(r) && !deleted, Deleted: deleted, Todos: todoLines(r.Text), Ref: refOf(r)})
		st.addDone(Done{Text: "edited " + r.FilePath, Call: key})
	}
	if r.Command != "" {
		for _, f := range shellFiles(r.Command) {
			st.addEdit(Edit{Path: f.path, Call: key, At: at, Seq: st.Seq, Created: f.created, Deleted: f.deleted, Ref: refOf(r)})
		}
		if isTestCmd(r.Command) {
			st.LastTest = clip(oneLine(r.Command), 200)
		}
	}
}

func (st *State) addResultRow(r *ledger.Row) {
	if callKey(r) == st.PendingCall {
		st.PendingCall = ""
	}
	c, ok := st.Calls[callKey(r)]
	if !ok {
		return
	}
	st.noteBackground(c, r.Text)
	if c.Command == "" {
		if i := st.failure(toolKey(c.ToolName, c.FilePath)); i >= 0 {
			st.Failures[i].Resolved = true
		}
		return
	}
	st.addDone(Done{Text: "ran `" + clip(oneLine(c.Command), 80) + "`"})
	st.resolveBy(c.Command, r.Text)
	st.dryRun(c.Command, r.Text)
}

func (st *State) addErrorRow(r *ledger.Row, at time.Time) {
	key := callKey(r)
	if key == st.PendingCall {
		st.PendingCall = ""
	}
	if r.CallID != "" {
		st.FailedCalls[key] = true
	}
	if k := stopKind(r.Text); k != "" { // an adapter that does not tell stops apart: the text does
		st.FailedCalls[key] = true
		st.addStopRow(r, at, k)
		return
	}
	what, cmd, path := st.failedCall(key, r)
	if noMatch(cmd, r.Text, r.ExitCode) {
		return // a search that found nothing answered its question: nothing failed, nothing to retry
	}
	k := toolKey(what, path)
	if cmd != "" {
		what, k = cmd, targetKey(cmd)
	}
	f := st.takeFailure(k)
	f.What = oneLine(what)
	if cmd == "" && path != "" {
		f.What += " " + path
	}
	f.Count, f.Resolved, f.At, f.Seq, f.ExitCode = f.Count+1, false, at, st.Seq, r.ExitCode
	f.Refs = addRef(f.Refs, refOf(r))
	f.addError(failureLine(r.Text, r.ExitCode))
	if f.What != "model API" {
		st.CauseKey = k
	}
	st.Failures = append(st.Failures, f)
	st.FailureKeys = append(st.FailureKeys, k)
	if len(st.Failures) > maxFailures {
		st.Failures, st.FailureKeys = st.Failures[1:], st.FailureKeys[1:]
	}
	if isTestCmd(cmd) {
		st.TestFails = last(append(st.TestFails, st.Seq), 8)
		st.Failures[len(st.Failures)-1].Tests = testCount(r.Text)
	}
}

// failedCall names what error row r failed: its call's tool, command and
// file, or the row's own. An error of no call is the model's or harness's
// (Gemini's "[API Error: …]", Cursor's usage limit): never the next action.
func (st *State) failedCall(key string, r *ledger.Row) (what, cmd, path string) {
	what, cmd, path = r.ToolName, r.Command, r.FilePath
	if c, ok := st.Calls[key]; ok {
		what, cmd, path = c.ToolName, c.Command, c.FilePath
	}
	if what == "" && cmd == "" && path == "" {
		what = "model API"
	}
	return what, cmd, path
}

// takeFailure removes the failure of target k (new if none), to append as the newest.
func (st *State) takeFailure(k string) Failure {
	i := st.failure(k)
	if i < 0 {
		return Failure{}
	}
	f := st.Failures[i]
	st.Failures = append(st.Failures[:i], st.Failures[i+1:]...)
	st.FailureKeys = append(st.FailureKeys[:i], st.FailureKeys[i+1:]...)
	return f
}

func (st *State) forgetFailedCalls() {
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

// failure is the index of target k's failure, -1 for none; a target has one (addErrorRow takes the old one out).
func (st *State) failure(k string) int { return slices.Index(st.FailureKeys, k) }

func (st *State) addEdit(e Edit) { st.Edits = last(append(st.Edits, e), maxEdits) }
func (st *State) addDone(d Done) { st.Done = last(append(st.Done, d), maxDone) }
func refOf(r *ledger.Row) Ref    { return Ref{Session: r.SessionID, Seq: r.Seq} }

// addProse: toolTurn, the agent's text after a tool call of this turn; user, a prompt's.
func (st *State) addProse(text, low string, toolTurn, user bool) {
	st.addItems(&st.Refs, "r:", references(text, low, toolTurn), maxRefs)
	st.addItems(&st.Actions, "a:", actionItems(text, low, user), maxActions)
}

// stopKind: "refusal" when an error row says the user refused the call,
// "interrupt" when they stopped the turn, else "". Only the head is read:
// the harness writes these as the whole result, a command's own output
// saying "interrupted" further down is not one.
func stopKind(text string) string {
	head := strings.ToLower(strings.TrimSpace(text))
	if len(head) > 240 {
		head = head[:240]
	}
	head = strings.Trim(head, "[]<> ")
	switch {
	case head == "":
		return ""
	case head == "cancelled" || head == "canceled": // Cursor's stored status: stopped or rejected
		return "interrupt"
	case hasPhrase(head, "refusal"):
		return "refusal"
	case hasPhrase(head, "interrupt"):
		return "interrupt"
	}
	return ""
}

// addStopRow folds a refusal or an interruption: what it stopped is its
// call, else the call still running, else the turn. A turn-level
// interruption right after a refusal is the same stop (Claude Code writes
// both when the user declines at the permission prompt).
func (st *State) addStopRow(r *ledger.Row, at time.Time, kind string) {
	key := callKey(r)
	c, ok := st.Calls[key]
	if r.CallID == "" {
		if st.StopSeq > 0 && st.StopSeq > st.LastTextSeq && st.PendingCall == "" {
			// A stop this turn reported again for the turn (Claude's decline
			// pair; Codex's "aborted by user", then turn_aborted): one stop.
			st.StopSeq = st.Seq
			return
		}
		c, ok = st.Calls[st.PendingCall]
	}
	if key == st.PendingCall || r.CallID == "" {
		st.PendingCall = ""
	}
	if r.CallID != "" {
		st.FailedCalls[key] = true
	}
	desc := st.stoppedWhat(r, c, ok)
	n := Note{Text: clip(oneLine(desc), 160), At: at, Refs: []Ref{refOf(r)}}
	st.StopSeq = st.Seq
	if kind == "refusal" {
		if why := refusalReason(r.Text); why != "" {
			n.Text += reasonMark + clip(oneLine(why), 120) + ")"
		}
		st.Refused = last(append(st.Refused, n), keepStops)
		return
	}
	st.Interrupted = n
}

// stoppedWhat names what a stop stopped: its call (c, when ok), the row's own, else the turn by its request.
func (st *State) stoppedWhat(r *ledger.Row, c Call, ok bool) string {
	switch {
	case ok && c.Command != "":
		return c.Command
	case ok:
		return strings.TrimSpace(c.ToolName + " " + c.FilePath)
	case r.Command != "":
		return r.Command
	case r.ToolName != "":
		return strings.TrimSpace(r.ToolName + " " + r.FilePath)
	case cmp.Or(st.Latest, st.Task) != "":
		return "the turn (request: " + clip(oneLine(cmp.Or(st.Latest, st.Task)), 120) + ")" // the user's words
	}
	return "the turn"
}

func addRef(refs []Ref, r Ref) []Ref { return keepFirst(append(refs, r), 4) }

// addSource records that the fact key (kind prefix and text) came from row
// r, the oldest fact dropped past maxSources. Called per fact found, not per row.
func (st *State) addSource(key string, r Ref) {
	if i := st.source(key); i >= 0 {
		if n := len(st.Sources[i].Refs); n == 0 || st.Sources[i].Refs[n-1] != r {
			st.Sources[i].Refs = addRef(st.Sources[i].Refs, r)
		}
		return
	}
	st.Sources = last(append(st.Sources, Note{Text: key, Refs: []Ref{r}}), maxSources)
}

// setSource is addSource for a fact a newer row replaces outright (the plan, a set-aside goal).
func (st *State) setSource(key string, r Ref) {
	if i := st.source(key); i >= 0 {
		st.Sources[i].Refs = []Ref{r}
		return
	}
	st.addSource(key, r)
}

// source is the index of fact key's entry in Sources, -1 for none (a key has one: addSource adds none twice).
func (st *State) source(key string) int {
	return slices.IndexFunc(st.Sources, func(n Note) bool { return n.Text == key })
}

func (st *State) sourceRefs(key string) []Ref {
	if i := st.source(key); i >= 0 {
		return st.Sources[i].Refs
	}
	return nil
}

func (st *State) sourceRef(key string) Ref {
	if rs := st.sourceRefs(key); len(rs) > 0 {
		return rs[0]
	}
	return Ref{}
}

// ClearTask forgets the task: after /clear or `carryover clear` the next
// request is a new task, whatever it says. Files, done steps, decisions and
// references are the project's and stay.
func (st *State) ClearTask() {
	st.Task, st.TaskAt, st.GoalWeak, st.TaskRef = "", time.Time{}, false, Ref{}
	st.Latest, st.LatestAt, st.LatestRef = "", time.Time{}, Ref{}
	st.SetAside, st.Instructions, st.Plan, st.Actions = nil, nil, nil, nil
	st.TurnTexts, st.LastText, st.LastTextRef, st.LastTextSeq = nil, "", Ref{}, 0
	st.Refused, st.Interrupted, st.Accepted = nil, Note{}, Note{}
	st.Failures, st.FailureKeys, st.TestFails = nil, nil, nil
	st.Fallback, st.FallbackAt = "", time.Time{}
	st.AfterBreak, st.Answered, st.CauseKey = false, false, ""
}

// startTask forgets the last task's instructions; after "now …" (next) the user's constraints stand ("ускорь парсер,
// не меняй публичный API" then "теперь добавь бенчмарк"): the next step of the same work, until the user lifts them.
func (st *State) startTask(next bool) {
	st.Instructions = slices.DeleteFunc(st.Instructions, func(n Note) bool { return !next || !hasPhrase(strings.ToLower(n.Text), "constraint") })
	st.Refused, st.Interrupted = nil, Note{}
}

func subagentTool(name string) bool { // Claude's Task and Agent, Codex's spawn
	return name == "Task" || name == "Agent" || name == "spawn_agent"
}

var jsonFieldRE = lazyRE{expr: `"(description|prompt)"\s*:\s*"((?:[^"\\]|\\.){1,400})"`}

// jsonField reads a string field of a (maybe clipped) JSON input.
func jsonField(text, name string) string {
	for _, m := range jsonFieldRE.get().FindAllStringSubmatch(text, -1) {
		if m[1] == name {
			var v string
			if json.Unmarshal([]byte(`"`+m[2]+`"`), &v) == nil {
				return oneLine(v)
			}
		}
	}
	return ""
}

// Handoff reads the handoff out of the state.
func (st *State) Handoff(o Options) Handoff {
	h := Handoff{Tool: st.Tool, SessionID: st.SessionID, LastAt: st.LastAt, Rows: st.Rows, Prompts: st.Prompts,
		Task: st.Task, TaskAt: st.TaskAt, Tokens: st.Tokens}
	todos := st.filesInto(&h, o.Project)
	st.failuresInto(&h)
	st.userWordsInto(&h)
	st.listsInto(&h)
	st.taskInto(&h)
	failing := st.questionsInto(&h, todos)
	next, rule := st.Accepted.Text, "accepted offer"
	if st.Accepted.Text == "" {
		next, rule = st.nextAction(h, failing)
	}
	h.Next, h.NextRule = clip(next, 300), rule
	st.queuedInto(&h)
	st.evidenceInto(&h)
	st.doneInto(&h, o.Project)
	h.Ended = ending(st.Ended, &h)
	return h
}

// queuedInto: a prompt still queued when the session ended is the latest request and the next action (the agent never
// received it); the latest request before it stays among the user's words.
func (st *State) queuedInto(h *Handoff) {
	if st.Queued == "" {
		return
	}
	if h.Latest != "" {
		h.Instructions = append(h.Instructions, h.Latest)
	}
	h.Latest, h.Next, h.NextRule = st.Queued, clip("Answer the request the user queued, which the previous agent never received: "+oneLine(st.Queued), 300), "queued request"
}

type fileAcc struct {
	f    File
	last int64
}

func (acc *fileAcc) write(e Edit) {
	acc.f.At, acc.last, acc.f.Deleted, acc.f.Ref = e.At, e.Seq, e.Deleted, e.Ref
	if e.Deleted {
		acc.f.Created = false
	} else if e.Created && acc.f.Deleted {
		acc.f.Created = true
	}
}

// filesInto fills the files, newest first, ten at most: last write wins
// over edits whose call did not fail; a failing test after a file's last
// edit marks it. It returns the edits' to-dos.
func (st *State) filesInto(h *Handoff, project string) (todos []string) {
	files := map[string]*fileAcc{}
	var paths []string // first-seen order: ties in recency keep it
	for _, e := range st.Edits {
		if st.FailedCalls[e.Call] {
			continue
		}
		p := relPath(project, e.Path)
		acc, ok := files[p]
		if !ok {
			acc = &fileAcc{f: File{Path: p, Created: e.Created}}
			files[p] = acc
			paths = append(paths, p)
		}
		acc.write(e)
		todos = append(todos, e.Todos...)
	}
	for _, p := range paths {
		acc := files[p]
		acc.f.FailedAfter = st.testFailedAfter(acc.last)
		h.Files = append(h.Files, acc.f)
	}
	sort.SliceStable(h.Files, func(i, j int) bool { return files[h.Files[i].Path].last > files[h.Files[j].Path].last })
	if len(h.Files) > 10 {
		h.MoreFiles = len(h.Files) - 10
		h.Files = h.Files[:10]
	}
	return todos
}

// testFailedAfter: a test or build failed after seq and no later pass of its target fixed it (a build that failed
// after one edit and passed after the next leaves neither file "failed after").
func (st *State) testFailedAfter(seq int64) bool {
	return slices.ContainsFunc(st.Failures, func(f Failure) bool {
		return f.Seq > seq && !f.Resolved && slices.Contains(st.TestFails, f.Seq) // TestFails: the test/build failures' Seqs
	})
}

func (st *State) failuresInto(h *Handoff) {
	// A step the user refused this turn with nothing called since stands open ("not yet — wait for the backup"): the
	// agent's "I won't run it until the backup is done" claims nothing done. A completion said before the newest
	// request is an earlier turn's: it finishes nothing of this one.
	h.Completed = st.workDone(true) && st.LastCallSeq >= st.StopSeq && !st.unaddressed()
	prohibited := st.prohibitions()
	for i := len(st.Failures) - 1; i >= 0; i-- {
		f := st.Failures[i]
		f.Declined = f.Declined || !f.Resolved && declinedBy(prohibited, st.FailureKeys[i], f.Error)
		if h.Completed && st.leftBehind(f) {
			f.Superseded = !f.Resolved
			f.Resolved = true
		}
		h.Failures = append(h.Failures, f)
	}
	for _, f := range h.Failures {
		if !f.Resolved && !f.Declined && isTestCmd(f.What) {
			h.Completed = false // a red verification is work left, whatever the agent said
		}
	}
}

// planChecked is the plan with a done item that names a file the user refused to let the agent write, and that the
// session never wrote, marked so: the tick is the agent's claim, the refusal the evidence ("[x] Create CLAUDE.md"
// after the user refused the Write).
func (st *State) planChecked() []PlanItem {
	plan := append([]PlanItem(nil), st.Plan...)
	for i, p := range plan {
		for _, r := range st.Refused {
			if f := namedFile(r.Text, p.Text); p.Done && f != "" && !st.wrote(f) {
				plan[i].Text += " — not done: the user refused " + r.Text
				break
			}
		}
	}
	return plan
}

// wrote: an edit of path whose call did not fail.
func (st *State) wrote(path string) bool {
	return slices.ContainsFunc(st.Edits, func(e Edit) bool { return e.Path == path && !st.FailedCalls[e.Call] })
}

// namedFile is the path in a stop's text ("Write /p/CLAUDE.md") whose file name (a dot in it, 4+ bytes) text names.
func namedFile(stop, text string) string {
	for _, w := range strings.Fields(stop) {
		base := w[strings.LastIndexAny(w, `/\`)+1:]
		if len(base) >= 4 && strings.Contains(base, ".") && strings.Contains(text, base) {
			return w
		}
	}
	return ""
}

// workDone: the agent's last words since the newest request report it done, or the tools show a fix verified,
// nothing failing since. edited: an edit since the request that a passing verification checked counts as a fix
// verified too, however the agent worded it ("Notes with newlines are quoted now"); a new goal is not read from it
// (nextAfterDone): "also add a Retry-After header" after a tested rate limiter goes on with the same work.
func (st *State) workDone(edited bool) bool {
	return st.LastTextSeq > max(0, st.AskSeq) && (completed(st.LastText) || st.verifiedFix(edited)) && !st.failedAfter(st.LastTextSeq)
}

// verifiedFix is completion shown by the tools, however the agent worded it ("go vet is clean now"): a failure was
// fixed (or, edited, an edit since the request was checked and the last words state no next step), none is left, and the last verification passed after the
// last edit and the newest request and before the agent's last words (a pass before "now also add an export command"
// verifies nothing of it).
func (st *State) verifiedFix(edited bool) bool {
	if st.LastPassSeq == 0 || st.LastPassSeq < st.AskSeq || st.LastPassSeq > st.LastTextSeq || st.editedSince(st.LastPassSeq) {
		return false
	}
	edited = edited && st.editedSince(st.AskSeq) && !goesOn(strings.ToLower(closingParagraph(st.LastText)))
	return (edited || len(st.Failures) > 0) && !slices.ContainsFunc(st.Failures, func(f Failure) bool { return !f.Resolved })
}

// editedSince: the newest edit came after row seq (Edits are in fold order).
func (st *State) editedSince(seq int64) bool {
	return len(st.Edits) > 0 && st.Edits[len(st.Edits)-1].Seq > seq
}

// leftBehind: after completion with nothing failing since, a failure before
// the last words is an approach left behind; a failing verification needs a
// pass since ("I've updated the parser" over a red test is a claim).
func (st *State) leftBehind(f Failure) bool {
	return f.Seq < st.LastTextSeq && (!isTestCmd(f.What) || st.LastPassSeq > f.Seq)
}

// failedAfter: a failure (not the model's) was recorded after seq.
func (st *State) failedAfter(seq int64) bool {
	return slices.ContainsFunc(st.Failures, func(f Failure) bool { return f.Seq > seq && !f.Resolved && f.What != "model API" })
}

func (st *State) listsInto(h *Handoff) {
	for _, d := range st.Decided { // a declined offer the turn then stopped at is under "Stopped by the user"
		if !slices.ContainsFunc(st.Refused, func(r Note) bool { return r.Text == d }) {
			h.Decisions = append(h.Decisions, d)
		}
	}
	h.SetAside = append([]string(nil), st.SetAside...)
	h.Plan = st.planChecked()
	h.Refs = append([]string(nil), st.Refs...)
	for _, a := range st.Actions {
		// The goal or latest request restated as an action item says nothing
		// the Task lines do not (a research prompt "Prepara un resumen…").
		if !sameText(a, st.Task) && !sameText(a, st.Latest) {
			h.Actions = append(h.Actions, a)
		}
	}
	h.Test = st.LastTest
	if st.Latest != "" && st.Latest != st.Task {
		h.Latest, h.LatestAt = st.Latest, st.LatestAt
	}
}

// sameText: a (maybe clipped with "…") is the text of request b.
func sameText(a, b string) bool {
	b = oneLine(b)
	if b == "" {
		return false
	}
	return a == b || strings.HasSuffix(a, "…") && strings.HasPrefix(b, strings.TrimSuffix(a, "…"))
}

func (st *State) taskInto(h *Handoff) {
	h.Task, h.Latest = pastedCondensed(h.Task), pastedCondensed(h.Latest)
	if h.Task == "" && st.Fallback != "" {
		h.Task, h.TaskAt = summaryTask(st.Fallback), st.FallbackAt
	}
}

// pastedCondensed: a request pasting a log or trace, as its first sentence, constraints and the error its last lines
// name, not its head (the goal, or a follow-up "the deploy fails now:" over a gunicorn log); any other as it is.
func pastedCondensed(p string) string {
	if strings.Count(p, "\n") > 2 {
		if e := pastedError(p); e != "" && !strings.Contains(clip(oneLine(p), 200), e) {
			return condense(p)
		}
	}
	return p
}

// doneInto: the last twelve steps whose call did not fail.
func (st *State) doneInto(h *Handoff, project string) {
	for _, d := range st.Done {
		if d.Call != "" && st.FailedCalls[d.Call] {
			continue
		}
		text := d.Text
		if p, ok := strings.CutPrefix(text, "edited "); ok {
			text = "edited " + relPath(project, p)
		}
		h.Done = append(h.Done, text)
	}
	h.Done = last(h.Done, 12)
}

func (st *State) userWordsInto(h *Handoff) {
	for _, in := range st.Instructions {
		if len(in.Refs) > 0 && in.Refs[0] == st.TaskRef || st.Latest != "" && !in.At.Before(st.LatestAt) {
			continue // the Task lines carry it
		}
		h.Instructions = append(h.Instructions, in.Text)
	}
	for _, r := range st.Refused {
		h.Refused = append(h.Refused, "the user refused: "+r.Text+" (do not redo it without asking)")
	}
	h.Interrupted = st.Interrupted.Text
	h.LastWords = closingParagraph(st.LastText)
}

// evidenceInto records each line's rule and rows (carryover explain).
func (st *State) evidenceInto(h *Handoff) {
	add := h.addEvidence
	add("Task", h.Task, "goal: the request that set the work", st.TaskRef)
	add("Task", h.Latest, "latest request: a follow-up of the goal", st.LatestRef)
	for _, in := range st.Instructions {
		for _, t := range h.Instructions {
			if t == in.Text {
				add("Instructions", t, "the user's instruction, condensed (first sentence and constraints)", in.Refs...)
			}
		}
	}
	add("Next action", h.Next, h.NextRule, st.nextRefs(h)...)
	add("Last words", h.LastWords, "the closing paragraph of the last assistant message", st.LastTextRef)
	for i, r := range st.Refused {
		add("Stopped by the user", h.Refused[i], "a tool call the user refused, or a proposal they declined", r.Refs...)
	}
	add("Stopped by the user", h.Interrupted, "the user interrupted the turn", st.Interrupted.Refs...)
	for _, f := range h.Failures {
		rule := "a failing command or tool, collapsed by target"
		if f.Resolved {
			rule += "; resolved by a later pass of the same target, an edit then a passing verification, or completion"
		}
		add("Failed approaches", f.What, rule, f.Refs...)
	}
	st.listEvidence(h)
}

func (st *State) listEvidence(h *Handoff) {
	add := h.addEvidence
	for _, s := range h.SetAside {
		add("Set aside", s, "a goal an explicit switch of task set aside", st.sourceRef("s:"+s))
	}
	for _, p := range h.Plan {
		add("Plan", p.Text, "the plan the agent last wrote with its plan tool (a box is ticked when the agent marked the item done)", st.sourceRef("p:"))
	}
	for _, f := range h.Files {
		add("Recent files", f.Path, "a file write (an edit or create call, or a shell command that writes it) whose call did not fail; the last write is the row", f.Ref)
	}
	for _, q := range h.Questions {
		rule, refs := st.questionSource(q)
		add("Open questions", q, rule, refs...)
	}
	for _, d := range h.Decisions {
		add("Decisions", d, "a decision stated in a prompt or the agent's prose (or a question answered), superseding earlier ones on the same subject", st.sourceRefs("d:"+d)...)
	}
	for _, r := range h.Refs {
		add("References", r, "a URL, document, person or date named as a source", st.sourceRefs("r:"+r)...)
	}
	for _, a := range h.Actions {
		add("Action items", a, "a commitment or to-do stated in prose", st.sourceRefs("a:"+a)...)
	}
}

// addEvidence: text in section sec was chosen by rule from refs (zero Refs dropped).
func (h *Handoff) addEvidence(sec, text, rule string, refs ...Ref) {
	if text == "" {
		return
	}
	var rs []Ref
	for _, r := range refs {
		if r != (Ref{}) {
			rs = append(rs, r)
		}
	}
	h.Evidence = append(h.Evidence, Evidence{Section: sec, Text: text, Rule: rule, Refs: rs})
}

func (st *State) nextRefs(h *Handoff) []Ref {
	switch h.NextRule {
	case "unanswered request":
		return []Ref{st.LatestRef, st.TaskRef}
	case "interruption":
		return st.Interrupted.Refs
	case "plan":
		return []Ref{st.sourceRef("p:")}
	case "refusal":
		if len(st.Refused) > 0 {
			return st.Refused[len(st.Refused)-1].Refs
		}
	case "still failing":
		for _, f := range h.Failures {
			if strings.Contains(h.Next, "`"+clip(f.What, 120)+"`") {
				return f.Refs
			}
		}
	case "action item":
		if len(h.Actions) > 0 {
			return st.sourceRefs("a:" + h.Actions[len(h.Actions)-1])
		}
	}
	return []Ref{st.LastTextRef}
}

// turnQuestion is the index of the turn text that asked q, or -1.
func turnQuestion(texts []string, q string) int {
	q = strings.TrimSuffix(q, "…")
	for i := len(texts) - 1; i >= 0; i-- {
		if strings.Contains(texts[i], q) || strings.Contains(strings.Join(strings.Fields(texts[i]), " "), q) {
			return i
		}
	}
	return -1
}

// questionSource: why q is an open question, and its rows — a failure's error rows, the turn text that asked, or the
// edit that added the to-do.
func (st *State) questionSource(q string) (rule string, refs []Ref) {
	if strings.HasPrefix(q, "unresolved: `") {
		if i := slices.IndexFunc(st.Failures, func(f Failure) bool { return strings.HasPrefix(q, "unresolved: `"+clip(f.What, 80)+"`") }); i >= 0 {
			refs = st.Failures[i].Refs
		}
		return "a failure nothing later resolved", refs
	}
	rule = "a to-do marker an edit added"
	if i := turnQuestion(st.TurnTexts, q); i >= 0 {
		if st.LastText != "" {
			rule = "a question the agent asked in the last turn, not answered since"
		}
		if len(st.TurnRefs) == len(st.TurnTexts) {
			return rule, []Ref{st.TurnRefs[i]}
		}
		return rule, []Ref{st.LastTextRef}
	}
	for _, e := range slices.Backward(st.Edits) {
		if slices.Contains(e.Todos, q) {
			return rule, []Ref{e.Ref}
		}
	}
	return rule, nil
}

// unaddressed: the agent closed after the latest request without writing a file since nor naming any of its words
// ("Done: the toggle is on the page, the choice saved in localStorage" over "and respect prefers-color-scheme"): its
// closing answers the requests before it, this one is open.
func (st *State) unaddressed() bool {
	return st.Latest != "" && st.LastTextSeq > st.AskSeq && !overlaps(st.LastText, st.Latest) &&
		!st.editedSince(st.AskSeq) || st.laterAskLeft() != ""
}
