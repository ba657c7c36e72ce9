package distill

// References and action items, for sessions whose work is prose (research,
// writing, planning): the sources a session named — URLs, documents,
// people (@handles, e-mail addresses) and dates — and the commitments it
// stated in prose ("send the deck to Anna by Friday"), so the next agent
// gets them and not only the last sentence.

import (
	"regexp"
	"strings"
	"sync"
)

const (
	maxRefs    = 10
	maxActions = 6
)

var refRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`https?://[^\s<>()"'\x60\]]+|` + // URL
		`\b[\w][\w\-]*\.(?:pdf|docx?|xlsx?|pptx?|key|pages|numbers|odt|csv|epub)\b|` + // document
		`(?:^|[\s(])@[A-Za-z0-9][A-Za-z0-9\-]{1,38}(?:$|[\s,;:!?)]|\.(?:\s|$))|` + // handle (not @decorator_name, not @pkg/name)
		`\b[\w.+\-]+@[\w\-]+\.[\w.\-]+\b|` + // e-mail
		`\b(?:19|20)\d\d-[01]\d-[0-3]\d\b|` + // ISO date
		`\bQ[1-4] (?:19|20)\d\d\b|` + // quarter
		`\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]* [0-3]?\d(?:, (?:19|20)\d\d)?\b|` +
		`\b[0-3]?\d\.? (?:Jan|Feb|Mär|Mar|Apr|Mai|May|Jun|Jul|Aug|Sep|Okt|Oct|Nov|Dez|Dec|janv|févr|mars|avr|mai|juin|juil|août|sept|oct|nov|déc|ene|abr|ago|dic|fev|set|out|dez)[a-zéû]*\.?(?: (?:19|20)\d\d)?\b`)
})

// personRE finds a person named as a source: a capitalised name after
// "according to", "per", "from", "interview with" and their equivalents.
var personRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b(?i:according to|per|cited by|interview with|feedback from|laut|nach Angaben von|selon|d'après|según|de acuerdo con|segundo|de acordo com|по словам)\s+((?:Dr\.?\s+|Prof\.?\s+)?\p{Lu}\p{Ll}+(?:\s+\p{Lu}\p{Ll}+)?)`)
})

// references returns the references text names, in order. Code (fenced
// blocks and `spans`) names no sources: @decorators, paths, versions.
func references(text string) []string {
	text = stripCode(text)
	var out []string
	for _, m := range personRE().FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	if !strings.ContainsAny(text, ".@/-0123456789") {
		return out
	}
	for _, m := range refRE().FindAllString(text, -1) {
		m = strings.TrimSpace(strings.TrimLeft(m, "( "))
		m = strings.TrimRight(m, ".,;:!?")
		if strings.HasSuffix(m, ")") && !strings.Contains(m, "(") {
			m = strings.TrimRight(m, ")")
		}
		if m != "" && !strings.HasPrefix(m, "@@") {
			out = append(out, clip(m, 200))
		}
	}
	return out
}

// actionMarkers mark a prose commitment or to-do.
var actionMarkers = []string{
	"action item", "need to ", "needs to ", "have to ", "has to ", "must ", "follow up", "follow-up with", "remind ",
	"i'll send", "we'll send", "send the", "schedule ", "deadline", " by monday", " by tuesday", " by wednesday",
	" by thursday", " by friday", " by tomorrow", " by end of",
	"muss ", "müssen ", "bis morgen", "bis freitag", "nachfassen", "il faut ", "je dois ", "nous devons ", "d'ici ",
	"hay que ", "tenemos que ", "debo ", "para el ", "precisa ", "precisamos ", "temos que ", "até ",
	"нужно ", "надо ", "необходимо ", "до пятницы", "需要", "必须", "截止", "までに", "必要があります", "しなければ",
}

// actionItems returns the prose sentences of text that state something to
// be done, not questions.
func actionItems(text string) []string {
	low := strings.ToLower(text)
	any := false
	for _, m := range actionMarkers {
		if strings.Contains(low, m) {
			any = true
			break
		}
	}
	if !any {
		return nil
	}
	var out []string
	for _, s := range sentences(text) {
		if isQuestion(s) || !prose(s) || boilerplate(s) {
			continue
		}
		ls := " " + strings.ToLower(s)
		for _, m := range actionMarkers {
			if strings.Contains(ls, m) {
				out = append(out, clip(s, 200))
				break
			}
		}
	}
	return out
}

// addBounded appends the items not yet in list, keeping the newest n.
func addBounded(list []string, items []string, n int) []string {
	for _, it := range items {
		found := false
		for _, x := range list {
			if x == it {
				found = true
				break
			}
		}
		if !found {
			list = append(list, it)
		}
	}
	if len(list) > n {
		list = list[len(list)-n:]
	}
	return list
}

// stripCode removes fenced code blocks and inline code spans.
func stripCode(text string) string {
	if !strings.Contains(text, "`") {
		return text
	}
	var b strings.Builder
	inFence := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		parts := strings.Split(l, "`")
		for i := 0; i < len(parts); i += 2 {
			b.WriteString(parts[i])
			b.WriteByte(' ')
		}
		b.WriteByte('\n')
	}
	return b.String()
}
