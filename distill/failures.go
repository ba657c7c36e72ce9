package distill

// Failures: what failed, on what, and whether it was fixed. A failure is
// keyed by its target — the program (and its subcommand) and the paths it
// was run on, or the tool and the file it wrote — so that a later success
// of the same command, test file or tool on the same target marks it
// resolved (a failed approach, not a blocker) even when the flags differ.
// Only what has not succeeded since is unresolved.

import (
	"sort"
	"strconv"
	"strings"
)

// maxErrors is how many distinct error lines one collapsed failure keeps.
const maxErrors = 3

// wrappers are words that run another program: the key skips them.
var wrappers = map[string]bool{"sudo": true, "time": true, "env": true, "npx": true, "bunx": true, "exec": true, "nice": true, "timeout": true, "command": true}

// subcommanded are programs whose first argument names what they do (go
// test vs go build): it is part of the key.
var subcommanded = map[string]bool{"go": true, "cargo": true, "npm": true, "yarn": true, "pnpm": true, "bun": true, "git": true, "make": true,
	"docker": true, "kubectl": true, "uv": true, "poetry": true, "bundle": true, "mvn": true, "gradle": true, "./gradlew": true, "dotnet": true,
	"just": true, "python": true, "python3": true, "node": true, "deno": true, "rake": true, "mix": true, "swift": true, "terraform": true}

// targetKey is the key of a failing or succeeding command: each && / ; / |
// segment as program, subcommand and path-like arguments (sorted, pytest
// node ids cut at "::"), without flags, env assignments or a leading cd.
func targetKey(cmd string) string {
	var segs []string
	for _, seg := range splitSegments(normCmd(cmd)) {
		if k, ok := segmentKey(seg); ok {
			segs = append(segs, k)
		}
	}
	if len(segs) == 0 {
		return normCmd(cmd)
	}
	return strings.Join(segs, " && ")
}

// skipPrefixWords drops the words before a segment's program: env
// assignments (VAR=x) and wrappers (sudo, env, time ...).
func skipPrefixWords(f []string) []string {
	for len(f) > 0 && (strings.Contains(f[0], "=") && !strings.HasPrefix(f[0], "-") || wrappers[f[0]]) {
		f = f[1:]
	}
	return f
}

// segmentKey is the key of one segment: "program subcommand\tpaths"; none
// for cd, echo and true.
func segmentKey(seg string) (string, bool) {
	f := skipPrefixWords(cmdFields(seg))
	if len(f) == 0 || f[0] == "cd" || f[0] == "echo" || f[0] == "true" {
		return "", false
	}
	prog := progName(f[0])
	parts := []string{prog}
	var paths []string
	sub := subcommanded[prog]
	for i, a := range f[1:] {
		if strings.HasPrefix(a, "-") {
			if prog == "python" && a == "-m" && i+2 < len(f) {
				sub = true // python -m pytest: the module is the program
			}
			continue
		}
		a = strings.Trim(a, `'"`)
		if j := strings.Index(a, "::"); j > 0 {
			a = a[:j]
		}
		switch {
		case sub && strings.Contains(a, "="):
			// git -c key=value commit: the value is not the subcommand
		case sub:
			parts = append(parts, a)
			sub = false
		case strings.ContainsAny(a, "/."):
			paths = append(paths, a)
		}
	}
	sort.Strings(paths)
	return strings.Join(parts, " ") + "\t" + strings.Join(paths, " "), true
}

// progName is a program's name without its directory and version:
// python3.12, python3 and python, pip3 and pip, node18 and node run the
// same target, so a retry with the other name is a fix.
func progName(prog string) string {
	if i := strings.LastIndexByte(prog, '/'); i >= 0 && prog != "./gradlew" {
		prog = prog[i+1:]
	}
	if t := strings.TrimRight(prog, "0123456789."); t != "" {
		return t
	}
	return prog
}

