package distill

// References and action items, for sessions whose work is prose (research,
// writing, planning): the sources a session named — URLs, documents,
// people (@handles, e-mail addresses) and dates — and the commitments it
// stated in prose ("send the deck to Anna by Friday"), so the next agent
// gets them and not only the last sentence.

import (
	"regexp"
	"slices"
	"strings"
)

const (
	maxRefs    = 10
	maxActions = 6
)

// The reference patterns, each run only on the lines that hold its
// trigger (the hook path folds every prompt and reply through these: one
// combined pattern over whole texts cost ~10 µs a row).
var (
	docRE = lazyRegexp(`\b[\w][\w\-]*\.(?:pdf|docx?|xlsx?|pptx?|key|pages|numbers|odt|csv|epub)\b`)
	atRE  = lazyRegexp(`(?:^|[\s(])@[A-Za-z0-9][A-Za-z0-9\-]{1,38}(?:$|[\s,;:!?)]|\.(?:\s|$))|` + // handle (not @decorator_name, not @pkg/name)
		`\b[\w.+\-]+@[\w\-]+\.[\w.\-]+\b`) // e-mail
	dateRE = lazyRegexp(`\b(?:19|20)\d\d-[01]\d-[0-3]\d\b|` + // ISO date
		`\bQ[1-4] (?:19|20)\d\d\b|` + // quarter
		`\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]* [0-3]?\d(?:, (?:19|20)\d\d)?\b|` +
		`\b[0-3]?\d\.? (?:Jan|Feb|Mär|Mar|Apr|Mai|May|Jun|Jul|Aug|Sep|Okt|Oct|Nov|Dez|Dec|janv|févr|mars|avr|mai|juin|juil|août|sept|oct|nov|déc|ene|abr|ago|dic|fev|set|out|dez)[a-zéû]*\.?(?: (?:19|20)\d\d)?\b`)
)

// citeRE finds a paper cited as "Bloom et al. (2015)" or "Bloom et al.,
// 2015" (any language writes citations this way); deDateRE a Spanish or
// Portuguese date ("12 de marzo de 2024"), which dateRE's "12 März" misses.
var (
	citeRE   = lazyRegexp(`\p{Lu}[\p{L}\-]+(?: (?:and|y|und|et|e|и) \p{Lu}[\p{L}\-]+)? et al\.?(?:,? \(?(?:19|20)\d\d\)?)?`)
	deDateRE = lazyRegexp(`\b[0-3]?\d de (?:enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|diciembre|janeiro|fevereiro|março|maio|junho|julho|setembro|outubro|novembro|dezembro)(?: de (?:19|20)\d\d)?`)
)

// monthTokens are the month names dateRE knows (its trigger with a digit).
var monthTokens = []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec", "Mär", "Mai", "Okt", "Dez",
	"janv", "févr", "mars", "avr", "mai", "juin", "juil", "août", "sept", "oct", "nov", "déc", "ene", "abr", "ago", "dic", "fev", "set", "out", "dez"}

// isoDateLike reports whether s holds dddd-dd-dd.
func isoDateLike(s string) bool {
	for i := 4; i+6 <= len(s); i++ {
		if s[i] == '-' && i+3 < len(s) && s[i+3] == '-' && digits(s[i-4:i]) && digits(s[i+1:i+3]) && i+6 <= len(s) && digits(s[i+4:i+6]) {
			return true
		}
	}
	return false
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// docExts are docRE's extensions, its trigger.
var docExts = []string{".pdf", ".doc", ".xls", ".ppt", ".key", ".pages", ".numbers", ".odt", ".csv", ".epub"}

// personRE finds a person named as a source: a capitalised name after
// "according to", "per", "from", "interview with" and their equivalents
// (personTriggers, lower-cased).
var personRE = lazyRegexp(`\b(?i:according to|per|cited by|interview with|feedback from|laut|nach Angaben von|selon|d'après|según|de acuerdo con|segundo|de acordo com|по словам|entrevista a|entrevista con)\s+((?:Dr\.?\s+|Prof\.?\s+)?\p{Lu}\p{Ll}+(?:\s+\p{Lu}\p{Ll}+)?)`)

// personMatches runs personRE only on a short window after each trigger
// ("per " is common in prose: "per attempt"), or on the whole text when
// lower-casing changed byte offsets.
func personMatches(text, low string) []string {
	var out []string
	if len(low) != len(text) {
		for _, m := range personRE().FindAllStringSubmatch(text, -1) {
			out = append(out, m[1])
		}
		return out
	}
	seen := map[int]bool{}
	for _, t := range personTriggers() {
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
			if m := personRE().FindStringSubmatch(text[i:min(len(text), i+len(t)+60)]); m != nil {
				out = append(out, m[1])
			}
		}
	}
	return out
}

