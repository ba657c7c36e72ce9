package publish

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish/safefile"
)

// What publish keeps of the handoff lifecycle (publish/lifecycle owns the
// rest): the id format in handoff.md's header, the banner and expiry
// notice the ledger-less InjectFile shares, the decisions and pinned task
// a handoff renders, and the hook Render calls to pick its id.

// DefaultExpireAfter is how old a handoff may get before a new session
// gets only a one-line notice of it (config expire_after).
const DefaultExpireAfter = 7 * 24 * time.Hour

// DefaultHistoryKeep is how many handoffs .carryover/history keeps
// (config history_keep).
const DefaultHistoryKeep = 50

var idRE = regexp.MustCompile(`HO-[0-9]{8}-[0-9]{6}-[0-9A-Za-z_-]{1,8}`)

// NewID is the id of a handoff first published at now by the session with
// native id session: HO-YYYYMMDD-HHMMSS-<first 8 of the session id>.
func NewID(now time.Time, session string) string {
	s := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_' {
			return r
		}
		return -1
	}, session)
	if len(s) > 8 {
		s = s[:8]
	}
	if s == "" {
		s = "nosess"
	}
	return "HO-" + now.UTC().Format("20060102-150405") + "-" + s
}

// ValidID reports whether id has the handoff id format.
func ValidID(id string) bool { return idRE.FindString(id) == id && id != "" }

// IDOf returns the handoff id in a handoff's header line ("" for a
// handoff written before ids).
func IDOf(header string) string {
	if !strings.HasPrefix(header, HeaderPrefix) {
		return ""
	}
	_, tail, ok := strings.Cut(header, " · ")
	if !ok || !ValidID(strings.TrimSpace(tail)) {
		return ""
	}
	return strings.TrimSpace(tail)
}

// IDTime is the time a handoff id was minted.
func IDTime(id string) (time.Time, bool) {
	if !ValidID(id) || len(id) < 18 {
		return time.Time{}, false
	}
	t, err := time.Parse("20060102-150405", id[3:18])
	return t, err == nil
}

// AgeWords renders a duration for the one-line notices ("3d", "5h").
func AgeWords(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "moments"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}

// ExpiredNotice is all a session gets of an expired handoff.
func ExpiredNotice(r ledger.HandoffRecord, now time.Time) string {
	return fmt.Sprintf("carryover: a handoff from %s ago exists: carryover history show %s", AgeWords(now.Sub(r.Updated)), r.ID)
}

// Banner is the one line a user sees at session start.
func Banner(root string, r ledger.HandoffRecord, now time.Time, red func(string) string) string {
	goal, next := r.Goal, r.Next
	if goal == "" {
		goal = "(no goal recorded)"
	}
	if next == "" {
		next = "(none stated)"
	}
	b := "carryover · " + contentLine(filepath.Base(root)) + " · handoff " + r.ID + " from " + contentLine(r.Tool) + " " + Ago(now, r.Updated) +
		" · Resuming: " + clip(contentLine(goal), 120) + " · Next: " + clip(contentLine(next), 120)
	if red != nil {
		b = red(b)
	}
	return strings.Join(strings.Fields(b), " ")
}

// ContentLine makes one line of transcript-derived content safe to place
// in a handoff or a notice (contentLine), for the feature packages.
func ContentLine(s string) string { return contentLine(s) }

// SectionLines returns the lines under a handoff's section title.
func SectionLines(text, title string) []string { return sectionLines(text, title) }

// Lifecycle is the handoff lifecycle as Render consults it
// (publish/lifecycle.Begin; nil: handoffs without an id).
type Lifecycle func(p *Project, l *ledger.Ledger, h distill.Handoff, native string) Started

// Started is a handoff's place in the lifecycle, read before it is
// rendered.
type Started struct {
	ID        string
	Decisions []ledger.Decision
	Pinned    *ledger.PinnedTask
	// Cleared: the user cleared the project's handoff and no row came
	// since; nothing is published until the work moves on.
	Cleared bool
	// Owned are the ids history rotation may remove (set with a new id).
	Owned map[string]bool
	// Record records the handoff published with text (nil: nothing to do).
	Record func(text string)
}

