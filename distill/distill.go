// Package distill turns ledger rows into a handoff: what the task was, which
// files changed, what failed, what was decided and what to do next. It is
// deterministic: no model, no network, no clock other than the one passed in;
// the same rows give the same Handoff.
package distill

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
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
	MoreFiles int // files changed beyond the 10 listed (a session whose subagents wrote 26 shows 10 and "+16 more")
	Failures  []Failure
	Questions []string
	Decisions []string
	Next      string
	Done      []string // completed steps (successful edits and commands, newest last)
	Refs      []string // URLs, documents, people and dates named as sources
	Actions   []string // commitments and to-dos stated in prose
	Test      string   // the test or build command last run
	// The user's words: the condensed instructions of the task other
	// than the goal and the latest request, oldest first.
	Instructions []string
	Refused      []string // tool calls the user refused: never redo without asking
	Interrupted  string   // what the user interrupted, when the work stopped there
	LastWords    string   // the closing paragraph of the last assistant message, verbatim (trimmed)
	Completed    bool     // the last assistant message reports completion with nothing failing after
	NextRule     string   // the rule that chose Next (next.go), for explain
	Evidence     []Evidence
	Tokens       Tokens
	Git          Git
	LastAt       time.Time // newest row
	Rows         int       // rows considered
	Prompts      int
}

// Evidence is why a handoff line is there: the section and text, the rule
// that chose it and the ledger rows it came from (carryover explain).
type Evidence struct {
	Section string
	Text    string
	Rule    string
	Refs    []Ref
}

// File is a file the session wrote.
type File struct {
	Path        string // relative to the project when inside it
	At          time.Time
	Created     bool
	Deleted     bool
	FailedAfter bool   // a test/build command failed after the last edit
	Git         string // "modified", "untracked", "deleted", "clean" or "" (unknown)
	Ref         Ref    // the row of the last write (explain)
}

// Failure is a failing command or tool error, repeated attempts collapsed.
type Failure struct {
	What     string   // the command, or the tool name
	Error    string   // the line naming the newest error
	Errors   []string // the distinct error lines of the collapsed attempts, oldest first (Error last)
	Cause    string   // the session's explanation of the failure, when it gave one
	ExitCode *int
	Count    int
	Resolved bool // the same command, test file or tool later succeeded on the same target
	At       time.Time
	// Superseded: the agent reported completion after it with nothing
	// failing since; an approach left behind, not work left.
	Superseded bool
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

// Git is what the handoff says about the repository.
type Git struct {
	Branch    string
	Head      string // short hash
	Modified  int    // of the files the session touched
	Untracked int
	Deleted   int
	Clean     int
	Repo      bool
}

// Options tunes Distill.
type Options struct {
	Project string // for relative paths
}

// Distill builds a Handoff from rows in order (oldest first). It is the
// fold of State over the rows: the hook path keeps a State per project and
// adds only the rows that are new since the last snapshot.
func Distill(rows []ledger.Row, o Options) Handoff {
	Distillations.Add(1)
	st := NewState()
	for i := range rows {
		st.Add(&rows[i])
	}
	return st.Handoff(o)
}

// createsFile reports whether a file-writing call created its file: an
// agent's file-creating tool (its descriptor's CreateTools), an
// apply_patch "Add File".
func createsFile(r *ledger.Row) bool {
	return adapters.CreatesFile(r.ToolName) || strings.Contains(r.Text, "*** Add File:")
}

func callKey(r *ledger.Row) string { return r.Tool + "\x00" + r.CallID }

// nudges are prompts that confirm or push on and never replace the task.
var nudgeWords = phraseSet("nudge")

// wordRune reports whether r belongs to a word: a letter, a number, an
// apostrophe or a hyphen (the class `[\p{L}\p{N}'-]`).
func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || r == '\'' || r == '-'
}

// promptWords returns the maximal runs of word runes in s (what
// `[\p{L}\p{N}'-]+` found); an invalid UTF-8 byte ends a word.
func promptWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !wordRune(r) })
}

