// Package distill turns ledger rows into a handoff: what the task was, which files changed, what failed, what was
// decided and what to do next. It is deterministic: no model, no network, no clock but the one passed in.
//
// This file: the Handoff, the shared text helpers, the phrase tables of lang/, and the state's blob, its refresh from
// the ledger and the repository facts. state.go: the fold (State.Add), the handoff read out of it, and its rules — over
// what people wrote (goal, decisions, instructions, references) and over the work (failures, shell-written files,
// completion, next action). Two files because a Stop runs code in every file of the fold (issue 23's footprint).
package distill

import (
	"embed"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"math/bits"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill/git"
	"github.com/carryover/carryover/publish/redact"
)

// Handoff is the distilled state of a project's recent work.
type Handoff struct {
	Tool      string // agent that wrote the newest row
	Session   string // its native session id
	SessionID int64  // ledger id
	Task      string // the goal: the request that set the work
	TaskAt    time.Time
	Latest    string // the latest request, when it is not the goal
	LatestAt  time.Time
	SetAside  []string // goals an explicit switch abandoned, oldest first
	Plan      []PlanItem
	Files     []File
	MoreFiles int // beyond the 10 listed (a session whose subagents wrote 26 shows 10 and "+16 more")
	Failures  []Failure
	Questions []string
	Decisions []string
	Next      string
	Done      []string // completed steps (successful edits and commands, newest last)
	Refs      []string // URLs, documents, people and dates named as sources
	Actions   []string // commitments and to-dos stated in prose
	Test      string   // the test or build command last run
	// The task's condensed instructions other than the goal and latest request, oldest first.
	Instructions []string
	Refused      []string // tool calls the user refused: never redo without asking
	Interrupted  string   // what the user interrupted, when the work stopped there
	LastWords    string   // the closing paragraph of the last assistant message, verbatim (trimmed)
	Completed    bool     // the last assistant message reports completion with nothing failing after
	Ended        string   // how the session ended (EndOf: interrupted, refused, compaction, prompt, limit, api, done, asked; "" unknown)
	NextRule     string   // the rule that chose Next, for explain
	Evidence     []Evidence
	Tokens       Tokens
	Git          Git
	LastAt       time.Time // newest row
	Rows         int       // rows considered
	Prompts      int
}

// Evidence is why a handoff line is there (carryover explain).
type Evidence struct {
	Section, Text, Rule string
	Refs                []Ref
}

// Ref names the ledger row a fact came from.
type Ref struct{ Session, Seq int64 }

// Note is a fact with its time and evidence rows.
type Note struct {
	Text string
	At   time.Time
	Refs []Ref
}

// PlanItem is one step of the agent's own plan.
type PlanItem struct {
	Text string
	Done bool
}

// File is a file the session wrote.
type File struct {
	Path        string // relative to the project when inside it
	At          time.Time
	Created     bool
	Deleted     bool
	FailedAfter bool   // a test/build command failed after the last edit
	Git         string // "modified", "untracked", "deleted", "clean" or "" (unknown)
	Ref         Ref    // the row of the last write
}

// Failure is a failing command or tool error, repeated attempts collapsed.
type Failure struct {
	What     string   // the command, or the tool name
	Error    string   // the line naming the newest error
	Errors   []string // distinct error lines of the attempts, oldest first (Error last)
	Cause    string   // the session's explanation, when it gave one
	ExitCode *int
	Count    int
	Resolved bool // a later success on the same target
	At       time.Time
	// Superseded: completion was reported after it with nothing failing since (left behind, not work left).
	Superseded bool
	Declined   bool  // the user's words turned its fix or re-run down ("don't touch the lint errors"): no work left
	Tests      int   // how many tests the failing run reported (testCount), 0 when it named none
	Seq        int64 // position of the newest attempt in the fold
	Refs       []Ref // the error rows (the first and the newest)
}

// Tokens is the context fill the agent last reported.
type Tokens struct{ Used, Max int64 }

// Pct is Used as a percentage of Max (0 when unknown).
func (t Tokens) Pct() int {
	if t.Max <= 0 {
		return 0
	}
	return int(t.Used * 100 / t.Max)
}

// Git is the repository's state; counts are of the files the session touched.
type Git struct {
	Branch, Head                        string // Head: short hash
	Modified, Untracked, Deleted, Clean int
	Repo                                bool
}

// Options tunes Distill.
type Options struct {
	Project string // for relative paths
}

// Distill folds rows (oldest first) into a new State: the hook path keeps one per project.
func Distill(rows []ledger.Row, o Options) Handoff {
	Distillations.Add(1)
	st := NewState()
	for i := range rows {
		st.Add(&rows[i])
	}
	return st.Handoff(o)
}

// wordRune is the class `[\p{L}\p{N}'-]`.
func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || r == '\'' || r == '-'
}

// promptWords is what `[\p{L}\p{N}'-]+` found; an invalid UTF-8 byte ends a word.
func promptWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !wordRune(r) })
}

func cjk(r rune) bool { // scripts written without spaces, where a word count means little
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

func cjkString(s string) bool { return strings.IndexFunc(s, cjk) >= 0 }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// collapseSpace replaces each run of ASCII white space (`\s`) with one space, as `\s+` did.
func collapseSpace(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\f', '\r':
			if !space {
				b.WriteByte(' ')
			}
			space = true
		default:
			b.WriteByte(c)
			space = false
		}
	}
	return b.String()
}

