package adapters

import (
	"regexp"
	"strings"
	"testing"
)

// These tests prove that the plain string code that replaced a few
// regexps gives exactly what the regexps gave: each is checked against the
// original expression on a table of tricky inputs and on every string of
// up to four pieces drawn from an alphabet of troublesome fragments (ASCII
// and non-ASCII digits, newlines, invalid UTF-8, near-miss prefixes).

// eachString calls f with every concatenation of up to n pieces.
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

func TestCopilotExitCodeMatchesRegexp(t *testing.T) {
	re := regexp.MustCompile(`completed with exit code (-?\d+)>`)
	check := func(s string) {
		t.Helper()
		want, wantOK := "", false
		if m := re.FindStringSubmatch(s); m != nil {
			want, wantOK = m[1], true
		}
		if got, ok := copilotExitCode(s); got != want || ok != wantOK {
			t.Fatalf("copilotExitCode(%q) = %q, %v; the regexp gives %q, %v", s, got, ok, want, wantOK)
		}
	}
	for _, s := range []string{
		"", ">", "completed with exit code", "completed with exit code >", "completed with exit code ->",
		"completed with exit code 0>", "<exited with exit code 1>", "command completed with exit code 127>",
		"completed with exit code -1>", "completed with exit code --1>", "completed with exit code 1-2>",
		"completed with exit code 12", "completed with exit code 12 >", "completed with exit code ٣>",
		"completed with exit code １>", "completed with exit code 1\n>", "Completed with exit code 1>",
		"completed with exit code x> completed with exit code 2>", "completed with exit code completed with exit code 3>",
		"completed with exit code 99999999999999999999999>", "\xffcompleted with exit code 4>\xff",
		"completed  with exit code 5>", "completed with exit code 6>completed with exit code 7>",
		"é completed with exit code -0>", "completed with exit code -\xff1>",
	} {
		check(s)
	}
	eachString([]string{"completed with exit code ", "completed with exit code", " ", "-", "0", "42", ">", "٣", "\n", "\xff", "x"}, 4, check)
}

func TestVSCodeCallIDMatchesRegexp(t *testing.T) {
	re := regexp.MustCompile(`__vscode-\d+$`)
	check := func(s string) {
		t.Helper()
		if got, want := vscodeCallID(s), re.ReplaceAllString(s, ""); got != want {
			t.Fatalf("vscodeCallID(%q) = %q; the regexp gives %q", s, got, want)
		}
	}
	for _, s := range []string{
		"", "__vscode-", "__vscode-1", "call_abc__vscode-1712345678", "call__vscode-12__vscode-3",
		"call__vscode-12x", "call__vscode-", "call__vscode-1\n", "call__vscode-٣", "call__vscode-１",
		"call_vscode-1", "call__VSCODE-1", "toolu_01__vscode-0", "日本__vscode-42", "\xff__vscode-7",
		"__vscode-__vscode-1", "x__vscode--1", "123", "a__vscode-1a1",
	} {
		check(s)
	}
	eachString([]string{"__vscode-", "_", "-", "0", "9", "٣", "x", "\n", "\xff"}, 4, check)
}

func TestAiderLinesMatchRegexp(t *testing.T) {
	for prefix, re := range map[string]*regexp.Regexp{
		aiderApplied: regexp.MustCompile(`^Applied edit to (.+)$`),
		aiderCreate:  regexp.MustCompile(`^Creating empty file (.+)$`),
		aiderRunning: regexp.MustCompile(`^Running (.+)$`),
	} {
		check := func(s string) {
			t.Helper()
			got := aiderIs(s, prefix)
			if want := re.MatchString(s); got != want {
				t.Fatalf("aiderIs(%q, %q) = %v; the regexp gives %v", s, prefix, got, want)
			}
			if got {
				if m := re.FindStringSubmatch(s); m[1] != s[len(prefix):] {
					t.Fatalf("aiderIs(%q, %q): argument %q; the regexp gives %q", s, prefix, s[len(prefix):], m[1])
				}
			}
		}
		for _, s := range []string{
			"", prefix, prefix + " ", prefix + "x", prefix + "\n", prefix + "x\n", prefix + "\nx", prefix + "\r",
			prefix + "é", prefix + "\xff", prefix + "日本語.go", " " + prefix + "x", strings.ToLower(prefix) + "x",
			strings.TrimSuffix(prefix, " ") + "x", prefix + prefix, "x" + prefix + "y", prefix + "\u2028",
		} {
			check(s)
		}
		eachString([]string{prefix, prefix[:len(prefix)-1], " ", "x", "\n", "\r", "\xff", "é"}, 4, check)
	}
}

func TestAiderConfirmMatchesRegexp(t *testing.T) {
	re := regexp.MustCompile(`\(Y\)es/\(N\)o`)
	check := func(s string) {
		t.Helper()
		if got, want := strings.Contains(s, aiderConfirm), re.MatchString(s); got != want {
			t.Fatalf("confirm(%q) = %v; the regexp gives %v", s, got, want)
		}
	}
	for _, s := range []string{
		"", "(Y)es/(N)o", "Apply edit? (Y)es/(N)o [Yes]: y", "(y)es/(n)o", "(Y)es / (N)o", "Yes/No",
		"(Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again", "\xff(Y)es/(N)o\xff", "(Y)es/(N", "é(Y)es/(N)oé",
	} {
		check(s)
	}
	eachString([]string{"(Y)es/", "(N)o", "(Y)", "es/", "(", ")", "\n", "\xff"}, 4, check)
}