// substantive reports whether a prompt states a request rather than a
// confirmation or nudge ("yes", "continue", "ok go ahead", "do it").
func substantive(p string) bool {
	p = strings.TrimSpace(p)
	if p == "" || strings.HasPrefix(p, "/") {
		return false
	}
	ws := promptWords(strings.ToLower(p))
	if len(ws) == 0 {
		return false
	}
	if len(ws) > 6 {
		return true
	}
	for _, w := range ws {
		if w := strings.Trim(w, "'-"); !nudgeWords()[w] && !ackWords()[w] {
			return true
		}
	}
	return false
}

var testCmdRE = lazyRegexp(`(?i)\b(test|tests|pytest|unittest|jest|vitest|mocha|rspec|go (test|build|vet)|cargo (test|build|check)|npm (run )?(test|build)|yarn (test|build)|pnpm (test|build)|make|tsc|mvn|gradle|ctest|tox|phpunit|build|lint|check)\b`)

// testWords are the substrings testCmdRE needs: its cheap pre-check (it
// runs on every command of the session).
var testWords = []string{"test", "build", "make", "lint", "check", "tsc", "mvn", "gradle", "tox", "jest", "mocha", "rspec", "phpunit", "vet"}

func isTestCmd(cmd string) bool {
	return cmd != "" && containsAny(strings.ToLower(cmd), testWords) && testCmdRE().MatchString(cmd)
}

// collapseSpace replaces each run of ASCII white space (\t \n \f \r and
// space: the class `\s`) with one space, as `\s+` replaced by " " did.
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

var exitLineRE = lazyRegexp(`(?i)^(error: )?(exit code:? -?\d+|process exited with code -?\d+|command failed.*exit code.*)$`)

// errWords are the words that make a line of error output meaningful
// (matched lower-cased, anywhere: "fail" matches "FAILED").
var errWords = []string{"error", "fail", "cannot", "can't", "not found", "no such", "denied", "exception", "traceback",
	"panic", "fatal", "invalid", "refused", "undefined", "missing"}

// lazyRE is a regexp compiled at its first use (lazyRegexp): most hook
// events publish nothing, and compiling all of them cost ~0.5 ms (Warm).
type lazyRE func() *regexp.Regexp

func lazyRegexp(expr string) lazyRE {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

func (re lazyRE) MatchString(s string) bool { return re().MatchString(s) }

var decisionRE = lazyRegexp(`(?i)\b(we|i|let's|let us)\b[^.!?\n]{0,40}\b(decided|decide|chose|choose|will use|'ll use|are going with|am going with|go with|settled on|opted|picked|prefer)\b|\binstead of\b|\bdecision:`)

// decisionWords are the substrings decisionRE needs (mayDecide takes the
// lower-cased text): a text without any is not split into sentences at
// all (the hook path distills hundreds of rows per snapshot).
var decisionWords = []string{"decid", "chose", "choose", "will use", "'ll use", "going with", "go with", "settled", "opted", "picked", "prefer", "instead of", "decision"}

func mayDecide(low string) bool { return containsAny(low, decisionWords) }

var nextRE = lazyRegexp(`(?i)\b(next,? (i|we)('ll| will| should| need to| plan to)|(i|we)('ll| will) next|next step|then (i|we)('ll| will| need to| should| have to)|next up|after that,? (i|we)('ll| will| need to)|remaining:|todo:|still need to|the plan is)`)

// sentences splits prose into sentences, dropping code fences and
// markdown bullets' markers.
func sentences(text string) []string {
	var out []string
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") {
			inFence = !inFence
			continue
		}
		if inFence || t == "" {
			continue
		}
		out = lineSentences(out, strings.TrimLeft(t, "-*#> "))
	}
	return out
}

