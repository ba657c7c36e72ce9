package ledger

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
)

// TestLifecycleAfterMigration: a ledger at any earlier schema gets the
// lifecycle tables on Open, and its sessions and receipts join them.
func TestLifecycleAfterMigration(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	for v := 1; v < len(migrations); v++ {
		dir := t.TempDir()
		db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, FileName))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range migrations[:v] {
			if _, err := db.Exec(m); err != nil {
				t.Fatal(err)
			}
		}
		db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, v))
		db.Exec(`INSERT INTO sessions (id, tool, native_id, project, first_seen, last_seen) VALUES (1, 'claude', 'a', '/p', 0, 0), (2, 'codex', 'b', '/p', 0, 0)`)
		db.Exec(`INSERT INTO deliveries (project, header, tool, session_id, via, at) VALUES ('/p', '# h · HO-20261101-120000-a', 'codex', 2, 'hook', 1)`)
		db.Close()
		l, err := Open(dir)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		r := HandoffRecord{ID: "HO-20261101-120000-a", Project: "/p", Tool: "claude", SessionID: 1, Written: t0, Updated: t0}
		if err := l.SaveHandoffRecord(r); err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if cs, err := l.Consumers(r); err != nil || len(cs) != 1 || cs[0].Tool != "codex" || cs[0].NativeID != "b" {
			t.Errorf("v%d: consumers %+v, %v", v, cs, err)
		}
		if _, err := l.AddDecision("/p", Decision{Text: "x", Source: DecisionUser, At: t0}); err != nil {
			t.Errorf("v%d: %v", v, err)
		}
		l.Close()
	}
}

// The ledger's tests fill and read the lifecycle and limit tables through
// these: publish/lifecycle and publish/limits own the queries, and a
// ledger test cannot import them (they import the ledger). Plain SQL,
// only what the tests need.

// recordCols are handoff_log's columns in HandoffRecord's order.
const recordCols = `id, project, tool, session_id, native_id, head, branch, hash, header, goal, next, files, written, updated, ended, ended_at`

func (l *Ledger) SaveHandoffRecord(r HandoffRecord) error {
	_, err := l.db.Exec(`INSERT INTO handoff_log (`+recordCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', 0)`,
		r.ID, r.Project, r.Tool, r.SessionID, r.NativeID, r.Head, r.Branch, r.Hash, r.Header, r.Goal, r.Next,
		strings.Join(r.Files, "\n"), r.Written.UnixMilli(), r.Updated.UnixMilli())
	return err
}

func (l *Ledger) EndHandoff(id, how string, at time.Time) error {
	_, err := l.db.Exec(`UPDATE handoff_log SET ended = ?, ended_at = ? WHERE id = ?`, how, at.UnixMilli(), id)
	return err
}

func (l *Ledger) HandoffRecords(project string, limit int) ([]HandoffRecord, error) {
	return All(l, func(sc Scanner) (r HandoffRecord, err error) {
		var files string
		var w, u, e int64
		err = sc.Scan(&r.ID, &r.Project, &r.Tool, &r.SessionID, &r.NativeID, &r.Head, &r.Branch, &r.Hash, &r.Header, &r.Goal, &r.Next, &files, &w, &u, &r.Ended, &e)
		r.Written, r.Updated, r.EndedAt = time.UnixMilli(w), time.UnixMilli(u), time.UnixMilli(e)
		if e == 0 {
			r.EndedAt = time.Time{}
		}
		if files != "" {
			r.Files = strings.Split(files, "\n")
		}
		return r, err
	}, `SELECT `+recordCols+` FROM handoff_log WHERE project = ? ORDER BY written DESC, id DESC LIMIT ?`, project, limit)
}

func (l *Ledger) RecordHandoff(h Handoff) error {
	_, err := l.db.Exec(`INSERT OR REPLACE INTO handoffs (project, header, tool, session_id, written) VALUES (?, ?, ?, ?, ?)`,
		h.Project, h.Header, h.Tool, h.SessionID, h.Written.UnixMilli())
	if err == nil && h.Hash != "" {
		_, err = l.db.Exec(`INSERT OR REPLACE INTO published (project, hash, written) VALUES (?, ?, ?)`, h.Project, h.Hash, h.Written.UnixMilli())
	}
	return err
}

// Published is a handoff a hook published (publish/lifecycle records it).
type Published struct {
	Handoff    Handoff
	Record     HandoffRecord
	Supersedes string
}

