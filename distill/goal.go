package distill

// Goal and latest request. A session's goal is the substantive request that
// set the work; later prompts are usually follow-ups (questions,
// clarifications, "what's left?") that must not replace it. The rules are
// structural first, so they hold in any language the user writes:
//
//  1. An acknowledgement (substantive is false: "yes", "ok go ahead",
//     "weiter", "好的", a slash command) changes nothing.
//  2. The first substantive prompt is the goal. It is weak when it is a
//     question ("what should we work on now?") or under three words: the
//     next substantive non-question request of at least weakWords words
//     replaces it.
//  3. An explicit switch ("drop that — fix the login 500 first", "new task:",
//     "vergiss das", "nouvelle tâche", "新任务", …; switchMarkers) replaces
//     the goal, and the old goal is kept as set aside.
//  4. A question (ends in ? or ？, starts with ¿, or ends in a CJK question
//     particle) is a follow-up: it becomes the latest request only.
//  5. The first prompt after a compaction or in a new session of the same
//     project (a resume, or another agent) is a follow-up — people resume
//     with "where were we" or "continue with X" — unless it is a switch or
//     a new topic (newTopic: a request of newTopicWords words or more that
//     shares no content word with the goal, does not point back at it,
//     continue it or add to it, and is not a choice): a new session on
//     another subject is new work.
//  6. A request that starts with a sequence word ("now", "next", "jetzt",
//     "maintenant", "теперь", "接下来", "次は", …), shares no content word
//     with the goal and does not point back at it with a pronoun ("now make
//     it shorter"; backRefs) starts a new task (the goal is replaced, not
//     set aside: the earlier one was presumably finished).
//  7. Anything else is a follow-up: the latest request, the goal unchanged.
//
// A compaction summary is never a request (only KindPrompt rows are read).

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// weakWords is the size under which a first request is too thin to hold
// the goal against a fuller one that follows ("hi, can you help?" then the
// real task).
const weakWords = 5

// promptClass is what a prompt does to the goal.
type promptClass int

const (
	promptAck      promptClass = iota // changes nothing
	promptGoal                        // becomes the goal (first, or replacing a weak one)
	promptSwitch                      // replaces the goal; the old one is set aside
	promptNewTask                     // replaces the goal; the old one is done
	promptFollowUp                    // the latest request only
)

// switchMarkers are phrases that abandon the current task, matched anywhere
// in the lower-cased prompt. One list per language the users of the agents
// we read write in; a phrase must not also be a decision ("use X instead of
// Y" is a decision, so "instead" alone is a start marker only).
var switchMarkers = phraseList("switch")

// switchStarts are switch markers that count only at the start of a prompt
// ("instead, fix the login 500"; "use Redis instead of X" is a decision).
var switchStarts = phraseList("switch_start")

// sequenceStarts begin a request that follows the previous one ("now add
// the CLI flag"): with no content word in common with the goal it is a
// new task.
var sequenceStarts = phraseList("sequence_start")

// backRefs are the pronouns that point a request back at the current work.
var backRefs = phraseSet("back_ref")

// backRefCJK are the same pronouns in Chinese and Japanese (no spaces).
var backRefCJK = phraseList("back_ref_cjk")

// refersBack reports whether a lower-cased prompt points back at the
// current work with a pronoun.
func refersBack(low string) bool {
	for _, w := range promptWords(low) {
		if backRefs()[strings.Trim(w, "'-")] {
			return true
		}
	}
	return containsAny(low, backRefCJK())
}

// ackWords extend nudgeWords with acknowledgements in the other languages
// (a prompt made only of these asks for no new work).
var ackWords = phraseSet("ack")

// isQuestion reports whether a prompt asks rather than requests: it ends in
// a question mark (ASCII or full-width), starts with ¿, or ends in a
// Chinese or Japanese question particle.
func isQuestion(p string) bool {
	t := strings.TrimRightFunc(strings.TrimSpace(p), func(r rune) bool { return unicode.IsSpace(r) || r == '。' || r == '.' })
	if t == "" {
		return false
	}
	if strings.HasPrefix(t, "¿") {
		return true
	}
	last, _ := utf8.DecodeLastRuneInString(t)
	switch last {
	case '?', '？':
		return true
	}
	for _, suf := range []string{"吗", "呢", "か", "ですか", "ますか"} {
		if strings.HasSuffix(t, suf) {
			return true
		}
	}
	return false
}