// lineSentences appends the sentences of one line of prose.
func lineSentences(out []string, t string) []string {
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	start := 0
	for i := 0; i < len(t); i++ {
		if cjkStop(t, i) {
			// CJK full stops end a sentence with no space after them: a
			// Chinese or Japanese reply is several sentences, not one.
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

// sentenceEnd reports a '.', '!' or '?' at t[i] that ends the sentence
// begun at start: followed by a space or the end, and not the dot of
// "e.g. " or a version number.
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

// clip is redact.Clip: no partial word (no half secret) survives a cut.
func clip(s string, n int) string { return redact.Clip(s, n) }

// Warm compiles the regular expressions nearly every turn's fold runs:
// commands that look like tests or builds, exit-code lines and
// forward-looking sentences. The hook path calls it on a second goroutine
// when it will distill, so that compiling (~0.2 ms) overlaps its I/O
// instead of delaying the fold. The others run only behind their cheap
// pre-checks (a trigger word, a month name, "@"), on few turns: they are
// compiled when a fold first needs them. Compiling all ten cost every
// Stop ~0.5 ms of CPU, on a machine whose other core is often busy.
func Warm() {
	phraseTables() // lang/, parsed once (BenchmarkPhrases)
	testCmdRE()
	exitLineRE()
	nextRE()
}

// Dedupe returns the items of in trimmed, without blank ones and repeats,
// in first-seen order: the one dedupe of the pipeline (distill and the
// resume prompt alike).
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

// last is s without all but its newest n elements.
func last[T any](s []T, n int) []T {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// keepFirst is s bounded to n elements: the first and the newest n-1.
func keepFirst[T any](s []T, n int) []T {
	if len(s) > n {
		return append(s[:1:1], s[len(s)-n+1:]...)
	}
	return s
}

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

// DefaultThresholds are 65 / 75 / 85 %: Claude Code auto-compacts at about
// 92 % of its window (it summarises at 87k of a 100k test window), so
// CRITICAL leaves room for one more turn and the handoff before it does.
var DefaultThresholds = Thresholds{EarlyWarn: 65, Warn: 75, Critical: 85}

// Valid reports whether the thresholds rise strictly within 1..100.
func (t Thresholds) Valid() bool {
	return t.EarlyWarn > 0 && t.EarlyWarn < t.Warn && t.Warn < t.Critical && t.Critical <= 100
}

// Rank orders levels: OK 0 … CRITICAL 3 ("" is 0).
func (l ContextLevel) Rank() int {
	switch l {
	case ContextEarlyWarn:
		return 1
	case ContextWarn:
		return 2
	case ContextCritical:
		return 3
	}
	return 0
}

// Level is the context level of used tokens out of window, and the whole
// percentage (floor, capped at 100). The usage is what the model was last
// sent (input + cache + output of the latest response), not the transcript's
// size; window 0 (unknown) is OK.
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

// QualityFields are the facts a handoff's deterministic coverage report
// scores, in display order (as ntm's QualityReport and clauditor's
// coverage report): coverage, never truth.
var QualityFields = []string{"goal", "latest request", "files", "failures", "decisions", "next action", "test command", "git state"}

// Quality is a handoff's coverage: Score is Filled/len(QualityFields) in
// percent; Missing lists the facts it could not fill, in QualityFields
// order.
type Quality struct {
	Score   int      `json:"score" yaml:"score"`
	Filled  int      `json:"filled" yaml:"filled"`
	Of      int      `json:"of" yaml:"of"`
	Missing []string `json:"missing,omitempty" yaml:"missing,omitempty"`
}

// Quality scores h. The latest request is filled when the handoff names
// one (the goal is the latest request when no later one is shown);
// failures count as covered when any was recorded or a test command was
// seen (a session whose tests ran green has no failure to report).
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

// String is the one-line form: "quality 75% (6/8; missing: decisions, git state)".
func (q Quality) String() string {
	s := fmt.Sprintf("quality %d%% (%d/%d", q.Score, q.Filled, q.Of)
	if len(q.Missing) > 0 {
		s += "; missing: " + strings.Join(q.Missing, ", ")
	}
	return s + ")"
}
