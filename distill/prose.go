package distill

// Rules over what people wrote. Goal: the substantive request that set the
// work; follow-ups must not replace it. Structural rules, for any language:
//
//  1. An acknowledgement ("yes", "ok go ahead", "weiter", "好的", a slash
//     command; !substantive) changes nothing.
//  2. The first substantive prompt is the goal; weak when a question or under
//     three words: the next non-question request of weakWords replaces it.
//  3. An explicit switch ("drop that — fix the login 500 first", "vergiss
//     das", "新任务") replaces the goal and sets the old one aside.
//  4. A question (?, ？, ¿…, a CJK question particle) is a follow-up.
//  5. The first prompt after a compaction or in a new session is a follow-up
//     ("where were we", "continue with X") unless a switch or a new topic
//     (newTopic: newTopicWords or more, no content word shared with the goal,
//     not pointing back, continuing or adding to it, not a choice).
//  6. A sequence word ("now", "jetzt", "теперь", "接下来") opening a request
//     sharing no content word with the goal nor pointing back ("now make it
//     shorter") starts a new task: the goal replaced, not set aside; once the goal is done it needs no "now"
//     (nextAfterDone), and the done goal is set aside as "completed: …". The user's constraints stand across it.
//  7. Anything else is a follow-up. A compaction summary is never a request.
//
// Decisions, so the next agent does not re-debate them: a sentence that (1) says so ("we decided/chose/will use", "X
// instead of Y", lang/ decision); (2) a user's sentence opening with a choice verb ("use X", "don't add Z", "不要 …");
// (3) the user's statement answering the assistant's question ("„heute“ serverseitig" after "Where should 'today' be
// computed?"); one declining it ("no", "lass es", "不用") makes the proposal refused work instead. A later one
// supersedes one sharing two content words, or one when it says it replaces ("instead of", "statt", "вместо", "而不是").
//
// References and action items serve prose work (research, writing): sources named (URLs, documents, people, dates)
// and commitments ("send the deck to Anna by Friday").

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

const (
	weakWords     = 5 // a first request under it cannot hold against a fuller one ("hi, can you help?")
	newTopicWords = 6 // from this size a request in a new session can be new work, not a resume
)

// promptClass is what a prompt does to the goal.
type promptClass int

const (
	promptAck      promptClass = iota // changes nothing
	promptGoal                        // becomes the goal (first, or replacing a weak one)
	promptSwitch                      // replaces the goal; the old one is set aside
	promptNewTask                     // replaces the goal; the old one is done
	promptFollowUp                    // the latest request only
	promptCorrect                     // takes a term of the goal back: the goal, the old one kept as the user's words
)

// The lang/ lists the rules read. A switch phrase must not also be a
// decision: "use X instead of Y" is one, so "instead" counts only at the start.
const (
	nudgeWords       phraseName = "nudge"        // prompts that confirm or push on
	ackWords         phraseName = "ack"          // nudgeWords in the other languages
	switchMarkers    phraseName = "switch"       // anywhere in the prompt
	switchStarts     phraseName = "switch_start" // at the start ("instead, fix the login 500")
	sequenceStarts   phraseName = "sequence_start"
	andWords         phraseName = "and"          // joins two clauses: "fix X and then add Y"
	backRefs         phraseName = "back_ref"     // pronouns pointing back at the current work
	backRefCJK       phraseName = "back_ref_cjk" // the same without spaces
	thanksWords      phraseName = "thanks"
	assentWords      phraseName = "assent"
	backMarkers      phraseName = "back"     // "back to", "zurück zu", "回到"
	continueMarkers  phraseName = "continue" // whole words, a trailing * a stem, CJK anywhere
	resumeOpeners    phraseName = "resume_opener"
	decisionMarkers  phraseName = "decision"
	choiceStarts     phraseName = "choice_start"
	supersedeMarkers phraseName = "supersede"
	notSubject       phraseName = "not_subject" // stems of markers and function words: no subject
	actionMarkers    phraseName = "action"
	personTriggers   phraseName = "person"
	declineStarts    phraseName = "decline_start" // an answer opening with it turns the question's proposal down
	negations        phraseName = "negation"      // a word taking back the term it stands by (corrects)
	offerWords       phraseName = "offer"         // the agent's question offers its own step ("Want me to …?")
	hedgeWords       phraseName = "hedge"         // a conditional ("could", "könnte"): proposes, reports nothing done
	nextEnds         phraseName = "next_end"      // a clause ending in it states the next step ("… to euros next.")
	whWords          phraseName = "wh"            // an embedded question's word: "tell me what to do next" leaves the step to the user
)

// substantive: a request, not a confirmation or nudge ("yes", "ok go ahead", "do it").
func substantive(p string) bool {
	p = strings.TrimSpace(p)
	if p == "" || strings.HasPrefix(p, "/") {
		return false
	}
	ws := promptWords(strings.ToLower(p))
	return len(ws) > 6 || slices.ContainsFunc(ws, func(w string) bool {
		w = strings.Trim(w, "'-")
		return !nudgeWords.has(w) && !ackWords.has(w)
	})
}

func refersBack(low string) bool {
	return slices.ContainsFunc(promptWords(low), func(w string) bool { return backRefs.has(strings.Trim(w, "'-")) }) ||
		containsAny(low, backRefCJK.list())
}

func isQuestion(p string) bool {
	t := strings.TrimRightFunc(strings.TrimSpace(p), func(r rune) bool { return unicode.IsSpace(r) || r == '。' || r == '.' })
	if t == "" {
		return false
	}
	if last, _ := utf8.DecodeLastRuneInString(t); strings.HasPrefix(t, "¿") || last == '?' || last == '？' {
		return true
	}
	return slices.ContainsFunc([]string{"吗", "呢", "か", "ですか", "ますか"}, func(suf string) bool { return strings.HasSuffix(t, suf) })
}

// promptSize is a length in words; in CJK two characters count as one.
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

// contentWords carry the subject: words of 4+ letters (lower-cased, cut to
// six: "tests" and "testing" meet), paths and file names, CJK bigrams.
func contentWords(s string) map[string]bool { return contentWordsCut(s, 6) }

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