// cjk reports whether r is a Han, Hiragana, Katakana or Hangul rune: scripts
// written without spaces, where a word count means little.
func cjk(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// promptSize is a prompt's length in words; in CJK text every two
// characters count as one word.
func promptSize(p string) int {
	n := 0
	for _, w := range promptWords(p) {
		c := 0
		for _, r := range w {
			if cjk(r) {
				c++
			}
		}
		if c == 0 {
			n++
		} else {
			n += max(1, (c+1)/2) + btoi(c < utf8.RuneCountInString(w))
		}
	}
	return n
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// contentWords are the words that carry a text's subject: words of four
// or more letters (lower-cased, cut to their first six letters so that
// "tests" and "testing" meet), paths and file names, and CJK bigrams.
func contentWords(s string) map[string]bool { return contentWordsCut(s, 6) }

// contentWordsCut is contentWords with words cut to n letters.
func contentWordsCut(s string, n int) map[string]bool {
	out := map[string]bool{}
	for _, w := range promptWords(strings.ToLower(s)) {
		var han []rune
		for _, r := range w {
			if cjk(r) {
				han = append(han, r)
			}
		}
		if len(han) > 0 {
			for i := 0; i+1 < len(han); i++ {
				out[string(han[i:i+2])] = true
			}
			continue
		}
		rs := []rune(strings.Trim(w, "'-"))
		if len(rs) < 4 {
			continue
		}
		out[string(rs[:min(n, len(rs))])] = true
	}
	for _, f := range strings.Fields(s) {
		if strings.ContainsAny(f, "/.") && len(f) > 3 {
			out[strings.ToLower(strings.Trim(f, "`'\"()[]{},;:"))] = true
		}
	}
	return out
}

// overlaps reports whether b shares a content word with a, words cut to
// five letters ("limiting" and "limiter" meet: a request on the same
// subject in other words).
func overlaps(a, b string) bool {
	wa := linkWords(a)
	for w := range linkWords(b) {
		if wa[w] {
			return true
		}
	}
	return false
}

// linkWords are the words that can link two requests: content words cut
// to five letters, without URLs, paths and file names (two requests citing
// https links or the same src/ folder are not on one subject) nor the stop
// words of lang/ ("please", "could", "this").
func linkWords(s string) map[string]bool {
	var kept []string
	for _, f := range strings.Fields(s) {
		if strings.Contains(f, "://") || strings.HasPrefix(f, "www.") || strings.ContainsAny(f, "/\\") {
			continue
		}
		kept = append(kept, f)
	}
	out := map[string]bool{}
	for w := range contentWordsCut(strings.Join(kept, " "), 5) {
		if strings.ContainsAny(w, "/.") {
			continue
		}
		out[w] = true
	}
	for _, p := range phrases("stop") {
		r := []rune(p)
		delete(out, string(r[:min(5, len(r))]))
	}
	return out
}

// startsWithAny reports whether low, after any leading acknowledgement
// ("ok, now …", "great. next …") and punctuation, starts with one of the
// markers as a whole word.
func startsWithAny(low string, starts []string) bool {
	t := stripLeadingAcks(low)
	for _, m := range starts {
		if !strings.HasPrefix(t, m) {
			continue
		}
		rest := t[len(m):]
		r, _ := utf8.DecodeRuneInString(rest)
		if rest == "" || !wordRune(r) || cjk(r) {
			return true
		}
	}
	return false
}

// stripLeadingAcks drops acknowledgement words and punctuation at the
// start of a lower-cased prompt.
func stripLeadingAcks(low string) string {
	t := strings.TrimSpace(low)
	for range 4 {
		t = strings.TrimLeftFunc(t, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) })
		end := strings.IndexFunc(t, func(r rune) bool { return !wordRune(r) })
		if end <= 0 {
			break
		}
		w := t[:end]
		if !nudgeWords()[w] && !ackWords()[w] || w == "now" || w == "next" || w == "then" {
			break
		}
		t = t[end:]
	}
	return strings.TrimLeftFunc(t, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) })
}

// thanksWords say thank you; assentWords say yes. "Thanks, great work"
// after "Should I use 14 months of runway?" thanks without answering: the
// question stays open, it is not a "yes".
var thanksWords = phraseSet("thanks")

var assentWords = phraseSet("assent")

// thanksOnly reports whether an acknowledgement thanks without assenting.
func thanksOnly(p string) bool {
	thanks := false
	for _, w := range promptWords(strings.ToLower(p)) {
		w = strings.Trim(w, "'-")
		if assentWords()[w] {
			return false
		}
		thanks = thanks || thanksWords()[w]
	}
	return thanks
}

// classifyPrompt applies the rules at the top of this file.
func (st *State) classifyPrompt(p string) promptClass {
	if !substantive(p) {
		return promptAck
	}
	low := strings.ToLower(p)
	switch {
	case st.Task == "":
		return promptGoal
	case restates(p, st.Task):
		return promptGoal
	case containsAny(low, switchMarkers()) || startsWithAny(low, switchStarts()):
		return promptSwitch
	case isQuestion(p):
		return promptFollowUp
	case st.AfterBreak:
		if newTopic(p, low, st.Task) {
			return promptNewTask
		}
		return promptFollowUp
	case st.GoalWeak && promptSize(p) >= weakWords:
		return promptGoal
	case startsWithAny(low, sequenceStarts()) && promptSize(p) >= 4 && !overlaps(st.Task, p) && !refersBack(low):
		return promptNewTask
	}
	return promptFollowUp
}