// cmdFields splits a command segment into words; a quoted argument with a
// space in it (a commit message, an echo) is no target and is dropped.
func cmdFields(seg string) []string {
	var out []string
	var b strings.Builder
	var quote byte
	spaced, quoted := false, false
	flush := func() {
		if b.Len() > 0 && !(quoted && spaced) {
			out = append(out, b.String())
		}
		b.Reset()
		spaced, quoted = false, false
	}
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
				continue
			}
			if c == ' ' {
				spaced = true
			}
			b.WriteByte(c)
		case c == '\'' || c == '"':
			quote, quoted = c, true
		case c == ' ' || c == '\t':
			flush()
		default:
			b.WriteByte(c)
		}
	}
	flush()
	return out
}

// splitSegments splits a command line at &&, ||, ; and | (outside quotes).
func splitSegments(s string) []string {
	var out []string
	var quote byte
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		default:
			if w := operatorWidth(s, i); w > 0 {
				if t := strings.TrimSpace(s[start:i]); t != "" {
					out = append(out, t)
				}
				i += w - 1
				start = i + 1
			}
		}
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return out
}

// operatorWidth is the width of the control operator at s[i] (;, |, ||,
// &&, and ;& ;| |& after ; or |), 0 when there is none.
func operatorWidth(s string, i int) int {
	c := s[i]
	if c != ';' && c != '|' && !(c == '&' && i+1 < len(s) && s[i+1] == '&') {
		return 0
	}
	if i+1 < len(s) && (s[i+1] == '|' || s[i+1] == '&') {
		return 2
	}
	return 1
}

// toolKey is the key of a failing tool call without a command: the file it
// wrote ("file retry.py"), or the tool alone. Only edit tools carry a path,
// and they are one target: Claude's "File has not been read yet" on an Edit,
// a MultiEdit and a Write of one file is fixed by whichever of them later
// succeeds on it (a real 1.0.98 session listed six such failures as open).
func toolKey(tool, path string) string {
	if path != "" {
		return "file " + path
	}
	return strings.ToLower(tool)
}

// exceptionRE matches the line that names an error: "AssertionError:
// expected 42", "pkg.errors.ConfigError: …", "E   NameError: …" (pytest),
// "error[E0425]: cannot find value" (rustc), "panic: …".
var exceptionRE = lazyRegexp(`^(E\s+)?([A-Za-z_][\w.]*(Error|Exception|Failure|Interrupt|Exit)|panic|fatal error|error(\[\w+\])?)(:|$)`)

// errorLine picks the line of an error output that names the error: the
// last exception line when there is one (a traceback's last line, never
// its "Traceback (most recent call last):" header), else the first line
// with an error word, else the first line.
func errorLine(text string) string {
	if strings.Contains(text, `{"`) && strings.Contains(text, `"message"`) {
		text = jsonErrorText(text)
	}
	var first, worded, exception string
	for _, l := range strings.Split(text, "\n") {
		l, ok := outputLine(l)
		if !ok {
			continue
		}
		if first == "" {
			first = l
		}
		if mayNameError(l) && exceptionRE().MatchString(l) {
			exception = strings.TrimSpace(strings.TrimPrefix(l, "E "))
		}
		if worded == "" && containsAny(strings.ToLower(l), errWords) {
			worded = l
		}
	}
	return clip(pickErrorLine(first, worded, exception), 160)
}

// pickErrorLine chooses among the first line, the first with an error
// word and the last exception line.
func pickErrorLine(first, worded, exception string) string {
	switch {
	case exception != "" && !strings.Contains(exception, ":") && worded != "" && worded != exception:
		// A bare "AssertionError": the line naming the test says more.
		return worded + " — " + exception
	case exception != "":
		return exception
	case worded != "":
		return worded
	}
	return first
}

