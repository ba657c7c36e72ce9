package distill

import (
	"cmp"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

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
	// errWords make a line of error output meaningful (lower-cased, anywhere: "fail" matches "FAILED").
	errWords = []string{"error", "fail", "cannot", "can't", "not found", "no such", "denied", "exception", "traceback",
		"panic", "fatal", "invalid", "refused", "undefined", "missing"}
	decisionRE = lazyRE{expr: `(?i)\b(we|i|let's|let us)\b[^.!?\n]{0,40}\b(decided|decide|chose|choose|will use|'ll use|are going with|am going with|go with|settled on|opted|picked|prefer)\b|\binstead of\b|\bdecision:`}
	// decisionWords: decisionRE's pre-check; a text without any is not split
	// into sentences (the hook path distills hundreds of rows per snapshot).
	decisionWords = []string{"decid", "chose", "choose", "will use", "'ll use", "going with", "go with", "settled", "opted", "picked", "prefer", "instead of", "decision"}
)

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

func last[T any](s []T, n int) []T { return s[max(0, len(s)-n):] }

// Phrase tables are data: lang/<language>.txt, [list] headings over one lower-case phrase a line (TestLangFiles
// checks the case); a rule reads a list merged across languages, so a language is one file. TestLangGenerated
// derives lang_gen.go from them (`go test ./distill/ -run TestLangGenerated -update`): parsing 24 KB of phrases cost
// every hook process ~1.65M instructions, a tenth of a Stop; a generated table is data the linker lays out.
func phrases(list string) []string { return langTable[list] }

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
		if q.Filled += btoi(have[f]); !have[f] {
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

// StateVersion changes with State's meaning or encoding (distill.go); a stored state of another version is rebuilt. 1
// was JSON; 3 added the goal/latest split, plan, references, action items, failure targets, errors, causes and
// shell-written files; 4 evidence rows, instructions, refusals and the interruption; 5 every other line's evidence;
// 6 failure keys name a runner's program (`npm run build`, was `npm run`); 7 a script's subcommand (`python
// manage.py test`, was `python manage.py`), LastCallSeq; 8 a package manager's script with or without "run" (`npm test`
// = `npm run test`) and rails' subcommand; 9 a test runner's name filter (`jest cart`, `go test -run X`)
// and an exec wrapper's command (`docker compose run web pytest` is pytest's); 10 the offer the user accepted; 11 a
// failure the user declined (Failure.Declined) and the commands started in the background (Background); 13 how the
// session ended (Ended); 14 how many tests a failing run reported (Failure.Tests).
const StateVersion = 14

// Bounds that keep a State small however long the project's history grows.
const (
	maxCalls, maxEdits, maxFailures, maxDone, maxTurnTexts, maxSeen    = 64, 60, 100, 40, 50, 120
	keepDecided, keepSetAside, keepStops, maxPlan, maxRefs, maxActions = 6, 2, 4, 12, 10, 6
	maxInstructions                                                    = 8 // the goal, then the newest of the rest
	maxErrors                                                          = 3 // distinct error lines of one collapsed failure
	// maxSources: a handoff lists at most 6 decisions, 10 references, 6 action
	// items, a plan and 2 set-aside goals (25); twice that leaves room for
	// facts repeated or superseded since.
	maxSources = 50
)

// State is the running distillation of a project's rows: Add folds one row in, Handoff reads the result, and the hook
// path stores it (Marshal, LoadState) to fold only new rows. A new field here or in Call, Edit, Failure or Done goes
// into codec.state (TestStateCodecFields fails until it round-trips) and bumps StateVersion. Times are UTC without a
// monotonic reading (Add normalises them), as LoadState gives them back.
type State struct {
	Version       int
	Tool          string
	SessionID     int64
	LastAt        time.Time
	Rows, Prompts int
	Task          string // the goal (addPrompt)
	TaskAt        time.Time
	GoalWeak      bool // a question or short: a fuller request replaces it
	Latest        string
	LatestAt      time.Time
	SetAside      []string
	// PromptSession: the latest prompt's session; AfterBreak: a compaction
	// or a prompt in another session came since the last request.
	PromptSession int64
	Ended         string // EndOf the main thread's last telling row
	Queued        string // a prompt the user queued that no prompt row has delivered yet
	AfterBreak    bool
	Answered      bool // prose or a tool call followed the latest prompt
	// Fallback: the latest prompt (never a compaction summary), the task when none is substantive.
	Fallback   string
	FallbackAt time.Time
	Tokens     Tokens

	Seq           int64 // order of the rows folded in
	Calls         map[string]Call
	CallOrder     []string
	FailedCalls   map[string]bool
	Edits         []Edit
	TestFails     []int64 // Seq of failing test/build commands (newest last, bounded)
	Failures      []Failure
	FailureKeys   []string
	Done          []Done
	Decided, Seen []string
	TurnTexts     []string // assistant prose since the latest prompt
	LastText      string   // newest assistant prose at all
	Plan          []PlanItem
	Refs, Actions []string
	// CauseKey: the newest failure's, until prose explains it or the next
	// prompt; LastTest: the test/build command last run.
	CauseKey, LastTest string

	Instructions []Note // the task's condensed instructions, the goal first
	Refused      []Note // never failures to retry
	Interrupted  Note
	// Evidence rows of the goal, the latest request and the last text (at LastTextSeq); LastPassSeq: the newest
	// passing verification's Seq; AskSeq: the newest request's (not an acknowledgement's); PlanSession: the plan's writer's session; PendingCall: the newest call without a
	// result (what an interruption stopped); StopSeq: the newest refusal's or interruption's Seq.
	TaskRef, LatestRef, LastTextRef       Ref
	LastTextSeq, LastPassSeq, PlanSession int64
	AskSeq, LastCallSeq                   int64 // LastCallSeq: the newest tool call's
	PendingCall                           string
	StopSeq                               int64
	// Accepted: the offer the user's last word accepted ("Want me to make that change?" → "yes please"), their
	// answer and the step; the next action until the agent writes or calls a tool.
	Accepted Note
	// RowRef is the row being folded; TurnRefs are TurnTexts' rows while the two run parallel (nil once an
	// acknowledgement condensed the turn). Sources are the rows of each decision ("d:"), reference ("r:"), action
	// item ("a:"), plan ("p:") and set-aside goal ("s:"), keyed by kind and text, the newest maxSources.
	RowRef   Ref
	TurnRefs []Ref
	Sources  []Note
	// Background: commands started in the background and not killed since (a dev server), the newest maxBackground.
	Background []string
	// Shells: "id\tcommand" of the commands the harness ran in the background (the newest maxBackground): a later
	// read of that shell (Claude Code's BashOutput) reporting an exit code is that command's end.
	Shells []string
}

type Call struct {
	ToolName, Command, FilePath string
}

// Edit is one file write, kept until the handoff is read: a later error on
// its call removes it.
type Edit struct {
	Path, Call       string
	At               time.Time
	Seq              int64
	Created, Deleted bool
	Todos            []string
	Ref              Ref
}

// Done is one completed step; Call ties an edit to its call.
type Done struct{ Text, Call string }

func NewState() *State {
	return &State{Version: StateVersion, Calls: map[string]Call{}, FailedCalls: map[string]bool{}}
}

// Add folds one row into the state: the bookkeeping, then its kind's step.
func (st *State) Add(r *ledger.Row) {
	at := r.Time.UTC() // as LoadState restores it: same instant, no monotonic reading
	if !at.IsZero() && at.After(st.LastAt) {
		st.LastAt = at
	}
	if r.Kind == adapters.KindRewind || r.Kind == adapters.KindAbandoned {
		return // a rewind's mark, and the rows it abandoned (the ledger's): never happened as far as the work goes
	}
	if r.Sidechain && !sessionWork(r.Kind) {
		// A subagent's prompt and prose are its own; its edits, commands and
		// failures are the session's (a real 1.0.98 session's five subagents
		// wrote 25 files while the main thread wrote one).
		return
	}
	st.Seq++
	st.Rows++
	st.RowRef = refOf(r)
	if e, quiet := EndOf(*r); !quiet && !r.Sidechain {
		st.Ended = e
	}
	if r.Kind != adapters.KindUsage && r.Kind != adapters.KindInjection {
		st.Tool, st.SessionID = r.Tool, r.SessionID
	}
	st.addKind(r, at)
	if len(st.FailedCalls) > maxCalls {
		st.forgetFailedCalls()
	}
}

// EndOf is how row r says its session ended when it is the main thread's last telling row: its kind (interrupted,
// refused, compaction, prompt, text: the agent's reply), "limit" or "api" for a model API error, "" for a tool's call,
// result or failure. Quiet rows say nothing: token figures, carryover's injection, harness notes, a limit warning.
func EndOf(r ledger.Row) (end string, quiet bool) {
	switch {
	case r.Kind == adapters.KindLimit:
		return limitEnd(r.Text)
	case r.Kind == adapters.KindError && r.CallID == "" && r.Role != "tool":
		return apiEnd(r), false
	case r.Kind == adapters.KindQueued && r.Text == "": // the queue taken back into the input box
		return "", true
	}
	return endKinds[r.Kind], quietKinds[r.Kind]
}

// endKinds say how a session ended by themselves; quietKinds never do.
var (
	endKinds = map[adapters.Kind]string{adapters.KindInterrupted: "interrupted", adapters.KindRefused: "refused",
		adapters.KindCompaction: "compaction", adapters.KindPrompt: "prompt", adapters.KindText: "text", adapters.KindQueued: "queued"}
	quietKinds = map[adapters.Kind]bool{adapters.KindUsage: true, adapters.KindInjection: true, adapters.KindHarness: true,
		adapters.KindRewind: true, adapters.KindAbandoned: true}
)

// apiEnd is how a model API error (no tool's) ended a session: at the limit it names, else "api".
func apiEnd(r ledger.Row) string {
	if adapters.LimitFromError(r.Text, adapters.APIErrorStatus(r.Text), r.Time) != nil {
		return "limit"
	}
	return "api"
}

// limitEnd is "limit" for a limit row's text that says one was reached (Limit.Phrase; a warning, "80 % used", is
// quiet).
func limitEnd(text string) (string, bool) {
	for _, k := range []adapters.LimitKind{adapters.LimitUsage, adapters.LimitRate, adapters.LimitQuota, adapters.LimitOverloaded} {
		if (&adapters.Limit{Kind: k, Reached: true}).Phrase() == text {
			return "limit", false
		}
	}
	return "", true
}

// ending is how the session ended (EndOf), the agent's reply told apart: a completion report ("done"), a question
// to the user ("asked", its closing words end with a question mark, markup aside), else nothing.
func ending(end string, h *Handoff) string {
	if end != string(adapters.KindText) {
		return end
	}
	last := strings.TrimRight(strings.TrimSpace(h.LastWords), "*_`\"') ")
	switch {
	case h.Completed:
		return "done"
	case strings.HasSuffix(last, "?") || strings.HasSuffix(last, "？"):
		return "asked"
	}
	return ""
}

// Ending is how the session of rows ended, as its main thread's last telling row says (EndOf, ending).
func Ending(rows []ledger.Row, h Handoff) string {
	for i := len(rows) - 1; i >= 0; i-- {
		if e, quiet := EndOf(rows[i]); !quiet && !rows[i].Sidechain {
			return ending(e, &h)
		}
	}
	return ""
}

func sessionWork(k adapters.Kind) bool {
	return k == adapters.KindToolCall || k == adapters.KindToolResult || k == adapters.KindError
}

func (st *State) addKind(r *ledger.Row, at time.Time) {
	switch r.Kind {
	case adapters.KindPrompt:
		st.Queued = ""
		st.addPromptRow(r, at)
	case adapters.KindQueued:
		st.Queued = r.Text // delivered, a prompt row follows; taken back, an empty one
	case adapters.KindCompaction:
		st.AfterBreak = true // a summary is never the task
	case adapters.KindText:
		st.modelAnswered()
		st.addTextRow(r)
	case adapters.KindUsage:
		st.Tokens = Tokens{r.TokensUsed, r.TokensMax}
	case adapters.KindToolCall:
		st.modelAnswered()
		st.addCallRow(r, at)
	case adapters.KindToolResult:
		st.addToolResult(r, at)
	case adapters.KindError:
		st.shellEnded(r)
		st.addErrorRow(r, at)
	case adapters.KindRefused:
		st.addStopRow(r, at, "refusal")
	case adapters.KindInterrupted:
		st.addStopRow(r, at, "interrupt")
	} // KindHarness: the harness's text in the user's role, context, never a request
}

// modelAnswered drops the newest failure when it is a model API error (a rate limit, an overload) the model answered
// after: the API let it work again, so it is no approach to avoid. A Claude Code 429 stayed "do not retry as-is" in
// the handoff after the user switched to Codex and Codex finished the task. One look at the last failure: the error
// is the newest one until the model's next text or call.
func (st *State) modelAnswered() {
	if n := len(st.Failures) - 1; n >= 0 && st.Failures[n].What == "model API" {
		st.Failures, st.FailureKeys = st.Failures[:n], st.FailureKeys[:n]
	}
}

func (st *State) addPromptRow(r *ledger.Row, at time.Time) {
	text, harness := userWords(r.Text)
	if harness { // a task notification, an IDE context block
		return
	}
	if boundaryCommand(text) {
		st.ClearTask()
		return
	}
	st.Prompts++
	// A stop before this request is not this turn's, nor is a call of an earlier turn still running in it (a
	// Codex patch_apply_end has no result row: a turn_aborted after the next prompt named that old patch).
	st.StopSeq, st.PendingCall, st.Accepted = 0, "", Note{}
	// After a compaction or in another session "continue" resumes, it does
	// not say yes to the previous turn; a thank-you answers nothing.
	resumed := st.AfterBreak || st.PromptSession != 0 && r.SessionID != st.PromptSession
	thanks := thanksOnly(text) && !substantive(text)
	st.declineFailures(text)
	declined := !resumed && !thanks && st.answerTurn(text)
	taskBefore := st.Task
	class := st.addPrompt(text, r.SessionID, at)
	st.Fallback, st.FallbackAt = text, at
	st.taskRefs(class, taskBefore)
	if class != promptAck {
		st.AskSeq = st.Seq
		st.addInstruction(text, at, st.RowRef)
		st.Answered = declined // an acknowledgement asks nothing new: the turn's next step stays; a bare decline answers
	}
	st.endTurn(class, resumed, thanks)
	st.CauseKey = ""
	// The request that sets a goal is a task: only a follow-up's choice
	// verbs are decisions (rule 2).
	low := strings.ToLower(text)
	st.addDecisions(text, low, class == promptFollowUp, class != promptFollowUp && class != promptAck)
	st.addProse(text, low, false, true)
}

// answerTurn records the prompt as the answer to the last turn's last question, unless it sets the goal ("which
// task?" answered by naming it). A bare decline ("no, don't do that", "Non, laisse.") of the turn's question or
// announced step refuses it and asks nothing new: it reports true, and the step is refused work, not the next action.
func (st *State) answerTurn(text string) (declined bool) {
	qs, bare, step := turnQuestions(st.TurnTexts), bareDecline(text), ""
	if len(qs) == 0 && bare {
		step = proposedStep(st.TurnTexts) // only then: this runs on every prompt the hook folds
	}
	if len(qs) == 0 && step == "" || setsGoal(st.classifyPrompt(strings.TrimSpace(text))) {
		return false
	}
	switch {
	case len(qs) > 0:
		st.addAnswer(qs[len(qs)-1], text)
	case bare:
		st.Refused, st.StopSeq = last(append(st.Refused, Note{Text: clip(step, 160), Refs: []Ref{st.RowRef}}), keepStops), st.Seq
	}
	return bare
}

// proposedStep: the turn's last sentence announcing a step ("I'll drop the table and recreate it").
func proposedStep(texts []string) (step string) {
	for _, s := range sentences(strings.Join(texts, "\n")) {
		if forwardLooking(s) || announces(" "+strings.ToLower(s)) {
			step = s
		}
	}
	return step
}

// bareDecline: p opens with declines (lang/ decline_start) and names nothing after them but a verb ("no, don't do
// that", "нет, не надо", "Non, laisse."); "No, use Postgres instead" names a new target: a request.
func bareDecline(p string) bool {
	rest, ok := cutDeclines(strings.ToLower(p))
	return ok && namesNothing(rest)
}

// cutDeclines: low without its opening declines, and whether it had one.
func cutDeclines(low string) (string, bool) {
	t := stripLeadingAcks(low)
	for _, m := range declineStarts.list() {
		if rest, ok := strings.CutPrefix(t, m); ok && wordEnds(rest) {
			rest, _ = cutDeclines(rest)
			return rest, true
		}
	}
	return low, false
}

func (st *State) taskRefs(class promptClass, taskBefore string) {
	switch class {
	case promptGoal, promptNewTask, promptSwitch:
		st.TaskRef = st.RowRef
		st.startTask(class == promptNewTask)
	case promptCorrect: // the corrected goal's instructions stand
		st.TaskRef = st.RowRef
	case promptFollowUp:
		if st.Task != taskBefore { // "back to" a set-aside goal: the detour's instructions are not its
			st.TaskRef = st.sourceRef("s:" + st.Task) // the row that set it first
			st.startTask(false)
		}
	}
}

func (st *State) endTurn(class promptClass, resumed, thanks bool) {
	switch {
	case resumed && class == promptAck, thanks:
		// the turn's questions stay open across a bare resume and a thank-you
	case class == promptAck:
		// "Super, danke!" answers the questions but asks nothing new: the
		// forward-looking sentences stay the next action.
		st.TurnTexts, st.TurnRefs = forwardOnly(st.TurnTexts), nil
	default:
		st.TurnTexts, st.TurnRefs = nil, nil
	}
}

func (st *State) addTextRow(r *ledger.Row) {
	if len(st.TurnRefs) == len(st.TurnTexts) {
		st.TurnRefs = append(st.TurnRefs, refOf(r))
	}
	st.TurnTexts, st.TurnRefs = last(append(st.TurnTexts, r.Text), maxTurnTexts), last(st.TurnRefs, maxTurnTexts)
	st.LastText, st.LastTextRef, st.LastTextSeq = r.Text, refOf(r), st.Seq
	st.Answered, st.Accepted = true, Note{}
	st.Interrupted = Note{} // the agent went on after it
	low := strings.ToLower(r.Text)
	st.addDecisions(r.Text, low, false, false)
	st.addProse(r.Text, low, st.LastCallSeq > st.AskSeq, false)
	if st.CauseKey != "" {
		if c := causeSentence(r.Text, low); c != "" {
			if i := st.failure(st.CauseKey); i >= 0 && st.Failures[i].Cause == "" {
				st.Failures[i].Cause = c
			}
			st.CauseKey = ""
		}
	}
}

func (st *State) addCallRow(r *ledger.Row, at time.Time) {
	key := callKey(r)
	st.Answered, st.LastCallSeq, st.Accepted = true, st.Seq, Note{}
	st.keptDecline()
	if st.Prompts == 0 && st.Fallback == "" && subagentTool(r.ToolName) {
		st.subagentFallback(r, at)
	}
	if adapters.PlanTool(r.ToolName) { // TodoWrite, update_plan, write_todos
		if plan, ok := parsePlan(r.Text); ok {
			st.Plan, st.PlanSession = plan, r.SessionID
			st.setSource("p:", refOf(r))
		}
	}
	if r.CallID != "" {
		st.recordCall(key, r)
	}
	st.callWrites(key, r, at)
}

// subagentFallback: with no prompt recorded (an excerpt), the subagent's work is the session's.
func (st *State) subagentFallback(r *ledger.Row, at time.Time) {
	d := jsonField(r.Text, "description") // the input JSON (Codex), or
	if d == "" && !strings.HasPrefix(strings.TrimSpace(r.Text), "{") {
		d = oneLine(r.Text) // the description itself (the Claude adapter keeps it)
	}
	if d != "" {
		st.Fallback, st.FallbackAt = d, at
	}
}

func (st *State) recordCall(key string, r *ledger.Row) {
	st.PendingCall = key
	if _, ok := st.Calls[key]; !ok {
		st.CallOrder = append(st.CallOrder, key)
	}
	st.Calls[key] = Call{ToolName: r.ToolName, Command: clip(st.shellCommand(r), 400), FilePath: r.FilePath}
	for len(st.CallOrder) > maxCalls {
		delete(st.Calls, st.CallOrder[0])
		st.CallOrder = st.CallOrder[1:]
	}
}

// callWrites records the files call r edits or its command writes, and the command when it runs the tests.
func (st *State) callWrites(key string, r *ledger.Row, at time.Time) {
	if r.FilePath != "" {
		deleted := strings.HasPrefix(r.Text, "*** Delete File:")
		st.addEdit(Edit{Path: r.FilePath, Call: key, At: at, Seq: st.Seq, Created: createsFile(r) && !deleted, Deleted: deleted, Todos: todoLines(r.Text), Ref: refOf(r)})
		st.addDone(Done{Text: "edited " + r.FilePath, Call: key})
	}
	if r.Command != "" {
		for _, f := range shellFiles(r.Command) {
			if f.reverted { // the file is back as it was: the session's edits of it are undone
				st.Edits = slices.DeleteFunc(st.Edits, func(e Edit) bool { return e.Path == f.path || strings.HasSuffix(e.Path, "/"+f.path) })
				continue
			}
			st.addEdit(Edit{Path: f.path, Call: key, At: at, Seq: st.Seq, Created: f.created, Deleted: f.deleted, Ref: refOf(r)})
		}
		if isTestCmd(r.Command) {
			st.LastTest = clip(oneLine(r.Command), 200)
		}
	}
}

func (st *State) addResultRow(r *ledger.Row) {
	c, ok := st.Calls[callKey(r)]
	if !ok {
		return
	}
	st.noteBackground(c, r.Text)
	if c.Command == "" {
		// A result of the call that failed is no later success (Codex writes an MCP call's failure, then its output).
		if i := st.failure(toolKey(c.ToolName, c.FilePath)); i >= 0 && !st.FailedCalls[callKey(r)] {
			st.Failures[i].Resolved = true
		}
		return
	}
	st.addDone(Done{Text: "ran `" + clip(oneLine(c.Command), 80) + "`"})
	st.resolveBy(c.Command, r.Text)
	st.dryRun(c.Command, r.Text)
}

func (st *State) addErrorRow(r *ledger.Row, at time.Time) {
	key := callKey(r)
	if key == st.PendingCall { // the call ended: an interruption now stops none
		st.PendingCall = ""
	}
	if r.CallID != "" {
		st.FailedCalls[key] = true
	}
	if k := stopKind(r.Text); k != "" { // an adapter that does not tell stops apart: the text does
		st.FailedCalls[key] = true
		st.addStopRow(r, at, k)
		return
	}
	what, cmd, path := st.failedCall(key, r)
	if noMatch(cmd, r.Text, r.ExitCode) {
		return // a search that found nothing answered its question: nothing failed, nothing to retry
	}
	k := toolKey(what, path)
	if cmd != "" {
		what, k = cmd, targetKey(cmd)
	}
	f := st.takeFailure(k)
	f.What = oneLine(what)
	if cmd == "" && path != "" {
		f.What += " " + path
	}
	f.Count, f.Resolved, f.At, f.Seq, f.ExitCode = f.Count+1, false, at, st.Seq, r.ExitCode
	f.Refs = addRef(f.Refs, refOf(r))
	f.addError(failureLine(r.Text, r.ExitCode))
	if f.What != "model API" {
		st.CauseKey = k
	}
	st.Failures, st.FailureKeys = last(append(st.Failures, f), maxFailures), last(append(st.FailureKeys, k), maxFailures)
	if isTestCmd(cmd) {
		st.TestFails = last(append(st.TestFails, st.Seq), 8)
		st.Failures[len(st.Failures)-1].Tests = testCount(r.Text)
	}
}

// failedCall names what error row r failed: its call's tool, command and
// file, or the row's own. An error of no call is the model's or harness's
// (Gemini's "[API Error: …]", Cursor's usage limit): never the next action.
func (st *State) failedCall(key string, r *ledger.Row) (what, cmd, path string) {
	what, cmd, path = r.ToolName, r.Command, r.FilePath
	if c, ok := st.Calls[key]; ok {
		what, cmd, path = c.ToolName, c.Command, c.FilePath
	}
	if what == "" && cmd == "" && path == "" {
		what = "model API"
	}
	return what, cmd, path
}

// takeFailure removes the failure of target k (new if none), to append as the newest.
func (st *State) takeFailure(k string) Failure {
	i := st.failure(k)
	if i < 0 {
		return Failure{}
	}
	f := st.Failures[i]
	st.Failures, st.FailureKeys = slices.Delete(st.Failures, i, i+1), slices.Delete(st.FailureKeys, i, i+1)
	return f
}

func (st *State) forgetFailedCalls() {
	maps.DeleteFunc(st.FailedCalls, func(k string, _ bool) bool { // rare (past maxCalls) and small: no index
		return !slices.ContainsFunc(st.Edits, func(e Edit) bool { return e.Call == k }) && !slices.ContainsFunc(st.Done, func(d Done) bool { return d.Call == k })
	})
}

// failure is the index of target k's failure, -1 for none; a target has one (addErrorRow takes the old one out).
func (st *State) failure(k string) int { return slices.Index(st.FailureKeys, k) }

func (st *State) addEdit(e Edit) { st.Edits = last(append(st.Edits, e), maxEdits) }
func (st *State) addDone(d Done) { st.Done = last(append(st.Done, d), maxDone) }
func refOf(r *ledger.Row) Ref    { return Ref{Session: r.SessionID, Seq: r.Seq} }

// addProse: toolTurn, the agent's text after a tool call of this turn; user, a prompt's.
func (st *State) addProse(text, low string, toolTurn, user bool) {
	st.addItems(&st.Refs, "r:", references(text, low, toolTurn), maxRefs)
	st.addItems(&st.Actions, "a:", actionItems(text, low, user), maxActions)
}

// stopKind: "refusal" when an error row says the user refused the call,
// "interrupt" when they stopped the turn, else "". Only the head is read:
// the harness writes these as the whole result, a command's own output
// saying "interrupted" further down is not one.
func stopKind(text string) string {
	head := strings.ToLower(strings.TrimSpace(text))
	head = strings.Trim(head[:min(240, len(head))], "[]<> ")
	switch {
	case head == "cancelled" || head == "canceled": // Cursor's stored status: stopped or rejected
		return "interrupt"
	case hasPhrase(head, "refusal"):
		return "refusal"
	case hasPhrase(head, "interrupt"):
		return "interrupt"
	}
	return ""
}

// addStopRow folds a refusal or an interruption: what it stopped is its
// call, else the call still running, else the turn. A turn-level
// interruption right after a refusal is the same stop (Claude Code writes
// both when the user declines at the permission prompt).
func (st *State) addStopRow(r *ledger.Row, at time.Time, kind string) {
	key := callKey(r)
	c, ok := st.Calls[key]
	if r.CallID == "" {
		if st.StopSeq > 0 && st.StopSeq > st.LastTextSeq && st.PendingCall == "" {
			// A stop this turn reported again for the turn (Claude's decline
			// pair; Codex's "aborted by user", then turn_aborted): one stop.
			st.StopSeq = st.Seq
			return
		}
		c, ok = st.Calls[st.PendingCall]
	}
	if key == st.PendingCall || r.CallID == "" {
		st.PendingCall = ""
	}
	if r.CallID != "" {
		st.FailedCalls[key] = true
	}
	desc := st.stoppedWhat(r, c, ok)
	n := Note{Text: clip(oneLine(desc), 160), At: at, Refs: []Ref{refOf(r)}}
	st.StopSeq = st.Seq
	if kind == "refusal" {
		if why := refusalReason(r.Text); why != "" {
			n.Text += reasonMark + clip(oneLine(why), 120) + ")"
		}
		st.Refused = last(append(st.Refused, n), keepStops)
		return
	}
	st.Interrupted = n
}

// stoppedWhat names what a stop stopped: its call (c, when ok), the row's own, else the turn by its request.
func (st *State) stoppedWhat(r *ledger.Row, c Call, ok bool) string {
	if !ok {
		c = Call{ToolName: r.ToolName, Command: r.Command, FilePath: r.FilePath}
	}
	switch req := cmp.Or(st.Latest, st.Task); {
	case c.Command != "":
		return c.Command
	case c.ToolName != "" || ok:
		return strings.TrimSpace(c.ToolName + " " + c.FilePath)
	case req != "":
		return "the turn (request: " + clip(oneLine(req), 120) + ")" // the user's words
	}
	return "the turn"
}

// addRef appends r to a fact's rows, bounded to 4: the first and the newest three.
func addRef(refs []Ref, r Ref) []Ref {
	if refs = append(refs, r); len(refs) > 4 {
		return append(refs[:1:1], refs[len(refs)-3:]...)
	}
	return refs
}

// addSource records that the fact key (kind prefix and text) came from row
// r, the oldest fact dropped past maxSources. Called per fact found, not per row.
func (st *State) addSource(key string, r Ref) {
	if i := st.source(key); i >= 0 {
		if n := len(st.Sources[i].Refs); n == 0 || st.Sources[i].Refs[n-1] != r {
			st.Sources[i].Refs = addRef(st.Sources[i].Refs, r)
		}
		return
	}
	st.Sources = last(append(st.Sources, Note{Text: key, Refs: []Ref{r}}), maxSources)
}

// setSource is addSource for a fact a newer row replaces outright (the plan, a set-aside goal).
func (st *State) setSource(key string, r Ref) {
	if i := st.source(key); i >= 0 {
		st.Sources[i].Refs = nil // addSource starts it again at r
	}
	st.addSource(key, r)
}

// source is the index of fact key's entry in Sources, -1 for none (a key has one: addSource adds none twice).
func (st *State) source(key string) int {
	return slices.IndexFunc(st.Sources, func(n Note) bool { return n.Text == key })
}

func (st *State) sourceRefs(key string) []Ref {
	if i := st.source(key); i >= 0 {
		return st.Sources[i].Refs
	}
	return nil
}

func (st *State) sourceRef(key string) Ref {
	if rs := st.sourceRefs(key); len(rs) > 0 {
		return rs[0]
	}
	return Ref{}
}

// ClearTask forgets the task: after /clear or `carryover clear` the next
// request is a new task, whatever it says. Files, done steps, decisions and
// references are the project's and stay.
func (st *State) ClearTask() {
	st.Task, st.TaskAt, st.GoalWeak, st.TaskRef = "", time.Time{}, false, Ref{}
	st.Latest, st.LatestAt, st.LatestRef = "", time.Time{}, Ref{}
	st.SetAside, st.Instructions, st.Plan, st.Actions = nil, nil, nil, nil
	st.TurnTexts, st.LastText, st.LastTextRef, st.LastTextSeq = nil, "", Ref{}, 0
	st.Refused, st.Interrupted, st.Accepted = nil, Note{}, Note{}
	st.Failures, st.FailureKeys, st.TestFails = nil, nil, nil
	st.Fallback, st.FallbackAt = "", time.Time{}
	st.AfterBreak, st.Answered, st.CauseKey = false, false, ""
}

// startTask forgets the last task's instructions; after "now …" (next) the user's constraints stand ("ускорь парсер,
// не меняй публичный API" then "теперь добавь бенчмарк"): the next step of the same work, until the user lifts them.
func (st *State) startTask(next bool) {
	st.Instructions = slices.DeleteFunc(st.Instructions, func(n Note) bool { return !next || !hasPhrase(strings.ToLower(n.Text), "constraint") })
	st.Refused, st.Interrupted = nil, Note{}
}

func subagentTool(name string) bool { // Claude's Task and Agent, Codex's spawn
	return name == "Task" || name == "Agent" || name == "spawn_agent"
}

var jsonFieldRE = lazyRE{expr: `"(description|prompt)"\s*:\s*"((?:[^"\\]|\\.){1,400})"`}

// jsonField reads a string field of a (maybe clipped) JSON input.
func jsonField(text, name string) string {
	for _, m := range jsonFieldRE.get().FindAllStringSubmatch(text, -1) {
		if m[1] == name {
			var v string
			if json.Unmarshal([]byte(`"`+m[2]+`"`), &v) == nil {
				return oneLine(v)
			}
		}
	}
	return ""
}

// Handoff reads the handoff out of the state.
func (st *State) Handoff(o Options) Handoff {
	h := Handoff{Tool: st.Tool, SessionID: st.SessionID, LastAt: st.LastAt, Rows: st.Rows, Prompts: st.Prompts,
		Task: st.Task, TaskAt: st.TaskAt, Tokens: st.Tokens}
	todos := st.filesInto(&h, o.Project)
	st.failuresInto(&h)
	st.userWordsInto(&h)
	st.listsInto(&h)
	st.taskInto(&h)
	failing := st.questionsInto(&h, todos)
	next, rule := st.Accepted.Text, "accepted offer"
	if st.Accepted.Text == "" {
		next, rule = st.nextAction(h, failing)
	}
	h.Next, h.NextRule = clip(next, 300), rule
	st.queuedInto(&h)
	st.evidenceInto(&h)
	st.doneInto(&h, o.Project)
	h.Ended = ending(st.Ended, &h)
	return h
}

// queuedInto: a prompt still queued when the session ended is the latest request and the next action (the agent never
// received it); the latest request before it stays among the user's words.
func (st *State) queuedInto(h *Handoff) {
	if st.Queued == "" {
		return
	}
	if h.Latest != "" {
		h.Instructions = append(h.Instructions, h.Latest)
	}
	h.Latest, h.Next, h.NextRule = st.Queued, clip("Answer the request the user queued, which the previous agent never received: "+oneLine(st.Queued), 300), "queued request"
}

type fileAcc struct {
	f    File
	last int64
}

func (acc *fileAcc) write(e Edit) {
	acc.f.At, acc.last, acc.f.Deleted, acc.f.Ref = e.At, e.Seq, e.Deleted, e.Ref
	if e.Deleted {
		acc.f.Created = false
	} else if e.Created && acc.f.Deleted {
		acc.f.Created = true
	}
}

// filesInto fills the files, newest first, ten at most: last write wins
// over edits whose call did not fail; a failing test after a file's last
// edit marks it. It returns the edits' to-dos.
func (st *State) filesInto(h *Handoff, project string) (todos []string) {
	files := map[string]*fileAcc{}
	var paths []string // first-seen order: ties in recency keep it
	for _, e := range st.Edits {
		if st.FailedCalls[e.Call] {
			continue
		}
		p := relPath(project, e.Path)
		acc, ok := files[p]
		if !ok {
			acc = &fileAcc{f: File{Path: p, Created: e.Created}}
			files[p] = acc
			paths = append(paths, p)
		}
		acc.write(e)
		todos = append(todos, e.Todos...)
	}
	for _, p := range paths {
		acc := files[p]
		acc.f.FailedAfter = st.testFailedAfter(acc.last)
		h.Files = append(h.Files, acc.f)
	}
	sort.SliceStable(h.Files, func(i, j int) bool { return files[h.Files[i].Path].last > files[h.Files[j].Path].last })
	h.MoreFiles, h.Files = max(0, len(h.Files)-10), h.Files[:min(10, len(h.Files))]
	return todos
}

// testFailedAfter: a test or build failed after seq and no later pass of its target fixed it (a build that failed
// after one edit and passed after the next leaves neither file "failed after").
func (st *State) testFailedAfter(seq int64) bool {
	return slices.ContainsFunc(st.Failures, func(f Failure) bool {
		return f.Seq > seq && !f.Resolved && slices.Contains(st.TestFails, f.Seq) // TestFails: the test/build failures' Seqs
	})
}

func (st *State) failuresInto(h *Handoff) {
	// A step the user refused this turn with nothing called since stands open ("not yet — wait for the backup"): the
	// agent's "I won't run it until the backup is done" claims nothing done. A completion said before the newest
	// request is an earlier turn's: it finishes nothing of this one.
	h.Completed = st.workDone(true) && st.LastCallSeq >= st.StopSeq && !st.unaddressed()
	prohibited := st.prohibitions()
	for i := len(st.Failures) - 1; i >= 0; i-- {
		f := st.Failures[i]
		f.Declined = f.Declined || !f.Resolved && declinedBy(prohibited, st.FailureKeys[i], f.Error)
		if h.Completed && st.leftBehind(f) {
			f.Superseded = !f.Resolved
			f.Resolved = true
		}
		h.Failures = append(h.Failures, f)
	}
	h.Completed = h.Completed && !slices.ContainsFunc(h.Failures, func(f Failure) bool { // a red verification is work left, whatever the agent said
		return !f.Resolved && !f.Declined && isTestCmd(f.What)
	})
}

// planChecked is the plan with a done item that names a file the user refused to let the agent write, and that the
// session never wrote, marked so: the tick is the agent's claim, the refusal the evidence ("[x] Create CLAUDE.md"
// after the user refused the Write).
func (st *State) planChecked() []PlanItem {
	plan := append([]PlanItem(nil), st.Plan...)
	for i, p := range plan {
		for _, r := range st.Refused {
			if f := namedFile(r.Text, p.Text); p.Done && f != "" && !st.wrote(f) {
				plan[i].Text += " — not done: the user refused " + r.Text
				break
			}
		}
	}
	return plan
}

// wrote: an edit of path whose call did not fail.
func (st *State) wrote(path string) bool {
	return slices.ContainsFunc(st.Edits, func(e Edit) bool { return e.Path == path && !st.FailedCalls[e.Call] })
}

// namedFile is the path in a stop's text ("Write /p/CLAUDE.md") whose file name (a dot in it, 4+ bytes) text names.
func namedFile(stop, text string) string {
	for _, w := range strings.Fields(stop) {
		base := w[strings.LastIndexAny(w, `/\`)+1:]
		if len(base) >= 4 && strings.Contains(base, ".") && strings.Contains(text, base) {
			return w
		}
	}
	return ""
}

// workDone: the agent's last words since the newest request report it done, or the tools show a fix verified,
// nothing failing since. edited: an edit since the request that a passing verification checked counts as a fix
// verified too, however the agent worded it ("Notes with newlines are quoted now"); a new goal is not read from it
// (nextAfterDone): "also add a Retry-After header" after a tested rate limiter goes on with the same work.
func (st *State) workDone(edited bool) bool {
	return st.LastTextSeq > max(0, st.AskSeq) && (completed(st.LastText) || st.verifiedFix(edited)) && !st.failedAfter(st.LastTextSeq)
}

// verifiedFix is completion shown by the tools, however the agent worded it ("go vet is clean now"): a failure was
// fixed (or, edited, an edit since the request was checked and the last words state no next step), none is left, and the last verification passed after the
// last edit and the newest request and before the agent's last words (a pass before "now also add an export command"
// verifies nothing of it).
func (st *State) verifiedFix(edited bool) bool {
	if st.LastPassSeq == 0 || st.LastPassSeq < st.AskSeq || st.LastPassSeq > st.LastTextSeq || st.editedSince(st.LastPassSeq) {
		return false
	}
	edited = edited && st.editedSince(st.AskSeq) && !goesOn(strings.ToLower(closingParagraph(st.LastText)))
	return (edited || len(st.Failures) > 0) && !slices.ContainsFunc(st.Failures, func(f Failure) bool { return !f.Resolved })
}

// editedSince: the newest edit came after row seq (Edits are in fold order).
func (st *State) editedSince(seq int64) bool {
	return len(st.Edits) > 0 && st.Edits[len(st.Edits)-1].Seq > seq
}

// leftBehind: after completion with nothing failing since, a failure before
// the last words is an approach left behind; a failing verification needs a
// pass since ("I've updated the parser" over a red test is a claim).
func (st *State) leftBehind(f Failure) bool {
	return f.Seq < st.LastTextSeq && (!isTestCmd(f.What) || st.LastPassSeq > f.Seq)
}

// failedAfter: a failure (not the model's) was recorded after seq.
func (st *State) failedAfter(seq int64) bool {
	return slices.ContainsFunc(st.Failures, func(f Failure) bool { return f.Seq > seq && !f.Resolved && f.What != "model API" })
}

func (st *State) listsInto(h *Handoff) {
	for _, d := range st.Decided { // a declined offer the turn then stopped at is under "Stopped by the user"
		if !slices.ContainsFunc(st.Refused, func(r Note) bool { return r.Text == d }) {
			h.Decisions = append(h.Decisions, d)
		}
	}
	h.SetAside = append([]string(nil), st.SetAside...)
	h.Plan = st.planChecked()
	h.Refs = append([]string(nil), st.Refs...)
	for _, a := range st.Actions {
		// The goal or latest request restated as an action item says nothing
		// the Task lines do not (a research prompt "Prepara un resumen…").
		if !sameText(a, st.Task) && !sameText(a, st.Latest) {
			h.Actions = append(h.Actions, a)
		}
	}
	h.Test = st.LastTest
	if st.Latest != "" && st.Latest != st.Task {
		h.Latest, h.LatestAt = st.Latest, st.LatestAt
	}
	h.Actions = slices.DeleteFunc(h.Actions, h.restated) // before the next action may take one
}

// restated: the clause holding action item a's marker ("has to", "must") has three words in four of its subject in
// the user's words (the goal, the latest request and the instructions together): it says again what the user decided or required
// ("The queue has to run on the existing Postgres database, so …" after "it must run on the existing database"); an
// agent's own sentence listed as a decision too is no user's word.
func (h *Handoff) restated(a string) bool {
	parts := strings.Split(a, ",")
	clause := parts[max(0, slices.IndexFunc(parts, func(c string) bool { return containsAny(" "+strings.ToLower(c), actionMarkers.list()) }))]
	ws, said, n := linkWords(clause), strings.ToLower(strings.Join(append([]string{h.Task, h.Latest}, h.Instructions...), " ")), 0
	for w := range ws { // a link word is a word's head: a substring of the user's words
		n += btoi(strings.Contains(said, w))
	}
	return len(ws) >= 2 && 4*n >= 3*len(ws)
}

// sameText: a (maybe clipped with "…") is the text of request b.
func sameText(a, b string) bool {
	b = oneLine(b)
	if b == "" {
		return false
	}
	return a == b || strings.HasSuffix(a, "…") && strings.HasPrefix(b, strings.TrimSuffix(a, "…"))
}

func (st *State) taskInto(h *Handoff) {
	h.Task, h.Latest = pastedCondensed(h.Task), pastedCondensed(h.Latest)
	if h.Task == "" && st.Fallback != "" {
		h.Task, h.TaskAt = summaryTask(st.Fallback), st.FallbackAt
	}
}

// pastedCondensed: a request pasting a log or trace, as its first sentence, constraints and the error its last lines
// name, not its head (the goal, or a follow-up "the deploy fails now:" over a gunicorn log); any other as it is.
func pastedCondensed(p string) string {
	if strings.Count(p, "\n") > 2 {
		if e := pastedError(p); e != "" && !strings.Contains(clip(oneLine(p), 200), e) {
			return condense(p)
		}
	}
	return p
}

// doneInto: the last twelve steps whose call did not fail.
func (st *State) doneInto(h *Handoff, project string) {
	for _, d := range st.Done {
		if d.Call != "" && st.FailedCalls[d.Call] {
			continue
		}
		text := d.Text
		if p, ok := strings.CutPrefix(text, "edited "); ok {
			text = "edited " + relPath(project, p)
		}
		h.Done = append(h.Done, text)
	}
	h.Done = last(h.Done, 12)
}

func (st *State) userWordsInto(h *Handoff) {
	for _, in := range st.Instructions {
		if len(in.Refs) > 0 && in.Refs[0] == st.TaskRef || st.Latest != "" && !in.At.Before(st.LatestAt) {
			continue // the Task lines carry it
		}
		h.Instructions = append(h.Instructions, in.Text)
	}
	for _, r := range st.Refused {
		h.Refused = append(h.Refused, "the user refused: "+r.Text+" (do not redo it without asking)")
	}
	h.Interrupted = st.Interrupted.Text
	h.LastWords = closingParagraph(st.LastText)
}

// evidenceInto records each line's rule and rows (carryover explain).
func (st *State) evidenceInto(h *Handoff) {
	add := h.addEvidence
	add("Task", h.Task, "goal: the request that set the work", st.TaskRef)
	add("Task", h.Latest, "latest request: a follow-up of the goal", st.LatestRef)
	for _, in := range st.Instructions {
		for _, t := range h.Instructions {
			if t == in.Text {
				add("Instructions", t, "the user's instruction, condensed (first sentence and constraints)", in.Refs...)
			}
		}
	}
	add("Next action", h.Next, h.NextRule, st.nextRefs(h)...)
	add("Last words", h.LastWords, "the closing paragraph of the last assistant message", st.LastTextRef)
	for i, r := range st.Refused {
		add("Stopped by the user", h.Refused[i], "a tool call the user refused, or a proposal they declined", r.Refs...)
	}
	add("Stopped by the user", h.Interrupted, "the user interrupted the turn", st.Interrupted.Refs...)
	for _, f := range h.Failures {
		rule := "a failing command or tool, collapsed by target"
		if f.Resolved {
			rule += "; resolved by a later pass of the same target, an edit then a passing verification, or completion"
		}
		add("Failed approaches", f.What, rule, f.Refs...)
	}
	st.listEvidence(h)
}

func (st *State) listEvidence(h *Handoff) {
	add := h.addEvidence
	for _, s := range h.SetAside {
		add("Set aside", s, "a goal an explicit switch of task set aside", st.sourceRef("s:"+s))
	}
	for _, p := range h.Plan {
		add("Plan", p.Text, "the plan the agent last wrote with its plan tool (a box is ticked when the agent marked the item done)", st.sourceRef("p:"))
	}
	for _, f := range h.Files {
		add("Recent files", f.Path, "a file write (an edit or create call, or a shell command that writes it) whose call did not fail; the last write is the row", f.Ref)
	}
	for _, q := range h.Questions {
		rule, refs := st.questionSource(q)
		add("Open questions", q, rule, refs...)
	}
	for _, d := range h.Decisions {
		add("Decisions", d, "a decision stated in a prompt or the agent's prose (or a question answered), superseding earlier ones on the same subject", st.sourceRefs("d:"+d)...)
	}
	for _, r := range h.Refs {
		add("References", r, "a URL, document, person or date named as a source", st.sourceRefs("r:"+r)...)
	}
	for _, a := range h.Actions {
		add("Action items", a, "a commitment or to-do stated in prose", st.sourceRefs("a:"+a)...)
	}
}

// addEvidence: text in section sec was chosen by rule from refs (zero Refs dropped).
func (h *Handoff) addEvidence(sec, text, rule string, refs ...Ref) {
	if text != "" {
		rs := slices.DeleteFunc(slices.Clone(refs), func(r Ref) bool { return r == Ref{} })
		h.Evidence = append(h.Evidence, Evidence{Section: sec, Text: text, Rule: rule, Refs: slices.Clip(rs)})
	}
}

func (st *State) nextRefs(h *Handoff) []Ref {
	switch h.NextRule {
	case "unanswered request":
		return []Ref{st.LatestRef, st.TaskRef}
	case "interruption":
		return st.Interrupted.Refs
	case "plan":
		return []Ref{st.sourceRef("p:")}
	case "refusal":
		if len(st.Refused) > 0 {
			return st.Refused[len(st.Refused)-1].Refs
		}
	case "still failing":
		for _, f := range h.Failures {
			if strings.Contains(h.Next, "`"+clip(f.What, 120)+"`") {
				return f.Refs
			}
		}
	case "action item":
		if len(h.Actions) > 0 {
			return st.sourceRefs("a:" + h.Actions[len(h.Actions)-1])
		}
	}
	return []Ref{st.LastTextRef}
}

// turnQuestion is the index of the turn text that asked q, or -1.
func turnQuestion(texts []string, q string) int {
	q = strings.TrimSuffix(q, "…")
	for i := len(texts) - 1; i >= 0; i-- {
		if strings.Contains(texts[i], q) || strings.Contains(strings.Join(strings.Fields(texts[i]), " "), q) {
			return i
		}
	}
	return -1
}

// questionSource: why q is an open question, and its rows — a failure's error rows, the turn text that asked, or the
// edit that added the to-do.
func (st *State) questionSource(q string) (rule string, refs []Ref) {
	if strings.HasPrefix(q, "unresolved: `") {
		if i := slices.IndexFunc(st.Failures, func(f Failure) bool { return strings.HasPrefix(q, "unresolved: `"+clip(f.What, 80)+"`") }); i >= 0 {
			refs = st.Failures[i].Refs
		}
		return "a failure nothing later resolved", refs
	}
	rule = "a to-do marker an edit added"
	if i := turnQuestion(st.TurnTexts, q); i >= 0 {
		if st.LastText != "" {
			rule = "a question the agent asked in the last turn, not answered since"
		}
		if len(st.TurnRefs) == len(st.TurnTexts) {
			return rule, []Ref{st.TurnRefs[i]}
		}
		return rule, []Ref{st.LastTextRef}
	}
	for _, e := range slices.Backward(st.Edits) {
		if slices.Contains(e.Todos, q) {
			return rule, []Ref{e.Ref}
		}
	}
	return rule, nil
}

// unaddressed: the agent closed after the latest request without writing a file since nor naming any of its words
// ("Done: the toggle is on the page, the choice saved in localStorage" over "and respect prefers-color-scheme"): its
// closing answers the requests before it, this one is open.
func (st *State) unaddressed() bool {
	return st.Latest != "" && st.LastTextSeq > st.AskSeq && !overlaps(st.LastText, st.Latest) &&
		!st.editedSince(st.AskSeq) || st.laterAskLeft() != ""
}

// Rules over what people wrote. Goal: the substantive request that set the
// work; follow-ups must not replace it. Structural rules, for any language:
//
//  1. An acknowledgement ("yes", "ok go ahead", "weiter", "好的", a slash
//     command; !substantive) changes nothing.
//  2. The first substantive prompt is the goal; weak when a question or under
//     three words: the next non-question request of weakWords replaces it.
//  3. An explicit switch ("drop that — fix the login 500 first", "vergiss
//     das", "新任务") replaces the goal and sets the old one aside.
//  4. A question (?, ？, ¿…, a CJK question particle) is a follow-up.
//  5. The first prompt after a compaction or in a new session is a follow-up
//     ("where were we", "continue with X") unless a switch or a new topic
//     (newTopic: newTopicWords or more, no content word shared with the goal,
//     not pointing back, continuing or adding to it, not a choice).
//  6. A sequence word ("now", "jetzt", "теперь", "接下来") opening a request
//     sharing no content word with the goal nor pointing back ("now make it
//     shorter") starts a new task: the goal replaced, not set aside; once the goal is done it needs no "now"
//     (nextAfterDone), and the done goal is set aside as "completed: …". The user's constraints stand across it.
//  7. Anything else is a follow-up. A compaction summary is never a request.
//
// Decisions, so the next agent does not re-debate them: a sentence that (1) says so ("we decided/chose/will use", "X
// instead of Y", lang/ decision); (2) a user's sentence opening with a choice verb ("use X", "don't add Z", "不要 …");
// (3) the user's statement answering the assistant's question ("„heute“ serverseitig" after "Where should 'today' be
// computed?"); one declining it ("no", "lass es", "不用") makes the proposal refused work instead. A later one
// supersedes one sharing two content words, or one when it says it replaces ("instead of", "statt", "вместо", "而不是").
//
// References and action items serve prose work (research, writing): sources named (URLs, documents, people, dates)
// and commitments ("send the deck to Anna by Friday").

const (
	weakWords     = 5 // a first request under it cannot hold against a fuller one ("hi, can you help?")
	newTopicWords = 6 // from this size a request in a new session can be new work, not a resume
)

// promptClass is what a prompt does to the goal.
type promptClass int

const (
	promptAck      promptClass = iota // changes nothing
	promptGoal                        // becomes the goal (first, or replacing a weak one)
	promptSwitch                      // replaces the goal; the old one is set aside
	promptNewTask                     // replaces the goal; the old one is done
	promptFollowUp                    // the latest request only
	promptCorrect                     // takes a term of the goal back: the goal, the old one kept as the user's words
)

// The lang/ lists the rules read. A switch phrase must not also be a
// decision: "use X instead of Y" is one, so "instead" counts only at the start.
const (
	nudgeWords       phraseName = "nudge"        // prompts that confirm or push on
	ackWords         phraseName = "ack"          // nudgeWords in the other languages
	switchMarkers    phraseName = "switch"       // anywhere in the prompt
	switchStarts     phraseName = "switch_start" // at the start ("instead, fix the login 500")
	sequenceStarts   phraseName = "sequence_start"
	andWords         phraseName = "and"          // joins two clauses: "fix X and then add Y"
	backRefs         phraseName = "back_ref"     // pronouns pointing back at the current work
	backRefCJK       phraseName = "back_ref_cjk" // the same without spaces
	thanksWords      phraseName = "thanks"
	assentWords      phraseName = "assent"
	backMarkers      phraseName = "back"     // "back to", "zurück zu", "回到"
	continueMarkers  phraseName = "continue" // whole words, a trailing * a stem, CJK anywhere
	resumeOpeners    phraseName = "resume_opener"
	decisionMarkers  phraseName = "decision"
	choiceStarts     phraseName = "choice_start"
	supersedeMarkers phraseName = "supersede"
	notSubject       phraseName = "not_subject" // stems of markers and function words: no subject
	actionMarkers    phraseName = "action"
	personTriggers   phraseName = "person"
	declineStarts    phraseName = "decline_start" // an answer opening with it turns the question's proposal down
	negations        phraseName = "negation"      // a word taking back the term it stands by (corrects)
	negationPost     phraseName = "negation_post" // a negation that follows the verb it turns down: "lösche nicht"
	prohibitPre      phraseName = "prohibit"      // zh: a prohibition glued to the verb after it, "不要删除"
	prohibitPost     phraseName = "prohibit_post" // ja: one glued to the verb before it, "削除しないで"
	offerWords       phraseName = "offer"         // the agent's question offers its own step ("Want me to …?")
	hedgeWords       phraseName = "hedge"         // a conditional ("could", "könnte"): proposes, reports nothing done
	nextEnds         phraseName = "next_end"      // a clause ending in it states the next step ("… to euros next.")
	whWords          phraseName = "wh"            // an embedded question's word: "tell me what to do next" leaves the step to the user
)

// substantive: a request, not a confirmation or nudge ("yes", "ok go ahead", "do it").
func substantive(p string) bool {
	p = strings.TrimSpace(p)
	if p == "" || strings.HasPrefix(p, "/") {
		return false
	}
	ws := promptWords(strings.ToLower(p))
	return len(ws) > 6 || slices.ContainsFunc(ws, func(w string) bool {
		w = strings.Trim(w, "'-")
		return !nudgeWords.has(w) && !ackWords.has(w)
	})
}

func refersBack(low string) bool {
	return slices.ContainsFunc(promptWords(low), func(w string) bool { return backRefs.has(strings.Trim(w, "'-")) }) ||
		containsAny(low, backRefCJK.list())
}

func isQuestion(p string) bool {
	t := strings.TrimRightFunc(strings.TrimSpace(p), func(r rune) bool { return unicode.IsSpace(r) || r == '。' || r == '.' })
	if t == "" {
		return false
	}
	if last, _ := utf8.DecodeLastRuneInString(t); strings.HasPrefix(t, "¿") || last == '?' || last == '？' {
		return true
	}
	return slices.ContainsFunc([]string{"吗", "呢", "か", "ですか", "ますか"}, func(suf string) bool { return strings.HasSuffix(t, suf) })
}

// promptSize is a length in words; in CJK two characters count as one.
func promptSize(p string) int {
	n := 0
	for _, w := range promptWords(p) {
		c := 0
		for _, r := range w {
			c += btoi(cjk(r))
		}
		n += max(1, (c+1)/2+btoi(c > 0 && c < utf8.RuneCountInString(w))) // a word, or its CJK pairs and its other letters
	}
	return n
}

// contentWords carry the subject: words of 4+ letters (lower-cased, cut to
// six: "tests" and "testing" meet), paths and file names, CJK bigrams.
func contentWords(s string) map[string]bool { return contentWordsCut(s, 6) }

func contentWordsCut(s string, n int) map[string]bool {
	out := map[string]bool{}
	for _, w := range promptWords(strings.ToLower(s)) {
		var han []rune
		for _, r := range w {
			if cjk(r) {
				han = append(han, r)
			}
		}
		if len(han) > 0 {
			for i := 0; i+1 < len(han); i++ {
				out[string(han[i:i+2])] = true
			}
			continue
		}
		rs := []rune(strings.Trim(w, "'-"))
		if len(rs) < 4 {
			continue
		}
		out[string(rs[:min(n, len(rs))])] = true
	}
	for _, f := range strings.Fields(s) {
		if strings.ContainsAny(f, "/.") && len(f) > 3 {
			out[strings.ToLower(strings.Trim(f, "`'\"()[]{},;:"))] = true
		}
	}
	return out
}

// overlaps: b shares a link word with a ("limiting" and "limiter" meet).
func overlaps(a, b string) bool { return sharedLinks(a, b) > 0 }

// linkWords are content words cut to five letters, without URLs, paths and file names (two requests citing https
// links or one src/ folder are not on one subject) nor lang/ stop words ("please", "could", "this").
func linkWords(s string) map[string]bool {
	kept := slices.DeleteFunc(strings.Fields(s), func(f string) bool {
		return strings.Contains(f, "://") || strings.HasPrefix(f, "www.") || strings.ContainsAny(f, "/\\")
	})
	out := contentWordsCut(strings.Join(kept, " "), 5)
	maps.DeleteFunc(out, func(w string, _ bool) bool { return strings.ContainsAny(w, "/.") })
	for _, p := range phrases("stop") {
		r := []rune(p)
		delete(out, string(r[:min(5, len(r))]))
	}
	return out
}

// startsWithAny: after leading acknowledgements ("ok, now …") and
// punctuation, low starts with one of the markers as a whole word.
func startsWithAny(low string, starts []string) bool {
	t := stripLeadingAcks(low)
	return slices.ContainsFunc(starts, func(m string) bool {
		rest, ok := strings.CutPrefix(t, m)
		return ok && wordEnds(rest)
	})
}

// opensWithDecline: low opens turning something down — a decline word first, or after a topic of at most three words
// and a comma ("le client, plus tard", "the CI config, not now", "nginx, agora não"): a reply often names what it
// declines before declining it.
func opensWithDecline(low string) bool {
	if startsWithAny(low, declineStarts.list()) {
		return true
	}
	topic, rest, ok := strings.Cut(stripLeadingAcks(low), ",")
	return ok && len(strings.Fields(topic)) <= 3 && !strings.ContainsAny(topic, ".!?;:") && startsWithAny(strings.TrimSpace(rest), declineStarts.list())
}

// wordEnds: rest, what follows a marker, starts past the marker's last word (not "no" in "nothing"; CJK has no spaces).
func wordEnds(rest string) bool {
	r, _ := utf8.DecodeRuneInString(rest)
	return rest == "" || !wordRune(r) || cjk(r)
}

func stripLeadingAcks(low string) string {
	t := strings.TrimSpace(low)
	for range 4 {
		t = strings.TrimLeftFunc(t, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) })
		end := strings.IndexFunc(t, func(r rune) bool { return !wordRune(r) })
		if end <= 0 {
			break
		}
		w := t[:end]
		if !nudgeWords.has(w) && !ackWords.has(w) || w == "now" || w == "next" || w == "then" {
			break
		}
		t = t[end:]
	}
	return strings.TrimLeftFunc(t, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) })
}

