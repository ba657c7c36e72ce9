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
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
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
	case s.Age > expiry(expireAfter):
		s.Status = StatusExpired
	default:
		s.Status = StatusActive
	}
	return s
}

func expiry(d time.Duration) time.Duration {
	if d <= 0 {
		return publish.DefaultExpireAfter
	}
	return d
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
