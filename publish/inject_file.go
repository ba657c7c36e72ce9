package publish

import (
	"strings"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
)

// InjectFile is Deliver without the ledger: what a session start injects
// when the ledger is locked by another process, could not be rebuilt, or
// the watchdog gave up on the snapshot. text is a handoff.md already
// verified against the digests under the home (ReadHandoff(nil)), so its
// header and sections are carryover's own and the lifecycle facts they
// hold can be trusted: the id, the agent, when it was last written, the
// goal (the pinned task when there is one) and the next action. From them
// it renders the same banner as Deliver, the one-line notice once the
// handoff expired, and nothing for a handoff the user cleared. What only
// the ledger knows (who else already resumed it, the staleness of the
// files it names) is left out. A handoff without an id (older carryover)
// goes out as Inject renders it.
func (p *Project) InjectFile(agent *adapters.Agent, event, text string) ([]byte, string) {
	if agent == nil || agent.Envelope == adapters.EnvelopeNone || text == "" {
		return nil, ""
	}
	rec, ok := RecordOfText(text)
	if !ok {
		return p.Inject(agent, event, text)
	}
	if strings.HasPrefix(rec.Goal, clearedTask) {
		p.logf("%s was cleared (carryover clear); not injected", rec.ID)
		return nil, ""
	}
	expire := p.ExpireAfter
	if expire <= 0 {
		expire = DefaultExpireAfter
	}
	if p.Now.Sub(rec.Updated) > expire {
		w, err := adapters.Wrap(agent.Envelope, event, ExpiredNotice(rec, p.Now))
		if err != nil {
			p.logf("wrap injection: %v", err)
		}
		p.logf("%s expired; one-line notice only", rec.ID)
		return w, ""
	}
	body := p.injectText(text)
	banner := Banner(p.Root, rec, p.Now, p.Redact)
	var w []byte
	var err error
	if agent.UserMessage {
		w, err = adapters.WrapWithMessage(agent.Envelope, event, body, banner)
	} else {
		w, err = adapters.Wrap(agent.Envelope, event, banner+"\n"+body)
	}
	if err != nil {
		p.logf("wrap injection: %v", err)
		return nil, ""
	}
	return w, HeaderOf(body)
}

// clearedTask starts the task line of the stub Clear writes.
const clearedTask = "(none: the user cleared"

// pinnedPrefix starts the task line of a handoff whose task the user
// pinned (render_lifecycle.go).
const pinnedPrefix = "[pinned by the user — `carryover task --done` when finished] "

// RecordOfText reads the lifecycle facts a handoff's own text holds: the
// id, agent and time of its header, its goal (the pinned task when the
// user pinned one; Pinned then says so) and next action. ok is false for a
// text without a carryover header carrying an id. The text must be one
// carryover published (verified by its digest): its lines are taken as
// they are, only bounded.
func RecordOfText(text string) (rec ledger.HandoffRecord, ok bool) {
	header := HeaderOf(text)
	id := IDOf(header)
	if id == "" {
		return rec, false
	}
	stamp, rest, _ := strings.Cut(strings.TrimPrefix(header, HeaderPrefix), " from ")
	at, err := time.Parse(time.RFC3339, stamp)
	if err != nil {
		return rec, false
	}
	tool, _, _ := strings.Cut(rest, " · ")
	rec = ledger.HandoffRecord{ID: id, Tool: strings.TrimSpace(tool), Header: header, Updated: at, Written: at}
	if t, ok := IDTime(id); ok && !t.After(at) {
		rec.Written = t
	}
	task := sectionLines(text, "## Task")
	if len(task) > 0 {
		rec.Goal = strings.TrimPrefix(task[0], pinnedPrefix)
	}
	if next := sectionLines(text, "## Next action"); len(next) > 0 {
		rec.Next = next[0]
	}
	return rec, true
}

// PinnedOfText is the task the user had pinned when text was written
// ("" when none).
func PinnedOfText(text string) string {
	task := sectionLines(text, "## Task")
	if len(task) > 0 && strings.HasPrefix(task[0], pinnedPrefix) {
		return strings.TrimPrefix(task[0], pinnedPrefix)
	}
	return ""
}

// sectionLines returns the lines under a handoff's section title, up to
// the next title (at most MaxLines of them: a handoff has no more).
func sectionLines(text, title string) []string {
	var out []string
	in := false
	for i, l := range strings.Split(text, "\n") {
		if i > MaxLines*2 {
			break
		}
		l = strings.TrimRight(l, "\r")
		switch {
		case strings.HasPrefix(l, "## ") || strings.HasPrefix(l, "# "):
			if in {
				return out
			}
			in = l == title || strings.HasPrefix(l, title+" ")
		case isFence(l): // the end (or start) of the quoted block
			if in {
				return out
			}
		case in && strings.TrimSpace(l) != "":
			out = append(out, l)
		}
	}
	return out
}
