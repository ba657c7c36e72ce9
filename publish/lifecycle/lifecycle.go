// Package lifecycle is the handoff lifecycle (issue 14). Every handoff a project publishes has an id (publish.NewID) in
// handoff.md's header and a record in the ledger's handoff_log. A session keeps its id while it rewrites the handoff
// turn after turn; the next session that publishes starts a new one, which supersedes it. Consumption is read from the
// delivery receipts hooks and transcripts record. The package owns the queries over those tables (the ledger keeps
// schema and salvage), the decisions log and pinned task, the hook's two steps (Begin picks the id as Render renders,
// Deliver injects at a session start), history, staleness, clear and restore.
package lifecycle

import (
	"cmp"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/redact"
)

// Statuses of a handoff; "consumed" and "expired" are derived (receipts, age), "active" is the absence of the others;
// "forgotten": its session was forgotten (`carryover forget`), the record keeps only id, project, agent and times.
const (
	StatusActive     = "active"
	StatusConsumed   = "consumed"
	StatusSuperseded = ledger.EndSuperseded
	StatusExpired    = "expired"
	StatusCleared    = ledger.EndCleared
	StatusForgotten  = ledger.EndForgotten
)

var (
	ErrNoRecord  = errors.New("no such handoff")                           // an id the ledger does not know
	ErrNoHistory = errors.New("no handoffs recorded for this project yet") // nothing to show or act on
)

// Save inserts r, or updates the rewrite of an existing id (its session published again).
func Save(s ledger.Store, r ledger.HandoffRecord) error {
	_, err := s.Exec(`INSERT INTO handoff_log (`+ledger.RecordCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', 0)
		ON CONFLICT (id) DO UPDATE SET head = excluded.head, branch = excluded.branch, hash = excluded.hash, header = excluded.header,
			goal = excluded.goal, next = excluded.next, files = excluded.files, updated = excluded.updated`,
		r.ID, r.Project, r.Tool, r.SessionID, r.NativeID, r.Head, r.Branch, r.Hash, r.Header, r.Goal, r.Next,
		strings.Join(r.Files, "\n"), r.Written.UnixMilli(), r.Updated.UnixMilli())
	return err
}

// End records how a handoff ended (ledger.EndSuperseded, EndCleared); its first ending stays, except that clearing wins
// over superseding.
func End(s ledger.Store, id, how string, at time.Time) error {
	_, err := s.Exec(`UPDATE handoff_log SET ended = ?, ended_at = ? WHERE id = ? AND (ended = '' OR (? = 'cleared' AND ended != 'cleared'))`,
		how, at.UnixMilli(), id, how)
	return err
}

// ByID returns one record (ErrNoRecord when unknown).
func ByID(s ledger.Store, id string) (ledger.HandoffRecord, error) {
	r, err := ledger.ScanRecord(s.QueryRow(`SELECT `+ledger.RecordCols+` FROM handoff_log WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, ErrNoRecord
	}
	return r, err
}

// Records lists a project's handoffs (every project's when ""), newest first, at most limit. A Stop asks for its
// project's newest: the project index, not the whole log (ledger.ForProject).
func Records(s ledger.Store, project string, limit int) ([]ledger.HandoffRecord, error) {
	where, args := ledger.ForProject("project", project)
	return ledger.All(s, ledger.ScanRecord, `SELECT `+ledger.RecordCols+` FROM handoff_log WHERE `+where+` ORDER BY written DESC, id DESC LIMIT `+strconv.Itoa(limit), args...) // a literal LIMIT: see ledger.RowsAfter
}

// Consumer is a session that received a handoff.
type Consumer struct {
	Tool      string
	SessionID int64
	NativeID  string
	At        time.Time // first receipt
	LastSeen  time.Time // the session's last event
}

// Consumers lists the sessions other than the handoff's own that received it (by any route), first receipt first.
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