// overlaps: b shares a link word with a ("limiting" and "limiter" meet).
func overlaps(a, b string) bool {
	wa := linkWords(a)
	for w := range linkWords(b) {
		if wa[w] {
			return true
		}
	}
	return false
}

// linkWords are content words cut to five letters, without URLs, paths and file names (two requests citing https
// links or one src/ folder are not on one subject) nor lang/ stop words ("please", "could", "this").
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

// startsWithAny: after leading acknowledgements ("ok, now …") and
// punctuation, low starts with one of the markers as a whole word.
func startsWithAny(low string, starts []string) bool {
	t := stripLeadingAcks(low)
	return slices.ContainsFunc(starts, func(m string) bool {
		rest, ok := strings.CutPrefix(t, m)
		return ok && wordEnds(rest)
	})
}

// wordEnds: rest, what follows a marker, starts past the marker's last word (not "no" in "nothing"; CJK has no spaces).
func wordEnds(rest string) bool {
	r, _ := utf8.DecodeRuneInString(rest)
	return rest == "" || !wordRune(r) || cjk(r)
}

func stripLeadingAcks(low string) string {
	t := strings.TrimSpace(low)
	for range 4 {
		t = strings.TrimLeftFunc(t, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) })
		end := strings.IndexFunc(t, func(r rune) bool { return !wordRune(r) })
		if end <= 0 {
			break
		}
		w := t[:end]
		if !nudgeWords.has(w) && !ackWords.has(w) || w == "now" || w == "next" || w == "then" {
			break
		}
		t = t[end:]
	}
	return strings.TrimLeftFunc(t, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) })
}

// thanksOnly: "Thanks, great work" after "Should I use 14 months of runway?"
// thanks without assenting; the question stays open.
func thanksOnly(p string) bool {
	thanks := false
	for _, w := range promptWords(strings.ToLower(p)) {
		w = strings.Trim(w, "'-")
		if assentWords.has(w) {
			return false
		}
		thanks = thanks || thanksWords.has(w)
	}
	return thanks
}

func (st *State) classifyPrompt(p string) promptClass {
	if st.asksNothing(p) {
		return promptAck
	}
	low := strings.ToLower(p)
	switch {
	case st.Task == "":
		return promptGoal
	case restates(p, st.Task):
		return promptGoal
	case containsAny(low, switchMarkers.list()) || startsWithAny(low, switchStarts.list()) || dropsTask(low, st.Task):
		return promptSwitch
	case st.correctedTerm(p) != "":
		return promptCorrect
	case isQuestion(p):
		return promptFollowUp
	case st.AfterBreak:
		if newTopic(p, low, st.Task) {
			return promptNewTask
		}
		return promptFollowUp
	case st.GoalWeak && promptSize(p) >= weakWords && !st.picksFromQuestion(p):
		return promptGoal
	case st.sequenceNewTask(p, low):
		return promptNewTask
	}
	return promptFollowUp
}

// dropsTask: "Forget the migration for now. Instead, add rate limiting": a sentence opening with a switch marker's verb
// (the marker less its back-reference: "forget that" → forget, "vergiss das" → vergiss) on an object naming the task,
// then one opening with a switch_start. The object must share a word with the task: "Drop the Redis dependency.
// Instead, use an LRU cache" during "Add caching" is a choice within the task, no switch.
func dropsTask(low, task string) bool {
	ss := sentences(low)
	for i := 1; i < len(ss); i++ {
		if startsWithAny(ss[i], switchStarts.list()) && startsWithAny(ss[i-1], dropVerbs()) && overlaps(ss[i-1], task) {
			return true
		}
	}
	return false
}

var dropVerbs = sync.OnceValue(func() []string {
	var out []string
	for _, m := range switchMarkers.list() {
		if i := strings.LastIndexByte(m, ' '); i > 0 && backRefs.has(m[i+1:]) {
			out = append(out, m[:i])
		}
	}
	return out
})

// picksFromQuestion: p answers the turn's last question with its words ("exponential, capped at 30 seconds" after
// "exponential or fixed?") or turns it down ("not yet, first show me …" after "Shall I write it?"): a decision, not a
// fuller goal; a request naming other work ("which task?" answered by naming it) is the goal.
func (st *State) picksFromQuestion(p string) bool {
	qs := turnQuestions(st.TurnTexts)
	_, declines := cutDeclines(strings.ToLower(p))
	return len(qs) > 0 && (overlaps(qs[len(qs)-1], p) || declines)
}

// correctedTerm: the request opens by taking a term of the goal back ("Halt, nicht CSV — als Excel", "Not the signup
// form: the reset form", "JSONじゃなくてlogfmtで", "不是CSV", "不是测试"): a negation (lang/ negation) among the first
// three terms, next to a name the goal holds (4+ letters or capitals), returned lower-cased. It becomes the goal, but the old one is not set
// aside as after a switch: one term was taken back, the rest stands ("Not the tests — leave them; fix the parser"
// keeps "the tokenizer tests fail"), so it stays first among the user's instructions. It drops the decisions naming
// the term ("zap の JSON エンコーダを使います" after "JSONじゃなくて").
func (st *State) correctedTerm(p string) string {
	var ts [5]string // the opening is enough, and no allocation: this runs on every request
	var at [5]int    // where each term starts in p
	n, off := 0, 0
	anyTerm(p, func(t string) bool {
		at[n] = off + strings.Index(p[off:], t)
		ts[n], off, n = t, at[n]+len(t), n+1
		return n == len(ts)
	})
	for i := range min(n, 3) { // "Not the tests", "No, not the tests", "No wait, not the tests"
		if c := st.cjkCorrected(ts[i]); c != "" {
			return c
		}
		pre, post := negationAt(ts[i])
		lo, hi := i+1, min(n, i+3)
		if pre && i > 0 {
			lo, hi = i-1, i
		} else if !post || i > 0 && !opensClause(ts[i-1], p[at[i-1]+len(ts[i-1]):at[i]]) {
			continue
		}
		for _, c := range ts[lo:hi] {
			if nameLike(c) && hasTerm(st.Task, c) && (pre || st.goalClause(p, c)) {
				return strings.ToLower(c)
			}
		}
	}
	return ""
}

