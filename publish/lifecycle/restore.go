package lifecycle

import (
	"strings"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/publish"
)

// Restoring a project's lifecycle from its files. A ledger rebuilt after
// damage gets back what the damaged file still held (ledger/recover_
// lifecycle.go); when that was unreadable (a destroyed header on a ledger
// too large to rebuild on a copy, say), the project's own files still
// hold its last handoffs. They are project files, so possibly planted by
// a repository: only a text whose digest carryover recorded when it
// published it — in the sidecar under the home, or the ledger — is read,
// and only through safefile (regular files, never through a symlink,
// bounded). A history file no record vouches for stays what `history`
// calls "unrecorded"; it never adds decisions or a pinned task.

// maxRestoreFiles bounds the history files read while restoring (the
// default rotation keeps 50).
const maxRestoreFiles = 64

// Restore restores the project's handoff records, pinned task and
// decisions from its verified handoff.md and history files, when the
// ledger knows no handoff of the project (after a rebuild that salvaged
// none; a project that never published has no files to restore from). It
// returns how many handoffs it recorded.
func Restore(p *publish.Project, l *ledger.Ledger) int {
	if l == nil || l.HandoffKnown(p.Root) {
		return 0
	}
	texts := verifiedTexts(p, l)
	if len(texts) == 0 {
		return 0
	}
	seen := map[string]bool{}
	var newest *ledger.HandoffRecord
	n := 0
	for _, text := range texts {
		rec, ok := publish.RecordOfText(text)
		if !ok || seen[rec.ID] {
			continue
		}
		seen[rec.ID] = true
		rec.Project, rec.Hash = p.Root, publish.Digest([]byte(text))
		rec.Head, rec.Branch = gitOfText(text)
		rec.Files = filesOfText(text)
		rec.SessionID = sessionOfID(l, p.Root, rec)
		if err := Save(l, rec); err != nil {
			logf(p, "restore handoff %s: %v", rec.ID, err)
			return n
		}
		n++
		switch {
		case strings.HasPrefix(rec.Goal, "(none: the user cleared"):
			_ = End(l, rec.ID, ledger.EndCleared, rec.Updated)
		case newest != nil:
			_ = End(l, rec.ID, ledger.EndSuperseded, newest.Written)
		}
		if newest == nil {
			r := rec
			newest = &r
			// The current handoff (and its digest, now in the ledger too).
			if err := recordCurrent(l, ledger.Handoff{Project: p.Root, Header: rec.Header, Tool: rec.Tool, SessionID: rec.SessionID, Written: rec.Updated, Hash: rec.Hash}); err != nil {
				logf(p, "restore current handoff: %v", err)
			}
			restoreWorkState(p, l, text, rec)
		}
	}
	if n > 0 {
		logf(p, "ledger held no handoff of %s: restored %d from its verified handoff files", p.Root, n)
	}
	return n
}

// verifiedTexts are the project's handoff.md and history files whose
// digests carryover recorded, newest first.
func verifiedTexts(p *publish.Project, l *ledger.Ledger) []string {
	var out []string
	if b, err := publish.ReadHandoffFile(p.Root); err == nil && publish.CheckHandoff(b, p.Home, p.Root, l) == "" {
		out = append(out, string(b))
	}
	ids, err := publish.HistoryIDs(p.Root)
	if err != nil {
		logf(p, "restore from history: %v", err)
	}
	for i := len(ids) - 1; i >= 0 && len(ids)-i <= maxRestoreFiles; i-- {
		b, err := publish.ReadHistory(p.Root, ids[i])
		if err == nil && publish.IDOf(publish.HeaderOf(b)) == ids[i] && publish.CheckHandoff([]byte(b), p.Home, p.Root, l) == "" {
			out = append(out, b)
		}
	}
	return out
}

// restoreWorkState puts back the pinned task and the decisions the
// newest handoff shows, unless the ledger already has its own. The text
// does not say which decisions the user recorded and which were
// extracted; one with a reason ("why: …", which only `carryover decide
// --why` gives) is the user's, the others come back as extracted (they
// are shown the same way; only the order under the cap differs).
func restoreWorkState(p *publish.Project, l *ledger.Ledger, text string, rec ledger.HandoffRecord) {
	if _, ok := Task(l, p.Root); !ok {
		if t := publish.PinnedOfText(text); t != "" {
			if err := PinTask(l, p.Root, t, rec.Updated); err != nil {
				logf(p, "restore pinned task: %v", err)
			}
		}
	}
	if known, err := decisionTexts(l, p.Root); err != nil || len(known) > 0 {
		return
	}
	for _, line := range publish.SectionLines(text, "## Decisions (do not re-debate)") {
		d, ok := decisionOfLine(line)
		if !ok {
			continue
		}
		d.At = rec.Updated
		if _, err := AddDecision(l, p.Root, d); err != nil {
			logf(p, "restore decisions: %v", err)
			return
		}
	}
}

// decisionOfLine reads one line of a handoff's decisions section
// (decisionLines); the count of those left out is not a decision.
func decisionOfLine(line string) (ledger.Decision, bool) {
	t, ok := strings.CutPrefix(line, "- ")
	if !ok || strings.HasPrefix(t, "(+") || strings.TrimSpace(t) == "" {
		return ledger.Decision{}, false
	}
	d := ledger.Decision{Text: t, Source: ledger.DecisionExtracted}
	if i := strings.LastIndex(t, " (why: "); i > 0 && strings.HasSuffix(t, ")") {
		d.Text, d.Why, d.Source = t[:i], t[i+len(" (why: "):len(t)-1], ledger.DecisionUser
	}
	return d, true
}

// gitOfText reads the branch and short HEAD of a handoff's git line
// ("branch main @ abc1234; …"; "-" for unknown).
func gitOfText(text string) (head, branch string) {
	for _, l := range publish.SectionLines(text, "## Git") {
		rest, ok := strings.CutPrefix(l, "branch ")
		if !ok {
			continue
		}
		b, h, ok := strings.Cut(rest, " @ ")
		if !ok {
			return "", ""
		}
		h, _, _ = strings.Cut(h, ";")
		if h = strings.TrimSpace(h); h == "-" || !isHexString(h) {
			h = ""
		}
		if b == "-" {
			b = ""
		}
		return h, b
	}
	return "", ""
}

func isHexString(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return s != ""
}

// filesOfText reads the paths of a handoff's recent files ("- path
// (edited 5m ago; …)"), at most maxStaleFiles.
func filesOfText(text string) []string {
	var out []string
	for _, l := range publish.SectionLines(text, "## Recent files") {
		t, ok := strings.CutPrefix(l, "- ")
		if i := strings.LastIndex(t, " ("); i > 0 {
			t = t[:i]
		}
		if ok && t != "" && len(out) < maxStaleFiles {
			out = append(out, t)
		}
	}
	return out
}

// sessionOfID finds the ledger session a restored handoff came from: the
// one session of its agent in the project whose native id gives the id's
// suffix (0 when none or several do; a later handoff of that session then
// gets a new id).
func sessionOfID(l *ledger.Ledger, project string, rec ledger.HandoffRecord) int64 {
	ss, err := l.Sessions(project, rec.Tool, 200)
	if err != nil {
		return 0
	}
	suffix := rec.ID[len("HO-20060102-150405-"):]
	var found int64
	for _, s := range ss {
		if strings.HasSuffix(publish.NewID(rec.Written, s.NativeID), "-"+suffix) {
			if found != 0 {
				return 0
			}
			found = s.ID
		}
	}
	return found
}