// thanksOnly: "Thanks, great work" after "Should I use 14 months of runway?"
// thanks without assenting; the question stays open.
func thanksOnly(p string) bool {
	thanks := false
	for _, w := range promptWords(strings.ToLower(p)) {
		w = strings.Trim(w, "'-")
		if assentWords.has(w) {
			return false
		}
		thanks = thanks || thanksWords.has(w)
	}
	return thanks
}

func (st *State) classifyPrompt(p string) promptClass {
	if st.asksNothing(p) {
		return promptAck
	}
	low := strings.ToLower(p)
	switch {
	case st.Task == "" || restates(p, st.Task):
		return promptGoal
	case containsAny(low, switchMarkers.list()) || startsWithAny(low, switchStarts.list()) || dropsTask(low, st.Task):
		return promptSwitch
	case st.correctedTerm(p) != "":
		return promptCorrect
	case isQuestion(p):
		return promptFollowUp
	case st.AfterBreak:
		if newTopic(p, low, st.Task) {
			return promptNewTask
		}
		return promptFollowUp
	case st.GoalWeak && promptSize(p) >= weakWords && !st.picksFromQuestion(p):
		return promptGoal
	case st.sequenceNewTask(p, low):
		return promptNewTask
	}
	return promptFollowUp
}

// dropsTask: "Forget the migration for now. Instead, add rate limiting": a sentence opening with a switch marker's verb
// (the marker less its back-reference: "forget that" → forget, "vergiss das" → vergiss) on an object naming the task,
// then one opening with a switch_start. The object must share a word with the task: "Drop the Redis dependency.
// Instead, use an LRU cache" during "Add caching" is a choice within the task, no switch.
func dropsTask(low, task string) bool {
	ss := sentences(low)
	for i := 1; i < len(ss); i++ {
		if startsWithAny(ss[i], switchStarts.list()) && startsWithAny(ss[i-1], dropVerbs()) && overlaps(ss[i-1], task) {
			return true
		}
	}
	return false
}