// cjkCorrected: a CJK term opening with a negation takes back its own rest ("不是测试，测试是对的，改解析器": 测试) when
// the goal holds the rest's first two characters; "" when not.
func (st *State) cjkCorrected(t string) string {
	for _, m := range negations.list() {
		if rest, ok := strings.CutPrefix(t, m); ok && cjkString(t) && utf8.RuneCountInString(rest) >= 2 && strings.Contains(st.Task, string([]rune(rest)[:2])) {
			return rest
		}
	}
	return ""
}

// opensClause: a negation after the term prev and the separator sep opens its clause — sep closes one ("No wait, not
// the tests") or prev is a stop word ("Bitte nicht CSV"). Inside a clause the merged lists' words mean something else:
// Portuguese "funciona no CI" is "works in the CI", no Spanish "no".
func opensClause(prev, sep string) bool {
	return strings.ContainsAny(sep, clauseEnds) || stopWord(prev)
}

func stopWord(t string) bool {
	return slices.ContainsFunc(phrases("stop"), func(w string) bool { return strings.EqualFold(w, t) })
}

// goalClause: what follows the taken-back term up to the clause's end is the goal's words or stop words ("nicht CSV —",
// "Not the signup form —"); a word of its own there is a verb the negation is about ("Nicht die Tests ändern, sondern
// den Code …": leave the tests, the goal stands).
func (st *State) goalClause(p, c string) bool {
	rest := p[strings.Index(p, c)+len(c):]
	if i := strings.IndexAny(rest, clauseEnds); i >= 0 {
		rest = rest[:i]
	}
	return !anyTerm(rest, func(t string) bool { return !cjkString(t) && !hasTerm(st.Task, t) && !stopWord(t) })
}

// hasTerm: one of s's terms is t, whatever the case.
func hasTerm(s, t string) bool {
	return anyTerm(s, func(w string) bool { return strings.EqualFold(w, t) })
}

// dropCorrected drops the decisions naming the term a correction takes back.
func (st *State) dropCorrected(p string) {
	if t := st.correctedTerm(p); t != "" {
		st.Decided = slices.DeleteFunc(st.Decided, func(d string) bool { return hasTerm(d, t) })
	}
}

// negationAt: t negates the term before it (ja "…じゃなくて") or the terms after it ("nicht", "not", zh "不是…").
func negationAt(t string) (pre, post bool) {
	if !cjkString(t) {
		return false, slices.ContainsFunc(negations.list(), func(m string) bool { return strings.EqualFold(m, t) })
	}
	for _, m := range negations.list() {
		pre, post = pre || strings.HasSuffix(t, m), post || strings.HasPrefix(t, m)
	}
	return pre, post
}

// nameLike: a term that names something — 4+ letters and no stop word, or in capitals ("CSV", "S3").
func nameLike(t string) bool {
	if strings.IndexFunc(t, unicode.IsLower) < 0 && strings.IndexFunc(t, unicode.IsUpper) >= 0 {
		return len(t) >= 2
	}
	return utf8.RuneCountInString(t) >= 4 && !stopWord(t)
}

// anyTerm reports whether f holds for a term of s, calling it on each in order until it does: terms are words split
// at anything but letters and digits, and where a CJK run starts or ends ("JSONじゃなくてlogfmt": three terms).
func anyTerm(s string, f func(string) bool) bool {
	start, prev := -1, false
	for i, r := range s {
		word, c := unicode.IsLetter(r) || unicode.IsNumber(r), cjk(r)
		if start >= 0 && (!word || c != prev) {
			if f(s[start:i]) {
				return true
			}
			start = -1
		}
		if word && start < 0 {
			start = i
		}
		prev = c
	}
	return start >= 0 && f(s[start:])
}

// sequenceNewTask is rule 6: "now …" opening a request that shares no content word with the goal nor points back,
// nor pastes an error (a report on the current work: "agora dá erro ao arrancar:" over a stack trace).
func (st *State) sequenceNewTask(p, low string) bool {
	return startsWithAny(low, sequenceStarts.list()) && promptSize(p) >= 4 && !overlaps(st.Task, p) && !refersBack(low) &&
		pastedCondensed(p) == p || st.nextAfterDone(p, low)
}

// nextAfterDone: once the goal's work stands done (the agent reported it, or a fix verified), a request sharing no
// content word with it, not pointing back at it and no choice ("also add an export command that writes CSV") is the
// next task, with or without "now"; "also" adds to finished work, so it continues nothing. A back-reference counts in
// the request's first four words or as its last ("do the same for X", "add a test for it"), not as a relative
// pronoun further in ("a command that writes …").
func (st *State) nextAfterDone(p, low string) bool {
	if promptSize(p) < 4 || !st.workDone(false) || overlaps(st.Task, p) || isDecision(p, true) || pastedCondensed(p) != p || // cheap first: most prompts come mid-task
		len(turnQuestions(st.TurnTexts)) > 0 { // an answer ("no, not yet — wait for the backup") is no new task
		return false
	}
	return !pointsBack(low)
}

// pointsBack: a back-reference in the request's first four words or as its last word, or a CJK one anywhere.
func pointsBack(low string) bool {
	ws := promptWords(low)
	return refersBack(strings.Join(ws[:min(4, len(ws))], " ")+" "+ws[len(ws)-1]) || containsAny(low, backRefCJK.list())
}

// laterAsk is what request req asks after a sequence word opening a clause ("fix the redirect loop, and then add a
// remember-me box": "add a remember-me box"), in the user's words; "" when it asks one thing.
func laterAsk(req string) string {
	low, at := strings.ToLower(req), len(req)
	for _, p := range sequenceStarts.list() {
		if i := clauseOpening(low, p); i > 0 {
			at = min(at, i)
		}
	}
	if at == len(req) || len(low) != len(req) {
		return ""
	}
	return strings.TrimLeft(req[at:], " ,:")
}

// clauseOpening is the end of phrase p's first use opening a clause of low after its start, or -1.
func clauseOpening(low, p string) int {
	for off := 0; off < len(low); {
		i := phraseAt(low[off:], p)
		if i < 0 {
			return -1
		}
		if i += off; i > 0 && clauseOpens(low[:i]) {
			return i + len(p)
		}
		off = i + len(p)
	}
	return -1
}

