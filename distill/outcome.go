package distill

// Rules over the work: outcomes from evidence, not wording, and what is next.
//
// A failure is keyed by its target: the program (and subcommand) and the paths it ran on, or the tool and the file it
// wrote. It is resolved by a later pass of the same target whatever surrounds it (&& chains, env prefixes, flags; `go
// test ./...` after `go test ./pkg`), by an edit of its files then a passing verification, or by completion reported
// after it.
//
// Shell commands write files as often as edit tools and the hook has no time to walk the tree: targets are parsed
// from the line (> and >>, tee, cp/mv/git mv, rm/git rm, touch, sed -i/perl -i, -o/--output); heredoc bodies skipped,
// /dev/* and variables no files.
//
// Next action: the first of nextRules that gives one; never a recap, an offer (boilerplate), a done item or what is
// not prose. Open questions: the last turn's unanswered ones, unresolved failures, TODO/FIXME markers edits added.

import (
	"cmp"
	"encoding/json"
	"iter"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/carryover/carryover/adapters/ledger"
)

var (
	// wrappers run another program: the key skips them.
	wrappers = []string{"sudo", "time", "env", "npx", "bunx", "exec", "nice", "timeout", "command"}
	// interpreters run a script whose next word is its own subcommand: `python manage.py test` ≠ `… migrate`
	interpreters = []string{"python", "node", "php", "ruby", "perl"}
	// subcommanded programs' first argument names what they do (go test vs go build): part of the key.
	runners      = []string{"run", "exec", "x", "dlx", "run-script"}
	pkgManagers  = []string{"npm", "yarn", "pnpm", "bun"} // whose scripts run with or without "run"
	subcommanded = []string{"go", "cargo", "npm", "yarn", "pnpm", "bun", "git", "make", "docker", "kubectl", "uv", "poetry", "bundle", "mvn",
		"gradle", "./gradlew", "dotnet", "just", "python", "python3", "node", "deno", "rake", "mix", "swift", "terraform", "php", "ruby", "perl", "rails",
		"pip", "pipx", "gem", "composer", "conda", "brew", "apt", "apt-get", "helm"}
)

const (
	nextMarkers        phraseName = "next_marker" // beyond nextPhrases' English
	intentMarkers      phraseName = "intent"      // "I'll add …": the agent's own step, announced
	boilerplateMarkers phraseName = "boilerplate" // offers of help and sign-offs
	causeMarkers       phraseName = "cause"       // "`User` was undefined because the import was missing"
)

// targetKey is a command's key: each && / ; / | segment as program, subcommand and path-like arguments (sorted,
// pytest node ids cut at "::"), without flags, env assignments or a leading cd.
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
	return strings.Join(unread(segs), " && ")
}

// unread drops the segments that only read when another does more: `go test ./... 2>&1 | tail -5` runs go test's
// target, a filter reading its output is none.
func unread(segs []string) []string {
	if len(segs) < 2 || !slices.ContainsFunc(segs, func(k string) bool { return reads(segTool(k)) }) {
		return segs
	}
	if kept := slices.DeleteFunc(slices.Clone(segs), func(k string) bool { return reads(segTool(k)) }); len(kept) > 0 {
		return kept
	}
	return segs
}

// skipPrefixWords drops env assignments (VAR=x) and wrappers before the program, with a wrapper's options and
// numbers (`timeout 5 curl …` is curl's, a read; `nice -n 10 go test` is go's).
func skipPrefixWords(f []string) []string {
	for len(f) > 0 && (strings.Contains(f[0], "=") && !strings.HasPrefix(f[0], "-") || slices.Contains(wrappers, f[0])) {
		for f = f[1:]; len(f) > 1 && strings.IndexAny(f[0][:1], "-0123456789") == 0; f = f[1:] {
		}
	}
	return f
}

// segmentKey is "program subcommand\tpaths"; none for cd, echo and true.
func segmentKey(seg string) (string, bool) {
	f := unwrapExec(skipPrefixWords(cmdFields(seg)))
	if len(f) == 0 || f[0] == "cd" || f[0] == "echo" || f[0] == "true" {
		return "", false
	}
	prog := progName(f[0])
	if len(f) > 2 && f[1] == "run" && slices.Contains(pkgManagers, prog) && !slices.Contains(installAliases, f[2]) {
		f = f[1:] // `npm run test` is `npm test`; `npm run ci` is a script, not `npm ci`
	}
	return segmentArgs(prog, f), true
}

// execVerbs: a program's verbs that run the next command in a container, an environment or a package runner; the
// target is that command's (`docker compose run web pytest` is pytest's, not flake8's through the same service).
var execVerbs = map[string][]string{"uv": {"run"}, "poetry": {"run"}, "pdm": {"run"}, "pipenv": {"run"}, "hatch": {"run"},
	"bundle": {"exec"}, "pnpm": {"dlx", "exec"}, "yarn": {"dlx", "exec"}, "npm": {"exec"}, "bun": {"x"},
	"docker": {"run", "exec"}, "podman": {"run", "exec"}, "docker-compose": {"run", "exec"}, "kubectl": {"exec"}}

// unwrapExec drops exec wrappers: the program's options, the verb, its flags and, for a container, its image,
// service or pod (`docker compose -f ci.yml --profile test run web pytest` is pytest's).
func unwrapExec(f []string) []string {
	for len(f) > 2 {
		prog, g := progName(f[0]), f[verbAt(progName(f[0]), f)-1:]
		if len(g) > 2 && g[1] == "compose" {
			prog = "docker-compose"
			g = g[verbAt(prog, g[1:]):]
		}
		if len(g) < 2 {
			return f
		}
		i := execStart(prog, g)
		if i < 0 || i >= len(g) {
			return f
		}
		f = skipPrefixWords(g[i:])
	}
	return f
}

// unwrapped is cmd with each exec wrapper's own words dropped: `docker compose -f docker-compose.test.yml run web
// flake8` runs flake8, whatever its compose file is named. isTestCmd asks only of a container runner's command (the
// only wrappers whose options name files): the hook's other commands cost nothing more.
func unwrapped(cmd string) string {
	segs := splitSegments(cmd)
	for i, seg := range segs {
		f := skipPrefixWords(cmdFields(seg))
		if u := unwrapExec(f); len(u) < len(f) {
			segs[i] = strings.Join(u, " ")
		}
	}
	return strings.Join(segs, " ; ")
}

// verbAt: where f's verb stands after the program's own options; an option's value is the word after it that is
// neither an option nor a verb (`-f ci.yml`, `--context prod`; `--verbose run` has none).
func verbAt(prog string, f []string) int {
	i := 1
	for i < len(f) && strings.HasPrefix(f[i], "-") && f[i] != "--" {
		if i+1 < len(f) && !strings.Contains(f[i], "=") && optionValue(prog, f[i+1]) {
			i++
		}
		i++
	}
	return i
}

// optionValue: w, after an option, is its value: no option itself, nor a verb.
func optionValue(prog, w string) bool {
	return !strings.HasPrefix(w, "-") && w != "compose" && !slices.Contains(execVerbs[prog], w)
}

// execStart: where the command f's exec verb runs starts, -1 for none.
func execStart(prog string, f []string) int {
	if !slices.Contains(execVerbs[prog], f[1]) {
		return -1
	}
	i := 2
	for i < len(f) && strings.HasPrefix(f[i], "-") && f[i] != "--" {
		i += 1 + containerFlagValue(prog, f[i])
	}
	if slices.Contains(containerProgs, prog) {
		i++ // the image, service or pod; kubectl's command follows "--"
	}
	if i < len(f) && f[i] == "--" {
		i++
	}
	return i
}

// containerFlagValue: 1 when a container runner's flag takes the next word (`-v /p:/app`, `-w /app`, `-n ns`): a
// one-letter flag other than the switches -i -t -d -T -P, or one of the long ones below; 0 otherwise.
func containerFlagValue(prog, flag string) int {
	if !slices.Contains(containerProgs, prog) || strings.Contains(flag, "=") {
		return 0
	}
	if len(flag) == 2 && !strings.Contains("itdTP", flag[1:]) || slices.Contains(valueFlags, flag) {
		return 1
	}
	return 0
}

var containerProgs = []string{"docker", "podman", "docker-compose", "kubectl"}

var valueFlags = []string{"--name", "--env", "--volume", "--workdir", "--user", "--network", "--entrypoint", "--namespace", "--container"}

// segmentArgs: the program with its subcommand (git commit, python -m pytest), a tab, the path-like arguments, sorted.
func segmentArgs(prog string, f []string) string {
	a := segWords{parts: []string{prog}}
	a.sub, a.script = slices.Contains(subcommanded, prog), slices.Contains(interpreters, prog)
	skip := false
	for i, w := range f[1:] {
		switch {
		case partOption(prog, f[i]) && !strings.HasPrefix(w, "-"):
			skip, a.filters = false, append(a.filters, argWord(w))
		case skip:
			skip = false
		case prog == "python" && w == "-m" && i+2 < len(f):
			a.sub, a.script = true, false // python -m pytest: the module is the program
		case strings.HasPrefix(w, "-"):
			if name, v, ok := strings.Cut(w, "="); ok && partOption(prog, name) {
				a.filters = append(a.filters, argWord(v))
			}
			skip = a.sub && len(a.parts) == 1 && optionBeforeVerb(w)
		default:
			a = a.add(argWord(w), f[i])
		}
	}
	sort.Strings(a.paths)
	sort.Strings(a.filters)
	return segKeyString(a.parts, a.paths, a.filters)
}

// partOption: flag selects a part of what its command builds, tests or installs — a stage (`docker build --target
// deps`), a package or workspace member (`cargo build -p api`, `npm -w web`, `pnpm --filter web`, `mvn -pl core`, `lerna
// --scope`): its value is keyed like a test filter, so the pass of a part never fixes the failure of the whole. The
// one-letter forms (-p, -w, -F) only for the package managers and cargo, whose -p/-w name a member (gofmt's -w writes).
func partOption(prog, flag string) bool {
	return slices.Contains(partOptions, flag) || slices.Contains(memberFlags, flag) && (prog == "cargo" || slices.Contains(pkgManagers, prog))
}

var (
	partOptions = []string{"--target", "--package", "--workspace", "--filter", "--scope", "--projects", "-pl"}
	memberFlags = []string{"-p", "-w", "-F"}
)

// optionBeforeVerb: a one-letter option before a subcommand takes the next word (`make -C backend test`, `kubectl -n
// staging apply`, `git -C repo commit`, `npm -w packages/api test`), unless it is one of the switches most programs
// share (-v verbose, -q quiet, -s silent, -x, -i, -t, -d, -y, -h): the verb is the word after the value.
func optionBeforeVerb(w string) bool {
	return len(w) == 2 && isLetter(w[1]) && !strings.ContainsRune("vqsxitdyh", rune(w[1]))
}

// segWords gathers a segment's key: program and subcommand, paths, test filters.
type segWords struct {
	parts, paths, filters []string
	sub, script           bool
}

