package publish

import (
	"errors"
	"path/filepath"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
)

// lifecycle is what Prepare needs from the ledger besides the fold.
type lifecycle struct {
	id        string
	prev      *ledger.HandoffRecord // the project's newest handoff before this one
	decisions []ledger.Decision
	pinned    *ledger.PinnedTask
	// cleared: the user cleared the project's handoff and no row came
	// since; nothing is published until the work moves on.
	cleared bool
}

// lifecycleInputs picks the handoff's id (the session's own while it
// keeps publishing; a new one for a new session, or after a clear), adds
// the fold's decisions to the project's log and reads it and the pinned
// task back.
func (p *Project) lifecycleInputs(l *ledger.Ledger, h distill.Handoff, native string) lifecycle {
	var lc lifecycle
	p.ownHistory = nil
	p.RestoreFromFiles(l) // only for a ledger rebuilt without the project's lifecycle (restore.go)
	if recs, err := l.HandoffRecords(p.Root, 1); err == nil && len(recs) > 0 {
		lc.prev = &recs[0]
		if recs[0].SessionID == h.SessionID && recs[0].Ended == "" {
			lc.id = recs[0].ID
		}
		lc.cleared = recs[0].Ended == ledger.EndCleared && !h.LastAt.After(recs[0].EndedAt)
	}
	if lc.id == "" {
		lc.id = NewID(p.Now, native)
		// A new id adds a history file: rotation needs the ids carryover
		// recorded (writeHistory).
		if recs, err := l.HandoffRecords(p.Root, 1<<20); err == nil {
			p.ownHistory = map[string]bool{}
			for _, r := range recs {
				p.ownHistory[r.ID] = true
			}
		}
	}
	lc.decisions, _ = l.Decisions(p.Root)
	// Only decisions the log lacks are written (a Stop re-renders every
	// turn, and most turns decide nothing new); dropped ones stay dropped.
	known, _ := l.DecisionTexts(p.Root)
	added := false
	for _, d := range h.Decisions {
		if known[d] {
			continue
		}
		if _, err := l.AddDecision(p.Root, ledger.Decision{Text: d, Source: ledger.DecisionExtracted, At: p.Now}); err != nil {
			p.logf("decisions log: %v", err)
			break
		}
		added = true
	}
	if added {
		lc.decisions, _ = l.Decisions(p.Root)
	}
	if t, ok := l.Task(p.Root); ok {
		lc.pinned = &t
	}
	return lc
}

// recordLifecycle records the handoff: its digest (trust), its entry under
// its id, and the end of the project's previous one it supersedes; one
// ledger transaction.
func (p *Project) recordLifecycle(l *ledger.Ledger, lc lifecycle, h distill.Handoff, native, text string) {
	var files []string
	for _, f := range h.Files {
		files = append(files, f.Path)
	}
	goal := h.Task
	if lc.pinned != nil {
		goal = lc.pinned.Text
	}
	written := p.Now
	if lc.prev != nil && lc.prev.ID == lc.id {
		written = lc.prev.Written
	}
	digest := Digest([]byte(text))
	pub := ledger.Published{
		Handoff: ledger.Handoff{Project: p.Root, Header: HeaderOf(text), Tool: h.Tool, SessionID: h.SessionID, Written: p.Now, Hash: digest},
		Record: ledger.HandoffRecord{ID: lc.id, Project: p.Root, Tool: h.Tool, SessionID: h.SessionID, NativeID: native,
			Head: h.Git.Head, Branch: h.Git.Branch, Hash: digest, Header: HeaderOf(text),
			Goal: contentLine(goal), Next: contentLine(h.Next), Files: files, Written: written, Updated: p.Now},
	}
	if lc.prev != nil && lc.prev.ID != lc.id {
		pub.Supersedes = lc.prev.ID
	}
	if err := l.RecordPublished(pub); err != nil {
		p.logf("record handoff %s: %v", lc.id, err)
	}
}

// Delivery is what a session start gets of the project's handoff.
type Delivery struct {
	Out    []byte // hook stdout (nil for nothing)
	Header string // the handoff's header when the whole handoff went out (the receipt)
	Why    string // why not, or what was noted, for the log
}

// Deliver renders the project's handoff text for a session's start (or
// its deferred first prompt): nothing when it was cleared or this session
// already holds it (resumed), a one-line notice once it expired, else the
// handoff with the banner and one line per staleness fact and parallel
// session. A handoff without an id (older carryover) goes out as Inject
// renders it.
func (p *Project) Deliver(l *ledger.Ledger, agent *adapters.Agent, event, text string, session int64, resumed bool) Delivery {
	id := IDOf(HeaderOf(text))
	if agent == nil || agent.Envelope == adapters.EnvelopeNone || text == "" {
		return Delivery{}
	}
	if id == "" || l == nil {
		w, hdr := p.Inject(agent, event, text)
		return Delivery{Out: w, Header: hdr}
	}
	rec, err := l.HandoffRecordByID(id)
	if errors.Is(err, ledger.ErrNoRecord) && p.RestoreFromFiles(l) > 0 { // a ledger rebuilt without it (restore.go)
		rec, err = l.HandoffRecordByID(id)
	}
	if err != nil {
		w, hdr := p.Inject(agent, event, text)
		return Delivery{Out: w, Header: hdr, Why: "no record of " + id + ": " + err.Error()}
	}
	if resumed && l.DeliveredID(p.Root, id, session) {
		return Delivery{Why: "session already holds " + id + "; not injected again"}
	}
	consumers, _ := l.Consumers(rec)
	st := StatusOf(rec, consumers, p.Now, p.ExpireAfter)
	if d, done := p.retired(agent, event, rec, st); done {
		return d
	}
	notes, why := p.deliveryNotes(l, rec, st, consumers, session)
	return p.wrapDelivery(agent, event, text, rec, notes, why)
}