var dropVerbs = sync.OnceValue(func() []string {
	var out []string
	for _, m := range switchMarkers.list() {
		if i := strings.LastIndexByte(m, ' '); i > 0 && backRefs.has(m[i+1:]) {
			out = append(out, m[:i])
		}
	}
	return out
})

// picksFromQuestion: p answers the turn's last question with its words ("exponential, capped at 30 seconds" after
// "exponential or fixed?") or turns it down ("not yet, first show me …" after "Shall I write it?"): a decision, not a
// fuller goal; a request naming other work ("which task?" answered by naming it) is the goal.
func (st *State) picksFromQuestion(p string) bool {
	qs := turnQuestions(st.TurnTexts)
	_, declines := cutDeclines(strings.ToLower(p))
	return len(qs) > 0 && (overlaps(qs[len(qs)-1], p) || declines)
}

// correctedTerm: the request opens by taking a term of the goal back ("Halt, nicht CSV — als Excel", "Not the signup
// form: the reset form", "JSONじゃなくてlogfmtで", "不是CSV", "不是测试"): a negation (lang/ negation) among the first
// three terms, next to a name the goal holds (4+ letters or capitals), returned lower-cased. It becomes the goal, but the old one is not set
// aside as after a switch: one term was taken back, the rest stands ("Not the tests — leave them; fix the parser"
// keeps "the tokenizer tests fail"), so it stays first among the user's instructions. It drops the decisions naming
// the term ("zap の JSON エンコーダを使います" after "JSONじゃなくて").
func (st *State) correctedTerm(p string) string {
	var ts [5]string // the opening is enough, and no allocation: this runs on every request
	var at [5]int    // where each term starts in p
	n, off := 0, 0
	anyTerm(p, func(t string) bool {
		at[n] = off + strings.Index(p[off:], t)
		ts[n], off, n = t, at[n]+len(t), n+1
		return n == len(ts)
	})
	for i := range min(n, 3) { // "Not the tests", "No, not the tests", "No wait, not the tests"
		if c := st.cjkCorrected(ts[i]); c != "" {
			return c
		}
		pre, post := negationAt(ts[i])
		lo, hi := i+1, min(n, i+3)
		if pre && i > 0 {
			lo, hi = i-1, i
		} else if !post || i > 0 && !opensClause(ts[i-1], p[at[i-1]+len(ts[i-1]):at[i]]) {
			continue
		}
		for _, c := range ts[lo:hi] {
			if nameLike(c) && hasTerm(st.Task, c) && (pre || st.goalClause(p, c)) {
				return strings.ToLower(c)
			}
		}
	}
	return ""
}

