package distill

// Outcomes from evidence, not wording, and the user's own words.
//
// A failure is resolved when a later run of the same target passed (the
// same program and subcommand on the same files, whatever surrounds it:
// && chains, env prefixes, flags; a run of the same tool over more —
// `go test ./...` after `go test ./pkg`, `pytest` after `pytest
// tests/test_a.py` — counts), when the files it concerned were edited
// afterwards and a later verification passed, or when the agent's last
// words report completion with nothing failing after them. A tool call the
// user refused and an interruption are their own kinds (Refused,
// Interrupted): never failures to retry.

import (
	"strings"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
)

// keepStops is how many refused calls a state remembers.
const keepStops = 4

// maxInstructions bounds the user's condensed instructions kept for the
// current task: the goal, then the newest of the rest.
const maxInstructions = 8

// Ref names the ledger row a fact came from: its session and position.
type Ref struct{ Session, Seq int64 }

// Note is a fact with its time and evidence rows.
type Note struct {
	Text string
	At   time.Time
	Refs []Ref
}

// addRef appends r to refs, keeping the first and the newest few.
func addRef(refs []Ref, r Ref) []Ref {
	return keepFirst(append(refs, r), 4)
}

// maxSources bounds Sources: the handoff lists at most keepDecided (6)
// decisions, maxRefs (10) references, maxActions (6) action items, one plan
// and keepSetAside (2) set-aside goals, 25 in all; twice that leaves room
// for facts repeated or superseded since.
const maxSources = 50

// addSource records that the fact key (kind prefix and text) came from row
// r: appended to its refs when known, else a new entry, the oldest dropped
// past maxSources. Called only when a rule found a fact, not per row.
func (st *State) addSource(key string, r Ref) {
	for i := range st.Sources {
		if st.Sources[i].Text == key {
			if n := len(st.Sources[i].Refs); n == 0 || st.Sources[i].Refs[n-1] != r {
				st.Sources[i].Refs = addRef(st.Sources[i].Refs, r)
			}
			return
		}
	}
	st.Sources = last(append(st.Sources, Note{Text: key, Refs: []Ref{r}}), maxSources)
}

// setSource is addSource for a fact a newer row replaces outright (the
// plan, a set-aside goal): its rows are only r.
func (st *State) setSource(key string, r Ref) {
	for i := range st.Sources {
		if st.Sources[i].Text == key {
			st.Sources[i].Refs = []Ref{r}
			return
		}
	}
	st.addSource(key, r)
}

// sourceRefs are the rows the fact key came from (nil when unknown).
func (st *State) sourceRefs(key string) []Ref {
	for i := len(st.Sources) - 1; i >= 0; i-- {
		if st.Sources[i].Text == key {
			return st.Sources[i].Refs
		}
	}
	return nil
}

// sourceRef is the first row the fact key came from.
func (st *State) sourceRef(key string) Ref {
	if rs := st.sourceRefs(key); len(rs) > 0 {
		return rs[0]
	}
	return Ref{}
}

// stopKind is "refusal" when an error row says the user refused the tool
// call, "interrupt" when the user stopped the turn, "" otherwise. Only the
// head of the text is read: the harness writes these as the whole result,
// a command's own output saying "interrupted" further down is not one.
func stopKind(text string) string {
	head := strings.ToLower(strings.TrimSpace(text))
	if len(head) > 240 {
		head = head[:240]
	}
	head = strings.Trim(head, "[]<> ")
	switch {
	case head == "":
		return ""
	case head == "cancelled" || head == "canceled":
		// The whole result is the status the agent stored (Cursor's
		// cancelled tool call: the user stopped or rejected it).
		return "interrupt"
	case hasPhrase(head, "refusal"):
		return "refusal"
	case hasPhrase(head, "interrupt"):
		return "interrupt"
	}
	return ""
}

