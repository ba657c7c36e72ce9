package distill

// Phrase tables as data: distill/lang/<language>.txt, one file per language
// the users of the agents we read write in, each a set of [list] headings
// with one lower-case phrase per line. The rules read a list merged across
// the languages (phrases), so adding a language is adding a file.
//
// The files are embedded and parsed at first use, not at package init: the
// hook path's Stop event loads this package on every turn, and most
// turns never ask for a phrase list (parsing all eight files takes about
// 40 µs and 700 allocations, measured with BenchmarkPhrases).

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
func parseLang(text string, out map[string][]string) {
	list := ""
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
		case strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]"):
			list = l[1 : len(l)-1]
		case list != "":
			// "␣" is a space the phrase needs at its edge (", not ").
			out[list] = append(out[list], strings.ReplaceAll(strings.ToLower(l), "␣", " "))
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