// add files word a, prev the word before it (by value: the slices stay on segmentArgs' stack).
func (s segWords) add(a, prev string) segWords {
	switch {
	case s.sub && strings.Contains(a, "="): // git -c key=value commit
	case s.sub && (len(s.parts) == 1 || !strings.ContainsAny(a, "/.")):
		s.parts = append(s.parts, installVerb(s.parts, a))
		// a runner's program is the target: `npm run build` and `npm run lint`, `uv run pytest` and `uv
		// run ruff` are four, whose passes fix nothing of the others; so is a script's subcommand
		s.sub = len(s.parts) == 2 && (s.script || slices.Contains(runners, a))
	case strings.ContainsAny(a, "/.") || len(s.parts) == 2 && slices.Contains(operandVerbs, s.parts[1]):
		s.paths = append(s.paths, a) // a file, or a package the verb installs: `pip install requests` fixes no psycopg2
	case isFilter(s.parts, a) && !flagValue(prev):
		s.filters = append(s.filters, a)
	}
	return s
}

// installVerb: a package manager's verbs that install the manifest's dependencies are one target (`npm ci` after a
// failed `npm install`, `poetry sync` after `poetry install`): a clean install from the lockfile passing shows the
// dependencies in place, which is what the failed install was run for.
func installVerb(parts []string, a string) string {
	if len(parts) == 1 && slices.Contains(installAliases, a) && (slices.Contains(pkgManagers, parts[0]) || execVerbs[parts[0]] != nil) {
		return "install"
	}
	return a
}

var (
	installAliases = []string{"i", "ci", "sync"}
	operandVerbs   = []string{"install", "add", "get", "require", "remove", "uninstall"} // whose words name packages
)

// flagValue: the word after flag is the flag's own value, not a test filter — a long flag (`--cov app`, `--logger
// trx`, Go's `-tags integration`) that does not select tests by name. A selecting flag's value is a filter (`-k
// slug`, `-run TestX`, `--filter Invoice`, `--grep cart`, `-t sums`); so is a word after a one-letter switch (`-v`,
// `-x`) or a negated boolean (`--no-cache`). A boolean long flag before a filter (`--coverage cart`) reads as a value:
// the filter is lost and the run counts as the whole suite.
func flagValue(flag string) bool {
	name := strings.ToLower(strings.TrimLeft(flag, "-"))
	if !strings.HasPrefix(flag, "-") || strings.Contains(flag, "=") || len(name) < 2 || strings.HasPrefix(name, "no-") {
		return false
	}
	return !containsAny(name, selectorWords)
}

// selectorWords: what a flag that selects tests by name has in its name, across runners (pytest -k/-m take one letter).
var selectorWords = []string{"run", "filter", "grep", "pattern", "match", "name", "only", "select", "spec", "test", "skip", "exclude", "include"}

// segKeyString is "parts\tpaths ?filters" in one allocation (BenchmarkFold: 3 a segment were Join, Join and +).
func segKeyString(parts, paths, filters []string) string {
	var b strings.Builder
	b.Grow(64)
	sep := ""
	for _, w := range parts {
		b.WriteString(sep)
		b.WriteString(w)
		sep = " "
	}
	b.WriteByte('\t')
	sep = ""
	for i, w := range append(paths, filters...) {
		b.WriteString(sep)
		if i >= len(paths) {
			b.WriteByte('?')
		}
		b.WriteString(w)
		sep = " "
	}
	return b.String()
}

// argWord is an argument without quotes, a pytest node id cut at "::".
func argWord(a string) string {
	a = strings.Trim(a, `'"`)
	if j := strings.Index(a, "::"); j > 0 {
		a = a[:j]
	}
	return a
}

// isFilter: a test runner's word that is no path selects tests by name (`jest cart`, `go test -run TestX`, `pytest -k
// slug`, `cargo test name`): a part of the suite, keyed "?word". Not a number (`-n 4`, `-timeout 30s`), a mode
// (`vitest run`) nor the suite's own directory (`pytest tests`).
func isFilter(parts []string, a string) bool {
	return a != "" && a[0] > '9' && slices.ContainsFunc(parts, func(p string) bool { return slices.Contains(testRunners, p) }) &&
		!(len(parts) == 1 && slices.Contains(runners, a)) && !slices.Contains(testRunners, a)
}

// progName drops directory and version: python3.12 and python (node18 and
// node) run one target, so a retry with the other name is a fix.
func progName(prog string) string {
	if i := strings.LastIndexByte(prog, '/'); i >= 0 && prog != "./gradlew" {
		prog = prog[i+1:]
	}
	if t := strings.TrimRight(prog, "0123456789."); t != "" {
		return t
	}
	return prog
}

// cmdFields splits a segment into words without their quotes; a quoted
// argument with a space (a commit message, an echo) is no target: dropped.
func cmdFields(seg string) []string { return words(seg, false) }

// shellWords splits a segment at white space outside quotes, keeping them.
func shellWords(s string) []string { return words(s, true) }

// words splits at white space outside quotes, by bytes (invalid UTF-8 stays).
func words(s string, keepQuotes bool) []string {
	var out []string
	var b strings.Builder
	var quote byte
	spaced, quoted := false, false
	flush := func() {
		if b.Len() > 0 && (keepQuotes || !(quoted && spaced)) {
			out = append(out, b.String())
		}
		b.Reset()
		spaced, quoted = false, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			closing := c == quote
			if closing {
				quote = 0
			}
			spaced = spaced || c == ' '
			if !closing || keepQuotes {
				b.WriteByte(c)
			}
		case strings.IndexByte(`'"`, c) >= 0:
			quote, quoted = c, true
			if keepQuotes {
				b.WriteByte(c)
			}
		case strings.IndexByte(" \t", c) >= 0:
			flush()
		default:
			b.WriteByte(c)
		}
	}
	flush()
	return out
}

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

// operatorWidth is the width of the control operator at s[i] (; | || && and ;& ;| |&), 0 for none.
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

// noMatch: a search that found nothing — its last step grep, rg, ag, ack or git grep (xargs runs it), exit 1 or none
// recorded, and no output but an exit line or the harness's bare "Error" (Claude Code 1.0 wrote only that for
// `find … | xargs grep -l …`). Exit 1 is how these programs say "no lines selected" (POSIX grep); 2 is an error.
func noMatch(cmd, text string, exit *int) bool {
	if cmd == "" || exit != nil && *exit != 1 || len(text) > 80 { // nothing found prints nothing, or "Error"
		return false
	}
	for l := range strings.Lines(text) { // first: most failures print something, and this allocates nothing
		if l, ok := outputLine(l); ok && !strings.EqualFold(l, "error") {
			return false
		}
	}
	segs := splitSegments(normCmd(cmd))
	// a search fed by a test or build checks its output (`cargo test | grep -q "test result: ok"`): no match, it failed
	return len(segs) > 0 && searchStep(segs[len(segs)-1]) && !slices.ContainsFunc(segs[:len(segs)-1], isTestCmd)
}

// searchStep: the segment runs a searcher, itself or through xargs.
func searchStep(seg string) bool {
	f := skipPrefixWords(cmdFields(seg))
	for len(f) > 1 && (f[0] == "xargs" || strings.HasPrefix(f[0], "-")) {
		f = f[1:]
	}
	return len(f) > 0 && (slices.Contains(searchers, progName(f[0])) || f[0] == "git" && len(f) > 1 && f[1] == "grep")
}

var searchers = []string{"grep", "egrep", "fgrep", "rg", "ag", "ack"}

// toolKey keys a failing call without a command: the file it wrote, or the tool. Edit tools on one file are one
// target: Claude's "File has not been read yet" on an Edit, a MultiEdit and a Write is fixed by whichever later
// succeeds (a real 1.0.98 session listed six such failures as open).
func toolKey(tool, path string) string {
	if path != "" {
		return "file " + path
	}
	return strings.ToLower(tool)
}

// exceptionRE matches a line naming an error: "AssertionError: expected 42",
// "E   NameError: …" (pytest), "error[E0425]: …" (rustc), "panic: …".
var exceptionRE = lazyRE{expr: `^(E\s+)?([A-Za-z_][\w.]*(Error|Exception|Failure|Interrupt|Exit)|panic|fatal error|error(\[\w+\])?)(:|$)`}

// errorLine: the last exception line (a traceback's last, never its header), else the first diagnostic at a source
// location ("worker.go:42:3: loop variable captured", "thread 'main' panicked at src/pool.rs:88:9:": the compiler's,
// linter's or panic's own line, never a summary like "Found 2 errors." or "test x ... FAILED"), else the first with an
// error word, else the first. A line ending in ":" introduces its message: the next line is joined to it (Rust's
// "panicked at …:" then the assertion, Node's "Expected values to be strictly equal:" then the values).
func errorLine(text string) string {
	if strings.Contains(text, `{"`) && strings.Contains(text, `"message"`) {
		text = jsonErrorText(text)
	}
	lines, at := errorCandidates(text)
	if len(lines) == 0 {
		return ""
	}
	i := at[slices.IndexFunc(at[:], func(j int) bool { return j >= 0 })]
	l := strings.TrimSpace(strings.TrimPrefix(lines[i], "E "))
	if strings.Contains(l, "\t") { // testify aligns its fields with tabs: "Error:      \tNot equal:"
		l = strings.Join(strings.Fields(l), " ")
	}
	return clipEnds(withContext(l, lines, i, at), 160)
}

// clipEnds clips a long error line to its head and its last clause (after the last ": "), when that clause is short:
// kubectl's, terraform's and many validators' verdict closes the line, after the values it quotes ("The Deployment
// "api" is invalid: spec.selector: Invalid value: {…}: field is immutable"); a clause of words, not a value ("exit
// code: 2").
func clipEnds(s string, n int) string {
	k := strings.LastIndex(s, ": ")
	if len(s) <= n || k < 0 || len(s)-k > n/2 || !strings.Contains(strings.TrimSpace(s[k+2:]), " ") {
		return clip(s, n)
	}
	return clip(s[:k], n-(len(s)-k)-1) + s[k:]
}

// withContext joins the chosen line l (lines[i]) to the line that completes it.
func withContext(l string, lines []string, i int, at [5]int) string {
	next := ""
	if i+1 < len(lines) {
		next = lines[i+1]
	}
	switch {
	case at[0] >= 0 && !strings.Contains(l, ":") && at[3] >= 0 && at[3] != i:
		return lines[at[3]] + " — " + l // a bare "AssertionError": the line naming the test says more
	case strings.HasSuffix(l, ":") && next != "" && message(next):
		return l + " " + next
	case i == at[2] && labelled(l) && labelled(next):
		return l + ", " + next // Jest's "Expected: 42" over "Received: 41"
	}
	return l
}

// failureLine is errorLine, or what stopped the command when its output names no error: exit 124 is timeout(1)'s,
// 128+n the signal n's (137: SIGKILL, the kernel's out-of-memory killer or a hard limit). A run cut off prints
// whatever it was doing ("Epoch 1/3", "Killed"); the next agent must know it never finished, not fix "Epoch 1/3".
func failureLine(text string, exit *int) string {
	e := errorLine(text)
	if exit == nil || e != "" && errWorded(e) {
		return e
	}
	why, ok := stopSignals[*exit]
	if !ok {
		return e
	}
	why += " (exit " + strconv.Itoa(*exit) + ")"
	if l := lastOutput(text); l != "" {
		why += "; last output: " + clip(l, 100)
	}
	return why
}

// lastOutput: the last line of more than one word (the shell's own "Killed" is one) — what the run was doing.
func lastOutput(text string) string {
	lines := strings.Split(text, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l, ok := outputLine(lines[i]); ok && strings.Contains(l, " ") {
			return l
		}
	}
	return ""
}

