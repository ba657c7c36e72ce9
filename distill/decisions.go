package distill

// Decisions: what was settled, so the next agent does not re-debate it.
// A sentence is a decision when
//
//  1. it says so: "we decided/chose/will use/go with …", "X instead of Y",
//     "decision: …" (decisionRE), or the same in another language
//     (decisionMarkers);
//  2. the user states a choice: a sentence of a prompt that starts with a
//     choice verb ("use X", "don't add Z", "make the importer stream rows",
//     "verwende …", "utilise …", "不要 …"; choiceStarts);
//  3. the user answers the assistant's question with a statement: the
//     answer is the decision, the question its subject ("„heute“
//     serverseitig in der Zeitzone des Kunden" after "Where should 'today'
//     be computed?").
//
// A later decision on the same subject supersedes the earlier one: it
// shares two content words with it, or one when it says it replaces
// something ("instead of", "actually", "rather than", "statt", "au lieu",
// "en lugar", "em vez", "вместо", "而不是", "ではなく").

import (
	"slices"
	"strings"
)

// decisionMarkers are rule 1's phrases beyond English, lower-cased.
var decisionMarkers = phraseList("decision")

// choiceStarts are rule 2's choice verbs, matched at the start of a user
// sentence (lower-cased, after any acknowledgement).
var choiceStarts = phraseList("choice_start")

// supersedeMarkers say a decision replaces an earlier one.
var supersedeMarkers = phraseList("supersede")

func mayDecideAny(low string) bool {
	return mayDecide(low) || containsPhrase(low, "contrast") || containsAny(low, decisionMarkers())
}

// isDecision applies rules 1 and 2 to one sentence.
func isDecision(s string, user bool) bool {
	if isQuestion(s) {
		return false
	}
	low := strings.ToLower(s)
	if mayDecide(low) && decisionRE.MatchString(s) || containsAny(low, decisionMarkers()) {
		return true
	}
	if contrastChoice(s, low) {
		return true
	}
	if !user || promptSize(s) < 3 {
		return false
	}
	return startsWithAny(low, choiceStarts()) || startsWithAnyPrefix(stripLeadingAcks(low), choiceStarts())
}

// contrastChoice reports whether a sentence states a choice against its
// alternative without a marker word ("We store the full payload, not just
// the event id"; "Postgres statt SQLite"): a contrast phrase (lang/
// contrast) with a short alternative after it, in prose.
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

// startsWithAnyPrefix is startsWithAny for markers that end in a space or
// are CJK (no word boundary to check).
func startsWithAnyPrefix(t string, ms []string) bool {
	for _, m := range ms {
		if strings.HasPrefix(t, m) {
			return true
		}
	}
	return false
}

// addDecision records one decision, dropping earlier decisions it
// supersedes and exact repeats.
func (st *State) addDecision(s string) {
	k := strings.ToLower(s)
	if slices.Contains(st.Seen, k) {
		return
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

// supersedes reports whether statement s replaces the earlier one: they
// share two subject words (unless explicit is set), or one when s says it
// replaces something.
func supersedes(s, earlier string, explicit bool) bool {
	k := strings.ToLower(s)
	replaces := containsAny(k, supersedeMarkers())
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

// addDecisions scans a prompt (user) or an assistant text for decisions.
// In the prompt that sets a goal (goal), the first sentence is the task
// and only the sentences after it can state choices ("Build the importer.
// Stream the rows, don't load the whole file.").
func (st *State) addDecisions(text, low string, user, goal bool) {
	if !user && !goal && !mayDecideAny(low) {
		return
	}
	for i, s := range sentences(text) {
		if goal && i == 0 {
			continue // the task itself, even worded "X statt Y": the Task line carries it
		}
		if isDecision(s, user || goal && i > 0) {
			st.addDecision(s)
		}
	}
}

// addAnswer records a user's statement answering the assistant's open
// question as a decision (rule 3); an acknowledgement answers it "yes".
func (st *State) addAnswer(q, answer string) {
	if q == "" || isQuestion(answer) || boilerplate(q) {
		return
	}
	a := oneLine(answer)
	if !substantive(answer) {
		a = "yes"
	} else if promptSize(answer) > 40 {
		return // a long reply is a request, not an answer
	}
	st.addDecision(clip(strings.TrimSuffix(strings.TrimSuffix(q, "?"), "？"), 120) + " → " + clip(a, 160))
}

// notSubject are the content-word stems (contentWords' six-letter cuts)
// of decision markers and function words: two decisions sharing only
// these are on different subjects.
var notSubject = phraseSet("not_subject")

// subjectWords are a decision's content words minus notSubject.
func subjectWords(s string) map[string]bool {
	w := contentWords(s)
	for k := range w {
		if notSubject()[k] {
			delete(w, k)
		}
	}
	return w
}
