package distill

// The next action and the open questions.
//
// Next action: the first rule of nextRules that gives one: the
// unanswered request, an interruption, the agent's own plan, the last
// turn's labelled next step, remaining items or forward-looking sentence,
// an earlier agent's plan, completion, a refusal, the still-failing
// verification, the open question, the newest action item. Never a
// recap (only forward-looking sentences qualify), a pleasantry or
// offer of help (boilerplate), an item already done, or a string that is
// not prose (prose).
//
// Open questions are the assistant's questions of its last turn that no
// prompt has answered (boilerplate excluded), TODO/FIXME markers in the
// lines an edit added (todoLines), and the failures still unresolved.

import (
	"encoding/json"
	"strings"
	"unicode"
)

// PlanItem is one step of the agent's own plan.
type PlanItem struct {
	Text string
	Done bool
}

// maxPlan is how many plan items the state keeps.
const maxPlan = 12

// parsePlan reads a plan tool's input: a JSON list of items, or an object
// holding one under todos/plan/items, each item a string or an object
// with content/step/description/title/text and status/completed/done.
func parsePlan(text string) ([]PlanItem, bool) {
	i := strings.IndexAny(text, "[{")
	if i < 0 {
		return nil, false
	}
	var v any
	if json.Unmarshal([]byte(text[i:]), &v) != nil {
		return planItemsClipped(text[i:])
	}
	l, ok := planList(v)
	if !ok {
		return nil, false
	}
	var out []PlanItem
	for _, e := range l {
		it := planItem(e)
		if it.Text = clip(oneLine(it.Text), 200); it.Text != "" {
			out = append(out, it)
		}
		if len(out) == maxPlan {
			break
		}
	}
	return out, true
}

// planList is the list of a plan: v itself or the list an object holds
// under todos/plan/items/steps/tasks.
func planList(v any) ([]any, bool) {
	if m, ok := v.(map[string]any); ok {
		for _, k := range []string{"todos", "plan", "items", "steps", "tasks"} {
			if l, ok := m[k]; ok {
				v = l
				break
			}
		}
	}
	l, ok := v.([]any)
	return l, ok
}

// planItem reads one item: a string, or an object with its text under
// content/step/description/title/text/task and its state under
// status/completed/done.
func planItem(e any) PlanItem {
	var it PlanItem
	switch x := e.(type) {
	case string:
		it.Text = x
	case map[string]any:
		for _, k := range []string{"content", "step", "description", "title", "text", "task"} {
			if s, ok := x[k].(string); ok && s != "" {
				it.Text = s
				break
			}
		}
		st, _ := x["status"].(string)
		done, _ := x["completed"].(bool)
		done2, _ := x["done"].(bool)
		it.Done = done || done2 || doneStatus[strings.ToLower(st)]
	}
	return it
}

// doneStatus are the statuses of an item no longer to do.
var doneStatus = map[string]bool{"completed": true, "done": true, "complete": true, "cancelled": true}

// nextMarkers are forward-looking phrases beyond nextRE's English.
var nextMarkers = phraseList("next_marker")

func forwardLooking(s string) bool {
	return nextRE.MatchString(s) || containsAny(strings.ToLower(s), nextMarkers())
}

// boilerplateMarkers are offers of help and sign-offs.
var boilerplateMarkers = phraseList("boilerplate")

