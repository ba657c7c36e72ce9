package lifecycle

import (
	"cmp"
	"errors"
	"path/filepath"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/redact"
)

// Begin is the lifecycle step of Render (publish.Lifecycle): the
// handoff's id (the session's own while it keeps publishing; a new one
// for a new session, or after a clear), the fold's decisions added to the
// project's log and read back with the pinned task, and Record, which
// stores what was published.
func Begin(p *publish.Project, l *ledger.Ledger, h distill.Handoff, native string) publish.Started {
	var s publish.Started
	var prev *ledger.HandoffRecord // the project's newest handoff before this one
	Restore(p, l)                  // only for a ledger rebuilt without the project's lifecycle
	if recs, err := Records(l, p.Root, 1); err == nil && len(recs) > 0 {
		prev = &recs[0]
		if prev.SessionID == h.SessionID && prev.Ended == "" {
			s.ID = prev.ID
		}
		s.Cleared = prev.Ended == ledger.EndCleared && !h.LastAt.After(prev.EndedAt)
	}
	if s.ID == "" {
		s.ID = publish.NewID(p.Now, native)
		// A new id adds a history file: rotation needs the ids carryover
		// recorded.
		if recs, err := Records(l, p.Root, 1<<20); err == nil {
			s.Owned = map[string]bool{}
			for _, r := range recs {
				s.Owned[r.ID] = true
			}
		}
	}
	s.Decisions = addExtracted(p, l, h.Decisions)
	if t, ok := Task(l, p.Root); ok {
		s.Pinned = &t
	}
	s.Record = func(text string) { record(p, l, s, prev, h, native, text) }
	return s
}

// record stores the handoff: its digest (trust), its entry under its id,
// and the end of the project's previous one it supersedes, in one
// transaction (one WAL commit per Stop instead of three).
func record(p *publish.Project, l *ledger.Ledger, s publish.Started, prev *ledger.HandoffRecord, h distill.Handoff, native, text string) {
	var files []string
	for _, f := range h.Files {
		files = append(files, f.Path)
	}
	goal := h.Task
	if s.Pinned != nil {
		goal = s.Pinned.Text
	}
	written := p.Now
	if prev != nil && prev.ID == s.ID {
		written = prev.Written
	}
	digest, header := publish.Digest([]byte(text)), publish.HeaderOf(text)
	rec := ledger.HandoffRecord{ID: s.ID, Project: p.Root, Tool: h.Tool, SessionID: h.SessionID, NativeID: native,
		Head: h.Git.Head, Branch: h.Git.Branch, Hash: digest, Header: header,
		Goal: publish.ContentLine(goal), Next: publish.ContentLine(h.Next), Files: files, Written: written, Updated: p.Now}
	err := saveRecord(l, rec, ledger.Handoff{Project: p.Root, Header: header, Tool: h.Tool, SessionID: h.SessionID, Written: p.Now, Hash: digest}, prev, s.ID, p.Now)
	if err != nil {
		logf(p, "record handoff %s: %v", s.ID, err)
	}
}