var stopSignals = map[int]string{124: "timed out", 130: "interrupted (SIGINT)", 134: "aborted (SIGABRT)",
	137: "killed (SIGKILL: out of memory or a hard limit)", 139: "crashed (SIGSEGV)", 143: "terminated (SIGTERM)"}

// message: a line that can be a header's message — not a rule of dashes (no letter nor digit) nor a lesser
// severity's line (Maven's "[INFO] ----" under "[ERROR] COMPILATION ERROR :", rustc's "note: …").
func message(l string) bool {
	w, _, _ := strings.Cut(l, " ")
	return !(strings.ContainsAny(w, "[:") && lesser(w)) && strings.IndexFunc(l, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

// errorCandidates cleans the output's lines (in place: the hook folds every error row) and finds, in order of
// preference, the last exception line, the first diagnostic at a location, the first assertion, the first with an
// error word and the first line (-1: none). Only a line that may still be chosen is lower-cased.
func errorCandidates(text string) (lines []string, at [5]int) {
	at, lines = [5]int{-1, -1, -1, -1, -1}, strings.Split(text, "\n")
	n := 0
	for _, l := range lines {
		l, ok := outputLine(l)
		if !ok {
			continue
		}
		lines[n], n = l, n+1
		mark(&at, lines, n-1)
	}
	at[4] = min(0, n-1)
	return lines[:n], at
}

// mark records line i of lines in the candidates it is the first (the last exception: the newest) of.
func mark(at *[5]int, lines []string, i int) {
	l := lines[i]
	if laterException(l, lines, at[0]) {
		at[0] = i
	}
	if loc, opens := location(l); at[1] < 0 && loc && (opens || errWorded(l)) {
		at[1] = i
	}
	if at[3] == i-1 && strings.Trim(l, "^~ ") == "" { // a caret under it: the line was source code (Node's `throw new Error(…)`)
		at[3] = -1
	}
	if at[2] < 0 && assertion(l) {
		at[2] = i
	}
	if at[3] < 0 && errWorded(l) {
		at[3] = i
	}
}

// assertion: l states what a check expected against what it got — PHPUnit's "Failed asserting that 41 matches
// expected 42", JUnit's "expected:<42> but was:<41>", Mocha's "AssertionError [ERR_ASSERTION]: 41 == 42", Jest's
// "Expected: 42", pytest's "assert 41 == 42" — where no exception line or diagnostic says more than a runner's
// "There was 1 failure:" or "> Task :test FAILED". A count ("Assertions: 3") states nothing.
func assertion(l string) bool {
	if !containsAny(l, assertCues) {
		return false // no line to lower-case: most are not assertions
	}
	low := strings.ToLower(l)
	if i := strings.Index(low, "assert"); i >= 0 {
		return !strings.HasPrefix(low[i:], "assertions:")
	}
	i := strings.Index(low, "expected")
	return i == 0 || i > 0 && containsAny(low[i:], actualWords)
}

var assertCues = []string{"ssert", "xpect", "SSERT", "XPECT"}

// actualWords: what follows an expectation to state the actual value.
var actualWords = []string{" but ", "got", "received", "actual", "instead", "found"}

// labelled: l opens with a one-word label ("Received: 41").
func labelled(l string) bool {
	w, _, ok := strings.Cut(l, ":")
	return ok && w != "" && strings.IndexFunc(w, func(r rune) bool { return !unicode.IsLetter(r) }) < 0
}

// laterException: l names an error and replaces the one at i as the last, unless both are a compiler's.
func laterException(l string, lines []string, i int) bool {
	return (messageField(l) || mayNameError(l) && exceptionRE.get().MatchString(l)) && !(i >= 0 && compilerError(lines[i]) && compilerError(l))
}

// messageField: a test runner's labelled field whose value (on its line or the next) is the failure's message, not
// a name or a location: testify's "Error:  Not equal:", dotnet's "Error Message:" over xUnit's or NUnit's assertion,
// Jasmine's "Message:", RSpec's "Failure/Error:". One or two words of label, its last run of letters "error" or
// "message" ("Error Trace:" is a location).
func messageField(l string) bool {
	label, _, ok := strings.Cut(l, ":")
	if !ok || strings.Count(label, " ") > 1 || strings.ContainsAny(label, "\t([") {
		return false
	}
	w := label[strings.LastIndexFunc(label, func(r rune) bool { return !unicode.IsLetter(r) })+1:]
	return strings.EqualFold(w, "error") || strings.EqualFold(w, "message")
}

// compilerError: a compiler's "error: …" / "error[E0308]: …" line. Its first is the cause, a later one a summary
// ("error: could not compile `app` … due to 1 previous error"); a runtime's chained exceptions end with the one raised.
func compilerError(l string) bool { return strings.HasPrefix(l, "error") }

func errWorded(l string) bool { return containsAny(strings.ToLower(l), errWords) }

// location: a source location — "path.ext:line" (compilers, linters, panics), "path.ext(line,col)" (tsc, MSBuild)
// or "path.ext (line:col)" (Rollup, Vite) — stands in l, and opens it ("worker.go:42:3: …"); a diagnostic is one that
// opens its line or stands in a line with an error word — a stack frame ("at f (app.js:3:9)") is neither.
// A tag before it opens it too ("e: file:///app/Api.kt:5:15: …" kotlinc, "[error] Main.scala:5:15: …" sbt); a bare
// location ("test/room_test.exs:31", ExUnit's line under the test's name) opens nothing: the message is elsewhere.
func location(l string) (found, opens bool) {
	for j := strings.IndexAny(l, ":("); j > 0 && j+1 < len(l); j = nextAny(l, j, ":(") {
		start, ok := fileBefore(l, strings.TrimRight(l[:j], " "), j)
		if ok {
			bare := strings.Trim(l[j:], ":0123456789") == ""
			return true, !bare && (start == 0 || severityTag(l[:start]))
		}
	}
	return false, false
}

// severityTag: one short word before a location, "e:" or "[error]", that is no lesser severity ("w:", "[info]").
func severityTag(s string) bool {
	t := strings.Trim(strings.TrimSpace(s), "[]:")
	return len(t) > 0 && len(t) <= 7 && strings.IndexFunc(t, func(r rune) bool { return !unicode.IsLetter(r) }) < 0 && !lesser(t)
}

// lesser: w, without brackets and colon, names a lesser severity ("[INFO]", "note:").
func lesser(w string) bool {
	t := strings.Trim(w, "[]:")
	return slices.ContainsFunc(lesserSeverities, func(s string) bool { return strings.EqualFold(s, t) })
}

var lesserSeverities = []string{"w", "warn", "warning", "i", "info", "note", "hint", "v", "d", "debug"}

// fileBefore: the word ending head (l up to the ":" or "(" at j) is a file name with an extension ("pool.rs") and a
// line number follows j.
func fileBefore(l, head string, j int) (start int, ok bool) {
	start = strings.LastIndexAny(head, " \t(\"'`") + 1
	dot := strings.LastIndexByte(head[start:], '.')
	return start, digitFirst(l[j+1:]) && dot > 0 && start+dot+1 < len(head) && isLetter(head[start+dot+1])
}

// digitFirst: s starts with a line number, bracketed or not (javac through Maven: "App.java:[12,8]").
func digitFirst(s string) bool {
	s = strings.TrimPrefix(s, "[")
	return s != "" && s[0] >= '0' && s[0] <= '9'
}

// nextAny is the index of the next of chars after j, -1 when none.
func nextAny(l string, j int, chars string) int {
	if k := strings.IndexAny(l[j+1:], chars); k >= 0 {
		return j + 1 + k
	}
	return -1
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// outputLine cleans a line of output; !ok: it names no error (empty, an exit
// status, "Output:", "Wall time:", a traceback's header or frames).
func outputLine(l string) (string, bool) {
	l = strings.TrimSpace(stripWrapTags(l))
	if len(l) > 2 && l[0] == '[' && l[len(l)-1] == ']' {
		// Node brackets a thrown error: "[TypeError: generate is not a
		// function]" names it, "> Build error occurred" above does not.
		l = strings.TrimSpace(l[1 : len(l)-1])
	}
	if l == "" || (strings.Contains(l, "xit") || strings.Contains(l, "XIT")) && exitLine(l) || startsWithAnyPrefix(l, noErrorPrefixes) {
		return "", false
	}
	return l, true
}

var noErrorPrefixes = []string{"Output:", "Wall time:", "Traceback (most recent call last)", "File \""}

func causeSentence(text, low string) string {
	if !containsAny(low, causeMarkers.list()) {
		return ""
	}
	for _, s := range sentences(text) {
		if containsAny(strings.ToLower(s), causeMarkers.list()) {
			return clip(s, 200)
		}
	}
	return ""
}

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

var (
	jsonMessageRE = lazyRE{expr: `"message"\s*:\s*"((?:[^"\\]|\\.){1,300})"`}
	jsonCodeRE    = lazyRE{expr: `"code"\s*:\s*"?(\w{1,40})"?`}
	// wrapTagRE: "<tool_use_error>File has not been read yet…</tool_use_error>"
	wrapTagRE = lazyRE{expr: `^<([a-z][a-z0-9_-]*)>|</[a-z][a-z0-9_-]*>$`}
)

// jsonErrorText turns an error carrying a JSON body ("[API Error: {"error":{"code":400,…,"message":"…"}}]") into
// words: the text before it, the code and the message, never a JSON fragment.
func jsonErrorText(text string) string {
	m := jsonMessageRE.get().FindStringSubmatch(text)
	if m == nil {
		return text
	}
	msg := m[1]
	if u, err := strconv.Unquote(`"` + msg + `"`); err == nil {
		msg = u
	}
	head := strings.TrimSpace(strings.TrimLeft(text[:strings.Index(text, `{"`)], "[ "))
	head = strings.TrimSpace(strings.TrimSuffix(head, ":"))
	if c := jsonCodeRE.get().FindStringSubmatch(text); c != nil {
		msg = c[1] + " " + msg
	}
	if head != "" {
		return head + ": " + msg
	}
	return msg
}

func stripWrapTags(l string) string {
	if !strings.HasPrefix(l, "<") && !strings.HasSuffix(l, ">") {
		return l
	}
	return wrapTagRE.get().ReplaceAllString(strings.TrimSpace(l), "")
}

// mayNameError is exceptionRE's pre-check: a word the pattern needs.
func mayNameError(l string) bool {
	return containsAny(l, errorNames) || strings.HasPrefix(l, "panic") || strings.HasPrefix(l, "fatal error")
}

var errorNames = []string{"Error", "error", "Exception", "Failure", "Interrupt", "Exit"}

// segTool and segPaths split a segment key ("prog sub\tpath path").
func segTool(s string) string {
	t, _, _ := strings.Cut(s, "\t")
	return t
}

func segPaths(s string) []string {
	_, p, ok := strings.Cut(s, "\t")
	if !ok || p == "" {
		return nil
	}
	return strings.Fields(p)
}

// covers reports whether a passing segment ran the failing one's target:
// the same tool on the same paths, a superset, or everything ("./...", ".",
// or no path).
func covers(pass, fail string) bool {
	if segTool(pass) != segTool(fail) {
		return false
	}
	pp, fp := segPaths(pass), segPaths(fail)
	if !filtersIn(pp, fp) {
		return false
	}
	pp, fp = slices.DeleteFunc(pp, isFilterKey), slices.DeleteFunc(fp, isFilterKey)
	if len(fp) == 0 { // a verification over everything (`npx jest`) is not covered by one over a part (`jest src/cart`)
		return len(pp) == 0 || !isTestCmd(segTool(fail))
	}
	if len(pp) == 0 { // over everything counts for a verification (`pytest`), not `cat`
		return isTestCmd(segTool(pass))
	}
	for _, f := range fp {
		if !slices.ContainsFunc(pp, func(p string) bool { return coversPath(p, f) }) {
			return false
		}
	}
	return true
}

// filtersIn: a pass filtered by name (`jest cart`) ran the failure's target only if the failure had that filter too.
func filtersIn(pp, fp []string) bool {
	return !slices.ContainsFunc(pp, func(p string) bool { return isFilterKey(p) && !slices.Contains(fp, p) })
}

func isFilterKey(p string) bool { return p[0] == '?' }

// fewerTests: a pass of failure i's program ran fewer tests than the failed run (`jest --coverage cart` ran 14 of
// its 120): a part of it, whatever its key says (a boolean flag before a filter reads as the flag's value).
func (st *State) fewerTests(i int, pass []string, ran int) bool {
	return 0 < ran && ran < st.Failures[i].Tests && slices.ContainsFunc(strings.Split(st.FailureKeys[i], " && "), func(s string) bool {
		return slices.ContainsFunc(pass, func(p string) bool { return progOf(p) == progOf(s) })
	})
}

// dryRun keeps a passing dry run's result as an action item until its target passes without the flag: "would update
// 48,213 orders" is what the real run is to do, and the next agent must neither take it as done nor lose the numbers.
func (st *State) dryRun(cmd, out string) {
	dry := dryRunFlag(cmd)
	if !dry && !slices.ContainsFunc(st.Actions, func(a string) bool { return strings.HasPrefix(a, dryRunNote) }) {
		return
	}
	key := targetKey(cmd)
	st.Actions = slices.DeleteFunc(st.Actions, func(a string) bool {
		c, ok := strings.CutPrefix(a, dryRunNote)
		c, _, _ = strings.Cut(c, "` → ")
		return ok && !dry && targetKey(c) == key
	})
	if dry {
		a := dryRunNote + clip(oneLine(cmd), 120) + "` → " + clip(summaryLine(out), 160)
		st.addItems(&st.Actions, "a:", []string{a}, maxActions)
	}
}

const dryRunNote = "dry run only (ask before the real run): `"

// dryRunFlag: cmd has a flag that only reports what it would do (--dry-run, kubectl's --dry-run=server, -WhatIf,
// --noop, --simulate).
func dryRunFlag(cmd string) bool {
	for w := range strings.FieldsSeq(cmd) {
		name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if w[0] == '-' && slices.ContainsFunc(dryRunFlags, func(f string) bool { return strings.EqualFold(name, f) }) {
			return true
		}
	}
	return false
}

var dryRunFlags = []string{"dry-run", "dryrun", "dry_run", "whatif", "what-if", "noop", "no-op", "simulate"}

// summaryLine is an output's last line with a number in it (the counts a run sums up with), else its last line.
func summaryLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range slices.Backward(lines) {
		if strings.ContainsAny(l, "0123456789") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(lines[len(lines)-1])
}

// testCount is how many tests a run's output reports in its last 4 KB (where runners sum up): the largest "N total"
// (jest's "Tests: 2 failed, 118 passed, 120 total", dotnet's "Total: 58", RSpec's "120 examples", "Ran 42 tests"),
// else the sum of its passed, failed and errors ("1 failed, 41 passed"); 0 when it names none (go test, a build).
func testCount(out string) int {
	total, sum, prev := 0, 0, ""
	for w := range strings.FieldsSeq(out[max(0, len(out)-4096):]) {
		switch n, word := countPair(prev, w); {
		case slices.Contains(totalWords, word):
			total = max(total, n)
		case slices.Contains(countWords, word):
			sum += n
		}
		prev = w
	}
	return cmp.Or(total, sum)
}

// countPair reads two words as a count and what it counts: "41 passed," or "Total: 58".
func countPair(a, b string) (int, string) {
	if n, ok := number(a); ok {
		return n, strings.ToLower(strings.TrimRight(b, ",;.:"))
	}
	if n, ok := number(b); ok && strings.HasSuffix(a, ":") {
		return n, strings.ToLower(strings.TrimSuffix(a, ":"))
	}
	return 0, ""
}

// number is w's count ("120," too); digits first, as most words are none (Atoi's error allocates).
func number(w string) (int, bool) {
	w = strings.TrimRight(w, ",;.")
	if !digits(w) {
		return 0, false
	}
	n, err := strconv.Atoi(w)
	return n, err == nil
}

var (
	totalWords = []string{"total", "tests", "examples"}
	countWords = []string{"passed", "failed", "passing", "failing", "error", "errors"}
)

// otherFiles: pass (of command cmd) runs a program none of fail's segments ran (nor runs through it), on named files it does not write (a
// redirection's target, a writer's operands): `tsc --noEmit src/routes.tsx` after `npm run build` failed checked those
// files, not what the failure built.
func otherFiles(pass string, fail []string, cmd string) bool {
	tool := segTool(pass) // `python -m pytest` is "python pytest": pytest's
	if programWrites[progOf(pass)] != nil || slices.ContainsFunc(fail, func(s string) bool { return sharesWord(tool, segTool(s)) }) {
		return false
	}
	return slices.ContainsFunc(segPaths(pass), func(p string) bool {
		return !isFilterKey(p) && p != "." && p != "./..." && !strings.Contains(cmd, ">"+p) && !strings.Contains(cmd, "> "+p)
	})
}

// sharesWord: a and b have a word in common.
func sharesWord(a, b string) bool {
	for w := range strings.FieldsSeq(a) {
		for v := range strings.FieldsSeq(b) {
			if v == w {
				return true
			}
		}
	}
	return false
}

// selectsPart: a segment key with a filter or member key (`jest cart`, `cargo build -p api`).
func selectsPart(seg string) bool { return slices.ContainsFunc(segPaths(seg), isFilterKey) }

func coversPath(p, f string) bool {
	return p == f || p == "./..." || p == "." || strings.HasSuffix(p, "/...") && strings.HasPrefix(f, strings.TrimSuffix(p, "...")) ||
		strings.HasSuffix(p, "/") && strings.HasPrefix(f, p)
}

// resolveBy resolves failures whose segments cmd covers: all, the last (a
// chain stops at the failing step) or the verification; a passing
// verification also those whose files were edited since, unless it ran
// only a part of the failing one's target.
func (st *State) resolveBy(cmd, out string) {
	pass := strings.Split(targetKey(cmd), " && ")
	verify, part, fixed, ran := isTestCmd(cmd), false, false, 0
	if verify {
		ran = testCount(out)
	}
	for i := range st.Failures {
		if f := &st.Failures[i]; !f.Resolved && f.What != "model API" {
			p, x := st.fewerTests(i, pass, ran), false
			if !p {
				p, x = st.resolveOne(i, pass, cmd, verify)
			}
			part, fixed = part || p, fixed || x
		}
	}
	if (verify || fixed) && !part { // a part of an open failure's target is no pass of the work ("All tests pass now" then is a claim)
		st.LastPassSeq = st.Seq
	}
}

// resolveOne resolves failure i by the pass of cmd (keyed pass): part, it ran a part of the failure's target; fixed,
// it passed where the failure failed after an edit. A build that failed, was edited and now passes verified the edit,
// whatever the tool (`./gradlew assembleDebug`, `mix compile`): the evidence, not a list of verification commands.
func (st *State) resolveOne(i int, pass []string, cmd string, verify bool) (part, fixed bool) {
	f := &st.Failures[i]
	fail := strings.Split(st.FailureKeys[i], " && ")
	f.Resolved = segmentsCovered(pass, fail)
	if f.Resolved {
		return false, st.fixedByEdit(i)
	}
	if f.Resolved = missingProgram(f) && (verify && runsTests(f.What) == runsTests(cmd) || sameVerb(f.What, cmd)); f.Resolved {
		return false, false
	}
	if verify { // a pass of a selected part (a filter, a member, another program's named files) verifies no other command's whole
		part = partial(pass, fail) || slices.ContainsFunc(pass, func(p string) bool { return selectsPart(p) || otherFiles(p, fail, cmd) })
		f.Resolved = !part && st.editedAfter(f) && (!runsTests(f.What) || runsTests(cmd))
	}
	return part, false
}

// missingProgram: the shell found no such program (exit 127, "command not found"): the approach failed, not the work.
// A later pass doing the same with another program resolves it — `npm test` after `pnpm: command not found`, any
// passing test run after a missing test runner — rather than leaving the next agent to fix the missing tool.
func missingProgram(f *Failure) bool {
	return f.ExitCode != nil && *f.ExitCode == 127 || strings.Contains(f.Error, "command not found")
}

// sameVerb: pass runs fail's first argument, a verb, through another program (`pdm install` after `poetry install`).
func sameVerb(fail, pass string) bool {
	f, p := skipPrefixWords(cmdFields(fail)), skipPrefixWords(cmdFields(pass))
	return len(f) > 1 && len(p) > 1 && f[1] == p[1] && isLetter(f[1][0])
}

// fixedByEdit: failure i is a command that makes something (no read) and a file was edited after it.
func (st *State) fixedByEdit(i int) bool {
	f := &st.Failures[i]
	return st.workLeft(f) && st.editedSince(f.Seq)
}

// runsTests: cmd runs tests, not only a build or a linter: a failing test run is fixed by a test run after the edit,
// never by `yarn lint`, `cargo check` or `tsc` passing.
func runsTests(cmd string) bool { return matchWords(cmd, testRunners, true) }

var testRunners = []string{"test", "tests", "pytest", "unittest", "jest", "vitest", "mocha", "rspec", "ctest", "tox", "phpunit"}

// partial: the passing command ran a failing segment's own program on other or fewer paths (`pytest
// tests/test_models.py` after `pytest tests/` failed in two files) or another of its targets (`npm run lint` after
// `npm run build`): it verified something else, not the failure.
func partial(pass, fail []string) bool {
	return slices.ContainsFunc(fail, func(s string) bool {
		return slices.ContainsFunc(pass, func(p string) bool { return progOf(p) == progOf(s) && !covers(p, s) })
	})
}

func progOf(seg string) string { p, _, _ := strings.Cut(segTool(seg), " "); return p }

func segmentsCovered(pass, fail []string) bool {
	all := true
	for _, s := range fail {
		if !slices.ContainsFunc(pass, func(p string) bool { return covers(p, s) }) {
			all = false
		} else if len(fail) > 1 && s == fail[len(fail)-1] || isTestCmd(segTool(s)) {
			return true
		}
	}
	return all
}

// editedAfter: a file the failure named or wrote was edited after it; a
// failing verification concerns every file edited after it.
func (st *State) editedAfter(f *Failure) bool {
	test := isTestCmd(f.What)
	for _, e := range st.Edits {
		if e.Seq <= f.Seq {
			continue
		}
		if test || strings.Contains(f.What, e.Path) || strings.Contains(e.Path, "/") && strings.Contains(f.What, e.Path[strings.LastIndexByte(e.Path, '/')+1:]) {
			return true
		}
	}
	return false
}

type shellFile struct {
	path    string
	created bool
	deleted bool
}

var (
	// shellCues: what a command line that writes files contains.
	shellCues = []string{">", "mv ", "rm ", "cp ", "touch ", " -i", "tee ", "-o"}
	// programWrites: what a program's words (flags) and plain args write.
	programWrites = map[string]func(o *shellWrites, words, args []string){
		"git": func(o *shellWrites, _, args []string) {
			switch {
			case len(args) >= 3 && args[0] == "mv":
				o.add(args[1], false, true)
				o.add(args[2], true, false)
			case len(args) >= 2 && args[0] == "rm":
				o.addAll(args[1:], false, true)
			}
		},
		"mv": func(o *shellWrites, _, args []string) {
			if len(args) >= 2 {
				o.addAll(args[:len(args)-1], false, true)
				o.add(args[len(args)-1], true, false)
			}
		},
		"cp": func(o *shellWrites, _, args []string) {
			if len(args) >= 2 {
				o.add(args[len(args)-1], true, false)
			}
		},
		"rm":     func(o *shellWrites, _, args []string) { o.addAll(args, false, true) },
		"unlink": func(o *shellWrites, _, args []string) { o.addAll(args, false, true) },
		"touch":  func(o *shellWrites, _, args []string) { o.addAll(args, true, false) },
		"tee":    func(o *shellWrites, _, args []string) { o.addAll(args, true, false) },
		"sed":    inPlaceEdit,
		"perl":   inPlaceEdit,
	}
)

func shellFiles(cmd string) []shellFile {
	if !containsAny(cmd, shellCues) {
		return nil
	}
	var out shellWrites
	for _, line := range commandLines(cmd) {
		for _, seg := range splitSegments(line) {
			out.segment(seg)
		}
	}
	return out
}

type shellWrites []shellFile

// add records p unless it is no file (/dev/*, a variable or glob, .) or the
// command gave 8 already (rm -rf of a list).
func (o *shellWrites) add(p string, created, deleted bool) {
	p = strings.Trim(p, `'"`)
	if p == "" || strings.HasPrefix(p, "/dev/") || strings.ContainsAny(p, "$`*?{}&|<>") || p == "." || p == ".." || len(*o) >= 8 {
		return
	}
	*o = append(*o, shellFile{path: p, created: created, deleted: deleted})
}

func (o *shellWrites) addAll(ps []string, created, deleted bool) {
	for _, p := range ps {
		o.add(p, created, deleted)
	}
}

func (o *shellWrites) segment(seg string) {
	f := skipPrefixWords(shellWords(seg))
	for i := 0; i < len(f); i++ {
		target, skip := redirection(f, i)
		i += skip
		if target != "" {
			o.add(target, true, false)
		}
	}
	if len(f) == 0 {
		return
	}
	if w, ok := programWrites[f[0]]; ok {
		w(o, f[1:], plainArgs(f[1:]))
		return
	}
	o.outputFlag(f)
}

// redirection: the file word f[i] redirects to, and the words after it taken.
func redirection(f []string, i int) (string, int) {
	w := f[i]
	switch {
	case w == ">" || w == ">>" || w == ">|":
		if i+1 < len(f) {
			return f[i+1], 1
		}
	case strings.HasPrefix(w, ">>") && !strings.HasPrefix(w, ">>&"):
		return w[2:], 0
	case strings.HasPrefix(w, ">") && !strings.HasPrefix(w, ">&"):
		return w[1:], 0
	case strings.HasPrefix(w, "1>"):
		return strings.TrimPrefix(strings.TrimPrefix(w, "1>>"), "1>"), 0
	}
	return "", 0
}

func (o *shellWrites) outputFlag(f []string) {
	for i := 1; i+1 < len(f); i++ {
		if f[i] == "-o" || f[i] == "--output" || f[i] == "--out" {
			if p := f[i+1]; strings.Contains(p, ".") {
				o.add(p, true, false)
			}
		}
	}
}

// inPlaceEdit: sed -i / perl -i edit the files after the script.
func inPlaceEdit(o *shellWrites, words, args []string) {
	if inPlace(words) && len(args) >= 2 {
		o.addAll(args[1:], false, false)
	}
}

func commandLines(cmd string) []string {
	var out []string
	var end string
	for _, l := range strings.Split(cmd, "\n") {
		if end != "" {
			if strings.TrimSpace(l) == end {
				end = ""
			}
			continue
		}
		if i := strings.Index(l, "<<"); i >= 0 && !strings.HasPrefix(l[i:], "<<<") {
			// "<<-'EOF' > file": the delimiter is the next word; a redirection after it counts.
			rest := strings.Fields(strings.TrimLeft(l[i+2:], "-~ "))
			if len(rest) > 0 {
				if t := strings.Trim(rest[0], `'"`); t != "" {
					end = t
				}
				rest = rest[1:]
			}
			l = l[:i] + " " + strings.Join(rest, " ")
		}
		out = append(out, l)
	}
	return out
}

func plainArgs(f []string) []string {
	var out []string
	for i := 0; i < len(f); i++ {
		a := f[i]
		if strings.HasPrefix(a, ">") || strings.HasPrefix(a, "1>") || strings.HasPrefix(a, "2>") || strings.HasPrefix(a, "<") {
			if a == ">" || a == ">>" || a == "2>" || a == "<" {
				i++
			}
			continue
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		out = append(out, a)
	}
	return out
}

func inPlace(f []string) bool {
	return slices.ContainsFunc(f, func(a string) bool {
		return a == "-i" || strings.HasPrefix(a, "-i.") || strings.HasPrefix(a, "--in-place") || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "i") && strings.Contains(a, "p"))
	})
}

// completed: the closing paragraph reports the work done, nothing failing.
func completed(text string) bool {
	p := strings.ToLower(closingParagraph(text))
	if p == "" || !hasPhrase(p, "completion") || goesOn(p) {
		return false
	}
	return !containsAny(p, []string{"fail", "error", "still ", "not yet", "blocked", "couldn't", "could not", "unable"})
}

// goesOn: a closing paragraph (lower-cased) states a next step: "Done. Next I will add the retry test.", "Next step: …".
func goesOn(p string) bool {
	return labelledNext(p) != "" || slices.ContainsFunc(sentences(p), forwardLooking)
}

// closingParagraph: the last prose paragraph outside code fences, at most
// its last 600 bytes, quoted verbatim as the last words.
func closingParagraph(text string) string {
	var paras [][]string
	var cur []string
	for l := range outsideFences(strings.TrimSpace(text)) {
		if t := strings.TrimSpace(l); t != "" {
			cur = append(cur, t)
		} else if len(cur) > 0 {
			paras, cur = append(paras, cur), nil
		}
	}
	if len(cur) > 0 {
		paras = append(paras, cur)
	}
	if len(paras) == 0 {
		return ""
	}
	return lastParagraph(paras)
}

// lastParagraph joins the last paragraph; a one-line label ("Next steps:")
// belongs with what follows, a closing list with the sentence opening it.
func lastParagraph(paras [][]string) string {
	last := paras[len(paras)-1]
	if len(paras) > 1 && (len(last) == 1 && strings.HasSuffix(last[0], ":") || listLine(last[0])) {
		last = append(append([]string(nil), paras[len(paras)-2]...), last...)
	}
	out := strings.Join(last, "\n")
	if len(out) > 600 {
		out = clip(out[len(out)-600:], 600)
		if i := strings.IndexAny(out, " \n"); i >= 0 && i < 40 {
			out = "…" + out[i:]
		}
	}
	return out
}

func listLine(l string) bool {
	if strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "* ") || strings.HasPrefix(l, "• ") {
		return true
	}
	i := 0
	for i < len(l) && l[i] >= '0' && l[i] <= '9' {
		i++
	}
	return i > 0 && i < len(l) && (l[i] == '.' || l[i] == ')')
}

// labelledNext is the action a line labelled "Next:" ("Remaining:",
// "Nächster Schritt:", "下一步："; lang/ next) states: the rest of the line,
// or the first item below a bare label; "" when none.
func labelledNext(text string) string {
	lines := strings.Split(text, "\n")
	found := ""
	for i, l := range lines {
		t := strings.Trim(strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "-*#> ")), "*_")
		low := strings.ToLower(t)
		for _, p := range phrases("next") {
			if at := labelEnd(low, p); at >= 0 {
				if rest := labelRest(t[at:], lines[i+1:]); rest != "" {
					found = rest
				}
				break
			}
		}
	}
	return found
}

