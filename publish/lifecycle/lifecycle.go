// Package lifecycle is the handoff lifecycle (issue 14). Every handoff a
// project publishes has an id (publish.NewID) in handoff.md's header and
// a record in the ledger's handoff_log. A session keeps its id while it
// rewrites the handoff turn after turn; the next session that publishes
// starts a new one, which supersedes it. Consumption is read from the
// delivery receipts the hooks and transcripts record. The package owns
// the queries over those tables (the ledger keeps the schema and the
// salvage), the decisions log and the pinned task, the hook's two steps
// (Begin picks the id as Render renders, Deliver injects at a session
// start), history, staleness, clear and restore.
package lifecycle

import (
	"cmp"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
)

// Statuses of a handoff; "consumed" and "expired" are derived (receipts,
// age), "active" is the absence of the others.
const (
	StatusActive     = "active"
	StatusConsumed   = "consumed"
	StatusSuperseded = ledger.EndSuperseded
	StatusExpired    = "expired"
	StatusCleared    = ledger.EndCleared
	// StatusForgotten: its session was forgotten (`carryover forget`);
	// the record keeps only its id, project, agent and times.
	StatusForgotten = ledger.EndForgotten
)

// ErrNoRecord is returned for a handoff id the ledger does not know.
var ErrNoRecord = errors.New("no such handoff")

// ErrNoHistory is returned when a project has no handoff to show or act on.
var ErrNoHistory = errors.New("no handoffs recorded for this project yet")

const recordCols = `id, project, tool, session_id, native_id, head, branch, hash, header, goal, next, files, written, updated, ended, ended_at`

func scanRecord(sc ledger.Scanner) (ledger.HandoffRecord, error) {
	var r ledger.HandoffRecord
	var files string
	var w, u, e int64
	err := sc.Scan(&r.ID, &r.Project, &r.Tool, &r.SessionID, &r.NativeID, &r.Head, &r.Branch, &r.Hash, &r.Header, &r.Goal, &r.Next, &files, &w, &u, &r.Ended, &e)
	if files != "" {
		r.Files = strings.Split(files, "\n")
	}
	r.Written, r.Updated = time.UnixMilli(w), time.UnixMilli(u)
	if e != 0 {
		r.EndedAt = time.UnixMilli(e)
	}
	return r, err
}

// Save inserts r, or updates the rewrite of an existing id (the session
// that owns it published again).
func Save(s ledger.Store, r ledger.HandoffRecord) error {
	_, err := s.Exec(`INSERT INTO handoff_log (`+recordCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', 0)
		ON CONFLICT (id) DO UPDATE SET head = excluded.head, branch = excluded.branch, hash = excluded.hash, header = excluded.header,
			goal = excluded.goal, next = excluded.next, files = excluded.files, updated = excluded.updated`,
		r.ID, r.Project, r.Tool, r.SessionID, r.NativeID, r.Head, r.Branch, r.Hash, r.Header, r.Goal, r.Next,
		strings.Join(r.Files, "\n"), r.Written.UnixMilli(), r.Updated.UnixMilli())
	return err
}

// End records how a handoff ended (ledger.EndSuperseded, EndCleared). A
// handoff already ended keeps its first ending, except that clearing
// wins over superseding.
func End(s ledger.Store, id, how string, at time.Time) error {
	_, err := s.Exec(`UPDATE handoff_log SET ended = ?, ended_at = ? WHERE id = ? AND (ended = '' OR (? = 'cleared' AND ended != 'cleared'))`,
		how, at.UnixMilli(), id, how)
	return err
}

// ByID returns one record (ErrNoRecord when unknown).
func ByID(s ledger.Store, id string) (ledger.HandoffRecord, error) {
	r, err := scanRecord(s.QueryRow(`SELECT `+recordCols+` FROM handoff_log WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNoRecord
	}
	return r, err
}

// Records lists a project's handoffs (every project's when empty), newest
// first, at most limit. A Stop asks for its project's newest: the project
// index, not the whole log (ledger.ForProject).
func Records(s ledger.Store, project string, limit int) ([]ledger.HandoffRecord, error) {
	where, args := ledger.ForProject("project", project)
	return ledger.All(s, scanRecord, `SELECT `+recordCols+` FROM handoff_log WHERE `+where+` ORDER BY written DESC, id DESC LIMIT ?`, append(args, limit)...)
}

// Consumer is a session that received a handoff.
type Consumer struct {
	Tool      string
	SessionID int64
	NativeID  string
	At        time.Time // first receipt
	LastSeen  time.Time // the session's last event
}