func normCmd(s string) string { return strings.TrimSpace(collapseSpace(s)) }
func oneLine(s string) string { return clip(normCmd(s), 160) }

// clip is redact.Clip: no partial word (no half secret) survives a cut.
func clip(s string, n int) string { return redact.Clip(s, n) }

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// startsWithAnyPrefix is startsWithAny for markers that end in a space or are CJK.
func startsWithAnyPrefix(t string, ms []string) bool {
	return slices.ContainsFunc(ms, func(m string) bool { return strings.HasPrefix(t, m) })
}

// lazyRE is a regexp compiled at first use (most hook events publish nothing;
// compiling all cost ~0.5 ms); a package-level lazyRE{expr} is static data.
type lazyRE struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

func (l *lazyRE) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}

var (
	// testCmds, nextPhrases and exitLine: the patterns nearly every Stop ran, as plain code (compiling them cost each
	// process ~0.25 ms); FuzzTestCmd, FuzzForwardLooking and FuzzExitLine prove them equal to the regexps.
	testCmds = []string{"test", "tests", "pytest", "unittest", "jest", "vitest", "mocha", "rspec", "go test", "go build", "go vet", "cargo test",
		"cargo build", "cargo check", "npm test", "npm build", "npm run test", "npm run build", "yarn test", "yarn build", "pnpm test",
		"pnpm build", "make", "tsc", "mvn", "gradle", "ctest", "tox", "phpunit", "build", "lint", "check"}
	// testWords: the cheap pre-check (it runs on every command).
	testWords = []string{"test", "build", "make", "lint", "check", "tsc", "mvn", "gradle", "tox", "jest", "mocha", "rspec", "phpunit", "vet"}
	// nextPhrases: `next,? (i|we)(…)|(i|we)('ll| will) next|next step|then (i|we)(…)|next up|after that,? (i|we)(…)|…`.
	nextPhrases = sync.OnceValue(func() []string { // lazy: no distill code runs at start-up
		return slices.Concat(cross([]string{"next ", "next, "}, []string{"i", "we"}, []string{"'ll", " will", " should", " need to", " plan to"}),
			cross([]string{"i", "we"}, []string{"'ll next", " will next"}),
			cross([]string{"then "}, []string{"i", "we"}, []string{"'ll", " will", " need to", " should", " have to"}),
			cross([]string{"after that ", "after that, "}, []string{"i", "we"}, []string{"'ll", " will", " need to"}),
			[]string{"next step", "next up", "remaining:", "todo:", "still need to", "the plan is"})
	})
	// errWords make a line of error output meaningful (lower-cased, anywhere: "fail" matches "FAILED").
	errWords = []string{"error", "fail", "cannot", "can't", "not found", "no such", "denied", "exception", "traceback",
		"panic", "fatal", "invalid", "refused", "undefined", "missing"}
	decisionRE = lazyRE{expr: `(?i)\b(we|i|let's|let us)\b[^.!?\n]{0,40}\b(decided|decide|chose|choose|will use|'ll use|are going with|am going with|go with|settled on|opted|picked|prefer)\b|\binstead of\b|\bdecision:`}
	// decisionWords: decisionRE's pre-check; a text without any is not split
	// into sentences (the hook path distills hundreds of rows per snapshot).
	decisionWords = []string{"decid", "chose", "choose", "will use", "'ll use", "going with", "go with", "settled", "opted", "picked", "prefer", "instead of", "decision"}
)

// cross is every concatenation of one string from each part, in order.
func cross(parts ...[]string) []string {
	out := []string{""}
	for _, part := range parts {
		var next []string
		for _, o := range out {
			for _, p := range part {
				next = append(next, o+p)
			}
		}
		out = next
	}
	return out
}

func isTestCmd(cmd string) bool {
	return containsAny(strings.ToLower(cmd), testWords) && matchWords(cmd, testCmds, true) && (!containsAny(cmd, containerProgs) || matchWords(unwrapped(cmd), testCmds, true))
}

// matchWords is `(?i)\b(pats…)` (tail: `…\b`) for lower-case ASCII pats.
func matchWords(s string, pats []string, tail bool) bool {
	for i := 0; i < len(s); i++ {
		for _, p := range pats {
			if c := s[i]; (c >= 0x80 || c|0x20 == p[0]) && wordEdge(s, i) {
				if j := foldAt(s, i, p); j >= 0 && (!tail || wordEdge(s, j)) {
					return true
				}
			}
		}
	}
	return false
}

// wordEdge is regexp's \b before s[i]: a word character on one side only.
func wordEdge(s string, i int) bool {
	return (i > 0 && syntax.IsWordChar(rune(s[i-1]))) != (i < len(s) && syntax.IsWordChar(rune(s[i])))
}

// foldAt matches ASCII pat at s[i:] as (?i) does (simple folding: ſ is s, K
// is k) and returns the end, or -1.
func foldAt(s string, i int, pat string) int {
	for k := range len(pat) {
		_, n := utf8.DecodeRuneInString(s[i:])
		if !strings.EqualFold(s[i:i+n], pat[k:k+1]) {
			return -1
		}
		i += n
	}
	return i
}