func labelRest(after string, below []string) string {
	rest := strings.TrimSpace(strings.Trim(strings.TrimSpace(after), "*_"))
	if rest != "" {
		return rest
	}
	for _, n := range below {
		if n = strings.TrimSpace(n); n != "" {
			return strings.TrimSpace(questionPrefixRE.get().ReplaceAllString(n, ""))
		}
	}
	return ""
}

// labelEnd is where a label closing with phrase p ends: p itself opening low, or ("What I'd do next:", "Mi
// propuesta, siguiente paso:") at most 5 words, then p at a word boundary before anything else; -1 otherwise ("I
// don't know what we should try next: …" is eight words, no label).
func labelEnd(low, p string) int {
	i := strings.Index(low, p)
	switch {
	case i < 0:
		return -1
	case i == 0:
		return len(p)
	}
	head := low[:i]
	if c := head[len(head)-1]; c != ' ' && c < 0x80 {
		return -1 // "context:" is not "next:"
	}
	if t := strings.TrimRight(head, " "); strings.ContainsAny(t[len(t)-1:], ".!?") {
		return i + len(p) // "… are in and tested. Still to do: the logging": the label opens a sentence
	}
	if i > 60 || strings.ContainsAny(head, ".!?:;") || len(strings.Fields(head)) > 5 {
		return -1
	}
	return i + len(p)
}