// clauseOpens: the text before a word ends a clause (a mark, "and", "und").
func clauseOpens(before string) bool {
	b := strings.TrimRight(before, " ")
	r, _ := utf8.DecodeLastRuneInString(b)
	return strings.ContainsRune(clauseEnds, r) || andWords.has(b[strings.LastIndexByte(b, ' ')+1:])
}

// laterAskLeft is the newest request's later ask when the work stands done and the agent's last words report on the
// first ask but name nothing of the later one: one message asked for two things and the session stopped after one.
func (st *State) laterAskLeft() string {
	req := cmp.Or(st.Latest, st.Task)
	later := laterAsk(req)
	if later == "" || overlaps(st.LastText, later) || !overlaps(st.LastText, req[:len(req)-len(later)]) || !st.workDone(true) {
		return ""
	}
	return later
}

func setsGoal(c promptClass) bool { return c != promptAck && c != promptFollowUp }

// restates: p is the goal re-sent, completed (enter hit mid-sentence, an
// aider /ask re-run with more words): the fuller text is the goal.
func restates(p, goal string) bool {
	g := strings.TrimRight(strings.TrimSpace(goal), " .…。")
	return utf8.RuneCountInString(g) >= 8 && len(p) > len(goal) && strings.HasPrefix(strings.ToLower(p), strings.ToLower(g))
}

// returnTo is the set-aside goal a request says "back to" and shares a content word with; -1 when none.
func (st *State) returnTo(p string) int {
	if len(st.SetAside) == 0 || !containsAny(strings.ToLower(p), backMarkers.list()) {
		return -1
	}
	for i := len(st.SetAside) - 1; i >= 0; i-- {
		if overlaps(st.SetAside[i], p) {
			return i
		}
	}
	return -1
}