// retired is what a cleared, forgotten or expired handoff delivers
// (done: nothing else).
func (p *Project) retired(agent *adapters.Agent, event string, rec ledger.HandoffRecord, st Status) (Delivery, bool) {
	expire := p.ExpireAfter
	if expire <= 0 {
		expire = DefaultExpireAfter
	}
	switch {
	case st.Status == StatusCleared:
		return Delivery{Why: rec.ID + " was cleared (carryover clear); not injected"}, true
	case st.Status == StatusForgotten:
		return Delivery{Why: rec.ID + "'s session was forgotten (carryover forget); not injected"}, true
	case st.Age > expire:
		w, err := adapters.Wrap(agent.Envelope, event, ExpiredNotice(rec, p.Now))
		if err != nil {
			p.logf("wrap injection: %v", err)
		}
		return Delivery{Out: w, Why: rec.ID + " expired; one-line notice only"}, true
	}
	return Delivery{}, false
}

// deliveryNotes are the lines put before the handoff's body: its age, its
// staleness facts, the limit note, and that another session already
// resumed it (why, for the log).
func (p *Project) deliveryNotes(l *ledger.Ledger, rec ledger.HandoffRecord, st Status, consumers []ledger.Consumer, session int64) (notes []string, why string) {
	if st.Age > 6*time.Hour {
		notes = append(notes, "> Note: this handoff was written "+Ago(p.Now, rec.Updated)+" — check `git log` and `git status` before acting on it.")
	}
	if p.Repo != nil {
		notes = append(notes, StaleLinesRepo(rec, p.Root, p.Repo(), time.Now().Add(StaleWalkBudget))...)
	}
	if p.Note != "" {
		notes = append(notes, p.Note)
	}
	if rec.SessionID != session {
		if n := AlreadyResumed(append(consumers, takeovers(l, rec)...), session, p.Now); n != "" {
			notes = append(notes, n)
			why = "already resumed by another session"
		}
	}
	return notes, why
}

// wrapDelivery is text, redacted, with notes after its header and protocol
// lines, clipped, in the agent's envelope with the banner.
func (p *Project) wrapDelivery(agent *adapters.Agent, event, text string, rec ledger.HandoffRecord, notes []string, why string) Delivery {
	if p.Redact != nil {
		text = p.Redact(text)
	}
	if len(notes) > 0 {
		lines := strings.SplitN(text, "\n", 3)
		if len(lines) == 3 {
			text = lines[0] + "\n" + lines[1] + "\n" + strings.Join(notes, "\n") + "\n" + lines[2]
		}
	}
	if len(text) > MaxChars+500 {
		text = clip(text, MaxChars)
	}
	header := HeaderOf(text)
	banner := Banner(p.Root, rec, p.Now, p.Redact)
	var w []byte
	var err error
	if agent.UserMessage {
		w, err = adapters.WrapWithMessage(agent.Envelope, event, text, banner)
	} else {
		w, err = adapters.Wrap(agent.Envelope, event, banner+"\n"+text)
	}
	if err != nil {
		p.logf("wrap injection: %v", err)
		return Delivery{}
	}
	return Delivery{Out: w, Header: header, Why: why}
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
	return oneLineText(b)
}

// takeovers is the receipt of the handoff rec's own session took over, if
// it did: a session that resumed a handoff publishes its own at its first
// prompt, and a session starting beside it must still hear that the task
// is taken.
func takeovers(l *ledger.Ledger, rec ledger.HandoffRecord) []ledger.Consumer {
	recs, err := l.HandoffRecords(rec.Project, 8)
	if err != nil {
		return nil
	}
	for i, r := range recs {
		if r.ID != rec.ID || i+1 >= len(recs) {
			continue
		}
		cs, _ := l.Consumers(recs[i+1])
		for _, c := range cs {
			if c.SessionID == rec.SessionID {
				return []ledger.Consumer{c}
			}
		}
	}
	return nil
}

// Clear retires the project's handoff rec (carryover clear): the ledger
// marks it cleared, so no session start injects it, and handoff.md
// becomes a stub saying so, for the agents that read the file through
// the pointer block instead of a hook. History keeps the text.
func (p *Project) Clear(l *ledger.Ledger, rec ledger.HandoffRecord) error {
	if err := l.EndHandoff(rec.ID, ledger.EndCleared, p.Now); err != nil {
		return err
	}
	// The cleared task is not the next handoff's Task: the next request is.
	if err := distill.ClearTask(l, p.Root, p.Now); err != nil {
		p.logf("clear the distilled task: %v", err)
	}
	mode, protocol := Protocol(p.Mode)
	text := Header(p.Now, contentLine(rec.Tool)) + " · " + rec.ID + "\n" +
		"# RESUME PROTOCOL: " + mode + " — " + protocol + "\n" +
		"## Task\n(none: the user cleared the last handoff; `carryover history show " + rec.ID + "` prints it)\n" +
		"## Next action\nAsk the user what to work on.\n"
	if err := l.RecordHandoff(ledger.Handoff{Project: p.Root, Header: HeaderOf(text), Tool: rec.Tool, SessionID: rec.SessionID, Written: p.Now, Hash: Digest([]byte(text))}); err != nil {
		return err
	}
	if err := RecordPublished(p.Home, p.Root, Digest([]byte(text))); err != nil {
		p.logf("record published handoff: %v", err)
	}
	if err := WriteAtomic(filepath.Join(p.Home, "handoff.md"), []byte(text)); err != nil {
		p.logf("write global handoff: %v", err)
	}
	if p.NotProject {
		return nil // no file in the home directory (the ledger's record says cleared)
	}
	return WriteOwn(p.Root, "handoff.md", []byte(text))
}