// remainingItems: the list the last message closes on when its opening line
// says they remain ("Three things remain before the merge:", "Noch offen:";
// lang/ remaining), the first the next action.
func remainingItems(text string) []string {
	lines := strings.Split(closingParagraph(text), "\n")
	for i, l := range lines {
		if !strings.HasSuffix(strings.TrimSpace(l), ":") || !hasPhrase(strings.ToLower(l), "remaining") {
			continue
		}
		var items []string
		for _, it := range lines[i+1:] {
			if !listLine(strings.TrimSpace(it)) {
				break
			}
			items = append(items, strings.TrimSpace(questionPrefixRE.get().ReplaceAllString(strings.TrimSpace(it), "")))
		}
		return items
	}
	return nil
}

// parsePlan reads a plan tool's input: a JSON list, or an object holding one.
func parsePlan(text string) ([]PlanItem, bool) {
	i := strings.IndexAny(text, "[{")
	if i < 0 {
		return nil, false
	}
	var v any
	if json.Unmarshal([]byte(text[i:]), &v) != nil {
		return planItemsClipped(text[i:])
	}
	if m, ok := v.(map[string]any); ok {
		for _, k := range []string{"todos", "plan", "items", "steps", "tasks"} {
			if l, ok := m[k]; ok {
				v = l
				break
			}
		}
	}
	l, ok := v.([]any)
	if !ok {
		return nil, false
	}
	var out []PlanItem
	for _, e := range l {
		it := planItem(e)
		if it.Text = clip(oneLine(it.Text), 200); it.Text != "" {
			out = append(out, it)
		}
		if len(out) == maxPlan {
			break
		}
	}
	return out, true
}