// begin is the lifecycle of the handoff Render renders.
func (p *Project) begin(l *ledger.Ledger, h distill.Handoff, native string) Started {
	var s Started
	if p.Lifecycle != nil {
		s = p.Lifecycle(p, l, h, native)
	}
	p.ownHistory = s.Owned
	if s.Record == nil {
		s.Record = func(string) {}
	}
	return s
}

// pinnedTask puts the task the user pinned (carryover task) before the
// extracted goal: it has priority, and says who set it; the goal stays as
// the last session's own.
func pinnedTask(lines []string, p *ledger.PinnedTask) []string {
	if p == nil || strings.TrimSpace(p.Text) == "" {
		return lines
	}
	out := []string{pinnedPrefix + clip(contentLine(p.Text), goalChars)}
	if len(lines) > 0 {
		out = append(out, "(the last session's own goal: "+lines[0]+")")
		out = append(out, lines[1:]...)
	}
	return out
}

// maxDecisionLines bounds the decisions a handoff shows: they outlive the
// sessions that made them and would otherwise crowd out the files and
// failures of the work in progress.
const maxDecisionLines = 10

// decisionLines is the project's decisions log (the user's first, newest
// first) followed by what this handoff's sessions decided that the log
// does not hold yet.
func decisionLines(extracted []string, log []ledger.Decision) []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range log {
		if seen[d.Text] {
			continue
		}
		seen[d.Text] = true
		l := "- " + clip(contentLine(d.Text), 200)
		if d.Why != "" {
			l += " (why: " + clip(contentLine(d.Why), 120) + ")"
		}
		out = append(out, l)
	}
	var fresh []string
	for _, d := range extracted {
		if !seen[d] {
			seen[d] = true
			fresh = append(fresh, d)
		}
	}
	out = append(out, bullets(fresh, 200)...)
	if len(out) > maxDecisionLines {
		out = append(out[:maxDecisionLines-1], fmt.Sprintf("- (+%d more: `carryover decide --list`)", len(out)-maxDecisionLines+1))
	}
	return out
}

// countRest replaces the last decision kept, when some did not fit, by a
// count of those left out: the cap holds and the reader knows more exist.
func countRest(s *section, taken int) {
	if s == nil || taken == 0 || taken >= len(s.lines) {
		return
	}
	rest := len(s.lines) - taken + 1
	var already int // the list's own count line, when it was cut too
	if _, err := fmt.Sscanf(s.lines[len(s.lines)-1], "- (+%d more:", &already); err == nil {
		rest += already - 1
	}
	s.lines[taken-1] = fmt.Sprintf("- (+%d more: `carryover decide --list`)", rest)
}

// History is <project>/.carryover/history: one file per handoff id,
// HO-….md, holding the last content published under that id. It sits
// under .carryover/, whose own .gitignore ignores everything, so it is
// never committed.

// HistoryDir is the history directory's name inside .carryover.
const HistoryDir = "history"

// openHistory opens .carryover/history to read or remove, never through
// a symlink (ownDir); writes open it from the project's opened .carryover.
func openHistory(project string) (*safefile.Dir, error) {
	d, err := ownDir(project, false)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Sub(HistoryDir, false, 0o700)
}

