package distill

// The next action and the open questions.
//
// Next action: the first rule of nextRules (state.go) that gives one: the
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
				st := strings.ToLower(v)
				it.Done = st == "completed" || st == "done" || st == "complete" || st == "cancelled"
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