// Consumers lists the sessions other than the handoff's own that received
// it (by any route), first receipt first.
func Consumers(s ledger.Store, r ledger.HandoffRecord) ([]Consumer, error) {
	return ledger.All(s, func(sc ledger.Scanner) (c Consumer, err error) {
		var at, seen int64
		err = sc.Scan(&c.Tool, &c.SessionID, &c.NativeID, &at, &seen)
		c.At, c.LastSeen = time.UnixMilli(at), time.UnixMilli(seen)
		return c, err
	}, `SELECT d.tool, d.session_id, s.native_id, MIN(d.at), s.last_seen
		FROM deliveries d JOIN sessions s ON s.id = d.session_id
		WHERE d.project = ? AND instr(d.header, ?) > 0 AND d.session_id != ?
		GROUP BY d.session_id ORDER BY MIN(d.at)`, r.Project, r.ID, r.SessionID)
}

// Deliveries lists receipts for a project (all projects when empty),
// newest first.
func Deliveries(s ledger.Store, project string, limit int) ([]ledger.Delivery, error) {
	where, args := ledger.ForProject("d.project", project)
	return ledger.All(s, func(sc ledger.Scanner) (d ledger.Delivery, err error) {
		var at int64
		err = sc.Scan(&d.Project, &d.Header, &d.Tool, &d.SessionID, &d.NativeID, &d.Via, &at)
		d.At = time.UnixMilli(at)
		return d, err
	}, `SELECT d.project, d.header, d.tool, d.session_id, s.native_id, d.via, d.at
		FROM deliveries d JOIN sessions s ON s.id = d.session_id
		WHERE `+where+` ORDER BY d.at DESC LIMIT ?`, append(args, limit)...)
}

// Handoffs lists every project's current handoff, newest first.
func Handoffs(s ledger.Store) ([]ledger.Handoff, error) {
	return ledger.All(s, func(sc ledger.Scanner) (h ledger.Handoff, err error) {
		var w int64
		err = sc.Scan(&h.Project, &h.Header, &h.Tool, &h.SessionID, &w)
		h.Written = time.UnixMilli(w)
		return h, err
	}, `SELECT project, header, tool, session_id, written FROM handoffs ORDER BY written DESC`)
}

// keepPublished is how many published handoff hashes a project keeps:
// concurrent hooks may finish their writes in another order than they
// recorded them, and any of the last few is carryover's own file.
const keepPublished = 8

// recordCurrent stores the project's current handoff header and the hash
// of its content.
func recordCurrent(s ledger.Store, h ledger.Handoff) error {
	if _, err := s.Exec(`INSERT INTO handoffs (project, header, tool, session_id, written) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (project) DO UPDATE SET header = excluded.header, tool = excluded.tool, session_id = excluded.session_id, written = excluded.written`,
		h.Project, h.Header, h.Tool, h.SessionID, h.Written.UnixMilli()); err != nil || h.Hash == "" {
		return err
	}
	if _, err := s.Exec(`INSERT INTO published (project, hash, written) VALUES (?, ?, ?)
		ON CONFLICT (project, hash) DO UPDATE SET written = excluded.written`, h.Project, h.Hash, h.Written.UnixMilli()); err != nil {
		return err
	}
	_, err := s.Exec(`DELETE FROM published WHERE project = ? AND hash NOT IN
		(SELECT hash FROM published WHERE project = ? ORDER BY written DESC, hash LIMIT ?)`, h.Project, h.Project, keepPublished)
	return err
}

// Status is where a handoff stands at a moment.
type Status struct {
	Status string
	Age    time.Duration // since its last rewrite
}

// StatusOf derives a handoff's status at now. Cleared wins; a handoff a
// session received stays consumed (who received it is the fact parallel
// sessions need) even once a newer one superseded it; an unconsumed one
// is superseded, else expired past expireAfter, else active.
func StatusOf(r ledger.HandoffRecord, consumers []Consumer, now time.Time, expireAfter time.Duration) Status {
	s := Status{Age: now.Sub(r.Updated)}
	switch {
	case r.Ended == ledger.EndForgotten || r.Ended == ledger.EndCleared:
		s.Status = r.Ended
	case len(consumers) > 0:
		s.Status = StatusConsumed
	case r.Ended == ledger.EndSuperseded:
		s.Status = StatusSuperseded
	case s.Age > publish.Expiry(expireAfter):
		s.Status = StatusExpired
	default:
		s.Status = StatusActive
	}
	return s
}

// workingWindow is how recently a session that took a handoff must have
// had an event to count as still working on it. Hooks fire at every
// prompt, tool call and turn end, so a working session is seen every few
// minutes; a session idle for half an hour has most likely been left.
const workingWindow = 30 * time.Minute

// AlreadyResumed is the note a new session gets when another session took
// the same handoff and is still working ("" when none is).
func AlreadyResumed(cs []Consumer, self int64, now time.Time) string {
	for i := len(cs) - 1; i >= 0; i-- {
		c := cs[i]
		if c.SessionID == self || now.Sub(c.LastSeen) > workingWindow {
			continue
		}
		native := c.NativeID
		if len(native) > 8 {
			native = native[:8]
		}
		return fmt.Sprintf("> Note: already resumed by %s session %s %s — another agent may be on this task; confirm with the user before picking it up.",
			publish.ContentLine(c.Tool), publish.ContentLine(native), publish.Ago(now, c.At))
	}
	return ""
}

