package distill

// Phrase tables as data: distill/lang/<language>.txt, one file per language
// the users of the agents we read write in, each a set of [list] headings
// with one lower-case phrase per line. The rules read a list merged across
// the languages (phrases), so adding a language is adding a file.
//
// The files are embedded and parsed at first use, not at package init
// (package init stays as cheap as before: no work at all); the hook path
// parses them in Warm, on the goroutine that overlaps its I/O. Parsing all
// eight files (about 1,600 lines) is one pass of string splitting.

import (
	"embed"
	"strings"
	"sync"
	"unicode/utf8"
)

//go:embed lang/*.txt
var langFS embed.FS

// phraseTables parses every language file once.
var phraseTables = sync.OnceValue(func() map[string][]string {
	out := map[string][]string{}
	ents, _ := langFS.ReadDir("lang")
	for _, e := range ents {
		b, err := langFS.ReadFile("lang/" + e.Name())
		if err != nil {
			continue
		}
		parseLang(string(b), out)
	}
	return out
})

// parseLang adds one language file's lists to out.
// The files are written in lower case (TestLangFiles checks it), so no
// line is lower-cased here.
func parseLang(text string, out map[string][]string) {
	list := ""
	for text != "" {
		var l string
		l, text, _ = strings.Cut(text, "\n")
		l = strings.TrimSpace(l)
		switch {
		case l == "" || l[0] == '#':
		case l[0] == '[' && l[len(l)-1] == ']':
			list = l[1 : len(l)-1]
		case list != "":
			if strings.Contains(l, "␣") {
				// "␣" is a space the phrase needs at its edge (", not ").
				l = strings.ReplaceAll(l, "␣", " ")
			}
			out[list] = append(out[list], l)
		}
	}
}

// containsPhrase reports whether low holds one of the list's phrases as a
// plain substring (lists whose phrases carry their own punctuation and
// spaces, like contrast's ", not ").
func containsPhrase(low, list string) bool { return containsAny(low, phrases(list)) }

// phrases is the named list across all languages.
func phrases(list string) []string { return phraseTables()[list] }

// hasPhrase reports whether the lower-cased text holds one of the list's
// phrases: as whole words (a phrase of letters is not matched inside a
// longer word: "sin" is not in "using"), or anywhere for CJK phrases.
func hasPhrase(low, list string) bool { return findPhrase(low, list) != "" }

// findPhrase is the first of the list's phrases found in low ("" if none).
func findPhrase(low, list string) string {
	for _, p := range phrases(list) {
		if phraseAt(low, p) >= 0 {
			return p
		}
	}
	return ""
}

// phraseAt is the index of p in low as whole words, -1 when absent.
func phraseAt(low, p string) int {
	i := strings.Index(low, p)
	if i < 0 || p[0] >= 0x80 && cjkString(p) {
		return i // absent (the common case, one search), or CJK: no word boundaries
	}
	for off := 0; off <= len(low); {
		i := strings.Index(low[off:], p)
		if i < 0 {
			return -1
		}
		i += off
		before, _ := utf8.DecodeLastRuneInString(low[:i])
		after, _ := utf8.DecodeRuneInString(low[i+len(p):])
		first, _ := utf8.DecodeRuneInString(p)
		last, _ := utf8.DecodeLastRuneInString(p)
		okBefore := i == 0 || !wordRune(first) || !wordRune(before) || cjk(before)
		okAfter := i+len(p) == len(low) || !wordRune(last) || !wordRune(after) || cjk(after)
		if okBefore && okAfter {
			return i
		}
		off = i + 1
	}
	return -1
}

// phraseList is a lazily read list of lang/: call it for the phrases.
func phraseList(list string) func() []string {
	return sync.OnceValue(func() []string { return phrases(list) })
}

// phraseSet is a lazily built set of a lang/ list's words.
func phraseSet(list string) func() map[string]bool {
	return sync.OnceValue(func() map[string]bool {
		out := map[string]bool{}
		for _, p := range phrases(list) {
			out[p] = true
		}
		return out
	})
}