// cjkCorrected: a CJK term opening with a negation takes back its own rest ("不是测试，测试是对的，改解析器": 测试) when
// the goal holds the rest's first two characters; "" when not.
func (st *State) cjkCorrected(t string) string {
	for _, m := range negations.list() {
		if rest, ok := strings.CutPrefix(t, m); ok && cjkString(t) && utf8.RuneCountInString(rest) >= 2 && strings.Contains(st.Task, string([]rune(rest)[:2])) {
			return rest
		}
	}
	return ""
}

// opensClause: a negation after the term prev and the separator sep opens its clause — sep closes one ("No wait, not
// the tests") or prev is a stop word ("Bitte nicht CSV"). Inside a clause the merged lists' words mean something else:
// Portuguese "funciona no CI" is "works in the CI", no Spanish "no".
func opensClause(prev, sep string) bool {
	return strings.ContainsAny(sep, clauseEnds) || stopWord(prev)
}

func stopWord(t string) bool {
	return slices.ContainsFunc(phrases("stop"), func(w string) bool { return strings.EqualFold(w, t) })
}

// goalClause: what follows the taken-back term up to the clause's end is the goal's words or stop words ("nicht CSV —",
// "Not the signup form —"); a word of its own there is a verb the negation is about ("Nicht die Tests ändern, sondern
// den Code …": leave the tests, the goal stands).
func (st *State) goalClause(p, c string) bool {
	rest := p[strings.Index(p, c)+len(c):]
	if i := strings.IndexAny(rest, clauseEnds); i >= 0 {
		rest = rest[:i]
	}
	return !anyTerm(rest, func(t string) bool { return !cjkString(t) && !hasTerm(st.Task, t) && !stopWord(t) })
}