func logf(p *publish.Project, format string, args ...any) {
	if p.Logf != nil {
		p.Logf(format, args...)
	}
}

// AddDecision adds a decision to the project's log. An extracted one
// never overrides what is there (a dropped decision stays dropped); the
// user's own revives and upgrades it. It reports whether the log changed.
func AddDecision(s ledger.Store, project string, d ledger.Decision) (bool, error) {
	q := `INSERT INTO decisions (project, text, why, source, at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`
	if d.Source == ledger.DecisionUser {
		q = `INSERT INTO decisions (project, text, why, source, at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (project, text) DO UPDATE SET why = excluded.why, source = excluded.source, at = excluded.at, dropped = 0`
	}
	return ledger.Changed(s, q, project, d.Text, d.Why, d.Source, d.At.UnixMilli())
}

// Decisions lists a project's live decisions: the user's first, then the
// extracted ones, each newest first (the order `decide --list` numbers).
func Decisions(s ledger.Store, project string) ([]ledger.Decision, error) {
	return ledger.All(s, func(sc ledger.Scanner) (d ledger.Decision, err error) {
		var at int64
		err = sc.Scan(&d.Text, &d.Why, &d.Source, &at)
		d.At = time.UnixMilli(at)
		return d, err
	}, `SELECT text, why, source, at FROM decisions WHERE project = ? AND dropped = 0
		ORDER BY source = 'user' DESC, at DESC, rowid DESC`, project)
}

// decisionTexts is every decision the project's log holds, dropped ones
// included (the extractor must not bring those back).
func decisionTexts(s ledger.Store, project string) (map[string]bool, error) {
	ts, err := ledger.All(s, func(sc ledger.Scanner) (t string, err error) { return t, sc.Scan(&t) },
		`SELECT text FROM decisions WHERE project = ?`, project)
	out := map[string]bool{}
	for _, t := range ts {
		out[t] = true
	}
	return out, err
}

// addExtracted adds the fold's decisions the log lacks (a Stop re-renders
// every turn, and most turns decide nothing new; dropped ones stay
// dropped) and returns the log.
func addExtracted(p *publish.Project, l *ledger.Ledger, extracted []string) []ledger.Decision {
	known, _ := decisionTexts(l, p.Root)
	for _, d := range extracted {
		if known[d] {
			continue
		}
		if _, err := AddDecision(l, p.Root, ledger.Decision{Text: d, Source: ledger.DecisionExtracted, At: p.Now}); err != nil {
			logf(p, "decisions log: %v", err)
			break
		}
	}
	ds, _ := Decisions(l, p.Root)
	return ds
}

// DropDecision marks a decision dropped (it is kept, so the extractor
// does not bring it back).
func DropDecision(s ledger.Store, project, text string) error {
	_, err := s.Exec(`UPDATE decisions SET dropped = 1 WHERE project = ? AND text = ?`, project, text)
	return err
}

// PinTask sets the project's pinned task.
func PinTask(s ledger.Store, project, text string, at time.Time) error {
	_, err := s.Exec(`INSERT INTO pinned_task (project, text, at) VALUES (?, ?, ?)
		ON CONFLICT (project) DO UPDATE SET text = excluded.text, at = excluded.at`, project, text, at.UnixMilli())
	return err
}

// Task returns the project's pinned task (ok false when none).
func Task(s ledger.Store, project string) (ledger.PinnedTask, bool) {
	var t ledger.PinnedTask
	var at int64
	if err := s.QueryRow(`SELECT text, at FROM pinned_task WHERE project = ?`, project).Scan(&t.Text, &at); err != nil {
		return t, false
	}
	t.At = time.UnixMilli(at)
	return t, true
}

// UnpinTask removes the project's pinned task, returning it.
func UnpinTask(s ledger.Store, project string) (ledger.PinnedTask, bool, error) {
	t, ok := Task(s, project)
	if !ok {
		return t, false, nil
	}
	_, err := s.Exec(`DELETE FROM pinned_task WHERE project = ?`, project)
	return t, true, err
}

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
	w, hdr := p.WrapBanner(agent, event, publish.WithNotes(p.Redacted(text), notes...), rec)
	return Delivery{Out: w, Header: hdr, Why: why}
}

// retired is what a cleared, forgotten or expired handoff delivers
// (done: nothing else).
func retired(p *publish.Project, agent *adapters.Agent, event string, rec ledger.HandoffRecord, st Status) (Delivery, bool) {
	switch {
	case st.Status == StatusCleared:
		return Delivery{Why: rec.ID + " was cleared (carryover clear); not injected"}, true
	case st.Status == StatusForgotten:
		return Delivery{Why: rec.ID + "'s session was forgotten (carryover forget); not injected"}, true
	case st.Age > publish.Expiry(p.ExpireAfter):
		return Delivery{Out: p.WrapExpired(agent, event, rec), Why: rec.ID + " expired; one-line notice only"}, true
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