// saveRecord saves the handoff's record (and, when it replaces prev, ends
// prev) and makes it the project's current handoff, in one transaction.
func saveRecord(l *ledger.Ledger, rec ledger.HandoffRecord, cur ledger.Handoff, prev *ledger.HandoffRecord, id string, now time.Time) error {
	tx, err := l.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := recordCurrent(tx, cur); err != nil {
		return err
	}
	if err := Save(tx, rec); err != nil {
		return err
	}
	if prev != nil && prev.ID != id {
		if err := End(tx, prev.ID, ledger.EndSuperseded, now); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Delivery is what a session start gets of the project's handoff.
type Delivery struct {
	Out    []byte // hook stdout (nil for nothing)
	Header string // the handoff's header when the whole handoff went out (the receipt)
	Why    string // why not, or what was noted, for the log
}

// Deliver is the lifecycle step of a session's start (or its deferred
// first prompt): it renders the project's handoff text for the agent and
// records the receipt. Nothing when it was cleared or this session
// already holds it (resumed), a one-line notice once it expired, else the
// handoff with the banner and one line per staleness fact and parallel
// session. A handoff without an id (older carryover) goes out as Inject
// renders it.
func Deliver(p *publish.Project, l *ledger.Ledger, agent *adapters.Agent, event, text string, session int64, resumed bool) Delivery {
	if l != nil && text != "" && resumed && ledger.Has(l, `SELECT COUNT(*) FROM deliveries WHERE project = ? AND header = ? AND session_id = ?`, p.Root, publish.HeaderOf(text), session) {
		return Delivery{Why: "session already holds this handoff; not injected again"}
	}
	d := deliver(p, l, agent, event, text, session, resumed)
	if d.Header != "" && l != nil {
		_ = l.RecordDelivery(ledger.Delivery{Project: p.Root, Header: d.Header, Tool: agent.Name, SessionID: session, Via: "hook", At: p.Now})
	}
	return d
}

func deliver(p *publish.Project, l *ledger.Ledger, agent *adapters.Agent, event, text string, session int64, resumed bool) Delivery {
	id := publish.IDOf(publish.HeaderOf(text))
	if agent == nil || agent.Envelope == adapters.EnvelopeNone || text == "" {
		return Delivery{}
	}
	if id == "" || l == nil {
		w, hdr := p.Inject(agent, event, text)
		return Delivery{Out: w, Header: hdr}
	}
	rec, err := ByID(l, id)
	if errors.Is(err, ErrNoRecord) && Restore(p, l) > 0 { // a ledger rebuilt without it
		rec, err = ByID(l, id)
	}
	if err != nil {
		w, hdr := p.Inject(agent, event, text)
		return Delivery{Out: w, Header: hdr, Why: "no record of " + id + ": " + err.Error()}
	}
	if resumed && ledger.Has(l, `SELECT COUNT(*) FROM deliveries WHERE project = ? AND session_id = ? AND instr(header, ?) > 0`, p.Root, session, id) {
		return Delivery{Why: "session already holds " + id + "; not injected again"}
	}
	consumers, _ := Consumers(l, rec)
	st := StatusOf(rec, consumers, p.Now, p.ExpireAfter)
	if d, done := retired(p, agent, event, rec, st); done {
		return d
	}
	notes, why := deliveryNotes(p, l, rec, st, consumers, session)
	return wrapDelivery(p, agent, event, text, rec, notes, why)
}

// retired is what a cleared, forgotten or expired handoff delivers
// (done: nothing else).
func retired(p *publish.Project, agent *adapters.Agent, event string, rec ledger.HandoffRecord, st Status) (Delivery, bool) {
	switch {
	case st.Status == StatusCleared:
		return Delivery{Why: rec.ID + " was cleared (carryover clear); not injected"}, true
	case st.Status == StatusForgotten:
		return Delivery{Why: rec.ID + "'s session was forgotten (carryover forget); not injected"}, true
	case st.Age > expiry(p.ExpireAfter):
		w, err := adapters.Wrap(agent.Envelope, event, publish.ExpiredNotice(rec, p.Now))
		if err != nil {
			logf(p, "wrap injection: %v", err)
		}
		return Delivery{Out: w, Why: rec.ID + " expired; one-line notice only"}, true
	}
	return Delivery{}, false
}

// deliveryNotes are the lines put before the handoff's body: its age, its
// staleness facts, the limit note, and that another session already
// resumed it (why, for the log).
func deliveryNotes(p *publish.Project, l *ledger.Ledger, rec ledger.HandoffRecord, st Status, consumers []Consumer, session int64) (notes []string, why string) {
	if st.Age > 6*time.Hour {
		notes = append(notes, "> Note: this handoff was written "+publish.Ago(p.Now, rec.Updated)+" — check `git log` and `git status` before acting on it.")
	}
	if p.Repo != nil {
		notes = append(notes, StaleLines(rec, p.Root, p.Repo(), time.Now().Add(StaleWalkBudget))...)
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
func wrapDelivery(p *publish.Project, agent *adapters.Agent, event, text string, rec ledger.HandoffRecord, notes []string, why string) Delivery {
	if p.Redact != nil {
		text = p.Redact(text)
	}
	if lines := strings.SplitN(text, "\n", 3); len(notes) > 0 && len(lines) == 3 {
		text = lines[0] + "\n" + lines[1] + "\n" + strings.Join(notes, "\n") + "\n" + lines[2]
	}
	if len(text) > publish.MaxChars+500 {
		text = redact.Clip(text, publish.MaxChars)
	}
	banner := publish.Banner(p.Root, rec, p.Now, p.Redact)
	var w []byte
	var err error
	if agent.UserMessage {
		w, err = adapters.WrapWithMessage(agent.Envelope, event, text, banner)
	} else {
		w, err = adapters.Wrap(agent.Envelope, event, banner+"\n"+text)
	}
	if err != nil {
		logf(p, "wrap injection: %v", err)
		return Delivery{}
	}
	return Delivery{Out: w, Header: publish.HeaderOf(text), Why: why}
}

// takeovers is the receipt of the handoff rec's own session took over, if
// it did: a session that resumed a handoff publishes its own at its first
// prompt, and a session starting beside it must still hear that the task
// is taken.
func takeovers(l *ledger.Ledger, rec ledger.HandoffRecord) []Consumer {
	recs, _ := Records(l, rec.Project, 8)
	for i, r := range recs {
		if r.ID != rec.ID || i+1 >= len(recs) {
			continue
		}
		cs, _ := Consumers(l, recs[i+1])
		for _, c := range cs {
			if c.SessionID == rec.SessionID {
				return []Consumer{c}
			}
		}
	}
	return nil
}

// Clear retires the project's current handoff (carryover clear) and
// returns its id; already: it was cleared before; ErrNoHistory when there
// is none. The ledger marks it cleared, so no session start injects it,
// and handoff.md becomes a stub saying so, for the agents that read the
// file through the pointer block instead of a hook. History keeps the
// text.
func Clear(p *publish.Project, l *ledger.Ledger) (id string, already bool, err error) {
	var recs []ledger.HandoffRecord
	if l != nil {
		recs, err = Records(l, p.Root, 1)
	}
	if err != nil || len(recs) == 0 {
		return "", false, cmp.Or(err, ErrNoHistory)
	}
	rec := recs[0]
	if rec.Ended == ledger.EndCleared {
		return rec.ID, true, nil
	}
	if err := End(l, rec.ID, ledger.EndCleared, p.Now); err != nil {
		return rec.ID, false, err
	}
	// The cleared task is not the next handoff's Task: the next request is.
	if err := distill.ClearTask(l, p.Root, p.Now); err != nil {
		logf(p, "clear the distilled task: %v", err)
	}
	mode, protocol := publish.Protocol(p.Mode)
	text := publish.Header(p.Now, publish.ContentLine(rec.Tool)) + " · " + rec.ID + "\n" +
		"# RESUME PROTOCOL: " + mode + " — " + protocol + "\n" +
		"## Task\n(none: the user cleared the last handoff; `carryover history show " + rec.ID + "` prints it)\n" +
		"## Next action\nAsk the user what to work on.\n"
	digest := publish.Digest([]byte(text))
	if err := recordCurrent(l, ledger.Handoff{Project: p.Root, Header: publish.HeaderOf(text), Tool: rec.Tool, SessionID: rec.SessionID, Written: p.Now, Hash: digest}); err != nil {
		return rec.ID, false, err
	}
	if err := publish.RecordPublished(p.Home, p.Root, digest); err != nil {
		logf(p, "record published handoff: %v", err)
	}
	if err := publish.WriteAtomic(filepath.Join(p.Home, "handoff.md"), []byte(text)); err != nil {
		logf(p, "write global handoff: %v", err)
	}
	if p.NotProject {
		return rec.ID, false, nil // no file in the home directory (the ledger's record says cleared)
	}
	return rec.ID, false, publish.WriteOwn(p.Root, "handoff.md", []byte(text))
}
