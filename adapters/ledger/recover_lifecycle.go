package ledger

import (
	"context"
	"database/sql"
	"strings"
	"time"
)

// What a damaged ledger holds besides its transcripts' cursors is the
// user's own bookkeeping, which no transcript can give back: the handoff
// log (ids, who received them, how they ended), the decisions recorded
// with `carryover decide`, the pinned task. Recovery salvages those tables
// from the moved-aside file like the cursors, table by table and best
// effort, and writes them into the new ledger, keyed again to the new
// sessions (matched by agent, native id and project).

// maxSalvageRows bounds each salvaged table: a damaged page can make a
// b-tree loop back on itself, and a project has far fewer handoffs,
// receipts and decisions than this.
const maxSalvageRows = 20000

// salvageSession is the old ledger's view of a session a salvaged row
// points at (Tool empty when its sessions row was unreadable).
type salvageSession struct {
	Tool, NativeID, Project, Transcript string
	FirstSeen, LastSeen                 int64
}

type salvagedRecord struct {
	HandoffRecord
	Session salvageSession
}

type salvagedDelivery struct {
	Delivery
	Via     string
	Session salvageSession
}

type salvagedDecision struct {
	Project string
	Decision
	Dropped bool
}

type salvagedPin struct {
	Project string
	PinnedTask
}

type salvagedHandoff struct {
	Handoff
	Session salvageSession
}

type salvagedDigest struct {
	Project, Hash string
	Written       int64
}

// salvaged is everything recovery reads from a damaged ledger.
type salvaged struct {
	files      []Salvaged
	records    []salvagedRecord
	deliveries []salvagedDelivery
	decisions  []salvagedDecision
	pins       []salvagedPin
	handoffs   []salvagedHandoff
	digests    []salvagedDigest
	// answered marks the tables a query read without error (maybe
	// partially: a damaged page ends it); the others are tried again on
	// the next way of opening the file.
	answered map[string]bool
}

// salvageTables are the tables salvage reads, cursors first.
var salvageTables = []string{"cursors", "handoff_log", "deliveries", "decisions", "pinned_task", "handoffs", "published"}

func (s *salvaged) done() bool {
	for _, t := range salvageTables {
		if !s.answered[t] {
			return false
		}
	}
	return true
}

// lifecycleComplete reports whether every lifecycle table was read.
func (s *salvaged) lifecycleComplete() bool {
	for _, t := range []string{"handoff_log", "deliveries", "decisions", "pinned_task"} {
		if !s.answered[t] {
			return false
		}
	}
	return true
}

// lifecycleRows is how many rows of the lifecycle were salvaged.
func (s *salvaged) lifecycleRows() int {
	return len(s.records) + len(s.deliveries) + len(s.decisions) + len(s.pins) + len(s.handoffs) + len(s.digests)
}

const salvageSessionCols = `s.tool, s.native_id, s.project, s.transcript, s.first_seen, s.last_seen`