// outputLine cleans one line of error output; ok is false for a line that
// names no error: empty, an exit status, a harness's "Output:" or "Wall
// time:", a traceback's header or its "File ..." frames.
func outputLine(l string) (string, bool) {
	l = strings.TrimSpace(stripWrapTags(l))
	if len(l) > 2 && l[0] == '[' && l[len(l)-1] == ']' {
		// Node prints a thrown error in brackets: "[TypeError: generate
		// is not a function]" names the error, "> Build error occurred"
		// above it does not.
		l = strings.TrimSpace(l[1 : len(l)-1])
	}
	if l == "" || (strings.Contains(l, "xit") || strings.Contains(l, "XIT")) && exitLineRE().MatchString(l) || startsWithAnyPrefix(l, noErrorPrefixes) {
		return "", false
	}
	return l, true
}

var noErrorPrefixes = []string{"Output:", "Wall time:", "Traceback (most recent call last)", "File \""}

// causeMarkers introduce the session's explanation of a failure ("`User`
// was undefined because the import was missing"), in the languages of
// switchMarkers.
var causeMarkers = phraseList("cause")

// causeSentence returns the first sentence of an assistant text that
// explains a failure ("" when none does).
func causeSentence(text, low string) string {
	if !containsAny(low, causeMarkers()) {
		return ""
	}
	for _, s := range sentences(text) {
		if containsAny(strings.ToLower(s), causeMarkers()) {
			return clip(s, 200)
		}
	}
	return ""
}

// addError keeps e among f's distinct errors, the newest last.
func (f *Failure) addError(e string) {
	if e == "" {
		return
	}
	for i, x := range f.Errors {
		if x == e {
			f.Errors = append(f.Errors[:i:i], f.Errors[i+1:]...)
			break
		}
	}
	f.Errors = last(append(f.Errors, e), maxErrors)
	f.Error = e
}

var jsonMessageRE = lazyRegexp(`"message"\s*:\s*"((?:[^"\\]|\\.){1,300})"`)

var jsonCodeRE = lazyRegexp(`"code"\s*:\s*"?(\w{1,40})"?`)

// jsonErrorText turns an error that carries a JSON body ("[API Error:
// {"error":{"code":400,…,"message":"…"}}]") into its words: the text
// before the JSON, the code and the message, never a JSON fragment.
func jsonErrorText(text string) string {
	m := jsonMessageRE().FindStringSubmatch(text)
	if m == nil {
		return text
	}
	msg := m[1]
	if u, err := strconv.Unquote(`"` + msg + `"`); err == nil {
		msg = u
	}
	head := strings.TrimSpace(strings.TrimLeft(text[:strings.Index(text, `{"`)], "[ "))
	head = strings.TrimSpace(strings.TrimSuffix(head, ":"))
	if c := jsonCodeRE().FindStringSubmatch(text); c != nil {
		msg = c[1] + " " + msg
	}
	if head != "" {
		return head + ": " + msg
	}
	return msg
}

// wrapTagRE matches a harness tag wrapped around an error line
// ("<tool_use_error>File has not been read yet…</tool_use_error>").
var wrapTagRE = lazyRegexp(`^<([a-z][a-z0-9_-]*)>|</[a-z][a-z0-9_-]*>$`)

// stripWrapTags removes a tag wrapped around a line: markup is for the
// harness, the handoff shows the message.
func stripWrapTags(l string) string {
	if !strings.HasPrefix(l, "<") && !strings.HasSuffix(l, ">") {
		return l
	}
	return wrapTagRE().ReplaceAllString(strings.TrimSpace(l), "")
}

// mayNameError is exceptionRE's cheap pre-check: the line holds one of the
// words the pattern needs.
func mayNameError(l string) bool {
	return strings.Contains(l, "Error") || strings.Contains(l, "error") || strings.Contains(l, "Exception") ||
		strings.Contains(l, "Failure") || strings.Contains(l, "Interrupt") || strings.Contains(l, "Exit") ||
		strings.HasPrefix(l, "panic") || strings.HasPrefix(l, "fatal error")
}
