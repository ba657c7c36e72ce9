package distill

import (
	"math/rand"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// These tests prove that the plain string code that replaced `\s+` and
// `[\p{L}\p{N}'-]+` gives exactly what the regexps gave: the character
// classes are compared on every Unicode code point, and the functions on a
// table of tricky inputs, on every string of up to four troublesome pieces
// and on random strings of them.

// spacePieces and wordPieces include ASCII and Unicode white space, letters
// and numbers of several scripts, combining marks, emoji, invalid UTF-8 and
// a truncated sequence.
var (
	spacePieces = []string{" ", "\t", "\n", "\v", "\f", "\r", "\u00a0", "\u2003", "\u0085", "\u3000", "x", "é", "\xff", "\xe2\x80"}
	wordPieces  = []string{"a", "Z", "é", "日", "ß", "Σ", "7", "٣", "Ⅻ", "½", "'", "-", "’", "_", " ", ".", "\u0301", "😀", "\xff", "\xe2\x80", "\u00a0"}
)

func eachString(pieces []string, n int, f func(string)) {
	var walk func(prefix string, depth int)
	walk = func(prefix string, depth int) {
		f(prefix)
		if depth == n {
			return
		}
		for _, p := range pieces {
			walk(prefix+p, depth+1)
		}
	}
	walk("", 0)
}

func randomStrings(pieces []string, count int, f func(string)) {
	rng := rand.New(rand.NewSource(1))
	for range count {
		var b strings.Builder
		for n := rng.Intn(24); n > 0; n-- {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		f(b.String())
	}
}

func TestRuneClassesMatchRegexp(t *testing.T) {
	space := regexp.MustCompile(`^\s$`)
	word := regexp.MustCompile(`^[\p{L}\p{N}'-]$`)
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		s := string(r)
		if got, want := collapseSpace(s) == " ", space.MatchString(s); got != want {
			t.Fatalf("U+%04X: collapseSpace treats it as space: %v; `\\s` matches: %v", r, got, want)
		}
		if got, want := wordRune(r), word.MatchString(s); got != want {
			t.Fatalf("U+%04X: wordRune = %v; the regexp class matches: %v", r, got, want)
		}
	}
	// An invalid byte reads as U+FFFD, which is neither.
	if wordRune(utf8.RuneError) || word.MatchString("\xff") || space.MatchString("\xff") {
		t.Fatal("an invalid byte must belong to no class")
	}
}

func TestCollapseSpaceMatchesRegexp(t *testing.T) {
	re := regexp.MustCompile(`\s+`)
	check := func(s string) {
		t.Helper()
		if got, want := collapseSpace(s), re.ReplaceAllString(s, " "); got != want {
			t.Fatalf("collapseSpace(%q) = %q; the regexp gives %q", s, got, want)
		}
		if got, want := normCmd(s), strings.TrimSpace(re.ReplaceAllString(s, " ")); got != want {
			t.Fatalf("normCmd(%q) = %q; the regexp gives %q", s, got, want)
		}
	}
	for _, s := range []string{
		"", " ", "  ", "\t\n", "go  test ./...", " go\ttest\n\n./... ", "a\vb", "a\u00a0 \u00a0b", "\r\n",
		"x \xff  y", "\xe2\x80 \x80", "é\t\té", "no-space", "trailing \f", "\u2028 \u2029",
	} {
		check(s)
	}
	eachString(spacePieces, 4, check)
	randomStrings(spacePieces, 20000, check)
}

func TestPromptWordsMatchRegexp(t *testing.T) {
	re := regexp.MustCompile(`[\p{L}\p{N}'-]+`)
	check := func(s string) {
		t.Helper()
		got, want := promptWords(s), re.FindAllString(s, -1)
		if len(got) != len(want) {
			t.Fatalf("promptWords(%q) = %q; the regexp gives %q", s, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("promptWords(%q) = %q; the regexp gives %q", s, got, want)
			}
		}
	}
	for _, s := range []string{
		"", " ", "yes", "ok, go ahead!", "let's do it", "go-ahead", "don't", "--", "'", "what’s next?",
		"naïve café", "e\u0301t\u00e9", "日本語のテスト", "Σίσυφος", "١٢٣ ٣", "Ⅻ ½ 7", "snake_case", "😀ok😀",
		"a\xffb", "\xe2\x80ok", "tab\tsep\nnl", "a\u00a0b", "ﬁle", "İstanbul",
	} {
		check(s)
		check(strings.ToLower(s))
	}
	eachString(wordPieces, 3, check)
	randomStrings(wordPieces, 20000, check)
}

func TestSubstantiveUnchanged(t *testing.T) {
	// substantive as it was, on the regexp.
	re := regexp.MustCompile(`[\p{L}\p{N}'-]+`)
	old := func(p string) bool {
		p = strings.TrimSpace(p)
		if p == "" || strings.HasPrefix(p, "/") {
			return false
		}
		words := re.FindAllString(strings.ToLower(p), -1)
		if len(words) == 0 {
			return false
		}
		if len(words) > 6 {
			return true
		}
		for _, w := range words {
			if w := strings.Trim(w, "'-"); !nudgeWords()[w] && !ackWords()[w] { // ackWords(): issue 13
				return true
			}
		}
		return false
	}
	for _, s := range []string{
		"", "yes", "ok go ahead", "Yes, please continue.", "/clear", "do it", "fix the bug", "OK!!!", "…",
		"'yes'", "-continue-", "what's next?", "thanks 😀", "Merci", "да", "go-ahead please", "ÿes",
	} {
		if got, want := substantive(s), old(s); got != want {
			t.Fatalf("substantive(%q) = %v; before it was %v", s, got, want)
		}
	}
	pieces := append([]string{"yes ", "ok ", "go ", "ahead", "continue", "fix", "/", "it"}, wordPieces...)
	randomStrings(pieces, 20000, func(s string) {
		if got, want := substantive(s), old(s); got != want {
			t.Fatalf("substantive(%q) = %v; before it was %v", s, got, want)
		}
	})
}