// read runs the queries of the tables not answered yet on the file at
// path opened with query (a SQLite URI query), within salvageTimeout.
func (s *salvaged) read(path, query string) {
	if s.answered == nil {
		s.answered = map[string]bool{}
	}
	db, err := sql.Open("sqlite3", FileURI(path, query+"&_busy_timeout=100"))
	if err != nil {
		return
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), salvageTimeout)
	defer cancel()
	var sd salvageSessionDest
	sessDest := sd.dest()

	s.query(ctx, db, "cursors", `SELECT c.path, c.sidechain, c.updated, s.tool, s.native_id, s.project, s.transcript
		FROM cursors c JOIN sessions s ON s.id = c.session_id`, func(r *sql.Rows) error {
		var f Salvaged
		if err := r.Scan(&f.Path, &f.Sidechain, &f.Updated, &f.Tool, &f.NativeID, &f.Project, &f.Transcript); err != nil {
			return err
		}
		s.files = append(s.files, f)
		return nil
	})
	s.query(ctx, db, "handoff_log", `SELECT h.id, h.project, h.tool, h.session_id, h.native_id, h.head, h.branch, h.hash, h.header, h.goal, h.next, h.files,
		h.written, h.updated, h.ended, h.ended_at, `+salvageSessionCols+` FROM handoff_log h LEFT JOIN sessions s ON s.id = h.session_id`, func(r *sql.Rows) error {
		var files string
		var w, u, e int64
		var rec salvagedRecord
		h := &rec.HandoffRecord
		if err := r.Scan(append([]any{&h.ID, &h.Project, &h.Tool, &h.SessionID, &h.NativeID, &h.Head, &h.Branch, &h.Hash, &h.Header, &h.Goal, &h.Next, &files,
			&w, &u, &h.Ended, &e}, sessDest...)...); err != nil {
			return err
		}
		if files != "" {
			h.Files = strings.Split(files, "\n")
		}
		h.Written, h.Updated = time.UnixMilli(w), time.UnixMilli(u)
		if e != 0 {
			h.EndedAt = time.UnixMilli(e)
		}
		rec.Session = sd.session()
		s.records = append(s.records, rec)
		return nil
	})
	s.query(ctx, db, "deliveries", `SELECT d.project, d.header, d.tool, d.via, d.at, `+salvageSessionCols+` FROM deliveries d JOIN sessions s ON s.id = d.session_id`, func(r *sql.Rows) error {
		var d salvagedDelivery
		var at int64
		if err := r.Scan(append([]any{&d.Project, &d.Header, &d.Tool, &d.Via, &at}, sessDest...)...); err != nil {
			return err
		}
		d.At = time.UnixMilli(at)
		d.Session = sd.session()
		s.deliveries = append(s.deliveries, d)
		return nil
	})
	s.query(ctx, db, "decisions", `SELECT project, text, why, source, at, dropped FROM decisions`, func(r *sql.Rows) error {
		var d salvagedDecision
		var at int64
		if err := r.Scan(&d.Project, &d.Text, &d.Why, &d.Source, &at, &d.Dropped); err != nil {
			return err
		}
		d.At = time.UnixMilli(at)
		s.decisions = append(s.decisions, d)
		return nil
	})
	s.query(ctx, db, "pinned_task", `SELECT project, text, at FROM pinned_task`, func(r *sql.Rows) error {
		var p salvagedPin
		var at int64
		if err := r.Scan(&p.Project, &p.Text, &at); err != nil {
			return err
		}
		p.At = time.UnixMilli(at)
		s.pins = append(s.pins, p)
		return nil
	})
	s.query(ctx, db, "handoffs", `SELECT h.project, h.header, h.tool, h.written, `+salvageSessionCols+` FROM handoffs h LEFT JOIN sessions s ON s.id = h.session_id`, func(r *sql.Rows) error {
		var h salvagedHandoff
		var w int64
		if err := r.Scan(append([]any{&h.Project, &h.Header, &h.Tool, &w}, sessDest...)...); err != nil {
			return err
		}
		h.Written = time.UnixMilli(w)
		h.Session = sd.session()
		s.handoffs = append(s.handoffs, h)
		return nil
	})
	s.query(ctx, db, "published", `SELECT project, hash, written FROM published`, func(r *sql.Rows) error {
		var d salvagedDigest
		if err := r.Scan(&d.Project, &d.Hash, &d.Written); err != nil {
			return err
		}
		s.digests = append(s.digests, d)
		return nil
	})
}

// query runs stmt for table unless answered, scanning at most
// maxSalvageRows rows.
func (s *salvaged) query(ctx context.Context, db *sql.DB, table, stmt string, scan func(*sql.Rows) error) {
	if s.answered[table] {
		return
	}
	rows, err := db.QueryContext(ctx, stmt)
	if err != nil {
		// A ledger from before a table existed has none to give.
		s.answered[table] = strings.Contains(err.Error(), "no such table") || strings.Contains(err.Error(), "no such column")
		return
	}
	defer rows.Close()
	n := 0
	for ; n < maxSalvageRows && rows.Next(); n++ {
		if scan(rows) != nil {
			break
		}
	}
	// Rows read before a damaged page count; an error before any row
	// (SQLite reports most damage only once it steps) leaves the table
	// to the next way of opening the file.
	s.answered[table] = n > 0 || rows.Err() == nil
}

// salvageSessionDest receives the salvageSessionCols of a row.
type salvageSessionDest struct {
	tool, native, project, transcript sql.NullString
	first, last                       sql.NullInt64
}

func (d *salvageSessionDest) dest() []any {
	return []any{&d.tool, &d.native, &d.project, &d.transcript, &d.first, &d.last}
}

func (d *salvageSessionDest) session() salvageSession {
	return salvageSession{Tool: d.tool.String, NativeID: d.native.String, Project: d.project.String, Transcript: d.transcript.String,
		FirstSeen: d.first.Int64, LastSeen: d.last.Int64}
}

// restore writes the salvaged lifecycle into the new ledger, in one
// transaction, and returns how many rows it restored. Rows the new
// ledger already holds win (ON CONFLICT DO NOTHING); sessions are matched
// again by agent, native id and project, and keep the times they were
// last seen (a receipt's session idle for a day must not count as
// working on the task now: see AlreadyResumed).
func (l *Ledger) restore(s *salvaged, now time.Time) (int, error) {
	if s.lifecycleRows() == 0 {
		return 0, nil
	}
	tx, err := l.db.Begin()
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	// The current handoff rows say the project's handoff is known: with
	// part of the lifecycle unreadable they are left out, so that publish
	// restores what is missing from the project's verified files
	// (publish.RestoreFromFiles) the first time it handles the project.
	if !s.lifecycleComplete() {
		s.handoffs = nil
	}
	r := restorer{tx: tx, now: now, ids: map[salvageSession]int64{}}
	for _, step := range []func(*salvaged) error{r.records, r.deliveries, r.decisions, r.pins, r.handoffs, r.digests} {
		if err := step(s); err != nil {
			return 0, err
		}
	}
	return r.n, tx.Commit()
}