// hasTerm: one of s's terms is t, whatever the case.
func hasTerm(s, t string) bool {
	return anyTerm(s, func(w string) bool { return strings.EqualFold(w, t) })
}

// dropCorrected drops the decisions naming the term a correction takes back.
func (st *State) dropCorrected(p string) {
	if t := st.correctedTerm(p); t != "" {
		st.Decided = slices.DeleteFunc(st.Decided, func(d string) bool { return hasTerm(d, t) })
	}
}

// negationAt: t negates the term before it (ja "…じゃなくて") or the terms after it ("nicht", "not", zh "不是…").
func negationAt(t string) (pre, post bool) {
	if !cjkString(t) {
		return false, slices.ContainsFunc(negations.list(), func(m string) bool { return strings.EqualFold(m, t) })
	}
	for _, m := range negations.list() {
		pre, post = pre || strings.HasSuffix(t, m), post || strings.HasPrefix(t, m)
	}
	return pre, post
}

// nameLike: a term that names something — 4+ letters and no stop word, or in capitals ("CSV", "S3").
func nameLike(t string) bool {
	if strings.IndexFunc(t, unicode.IsLower) < 0 && strings.IndexFunc(t, unicode.IsUpper) >= 0 {
		return len(t) >= 2
	}
	return utf8.RuneCountInString(t) >= 4 && !stopWord(t)
}

// anyTerm reports whether f holds for a term of s, calling it on each in order until it does: terms are words split
// at anything but letters and digits, and where a CJK run starts or ends ("JSONじゃなくてlogfmt": three terms).
func anyTerm(s string, f func(string) bool) bool {
	start, prev := -1, false
	for i, r := range s {
		word, c := unicode.IsLetter(r) || unicode.IsNumber(r), cjk(r)
		if start >= 0 && (!word || c != prev) {
			if f(s[start:i]) {
				return true
			}
			start = -1
		}
		if word && start < 0 {
			start = i
		}
		prev = c
	}
	return start >= 0 && f(s[start:])
}

// sequenceNewTask is rule 6: "now …" opening a request that shares no content word with the goal nor points back,
// nor pastes an error (a report on the current work: "agora dá erro ao arrancar:" over a stack trace).
func (st *State) sequenceNewTask(p, low string) bool {
	return startsWithAny(low, sequenceStarts.list()) && promptSize(p) >= 4 && !overlaps(st.Task, p) && !refersBack(low) &&
		pastedCondensed(p) == p || st.nextAfterDone(p, low)
}

// nextAfterDone: once the goal's work stands done (the agent reported it, or a fix verified), a request sharing no
// content word with it, not pointing back at it and no choice ("also add an export command that writes CSV") is the
// next task, with or without "now"; "also" adds to finished work, so it continues nothing. A back-reference counts in
// the request's first four words or as its last ("do the same for X", "add a test for it"), not as a relative
// pronoun further in ("a command that writes …").
func (st *State) nextAfterDone(p, low string) bool {
	if promptSize(p) < 4 || !st.workDone(false) || overlaps(st.Task, p) || isDecision(p, true) || pastedCondensed(p) != p || // cheap first: most prompts come mid-task
		len(turnQuestions(st.TurnTexts)) > 0 || opensWithDecline(low) && overlaps(st.LastText, p) { // an answer
		// ("no, not yet — wait for the backup") is no new task, nor a decline naming the work reported ("no, take the cache
		// out" after "I added a cache"; "No worries, thanks! Next add …" is a thank-you)
		return false
	}
	return !pointsBack(low)
}

// pointsBack: a back-reference in the request's first four words or as its last word, or a CJK one anywhere.
func pointsBack(low string) bool {
	ws := promptWords(low)
	return refersBack(strings.Join(ws[:min(4, len(ws))], " ")+" "+ws[len(ws)-1]) || containsAny(low, backRefCJK.list())
}

// laterAsk is what request req asks after a sequence word opening a clause ("fix the redirect loop, and then add a
// remember-me box": "add a remember-me box"), in the user's words; "" when it asks one thing.
func laterAsk(req string) string {
	low, at := strings.ToLower(req), len(req)
	for _, p := range sequenceStarts.list() {
		if i := clauseOpening(low, p); i > 0 {
			at = min(at, i)
		}
	}
	if at == len(req) || len(low) != len(req) {
		return ""
	}
	return strings.TrimLeft(req[at:], " ,:")
}

// clauseOpening is the end of phrase p's first use opening a clause of low after its start, or -1.
func clauseOpening(low, p string) int {
	for off := 0; off < len(low); {
		i := phraseAt(low[off:], p)
		if i < 0 {
			return -1
		}
		if i += off; i > 0 && clauseOpens(low[:i]) {
			return i + len(p)
		}
		off = i + len(p)
	}
	return -1
}

// clauseOpens: the text before a word ends a clause (a mark, "and", "und").
func clauseOpens(before string) bool {
	b := strings.TrimRight(before, " ")
	r, _ := utf8.DecodeLastRuneInString(b)
	return strings.ContainsRune(clauseEnds, r) || andWords.has(b[strings.LastIndexByte(b, ' ')+1:])
}

// laterAskLeft is the newest request's later ask when the work stands done and the agent's last words report on the
// first ask but name nothing of the later one: one message asked for two things and the session stopped after one.
// A reply to the agent's question right before it (addAnswer's "Q → A" decision) is one answer: its "then" explains
// the choice ("quote the fields, and then Excel opens them fine"), it asks nothing later.
func (st *State) laterAskLeft() string {
	req := cmp.Or(st.Latest, st.Task)
	later := laterAsk(req)
	if later == "" || overlaps(st.LastText, later) || !overlaps(st.LastText, req[:len(req)-len(later)]) || !st.workDone(true) ||
		slices.ContainsFunc(st.Decided, func(d string) bool { return strings.HasSuffix(d, " → "+clip(oneLine(req), 160)) }) {
		return ""
	}
	return later
}

func setsGoal(c promptClass) bool { return c != promptAck && c != promptFollowUp }

// restates: p is the goal re-sent, completed (enter hit mid-sentence, an
// aider /ask re-run with more words): the fuller text is the goal.
func restates(p, goal string) bool {
	g := strings.TrimRight(strings.TrimSpace(goal), " .…。")
	return utf8.RuneCountInString(g) >= 8 && len(p) > len(goal) && strings.HasPrefix(strings.ToLower(p), strings.ToLower(g))
}

// returnTo is the set-aside goal a request says "back to" and shares a content word with; -1 when none.
func (st *State) returnTo(p string) int {
	if len(st.SetAside) == 0 || !containsAny(strings.ToLower(p), backMarkers.list()) {
		return -1
	}
	for i := len(st.SetAside) - 1; i >= 0; i-- {
		if overlaps(st.SetAside[i], p) {
			return i
		}
	}
	return -1
}

func newTopic(p, low, goal string) bool {
	if isQuestion(p) || promptSize(p) < newTopicWords || goal == "" || overlaps(goal, p) || refersBack(low) ||
		isDecision(p, true) {
		return false
	}
	words := " " + strings.Join(promptWords(low), " ") + " "
	return !slices.ContainsFunc(continueMarkers.list(), func(m string) bool { // whole words, a trailing * a stem, CJK anywhere
		stem, ok := strings.CutSuffix(m, "*")
		return cjkString(m) && strings.Contains(low, m) || ok && strings.Contains(words, " "+stem) || strings.Contains(words, " "+m+" ")
	})
}

// asksNothing: a confirmation or nudge, or after a break a bare resume.
func (st *State) asksNothing(p string) bool {
	return !substantive(p) || st.AfterBreak && resumesOnly(p)
}

// resumesOnly: a short opener pointing at earlier work ("continue where claude stopped", "pick up where you left
// off") after a compaction or in another session asks for nothing new: an acknowledgement, never "Latest request".
func resumesOnly(p string) bool {
	return promptSize(p) < 8 && containsAny(strings.ToLower(p), resumeOpeners.list())
}

// weakGoal (rule 2); a short request whose object is a pronoun ("Explain what this is") names nothing: the next says
// what "this" is. So does an opener pointing at earlier work ("We were working on the task", a real Russian aider
// session's first prompt).
func weakGoal(p string) bool {
	return isQuestion(p) || promptSize(p) < 3 || resumesOnly(p) ||
		promptSize(p) < 8 && refersBack(strings.ToLower(p)) && namesNothing(p)
}

// namesNothing: no link word but the first ("Schau dir das mal an"; "Fix it in the parser" names one).
func namesNothing(p string) bool {
	ws := linkWords(p)
	if f := promptWords(strings.ToLower(p)); len(f) > 0 {
		r := []rune(f[0])
		delete(ws, string(r[:min(5, len(r))]))
	}
	return len(ws) == 0
}