func newTopic(p, low, goal string) bool {
	if isQuestion(p) || promptSize(p) < newTopicWords || goal == "" || overlaps(goal, p) || refersBack(low) ||
		isDecision(p, true) {
		return false
	}
	words := " " + strings.Join(promptWords(low), " ") + " "
	for _, m := range continueMarkers.list() {
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

// asksNothing: a confirmation or nudge, or after a break a bare resume.
func (st *State) asksNothing(p string) bool {
	return !substantive(p) || st.AfterBreak && resumesOnly(p)
}

// resumesOnly: a short opener pointing at earlier work ("continue where claude stopped", "pick up where you left
// off") after a compaction or in another session asks for nothing new: an acknowledgement, never "Latest request".
func resumesOnly(p string) bool {
	return promptSize(p) < 8 && containsAny(strings.ToLower(p), resumeOpeners.list())
}

// weakGoal (rule 2); a short request whose object is a pronoun ("Explain what this is") names nothing: the next says
// what "this" is. So does an opener pointing at earlier work ("We were working on the task", a real Russian aider
// session's first prompt).
func weakGoal(p string) bool {
	return isQuestion(p) || promptSize(p) < 3 || resumesOnly(p) ||
		promptSize(p) < 8 && refersBack(strings.ToLower(p)) && namesNothing(p)
}

// namesNothing: no link word but the first ("Schau dir das mal an"; "Fix it in the parser" names one).
func namesNothing(p string) bool {
	ws := linkWords(p)
	if f := promptWords(strings.ToLower(p)); len(f) > 0 {
		r := []rune(f[0])
		delete(ws, string(r[:min(5, len(r))]))
	}
	return len(ws) == 0
}

func (st *State) addPrompt(p string, sid int64, at time.Time) promptClass {
	p = strings.TrimSpace(p)
	if st.PromptSession != 0 && sid != st.PromptSession {
		st.AfterBreak = true // another session of the project: a resume
	}
	st.PromptSession = sid
	class, resumed := st.classifyPrompt(p), st.AfterBreak
	if class != promptAck {
		st.AfterBreak = false
		if i := st.returnTo(p); i >= 0 {
			// "Now back to the login rate limiting": it is current again, the detour set aside.
			back := st.SetAside[i]
			st.SetAside = append(st.SetAside[:i:i], st.SetAside[i+1:]...)
			if st.Task != "" {
				st.setAside()
			}
			st.Task, st.TaskAt, st.GoalWeak = back, at, false
			st.Latest, st.LatestAt, st.LatestRef = p, at, st.RowRef
			return promptFollowUp
		}
	}
	switch class {
	case promptGoal, promptNewTask:
		st.finishTask(class == promptNewTask && !resumed)
		st.Task, st.TaskAt, st.GoalWeak = p, at, weakGoal(p)
		st.Latest, st.LatestAt = "", time.Time{}
	case promptSwitch, promptCorrect:
		st.dropCorrected(p)
		if class == promptSwitch && st.Task != "" && st.Task != p {
			st.setAside()
		}
		st.Task, st.TaskAt, st.GoalWeak = p, at, false
		st.Latest, st.LatestAt = "", time.Time{}
	case promptFollowUp:
		st.setLatest(p, at)
	}
	return class
}

// setLatest makes p the latest request. A prompt the agent has not answered the one before yet, in a session where it
// has worked, is typed into the same turn (Claude Code's queued prompts, a screenshot's caption under a request): it
// joins that request, never a replacement hiding the earlier words; a log of the user's prompts alone joins nothing.
// It joins while the handoff's latest-request line (150 bytes) still shows its first 20 bytes: a longer run starts a
// new line, the earlier prompts staying among the instructions. The line's row stays the first prompt's.
func (st *State) setLatest(p string, at time.Time) {
	if st.Latest != "" && !st.Answered && max(st.LastTextSeq, st.LastCallSeq) > 0 && len(st.Latest) < 130 {
		st.Latest += " / " + p
		return
	}
	st.Latest, st.LatestAt, st.LatestRef = p, at, st.RowRef
}

// finishTask sets a done goal aside as completed when a new task follows it in the same session ("Done: retry.py has
// the helper" then "Now write the changelog entry"): finished, not pending; another session's work is history.
func (st *State) finishTask(next bool) {
	if next && st.workDone(false) {
		st.Task = "completed: " + st.Task
		st.setAside()
	}
}

func (st *State) setAside() {
	g := clip(oneLine(st.Task), 200)
	st.SetAside = last(append(st.SetAside, g), keepSetAside)
	st.setSource("s:"+g, st.TaskRef)
}

// harnessTags open user-role text the harness wrote: task and subagent
// notifications (Claude Code 2.1), IDE context, reminders.
var harnessTags = []string{"<task-notification", "<system-reminder", "<ide_opened_file", "<ide_selection", "<ide_diagnostics",
	"<environment_context", "<user_instructions", "<local-command", "<command-message", "<bash-", "<turn_aborted", "<subagent_notification"}

// userWords is what the user wrote of a user-role text, the harness's wrappers dropped (Codex Desktop's "# Files
// mentioned by the user: … ## My request for Codex:" keeps the request; leading IDE blocks go). harness: nothing of
// the user's remains (a task notification).
func userWords(text string) (string, bool) {
	t := strings.TrimSpace(text)
	if i := strings.Index(t, "## My request for "); i >= 0 {
		if j := strings.Index(t[i:], ":"); j >= 0 {
			t = strings.TrimSpace(t[i+j+1:])
		}
	}
	for range 8 {
		if !strings.HasPrefix(t, "<") {
			break
		}
		tag := slices.IndexFunc(harnessTags, func(h string) bool { return strings.HasPrefix(t, h) })
		if tag < 0 {
			break
		}
		end := strings.Index(t, "</"+strings.TrimRight(strings.TrimPrefix(harnessTags[tag], "<"), "-"))
		if end < 0 {
			return "", true // unclosed: all of it is the harness's
		}
		gt := strings.IndexByte(t[end:], '>')
		if gt < 0 {
			return "", true
		}
		t = strings.TrimSpace(t[end+gt+1:])
	}
	return t, t == ""
}

// boundaryCommand: /clear, /new, /reset (Claude Code, Codex, Gemini, aider) start a new task.
func boundaryCommand(p string) bool {
	f := strings.Fields(strings.ToLower(p))
	return len(f) > 0 && slices.Contains([]string{"/clear", "/new", "/reset"}, f[0])
}

// addInstruction keeps a request condensed, the goal first and the newest of the rest; one replacing an earlier on
// its subject ("use Redis instead of the in-memory cache") drops it, never the goal.
func (st *State) addInstruction(p string, at time.Time, ref Ref) {
	c := condense(p)
	if c == "" {
		return
	}
	kept := st.Instructions[:0:0]
	for i, in := range st.Instructions {
		if in.Text == c {
			return
		}
		if i == 0 || !supersedes(p, in.Text, true) {
			kept = append(kept, in)
		}
	}
	st.Instructions = evictPlain(append(kept, Note{Text: c, At: at, Refs: []Ref{ref}}))
}

// evictPlain bounds the instructions to maxInstructions by dropping the oldest after the goal that constrains
// nothing ("add a header row"): a constraint stated early ("don't touch the migrations", "use pnpm, not npm") stays
// in force through any number of later requests. With only constraints left, the oldest goes.
func evictPlain(ins []Note) []Note {
	if len(ins) <= maxInstructions {
		return ins
	}
	i := 1 + slices.IndexFunc(ins[1:], func(n Note) bool { return !hasPhrase(strings.ToLower(n.Text), "constraint") })
	return slices.Delete(ins, max(1, i), max(1, i)+1)
}

// condense is a request's first sentence and those that constrain the work ("keep", "don't", "never", "must"; lang/
// constraint), a pasted trace's last exception line, at most 400 bytes.
func condense(p string) string {
	ss := sentences(p)
	for len(ss) > 1 && !substantive(ss[0]) { // "Great! Can you also …": the asking sentence leads
		ss = ss[1:]
	}
	if len(ss) == 0 {
		return ""
	}
	out := []string{ss[0]}
	for _, s := range ss[1:] {
		if hasPhrase(strings.ToLower(s), "constraint") && prose(s) {
			out = append(out, s)
		}
	}
	if strings.Count(p, "\n") > 2 {
		if e := pastedError(p); e != "" && !strings.Contains(strings.Join(out, " "), e) {
			out = append(out, e)
		}
	}
	return clip(clip(normCmd(strings.Join(out, " ")), 400), 400)
}

// pastedError: the error line of a pasted log or trace — one naming an error, or a compiler's diagnostic at a source
// location behind a CI log's timestamp ("2026-11-20T10:00:09Z internal/store/pg.go:41:9: undefined: pgx.Conn").
// A line counting none ("0 errors, 1 warning", "Found 0 errors.") names no error: the paste reports success.
func pastedError(p string) string {
	e := errorLine(p)
	if loc, _ := location(e); mayNameError(e) && !noErrors(strings.ToLower(e)) || loc {
		return e
	}
	return ""
}

func noErrors(low string) bool {
	i := strings.Index(low, "0 error")
	return i == 0 || i > 0 && !unicode.IsDigit(rune(low[i-1]))
}

func mayDecideAny(low string) bool {
	return mayDecide(low) || containsPhrase(low, "contrast") || containsAny(low, decisionMarkers.list())
}

// isDecision applies decision rules 1 and 2.
func isDecision(s string, user bool) bool {
	if isQuestion(s) {
		return false
	}
	low := strings.ToLower(s)
	if explicitDecision(s, low) || contrastChoice(s, low) {
		return true
	}
	if !user || promptSize(s) < 3 {
		return false
	}
	return startsWithAny(low, choiceStarts.list()) || startsWithAnyPrefix(stripLeadingAcks(low), choiceStarts.list()) || reverses(low)
}

// reverses: the user turns down what stands and says what replaces it ("no, go back to Redis", "nein, doch lieber
// zurück zu …", "No, use Postgres instead"): a decline, then a pointer back or a replacement (lang/ back, supersede).
// It is a decision, and supersedes the earlier one on its subject (a user who changes their mind twice).
func reverses(low string) bool {
	marked := func(t string) bool {
		return containsAny(t, backMarkers.list()) || containsAny(t, supersedeMarkers.list())
	}
	if !marked(low) {
		return false // the cheap test first: supersedes asks this of every request and decision
	}
	rest, ok := cutDeclines(low)
	return ok && marked(rest)
}

func explicitDecision(s, low string) bool {
	return mayDecide(low) && decisionRE.get().MatchString(s) || containsAny(low, decisionMarkers.list())
}

// proposal: the agent's contrast on a list line ("1. Call inject on release, not on every press") proposes a step
// the user never accepted; no decision unless it says it was decided. After the turn's edits (edited) the list
// reports what was carried out ("- Used UTC timestamps, not local time"), unless its heading looks ahead or asks,
// and never when the item hedges ("- We could move the export to a job rather than the request path").
func proposal(text, s string, edited bool) bool {
	i := strings.Index(text, s)
	if i < 0 {
		return false
	}
	start := strings.LastIndexByte(text[:i], '\n') + 1
	low := strings.ToLower(s)
	if !listLine(strings.TrimSpace(text[start:])) {
		return false
	}
	if containsAny(low, hedgeWords.list()) {
		return true // even with a marker: "- We could use X instead of Y", "- Man könnte X statt Y"
	}
	return !explicitDecision(s, low) && (!edited || aheadHeading(text[:start]))
}

// aheadHeading: the last line before a list, not an item, looks ahead ("Next steps:", "Remaining:") or asks.
func aheadHeading(before string) bool {
	lines := strings.Split(strings.TrimSpace(before), "\n")
	h := strings.TrimSpace(lines[len(lines)-1])
	for j := len(lines) - 1; j > 0 && listLine(h); j-- {
		h = strings.TrimSpace(lines[j-1])
	}
	low := strings.ToLower(h)
	return forwardLooking(h) || isQuestion(h) || hasPhrase(low, "remaining") || containsPhrase(low, "next")
}

// contrastChoice: a choice against a short alternative without a marker
// word ("We store the full payload, not just the event id"; "Postgres statt
// SQLite"), in prose.
func contrastChoice(s, low string) bool {
	for _, m := range phrases("contrast") {
		i := strings.Index(low, m)
		if i <= 0 {
			continue
		}
		alt := promptSize(low[i+len(m):])
		if alt >= 1 && alt <= 8 && promptSize(low[:i]) >= 2 && prose(s) {
			return true
		}
	}
	return false
}

// addDecision drops the decisions s supersedes and exact repeats.
func (st *State) addDecision(s string) {
	k := strings.ToLower(s)
	if slices.Contains(st.Seen, k) || slices.ContainsFunc(st.Decided, func(d string) bool { return strings.HasSuffix(d, " → "+s) }) {
		return // a repeat, or the words already recorded as the answer to a question
	}
	st.Seen = last(append(st.Seen, k), maxSeen)
	kept := st.Decided[:0:0]
	for _, d := range st.Decided {
		if !supersedes(s, d, false) {
			kept = append(kept, d)
		}
	}
	st.Decided = last(append(kept, clip(s, 200)), keepDecided)
	st.addSource("d:"+clip(s, 200), st.RowRef)
}

// Supersedes: decision s replaces earlier, as the fold decides (the decisions log drops what the fold dropped).
func Supersedes(s, earlier string) bool { return supersedes(s, earlier, false) }

// supersedes: s and earlier share two subject words (unless explicit), or
// one when s says it replaces something or turns it down (reverses).
func supersedes(s, earlier string, explicit bool) bool {
	low := strings.ToLower(s)
	replaces := containsAny(low, supersedeMarkers.list()) || reverses(low)
	if explicit && !replaces {
		return false
	}
	words := subjectWords(s)
	shared := 0
	for w := range subjectWords(earlier) {
		if words[w] {
			shared++
		}
	}
	return shared >= 2 && !explicit || replaces && shared >= 1
}

func subjectWords(s string) map[string]bool {
	w := contentWords(s)
	for k := range w {
		if notSubject.has(k) {
			delete(w, k)
		}
	}
	return w
}

// addDecisions scans a prompt (user) or assistant text. In the prompt that
// sets a goal the first sentence is the task; only later ones can state
// choices ("Build the importer. Stream the rows, don't load the whole file.").
func (st *State) addDecisions(text, low string, user, goal bool) {
	if !user && !goal && !mayDecideAny(low) {
		return
	}
	ss := sentences(text)
	for i, s := range ss {
		if goal && i == 0 || diagnosis(ss, i) {
			continue // even worded "X statt Y": the Task line carries it
		}
		if isDecision(s, user || goal && i > 0) && (user || goal || !proposal(text, s, st.editedThisTurn())) {
			st.addDecision(questionPrefixRE.get().ReplaceAllString(s, "")) // an item's text, not its "1."
		}
	}
}

// diagnosis: sentence i states what is wrong — a cause phrase opening its claim ("Das Problem ist, dass der Export
// die lokale Zeit statt UTC schreibt"), or in a label of at most four words before it ("Found the bug. The coupon is
// subtracted after VAT instead of before."). Worded as a contrast it reads as a choice, but it is the bug the fix
// reverses: as a decision it would tell the next agent to keep it. A choice before the cause gives its reason ("We
// decided to use buf because it pins versions"); a longer sentence before ("The problem was the timezone.") is a
// cause of its own: the decision after it stands.
func diagnosis(ss []string, i int) bool {
	return causeOpens(strings.ToLower(ss[i])) || i > 0 && promptSize(ss[i-1]) <= 4 && containsAny(strings.ToLower(ss[i-1]), causeMarkers.list())
}

// causeOpens: a cause phrase with no choice before it.
func causeOpens(low string) bool {
	return slices.ContainsFunc(causeMarkers.list(), func(m string) bool {
		j := strings.Index(low, m)
		return j >= 0 && !mayDecideAny(low[:j])
	})
}

// editedThisTurn: a file write since the latest request whose call has not failed.
func (st *State) editedThisTurn() bool {
	return st.editedSince(st.AskSeq) && !st.FailedCalls[st.Edits[len(st.Edits)-1].Call]
}

// addAnswer records a statement answering the assistant's open question
// (rule 3); an acknowledgement answers "yes", a long reply is a request.
func (st *State) addAnswer(q, answer string) {
	if q == "" || isQuestion(answer) || boilerplate(q) {
		return
	}
	a := oneLine(answer)
	if !substantive(answer) {
		a = "yes"
	} else if promptSize(answer) > 40 {
		return
	}
	line := clip(strings.TrimRight(q, "?？ \u00a0"), 120) + " → " + clip(a, 160)
	st.addDecision(line)
	switch {
	case startsWithAny(strings.ToLower(a), declineStarts.list()):
		// "leave it for now" after "Shall I fix both?": the offer is work the user refused, as a refused tool call is
		// — never the next action, never to redo without asking — unless the agent then works (keptDecline).
		st.Refused, st.StopSeq = last(append(st.Refused, Note{Text: line, Refs: []Ref{st.RowRef}}), keepStops), st.Seq
	case assentWords.has(strings.Trim(promptWords(strings.ToLower(a))[0], "'-")): // an acknowledgement's a is "yes"
		if containsAny(strings.ToLower(q), offerWords.list()) {
			// "Want me to make that change?" → "yes please": the step offered is the next action until the agent acts.
			st.Accepted = Note{Text: "Carry out what the user accepted (\"" + clip(oneLine(answer), 80) + "\"): " + st.offeredStep(q), Refs: []Ref{st.RowRef}}
		}
	}
}

// offeredStep: what an offer proposes — the question itself, or when it points back ("Want me to make that
// change?") the turn's sentence before it ("I recommend making parseDate return an error …") unless it diagnoses.
func (st *State) offeredStep(q string) string {
	step := strings.TrimRight(q, "?？ ")
	if !refersBack(strings.ToLower(q)) {
		return step
	}
	prev := ""
	for _, s := range sentences(strings.Join(st.TurnTexts, "\n")) {
		if strings.Contains(s, strings.TrimSuffix(q, "…")) {
			return cmp.Or(prev, step)
		}
		if !isQuestion(s) {
			prev = s
			if containsAny(strings.ToLower(s), causeMarkers.list()) {
				prev = "" // a diagnosis ("The pod panics because DATABASE_URL is missing") is no step: the offer is
			}
		}
	}
	return step
}

// keptDecline: a tool call after a declined offer in the same turn ("No, remove it" then the removal) shows the
// answer was an instruction: it stays a decision, not a stop.
func (st *State) keptDecline() {
	if n := len(st.Refused); st.StopSeq > 0 && n > 0 && st.StopSeq == st.AskSeq { // the stop is the prompt's decline
		st.Refused, st.StopSeq = st.Refused[:n-1], 0
	}
}

// The reference patterns, each run only on lines holding its trigger (every
// prompt and reply goes through them: one combined pattern over whole texts
// cost ~10 µs a row).
var (
	docRE = lazyRE{expr: `\b[\w][\w\-]*\.(?:pdf|docx?|xlsx?|pptx?|key|pages|numbers|odt|csv|epub)\b`}
	atRE  = lazyRE{expr: `(?:^|[\s(])@[A-Za-z0-9][A-Za-z0-9\-]{1,38}(?:$|[\s,;:!?)]|\.(?:\s|$))|` + // handle (not @decorator_name, not @pkg/name)
		`\b[\w.+\-]+@[\w\-]+\.[\w.\-]+\b`} // e-mail
	dateRE = lazyRE{expr: `\b(?:19|20)\d\d-[01]\d-[0-3]\d\b|` + // ISO date
		`\bQ[1-4] (?:19|20)\d\d\b|` + // quarter
		`\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]* [0-3]?\d(?:, (?:19|20)\d\d)?\b|` +
		`\b[0-3]?\d\.? (?:Jan|Feb|Mär|Mar|Apr|Mai|May|Jun|Jul|Aug|Sep|Okt|Oct|Nov|Dez|Dec|janv|févr|mars|avr|mai|juin|juil|août|sept|oct|nov|déc|ene|abr|ago|dic|fev|set|out|dez)[a-zéû]*\.?(?: (?:19|20)\d\d)?\b`}
	// citeRE: "Bloom et al. (2015)" in any language; deDateRE: "12 de marzo de 2024", which dateRE misses.
	citeRE   = lazyRE{expr: `\p{Lu}[\p{L}\-]+(?: (?:and|y|und|et|e|и) \p{Lu}[\p{L}\-]+)? et al\.?(?:,? \(?(?:19|20)\d\d\)?)?`}
	deDateRE = lazyRE{expr: `\b[0-3]?\d de (?:enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|diciembre|janeiro|fevereiro|março|maio|junho|julho|setembro|outubro|novembro|dezembro)(?: de (?:19|20)\d\d)?`}
	// personRE: a capitalised name after "according to", "per", "laut", "selon"… (personTriggers).
	personRE = lazyRE{expr: `\b(?i:according to|per|cited by|interview with|feedback from|laut|nach Angaben von|selon|d'après|según|de acuerdo con|segundo|de acordo com|по словам|entrevista a|entrevista con)\s+((?:Dr\.?\s+|Prof\.?\s+)?\p{Lu}\p{Ll}+(?:\s+\p{Lu}\p{Ll}+)?)`}
	// The triggers: dateRE's month names (with a digit) and docRE's extensions.
	monthTokens = []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec", "Mär", "Mai", "Okt", "Dez",
		"janv", "févr", "mars", "avr", "mai", "juin", "juil", "août", "sept", "oct", "nov", "déc", "ene", "abr", "ago", "dic", "fev", "set", "out", "dez"}
	docExts = []string{".pdf", ".doc", ".xls", ".ppt", ".key", ".pages", ".numbers", ".odt", ".csv", ".epub"}
)

func isoDateLike(s string) bool {
	for i := 4; i+6 <= len(s); i++ {
		if s[i] == '-' && s[i+3] == '-' && digits(s[i-4:i]) && digits(s[i+1:i+3]) && digits(s[i+4:i+6]) { // the loop bounds i+6
			return true
		}
	}
	return false
}

func digits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// personMatches runs personRE only on a short window after each trigger
// ("per attempt" is common prose), or on the whole text when lower-casing
// changed byte offsets.
func personMatches(text, low string) []string {
	var out []string
	if len(low) != len(text) {
		for _, m := range personRE.get().FindAllStringSubmatch(text, -1) {
			out = append(out, m[1])
		}
		return out
	}
	seen := map[int]bool{}
	for _, t := range personTriggers.list() {
		for off := 0; ; {
			i := strings.Index(low[off:], t)
			if i < 0 {
				break
			}
			i += off
			off = i + len(t)
			if seen[i] || i > 0 && wordRune(rune(low[i-1])) {
				continue
			}
			seen[i] = true
			if m := personRE.get().FindStringSubmatch(text[i:min(len(text), i+len(t)+60)]); m != nil {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// references returns the references text names, in order. Code (fences and
// `spans`) names none: @decorators, paths, versions; toolTurn: no dates, handles or e-mails (offTool).
func references(text, low string, toolTurn bool) []string {
	var on [len(refFinders)]bool
	anyOn := false
	for i := range refFinders {
		on[i] = refFinders[i].on(text, low, toolTurn)
		anyOn = anyOn || on[i]
	}
	hasPerson := containsAny(low, personTriggers.list())
	if !anyOn && !hasPerson {
		return nil
	}
	if strings.Contains(text, "`") {
		text = stripCode(text)
		low = strings.ToLower(text)
	}
	var out []string
	if hasPerson && containsAny(low, personTriggers.list()) {
		out = addRefs(out, personMatches(text, low))
	}
	for _, line := range strings.Split(text, "\n") {
		for i, f := range refFinders {
			if on[i] && (f.line == nil || f.line(line)) {
				out = addRefs(out, f.matches(line))
			}
		}
	}
	return out
}

// refFinder is one kind of reference, in a line's listing order: gate a
// cheap test of the whole text (nil: line's), line one of a line (nil:
// none), before find runs there.
type refFinder struct {
	gate func(text, low string) bool
	line func(line string) bool
	find func(line string) []string
	re   *lazyRE // instead of find
	// offTool: what a tool turn's text names is read off the tools' output or the code (an mtime, a log date, an
	// @Observable attribute, a commit's e-mail), not a reference of the work.
	offTool bool
}

func (f *refFinder) on(text, low string, toolTurn bool) bool {
	switch {
	case f.offTool && toolTurn:
		return false
	case f.gate != nil:
		return f.gate(text, low)
	}
	return f.line(text)
}

func (f *refFinder) matches(line string) []string {
	if f.re != nil {
		return f.re.get().FindAllString(line, -1)
	}
	return f.find(line)
}

var refFinders = [...]refFinder{
	{gate: func(t, _ string) bool { return strings.Contains(t, "://") }, find: urls},
	{gate: docGate, line: func(l string) bool { return docGate(l, strings.ToLower(l)) }, re: &docRE},
	{line: atGate, re: &atRE, offTool: true},
	{line: citeGate, re: &citeRE},
	{line: deDateGate, re: &deDateRE, offTool: true},
	{line: dateGate, re: &dateRE, offTool: true},
}

func docGate(s, low string) bool { return strings.Contains(s, ".") && containsAny(low, docExts) }
func atGate(s string) bool       { return strings.Contains(s, "@") }
func citeGate(s string) bool     { return strings.Contains(s, " et al") }

func deDateGate(s string) bool {
	return strings.Contains(s, " de ") && strings.ContainsAny(s, "0123456789")
}

func dateGate(s string) bool {
	return strings.ContainsAny(s, "0123456789") && (isoDateLike(s) || strings.Contains(s, "Q") || containsAny(s, monthTokens))
}

func urls(line string) []string {
	var out []string
	for rest := line; ; {
		i := strings.Index(rest, "://")
		if i < 0 {
			return out
		}
		start := strings.LastIndexFunc(rest[:i], func(r rune) bool { return r < 'a' || r > 'z' }) + 1 // the scheme
		end := len(rest)
		if j := strings.IndexAny(rest[i+3:], " \t<>()\"'`]\x1b\a"); j >= 0 {
			end = i + 3 + j
		}
		// ESC ] 8 ; params ; URL (ESC \ or BEL) text: an OSC 8 link's target, hidden from who reads the text.
		hidden := start > 0 && rest[start-1] == ';' && end < len(rest) && rest[end] < ' '
		if scheme := rest[start:i]; (scheme == "http" || scheme == "https") && !hidden {
			out = append(out, rest[start:end])
		}
		rest = rest[end:]
	}
}

// addRefs appends ms trimmed of the punctuation around them.
func addRefs(out, ms []string) []string {
	for _, m := range ms {
		m = strings.TrimSpace(strings.TrimLeft(m, "( "))
		m = strings.TrimRight(m, ".,;:!?")
		if strings.HasSuffix(m, ")") && !strings.Contains(m, "(") {
			m = strings.TrimRight(m, ")")
		}
		if m != "" {
			out = append(out, clip(m, 200))
		}
	}
	return out
}

// actionItems: prose sentences (no questions) stating something to be done. A user's sentence that constrains the
// work ("the migrations folder must stay untouched"; lang/ constraint) is an instruction, kept as one, not a to-do.
func actionItems(text, low string, user bool) []string {
	if !containsAny(low, actionMarkers.list()) {
		return nil
	}
	var out []string
	for _, s := range sentences(text) {
		if isQuestion(s) || !prose(s) || boilerplate(s) || user && hasPhrase(strings.ToLower(s), "constraint") {
			continue
		}
		if containsAny(" "+strings.ToLower(s), actionMarkers.list()) {
			out = append(out, clip(s, 200))
		}
	}
	return out
}

// addItems appends the items not yet in *list, keeping the newest n, and records the row as each one's source (kind
// "r:" a reference, "a:" an action item).
func (st *State) addItems(list *[]string, kind string, items []string, n int) {
	for _, it := range items {
		if !slices.Contains(*list, it) {
			*list = append(*list, it)
		}
		st.addSource(kind+it, st.RowRef)
	}
	*list = last(*list, n)
}

func stripCode(text string) string {
	if !strings.Contains(text, "`") {
		return text
	}
	var b strings.Builder
	for l := range outsideFences(text) {
		parts := strings.Split(l, "`")
		for i := 0; i < len(parts); i += 2 {
			b.WriteString(parts[i])
			b.WriteByte(' ')
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// endsNext: the sentence ends in a next_end phrase, a leading ␣ making it a whole word ("CSV export is in; converting
// the amounts to euros next.", "Die Umrechnung kommt als Nächstes."): the agent's closing states its next step.
func endsNext(s string) bool {
	low := " " + strings.TrimRight(strings.ToLower(s), " .!。！")
	return slices.ContainsFunc(nextEnds.list(), func(m string) bool { return strings.HasSuffix(low, m) })
}
