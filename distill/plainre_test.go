package distill

import (
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
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
			if w := strings.Trim(w, "'-"); !nudgeWords.has(w) && !ackWords.has(w) { // ackWords.list(): issue 13
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

// The regexps that testCmds, nextPhrases and exitLine replaced: the oracles.
var (
	testCmdRE  = regexp.MustCompile(`(?i)\b(test|tests|pytest|unittest|jest|vitest|mocha|rspec|go (test|build|vet)|cargo (test|build|check)|npm (run )?(test|build)|yarn (test|build)|pnpm (test|build)|make|tsc|mvn|gradle|ctest|tox|phpunit|build|lint|check)\b`)
	exitLineRE = regexp.MustCompile(`(?i)^(error: )?(exit code:? -?\d+|process exited with code -?\d+|command failed.*exit code.*)$`)
	nextRE     = regexp.MustCompile(`(?i)\b(next,? (i|we)('ll| will| should| need to| plan to)|(i|we)('ll| will) next|next step|then (i|we)('ll| will| need to| should| have to)|next up|after that,? (i|we)('ll| will| need to)|remaining:|todo:|still need to|the plan is)`)
)

// seedTexts seeds f with every line of the goldens (and each string of
// their JSON lines), then with own, in all eight languages.
func seedTexts(f *testing.F, own ...string) {
	files, _ := filepath.Glob("../testdata/distill/*/*")
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] && len(s) < 4096 {
			seen[s] = true
			f.Add(s)
		}
	}
	var leaves func(v any)
	leaves = func(v any) {
		switch v := v.(type) {
		case string:
			for _, l := range strings.Split(v, "\n") {
				add(l)
			}
			add(v)
		case []any:
			for _, x := range v {
				leaves(x)
			}
		case map[string]any:
			for _, x := range v {
				leaves(x)
			}
		}
	}
	for _, name := range files {
		b, _ := os.ReadFile(name)
		for _, l := range strings.Split(string(b), "\n") {
			var v any
			if json.Unmarshal([]byte(l), &v) == nil {
				leaves(v)
			} else {
				add(l)
			}
		}
	}
	for _, s := range own {
		add(s)
		add(strings.ToUpper(s))
	}
}

// Exotic folds and edges: ſ folds to s and K (Kelvin) to k, neither an ASCII
// word character, so \b sits between them and a letter.
var foldSeeds = []string{"", "teſt", "checK", "checKx", "maKe it", "xſtill need to", "ſtill need to", "a\xffcheck", "\xe2\x80test", "test_x", "_test", "test-x", "9make"}

func FuzzTestCmd(f *testing.F) {
	seedTexts(f, append(foldSeeds, "go test ./...", "npm run build", "pytest -q tests/", "cargo check --all", "yarn  test", "pnpm build",
		"make -j4", "./gradlew check", "mvn -q verify", "npx tsc --noEmit", "tox -e py312", "phpunit", "ctest", "golangci-lint run",
		"bun test", "go vet ./...", "npm run lint", "latest", "contest", "testing", "rebuild", "GO TEST", "Go Build", "go  test",
		"git commit -m 'Test ajouté'", "pytest -k 'prueba'", "npm test # тесты", "make テスト", "cargo test -- 测试", "teste")...)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := matchWords(s, testCmds, true), testCmdRE.MatchString(s); got != want {
			t.Fatalf("matchWords(%q, testCmds) = %v; the regexp: %v", s, got, want)
		}
	})
}

func FuzzForwardLooking(f *testing.F) {
	seedTexts(f, append(foldSeeds, "Next, I'll fix the parser.", "next we need to rerun it", "Then we should deploy.", "I'll next look at",
		"After that, we will ship", "after that i need to", "Remaining: docs", "TODO: tests", "We still need to merge.", "The plan is simple.",
		"next up: logging", "Next step", "nextstep", "unext, i'll", "the planis", "Als Nächstes werde ich die Tests reparieren.",
		"Ensuite, je vais corriger le bug.", "Luego voy a revisar los logs.", "Em seguida, vou atualizar a documentação.",
		"Далее я исправлю парсер.", "次に、テストを修正します。", "接下来我会修复解析器。", "next, i plan to", "then i have to", "we'll next")...)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := matchWords(s, nextPhrases.list(), false), nextRE.MatchString(s); got != want {
			t.Fatalf("matchWords(%q, nextPhrases) = %v; the regexp: %v", s, got, want)
		}
	})
}

func FuzzExitLine(f *testing.F) {
	seedTexts(f, "exit code 1", "Exit code: -2", "error: Exit code 127", "Process exited with code 1", "process exited with code -1",
		"command failed with exit code 2", "Command failed: npm test (exit code 1)", "exit code 1\n", "exit code 1x", "exit code ",
		"exit code:1", "Error: exit code: 1", "exit code ٣", "error: error: exit code 1", "command failed\nexit code 1",
		"command failed, eXit code 1 \xff", "proceſs exited with code 3", "Код завершения 1", "終了コード 1", "退出代码 1",
		"Código de salida 1", "Exit-Code 1", "code de sortie 1", "código de saída 1")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := exitLine(s), exitLineRE.MatchString(s); got != want {
			t.Fatalf("exitLine(%q) = %v; the regexp: %v", s, got, want)
		}
	})
}