func (l *Ledger) RecordPublished(p Published) error {
	err := errors.Join(l.RecordHandoff(p.Handoff), l.SaveHandoffRecord(p.Record))
	if p.Supersedes != "" {
		err = errors.Join(err, l.EndHandoff(p.Supersedes, EndSuperseded, p.Record.Updated))
	}
	return err
}

func (l *Ledger) Handoffs() ([]Handoff, error) {
	return All(l, func(sc Scanner) (h Handoff, err error) { return h, sc.Scan(&h.Project, &h.Header) },
		`SELECT project, header FROM handoffs ORDER BY written DESC`)
}

func (l *Ledger) Deliveries(project string, limit int) ([]Delivery, error) {
	return All(l, func(sc Scanner) (d Delivery, err error) { return d, sc.Scan(&d.Header, &d.Tool, &d.NativeID) },
		`SELECT d.header, d.tool, s.native_id FROM deliveries d JOIN sessions s ON s.id = d.session_id WHERE d.project = ? ORDER BY d.at DESC LIMIT ?`, project, limit)
}

// Consumer is a session that received a handoff.
type Consumer struct {
	Tool, NativeID string
	At, LastSeen   time.Time
}

func (l *Ledger) Consumers(r HandoffRecord) ([]Consumer, error) {
	return All(l, func(sc Scanner) (c Consumer, err error) {
		var at, seen int64
		err = sc.Scan(&c.Tool, &c.NativeID, &at, &seen)
		c.At, c.LastSeen = time.UnixMilli(at), time.UnixMilli(seen)
		return c, err
	}, `SELECT d.tool, s.native_id, MIN(d.at), s.last_seen FROM deliveries d JOIN sessions s ON s.id = d.session_id
		WHERE d.project = ? AND instr(d.header, ?) > 0 AND d.session_id != ? GROUP BY d.session_id ORDER BY MIN(d.at)`, r.Project, r.ID, r.SessionID)
}

func (l *Ledger) AddDecision(project string, d Decision) (bool, error) {
	return Changed(l, `INSERT INTO decisions (project, text, why, source, at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		project, d.Text, d.Why, d.Source, d.At.UnixMilli())
}

func (l *Ledger) DropDecision(project, text string) error {
	_, err := l.db.Exec(`UPDATE decisions SET dropped = 1 WHERE project = ? AND text = ?`, project, text)
	return err
}

func (l *Ledger) decisions(project, cond string) ([]Decision, error) {
	return All(l, func(sc Scanner) (d Decision, err error) {
		var at int64
		err = sc.Scan(&d.Text, &d.Why, &d.Source, &at)
		d.At = time.UnixMilli(at)
		return d, err
	}, `SELECT text, why, source, at FROM decisions WHERE project = ? `+cond+` ORDER BY source = 'user' DESC, at DESC, rowid DESC`, project)
}

func (l *Ledger) Decisions(project string) ([]Decision, error) {
	return l.decisions(project, "AND dropped = 0")
}

func (l *Ledger) DecisionTexts(project string) (map[string]bool, error) {
	ds, err := l.decisions(project, "")
	out := map[string]bool{}
	for _, d := range ds {
		out[d.Text] = true
	}
	return out, err
}

func (l *Ledger) PinTask(project, text string, at time.Time) error {
	_, err := l.db.Exec(`INSERT OR REPLACE INTO pinned_task (project, text, at) VALUES (?, ?, ?)`, project, text, at.UnixMilli())
	return err
}

func (l *Ledger) Task(project string) (PinnedTask, bool) {
	var t PinnedTask
	var at int64
	err := l.db.QueryRow(`SELECT text, at FROM pinned_task WHERE project = ?`, project).Scan(&t.Text, &at)
	t.At = time.UnixMilli(at)
	return t, err == nil
}

// LimitEvent is a limit a session reached (publish/limits.Event).
type LimitEvent struct {
	SessionID int64
	Key       string
	Project   string
	Tool      string
	Limit     adapters.Limit
	At        time.Time
}

func (l *Ledger) RecordLimit(e LimitEvent) (bool, error) {
	return Changed(l, `INSERT INTO limit_events (session_id, key, project, tool, kind, reached, at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		e.SessionID, e.Key, e.Project, e.Tool, string(e.Limit.Kind), e.Limit.Reached, e.At.UnixMilli())
}