// restorer writes salvaged rows in one transaction and counts them.
type restorer struct {
	tx  *sql.Tx
	now time.Time
	ids map[salvageSession]int64 // by agent, native id and project
	n   int
}

// session is the new ledger's id of a salvaged session; ok is false when
// the session is lost.
func (r *restorer) session(ss salvageSession) (int64, bool, error) {
	if ss.Tool == "" || ss.NativeID == "" {
		return 0, false, nil
	}
	key := ss
	key.Transcript, key.FirstSeen, key.LastSeen = "", 0, 0
	if id, ok := r.ids[key]; ok {
		return id, true, nil
	}
	id, err := ensureSession(r.tx, SessionRef{Tool: ss.Tool, NativeID: ss.NativeID, Project: ss.Project, Transcript: ss.Transcript}, r.now)
	if err != nil {
		return 0, false, err
	}
	if ss.LastSeen > 0 {
		if _, err := r.tx.Exec(`UPDATE sessions SET last_seen = ?, first_seen = MIN(first_seen, ?) WHERE id = ?`, ss.LastSeen, max(ss.FirstSeen, 1), id); err != nil {
			return 0, false, err
		}
	}
	r.ids[key] = id
	return id, true, nil
}

func (r *restorer) exec(q string, args ...any) error {
	res, err := r.tx.Exec(q, args...)
	if err != nil {
		return err
	}
	k, _ := res.RowsAffected()
	r.n += int(k)
	return nil
}

func (r *restorer) records(s *salvaged) error {
	for _, h := range s.records {
		sid, _, err := r.session(h.Session) // 0 when its session is lost: a later session of it gets a new id
		if err != nil {
			return err
		}
		if err := r.exec(`INSERT INTO handoff_log (`+recordCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			h.ID, h.Project, h.Tool, sid, h.NativeID, h.Head, h.Branch, h.Hash, h.Header, h.Goal, h.Next, strings.Join(h.Files, "\n"),
			h.Written.UnixMilli(), h.Updated.UnixMilli(), h.Ended, endedAt(h.EndedAt)); err != nil {
			return err
		}
	}
	return nil
}

func (r *restorer) deliveries(s *salvaged) error {
	for _, d := range s.deliveries {
		sid, ok, err := r.session(d.Session)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := r.exec(`INSERT INTO deliveries (project, header, tool, session_id, via, at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			d.Project, d.Header, d.Tool, sid, d.Via, d.At.UnixMilli()); err != nil {
			return err
		}
	}
	return nil
}

func (r *restorer) decisions(s *salvaged) error {
	for _, d := range s.decisions {
		if err := r.exec(`INSERT INTO decisions (project, text, why, source, at, dropped) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			d.Project, d.Text, d.Why, d.Source, d.At.UnixMilli(), d.Dropped); err != nil {
			return err
		}
	}
	return nil
}

func (r *restorer) pins(s *salvaged) error {
	for _, p := range s.pins {
		if err := r.exec(`INSERT INTO pinned_task (project, text, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, p.Project, p.Text, p.At.UnixMilli()); err != nil {
			return err
		}
	}
	return nil
}

func (r *restorer) handoffs(s *salvaged) error {
	for _, h := range s.handoffs {
		sid, _, err := r.session(h.Session)
		if err != nil {
			return err
		}
		if err := r.exec(`INSERT INTO handoffs (project, header, tool, session_id, written) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			h.Project, h.Header, h.Tool, sid, h.Written.UnixMilli()); err != nil {
			return err
		}
	}
	return nil
}

func (r *restorer) digests(s *salvaged) error {
	for _, d := range s.digests {
		if err := r.exec(`INSERT INTO published (project, hash, written) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, d.Project, d.Hash, d.Written); err != nil {
			return err
		}
	}
	return nil
}

func endedAt(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// HandoffKnown reports whether the ledger holds the project's current
// handoff (every publish records it). It is false for a project that
// never published, and for one whose ledger was rebuilt without all of
// its lifecycle (recover_lifecycle.go): publish then restores what the
// project's verified files hold.
func (l *Ledger) HandoffKnown(project string) bool {
	var n int
	err := l.db.QueryRow(`SELECT COUNT(*) FROM handoffs WHERE project = ?`, project).Scan(&n)
	return err != nil || n > 0 // an error: as if known (nothing is restored over it)
}