var personTriggers = phraseList("person")

// references returns the references text names, in order. Code (fenced
// blocks and `spans`) names no sources: @decorators, paths, versions.
func references(text, low string) []string {
	var on [len(refFinders)]bool
	anyOn := false
	for i, f := range refFinders {
		if f.gate != nil {
			on[i] = f.gate(text, low)
		} else {
			on[i] = f.line(text)
		}
		anyOn = anyOn || on[i]
	}
	hasPerson := containsAny(low, personTriggers())
	if !anyOn && !hasPerson {
		return nil
	}
	if strings.Contains(text, "`") {
		text = stripCode(text)
		low = strings.ToLower(text)
	}
	var out []string
	if hasPerson && containsAny(low, personTriggers()) {
		out = addRefs(out, personMatches(text, low))
	}
	for _, line := range strings.Split(text, "\n") {
		for i, f := range refFinders {
			if on[i] && (f.line == nil || f.line(line)) {
				out = addRefs(out, f.find(line))
			}
		}
	}
	return out
}

// refFinder is one kind of reference, in the order a line's references
// are listed: gate is a cheap test on the whole text (and its lower-cased
// form; nil: line's), line one on a line (nil: none), before find runs
// there.
type refFinder struct {
	gate func(text, low string) bool
	line func(line string) bool
	find func(line string) []string
}

var refFinders = [...]refFinder{
	{gate: func(t, _ string) bool { return strings.Contains(t, "://") }, find: urls},
	{gate: docGate, line: func(l string) bool { return docGate(l, strings.ToLower(l)) }, find: findAll(docRE)},
	{line: atGate, find: findAll(atRE)},
	{line: citeGate, find: findAll(citeRE)},
	{line: deDateGate, find: findAll(deDateRE)},
	{line: dateGate, find: findAll(dateRE)},
}

func findAll(re func() *regexp.Regexp) func(string) []string {
	return func(line string) []string { return re().FindAllString(line, -1) }
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

// urls returns the http(s) URLs of a line.
func urls(line string) []string {
	var out []string
	for rest := line; ; {
		i := strings.Index(rest, "://")
		if i < 0 {
			return out
		}
		start := i
		for start > 0 && (rest[start-1] >= 'a' && rest[start-1] <= 'z') {
			start--
		}
		end := i + 3
		for end < len(rest) && !strings.ContainsRune(" \t<>()\"'`]", rune(rest[end])) {
			end++
		}
		if scheme := rest[start:i]; scheme == "http" || scheme == "https" {
			out = append(out, rest[start:end])
		}
		rest = rest[end:]
	}
}

// addRefs appends the references ms, trimmed of the punctuation around
// them.
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

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// actionMarkers mark a prose commitment or to-do.
var actionMarkers = phraseList("action")

// actionItems returns the prose sentences of text that state something to
// be done, not questions.
func actionItems(text, low string) []string {
	if !containsAny(low, actionMarkers()) {
		return nil
	}
	var out []string
	for _, s := range sentences(text) {
		if isQuestion(s) || !prose(s) || boilerplate(s) {
			continue
		}
		if containsAny(" "+strings.ToLower(s), actionMarkers()) {
			out = append(out, clip(s, 200))
		}
	}
	return out
}

// addBounded appends the items not yet in list, keeping the newest n.
func addBounded(list []string, items []string, n int) []string {
	for _, it := range items {
		if !slices.Contains(list, it) {
			list = append(list, it)
		}
	}
	return last(list, n)
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