func planItem(e any) PlanItem {
	var it PlanItem
	switch x := e.(type) {
	case string:
		it.Text = x
	case map[string]any:
		for _, k := range []string{"content", "step", "description", "title", "text", "task"} {
			if s, ok := x[k].(string); ok && s != "" {
				it.Text = s
				break
			}
		}
		st, _ := x["status"].(string)
		done, _ := x["completed"].(bool)
		done2, _ := x["done"].(bool)
		it.Done = done || done2 || doneStatus[strings.ToLower(st)]
	}
	return it
}

var (
	doneStatus       = map[string]bool{"completed": true, "done": true, "complete": true, "cancelled": true}
	planFieldRE      = lazyRE{expr: `"(content|step|description|title|text|task|status)"\s*:\s*"((?:[^"\\]|\\.)*)"`}
	questionPrefixRE = lazyRE{expr: `^(\d+[.)]\s*|[-*•]\s*)`}
	// todoLineRE: TODO/FIXME/XXX/HACK as a whole upper-case word at a line's
	// start or after a comment marker, then ":", "(", "-" or a lower-case
	// word ("# TODO App Project", a heading, is none).
	todoLineRE = lazyRE{expr: `^\s*(?:[+]\s*)?(?://+|#+|--|/\*+|\*|<!--|;+|%|")?\s*\b(TODO|FIXME|XXX|HACK)\b(?:\([^)]*\))?(?:\s*[:\-–]\s*|\s+(\p{Ll}))(.*)$`}
)

// planItemsClipped reads a plan whose JSON was clipped (adapters keep 2 KB
// of a call's input): each complete object's text and status, in order.
func planItemsClipped(text string) ([]PlanItem, bool) {
	var out []PlanItem
	for _, obj := range strings.Split(text, "{")[1:] {
		if !strings.Contains(obj, "}") {
			break // the clipped last object
		}
		var it PlanItem
		for _, m := range planFieldRE.get().FindAllStringSubmatch(obj, -1) {
			var v string
			if json.Unmarshal([]byte(`"`+m[2]+`"`), &v) != nil {
				continue
			}
			if m[1] == "status" {
				it.Done = doneStatus[strings.ToLower(v)]
			} else if it.Text == "" {
				it.Text = clip(oneLine(v), 200)
			}
		}
		if it.Text != "" {
			out = append(out, it)
		}
		if len(out) == maxPlan {
			break
		}
	}
	return out, len(out) > 0
}

func todoLines(text string) []string {
	if !containsAny(text, []string{"TODO", "FIXME", "XXX", "HACK"}) {
		return nil
	}
	var out []string
	for _, l := range strings.Split(text, "\n") {
		m := todoLineRE.get().FindStringSubmatch(l)
		if m == nil {
			continue
		}
		rest := strings.TrimSpace(m[2] + m[3])
		rest = strings.TrimSuffix(strings.TrimSuffix(rest, "*/"), "-->")
		if rest = strings.TrimSpace(rest); rest == "" {
			continue
		}
		out = append(out, m[1]+": "+clip(rest, 120))
	}
	return out
}

func forwardLooking(s string) bool {
	if strings.ContainsAny(s, quoteOpeners) {
		s = dropQuoted(s) // a quoted message ("« je vais redémarrer »") looks ahead for its author, not the agent
	}
	low := strings.ToLower(s)
	return (matchWords(s, nextPhrases(), false) || containsAny(low, nextMarkers.list()) || endsNext(s)) && !asksUser(low)
}

// asksUser: the sentence embeds a question (lang/ wh: "Tell me what to tackle next", "Dis-moi quoi faire ensuite")
// and announces nothing of the agent's own (lang/ intent): the next step is the user's to choose, not the agent's.
func asksUser(low string) bool {
	return matchWords(low, whWords.list(), true) && !containsAny(low, intentMarkers.list())
}

func boilerplate(s string) bool { return containsAny(strings.ToLower(s), boilerplateMarkers.list()) }