// restates reports whether p is the goal sent again, completed: it starts
// with the whole goal and goes on (a user who hit enter mid-sentence and
// re-sent the finished request; aider users re-run /ask with more words).
// The fuller text is the goal, never the cut one.
func restates(p, goal string) bool {
	g := strings.TrimRight(strings.TrimSpace(goal), " .…。")
	return utf8.RuneCountInString(g) >= 8 && len(p) > len(goal) && strings.HasPrefix(strings.ToLower(p), strings.ToLower(g))
}

// backMarkers return to earlier work ("back to", "zurück zu", "回到").
var backMarkers = phraseList("back")

// returnTo is the index of the set-aside goal a request goes back to: it
// says "back to" and shares a content word with that goal; -1 when none.
func (st *State) returnTo(p string) int {
	if len(st.SetAside) == 0 || !containsAny(strings.ToLower(p), backMarkers()) {
		return -1
	}
	for i := len(st.SetAside) - 1; i >= 0; i-- {
		if overlaps(st.SetAside[i], p) {
			return i
		}
	}
	return -1
}

// newTopicWords is the size from which a request in a new session can be
// new work rather than a resume.
const newTopicWords = 6

// continueMarkers continue or add to the current work: whole words or
// phrases, a trailing * a stem, CJK anywhere.
var continueMarkers = phraseList("continue")

// newTopic applies rule 5's exception to a lower-cased request.
func newTopic(p, low, goal string) bool {
	if isQuestion(p) || promptSize(p) < newTopicWords || goal == "" || overlaps(goal, p) || refersBack(low) ||
		isDecision(p, true) {
		return false
	}
	words := " " + strings.Join(promptWords(low), " ") + " "
	for _, m := range continueMarkers() {
		switch {
		case cjkString(m):
			if strings.Contains(low, m) {
				return false
			}
		case strings.HasSuffix(m, "*"):
			if strings.Contains(words, " "+strings.TrimSuffix(m, "*")) {
				return false
			}
		case strings.Contains(words, " "+m+" "):
			return false
		}
	}
	return true
}

// cjkString reports whether s is written in a CJK script.
func cjkString(s string) bool {
	for _, r := range s {
		if cjk(r) {
			return true
		}
	}
	return false
}

// weakGoal reports whether a goal is too thin to hold against a fuller
// request (rule 2).
func weakGoal(p string) bool {
	// A short request whose object is a pronoun ("Explain what this is")
	// names nothing: the request that follows says what "this" is.
	return isQuestion(p) || promptSize(p) < 3 || promptSize(p) < 8 && containsAny(strings.ToLower(p), resumeOpeners()) ||
		promptSize(p) < 8 && refersBack(strings.ToLower(p)) && namesNothing(p)
}

// namesNothing reports whether a request names no subject beyond its verb:
// no link word but its first ("Explain what this is", "Schau dir das mal
// an"; "Fix it in the parser" names the parser).
func namesNothing(p string) bool {
	ws := linkWords(p)
	if f := promptWords(strings.ToLower(p)); len(f) > 0 {
		r := []rune(f[0])
		delete(ws, string(r[:min(5, len(r))]))
	}
	return len(ws) == 0
}

// resumeOpeners open a session by pointing at earlier work without naming
// it ("We were working on the task", a real Russian aider session's first
// prompt): too thin to hold as the goal against the request that follows.
var resumeOpeners = phraseList("resume_opener")

// addPrompt folds a user prompt into the goal, the latest request and the
// set-aside goals.
func (st *State) addPrompt(p string, sid int64, at time.Time) promptClass {
	p = strings.TrimSpace(p)
	if st.PromptSession != 0 && sid != st.PromptSession {
		st.AfterBreak = true // another session of the project: a resume
	}
	st.PromptSession = sid
	class := st.classifyPrompt(p)
	if class != promptAck {
		st.AfterBreak = false
		if i := st.returnTo(p); i >= 0 {
			// "Now back to the login rate limiting": the set-aside goal is
			// current again and the detour is set aside in its place.
			back := st.SetAside[i]
			st.SetAside = append(st.SetAside[:i:i], st.SetAside[i+1:]...)
			if st.Task != "" {
				st.setAside()
			}
			st.Task, st.TaskAt, st.GoalWeak = back, at, false
			st.Latest, st.LatestAt = p, at
			return promptFollowUp
		}
	}
	switch class {
	case promptGoal, promptNewTask:
		st.Task, st.TaskAt, st.GoalWeak = p, at, weakGoal(p)
		st.Latest, st.LatestAt = "", time.Time{}
	case promptSwitch:
		if st.Task != "" && st.Task != p {
			st.setAside()
		}
		st.Task, st.TaskAt, st.GoalWeak = p, at, false
		st.Latest, st.LatestAt = "", time.Time{}
	case promptFollowUp:
		st.Latest, st.LatestAt = p, at
	}
	return class
}

// setAside keeps the goal among the set-aside ones, the newest
// keepSetAside.
func (st *State) setAside() {
	g := clip(oneLine(st.Task), 200)
	st.SetAside = last(append(st.SetAside, g), keepSetAside)
	st.setSource("s:"+g, st.TaskRef)
}