// writeHistory stores text as the history of handoff id in the project's
// opened .carryover (OpenDir), only when its content changed (dedupe),
// then keeps the newest keep of the handoffs in owned (rotation; ids sort
// by time). It reports whether a file was written.
//
// Rotation removes only files carryover recorded writing: the ids in owned
// (the project's handoff log in the ledger) and id itself. A file it did
// not record — fifty HO-2099… files a repository planted, which sort after
// every real id — is neither counted nor removed (counted, they made
// rotation delete each real history file as soon as it was written), and
// no file git tracks is written or removed. A nil owned rotates nothing.
func writeHistory(own *safefile.Dir, id, text string, keep int, owned map[string]bool, repo *distill.Repo, project string) (bool, error) {
	if !ValidID(id) {
		return false, fmt.Errorf("invalid handoff id %q", id)
	}
	path := func(id string) string { return filepath.Join(Dir(project), HistoryDir, id+".md") }
	if repo.Tracked(path(id)) {
		return false, trackedErr(path(id))
	}
	d, err := own.Sub(HistoryDir, true, 0o700)
	if err != nil {
		return false, err
	}
	defer d.Close()
	name := id + ".md"
	old, err := d.ReadFile(name, MaxHandoffFile)
	if err == nil && string(old) == text {
		return false, nil
	}
	if err := d.Write(name, []byte(text), ownFile); err != nil {
		return false, err
	}
	if err == nil || owned == nil {
		return true, nil // a rewrite of a handoff already counted: no rotation to do
	}
	return true, rotate(d, id, keep, owned, func(x string) bool { return repo.Tracked(path(x)) })
}

// rotate removes the oldest of the history files carryover recorded
// (owned, and id) past the newest keep; never one git tracks.
func rotate(d *safefile.Dir, id string, keep int, owned map[string]bool, tracked func(id string) bool) error {
	if keep <= 0 {
		keep = DefaultHistoryKeep
	}
	ids, err := historyIDs(d)
	if err != nil {
		return err
	}
	var mine []string
	for _, x := range ids {
		if (owned[x] || x == id) && !tracked(x) {
			mine = append(mine, x)
		}
	}
	for ; len(mine) > keep; mine = mine[1:] {
		if err := d.Remove(mine[0] + ".md"); err != nil {
			return err
		}
	}
	return nil
}

// historyIDs lists the ids in the history, oldest first.
func historyIDs(d *safefile.Dir) ([]string, error) {
	names, err := d.Names()
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, n := range names {
		if id, ok := strings.CutSuffix(n, ".md"); ok && ValidID(id) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// HistoryIDs lists the handoff ids whose files the project's history
// holds, oldest first (none when there is no history).
func HistoryIDs(project string) ([]string, error) {
	d, err := openHistory(project)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return historyIDs(d)
}

// ReadHistory returns the stored content of handoff id.
func ReadHistory(project, id string) (string, error) {
	if !ValidID(id) {
		return "", fmt.Errorf("invalid handoff id %q", id)
	}
	d, err := openHistory(project)
	if err != nil {
		return "", err
	}
	defer d.Close()
	b, err := d.ReadFile(id+".md", MaxHandoffFile)
	return string(b), err
}

// RemoveHistory deletes the history files of ids (missing ones are fine).
func RemoveHistory(project string, ids []string) error {
	d, err := openHistory(project)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer d.Close()
	repo := distill.OpenRepo(project)
	for _, id := range ids {
		if !ValidID(id) || repo.Tracked(filepath.Join(Dir(project), HistoryDir, id+".md")) {
			continue // git tracks it: never removed
		}
		if err := d.Remove(id + ".md"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// MatchID resolves an id or a prefix of one among ids. With no match it
// returns the closest id (for the error's hint) and ok false.
func MatchID(ids []string, arg string) (match string, ok bool, closest string) {
	var hits []string
	for _, id := range ids {
		if id == arg {
			return id, true, ""
		}
		if strings.HasPrefix(id, arg) {
			hits = append(hits, id)
		}
	}
	if len(hits) == 1 {
		return hits[0], true, ""
	}
	if len(hits) > 1 {
		sort.Strings(hits)
		return "", false, hits[len(hits)-1]
	}
	best, bestD := "", -1
	for _, id := range ids {
		if d := EditDistance(strings.ToUpper(arg), strings.ToUpper(id)); bestD < 0 || d < bestD {
			best, bestD = id, d
		}
	}
	return "", false, best
}

// EditDistance is the Levenshtein distance between a and b, in runes: the
// one "did you mean" measure (history ids, config keys, commands, flags).
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			c := prev[j-1]
			if ra[i-1] != rb[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