func (st *State) addPrompt(p string, sid int64, at time.Time) promptClass {
	p = strings.TrimSpace(p)
	if st.PromptSession != 0 && sid != st.PromptSession {
		st.AfterBreak = true // another session of the project: a resume
	}
	st.PromptSession = sid
	class, resumed := st.classifyPrompt(p), st.AfterBreak
	if class != promptAck {
		st.AfterBreak = false
		if i := st.returnTo(p); i >= 0 {
			// "Now back to the login rate limiting": it is current again, the detour set aside.
			back := st.SetAside[i]
			st.SetAside = append(st.SetAside[:i:i], st.SetAside[i+1:]...)
			if st.Task != "" {
				st.setAside()
			}
			st.Task, st.TaskAt, st.GoalWeak = back, at, false
			st.Latest, st.LatestAt, st.LatestRef = p, at, st.RowRef
			return promptFollowUp
		}
	}
	switch class {
	case promptGoal, promptNewTask:
		st.finishTask(class == promptNewTask && !resumed)
		st.Task, st.TaskAt, st.GoalWeak = p, at, weakGoal(p)
		st.Latest, st.LatestAt = "", time.Time{}
	case promptSwitch, promptCorrect:
		st.dropCorrected(p)
		if class == promptSwitch && st.Task != "" && st.Task != p {
			st.setAside()
		}
		st.Task, st.TaskAt, st.GoalWeak = p, at, false
		st.Latest, st.LatestAt = "", time.Time{}
	case promptFollowUp:
		st.setLatest(p, at)
	}
	return class
}

// setLatest makes p the latest request. A prompt the agent has not answered the one before yet, in a session where it
// has worked, is typed into the same turn (Claude Code's queued prompts, a screenshot's caption under a request): it
// joins that request, never a replacement hiding the earlier words; a log of the user's prompts alone joins nothing.
// It joins while the handoff's latest-request line (150 bytes) still shows its first 20 bytes: a longer run starts a
// new line, the earlier prompts staying among the instructions. The line's row stays the first prompt's.
func (st *State) setLatest(p string, at time.Time) {
	if st.Latest != "" && !st.Answered && max(st.LastTextSeq, st.LastCallSeq) > 0 && len(st.Latest) < 130 {
		st.Latest += " / " + p
		return
	}
	st.Latest, st.LatestAt, st.LatestRef = p, at, st.RowRef
}

// finishTask sets a done goal aside as completed when a new task follows it in the same session ("Done: retry.py has
// the helper" then "Now write the changelog entry"): finished, not pending; another session's work is history.
func (st *State) finishTask(next bool) {
	if next && st.workDone(false) {
		st.Task = "completed: " + st.Task
		st.setAside()
	}
}

func (st *State) setAside() {
	g := clip(oneLine(st.Task), 200)
	st.SetAside = last(append(st.SetAside, g), keepSetAside)
	st.setSource("s:"+g, st.TaskRef)
}

// harnessTags open user-role text the harness wrote: task and subagent
// notifications (Claude Code 2.1), IDE context, reminders.
var harnessTags = []string{"<task-notification", "<system-reminder", "<ide_opened_file", "<ide_selection", "<ide_diagnostics",
	"<environment_context", "<user_instructions", "<local-command", "<command-message", "<bash-", "<turn_aborted", "<subagent_notification"}

// userWords is what the user wrote of a user-role text, the harness's wrappers dropped (Codex Desktop's "# Files
// mentioned by the user: … ## My request for Codex:" keeps the request; leading IDE blocks go). harness: nothing of
// the user's remains (a task notification).
func userWords(text string) (string, bool) {
	t := strings.TrimSpace(text)
	if i := strings.Index(t, "## My request for "); i >= 0 {
		if j := strings.Index(t[i:], ":"); j >= 0 {
			t = strings.TrimSpace(t[i+j+1:])
		}
	}
	for range 8 {
		tag := slices.IndexFunc(harnessTags, func(h string) bool { return strings.HasPrefix(t, h) })
		if tag < 0 {
			break
		}
		end := strings.Index(t, "</"+strings.TrimRight(strings.TrimPrefix(harnessTags[tag], "<"), "-"))
		gt := strings.IndexByte(t[max(end, 0):], '>')
		if end < 0 || gt < 0 {
			return "", true // unclosed: all of it is the harness's
		}
		t = strings.TrimSpace(t[end+gt+1:])
	}
	return t, t == ""
}

// boundaryCommand: /clear, /new, /reset (Claude Code, Codex, Gemini, aider) start a new task.
func boundaryCommand(p string) bool {
	f := strings.Fields(strings.ToLower(p))
	return len(f) > 0 && slices.Contains([]string{"/clear", "/new", "/reset"}, f[0])
}

// addInstruction keeps a request condensed, the goal first and the newest of the rest; one replacing an earlier on
// its subject ("use Redis instead of the in-memory cache") drops it, never the goal.
func (st *State) addInstruction(p string, at time.Time, ref Ref) {
	c := condense(p)
	if c == "" {
		return
	}
	kept := st.Instructions[:0:0]
	for i, in := range st.Instructions {
		if in.Text == c {
			return
		}
		if i == 0 || !supersedes(p, in.Text, true) {
			kept = append(kept, in)
		}
	}
	st.Instructions = evictPlain(append(kept, Note{Text: c, At: at, Refs: []Ref{ref}}))
}

// evictPlain bounds the instructions to maxInstructions by dropping the oldest after the goal that constrains
// nothing ("add a header row"): a constraint stated early ("don't touch the migrations", "use pnpm, not npm") stays
// in force through any number of later requests. With only constraints left, the oldest goes.
func evictPlain(ins []Note) []Note {
	if len(ins) <= maxInstructions {
		return ins
	}
	i := 1 + slices.IndexFunc(ins[1:], func(n Note) bool { return !hasPhrase(strings.ToLower(n.Text), "constraint") })
	return slices.Delete(ins, max(1, i), max(1, i)+1)
}

// condense is a request's first sentence and those that constrain the work ("keep", "don't", "never", "must"; lang/
// constraint), a pasted trace's last exception line, at most 400 bytes.
func condense(p string) string {
	ss := sentences(p)
	for len(ss) > 1 && !substantive(ss[0]) { // "Great! Can you also …": the asking sentence leads
		ss = ss[1:]
	}
	if len(ss) == 0 {
		return ""
	}
	out := []string{ss[0]}
	for _, s := range ss[1:] {
		if low := strings.ToLower(s); prose(s) && (hasPhrase(low, "constraint") || startsWithAny(low, negations.list())) { // "Ne supprime pas …"
			out = append(out, s)
		}
	}
	if strings.Count(p, "\n") > 2 {
		if e := pastedError(p); e != "" && !strings.Contains(strings.Join(out, " "), e) {
			out = append(out, e)
		}
	}
	return clip(clip(normCmd(strings.Join(out, " ")), 400), 400)
}

// pastedError: the error line of a pasted log or trace — one naming an error, or a compiler's diagnostic at a source
// location behind a CI log's timestamp ("2026-11-20T10:00:09Z internal/store/pg.go:41:9: undefined: pgx.Conn").
// A line counting none ("0 errors, 1 warning", "Found 0 errors.") names no error: the paste reports success.
func pastedError(p string) string {
	e := errorLine(p)
	if loc, _ := location(e); mayNameError(e) && !noErrors(strings.ToLower(e)) || loc {
		return e
	}
	return ""
}

func noErrors(low string) bool {
	i := strings.Index(low, "0 error")
	return i == 0 || i > 0 && !unicode.IsDigit(rune(low[i-1]))
}

func mayDecideAny(low string) bool {
	return mayDecide(low) || containsPhrase(low, "contrast") || containsAny(low, decisionMarkers.list())
}

// isDecision applies decision rules 1 and 2.
func isDecision(s string, user bool) bool {
	if isQuestion(s) {
		return false
	}
	low := strings.ToLower(s)
	if explicitDecision(s, low) || contrastChoice(s, low) {
		return true
	}
	if !user || promptSize(s) < 3 {
		return false
	}
	return startsWithAny(low, choiceStarts.list()) || startsWithAnyPrefix(stripLeadingAcks(low), choiceStarts.list()) || reverses(low)
}

// reverses: the user turns down what stands and says what replaces it ("no, go back to Redis", "nein, doch lieber
// zurück zu …", "No, use Postgres instead"): a decline, then a pointer back or a replacement (lang/ back, supersede).
// It is a decision, and supersedes the earlier one on its subject (a user who changes their mind twice).
func reverses(low string) bool {
	marked := func(t string) bool {
		return containsAny(t, backMarkers.list()) || containsAny(t, supersedeMarkers.list())
	}
	if !marked(low) {
		return false // the cheap test first: supersedes asks this of every request and decision
	}
	rest, ok := cutDeclines(low)
	return ok && marked(rest)
}

func explicitDecision(s, low string) bool {
	return mayDecide(low) && decisionRE.get().MatchString(s) || containsAny(low, decisionMarkers.list())
}

// proposal: the agent's contrast on a list line ("1. Call inject on release, not on every press") proposes a step
// the user never accepted; no decision unless it says it was decided. After the turn's edits (edited) the list
// reports what was carried out ("- Used UTC timestamps, not local time"), unless its heading looks ahead or asks,
// and never when the item hedges ("- We could move the export to a job rather than the request path").
func proposal(text, s string, edited bool) bool {
	i := strings.Index(text, s)
	if i < 0 {
		return false
	}
	start := strings.LastIndexByte(text[:i], '\n') + 1
	low := strings.ToLower(s)
	if !listLine(strings.TrimSpace(text[start:])) {
		return false
	}
	if containsAny(low, hedgeWords.list()) {
		return true // even with a marker: "- We could use X instead of Y", "- Man könnte X statt Y"
	}
	return !explicitDecision(s, low) && (!edited || aheadHeading(text[:start]))
}

// aheadHeading: the last line before a list, not an item, looks ahead ("Next steps:", "Remaining:") or asks.
func aheadHeading(before string) bool {
	lines := strings.Split(strings.TrimSpace(before), "\n")
	h := strings.TrimSpace(lines[len(lines)-1])
	for j := len(lines) - 1; j > 0 && listLine(h); j-- {
		h = strings.TrimSpace(lines[j-1])
	}
	low := strings.ToLower(h)
	return forwardLooking(h) || isQuestion(h) || hasPhrase(low, "remaining") || containsPhrase(low, "next")
}

// contrastChoice: a choice against a short alternative without a marker
// word ("We store the full payload, not just the event id"; "Postgres statt
// SQLite"), in prose.
func contrastChoice(s, low string) bool {
	for _, m := range phrases("contrast") {
		i := strings.Index(low, m)
		if i <= 0 {
			continue
		}
		alt := promptSize(low[i+len(m):])
		if alt >= 1 && alt <= 8 && promptSize(low[:i]) >= 2 && prose(s) {
			return true
		}
	}
	return false
}

// addDecision drops the decisions s supersedes and exact repeats.
func (st *State) addDecision(s string) {
	k := strings.ToLower(s)
	if slices.Contains(st.Seen, k) || slices.ContainsFunc(st.Decided, func(d string) bool { return strings.HasSuffix(d, " → "+s) }) {
		return // a repeat, or the words already recorded as the answer to a question
	}
	st.Seen = last(append(st.Seen, k), maxSeen)
	kept := st.Decided[:0:0]
	for _, d := range st.Decided {
		if !supersedes(s, d, false) {
			kept = append(kept, d)
		}
	}
	st.Decided = last(append(kept, clip(s, 200)), keepDecided)
	st.addSource("d:"+clip(s, 200), st.RowRef)
}

// Supersedes: decision s replaces earlier, as the fold decides (the decisions log drops what the fold dropped).
func Supersedes(s, earlier string) bool { return supersedes(s, earlier, false) }

// supersedes: s and earlier share two subject words (unless explicit), or
// one when s says it replaces something or turns it down (reverses).
func supersedes(s, earlier string, explicit bool) bool {
	low := strings.ToLower(s)
	replaces := containsAny(low, supersedeMarkers.list()) || reverses(low)
	if explicit && !replaces {
		return false
	}
	n := shared(subjectWords(earlier), subjectWords(s))
	return n >= 2 && !explicit || replaces && n >= 1
}

func subjectWords(s string) map[string]bool {
	w := contentWords(s)
	maps.DeleteFunc(w, func(k string, _ bool) bool { return notSubject.has(k) })
	return w
}

// addDecisions scans a prompt (user) or assistant text. In the prompt that
// sets a goal the first sentence is the task; only later ones can state
// choices ("Build the importer. Stream the rows, don't load the whole file.").
func (st *State) addDecisions(text, low string, user, goal bool) {
	if !user && !goal && !mayDecideAny(low) {
		return
	}
	ss := sentences(text)
	for i, s := range ss {
		if goal && i == 0 || diagnosis(ss, i) {
			continue // even worded "X statt Y": the Task line carries it
		}
		if isDecision(s, user || goal && i > 0) && (user || goal || !proposal(text, s, st.editedThisTurn())) {
			st.addDecision(questionPrefixRE.get().ReplaceAllString(s, "")) // an item's text, not its "1."
		}
	}
}

// diagnosis: sentence i states what is wrong — a cause phrase opening its claim ("Das Problem ist, dass der Export
// die lokale Zeit statt UTC schreibt"), or in a label of at most four words before it ("Found the bug. The coupon is
// subtracted after VAT instead of before."). Worded as a contrast it reads as a choice, but it is the bug the fix
// reverses: as a decision it would tell the next agent to keep it. A choice before the cause gives its reason ("We
// decided to use buf because it pins versions"); a longer sentence before ("The problem was the timezone.") is a
// cause of its own: the decision after it stands.
func diagnosis(ss []string, i int) bool {
	return causeOpens(strings.ToLower(ss[i])) || i > 0 && promptSize(ss[i-1]) <= 4 && containsAny(strings.ToLower(ss[i-1]), causeMarkers.list())
}

// causeOpens: a cause phrase with no choice before it.
func causeOpens(low string) bool {
	return slices.ContainsFunc(causeMarkers.list(), func(m string) bool {
		j := strings.Index(low, m)
		return j >= 0 && !mayDecideAny(low[:j])
	})
}

// editedThisTurn: a file write since the latest request whose call has not failed.
func (st *State) editedThisTurn() bool {
	return st.editedSince(st.AskSeq) && !st.FailedCalls[st.Edits[len(st.Edits)-1].Call]
}

// addAnswer records a statement answering the assistant's open question
// (rule 3); an acknowledgement answers "yes", a long reply is a request.
func (st *State) addAnswer(q, answer string) {
	if q == "" || isQuestion(answer) && !opensWithDecline(strings.ToLower(answer)) || boilerplate(q) {
		return // a question back answers nothing, unless it opens turning the offer down ("not now. Can you add …?")
	}
	a := oneLine(answer)
	if !substantive(answer) {
		a = "yes"
	} else if promptSize(answer) > 40 {
		return
	}
	line := clip(strings.TrimRight(q, "?？ \u00a0"), 120) + " → " + clip(a, 160)
	st.addDecision(line)
	switch {
	case opensWithDecline(strings.ToLower(a)):
		// "leave it for now" after "Shall I fix both?": the offer is work the user refused, as a refused tool call is
		// — never the next action, never to redo without asking — unless the agent then works (keptDecline).
		st.Refused, st.StopSeq = last(append(st.Refused, Note{Text: line, Refs: []Ref{st.RowRef}}), keepStops), st.Seq
	case assentWords.has(strings.Trim(promptWords(strings.ToLower(a))[0], "'-")): // an acknowledgement's a is "yes"
		if containsAny(strings.ToLower(q), offerWords.list()) {
			// "Want me to make that change?" → "yes please": the step offered is the next action until the agent acts.
			st.Accepted = Note{Text: "Carry out what the user accepted (\"" + clip(oneLine(answer), 80) + "\"): " + st.offeredStep(q), Refs: []Ref{st.RowRef}}
		}
	}
}