// forwardOnly keeps the turn's forward-looking sentences that are neither
// questions nor offers: what an acknowledgement leaves standing.
func forwardOnly(texts []string) []string {
	var out []string
	for _, t := range texts {
		for _, s := range sentences(t) {
			if forwardLooking(s) && !isQuestion(s) && !boilerplate(s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// prose: at least three words, mostly letters or spaces, not a path, command or code.
func prose(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasPrefix(s, "`") || strings.HasPrefix(s, "{") || strings.HasPrefix(s, "$ ") || strings.HasPrefix(s, "|") {
		return false
	}
	letters, other := 0, 0
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsSpace(r) {
			letters++
		} else {
			other++
		}
	}
	return letters >= 2*other && promptSize(s) >= 3
}

func doneText(s string, plan []PlanItem) bool {
	low := strings.ToLower(strings.TrimRight(s, ".!。"))
	return slices.ContainsFunc(plan, func(p PlanItem) bool {
		return p.Done && strings.Contains(low, strings.ToLower(strings.TrimRight(p.Text, ".!。")))
	})
}

func turnQuestions(texts []string) []string {
	var out []string
	for _, t := range texts {
		for _, s := range sentences(t) {
			if isQuestion(s) && !boilerplate(s) && prose(s) {
				out = append(out, clip(questionPrefixRE.get().ReplaceAllString(s, ""), 200))
			}
		}
	}
	return Dedupe(out)
}

// questionsInto fills the open questions (the turn's own, what still fails,
// the edits' to-dos) and returns the failure that is work left, if any.
func (st *State) questionsInto(h *Handoff, todos []string) *Failure {
	h.Questions = turnQuestions(st.TurnTexts)
	var failing *Failure
	for i := range h.Failures {
		f := &h.Failures[i]
		if f.Resolved || f.Declined || f.What == "model API" {
			continue
		}
		if failing == nil && (isTestCmd(f.What) || f.Seq > st.LastTextSeq) {
			// Only a verification, or what failed after the agent last spoke,
			// is work left: an exploratory `stat -f` it went past is not.
			failing = f
		}
		q := "unresolved: `" + clip(f.What, 80) + "`"
		if f.Error != "" {
			q += " — " + clipEnds(f.Error, 100)
		}
		h.Questions = append(h.Questions, clipEnds(q, 160)) // the handoff clips its bullets at 160
	}
	h.Questions = append(append(h.Questions, st.backgroundQuestions()...), Dedupe(todos)...)
	return failing
}

// declineFailures marks the open failures the user's words turn down: a sentence opening with an imperative negation
// ("don't fix the lint errors", "do not rerun the migration", "не трогай линтер") that names the failure's target —
// its subcommand, program or a file — or a decline ("no", "leave it", "lass es") answering the agent's question that
// named it ("The lint step fails too — should I fix that?"). The failure stays listed, not as work to redo.
// A later request naming a declined failure's target without a negation ("now fix the lint errors in legacy too")
// makes it work again.
func (st *State) declineFailures(text string) {
	if !st.openWork() {
		return
	}
	for s := range clauses(strings.ToLower(text)) {
		st.ruleOn(s, st.declineScope(s))
	}
}

// ruleOn: a clause s declining scope (not "") declines the open failures it names; one negating nothing asks again
// for the declined failures it names.
func (st *State) ruleOn(s, scope string) {
	for i := range st.Failures {
		if f := &st.Failures[i]; !f.Resolved && (scope != "" || f.Declined && !negates(s)) {
			f.Declined = f.Declined != namesAny(cmp.Or(scope, s), failureTerms(st.FailureKeys[i], f.Error))
		}
	}
}

// negates: low holds a negation ("not", "n't", a lang/ negation): it asks for nothing it names.
func negates(low string) bool {
	return containsAny(low, []string{"n't", "n’t"}) || anyTerm(low, func(w string) bool {
		pre, post := negationAt(w)
		return pre || post
	})
}

// clauses yields low's sentences, cut at . ! ? ; and line ends, without allocating (declineFailures reads every prompt
// while a failure is open).
func clauses(low string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for low != "" {
			i := strings.IndexAny(low, ".!?;\n。！？")
			if i < 0 {
				i = len(low)
			}
			if s := strings.TrimSpace(low[:i]); s != "" && !yield(s) {
				return
			}
			_, w := utf8.DecodeRuneInString(low[min(i, len(low)):])
			low = low[min(i+w, len(low)):]
		}
	}
}

// declineScope: the words a declining sentence low turns down — its own, or the offer a bare "no" answers; "" for none.
func (st *State) declineScope(low string) string {
	if !startsWithAny(low, declineStarts.list()) {
		if prohibits(stripLeadingAcks(low)) {
			return low
		}
		return ""
	}
	if qs := turnQuestions(st.TurnTexts); len(qs) > 0 {
		return strings.ToLower(qs[len(qs)-1])
	}
	return ""
}

// ruling: an instruction's sentence, lower-cased, that prohibits a step (no) or asks for what it names, negating nothing.
type ruling struct {
	s  string
	no bool
}

// prohibitions: the task's instructions' rulings in order ("Don't run the e2e tests, there is no browser here"); none
// unless a failure is open. A failure whose target the last ruling naming it prohibits (declinedBy) ran against the
// user's word and is no work to redo — the instruction given before it or after — unless a later one asks for it.
func (st *State) prohibitions() []ruling {
	if !st.openWork() {
		return nil
	}
	var out []ruling
	for _, in := range st.Instructions {
		for _, s := range sentences(strings.ToLower(in.Text)) {
			if no := prohibits(stripLeadingAcks(s)); no || !negates(s) {
				out = append(out, ruling{s, no})
			}
		}
	}
	return out
}

func declinedBy(rs []ruling, key, errLine string) bool {
	if !slices.ContainsFunc(rs, func(r ruling) bool { return r.no }) {
		return false
	}
	terms := failureTerms(key, errLine)
	for i := len(rs) - 1; i >= 0; i-- {
		if namesAny(rs[i].s, terms) {
			return rs[i].no
		}
	}
	return false
}

// openWork: a failure is open, or declined, that is more than a read (the `cat` of a missing file the agent went
// past); a declined one may be asked for again.
func (st *State) openWork() bool {
	for i, f := range st.Failures {
		if !f.Resolved && f.What != "model API" && makes(st.FailureKeys[i]) {
			return true
		}
	}
	return false
}

// prohibits: low opens with an imperative negation ("don't", "do not", "never", a lang/ negation: "не", "não") or a
// declining verb ("skip", "ignore"); a negation of such a verb ("don't forget to run the migrations", "never skip the
// e2e run") asks for the step instead.
func prohibits(low string) bool { _, ok := prohibited(low); return ok }

// prohibited is prohibits with the word the negation turns down, the one past it ("don't push" → "push"); "" after a
// declining verb, whose object follows ("skip the e2e run").
func prohibited(low string) (verb string, ok bool) {
	w, rest, _ := strings.Cut(strings.TrimSpace(low), " ")
	first := strings.Trim(w, ",.;:!?")
	if first == "do" && firstWord(rest) == "not" {
		_, rest, _ = strings.Cut(strings.TrimSpace(rest), " ")
		return firstWord(rest), !slices.Contains(prohibitWords[2:], firstWord(rest))
	}
	if _, neg := negationAt(first); neg || strings.HasSuffix(first, "n't") || strings.HasSuffix(first, "n’t") || slices.Contains(prohibitWords[:2], first) {
		return firstWord(rest), first != "" && !slices.Contains(prohibitWords[2:], firstWord(rest))
	}
	return "", slices.Contains(prohibitWords[2:], first)
}

func firstWord(s string) string {
	w, _, _ := strings.Cut(strings.TrimSpace(s), " ")
	return strings.Trim(w, ",.;:!?")
}

// prohibitWords: imperatives that turn a step down; the verbs among them ("ignore the lint errors") after a negation
// ask for it instead.
var prohibitWords = []string{"never", "dont", "ignore", "skip", "forget"}

// failureTerms: the words naming a failure's target — its subcommand (the program when it has none), its paths and
// filters, the files its error names — split into words of 3+ letters, without runner verbs ("run", "exec") nor test
// runners' words: "don't change the tests" and "never add sleeps to the test" constrain the fix of a failing
// `pytest tests/test_login.py`, they do not decline it; "don't bother with the login tests" names it.
func failureTerms(key, errLine string) []string {
	var terms []string
	for _, w := range targetWords(key, errLine) {
		anyTerm(strings.ToLower(w), func(t string) bool {
			if len(t) >= 3 && !slices.Contains(runners, t) && !slices.Contains(testRunners, t) {
				terms = append(terms, t)
			}
			return false // every term
		})
	}
	return terms
}

// targetWords: a failure key's subcommands (programs when none), paths and filters, and the paths its error names.
func targetWords(key, errLine string) []string {
	var src []string
	for _, seg := range strings.Split(key, " && ") {
		tool := strings.Fields(segTool(seg))
		src = append(append(src, tool[min(1, len(tool)-1):]...), segPaths(seg)...)
	}
	for _, w := range strings.Fields(errLine) {
		if strings.ContainsAny(w, "/.") {
			src = append(src, w)
		}
	}
	return src
}

// namesAny: a word of low is one of terms or shares its stem ("migration" names migrate, "tests" test, "linter" lint).
func namesAny(low string, terms []string) bool {
	return anyTerm(low, func(w string) bool {
		return slices.ContainsFunc(terms, func(t string) bool { return sameStem(w, t) })
	})
}

func sameStem(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return a == b || len(a) >= 4 && strings.HasPrefix(b, a) || len(a) >= 5 && a[:5] == b[:5]
}

func (st *State) backgroundQuestions() []string {
	var out []string
	for _, b := range st.Background {
		out = append(out, "started in the background, maybe still running: `"+clip(b, 80)+"` — check before starting it again")
	}
	return out
}

// noteBackground records a command the harness or the shell ran in the background — a trailing "&", nohup, or the
// harness's "running in background" result (Claude Code's run_in_background) — and forgets them all on a kill (a
// KillShell call, `kill`, `pkill`): a dev server the agent started may still hold its port when the next one starts.
func (st *State) noteBackground(c Call, result string) {
	cmd := strings.TrimSpace(c.Command)
	first, _, _ := strings.Cut(cmd, " ")
	if strings.Contains(c.ToolName, "Kill") || strings.Contains(c.ToolName, "kill") || slices.Contains(killers, first) {
		st.Background = nil
	} else if cmd != "" && backgrounded(cmd, first, result) {
		st.Background = last(append(st.Background, oneLine(strings.TrimSuffix(cmd, "&"))), maxBackground)
		if _, id, ok := strings.Cut(result, "in background with ID: "); ok {
			id, _, _ = strings.Cut(id, ".")
			st.Shells = last(append(st.Shells, strings.TrimSpace(id)+"\t"+cmd), maxBackground)
		}
	}
}

// shellCommand is call r's command, or for a read of a background shell (r.Text its id) the command that started it.
func (st *State) shellCommand(r *ledger.Row) string {
	for _, s := range st.Shells {
		if id, cmd, _ := strings.Cut(s, "\t"); r.Command == "" && r.FilePath == "" && id == r.Text {
			return cmd
		}
	}
	return r.Command
}

// shellEnded: a read of a background shell reporting its exit code ended its command, which runs no longer.
func (st *State) shellEnded(r *ledger.Row) {
	if c := st.Calls[callKey(r)]; r.ExitCode != nil && c.Command != "" {
		st.Background = slices.DeleteFunc(st.Background, func(b string) bool { return b == oneLine(c.Command) })
	}
}

// running: a result saying its command runs on in the background (started, or read while running): no pass yet.
func running(text string) bool {
	return strings.Contains(text, "in background with ID") || strings.Contains(text, "<status>running</status>")
}

func backgrounded(cmd, first, result string) bool {
	return strings.HasSuffix(cmd, "&") && !strings.HasSuffix(cmd, "&&") || first == "nohup" || strings.Contains(result, "in background")
}

var killers = []string{"kill", "pkill", "killall"}

const maxBackground = 3

// addToolResult folds a successful result, unless its exit status is not the verification's: a test run piped into
// tail or grep, or followed by `; echo`, exits with the last program's status, and its output is the evidence. A run
// whose output reports a failure ("--- FAIL", "FAILED tests/…", "1 failed") is a failure with no exit code, never a
// pass that resolves the earlier one.
func (st *State) addToolResult(r *ledger.Row, at time.Time) {
	c := st.Calls[callKey(r)]
	if r.ExitCode == nil && c.Command != "" && running(r.Text) {
		if callKey(r) == st.PendingCall {
			st.PendingCall = ""
		}
		st.noteBackground(c, r.Text)
		return
	}
	st.shellEnded(r)
	if !maskedTest(c.Command) || !failureReportRE.get().MatchString(r.Text) {
		st.addResultRow(r)
		return
	}
	r2 := *r
	r2.ExitCode = nil
	st.addErrorRow(&r2, at)
}

// maskedTest: a segment of cmd before its last runs tests and the last does not (`go test ./... 2>&1 | tail -5`).
func maskedTest(cmd string) bool {
	if !strings.ContainsAny(cmd, "|;\n") || !isTestCmd(cmd) { // only a pipe or a sequence masks a status
		return false
	}
	segs := splitSegments(normCmd(cmd))
	n := len(segs) - 1
	if n < 1 || !slices.ContainsFunc(segs[:n], isTestCmd) {
		return false
	}
	k, ok := segmentKey(segs[n]) // echo, or a reader whose pattern names tests (`grep -E "test result|FAILED"`)
	return !ok || reads(segTool(k)) || !isTestCmd(segs[n])
}

// failureReportRE: a test runner's line reporting a failure — "--- FAIL", "FAIL src/…", "FAILED tests/…", "ERROR",
// a compiler's "error:", "panic:", a traceback, or a count of failures above zero ("1 failed", "Failures: 2").
var failureReportRE = lazyRE{expr: `(?m)^\s*(?:---\s*|●\s*)?(?:FAIL(?:ED|URE)?|ERROR)\b|^\s*(?:error(?:\[\w+\])?:|panic:|Traceback \(most recent call last\))|(?i:\b[1-9]\d*\s+(?:failed|failing|failures?|errors?)\b|\b(?:failures|errors|failed)\s*[:=]\s*[1-9])`}

// leftFailure: the newest of fs that is work left (workLeft), nil for none.
func (st *State) leftFailure(fs []Failure) *Failure {
	for i := range fs {
		if f := &fs[i]; !f.Resolved && !f.Declined && st.workLeft(f) {
			return f
		}
	}
	return nil
}

// workLeft: f is a failed command that makes or changes something — an install, a migration, a deploy, a build —
// and no read: left unresolved, it is to resolve and re-run. A read the agent went past (`cat`, `ls`, `git show`,
// a probe with curl) is no work, nor a tool's error (an edit the harness refused is retried by the tool), nor a
// failure saying what it makes is already there (madeAlready).
func (st *State) workLeft(f *Failure) bool {
	i := slices.IndexFunc(st.Failures, func(g Failure) bool { return g.Seq == f.Seq })
	return i >= 0 && strings.Contains(st.FailureKeys[i], "\t") && makes(st.FailureKeys[i]) && !madeAlready(f)
}

// madeAlready: f's error says that a thing its command names already exists ("mkdir: cannot create directory
// 'dist': File exists", createdb's 'database "shop_dev" already exists'). A migration's 'column "archived" …
// already exists' names no word of `alembic upgrade head`: the migration is work left.
func madeAlready(f *Failure) bool {
	low := strings.ToLower(f.Error)
	_, args, _ := strings.Cut(strings.ToLower(f.What), " ")
	return containsAny(low, existsMarkers) && slices.ContainsFunc(strings.Fields(args), func(w string) bool {
		return len(w) >= 3 && strings.Contains(low, w)
	})
}

var existsMarkers = []string{"file exists", "already exists", "eexist"}

// makes: a segment of command key k does more than read.
func makes(k string) bool {
	for k != "" {
		var seg string
		seg, k, _ = strings.Cut(k, " && ")
		if !reads(segTool(seg)) {
			return true
		}
	}
	return false
}

// reads: a segment's program and subcommand only read (files, the repository, a URL, the environment).
func reads(tool string) bool {
	prog, sub, _ := strings.Cut(tool, " ")
	return slices.Contains(readers, prog) || slices.Contains(searchers, prog) || prog == "git" && slices.Contains(gitReads, sub)
}

var (
	readers = []string{"cat", "ls", "stat", "head", "tail", "find", "file", "wc", "which", "whereis", "type", "tree", "du", "df",
		"readlink", "realpath", "pwd", "printenv", "ps", "lsof", "less", "more", "diff", "cmp", "od", "xxd", "jq", "sed", "awk",
		"sort", "uniq", "cut", "tr", "curl", "wget", "ping", "nc", "test", "[", "sleep", "date", "uname", "id", "whoami", "fd", "bat"}
	gitReads = []string{"status", "log", "show", "diff", "blame", "ls-files", "rev-parse", "branch", "remote", "config", "describe", "cat-file", "reflog"}
)

func (st *State) nextAction(h Handoff, failing *Failure) (string, string) {
	in := nextIn{h: &h, failing: failing, left: st.leftFailure(h.Failures)}
	for _, p := range st.Plan {
		if !p.Done {
			in.remaining = p.Text
			break
		}
	}
	for _, r := range nextRules {
		if n, ok := r.next(st, &in); ok {
			return st.askIfRefused(n), r.name
		}
	}
	return "", ""
}

// askIfRefused marks a next action naming a step the user turned down since their last request (two content words
// shared with a refused call or declined offer): a Codex session announced "Next I'll upgrade pandas to 2.2", which the
// user had declined in the Claude session before it, and the next session was told to do it. A request after the
// refusal ("ok, run it now") lifts it. A refused command's path counts by its words: `rm -rf tests/integration` is
// "drop the integration tests".
func (st *State) askIfRefused(n string) string {
	req := st.TaskRef
	if st.Latest != "" {
		req = st.LatestRef
	}
	if strings.HasPrefix(n, "Ask the user") {
		return n
	}
	for _, r := range slices.Backward(st.Refused) {
		if len(r.Refs) > 0 && !refBefore(r.Refs[0], req) && sharedLinks(n, strings.ReplaceAll(refusedWhat(r.Text), "/", " ")) >= 2 {
			return n + " — the user turned this down before (" + clip(oneLine(r.Text), 100) + "): ask first"
		}
	}
	if t := st.toldNot(n); t != "" {
		return n + " — the user said: " + clip(oneLine(t), 100) + ": ask first"
	}
	return n
}

// toldNot is the user's clause prohibiting the verb that next action n names ("don't push
// anything, I want to review the diff first" for "Next I'll push feat/paginate"), unless n quotes the clause (a request
// "No rush, but add paging" is none) or a newer instruction names the verb without a negation ("ok, push it"); "" for
// none.
func (st *State) toldNot(n string) string {
	for i, in := range slices.Backward(st.Instructions) {
		for s := range clauses(in.Text) {
			if v := prohibitedVerb(strings.ToLower(s)); v != "" && hasTerm(n, v) && !strings.Contains(n, s) && !slices.ContainsFunc(st.Instructions[i+1:], func(l Note) bool {
				return hasTerm(l.Text, v) && !negates(strings.ToLower(l.Text))
			}) {
				return s
			}
		}
	}
	return ""
}

// prohibitedVerb is the word a prohibiting clause turns down ("don't push", "never deploy"), of 4+ letters: "run" or
// "add" alone names no step; "" for none.
func prohibitedVerb(s string) string {
	if v, ok := prohibited(stripLeadingAcks(s)); ok && utf8.RuneCountInString(v) >= 4 {
		return v
	}
	return ""
}

func refBefore(a, b Ref) bool {
	return a.Session < b.Session || a.Session == b.Session && a.Seq < b.Seq
}

func sharedLinks(a, b string) int {
	n, wb := 0, linkWords(b)
	for w := range linkWords(a) {
		if wb[w] {
			n++
		}
	}
	return n
}

// nextIn: the handoff so far, the failure that is work left, the newest failed command that made something and the
// first open plan item.
type nextIn struct {
	h             *Handoff
	failing, left *Failure
	remaining     string
}

var nextRules = []struct {
	name string
	next func(st *State, in *nextIn) (string, bool)
}{
	{"unanswered request", (*State).nextUnanswered},
	{"interruption", (*State).nextInterruption},
	{"plan", (*State).nextOwnPlan},
	{"turn cut short", (*State).nextCutShort},
	{"labelled next", (*State).nextLabelled},
	{"remaining items", func(st *State, _ *nextIn) (string, bool) {
		if items := remainingItems(st.LastText); len(items) > 0 {
			return items[0], true
		}
		return "", false
	}},
	{"forward-looking sentence", (*State).nextForward},
	{"plan", func(_ *State, in *nextIn) (string, bool) { // an earlier agent's, the last stating no step of its own
		return in.remaining, !in.h.Completed && in.remaining != ""
	}},
	{"completion", (*State).nextCompletion},
	{"refusal", func(st *State, _ *nextIn) (string, bool) {
		if len(st.Refused) == 0 {
			return "", false
		}
		// The harness told the agent to wait for the user: ask, do not redo.
		return "Ask the user how to proceed: they refused " + st.Refused[len(st.Refused)-1].Text, true
	}},
	{"still failing", (*State).nextFailing},
	{"announced step", (*State).nextAnnounced},
	{"open question", func(st *State, _ *nextIn) (string, bool) {
		if qs := turnQuestions(st.TurnTexts); len(qs) > 0 {
			return "Get the user's answer: " + qs[len(qs)-1], true
		}
		return "", false
	}},
	{"action item", func(_ *State, in *nextIn) (string, bool) { // a prose session's newest commitment
		if acts := in.h.Actions; len(acts) > 0 {
			return acts[len(acts)-1], true
		}
		return "", false
	}},
	// a failed install, migration or build the agent went on from, nothing since resolving nor superseding it
	{"failed command left", func(_ *State, in *nextIn) (string, bool) { return failedNext(in.left) }},
}

func (st *State) nextUnanswered(in *nextIn) (string, bool) {
	if later := st.laterAskLeft(); later != "" {
		return "Do what the request asked next: " + oneLine(later), true
	}
	if st.Answered || st.Prompts == 0 {
		return "", false
	}
	req := cmp.Or(in.h.Latest, in.h.Task)
	return "Answer the latest request: " + oneLine(req), req != ""
}

// nextCutShort: the agent's tools ran on the newest request but it never spoke after it (the session ended on a rate
// limit, an API error or a closed terminal mid-turn): the request is unfinished, and its words from an earlier turn
// ("Retry-After is set") are stale as a next step. A stop, a still-failing command or a pass in the turn has its own
// rule (a silent edit-then-green run is a finished fix).
func (st *State) nextCutShort(in *nextIn) (string, bool) {
	quiet := st.LastCallSeq > st.AskSeq && max(st.LastTextSeq, st.StopSeq, st.LastPassSeq) < st.AskSeq
	if !quiet || in.h.Completed || in.failing != nil {
		return "", false
	}
	req := cmp.Or(in.h.Latest, in.h.Task)
	return "Finish the latest request (the turn ended before the agent reported on it): " + oneLine(req), req != ""
}

func (st *State) nextInterruption(in *nextIn) (string, bool) {
	if in.h.Interrupted == "" {
		return "", false
	}
	n := "The user interrupted: " + in.h.Interrupted + " — ask before resuming it"
	if in.remaining != "" {
		n += "; remaining: " + in.remaining
	}
	return n, true
}

// nextOwnPlan: the plan's first open item unless another session's agent
// spoke last: its stated step comes first (a Claude → Codex → Gemini chain
// hands over Gemini's last step, not Claude's plan).
func (st *State) nextOwnPlan(in *nextIn) (string, bool) {
	if st.LastTextRef.Session != 0 && st.PlanSession != 0 && st.LastTextRef.Session != st.PlanSession {
		return "", false
	}
	return in.remaining, in.remaining != ""
}

func (st *State) nextLabelled(*nextIn) (string, bool) {
	if n := labelledNext(st.LastText); n != "" && prose(n) && !st.refusedText(n) {
		return n, true
	}
	return "", false
}

func (st *State) nextForward(*nextIn) (string, bool) {
	texts := st.TurnTexts
	if len(texts) == 0 && st.LastText != "" {
		texts = []string{st.LastText}
	}
	n := st.forwardSentence(texts)
	return n, n != ""
}

// nextAnnounced: the agent's closing words announce its own step ("Sure — I'll add an `export` subcommand") and no
// tool call came after them: the step is still to take. One it went on to call was taken (LastCallSeq).
func (st *State) nextAnnounced(*nextIn) (string, bool) {
	if st.LastTextSeq <= st.LastCallSeq || st.LastTextSeq < st.AskSeq || !containsAny(" "+strings.ToLower(st.LastText), intentMarkers.list()) {
		return "", false
	}
	next := ""
	for _, s := range sentences(st.LastText) {
		if announces(" "+strings.ToLower(s)) && !isQuestion(s) && !boilerplate(s) && prose(s) && !st.refusedText(s) {
			next = s
		}
	}
	return next, next != ""
}

// announces: low holds an intent marker outside quotes and its step is not negated ("I will not push until you
// review"). A quoted log line or message ("le log dit « je vais redémarrer dans 5 s »") announces nothing of the agent's.
func announces(low string) bool {
	if strings.ContainsAny(low, quoteOpeners) {
		low = dropQuoted(low)
	}
	return containsAny(low, intentMarkers.list()) && !negatedStep(low)
}

// dropQuoted: s without the spans between a quote and its closing one (an unclosed quote keeps its rest).
func dropQuoted(s string) string {
	var b strings.Builder
	for s != "" {
		i := strings.IndexAny(s, quoteOpeners)
		if i < 0 {
			break
		}
		open, w := utf8.DecodeRuneInString(s[i:])
		j := strings.IndexRune(s[i+w:], quoteCloser[open])
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		s = s[i+w+j+utf8.RuneLen(quoteCloser[open]):]
	}
	b.WriteString(s)
	return b.String()
}

const quoteOpeners = `"«“„「`

var quoteCloser = map[rune]rune{'"': '"', '«': '»', '“': '”', '„': '“', '「': '」'}

// negatedStep: a negation (lang/ negation) among a sentence's first four words, where a step's subject, auxiliary
// and negation stand ("I will not…", "Ich werde sie nicht…", "Je ne vais pas…", "Я не буду…"): the sentence says
// what the agent will not do, no next step. A negation later in the clause ("…so that it does not fail") keeps it,
// and so does one whose clause closes before the step ("No problem, I'll add…", "No — I'll run it"): the lists
// hold every language's words, so Spanish "no" is also English "No".
func negatedStep(s string) bool {
	words, neg := strings.Fields(s), false
	for _, w := range words[:min(4, len(words))] {
		core := strings.TrimRight(w, clauseEnds)
		if _, post := negationAt(strings.TrimLeft(core, clauseEnds)); post {
			neg = true
		}
		if core != w || core == "" {
			neg = false // its clause closes here
		}
	}
	return neg
}

const clauseEnds = ",.;:!?—–-、。，！？" // what closes a clause, CJK marks too

func (st *State) nextCompletion(in *nextIn) (string, bool) {
	if !in.h.Completed {
		return "", false
	}
	n := "Done; nothing in progress"
	if acts := in.h.Actions; len(acts) > 0 {
		n += " — left, as it said: " + acts[len(acts)-1]
	}
	return n, true
}

func (st *State) nextFailing(in *nextIn) (string, bool) { return failedNext(in.failing) }

func failedNext(f *Failure) (string, bool) {
	if f == nil {
		return "", false
	}
	n := "Fix the still-failing `" + clip(f.What, 120) + "`"
	if _, diag := location(f.Error); !isTestCmd(f.What) && !diag { // an install, a migration, a deploy: what it needs may be outside the code
		n = "Resolve, then re-run, the failed `" + clip(f.What, 120) + "`"
	}
	if f.Error != "" {
		n += " (now: " + clipEnds(f.Error, 120) + ")"
	}
	return n, true
}

// forwardSentence: the last forward-looking sentence ("Next I will …"), not
// a question, an offer, a done plan item or a refused call.
func (st *State) forwardSentence(texts []string) string {
	var next string
	for _, t := range texts {
		ss := sentences(t)
		for i, s := range ss {
			if !forwardLooking(s) || boilerplate(s) || isQuestion(s) || doneText(s, st.Plan) || negatedStep(s) {
				continue
			}
			if strings.HasSuffix(s, ":") && i+1 < len(ss) { // a heading: its first item is the action
				s = questionPrefixRE.get().ReplaceAllString(ss[i+1], "")
			}
			if prose(s) && !doneText(s, st.Plan) && !st.refusedText(s) {
				next = s
			}
		}
	}
	return next
}

func (st *State) refusedText(s string) bool {
	return slices.ContainsFunc(st.Refused, func(r Note) bool { w := refusedWhat(r.Text); return len(w) >= 6 && strings.Contains(s, w) })
}

// reasonMark opens the user's own reason in a refused call's note: "git push -f (their reason: use a revert)".
const reasonMark = " (their reason: "

// refusedWhat is a refused note without the user's reason: what was refused.
func refusedWhat(t string) string { w, _, _ := strings.Cut(t, reasonMark); return w }

// refusalReason: the user's own words a harness quotes in a refused call's result, after its label (Claude Code's
// "To tell you how to proceed, the user said:", Copilot CLI's "User feedback:"); "" when the user gave none.
func refusalReason(text string) string {
	low := strings.ToLower(text)
	for _, label := range []string{"the user said:", "user feedback:"} {
		if i := strings.Index(low, label); i >= 0 {
			return strings.TrimSpace(text[i+len(label):])
		}
	}
	return ""
}