// addStopRow folds a refusal or an interruption (kind "refusal" or
// "interrupt"): what it stopped is its call, else the call still running
// when the turn was stopped, else the turn. A turn-level interruption
// right after a refusal is the same stop (Claude Code writes both when the
// user declines at the permission prompt).
func (st *State) addStopRow(r *ledger.Row, at time.Time, kind string) {
	key := callKey(r)
	c, ok := st.Calls[key]
	if r.CallID == "" {
		if st.StopSeq > 0 && st.StopSeq > st.LastTextSeq && st.PendingCall == "" {
			// The stop of a call already recorded this turn, reported
			// again for the turn (Claude's decline pair; Codex's
			// "aborted by user" output, then turn_aborted): one stop.
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
	desc := "the turn"
	switch {
	case ok && c.Command != "":
		desc = c.Command
	case ok:
		desc = strings.TrimSpace(c.ToolName + " " + c.FilePath)
	case r.Command != "":
		desc = r.Command
	case r.ToolName != "":
		desc = strings.TrimSpace(r.ToolName + " " + r.FilePath)
	}
	n := Note{Text: clip(oneLine(desc), 160), At: at, Refs: []Ref{refOf(r)}}
	st.StopSeq = st.Seq
	if kind == "refusal" {
		st.Refused = last(append(st.Refused, n), keepStops)
		return
	}
	st.Interrupted = n
}

// segTool and segPaths split one segment ("prog sub\tpath path").
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
// the same tool on the same paths, on a superset of them, or on everything
// (no path, "./...", ".").
func covers(pass, fail string) bool {
	if segTool(pass) != segTool(fail) {
		return false
	}
	pp, fp := segPaths(pass), segPaths(fail)
	if len(fp) == 0 {
		return true
	}
	if len(pp) == 0 {
		// The same tool over everything only counts for a verification
		// (`pytest` after `pytest tests/x.py`); `cat` is not `cat f`.
		return isTestCmd(segTool(pass))
	}
	for _, f := range fp {
		ok := false
		for _, p := range pp {
			if p == f || p == "./..." || p == "." || strings.HasSuffix(p, "/...") && strings.HasPrefix(f, strings.TrimSuffix(p, "...")) ||
				strings.HasSuffix(p, "/") && strings.HasPrefix(f, p) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// resolveBy marks resolved the failures a passing command ran again: all
// of a failure's segments, its last one (a chain stops at the failing
// step), or its verification step, covered by a segment of the command.
// A passing verification also resolves failures whose files were edited
// after they failed.
func (st *State) resolveBy(cmd string) {
	pass := strings.Split(targetKey(cmd), " && ")
	verify := isTestCmd(cmd)
	if verify {
		st.LastPassSeq = st.Seq
	}
	for i := range st.Failures {
		f := &st.Failures[i]
		if f.Resolved || f.What == "model API" {
			continue
		}
		fail := strings.Split(st.FailureKeys[i], " && ")
		if st.segmentsCovered(pass, fail) || verify && st.editedAfter(f) {
			f.Resolved = true
		}
	}
}

func (st *State) segmentsCovered(pass, fail []string) bool {
	coveredBy := func(s string) bool {
		for _, p := range pass {
			if covers(p, s) {
				return true
			}
		}
		return false
	}
	all := true
	for _, s := range fail {
		if !coveredBy(s) {
			all = false
		} else if len(fail) > 1 && s == fail[len(fail)-1] || isTestCmd(segTool(s)) {
			return true
		}
	}
	return all
}

// editedAfter reports whether a file the failure concerned (one its
// command named or its tool wrote) was edited after it failed; a failing
// verification concerns every file edited after it.
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

// completed reports whether an assistant text reports the work finished
// and names nothing failing: the closing paragraph says so.
func completed(text string) bool {
	p := strings.ToLower(closingParagraph(text))
	if p == "" || !hasPhrase(p, "completion") || labelledNext(p) != "" {
		return false
	}
	for _, s := range sentences(p) {
		if forwardLooking(s) {
			return false // "Done. Next I will add the retry test." goes on
		}
	}
	for _, w := range []string{"fail", "error", "still ", "not yet", "blocked", "couldn't", "could not", "unable"} {
		if strings.Contains(p, w) {
			return false
		}
	}
	return true
}

// closingParagraph is the last paragraph of prose of an assistant text:
// the last block of non-empty lines outside code fences, or its last
// 600 bytes. It is quoted verbatim (trimmed) as the last agent's words.
func closingParagraph(text string) string {
	var paras [][]string
	var cur []string
	inFence := false
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if t == "" {
			if len(cur) > 0 {
				paras = append(paras, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, t)
	}
	if len(cur) > 0 {
		paras = append(paras, cur)
	}
	if len(paras) == 0 {
		return ""
	}
	last := paras[len(paras)-1]
	// A one-line heading or label ("Next steps:") belongs with what
	// follows; a closing list belongs with the sentence that opens it.
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

// listLine reports whether a line is a list item.
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

// labelledNext is the action a line labelled "Next:" (or "Remaining:",
// "Nächster Schritt:", "下一步：", …; the next list) states: the rest of
// the line, or the first item below a bare label. "" when none.
func labelledNext(text string) string {
	lines := strings.Split(text, "\n")
	found := ""
	for i, l := range lines {
		t := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "-*#> "))
		t = strings.Trim(t, "*_")
		low := strings.ToLower(t)
		for _, p := range phrases("next") {
			at := len(p)
			if !strings.HasPrefix(low, p) {
				if at = labelEnd(low, p); at < 0 {
					continue
				}
			}
			rest := strings.TrimSpace(strings.Trim(strings.TrimSpace(t[at:]), "*_"))
			if rest == "" {
				for _, n := range lines[i+1:] {
					n = strings.TrimSpace(n)
					if n == "" {
						continue
					}
					rest = strings.TrimSpace(questionPrefixRE().ReplaceAllString(n, ""))
					break
				}
			}
			if rest != "" {
				found = rest
			}
			break
		}
	}
	return found
}

// labelEnd is where a line's label ends when the label closes with the
// phrase p ("What I'd do next:", "Recommended next steps:", "Mi propuesta,
// siguiente paso:"): a few words (at most maxLabelWords) and then p at a
// word boundary, before anything else on the line; -1 otherwise. p is a
// label phrase ending in its colon; a sentence that only mentions "next"
// further on ("I don't know what we should try next: …" is eight words)
// is no label.
func labelEnd(low, p string) int {
	i := strings.Index(low, p)
	if i <= 0 || i > 60 {
		return -1
	}
	head := low[:i]
	if c := head[len(head)-1]; c != ' ' && c < 0x80 {
		return -1 // "context:" is not "next:"
	}
	if strings.ContainsAny(head, ".!?:;") || len(strings.Fields(head)) > maxLabelWords {
		return -1
	}
	return i + len(p)
}

// maxLabelWords bounds the words before a label's closing phrase: the
// labels agents write are short ("What I'd do next" is 3 before it).
const maxLabelWords = 5

// harnessTags open user-role text the harness wrote: background task and
// subagent notifications (Claude Code 2.1), IDE context, reminders.
var harnessTags = []string{"<task-notification", "<system-reminder", "<ide_opened_file", "<ide_selection", "<ide_diagnostics",
	"<environment_context", "<user_instructions", "<local-command", "<command-message", "<bash-", "<turn_aborted", "<subagent_notification"}

// userWords is what the user wrote of a user-role text: wrappers the
// harness puts around a request are dropped (Codex Desktop's "# Files
// mentioned by the user: … ## My request for Codex:" keeps only the
// request; leading IDE context blocks go). harness is true when nothing of
// the user's remains (a task notification).
func userWords(text string) (string, bool) {
	t := strings.TrimSpace(text)
	if i := strings.Index(t, "## My request for "); i >= 0 {
		if j := strings.Index(t[i:], ":"); j >= 0 {
			t = strings.TrimSpace(t[i+j+1:])
		}
	}
	for range 8 {
		if !strings.HasPrefix(t, "<") {
			break
		}
		tag := ""
		for _, h := range harnessTags {
			if strings.HasPrefix(t, h) {
				tag = h
				break
			}
		}
		if tag == "" {
			break
		}
		name := strings.TrimPrefix(tag, "<")
		end := strings.Index(t, "</"+strings.TrimRight(name, "-"))
		if end < 0 {
			return "", true // an unclosed notification: all of it is the harness's
		}
		gt := strings.IndexByte(t[end:], '>')
		if gt < 0 {
			return "", true
		}
		t = strings.TrimSpace(t[end+gt+1:])
	}
	return t, t == ""
}

// boundaryCommand reports whether a prompt is a command that clears the
// conversation: the next request is a new task (/clear, /new, /reset in
// Claude Code, Codex, Gemini and aider).
func boundaryCommand(p string) bool {
	f := strings.Fields(strings.ToLower(strings.TrimSpace(p)))
	if len(f) == 0 {
		return false
	}
	switch f[0] {
	case "/clear", "/new", "/reset":
		return true
	}
	return false
}

// ClearTask forgets the task: after a cleared conversation (/clear) or
// `carryover clear` the next request is a new task, whatever it says.
// Files, the done steps, decisions and references are the project's and
// stay.
func (st *State) ClearTask() {
	st.Task, st.TaskAt, st.GoalWeak, st.TaskRef = "", time.Time{}, false, Ref{}
	st.Latest, st.LatestAt, st.LatestRef = "", time.Time{}, Ref{}
	st.SetAside, st.Instructions, st.Plan, st.Actions = nil, nil, nil, nil
	st.TurnTexts, st.LastText, st.LastTextRef, st.LastTextSeq = nil, "", Ref{}, 0
	st.Refused, st.Interrupted = nil, Note{}
	st.Failures, st.FailureKeys, st.TestFails = nil, nil, nil
	st.Fallback, st.FallbackAt = "", time.Time{}
	st.AfterBreak, st.Answered, st.CauseKey = false, false, ""
}

// startTask begins a new goal's instructions, refusals and interruption.
func (st *State) startTask() {
	st.Instructions = nil
	st.Refused, st.Interrupted = nil, Note{}
}

// addInstruction keeps a substantive user request, condensed: its first
// sentence and every sentence that constrains the work ("keep", "don't",
// "never", "must", "only", … in the languages of lang/), the goal first
// and the newest of the rest, bounded.
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
		// A later instruction on the same subject that replaces an
		// earlier one ("use Redis instead of the in-memory cache") drops
		// it; the goal stays.
		if i == 0 || !supersedes(p, in.Text, true) {
			kept = append(kept, in)
		}
	}
	st.Instructions = keepFirst(append(kept, Note{Text: c, At: at, Refs: []Ref{ref}}), maxInstructions)
}

// condense is a request's first sentence and its constraining sentences
// (a pasted stack trace keeps its last exception line), at most 400 bytes.
func condense(p string) string {
	ss := sentences(p)
	// An opening acknowledgement ("Great! Can you also …", "Danke! Jetzt
	// …") is not the instruction: the first sentence that asks is.
	for len(ss) > 1 && !substantive(ss[0]) {
		ss = ss[1:]
	}
	if len(ss) == 0 {
		return ""
	}
	out := []string{ss[0]}
	for _, s := range ss[1:] {
		if hasPhrase(strings.ToLower(s), "constraint") && prose(s) {
			out = append(out, s)
		}
	}
	if strings.Count(p, "\n") > 2 {
		// A pasted trace: the exception name is on its last lines.
		if e := errorLine(p); e != "" && mayNameError(e) && !strings.Contains(strings.Join(out, " "), e) {
			out = append(out, e)
		}
	}
	return clip(clip(normCmd(strings.Join(out, " ")), 400), 400)
}

// remainingItems are the items of a list the last message closes on when
// the line that opens it says they remain ("Three things remain before the
// merge:", "Noch offen:", "Осталось:"; lang/ remaining): what is left, the
// first of them the next action.
func remainingItems(text string) []string {
	p := closingParagraph(text)
	lines := strings.Split(p, "\n")
	for i, l := range lines {
		if !strings.HasSuffix(strings.TrimSpace(l), ":") || !hasPhrase(strings.ToLower(l), "remaining") {
			continue
		}
		var items []string
		for _, it := range lines[i+1:] {
			if !listLine(strings.TrimSpace(it)) {
				break
			}
			items = append(items, strings.TrimSpace(questionPrefixRE().ReplaceAllString(strings.TrimSpace(it), "")))
		}
		return items
	}
	return nil
}