// exitLine is `(?i)^(error: )?(exit code:? -?\d+|process exited with code -?\d+|command failed.*exit code.*)$`.
func exitLine(l string) bool {
	if j := foldAt(l, 0, "error: "); j >= 0 { // no alternative starts "er"
		l = l[j:]
	}
	return exitStatus(l)
}

func exitStatus(s string) bool {
	for _, p := range [...]string{"exit code: ", "exit code ", "process exited with code "} {
		if j := foldAt(s, 0, p); j >= 0 {
			return digits(strings.TrimPrefix(s[j:], "-"))
		}
	}
	for j := foldAt(s, 0, "command failed"); j >= 0 && j < len(s) && !strings.Contains(s, "\n"); j++ {
		if foldAt(s, j, "exit code") >= 0 {
			return true
		}
	}
	return false
}

func mayDecide(low string) bool { return containsAny(low, decisionWords) }

// sentences splits prose into sentences, dropping code fences and bullets' markers.
func sentences(text string) []string {
	var out []string
	for line := range outsideFences(text) {
		if t := strings.TrimSpace(line); t != "" {
			out = lineSentences(out, strings.TrimLeft(t, "-*#> "))
		}
	}
	return out
}

// outsideFences yields text's lines outside ``` code fences, the fence lines too left out.
func outsideFences(text string) iter.Seq[string] {
	return func(yield func(string) bool) {
		inFence := false
		for l := range strings.SplitSeq(text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				inFence = !inFence
			} else if !inFence && !yield(l) {
				return
			}
		}
	}
}

func lineSentences(out []string, t string) []string {
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	start := 0
	for i := 0; i < len(t); i++ {
		if cjkStop(t, i) { // no space after a CJK full stop: a Chinese reply is several sentences
			add(t[start : i+3])
			start = i + 3
			i += 2
			continue
		}
		if sentenceEnd(t, i, start) {
			add(t[start : i+1])
			start = i + 1
		}
	}
	add(t[start:])
	return out
}

// cjkStop reports a CJK full stop (。！？) at t[i].
func cjkStop(t string, i int) bool {
	if c := t[i]; c != 0xE3 && c != 0xEF {
		return false
	}
	w := t[i:]
	return strings.HasPrefix(w, "。") || strings.HasPrefix(w, "！") || strings.HasPrefix(w, "？")
}

// sentenceEnd: '.', '!' or '?' before a space or the end, not the dot of "e.g. " or a version.
func sentenceEnd(t string, i, start int) bool {
	c := t[i]
	if c != '.' && c != '!' && c != '?' || i+1 < len(t) && t[i+1] != ' ' {
		return false
	}
	return c != '.' || i == 0 || i-start >= 4
}

func summaryTask(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "Summary:"); i >= 0 {
		s = strings.TrimSpace(s[i+len("Summary:"):])
	}
	return clip(oneLine(s), 400)
}

func relPath(project, p string) string {
	if project != "" && filepath.IsAbs(p) {
		if r, err := filepath.Rel(project, p); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
	}
	return p
}

func callKey(r *ledger.Row) string { return r.Tool + "\x00" + r.CallID }

// createsFile: the agent's file-creating tool (descriptor's CreateTools) or an apply_patch "Add File".
func createsFile(r *ledger.Row) bool {
	return adapters.CreatesFile(r.ToolName) || strings.Contains(r.Text, "*** Add File:")
}

// Warm parses lang/ (BenchmarkPhrases) on the hook's second goroutine, so
// it overlaps I/O; every fold reads it.
func Warm() { phrases("") }

