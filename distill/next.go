package distill

// The next action and the open questions.
//
// Next action, the first that exists of:
//  1. the latest request, when nothing has answered it yet (the session
//     stopped right after the user asked);
//  2. the first item of the agent's own plan (TodoWrite, update_plan,
//     write_todos) not marked done;
//  3. a forward-looking sentence of the last assistant turn ("Next I will
//     …", "Then we need to …", "Als Nächstes …", "接下来 …"; nextMarkers);
//  4. the still-failing test or command: make it pass;
//  5. the question the assistant asked the user: the user must answer it.
//
// Never a recap (only forward-looking sentences qualify), a pleasantry or
// offer of help (boilerplate), an item already done, or a string that is
// not prose (prose).
//
// Open questions are the assistant's questions of its last turn that no
// prompt has answered (boilerplate excluded), TODO/FIXME markers in the
// lines an edit added (todoLines), and the failures still unresolved.

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// PlanItem is one step of the agent's own plan.
type PlanItem struct {
	Text string
	Done bool
}

// maxPlan is how many plan items the state keeps.
const maxPlan = 12

// planTool reports whether a tool call's input is the agent's task list.
func planTool(name string) bool {
	switch strings.ToLower(name) {
	case "todowrite", "update_plan", "write_todos", "todo_write", "manage_todo_list", "update_todo", "todo":
		return true
	}
	return false
}

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
	if m, ok := v.(map[string]any); ok {
		for _, k := range []string{"todos", "plan", "items", "steps", "tasks"} {
			if l, ok := m[k]; ok {
				v = l
				break
			}
		}
	}
	l, ok := v.([]any)
	if !ok {
		return nil, false
	}
	var out []PlanItem
	for _, e := range l {
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
			st = strings.ToLower(st)
			done, _ := x["completed"].(bool)
			done2, _ := x["done"].(bool)
			it.Done = done || done2 || st == "completed" || st == "done" || st == "complete" || st == "cancelled"
		}
		if it.Text = clip(oneLine(it.Text), 200); it.Text != "" {
			out = append(out, it)
		}
		if len(out) == maxPlan {
			break
		}
	}
	return out, true
}

// nextMarkers are forward-looking phrases beyond nextRE's English.
var nextMarkers = []string{
	"i'll start", "i will start", "i'll begin", "i'll now", "i'm going to", "let me start", "let me now", "we'll start",
	"first, i'll", "ich werde ", "ich fange", "je vais ", "voy a ", "vou ", "я начну", "сейчас я", "我会先", "我将", "まず",
	"als nächstes", "als nächstes werde", "danach werde", "dann werde", "nächster schritt", "noch offen:",
	"ensuite", "prochaine étape", "je vais maintenant", "il reste à", "il faut encore",
	"a continuación", "luego voy", "el siguiente paso", "después voy", "queda pendiente",
	"em seguida", "o próximo passo", "depois vou", "ainda falta",
	"далее", "затем я", "следующий шаг", "дальше нужно", "осталось",
	"接下来", "下一步", "然后我", "还需要",
	"次に", "次は", "この後", "残りは",
	// a plan for later in the user's language: "Дальше я добавлю…", "Mañana redactaré…"
	"дальше я", "потом я", "затем", "завтра", "mañana", "luego ", "morgen", "demain", "amanhã", "明天", "明日", "tomorrow i",
}

func forwardLooking(s string) bool {
	if nextRE.MatchString(s) {
		return true
	}
	low := strings.ToLower(s)
	for _, m := range nextMarkers {
		if strings.Contains(low, m) {
			return true
		}
	}
	return false
}

// boilerplateMarkers are offers of help and sign-offs.
var boilerplateMarkers = []string{
	"anything else", "let me know", "can i help", "how can i help", "what else can i", "happy to help", "hope this helps",
	"what would you like", "is there something else", "any other questions", "feel free to",
	"sonst noch", "kann ich sonst", "noch etwas", "autre chose", "puis-je vous aider", "n'hésitez pas", "algo más", "en qué más",
	"no dudes", "mais alguma coisa", "posso ajudar", "fique à vontade", "что-нибудь ещё", "чем ещё", "чем могу помочь",
	"还有什么", "其他需要", "随时告诉", "他に何か", "お手伝い", "お気軽に",
	// "How can I assist you today?" (a subagent's warm-up reply) is an offer, not a question.
	"how can i assist", "how may i", "can i assist", "can i do for you", "wie kann ich ihnen", "wie kann ich dir", "womit kann ich",
	"en qué puedo", "comment puis-je", "чем я могу", "有什么可以帮", "有什么我可以", "どのようなご用件",
}

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
	low := strings.ToLower(s)
	for _, m := range boilerplateMarkers {
		if strings.Contains(low, m) {
			return true
		}
	}
	return false
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

var questionPrefixRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\d+[.)]\s*|[-*•]\s*)`)
})

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
	return dedupe(out)
}

// todoRE matches a to-do marker that is one: TODO/FIXME/XXX/HACK as a
// whole upper-case word, at the start of the line or after a comment
// marker, followed by ":", "(", "-" or a lower-case word. "# TODO App
// Project" (a heading, a product name) is not a to-do.
var todoLineRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*(?:[+]\s*)?(?://+|#+|--|/\*+|\*|<!--|;+|%|")?\s*\b(TODO|FIXME|XXX|HACK)\b(?:\([^)]*\))?(?:\s*[:\-–]\s*|\s+(\p{Ll}))(.*)$`)
})

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

var planFieldRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`"(content|step|description|title|text|task|status)"\s*:\s*"((?:[^"\\]|\\.)*)"`)
})

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