// forwardOnly keeps, of a turn's texts, the sentences that look forward and
// are not questions nor offers: what an acknowledgement leaves standing.
func forwardOnly(texts []string) []string {
	var out []string
	for _, t := range texts {
		for _, s := range sentences(t) {
			if forwardLooking(s) && !isQuestion(s) && !boilerplate(s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// boilerplate reports whether a sentence is an offer of help or a
// pleasantry, never a question or an action.
func boilerplate(s string) bool {
	return containsAny(strings.ToLower(s), boilerplateMarkers())
}

// prose reports whether s reads as a sentence: at least three words, most
// of its characters letters or spaces, and not a path, a command or code.
func prose(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasPrefix(s, "`") || strings.HasPrefix(s, "{") || strings.HasPrefix(s, "$ ") || strings.HasPrefix(s, "|") {
		return false
	}
	letters, other := 0, 0
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsSpace(r):
			letters++
		default:
			other++
		}
	}
	if letters < 2*other {
		return false
	}
	return promptSize(s) >= 3
}

// doneText reports whether s restates a done plan item or step.
func doneText(s string, plan []PlanItem) bool {
	low := strings.ToLower(strings.TrimRight(s, ".!。"))
	for _, p := range plan {
		if p.Done && strings.Contains(low, strings.ToLower(strings.TrimRight(p.Text, ".!。"))) {
			return true
		}
	}
	return false
}

var questionPrefixRE = lazyRegexp(`^(\d+[.)]\s*|[-*•]\s*)`)

// turnQuestions are the non-boilerplate questions of the given assistant
// texts, in order.
func turnQuestions(texts []string) []string {
	var out []string
	for _, t := range texts {
		for _, s := range sentences(t) {
			if isQuestion(s) && !boilerplate(s) && prose(s) {
				out = append(out, clip(questionPrefixRE().ReplaceAllString(s, ""), 200))
			}
		}
	}
	return Dedupe(out)
}

// todoRE matches a to-do marker that is one: TODO/FIXME/XXX/HACK as a
// whole upper-case word, at the start of the line or after a comment
// marker, followed by ":", "(", "-" or a lower-case word. "# TODO App
// Project" (a heading, a product name) is not a to-do.
var todoLineRE = lazyRegexp(`^\s*(?:[+]\s*)?(?://+|#+|--|/\*+|\*|<!--|;+|%|")?\s*\b(TODO|FIXME|XXX|HACK)\b(?:\([^)]*\))?(?:\s*[:\-–]\s*|\s+(\p{Ll}))(.*)$`)

// todoLines are the to-do markers in the lines an edit added.
func todoLines(text string) []string {
	if !strings.Contains(text, "TODO") && !strings.Contains(text, "FIXME") && !strings.Contains(text, "XXX") && !strings.Contains(text, "HACK") {
		return nil
	}
	var out []string
	for _, l := range strings.Split(text, "\n") {
		m := todoLineRE().FindStringSubmatch(l)
		if m == nil {
			continue
		}
		rest := strings.TrimSpace(m[2] + m[3])
		rest = strings.TrimSuffix(strings.TrimSuffix(rest, "*/"), "-->")
		if rest = strings.TrimSpace(rest); rest == "" {
			continue
		}
		out = append(out, m[1]+": "+clip(rest, 120))
	}
	return out
}

var planFieldRE = lazyRegexp(`"(content|step|description|title|text|task|status)"\s*:\s*"((?:[^"\\]|\\.)*)"`)

// planItemsClipped reads the items of a plan whose JSON was clipped (the
// adapters keep 2 KB of a call's input): each complete object's text and
// status, in order.
func planItemsClipped(text string) ([]PlanItem, bool) {
	var out []PlanItem
	for _, obj := range strings.Split(text, "{")[1:] {
		if !strings.Contains(obj, "}") {
			break // the clipped last object
		}
		var it PlanItem
		for _, m := range planFieldRE().FindAllStringSubmatch(obj, -1) {
			var v string
			if json.Unmarshal([]byte(`"`+m[2]+`"`), &v) != nil {
				continue
			}
			if m[1] == "status" {
				it.Done = doneStatus[strings.ToLower(v)]
			} else if it.Text == "" {
				it.Text = clip(oneLine(v), 200)
			}
		}
		if it.Text != "" {
			out = append(out, it)
		}
		if len(out) == maxPlan {
			break
		}
	}
	return out, len(out) > 0
}

// questionsInto fills the open questions: the last turn's own questions,
// then what still fails, then the to-dos edits added. It returns the
// failure that is work left, if any.
func (st *State) questionsInto(h *Handoff, todos []string) *Failure {
	h.Questions = turnQuestions(st.TurnTexts)
	var failing *Failure
	for i := range h.Failures {
		f := &h.Failures[i]
		if f.Resolved || f.What == "model API" {
			continue
		}
		if failing == nil && (isTestCmd(f.What) || f.Seq > st.LastTextSeq) {
			// Only a verification, or what failed after the agent last
			// spoke, is work left: an exploratory `stat -f` the session
			// went past is not the next step.
			failing = f
		}
		q := "unresolved: `" + clip(f.What, 80) + "`"
		if f.Error != "" {
			q += " — " + clip(f.Error, 100)
		}
		h.Questions = append(h.Questions, q)
	}
	h.Questions = append(h.Questions, Dedupe(todos)...)
	return failing
}

// nextAction applies the order in next.go and names the rule it used:
// the first of nextRules that gives an action.
func (st *State) nextAction(h Handoff, failing *Failure) (string, string) {
	in := nextIn{h: &h, failing: failing}
	for _, p := range st.Plan {
		if !p.Done {
			in.remaining = p.Text
			break
		}
	}
	for _, r := range nextRules {
		if n, ok := r.next(st, &in); ok {
			return n, r.name
		}
	}
	return "", ""
}

// nextIn is what the rules of nextAction read besides the state: the
// handoff so far, the failure that is work left and the first plan item
// not done.
type nextIn struct {
	h         *Handoff
	failing   *Failure
	remaining string
}

var nextRules = []struct {
	name string
	next func(st *State, in *nextIn) (string, bool)
}{
	{"unanswered request", (*State).nextUnanswered},
	{"interruption", (*State).nextInterruption},
	{"plan", (*State).nextOwnPlan},
	{"labelled next", (*State).nextLabelled},
	{"remaining items", func(st *State, _ *nextIn) (string, bool) {
		if items := remainingItems(st.LastText); len(items) > 0 {
			return items[0], true
		}
		return "", false
	}},
	{"forward-looking sentence", (*State).nextForward},
	{"plan", func(_ *State, in *nextIn) (string, bool) {
		if in.h.Completed {
			return "", false
		}
		return in.remaining, in.remaining != "" // an earlier agent's, the last one stating no step of its own
	}},
	{"completion", (*State).nextCompletion},
	{"refusal", func(st *State, _ *nextIn) (string, bool) {
		if len(st.Refused) == 0 {
			return "", false
		}
		// The harness told the agent to wait for the user: ask, do not redo.
		return "Ask the user how to proceed: they refused " + st.Refused[len(st.Refused)-1].Text, true
	}},
	{"still failing", (*State).nextFailing},
	{"open question", func(st *State, _ *nextIn) (string, bool) {
		if qs := turnQuestions(st.TurnTexts); len(qs) > 0 {
			return "Get the user's answer: " + qs[len(qs)-1], true
		}
		return "", false
	}},
	{"action item", func(_ *State, in *nextIn) (string, bool) { // a prose session's newest commitment
		if acts := in.h.Actions; len(acts) > 0 {
			return acts[len(acts)-1], true
		}
		return "", false
	}},
}

func (st *State) nextUnanswered(in *nextIn) (string, bool) {
	if st.Answered || st.Prompts == 0 {
		return "", false
	}
	req := in.h.Latest
	if req == "" {
		req = in.h.Task
	}
	if req == "" {
		return "", false
	}
	return "Answer the latest request: " + oneLine(req), true
}

func (st *State) nextInterruption(in *nextIn) (string, bool) {
	if in.h.Interrupted == "" {
		return "", false
	}
	n := "The user interrupted: " + in.h.Interrupted + " — ask before resuming it"
	if in.remaining != "" {
		n += "; remaining: " + in.remaining
	}
	return n, true
}

// nextOwnPlan is the plan's first open item unless another session's
// agent spoke last: its own stated step comes before a plan an earlier
// agent left (a Claude → Codex → Gemini chain hands over Gemini's last
// step, not Claude's plan).
func (st *State) nextOwnPlan(in *nextIn) (string, bool) {
	if st.LastTextRef.Session != 0 && st.PlanSession != 0 && st.LastTextRef.Session != st.PlanSession {
		return "", false
	}
	return in.remaining, in.remaining != ""
}

func (st *State) nextLabelled(*nextIn) (string, bool) {
	if n := labelledNext(st.LastText); n != "" && prose(n) && !st.refusedText(n) {
		return n, true
	}
	return "", false
}

func (st *State) nextForward(*nextIn) (string, bool) {
	texts := st.TurnTexts
	if len(texts) == 0 && st.LastText != "" {
		texts = []string{st.LastText}
	}
	n := st.forwardSentence(texts)
	return n, n != ""
}

func (st *State) nextCompletion(in *nextIn) (string, bool) {
	if !in.h.Completed {
		return "", false
	}
	n := "Done; nothing in progress"
	if acts := in.h.Actions; len(acts) > 0 {
		n += " — left, as it said: " + acts[len(acts)-1]
	}
	return n, true
}

func (st *State) nextFailing(in *nextIn) (string, bool) {
	f := in.failing
	if f == nil {
		return "", false
	}
	n := "Fix the still-failing `" + clip(f.What, 120) + "`"
	if f.Error != "" {
		n += " (now: " + clip(f.Error, 120) + ")"
	}
	return n, true
}

// forwardSentence is the last forward-looking sentence of the texts ("Next
// I will …"; a "Next steps:" heading gives its first item), never a
// question, an offer, a done plan item or a refused call.
func (st *State) forwardSentence(texts []string) string {
	var next string
	for _, t := range texts {
		ss := sentences(t)
		for i, s := range ss {
			if !forwardLooking(s) || boilerplate(s) || isQuestion(s) || doneText(s, st.Plan) {
				continue
			}
			if strings.HasSuffix(s, ":") && i+1 < len(ss) {
				// "Next steps:" heads a list: its first item is the action.
				s = questionPrefixRE().ReplaceAllString(ss[i+1], "")
			}
			if prose(s) && !doneText(s, st.Plan) && !st.refusedText(s) {
				next = s
			}
		}
	}
	return next
}

// refusedText reports whether a sentence proposes a call the user refused.
func (st *State) refusedText(s string) bool {
	for _, r := range st.Refused {
		if len(r.Text) >= 6 && strings.Contains(s, r.Text) {
			return true
		}
	}
	return false
}

// questionRule names the rule that put an open question in the handoff.
func (st *State) questionRule(q string) string {
	switch {
	case strings.HasPrefix(q, "unresolved: `"):
		return "a failure nothing later resolved"
	case st.LastText != "" && turnQuestion(st.TurnTexts, q) >= 0:
		return "a question the agent asked in the last turn, not answered since"
	}
	return "a to-do marker an edit added"
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

// questionRefs are the rows an open question came from: the failure's
// error rows, the turn text that asked it, or the edit that added the to-do.
func (st *State) questionRefs(q string) []Ref {
	if strings.HasPrefix(q, "unresolved: `") {
		for _, f := range st.Failures {
			if strings.HasPrefix(q, "unresolved: `"+clip(f.What, 80)+"`") {
				return f.Refs
			}
		}
		return nil
	}
	if i := turnQuestion(st.TurnTexts, q); i >= 0 {
		if len(st.TurnRefs) == len(st.TurnTexts) {
			return []Ref{st.TurnRefs[i]}
		}
		return []Ref{st.LastTextRef}
	}
	for i := len(st.Edits) - 1; i >= 0; i-- {
		for _, t := range st.Edits[i].Todos {
			if t == q {
				return []Ref{st.Edits[i].Ref}
			}
		}
	}
	return nil
}