// Dedupe: in trimmed, without blanks and repeats, first-seen order (distill and resume).
func Dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		s = strings.TrimSpace(s)
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func last[T any](s []T, n int) []T {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// keepFirst bounds s to n elements: the first and the newest n-1.
func keepFirst[T any](s []T, n int) []T {
	if len(s) > n {
		return append(s[:1:1], s[len(s)-n+1:]...)
	}
	return s
}

// Phrase tables are data: lang/<language>.txt, [list] headings over one lower-case phrase a line (TestLangFiles
// checks the case); a rule reads a list merged across languages, so a language is one file. Parsed at first use (Warm
// on the hook path), never at init.
//
//go:embed lang/*.txt
var langFS embed.FS

var (
	langOnce  sync.Once
	langLists map[string][]string
)

func phrases(list string) []string {
	langOnce.Do(func() { langLists = parseLangs() })
	return langLists[list]
}

// parseLangs counts each list's phrases, then fills one backing array in file
// order: no slice grows (BenchmarkPhrases: 322 allocations, 95 KB before; 135, 64 KB).
func parseLangs() map[string][]string {
	ents, _ := langFS.ReadDir("lang")
	texts, size, total := make([]string, len(ents)), make(map[string]int, 48), 0
	for i, e := range ents {
		b, _ := langFS.ReadFile("lang/" + e.Name())
		texts[i] = string(b)
		list, n := "", 0
		for l, t := langLine(texts[i]); l != ""; l, t = langLine(t) {
			if h, ok := langHeading(l); ok {
				size[list] += n
				list, n = h, 0
			} else {
				n, total = n+1, total+1
			}
		}
		size[list] += n
	}
	all, out := make([]string, total), make(map[string][]string, len(size))
	for list, n := range size {
		out[list], all = all[:0:n], all[n:]
	}
	for _, t := range texts {
		list, ps := "", out[""]
		for l, t := langLine(t); l != ""; l, t = langLine(t) {
			if h, ok := langHeading(l); ok {
				out[list], list = ps, h
				ps = out[list]
			} else if list != "" {
				ps = append(ps, strings.ReplaceAll(l, "␣", " ")) // a space the phrase needs at its edge (", not ")
			}
		}
		out[list] = ps
	}
	delete(out, "")
	return out
}

// langLine is text's next line that is neither blank nor a # comment, trimmed.
func langLine(text string) (l, rest string) {
	for text != "" {
		l, text, _ = strings.Cut(text, "\n")
		if l = strings.TrimSpace(l); l != "" && l[0] != '#' {
			return l, text
		}
	}
	return "", ""
}

func langHeading(l string) (list string, ok bool) {
	list, open := strings.CutPrefix(l, "[")
	list, closed := strings.CutSuffix(list, "]")
	return list, open && closed
}

// containsPhrase: a plain substring (for lists with their own punctuation, like contrast's ", not ").
func containsPhrase(low, list string) bool { return containsAny(low, phrases(list)) }

// hasPhrase: one of the list's phrases in low as whole words ("sin" is not
// in "using"), or anywhere for CJK phrases.
func hasPhrase(low, list string) bool {
	return slices.ContainsFunc(phrases(list), func(p string) bool { return phraseAt(low, p) >= 0 })
}

// phraseAt is the index of p in low as whole words, or -1.
func phraseAt(low, p string) int {
	i := strings.Index(low, p)
	if i < 0 || p[0] >= 0x80 && cjkString(p) {
		return i // absent (the common case, one search), or CJK: no word boundaries
	}
	first, _ := utf8.DecodeRuneInString(p)
	last, _ := utf8.DecodeLastRuneInString(p)
	for off := 0; off <= len(low); {
		i := strings.Index(low[off:], p)
		if i < 0 {
			return -1
		}
		i += off
		before, _ := utf8.DecodeLastRuneInString(low[:i])
		after, _ := utf8.DecodeRuneInString(low[i+len(p):])
		if (i == 0 || !wordRune(first) || !wordRune(before) || cjk(before)) &&
			(i+len(p) == len(low) || !wordRune(last) || !wordRune(after) || cjk(after)) {
			return i
		}
		off = i + 1
	}
	return -1
}

// phraseName names a lang/ list; a constant, so nothing runs at start-up.
type phraseName string

func (n phraseName) list() []string    { return phrases(string(n)) }
func (n phraseName) has(w string) bool { return slices.Contains(phrases(string(n)), w) }

// ContextLevel is how full a session's context window is.
type ContextLevel string

const (
	ContextOK        ContextLevel = "OK"
	ContextEarlyWarn ContextLevel = "EARLY_WARN"
	ContextWarn      ContextLevel = "WARN"
	ContextCritical  ContextLevel = "CRITICAL"
)

// Thresholds are the context levels' lower bounds in percent of the window.
type Thresholds struct {
	EarlyWarn, Warn, Critical int
}

// DefaultThresholds: Claude Code auto-compacts at about 92 % (87k of a 100k
// test window), so CRITICAL at 85 leaves one more turn and the handoff.
var DefaultThresholds = Thresholds{EarlyWarn: 65, Warn: 75, Critical: 85}

// Valid reports whether the thresholds rise strictly within 1..100.
func (t Thresholds) Valid() bool {
	return t.EarlyWarn > 0 && t.EarlyWarn < t.Warn && t.Warn < t.Critical && t.Critical <= 100
}

// Rank orders levels: OK ("" too) 0 … CRITICAL 3.
func (l ContextLevel) Rank() int {
	return map[ContextLevel]int{ContextEarlyWarn: 1, ContextWarn: 2, ContextCritical: 3}[l]
}

// Level of used tokens out of window, and the percentage (floor, at most 100). used: what the model was last sent
// (input + cache + output of the latest response), not the transcript's size; window 0 (unknown) is OK.
func Level(used, window int64, t Thresholds) (ContextLevel, int) {
	if !t.Valid() {
		t = DefaultThresholds
	}
	if window <= 0 || used <= 0 {
		return ContextOK, 0
	}
	pct := int(min(used*100/window, 100))
	switch {
	case pct >= t.Critical:
		return ContextCritical, pct
	case pct >= t.Warn:
		return ContextWarn, pct
	case pct >= t.EarlyWarn:
		return ContextEarlyWarn, pct
	}
	return ContextOK, pct
}

// QualityFields are the facts a handoff's coverage report scores, in
// display order (as ntm's QualityReport and clauditor's): coverage, never truth.
var QualityFields = []string{"goal", "latest request", "files", "failures", "decisions", "next action", "test command", "git state"}

// Quality is a handoff's coverage: Score is Filled/Of in percent.
type Quality struct {
	Score   int      `json:"score" yaml:"score"`
	Filled  int      `json:"filled" yaml:"filled"`
	Of      int      `json:"of" yaml:"of"`
	Missing []string `json:"missing,omitempty" yaml:"missing,omitempty"`
}

// Quality scores h. The goal counts as the latest request when no later one
// is shown; a test command seen covers failures (tests that ran green).
func (h Handoff) Quality() Quality {
	have := map[string]bool{
		"goal":           h.Task != "",
		"latest request": h.Task != "" || h.Latest != "",
		"files":          len(h.Files) > 0,
		"failures":       len(h.Failures) > 0 || h.Test != "",
		"decisions":      len(h.Decisions) > 0,
		"next action":    h.Next != "",
		"test command":   h.Test != "",
		"git state":      h.Git.Repo,
	}
	q := Quality{Of: len(QualityFields)}
	for _, f := range QualityFields {
		if have[f] {
			q.Filled++
		} else {
			q.Missing = append(q.Missing, f)
		}
	}
	q.Score = q.Filled * 100 / q.Of
	return q
}

// String is "quality 75% (6/8; missing: decisions, git state)".
func (q Quality) String() string {
	s := fmt.Sprintf("quality %d%% (%d/%d", q.Score, q.Filled, q.Of)
	if len(q.Missing) > 0 {
		s += "; missing: " + strings.Join(q.Missing, ", ")
	}
	return s + ")"
}

// Distillations counts Refresh and Distill calls: tests check that one hook
// event or manual handoff distils once (nothing re-parsed from markdown).
var Distillations atomic.Int64

// MaxFold is the most new rows Refresh folds into a stored state; past it
// (a cold ingest) the state is rebuilt from the project's recent rows.
const MaxFold = 5000

// Refresh folds the rows added since the project's stored state was saved into it, or rebuilds it from recent rows
// when none, stale or too far behind, and saves it. notes are for the log.
func Refresh(l *ledger.Ledger, project string, now time.Time) (st *State, notes []string, err error) {
	Distillations.Add(1)
	sessions, err := l.ProjectSessions(project)
	if err != nil {
		return nil, nil, err
	}
	raw, seqs, version, ok := l.LoadState(project)
	st, fresh := LoadState(raw)
	if !ok || !fresh || pendingRows(sessions, seqs) > MaxFold {
		st, seqs, err = rebuild(l, project, sessions)
	} else {
		err = foldNew(l, st, sessions, seqs)
	}
	if err != nil {
		return nil, nil, err
	}
	b := st.Marshal()
	if !ok || !fresh {
		version = "" // rebuilt: replace whatever is stored
		if ok {
			_ = l.DropState(project)
		}
	}
	if saved, err := l.SaveState(project, b, seqs, version, now); err != nil {
		notes = append(notes, "save distill state: "+err.Error())
	} else if !saved {
		notes = append(notes, "distill state was saved by a concurrent snapshot; kept theirs")
	}
	return st, notes, nil
}

func pendingRows(sessions []ledger.ProjectSession, seqs ledger.Seqs) int {
	pending := 0
	for _, s := range sessions {
		pending += int(max(0, s.LastSeq-seqs[s.ID]))
	}
	return pending
}

func rebuild(l *ledger.Ledger, project string, sessions []ledger.ProjectSession) (*State, ledger.Seqs, error) {
	rows, err := l.RecentRows(project)
	if err != nil {
		return nil, nil, err
	}
	clears := clearTimes(l, project)
	st := NewState()
	for i := range rows {
		for len(clears) > 0 && rows[i].Time.After(clears[0]) { // a `carryover clear` starts a new task here too
			st.ClearTask()
			clears = clears[1:]
		}
		st.Add(&rows[i])
	}
	seqs := ledger.Seqs{}
	for _, s := range sessions {
		seqs[s.ID] = s.LastSeq
	}
	return st, seqs, nil
}

func foldNew(l *ledger.Ledger, st *State, sessions []ledger.ProjectSession, seqs ledger.Seqs) error {
	for _, s := range sessions {
		if s.LastSeq <= seqs[s.ID] {
			continue
		}
		rows, err := l.RowsAfter(s, seqs[s.ID], MaxFold)
		if err != nil {
			return err
		}
		for i := range rows {
			st.Add(&rows[i])
			seqs[s.ID] = rows[i].Seq
		}
	}
	return nil
}

// clearTimes are the times of the project's `carryover clear`s (records ended EndCleared) among its newest 200
// records, oldest first. Rebuilds are rare (a new StateVersion, a cold ingest) and fold recent rows only, so this one
// query costs the common hook path nothing.
func clearTimes(l *ledger.Ledger, project string) []time.Time {
	ats, _ := ledger.All(l, ledger.ScanValue[int64],
		`SELECT ended_at FROM (SELECT ended, ended_at FROM handoff_log WHERE project = ? ORDER BY written DESC, id DESC LIMIT 200)
		WHERE ended = ? AND ended_at != 0`, project, ledger.EndCleared)
	var out []time.Time
	for _, at := range ats {
		out = append(out, time.UnixMilli(at))
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}

// ClearTask is `carryover clear` on the stored state: refreshed, then its
// task forgotten; a later rebuild honours it too (clearTimes).
func ClearTask(l *ledger.Ledger, project string, now time.Time) error {
	if _, _, err := Refresh(l, project, now); err != nil {
		return err
	}
	raw, seqs, version, ok := l.LoadState(project)
	st, fresh := LoadState(raw)
	if !ok || !fresh {
		return nil
	}
	st.ClearTask()
	_, err := l.SaveState(project, st.Marshal(), seqs, version, now)
	return err
}

// ProjectFold is the handoff across the project's sessions and agents (the stored fold, refreshed as the hook would)
// and the newest 6 sessions it drew from, oldest first. A trivial last session ("what should we work on now?") cannot
// hide the task: it is one follow-up among the fold's prompts.
func ProjectFold(l *ledger.Ledger, project string, now time.Time, o Options) (Handoff, []string, error) {
	st, _, err := Refresh(l, project, now)
	if err != nil {
		return Handoff{}, nil, err
	}
	sessions, err := l.ProjectSessions(project)
	if err != nil {
		return Handoff{}, nil, err
	}
	var from []string
	for _, s := range sessions {
		if s.LastSeq <= 0 {
			continue
		}
		label := fmt.Sprintf("%s session #%d", s.Tool, s.ID)
		if ls, err := l.SessionByID(s.ID); err == nil {
			label = fmt.Sprintf("%s session %s", ls.Tool, ls.NativeID[:min(len(ls.NativeID), 12)])
		}
		from = append(from, label)
	}
	return st.Handoff(o), last(from, 6), nil
}

// The repository reader is distill/git (go-git's decoders over files
// safefile opened; never `git`); these names keep its callers' vocabulary.
type (
	Repo        = git.Repo
	CommitCount = git.CommitCount
)

// OpenRepo reads root's .git directory (nil when root is in no repository).
func OpenRepo(root string) *Repo { return git.Open(root) }

// OpenRepoAsync starts OpenRepo on another goroutine (the hook reads .git on the other core while it tails the
// transcript); the func waits for it once. A panic in the reader yields nil, as no repository does.
func OpenRepoAsync(root string) func() *Repo {
	ch := make(chan *Repo, 1)
	go func() {
		defer func() {
			if recover() != nil {
				ch <- nil
			}
		}()
		ch <- OpenRepo(root)
	}()
	return sync.OnceValue(func() *Repo { return <-ch })
}

func RepoRoot(dir string) string { return git.Root(dir) }

// RepoFacts reads branch, short HEAD and the state of files (relative to
// r's root; nil r: no repository), setting each file's Git field.
func RepoFacts(r *Repo, files []File) (Git, []File) {
	if r == nil {
		return Git{}, files
	}
	g := Git{Repo: true, Branch: GitString(r.Branch()), Head: r.Head()}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Path
	}
	out := make([]File, len(files))
	copy(out, files)
	count := map[string]*int{git.Clean: &g.Clean, git.Modified: &g.Modified, git.Untracked: &g.Untracked, git.Deleted: &g.Deleted}
	for i, st := range r.States(paths) {
		out[i].Git = st
		if n := count[st]; n != nil {
			*n++
		}
	}
	return g, out
}

// ProjectRoot is a session's project: the agent's own project dir, else the
// git root of cwd, else cwd; symlinks resolved, so a project has one name.
func ProjectRoot(explicit, cwd string) string {
	p := explicit
	if p == "" {
		p = RepoRoot(cwd)
		if p == "" {
			p = cwd
		}
	}
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return p
}

// GitString is the one door by which a string from a repository's .git (a branch, a commit subject, a remote's name
// or URL) enters carryover's state. A cloned repository chose it: it becomes one line without control characters, and
// a credential in it (a token pushed as a branch name, a URL with a password) is redacted here, once, whatever read
// it (distill/git imports nothing but safefile).
func GitString(s string) string {
	if s == "" {
		return ""
	}
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
	return redact.String(s)
}

// The stored State is a compact binary blob (JSON cost a millisecond of each
// snapshot): "CS", the uvarint StateVersion, then State's fields in
// declaration order (codec.state, one walk for both directions):
//
//	int, int64     zig-zag varint
//	string         uvarint length, then the bytes
//	bool           one byte, 0 or 1
//	time.Time      uvarint 0 for the zero time; else uvarint 1+nanoseconds,
//	               then the varint Unix seconds (times are UTC, see Add)
//	*int           bool (present), then the int
//	slice          uvarint 0 for nil, else 1+len, then the elements
//	map            uvarint len, then key and value per entry, keys ascending
//
// The same State always gives the same bytes, and the decoder accepts only
// that canonical form (minimal varints, ascending unique keys, 0/1 bools, no
// trailing bytes), so what LoadState accepts Marshal writes back byte for
// byte. A layout change bumps StateVersion.
const stateMagic = "CS"

// Marshal encodes the state; a first, counting pass sizes the blob exactly.
func (st *State) Marshal() []byte {
	size := codec{sizing: true}
	size.header(st)
	size.state(st)
	c := codec{b: make([]byte, size.n)}
	c.header(st)
	c.state(st)
	return c.b
}

func (c *codec) header(st *State) {
	c.raw(stateMagic)
	c.putUvarint(uint64(st.Version))
}

// LoadState decodes a stored state; ok is false when it is missing, broken,
// not canonical or of another version (JSON included). It never panics and
// allocates no more than len(b) allows for.
func LoadState(b []byte) (*State, bool) {
	if len(b) < len(stateMagic) || string(b[:len(stateMagic)]) != stateMagic {
		return nil, false
	}
	c := codec{decoding: true, b: b, n: len(stateMagic)}
	if c.uvarint() != StateVersion || c.err != nil {
		return nil, false
	}
	// Decoded strings slice one string copy of the blob rather than
	// allocating each (keeping it alive: no loss, it is loaded once).
	c.s = string(b)
	st := &State{Version: StateVersion}
	c.state(st)
	if c.err == nil && c.n != len(b) {
		c.fail("trailing bytes")
	}
	if c.err != nil || len(st.FailureKeys) != len(st.Failures) { // Add indexes one by the other
		return nil, false
	}
	return st, true
}

// state walks State's fields in order; the codeList/codeMap sizes are the
// elements' minimum encoded bytes.
func (c *codec) state(st *State) {
	c.str(&st.Tool)
	c.varint(&st.SessionID)
	c.time(&st.LastAt)
	c.int(&st.Rows)
	c.int(&st.Prompts)
	c.str(&st.Task)
	c.time(&st.TaskAt)
	c.str(&st.Fallback)
	c.time(&st.FallbackAt)
	c.varint(&st.Tokens.Used)
	c.varint(&st.Tokens.Max)
	c.varint(&st.Seq)
	codeMap(c, &st.Calls, 3, (*codec).call)
	codeList(c, &st.CallOrder, 1, (*codec).str)
	codeMap(c, &st.FailedCalls, 1, (*codec).bool)
	codeList(c, &st.Edits, 9, (*codec).edit)
	codeList(c, &st.TestFails, 1, (*codec).varint)
	codeList(c, &st.Failures, 13, (*codec).failure)
	codeList(c, &st.FailureKeys, 1, (*codec).str)
	codeList(c, &st.Done, 2, (*codec).done)
	codeList(c, &st.Decided, 1, (*codec).str)
	codeList(c, &st.Seen, 1, (*codec).str)
	codeList(c, &st.TurnTexts, 1, (*codec).str)
	c.str(&st.LastText)
	c.bool(&st.GoalWeak)
	c.str(&st.Latest)
	c.time(&st.LatestAt)
	codeList(c, &st.SetAside, 1, (*codec).str)
	c.varint(&st.PromptSession)
	c.bool(&st.AfterBreak)
	c.str(&st.Ended)
	c.str(&st.Queued)
	c.bool(&st.Answered)
	codeList(c, &st.Plan, 2, (*codec).plan)
	codeList(c, &st.Refs, 1, (*codec).str)
	codeList(c, &st.Actions, 1, (*codec).str)
	c.str(&st.CauseKey)
	c.str(&st.LastTest)
	codeList(c, &st.Instructions, 3, (*codec).note)
	codeList(c, &st.Refused, 3, (*codec).note)
	c.note(&st.Interrupted)
	c.ref(&st.TaskRef)
	c.ref(&st.LatestRef)
	c.ref(&st.LastTextRef)
	c.varint(&st.LastTextSeq)
	c.varint(&st.LastPassSeq)
	c.varint(&st.AskSeq)
	c.varint(&st.LastCallSeq)
	c.varint(&st.PlanSession)
	c.str(&st.PendingCall)
	c.varint(&st.StopSeq)
	c.ref(&st.RowRef)
	codeList(c, &st.TurnRefs, 2, (*codec).ref)
	codeList(c, &st.Sources, 3, (*codec).note)
	c.note(&st.Accepted)
	codeList(c, &st.Background, 1, (*codec).str)
	codeList(c, &st.Shells, 1, (*codec).str)
}

func (c *codec) note(x *Note) {
	c.str(&x.Text)
	c.time(&x.At)
	codeList(c, &x.Refs, 2, (*codec).ref)
}

func (c *codec) ref(x *Ref) {
	c.varint(&x.Session)
	c.varint(&x.Seq)
}

func (c *codec) edit(x *Edit) {
	c.str(&x.Path)
	c.str(&x.Call)
	c.time(&x.At)
	c.varint(&x.Seq)
	c.bool(&x.Created)
	c.bool(&x.Deleted)
	codeList(c, &x.Todos, 1, (*codec).str)
	c.ref(&x.Ref)
}

func (c *codec) failure(x *Failure) {
	c.str(&x.What)
	c.str(&x.Error)
	has := x.ExitCode != nil
	c.bool(&has)
	if has {
		if x.ExitCode == nil {
			x.ExitCode = new(int)
		}
		c.int(x.ExitCode)
	}
	c.int(&x.Count)
	c.bool(&x.Resolved)
	c.time(&x.At)
	codeList(c, &x.Errors, 1, (*codec).str)
	c.str(&x.Cause)
	c.varint(&x.Seq)
	codeList(c, &x.Refs, 2, (*codec).ref)
	c.bool(&x.Superseded)
	c.bool(&x.Declined)
	c.int(&x.Tests)
}

func (c *codec) done(x *Done) {
	c.str(&x.Text)
	c.str(&x.Call)
}

func (c *codec) call(x *Call) {
	c.str(&x.ToolName)
	c.str(&x.Command)
	c.str(&x.FilePath)
}

func (c *codec) plan(x *PlanItem) {
	c.str(&x.Text)
	c.bool(&x.Done)
}

// codec encodes into b, which it does not grow (n: bytes written; sizing:
// only count them), or with decoding set decodes from b (n: bytes read). A
// decoder keeps its first error; every read after it gives the zero value,
// so callers check err once at the end.
type codec struct {
	b        []byte
	n        int
	sizing   bool
	decoding bool
	s        string // decoding: b as a string, which decoded strings share
	err      error
}

func (c *codec) putUvarint(v uint64) {
	if c.sizing {
		c.n += (bits.Len64(v|1) + 6) / 7
		return
	}
	c.n += binary.PutUvarint(c.b[c.n:], v)
}

func (c *codec) raw(s string) {
	if !c.sizing {
		copy(c.b[c.n:], s)
	}
	c.n += len(s)
}

func (c *codec) fail(why string) {
	if c.err == nil {
		c.err = errors.New("distill state: " + why)
	}
}

func (c *codec) uvarint() uint64 {
	if c.err != nil {
		return 0
	}
	if c.n < len(c.b) && c.b[c.n] < 0x80 { // one byte: most counts and lengths
		c.n++
		return uint64(c.b[c.n-1])
	}
	v, n := binary.Uvarint(c.b[c.n:])
	if n <= 0 {
		c.fail("bad varint")
		return 0
	}
	if c.b[c.n+n-1] == 0 { // a trailing zero group: not the shortest form
		c.fail("overlong varint")
		return 0
	}
	c.n += n
	return v
}

// varint codes v zig-zag, as binary.AppendVarint.
func (c *codec) varint(p *int64) {
	if !c.decoding {
		c.putUvarint(uint64(*p<<1) ^ uint64(*p>>63))
		return
	}
	u := c.uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	*p = v
}

func (c *codec) int(p *int) {
	v := int64(*p)
	c.varint(&v)
	if !c.decoding {
		return
	}
	if int64(int(v)) != v {
		c.fail("int out of range")
		v = 0
	}
	*p = int(v)
}

func (c *codec) bool(p *bool) {
	if !c.decoding {
		c.putUvarint(uint64(btoi(*p)))
		return
	}
	v := c.uvarint()
	if v > 1 {
		c.fail("bad bool")
	}
	*p = v == 1
}

func (c *codec) str(p *string) {
	if !c.decoding {
		c.putUvarint(uint64(len(*p)))
		c.raw(*p)
		return
	}
	n := c.uvarint()
	if c.err == nil && n > uint64(len(c.b)-c.n) {
		c.fail("string past the end")
	}
	if c.err != nil {
		*p = ""
		return
	}
	*p = c.s[c.n : c.n+int(n)]
	c.n += int(n)
}

func (c *codec) time(p *time.Time) {
	if !c.decoding {
		if p.IsZero() {
			c.putUvarint(0)
			return
		}
		c.putUvarint(uint64(p.Nanosecond()) + 1)
		sec := p.Unix()
		c.varint(&sec)
		return
	}
	*p = time.Time{}
	h := c.uvarint()
	if h == 0 {
		return
	}
	if h > 1e9 {
		c.fail("bad nanoseconds")
		return
	}
	var sec int64
	c.varint(&sec)
	if c.err != nil {
		return
	}
	*p = time.Unix(sec, int64(h-1)).UTC()
	if p.IsZero() { // the zero time has its own, shorter encoding
		c.fail("overlong zero time")
	}
}

// fits checks a length just read of elements of at least minSize bytes: one
// the remaining bytes cannot hold is an error, so a broken blob never makes
// the decoder allocate more than its size implies.
func (c *codec) fits(n uint64, minSize int) int {
	if c.err == nil && n > uint64((len(c.b)-c.n)/minSize) {
		c.fail("length past the end")
	}
	if c.err != nil {
		return 0
	}
	return int(n)
}

func codeList[T any](c *codec, p *[]T, minSize int, each func(*codec, *T)) {
	if !c.decoding {
		if *p == nil {
			c.putUvarint(0)
			return
		}
		c.putUvarint(uint64(len(*p)) + 1)
		for i := range *p {
			each(c, &(*p)[i])
		}
		return
	}
	*p = nil
	h := c.uvarint()
	if h == 0 {
		return
	}
	n := c.fits(h-1, minSize)
	if c.err != nil {
		return
	}
	s := make([]T, n)
	for i := range s {
		if c.err != nil {
			break
		}
		each(c, &s[i])
	}
	*p = s
}

// codeMap codes a map by ascending key (keys take a byte at least); a
// decoded map is never nil.
func codeMap[V any](c *codec, p *map[string]V, minSize int, each func(*codec, *V)) {
	v := new(V)   // one per map: each may keep its argument, so it is on the heap
	if c.sizing { // the order does not change the size
		c.putUvarint(uint64(len(*p)))
		for k, x := range *p {
			*v = x
			c.str(&k)
			each(c, v)
		}
		return
	}
	if !c.decoding {
		c.putUvarint(uint64(len(*p)))
		keys := make([]string, 0, len(*p))
		for k := range *p {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			*v = (*p)[k]
			c.str(&k)
			each(c, v)
		}
		return
	}
	n := c.fits(c.uvarint(), 1+minSize)
	m := make(map[string]V, n)
	var prev, k string
	for i := 0; i < n && c.err == nil; i++ {
		c.str(&k)
		if i > 0 && k <= prev {
			c.fail("map keys out of order")
		}
		*v = *new(V)
		each(c, v)
		m[k] = *v
		prev = k
	}
	*p = m
}