// offeredStep: what an offer proposes — the question itself, or when it points back ("Want me to make that
// change?") the turn's sentence before it ("I recommend making parseDate return an error …") unless it diagnoses.
func (st *State) offeredStep(q string) string {
	step := strings.TrimRight(q, "?？ ")
	if !refersBack(strings.ToLower(q)) {
		return step
	}
	prev := ""
	for _, s := range sentences(strings.Join(st.TurnTexts, "\n")) {
		if strings.Contains(s, strings.TrimSuffix(q, "…")) {
			return cmp.Or(prev, step)
		}
		if !isQuestion(s) {
			prev = s
			if containsAny(strings.ToLower(s), causeMarkers.list()) {
				prev = "" // a diagnosis ("The pod panics because DATABASE_URL is missing") is no step: the offer is
			}
		}
	}
	return step
}

// keptDecline: a tool call after a declined offer in the same turn ("No, remove it" then the removal) shows the
// answer was an instruction: it stays a decision, not a stop.
func (st *State) keptDecline() {
	if n := len(st.Refused); st.StopSeq > 0 && n > 0 && st.StopSeq == st.AskSeq { // the stop is the prompt's decline
		st.Refused, st.StopSeq = st.Refused[:n-1], 0
	}
}

// The reference patterns, each run only on lines holding its trigger (every
// prompt and reply goes through them: one combined pattern over whole texts
// cost ~10 µs a row).
var (
	docRE = lazyRE{expr: `\b[\w][\w\-]*\.(?:pdf|docx?|xlsx?|pptx?|key|pages|numbers|odt|csv|epub)\b`}
	atRE  = lazyRE{expr: `(?:^|[\s(])@[A-Za-z0-9][A-Za-z0-9\-]{1,38}(?:$|[\s,;:!?)]|\.(?:\s|$))|` + // handle (not @decorator_name, not @pkg/name)
		`\b[\w.+\-]+@[\w\-]+\.[\w.\-]+\b`} // e-mail
	dateRE = lazyRE{expr: `\b(?:19|20)\d\d-[01]\d-[0-3]\d\b|` + // ISO date
		`\bQ[1-4] (?:19|20)\d\d\b|` + // quarter
		`\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]* [0-3]?\d(?:, (?:19|20)\d\d)?\b|` +
		`\b[0-3]?\d\.? (?:Jan|Feb|Mär|Mar|Apr|Mai|May|Jun|Jul|Aug|Sep|Okt|Oct|Nov|Dez|Dec|janv|févr|mars|avr|mai|juin|juil|août|sept|oct|nov|déc|ene|abr|ago|dic|fev|set|out|dez)[a-zéû]*\.?(?: (?:19|20)\d\d)?\b`}
	// citeRE: "Bloom et al. (2015)" in any language; deDateRE: "12 de marzo de 2024", which dateRE misses.
	citeRE   = lazyRE{expr: `\p{Lu}[\p{L}\-]+(?: (?:and|y|und|et|e|и) \p{Lu}[\p{L}\-]+)? et al\.?(?:,? \(?(?:19|20)\d\d\)?)?`}
	deDateRE = lazyRE{expr: `\b[0-3]?\d de (?:enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|diciembre|janeiro|fevereiro|março|maio|junho|julho|setembro|outubro|novembro|dezembro)(?: de (?:19|20)\d\d)?`}
	// personRE: a capitalised name after "according to", "per", "laut", "selon"… (personTriggers).
	personRE = lazyRE{expr: `\b(?i:according to|per|cited by|interview with|feedback from|laut|nach Angaben von|selon|d'après|según|de acuerdo con|segundo|de acordo com|по словам|entrevista a|entrevista con)\s+((?:Dr\.?\s+|Prof\.?\s+)?\p{Lu}\p{Ll}+(?:\s+\p{Lu}\p{Ll}+)?)`}
	// The triggers: dateRE's month names (with a digit) and docRE's extensions.
	monthTokens = []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec", "Mär", "Mai", "Okt", "Dez",
		"janv", "févr", "mars", "avr", "mai", "juin", "juil", "août", "sept", "oct", "nov", "déc", "ene", "abr", "ago", "dic", "fev", "set", "out", "dez"}
	docExts = []string{".pdf", ".doc", ".xls", ".ppt", ".key", ".pages", ".numbers", ".odt", ".csv", ".epub"}
)

func isoDateLike(s string) bool {
	for i := 4; i+6 <= len(s); i++ {
		if s[i] == '-' && s[i+3] == '-' && digits(s[i-4:i]) && digits(s[i+1:i+3]) && digits(s[i+4:i+6]) { // the loop bounds i+6
			return true
		}
	}
	return false
}