// Deliveries lists receipts for a project (all when ""), newest first.
func Deliveries(s ledger.Store, project string, limit int) ([]ledger.Delivery, error) {
	where, args := ledger.ForProject("d.project", project)
	return ledger.All(s, func(sc ledger.Scanner) (d ledger.Delivery, err error) {
		var at int64
		err = sc.Scan(&d.Project, &d.Header, &d.Tool, &d.SessionID, &d.NativeID, &d.Via, &at)
		d.At = time.UnixMilli(at)
		return d, err
	}, `SELECT d.project, d.header, d.tool, d.session_id, s.native_id, d.via, d.at
		FROM deliveries d JOIN sessions s ON s.id = d.session_id
		WHERE `+where+` ORDER BY d.at DESC LIMIT `+strconv.Itoa(limit), args...)
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

// keepPublished is how many published hashes a project keeps: concurrent hooks may finish their writes in another order
// than they recorded them, and any of the last few is carryover's own file.
const keepPublished = 8

// recordCurrent stores the project's current handoff header and its hash.
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
		(SELECT hash FROM published WHERE project = ? ORDER BY written DESC, hash LIMIT `+strconv.Itoa(keepPublished)+`)`, h.Project, h.Project)
	return err
}

// Status is where a handoff stands at a moment.
type Status struct {
	Status string
	Age    time.Duration // since its last rewrite
}

// StatusOf derives a handoff's status at now. Cleared wins; a handoff a session received stays consumed (who received
// it is what parallel sessions need) even once superseded; an unconsumed one is superseded, else expired past
// expireAfter, else active.
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

// workingWindow: a session that took a handoff counts as still working on it when it had an event this recently. Hooks
// fire at every prompt, tool call and turn end, so a working session is seen every few minutes; one idle for half an
// hour has most likely been left.
const workingWindow = 30 * time.Minute

// AlreadyResumed is the note a new session gets when another session took the same handoff and is still working (""
// when none is).
func AlreadyResumed(cs []Consumer, self int64, now time.Time) string {
	for i := len(cs) - 1; i >= 0; i-- {
		c := cs[i]
		if c.SessionID == self || now.Sub(c.LastSeen) > workingWindow {
			continue
		}
		native := c.NativeID[:min(len(c.NativeID), 8)]
		return fmt.Sprintf("> Note: already resumed by %s session %s %s — another agent may be on this task; confirm with the user before picking it up.",
			publish.ContentLine(c.Tool), publish.ContentLine(native), publish.Ago(now, c.At))
	}
	return ""
}

// AddDecision adds a decision to the project's log and reports whether the log changed. An extracted one never
// overrides what is there (a dropped decision stays dropped); the user's own revives and upgrades it.
func AddDecision(s ledger.Store, project string, d ledger.Decision) (bool, error) {
	q := `INSERT INTO decisions (project, text, why, source, at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`
	if d.Source == ledger.DecisionUser {
		q = `INSERT INTO decisions (project, text, why, source, at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (project, text) DO UPDATE SET why = excluded.why, source = excluded.source, at = excluded.at, dropped = 0`
	}
	return ledger.Changed(s, q, project, d.Text, d.Why, d.Source, d.At.UnixMilli())
}

// Decisions lists a project's live decisions: the user's first, then the extracted ones, each newest first (the order
// `decide --list` numbers).
func Decisions(s ledger.Store, project string) ([]ledger.Decision, error) {
	return ledger.All(s, ledger.ScanDecision, `SELECT text, why, source, at FROM decisions WHERE project = ? AND dropped = 0
		ORDER BY source = 'user' DESC, at DESC, rowid DESC`, project)
}

// decisionTexts is every decision in the project's log, dropped ones included (the extractor must not bring those
// back).
func decisionTexts(s ledger.Store, project string) (map[string]bool, error) {
	ts, err := ledger.All(s, ledger.ScanValue[string],
		`SELECT text FROM decisions WHERE project = ?`, project)
	out := map[string]bool{}
	for _, t := range ts {
		out[t] = true
	}
	return out, err
}

// addExtracted adds the fold's decisions the log lacks (a Stop re-renders every turn, and most turns decide nothing
// new) and returns the log.
func addExtracted(p *publish.Project, l *ledger.Ledger, extracted []string) []ledger.Decision {
	known, _ := decisionTexts(l, p.Root)
	for _, d := range extracted {
		if known[d] {
			continue
		}
		if _, err := AddDecision(l, p.Root, ledger.Decision{Text: d, Source: ledger.DecisionExtracted, At: p.Now}); err != nil {
			p.Log("decisions log: %v", err)
			break
		}
		dropSupersededBy(l, p.Root, d, extracted)
	}
	ds, _ := Decisions(l, p.Root)
	return ds
}

// dropSupersededBy drops the logged decisions new decision d supersedes by distill's own rule ("switch the cache to
// Redis" after "cache in memory"), extracted ones the fold no longer holds: the log drops what the fold dropped.
func dropSupersededBy(l *ledger.Ledger, root, d string, held []string) {
	ds, _ := Decisions(l, root)
	for _, o := range ds {
		if stale(o, held) && distill.Supersedes(d, o.Text) {
			DropDecision(l, root, o.Text)
		}
	}
}

func stale(d ledger.Decision, held []string) bool {
	return d.Source == ledger.DecisionExtracted && !slices.Contains(held, d.Text)
}

// DropDecision marks a decision dropped (kept, so the extractor does not bring it back).
func DropDecision(s ledger.Store, project, text string) error {
	_, err := s.Exec(`UPDATE decisions SET dropped = 1 WHERE project = ? AND text = ?`, project, text)
	return err
}

func PinTask(s ledger.Store, project, text string, at time.Time) error {
	_, err := s.Exec(`INSERT INTO pinned_task (project, text, at) VALUES (?, ?, ?)
		ON CONFLICT (project) DO UPDATE SET text = excluded.text, at = excluded.at`, project, text, at.UnixMilli())
	return err
}

// Task returns the project's pinned task (ok false when none).
func Task(s ledger.Store, project string) (ledger.PinnedTask, bool) {
	var t ledger.PinnedTask
	var at int64
	err := s.QueryRow(`SELECT text, at FROM pinned_task WHERE project = ?`, project).Scan(&t.Text, &at)
	t.At = time.UnixMilli(at)
	return t, err == nil
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

// Begin is the lifecycle step the service runs between publish.Project.Prepare and Render: the handoff's id (the
// session's own while it keeps publishing; a new one for a new session or after a clear), the fold's decisions added
// to the log and read back with the pinned task, and Record, which stores what was published.
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
		// A new id adds a history file: rotation needs the ids carryover recorded.
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
	s.Record = func(text string) {
		if err := record(p, l, s, prev, h, native, text); err != nil {
			p.Log("record handoff %s: %v", s.ID, err)
		}
	}
	return s
}

// record stores the handoff — its digest (trust), its entry under its id, the end of the previous one it supersedes —
// in one transaction (one WAL commit per Stop instead of three).
func record(p *publish.Project, l *ledger.Ledger, s publish.Started, prev *ledger.HandoffRecord, h distill.Handoff, native, text string) error {
	files := publish.Map(h.Files, func(f distill.File) string { return f.Path })
	goal, written := h.Task, p.Now
	if s.Pinned != nil {
		goal = s.Pinned.Text
	}
	if prev != nil && prev.ID == s.ID {
		written = prev.Written
	}
	digest, header := publish.Digest([]byte(text)), publish.HeaderOf(text)
	tx, err := l.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := recordCurrent(tx, ledger.Handoff{Project: p.Root, Header: header, Tool: h.Tool, SessionID: h.SessionID, Written: p.Now, Hash: digest}); err != nil {
		return err
	}
	if err := Save(tx, ledger.HandoffRecord{ID: s.ID, Project: p.Root, Tool: h.Tool, SessionID: h.SessionID, NativeID: native,
		Head: h.Git.Head, Branch: h.Git.Branch, Hash: digest, Header: header,
		Goal: publish.ContentLine(goal), Next: publish.ContentLine(h.Next), Files: files, Written: written, Updated: p.Now}); err != nil {
		return err
	}
	if prev != nil && prev.ID != s.ID {
		if err := End(tx, prev.ID, ledger.EndSuperseded, p.Now); err != nil {
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

// Deliver is a session start's lifecycle step (or its deferred first prompt): the project's handoff text rendered for
// the agent, and its receipt recorded. Nothing when cleared or this session already holds it (resumed), a one-line
// notice once expired, else the handoff with the banner and one line per staleness fact and parallel session. A handoff
// without an id (older carryover) goes out as Inject renders it.
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

// retired is what a cleared, forgotten or expired handoff delivers (done: nothing else).
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

// deliveryNotes are the lines before the handoff's body: its age, its staleness facts, the limit note, and that another
// session already resumed it (why, for the log).
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
			notes, why = append(notes, n), "already resumed by another session"
		}
	}
	return notes, why
}

// takeovers is the receipt of the handoff rec's own session took over, if it did: a session that resumed a handoff
// publishes its own at its first prompt, and a session starting beside it must still hear the task is taken.
func takeovers(l *ledger.Ledger, rec ledger.HandoffRecord) []Consumer {
	recs, _ := Records(l, rec.Project, 8)
	i := slices.IndexFunc(recs, func(r ledger.HandoffRecord) bool { return r.ID == rec.ID })
	if i < 0 || i+1 >= len(recs) {
		return nil
	}
	cs, _ := Consumers(l, recs[i+1])
	for _, c := range cs {
		if c.SessionID == rec.SessionID {
			return []Consumer{c}
		}
	}
	return nil
}

// Clear retires the project's current handoff (carryover clear) and returns its id; already: cleared before;
// ErrNoHistory when there is none. The ledger marks it cleared, so no session start injects it, and handoff.md becomes
// a stub saying so, for agents that read the file through the pointer block instead of a hook. History keeps the text.
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
	p.LogErr("clear the distilled task", distill.ClearTask(l, p.Root, p.Now))
	mode, protocol := publish.Protocol(p.Mode)
	text := publish.Header(p.Now, publish.ContentLine(rec.Tool)) + " · " + rec.ID + "\n" +
		"# RESUME PROTOCOL: " + mode + " — " + protocol + "\n" +
		"## Task\n(none: the user cleared the last handoff; `carryover history show " + rec.ID + "` prints it)\n" +
		"## Next action\nAsk the user what to work on.\n"
	digest := publish.Digest([]byte(text))
	if err := recordCurrent(l, ledger.Handoff{Project: p.Root, Header: publish.HeaderOf(text), Tool: rec.Tool, SessionID: rec.SessionID, Written: p.Now, Hash: digest}); err != nil {
		return rec.ID, false, err
	}
	p.LogErr("record published handoff", publish.RecordPublished(p.Home, p.Root, digest))
	p.LogErr("write global handoff", publish.WriteAtomic(filepath.Join(p.Home, "handoff.md"), []byte(text)))
	if p.NotProject {
		return rec.ID, false, nil // no file in the home directory (the ledger's record says cleared)
	}
	return rec.ID, false, publish.WriteOwn(p.Root, "handoff.md", []byte(text))
}

// HistoryEntry is one handoff as `carryover history` and status show it.
type HistoryEntry struct {
	ID         string           `json:"id"`
	Status     string           `json:"status"`
	Agent      string           `json:"agent"`
	Session    string           `json:"session"`
	Written    time.Time        `json:"written"`
	Updated    time.Time        `json:"updated"`
	Age        string           `json:"age"`
	Goal       string           `json:"goal"`
	Next       string           `json:"next"`
	Head       string           `json:"head,omitempty"`
	Branch     string           `json:"branch,omitempty"`
	ConsumedBy []ConsumerReport `json:"consumed_by"`
	Staleness  []string         `json:"staleness,omitempty"`
	File       bool             `json:"file"` // its text is in .carryover/history
}

// ConsumerReport is a session that received a handoff.
type ConsumerReport struct {
	Agent   string    `json:"agent"`
	Session string    `json:"session"`
	At      time.Time `json:"at"`
}

// History lists the project's handoffs, newest first: the ledger's records, and history files the ledger no longer
// knows (status "unrecorded", after a ledger rebuild). l may be nil (no ledger yet).
func History(l *ledger.Ledger, project string, now time.Time, expireAfter time.Duration) ([]HistoryEntry, error) {
	out := []HistoryEntry{}
	files, err := publish.HistoryIDs(project)
	if err != nil {
		return out, fmt.Errorf("read history of %s: %w", project, err)
	}
	recs, err := records(l, project)
	if err != nil {
		return out, err
	}
	known := map[string]bool{}
	for _, r := range recs {
		cs, _ := Consumers(l, r)
		out = append(out, entryOf(r, cs, now, expireAfter, slices.Contains(files, r.ID)))
		known[r.ID] = true
	}
	for _, id := range files {
		if !known[id] {
			out = append(out, HistoryEntry{ID: id, Status: "unrecorded", File: true, ConsumedBy: []ConsumerReport{}})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out, nil
}

func records(l *ledger.Ledger, project string) ([]ledger.HandoffRecord, error) {
	if l == nil {
		return nil, nil
	}
	return Records(l, project, 1<<30)
}

func entryOf(r ledger.HandoffRecord, cs []Consumer, now time.Time, expireAfter time.Duration, file bool) HistoryEntry {
	st := StatusOf(r, cs, now, expireAfter)
	e := HistoryEntry{ID: r.ID, Status: st.Status, Agent: publish.OneLine(r.Tool), Session: publish.OneLine(r.NativeID), Written: r.Written.UTC(), Updated: r.Updated.UTC(),
		Age: publish.Ago(now, r.Updated), Goal: publish.OneLine(r.Goal), Next: publish.OneLine(r.Next), Head: publish.OneLine(r.Head),
		Branch: publish.OneLine(distill.GitString(r.Branch)), File: file, ConsumedBy: append([]ConsumerReport{}, publish.Map(cs, func(c Consumer) ConsumerReport {
			return ConsumerReport{Agent: publish.OneLine(c.Tool), Session: publish.OneLine(c.NativeID), At: c.At.UTC()}
		})...)}
	return e
}

// Current is the project's newest handoff with its status and staleness now (nil when the ledger has none; l may be
// nil).
func Current(l *ledger.Ledger, project string, now time.Time, expireAfter time.Duration, repo *distill.Repo) *HistoryEntry {
	if l == nil {
		return nil
	}
	recs, err := Records(l, project, 1)
	if err != nil || len(recs) == 0 {
		return nil
	}
	cs, _ := Consumers(l, recs[0])
	e := entryOf(recs[0], cs, now, expireAfter, false)
	e.Staleness = StaleLines(recs[0], project, repo, time.Now().Add(4*StaleWalkBudget)) // status, history: no agent waiting
	return &e
}

// CleanHistory forgets the project's handoffs written before now-olderThan (ledger records and history files; files the
// ledger does not know are judged by the time in their id) and returns their ids; dryRun only lists.
func CleanHistory(l *ledger.Ledger, project string, now time.Time, olderThan time.Duration, dryRun bool) ([]string, error) {
	cut := now.Add(-olderThan)
	recs, err := records(l, project)
	if err != nil {
		return nil, err
	}
	var ids []string
	known := map[string]bool{}
	for _, r := range recs {
		known[r.ID] = true
		if r.Written.Before(cut) {
			ids = append(ids, r.ID)
		}
	}
	recorded := len(ids)
	files, err := publish.HistoryIDs(project)
	if err != nil {
		return ids, err
	}
	for _, id := range files {
		if t, ok := publish.IDTime(id); ok && t.Before(cut) && !known[id] {
			ids = append(ids, id)
		}
	}
	if dryRun {
		return ids, nil
	}
	for _, id := range ids[:recorded] {
		if _, err := l.Exec(`DELETE FROM handoff_log WHERE id = ?`, id); err != nil {
			return nil, err
		}
	}
	return ids, publish.RemoveHistory(project, ids)
}

// maxStaleFiles bounds the files a staleness check stats: one lstat each, never a walk of the work tree (a handoff
// names at most a screenful).
const maxStaleFiles = 20

// StaleWalkBudget bounds the commit walk of a session start's staleness lines: ~1 ms per 20 commits here, so 1,000
// commits fit with room; a cold cache or a huge pack may not, and the line then goes without the count rather than
// delaying the session.
const StaleWalkBudget = 250 * time.Millisecond

// StaleLines says, one line each, what changed since handoff r was written: files it names changed on disk (lstat'ed
// only when regular files inside the project), the branch switched, commits since its HEAD in repo. The walk back to
// that HEAD runs only when HEAD moved, and stops at git.MaxCommitWalk ("1000+") or at deadline (then only "HEAD a →
// b").
func StaleLines(r ledger.HandoffRecord, root string, repo *distill.Repo, deadline time.Time) []string {
	head := repo.Head()
	var c distill.CommitCount
	if r.Head != "" && head != "" && r.Head != head {
		c = repo.CommitsSince(r.Head, deadline)
	}
	return staleLines(r, root, head, distill.GitBranch(repo.Branch()), c)
}

func staleLines(r ledger.HandoffRecord, root string, head, branch string, commits distill.CommitCount) []string {
	var out []string
	if l := changedLine(changedSince(r, root)); l != "" {
		out = append(out, l)
	}
	// A record written before GitString redacted branches is redacted here.
	if old := distill.GitString(r.Branch); old != "" && branch != "" && old != branch {
		out = append(out, "> Branch switched since: "+redact.Clip(publish.ContentLine(old), 80)+" → "+redact.Clip(publish.ContentLine(branch), 80)+".")
	}
	if r.Head != "" && head != "" && r.Head != head {
		out = append(out, headLine(r.Head, head, commits))
	}
	return out
}

// changedSince are the handoff's files (the first maxStaleFiles, inside root) that are gone or were modified after it
// was written.
func changedSince(r ledger.HandoffRecord, root string) []string {
	var changed []string
	for _, f := range r.Files[:min(len(r.Files), maxStaleFiles)] {
		abs := f
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(root, f)
		}
		if rel, err := filepath.Rel(root, abs); err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		fi, err := os.Lstat(abs) // never follows a symlink; opens nothing
		switch {
		case err != nil:
			changed = append(changed, redact.Clip(publish.ContentLine(f), 80)+" (gone)")
		case fi.Mode().IsRegular() && fi.ModTime().After(r.Updated):
			changed = append(changed, redact.Clip(publish.ContentLine(f), 80))
		}
	}
	return changed
}

// changedLine names the first 5 changed files and counts the rest ("" none).
func changedLine(changed []string) string {
	if len(changed) == 0 {
		return ""
	}
	shown := changed[:min(len(changed), 5)]
	l := "> Changed on disk since: " + strings.Join(shown, ", ")
	if len(changed) > len(shown) {
		l += fmt.Sprintf(" (+%d more)", len(changed)-len(shown))
	}
	return l + " — re-read before editing."
}

// headLine says how HEAD moved from the handoff's (from) to now (to).
func headLine(from, to string, commits distill.CommitCount) string {
	from, to = redact.Clip(publish.ContentLine(from), 40), redact.Clip(publish.ContentLine(to), 40)
	switch {
	case commits.NotAncestor:
		return "> HEAD moved since: " + from + " → " + to + ", and " + from + " is no longer in its history (rebased, reset or another branch) — check `git log`."
	case commits.String() != "":
		return "> Commits since: " + commits.String() + " (HEAD " + from + " → " + to + ") — check `git log`."
	}
	return "> Commits since: HEAD " + from + " → " + to + " — check `git log`."
}

// Restoring a project's lifecycle from its files. A ledger rebuilt after damage gets back what the damaged file still
// held (ledger/recover_lifecycle.go); when that was unreadable (a destroyed header on a ledger too large to rebuild on
// a copy), the project's own files still hold its last handoffs. Those may be planted by a repository: only a text
// whose digest carryover recorded when publishing it (sidecar under the home, or the ledger) is read, only through
// safefile. A history file no record vouches for stays "unrecorded"; it never adds decisions or a pinned task.

// maxRestoreFiles bounds the history files read while restoring (the default rotation keeps 50).
const maxRestoreFiles = 64

// Restore restores the project's handoff records, pinned task and decisions from its verified handoff.md and history
// files when the ledger knows no handoff of the project (a rebuild that salvaged none; a project that never published
// has no files), and returns how many handoffs it recorded.
func Restore(p *publish.Project, l *ledger.Ledger) int {
	if l == nil || l.HandoffKnown(p.Root) {
		return 0
	}
	seen := map[string]bool{}
	var newest *ledger.HandoffRecord
	for _, text := range verifiedTexts(p, l) {
		rec, ok := publish.RecordOfText(text)
		if !ok || seen[rec.ID] {
			continue
		}
		seen[rec.ID] = true
		rec.Project, rec.Hash = p.Root, publish.Digest([]byte(text))
		rec.Head, rec.Branch = publish.GitOfText(text)
		rec.Files = filesOfText(text)
		rec.SessionID = sessionOfID(l, p.Root, rec)
		if err := Save(l, rec); err != nil {
			p.Log("restore handoff %s: %v", rec.ID, err)
			return len(seen) - 1
		}
		switch {
		case strings.HasPrefix(rec.Goal, "(none: the user cleared"):
			_ = End(l, rec.ID, ledger.EndCleared, rec.Updated)
		case newest != nil:
			_ = End(l, rec.ID, ledger.EndSuperseded, newest.Written)
		}
		if newest == nil {
			newest = &rec
			// The current handoff (and its digest, now in the ledger too).
			p.LogErr("restore current handoff", recordCurrent(l, ledger.Handoff{Project: p.Root, Header: rec.Header, Tool: rec.Tool, SessionID: rec.SessionID, Written: rec.Updated, Hash: rec.Hash}))
			restoreWorkState(p, l, text, rec)
		}
	}
	if len(seen) > 0 {
		p.Log("ledger held no handoff of %s: restored %d from its verified handoff files", p.Root, len(seen))
	}
	return len(seen)
}

// verifiedTexts are the project's handoff.md and history files whose digests carryover recorded, newest first.
func verifiedTexts(p *publish.Project, l *ledger.Ledger) []string {
	var out []string
	if b, err := publish.ReadHandoffFile(p.Root); err == nil && publish.CheckHandoff(b, p.Home, p.Root, l) == "" {
		out = append(out, string(b))
	}
	ids, err := publish.HistoryIDs(p.Root)
	p.LogErr("restore from history", err)
	for i := len(ids) - 1; i >= 0 && len(ids)-i <= maxRestoreFiles; i-- {
		b, err := publish.ReadHistory(p.Root, ids[i])
		if err == nil && publish.IDOf(publish.HeaderOf(b)) == ids[i] && publish.CheckHandoff([]byte(b), p.Home, p.Root, l) == "" {
			out = append(out, b)
		}
	}
	return out
}

// restoreWorkState puts back the pinned task and decisions the newest handoff shows, unless the ledger has its own. The
// text does not say which decisions the user recorded: one with a reason ("why: …", which only `carryover decide --why`
// gives) is the user's, the others come back as extracted (shown the same way; only the order under the cap differs).
func restoreWorkState(p *publish.Project, l *ledger.Ledger, text string, rec ledger.HandoffRecord) {
	if _, ok := Task(l, p.Root); !ok {
		if t := publish.PinnedOfText(text); t != "" {
			p.LogErr("restore pinned task", PinTask(l, p.Root, t, rec.Updated))
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
			p.Log("restore decisions: %v", err)
			return
		}
	}
}

// decisionOfLine reads one line of decisionLines; the count of those left out is not a decision.
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

// filesOfText reads the paths of a handoff's recent files ("- path (edited 5m ago; …)"), at most maxStaleFiles.
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

// sessionOfID is the ledger session a restored handoff came from: the one session of its agent in the project whose
// native id gives the id's suffix (0 when none or several do; its later handoff then gets a new id).
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