func digits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// personMatches runs personRE only on a short window after each trigger
// ("per attempt" is common prose), or on the whole text when lower-casing
// changed byte offsets.
func personMatches(text, low string) []string {
	var out []string
	if len(low) != len(text) {
		for _, m := range personRE.get().FindAllStringSubmatch(text, -1) {
			out = append(out, m[1])
		}
		return out
	}
	seen := map[int]bool{}
	for _, t := range personTriggers.list() {
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
			if m := personRE.get().FindStringSubmatch(text[i:min(len(text), i+len(t)+60)]); m != nil {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// references returns the references text names, in order. Code (fences and
// `spans`) names none: @decorators, paths, versions; toolTurn: no dates, handles or e-mails (offTool).
func references(text, low string, toolTurn bool) []string {
	var on [len(refFinders)]bool
	anyOn := false
	for i := range refFinders {
		on[i] = refFinders[i].on(text, low, toolTurn)
		anyOn = anyOn || on[i]
	}
	hasPerson := containsAny(low, personTriggers.list())
	if !anyOn && !hasPerson {
		return nil
	}
	if strings.Contains(text, "`") {
		text = stripCode(text)
		low = strings.ToLower(text)
	}
	var out []string
	if hasPerson && containsAny(low, personTriggers.list()) {
		out = addRefs(out, personMatches(text, low))
	}
	for _, line := range strings.Split(text, "\n") {
		for i, f := range refFinders {
			if on[i] && (f.line == nil || f.line(line)) {
				out = addRefs(out, f.matches(line))
			}
		}
	}
	return out
}

// refFinder is one kind of reference, in a line's listing order: gate a
// cheap test of the whole text (nil: line's), line one of a line (nil:
// none), before find runs there.
type refFinder struct {
	gate func(text, low string) bool
	line func(line string) bool
	find func(line string) []string
	re   *lazyRE // instead of find
	// offTool: what a tool turn's text names is read off the tools' output or the code (an mtime, a log date, an
	// @Observable attribute, a commit's e-mail), not a reference of the work.
	offTool bool
}

func (f *refFinder) on(text, low string, toolTurn bool) bool {
	switch {
	case f.offTool && toolTurn:
		return false
	case f.gate != nil:
		return f.gate(text, low)
	}
	return f.line(text)
}

func (f *refFinder) matches(line string) []string {
	if f.re != nil {
		return f.re.get().FindAllString(line, -1)
	}
	return f.find(line)
}

var refFinders = [...]refFinder{
	{gate: func(t, _ string) bool { return strings.Contains(t, "://") }, find: urls},
	{gate: docGate, line: func(l string) bool { return docGate(l, strings.ToLower(l)) }, re: &docRE},
	{line: atGate, re: &atRE, offTool: true},
	{line: citeGate, re: &citeRE},
	{line: deDateGate, re: &deDateRE, offTool: true},
	{line: dateGate, re: &dateRE, offTool: true},
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

func urls(line string) []string {
	var out []string
	for rest := line; ; {
		i := strings.Index(rest, "://")
		if i < 0 {
			return out
		}
		start := strings.LastIndexFunc(rest[:i], func(r rune) bool { return r < 'a' || r > 'z' }) + 1 // the scheme
		end := len(rest)
		if j := strings.IndexAny(rest[i+3:], " \t<>()\"'`]\x1b\a"); j >= 0 {
			end = i + 3 + j
		}
		// ESC ] 8 ; params ; URL (ESC \ or BEL) text: an OSC 8 link's target, hidden from who reads the text.
		hidden := start > 0 && rest[start-1] == ';' && end < len(rest) && rest[end] < ' '
		if scheme := rest[start:i]; (scheme == "http" || scheme == "https") && !hidden {
			out = append(out, rest[start:end])
		}
		rest = rest[end:]
	}
}

// addRefs appends ms trimmed of the punctuation around them.
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

// actionItems: prose sentences (no questions) stating something to be done. A user's sentence that constrains the
// work ("the migrations folder must stay untouched"; lang/ constraint) is an instruction, kept as one, not a to-do.
func actionItems(text, low string, user bool) []string {
	if !containsAny(low, actionMarkers.list()) {
		return nil
	}
	out := sentencesWhere([]string{text}, func(s string) bool {
		return containsAny(" "+strings.ToLower(s), actionMarkers.list()) && // first: most sentences have none
			!isQuestion(s) && prose(s) && !boilerplate(s) && !(user && hasPhrase(strings.ToLower(s), "constraint"))
	})
	for i, s := range out {
		out[i] = clip(s, 200)
	}
	return out
}

// addItems appends the items not yet in *list, keeping the newest n, and records the row as each one's source (kind
// "r:" a reference, "a:" an action item).
func (st *State) addItems(list *[]string, kind string, items []string, n int) {
	for _, it := range items {
		if !slices.Contains(*list, it) {
			*list = append(*list, it)
		}
		st.addSource(kind+it, st.RowRef)
	}
	*list = last(*list, n)
}

func stripCode(text string) string {
	var b strings.Builder
	for l := range outsideFences(text) {
		parts := strings.Split(l, "`")
		for i := 0; i < len(parts); i += 2 {
			b.WriteString(parts[i])
			b.WriteByte(' ')
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// endsNext: the sentence ends in a next_end phrase, a leading ␣ making it a whole word ("CSV export is in; converting
// the amounts to euros next.", "Die Umrechnung kommt als Nächstes."): the agent's closing states its next step.
func endsNext(s string) bool {
	low := " " + strings.TrimRight(strings.ToLower(s), " .!。！")
	return slices.ContainsFunc(nextEnds.list(), func(m string) bool { return strings.HasSuffix(low, m) })
}

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
	nextMarkers phraseName = "next_marker" // beyond nextPhrases' English
	// nextPhrases: `next,? (i|we)(…)|(i|we)('ll| will) next|next step|then (i|we)(…)|next up|after that,? (i|we)(…)|…`.
	nextPhrases        phraseName = "next_phrase"
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
//
// It visits only the words that start with '-', found by IndexByte: a command can be a heredoc of kilobytes, and
// splitting all of it into words cost ~0.6M instructions of an incremental Stop (4 %; cachegrind).
func dryRunFlag(cmd string) bool {
	for i := 0; i < len(cmd); {
		j := strings.IndexByte(cmd[i:], '-')
		if j < 0 {
			return false
		}
		i += j
		w := cmd[i:]
		if end := strings.IndexFunc(w, unicode.IsSpace); end >= 0 {
			w = w[:end]
		}
		if r, _ := utf8.DecodeLastRuneInString(cmd[:i]); i == 0 || unicode.IsSpace(r) {
			name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
			if slices.ContainsFunc(dryRunFlags, func(f string) bool { return strings.EqualFold(name, f) }) {
				return true
			}
		}
		i += len(w)
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
			if f.Resolved = st.echoes(i, out) && makes(targetKey(cmd)); f.Resolved {
				x = st.fixedByEdit(i)
			} else if !p {
				p, x = st.resolveOne(i, pass, cmd, verify)
			}
			part, fixed = part || p, fixed || x
		}
	}
	if (verify || fixed) && !part { // a part of an open failure's target is no pass of the work ("All tests pass now" then is a claim)
		st.LastPassSeq = st.Seq
	}
}

// echoes: out shows failure i's command run again on a line of its own (its target key) — `make migrate` printing
// its recipe `python manage.py migrate`, npm's "> knex migrate:latest" after a failed `npx knex migrate:latest` —
// in a pass that is no read (a `cat Makefile` prints the line without running it): the same work passed.
func (st *State) echoes(i int, out string) bool {
	k := st.FailureKeys[i]
	prog := k[:strings.IndexFunc(k+" ", unicode.IsSpace)]
	if prog == "" || !makes(k) || !strings.Contains(out, prog) {
		return false // the common case: one search
	}
	for l := range strings.Lines(out) {
		if l = strings.TrimLeft(strings.TrimSpace(l), "+>$ "); len(l) < 300 && strings.HasPrefix(l, prog) && targetKey(l) == k {
			return true
		}
	}
	return false
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
	path                       string
	created, deleted, reverted bool
}

var (
	// shellCues: what a command line that writes files contains.
	shellCues = []string{">", "mv ", "rm ", "cp ", "touch ", " -i", "tee ", "-o", "checkout ", "restore "}
	// programWrites: what a program's words (flags) and plain args write.
	programWrites = map[string]func(o *shellWrites, words, args []string){
		"git": func(o *shellWrites, words, args []string) {
			switch {
			case len(args) >= 3 && args[0] == "mv":
				o.add(args[1], false, true)
				o.add(args[2], true, false)
			case len(args) >= 2 && args[0] == "rm":
				o.addAll(args[1:], false, true)
			case len(args) >= 2 && reverts(args[0], words):
				for _, p := range args[1+btoi(words[1] == "HEAD"):] {
					*o = append(*o, shellFile{path: p, reverted: true})
				}
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

// reverts: git's words put files back as HEAD has them, undoing the session's edits: "checkout [HEAD] -- f", "restore f".
func reverts(verb string, words []string) bool {
	i := slices.Index(words, "--")
	return verb == "checkout" && (i == 1 || i == 2 && words[1] == "HEAD") || verb == "restore" && !slices.ContainsFunc(words, otherVersion)
}

// otherVersion: a `git restore` option that keeps the work tree's file (--staged, -S) or writes an older version of it
// (--source, -s).
func otherVersion(w string) bool {
	return w[0] == '-' && strings.HasPrefix(strings.ToLower(strings.TrimLeft(w, "-")), "s")
}

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

// completed: the closing paragraph reports the work done (lang/ completion), nothing failing or left (lang/ unfinished,
// a substring: "fail" in "failing").
func completed(text string) bool {
	p := strings.ToLower(closingParagraph(text))
	return p != "" && hasPhrase(p, "completion") && !containsPhrase(p, "unfinished") && !goesOn(p) // goesOn, the dearest, last
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
		v = cmp.Or(m["todos"], m["plan"], m["items"], m["steps"], m["tasks"])
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
		it.Done = x["completed"] == true || x["done"] == true || doneStatus[strings.ToLower(st)]
	}
	return it
}

var (
	doneStatus       = map[string]bool{"completed": true, "done": true, "complete": true, "cancelled": true}
	questionPrefixRE = lazyRE{expr: `^(\d+[.)]\s*|[-*•]\s*)`}
	// todoLineRE: TODO/FIXME/XXX/HACK as a whole upper-case word at a line's
	// start or after a comment marker, then ":", "(", "-" or a lower-case
	// word ("# TODO App Project", a heading, is none).
	todoLineRE = lazyRE{expr: `^\s*(?:[+]\s*)?(?://+|#+|--|/\*+|\*|<!--|;+|%|")?\s*\b(TODO|FIXME|XXX|HACK)\b(?:\([^)]*\))?(?:\s*[:\-–]\s*|\s+(\p{Ll}))(.*)$`}
)

// planItemsClipped reads a plan whose JSON was clipped (adapters keep 2 KB of a call's input): the text closed after
// its last complete item ("}" then "]}" or "]": a brace inside an item's words fails as JSON, so the one before is
// tried).
func planItemsClipped(text string) ([]PlanItem, bool) {
	for end := strings.LastIndex(text, "}"); end > 0; end = strings.LastIndex(text[:end], "}") {
		for _, closer := range []string{"]}", "]"} {
			if json.Valid([]byte(text[:end+1] + closer)) {
				return parsePlan(text[:end+1] + closer)
			}
		}
	}
	return nil, false
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
	return (matchWords(s, nextPhrases.list(), false) || containsAny(low, nextMarkers.list()) || endsNext(s)) && !asksUser(low)
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
	return sentencesWhere(texts, func(s string) bool { return forwardLooking(s) && !isQuestion(s) && !boilerplate(s) })
}

// sentencesWhere: the sentences of texts that keep holds for, in order.
func sentencesWhere(texts []string, keep func(string) bool) (out []string) {
	for _, t := range texts {
		for _, s := range sentences(t) {
			if keep(s) {
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
		l := unicode.IsLetter(r) || unicode.IsSpace(r)
		letters, other = letters+btoi(l), other+btoi(!l)
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
	out := sentencesWhere(texts, func(s string) bool { return isQuestion(s) && !boilerplate(s) && prose(s) })
	for i, s := range out {
		out[i] = clip(questionPrefixRE.get().ReplaceAllString(s, ""), 200)
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
// for the declined failures it names. One reporting a failed target done, nothing negated nor left (lang/ passed,
// unfinished: "I ran fly deploy myself, it went through fine", "die Migration hat geklappt") resolves it: the user's
// word is the later pass the session lacks, no failure to resolve and re-run.
func (st *State) ruleOn(s, scope string) {
	passed := hasPhrase(s, "passed") && !containsPhrase(s, "unfinished") && !negates(s)
	for i := range st.Failures {
		f, k := &st.Failures[i], st.FailureKeys[i]
		if !f.Resolved && (scope != "" || f.Declined && !negates(s)) {
			f.Declined = f.Declined != namesAny(cmp.Or(scope, s), failureTerms(k, f.Error))
		}
		f.Resolved = f.Resolved || passed && makes(k) && namesAny(s, failureTerms(k, f.Error))
	}
}

// negates: low holds a negation ("not", "n't", a lang/ negation): it asks for nothing it names.
func negates(low string) bool {
	return containsAny(low, []string{"n't", "n’t"}) || anyTerm(low, func(w string) bool {
		pre, post := negationAt(w)
		return pre || post
	})
}

// clauses yields low's sentences, cut at . ! ? ; and line ends — not at a dot inside a word ("legacy.sh") —, without
// allocating (declineFailures reads every prompt while a failure is open).
func clauses(low string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for low != "" {
			i := strings.IndexAny(low, ".!?;\n。！？")
			for i >= 0 && low[i] == '.' && i+1 < len(low) && wordRune(rune(low[i+1])) {
				i = nextAny(low, i, ".!?;\n。！？")
			}
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

// prohibited is prohibits with the word the negation turns down ("don't push" → "push"); "" after a declining verb,
// whose object follows ("skip the e2e run"). The order is the language's, in each comma-separated part: a negation
// opening low (", not the v1 shim" is a contrast) or after an "and" ("leave it alone and don't delete it", "no borres",
// "ne supprime pas") turns down the word after it; one that follows its verb (lang/ negation_post: "nicht", "pas") the part's last word when it
// stands just before it ("die Datei nicht löschen"), else, second, the first ("lösche nicht die Datei").
func prohibited(low string) (verb string, ok bool) {
	if v, ok := cjkProhibited(low); ok {
		return v, ok
	}
	if !hasPhrase(low, "negation") && !containsAny(low, prohibitWords) && !containsAny(low, []string{"n't", "n’t"}) {
		return "", false // most sentences: nothing to split
	}
	for pi, part := range strings.Split(strings.ReplaceAll(low, "do not ", "dont "), ",") {
		ws := strings.Fields(stripLeadingAcks(part))
		if pi == 0 && len(ws) > 0 && slices.Contains(prohibitWords[2:], ws[0]) {
			return "", true
		}
		for j := range ws {
			if j > 1 && j != len(ws)-2 && !andWords.has(ws[j-1]) {
				continue // no place of turnedDown's: no need to look the word up
			}
			if v, ok := turnedDown(ws, j, pi == 0); ok {
				return v, ok
			}
		}
	}
	return "", false
}

// turnedDown: the word ws[j] turns down when it is a negation in one of prohibited's places.
func turnedDown(ws []string, j int, first bool) (string, bool) {
	w, n := strings.Trim(ws[j], ".;:!?"), len(ws)
	if _, neg := negationAt(w); !neg && !strings.HasSuffix(w, "n't") && !strings.HasSuffix(w, "n’t") && !slices.Contains(prohibitWords[:2], w) {
		return "", false
	}
	post := negationPost.has(w)
	switch {
	case j == 0 && first || j > 0 && andWords.has(ws[j-1]):
		v := firstWord(strings.Join(ws[j+1:], " "))
		return v, !slices.Contains(prohibitWords[2:], v)
	case post && j == n-2 && !strings.ContainsAny(ws[n-1], "./"):
		return firstWord(ws[n-1]), true
	}
	return ws[0], post && j == 1
}

// cjkProhibited: a prohibition in a script without spaces, its marker glued to the verb it turns down — after it (lang/
// prohibit, Chinese: "不要删除旧脚本" → 删除, most verbs being two characters) or before it (lang/ prohibit_post,
// Japanese: "古いファイルは削除しないで" → 削除, "消さないで" → 消: the kanji or katakana before the marker, past its
// kana ending); a marker standing alone turns down the term beside it ("不要 push", "pushしないでください").
func cjkProhibited(low string) (verb string, ok bool) {
	prev := ""
	anyTerm(low, func(t string) bool {
		if ok { // a lone lang/ prohibit marker: its verb is this term
			verb = t
			return true
		}
		for _, m := range prohibitPre.list() {
			if _, after, found := strings.Cut(t, m); found {
				verb, ok = string([]rune(after)[:min(2, utf8.RuneCountInString(after))]), true
				return after != ""
			}
		}
		for _, m := range prohibitPost.list() {
			if before, _, found := strings.Cut(t, m); found {
				verb, ok = cmp.Or(strings.Join(last(strings.FieldsFunc(before, func(r rune) bool { return unicode.Is(unicode.Hiragana, r) }), 1), ""), prev), true
				return true
			}
		}
		prev = t
		return false
	})
	return verb, ok && verb != ""
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
	return slices.ContainsFunc(terms, func(t string) bool { return cjkString(t) && strings.Contains(low, t) }) || anyTerm(low, func(w string) bool {
		return slices.ContainsFunc(terms, func(t string) bool { return sameStem(w, t) })
	})
}

// sameStem: a and b are one word in two forms — they share four letters or more, and past them the shorter has one
// letter at most ("migrate" and "migration", "lösche" and "löschen", "lint" and "linter") or both two at most
// ("borres" and "borrar"): "commit" and "comment", "install" and "instance" are two words.
func sameStem(a, b string) bool {
	i := 0
	for i < min(len(a), len(b)) && a[i] == b[i] {
		i++
	}
	if i < 4 { // most pairs: no rune counting
		return a == b
	}
	ra, rb := utf8.RuneCountInString(a[i:]), utf8.RuneCountInString(b[i:])
	return utf8.RuneCountInString(a[:i]) >= 4 && (min(ra, rb) <= 1 || max(ra, rb) <= 2)
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
	key := callKey(r)
	if key == st.PendingCall { // the call ended: an interruption now stops none
		st.PendingCall = ""
	}
	c := st.Calls[key]
	if r.ExitCode == nil && c.Command != "" && running(r.Text) {
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
	if strings.HasPrefix(n, "Ask the user") {
		return n
	}
	for _, r := range slices.Backward(st.Refused) {
		if len(r.Refs) > 0 && !refBefore(r.Refs[0], st.requestRef()) && sharedLinks(n, strings.ReplaceAll(refusedWhat(r.Text), "/", " ")) >= 2 {
			return n + " — the user turned this down before (" + clip(oneLine(r.Text), 100) + "): ask first"
		}
	}
	if t := cmp.Or(st.declinedOffer(n), st.toldNot(n)); t != "" {
		return n + " — the user said: " + clip(oneLine(t), 100) + ": ask first"
	}
	return n
}

// declinedOffer is the latest request's answer turning down an offer that next action n names while it asked for
// other work ("let's hold off on the CI config for now, … Can you add …?", kept as a decision by keptDecline); "" for
// none.
func (st *State) declinedOffer(n string) string {
	for _, d := range st.Decided {
		q, a, _ := strings.Cut(d, " → ")
		if opensWithDecline(strings.ToLower(a)) && strings.HasPrefix(oneLine(st.Latest), strings.TrimSuffix(a, "…")) && sharedLinks(n, q) >= 2 {
			return clip(a, 80)
		}
	}
	return ""
}

// toldNot is the user's clause prohibiting the verb that next action n names ("don't push
// anything, I want to review the diff first" for "Next I'll push feat/paginate"), unless n quotes the clause (a request
// "No rush, but add paging" is none) or a newer instruction names the verb without a negation ("ok, push it"); "" for
// none.
func (st *State) toldNot(n string) string {
	for i, in := range slices.Backward(st.Instructions) {
		for s := range clauses(in.Text) {
			if v := prohibitedVerb(strings.ToLower(s)); v != "" && namesAny(strings.ToLower(n), []string{v}) && !strings.Contains(n, s) && !slices.ContainsFunc(st.Instructions[i+1:], func(l Note) bool {
				return namesAny(strings.ToLower(l.Text), []string{v}) && !negates(strings.ToLower(l.Text))
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
	if v, ok := prohibited(stripLeadingAcks(s)); ok && utf8.RuneCountInString(v) >= 4-2*btoi(cjkString(v)) {
		return v
	}
	return ""
}

// requestRef is the row of the request the work answers: the latest, else the goal's.
func (st *State) requestRef() Ref {
	if st.Latest != "" {
		return st.LatestRef
	}
	return st.TaskRef
}

func refBefore(a, b Ref) bool {
	return a.Session < b.Session || a.Session == b.Session && a.Seq < b.Seq
}

func sharedLinks(a, b string) int { return shared(linkWords(a), linkWords(b)) }

// shared counts the words of a also in b.
func shared(a, b map[string]bool) (n int) {
	for w, in := range a {
		n += btoi(in && b[w])
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
	{"plan", (*State).nextEarlierPlan},
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
	// A session's newest commitment: a dry run left pending, or prose since the request (an older one it answered).
	{"action item", func(st *State, in *nextIn) (string, bool) {
		if acts := in.h.Actions; len(acts) > 0 {
			a, rs := acts[len(acts)-1], st.sourceRefs("a:"+acts[len(acts)-1])
			return a, strings.HasPrefix(a, dryRunNote) || len(rs) > 0 && !refBefore(rs[len(rs)-1], st.requestRef())
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
	return in.remaining, in.remaining != "" && (st.LastTextRef.Session == 0 || st.PlanSession == 0 || st.LastTextRef.Session == st.PlanSession)
}

// nextEarlierPlan: an earlier agent's plan, the last agent stating no step of its own — its first open item that no
// later session's edit names by a word no other item has ("Migrate shipping client …" and shipping/client.go, not
// "Migrate notifications client …"), even when the later agent reported its own part done; the plan is the task's.
func (st *State) nextEarlierPlan(*nextIn) (string, bool) {
	for i, p := range st.Plan {
		own := linkWords(p.Text)
		for j, q := range st.Plan {
			for w := range linkWords(q.Text) {
				own[w] = own[w] && i == j
			}
		}
		if !p.Done && !slices.ContainsFunc(st.Edits, func(e Edit) bool {
			return e.Ref.Session != st.PlanSession && shared(own, linkWords(strings.NewReplacer("/", " ", ".", " ", "_", " ").Replace(e.Path))) > 0
		}) {
			return p.Text, true
		}
	}
	return "", false
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
	ss := sentencesWhere([]string{st.LastText}, func(s string) bool {
		return announces(" "+strings.ToLower(s)) && !isQuestion(s) && !boilerplate(s) && prose(s) && !st.refusedText(s)
	})
	return strings.Join(last(ss, 1), ""), len(ss) > 0
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

// negatedStep: a negation (lang/ negation) among the first four words of the clause stating the step — the first holding
// an intent or next marker, else the first —, where its subject, auxiliary and negation stand ("I will not…", "Ich werde
// sie nicht…", "Je ne vais pas…", "Я не буду…"): the sentence says what the agent will not do, no next step. A
// negation later in the clause ("…so that it does not fail") keeps it, and so does one in a clause of its own before
// the step ("No problem, I'll add…", "There is no test yet — next I'll add one"): the lists hold every language's
// words, so Spanish "no" is also English "No".
func negatedStep(s string) bool {
	cls := strings.FieldsFunc(s, func(r rune) bool { return r != '-' && strings.ContainsRune(clauseEnds, r) })
	i := max(0, slices.IndexFunc(cls, func(c string) bool {
		low := " " + strings.ToLower(c) + " "
		return containsAny(low, intentMarkers.list()) || containsAny(low, nextMarkers.list())
	}))
	words := strings.Fields(strings.Join(cls[i:min(i+1, len(cls))], ""))
	return slices.ContainsFunc(words[:min(4, len(words))], func(w string) bool { _, post := negationAt(w); return post })
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
	if q := closingQuestion(in.h.LastWords); q != "" {
		n += " — the agent's closing question was never answered: " + q
	}
	return n, true
}

// closingQuestion is the question the agent's last words end on, when they do ("Should I also switch the Excel export
// to the same quoting?"; a courtesy such as "Anything else?" is boilerplate): the session ended before the user
// answered, so the next agent asks it again instead of taking the work as closed.
func closingQuestion(words string) string {
	ss := sentences(words)
	if len(ss) == 0 {
		return ""
	}
	if last := ss[len(ss)-1]; isQuestion(last) && !boilerplate(last) && prose(last) {
		return clip(questionPrefixRE.get().ReplaceAllString(last, ""), 160)
	}
	return ""
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
