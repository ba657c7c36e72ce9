package ledger

import (
	"cmp"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters"
)

// All scans every row of a query with scan. It lives with the ledger's
// own reads: their scan callbacks are in this file, so a call chain that
// passes through it does not leave read.go and come back (TestStopCallChains).
func All[T any](s Store, scan func(Scanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := s.Query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func scanString(r Scanner) (s string, err error) { return s, r.Scan(&s) }
func scanInt(r Scanner) (n int64, err error)     { return n, r.Scan(&n) }

// Cursor returns the saved cursor for path (zero Cursor when none).
func (l *Ledger) Cursor(path string) (adapters.Cursor, error) {
	c := adapters.Cursor{Path: path}
	var dev, ino int64
	err := l.db.QueryRow(`SELECT offset, dev, ino, head, head_len FROM cursors WHERE path = ?`, path).Scan(&c.Offset, &dev, &ino, &c.Head, &c.HeadLen)
	if errors.Is(err, sql.ErrNoRows) {
		return c, nil
	}
	c.Dev, c.Ino = uint64(dev), uint64(ino)
	return c, err
}

// TrackedFile is a transcript the ledger has a cursor for.
type TrackedFile struct {
	Path      string
	Offset    int64
	Sidechain bool
	Session   Session
}

// Tracked lists the transcripts of project's sessions, most recently
// updated first, at most limit (for the catch-up).
func (l *Ledger) Tracked(project string, limit int) ([]TrackedFile, error) {
	return All(l, func(r Scanner) (t TrackedFile, err error) {
		return t, r.Scan(&t.Path, &t.Offset, &t.Sidechain, &t.Session.ID, &t.Session.Tool, &t.Session.NativeID, &t.Session.Project)
	}, `SELECT c.path, c.offset, c.sidechain, s.id, s.tool, s.native_id, s.project
		FROM cursors c JOIN sessions s ON s.id = c.session_id
		WHERE s.project = ? ORDER BY c.updated DESC LIMIT ?`, project, limit)
}

const sessionCols = `s.id, s.tool, s.native_id, s.project, s.transcript, s.first_seen, s.last_seen, s.last_active, s.title, s.tokens_used, s.tokens_max, s.next_seq - 1 - s.pruned`

func scanSession(sc interface{ Scan(...any) error }) (Session, error) {
	var s Session
	var first, last, active int64
	err := sc.Scan(&s.ID, &s.Tool, &s.NativeID, &s.Project, &s.Transcript, &first, &last, &active, &s.Title, &s.TokensUsed, &s.TokensMax, &s.Rows)
	s.FirstSeen, s.LastSeen, s.LastActive = time.UnixMilli(first), time.UnixMilli(last), time.UnixMilli(active)
	if active <= 0 {
		s.LastActive = s.LastSeen
	}
	return s, err
}

// sessions lists the sessions s matching where (and its order).
func (l *Ledger) sessions(where string, args ...any) ([]Session, error) {
	return All(l, func(r Scanner) (Session, error) { return scanSession(r) }, `SELECT `+sessionCols+` FROM sessions s WHERE `+where, args...)
}

// forProject is the WHERE condition on column for one project, or every
// project when project is empty, with its arguments. Two statements rather
// than `(? = ” OR column = ?)`: SQLite plans a statement once for any
// argument, and that form reads every project's rows (no index).
func forProject(column, project string) (string, []any) {
	if project == "" {
		return "1", nil
	}
	return column + " = ?", []any{project}
}

// Sessions lists sessions, most recently active first. An empty project
// lists every project's; tool filters by agent when set.
func (l *Ledger) Sessions(project, tool string, limit int) ([]Session, error) {
	where, args := forProject("s.project", project)
	return l.sessions(where+` AND (? = '' OR s.tool = ?) ORDER BY MAX(s.last_active, s.last_seen) DESC, s.id DESC LIMIT ?`, append(args, tool, tool, limit)...)
}

// Session looks up one session by tool and native id (the most recently
// seen when the id was seen in more than one project).
func (l *Ledger) Session(tool, nativeID string) (Session, error) {
	return scanSession(l.db.QueryRow(`SELECT `+sessionCols+` FROM sessions s WHERE s.tool = ? AND s.native_id = ? ORDER BY s.last_seen DESC, s.id DESC LIMIT 1`, tool, nativeID))
}

// SessionIn looks up a session by tool, native id and project.
func (l *Ledger) SessionIn(tool, nativeID, project string) (Session, error) {
	return scanSession(l.db.QueryRow(`SELECT `+sessionCols+` FROM sessions s WHERE s.tool = ? AND s.native_id = ? AND s.project = ?`, tool, nativeID, project))
}

// SessionByID looks up one session by ledger id.
func (l *Ledger) SessionByID(id int64) (Session, error) {
	return scanSession(l.db.QueryRow(`SELECT `+sessionCols+` FROM sessions s WHERE s.id = ?`, id))
}

// SetTitle records a session's one-line preview.
func (l *Ledger) SetTitle(id int64, title string) error {
	_, err := l.db.Exec(`UPDATE sessions SET title = ? WHERE id = ? AND title = ''`, title, id)
	return err
}

// rowCols are a row's columns, a tool result's text left out.
const rowCols = `session_id, seq, key, ts, role, kind, tool_name, call_id, file_path, command, exit_code,
	CASE WHEN kind = 'tool_result' THEN '' ELSE text END, sidechain, tokens_used, tokens_max`

// Rows returns the last limit rows of a session in sequence order.
func (l *Ledger) Rows(sessionID int64, limit int) ([]Row, error) {
	s, err := l.SessionByID(sessionID)
	if err != nil {
		return nil, err
	}
	return l.rows(s.Tool, `SELECT session_id, seq, key, ts, role, kind, tool_name, call_id, file_path, command, exit_code, text, sidechain, tokens_used, tokens_max FROM (SELECT * FROM rows WHERE session_id = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq`, sessionID, limit)
}

// rows runs a query of rowCols over a session of tool.
func (l *Ledger) rows(tool, q string, args ...any) ([]Row, error) {
	return All(l, func(rows Scanner) (Row, error) {
		r := Row{Tool: tool}
		var ts int64
		var exit sql.NullInt64
		var kind string
		err := rows.Scan(&r.SessionID, &r.Seq, &r.Key, &ts, &r.Role, &kind, &r.ToolName, &r.CallID, &r.FilePath, &r.Command, &exit, &r.Text, &r.Sidechain, &r.TokensUsed, &r.TokensMax)
		r.Time, r.Kind = time.UnixMilli(ts).UTC(), adapters.Kind(kind)
		if exit.Valid {
			n := int(exit.Int64)
			r.ExitCode = &n
		}
		return r, err
	}, q, args...)
}

// How much of a project's history the hook-path handoff is distilled from:
// the newest sessions, and per session the newest rows plus the newest
// prompts, file edits and errors however far back they are, so a long
// session keeps its task and files without reading every row. An error's
// call is looked for among the callLookback rows before it.
const (
	recentSessions = 4
	recentWindow   = 250
	recentPerKind  = 40
	callLookback   = 256
)

// RecentRows returns the rows the project handoff is distilled from, in
// order: sessions oldest first, rows by sequence.
func (l *Ledger) RecentRows(project string) ([]Row, error) {
	ss, err := l.Sessions(project, "", recentSessions)
	if err != nil {
		return nil, err
	}
	var out []Row
	for i := len(ss) - 1; i >= 0; i-- {
		rs, err := l.recentSessionRows(ss[i])
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	return out, nil
}

// recentSessionRows reads the newest rows, then the seqs of older prompts,
// edits and errors through the covering index, fetched by explicit value
// (a "seq IN (subquery)" or a UNION over whole rows makes SQLite scan the
// session), then the calls of errors whose call fell outside.
func (l *Ledger) recentSessionRows(s Session) ([]Row, error) {
	out, err := l.rows(s.Tool, `SELECT `+rowCols+` FROM rows WHERE session_id = ? ORDER BY seq DESC LIMIT ?`, s.ID, recentWindow)
	if err != nil {
		return nil, err
	}
	oldest := int64(1 << 62)
	for _, r := range out {
		oldest = min(oldest, r.Seq)
	}
	var extra []any
	for _, cond := range []string{`kind = 'prompt' AND seq < ?`, `kind = 'tool_call' AND seq < ? AND file_path != ''`, `kind = 'error' AND seq < ?`} {
		seqs, err := All(l, scanInt, `SELECT seq FROM rows INDEXED BY rows_anchor WHERE session_id = ? AND `+cond+` AND `+anchorRows+` ORDER BY seq DESC LIMIT ?`, s.ID, oldest, recentPerKind)
		if err != nil {
			return nil, err
		}
		for _, n := range seqs {
			extra = append(extra, n)
		}
	}
	if len(extra) > 0 {
		older, err := l.rows(s.Tool, `SELECT `+rowCols+` FROM rows WHERE session_id = ? AND seq IN (?`+strings.Repeat(",?", len(extra)-1)+`)`, append([]any{s.ID}, extra...)...)
		if err != nil {
			return nil, err
		}
		out = append(out, older...)
	}
	bySeq := func(a, b Row) int { return cmp.Compare(a.Seq, b.Seq) }
	slices.SortFunc(out, bySeq)
	if out, err = l.addErrorCalls(s, out); err != nil {
		return nil, err
	}
	slices.SortFunc(out, bySeq)
	return out, nil
}

// addErrorCalls adds the calls of errors in out that fell outside it, so a
// failure keeps its command. A call precedes its result by a few rows
// (parallel calls by a few more).
func (l *Ledger) addErrorCalls(s Session, out []Row) ([]Row, error) {
	have := map[string]bool{}
	for _, r := range out {
		if r.Kind == adapters.KindToolCall {
			have[r.CallID] = true
		}
	}
	for _, r := range out {
		if r.Kind != adapters.KindError || r.CallID == "" || have[r.CallID] {
			continue
		}
		have[r.CallID] = true
		c, err := l.rows(s.Tool, `SELECT `+rowCols+` FROM rows WHERE session_id = ? AND seq BETWEEN ? AND ? AND kind = 'tool_call' AND call_id = ? LIMIT 1`,
			s.ID, r.Seq-callLookback, r.Seq-1, r.CallID)
		if err != nil {
			return nil, err
		}
		out = append(out, c...)
	}
	return out, nil
}

// Seqs maps a ledger session id to the last row sequence number folded
// into a project's distill state.
type Seqs map[int64]int64

// LoadState returns a project's stored distill state and how far into each
// session it has read (ok false when there is none). version identifies the
// stored copy for SaveState's check.
func (l *Ledger) LoadState(project string) (state []byte, seqs Seqs, version string, ok bool) {
	err := l.db.QueryRow(`SELECT state, seqs FROM distill_state WHERE project = ?`, project).Scan(&state, &version)
	if err != nil || json.Unmarshal([]byte(version), &seqs) != nil {
		return nil, nil, "", false
	}
	return state, seqs, version, true
}

// SaveState stores a project's distill state if the stored copy is still
// the one loaded (version, "" when there was none). Two snapshots folding
// at once cannot then move the state backwards or fold the same rows twice:
// the loser's save is dropped and the next snapshot folds from the winner's.
func (l *Ledger) SaveState(project string, state []byte, seqs Seqs, version string, now time.Time) (bool, error) {
	raw, err := json.Marshal(seqs)
	if err != nil {
		return false, err
	}
	q := `INSERT INTO distill_state (project, state, seqs, updated) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (project) DO NOTHING`
	args := []any{project, state, string(raw), now.UnixMilli()}
	if version != "" {
		q, args = `UPDATE distill_state SET state = ?2, seqs = ?3, updated = ?4 WHERE project = ?1 AND seqs = ?5`, append(args, version)
	}
	res, err := l.db.Exec(q, args...)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// DropState forgets a project's distill state (it is rebuilt).
func (l *Ledger) DropState(project string) error {
	_, err := l.db.Exec(`DELETE FROM distill_state WHERE project = ?`, project)
	return err
}

// ProjectSession is a session's id, agent and last row sequence number.
type ProjectSession struct {
	ID      int64
	Tool    string
	LastSeq int64
}

// ProjectSessions lists a project's sessions in creation order.
func (l *Ledger) ProjectSessions(project string) ([]ProjectSession, error) {
	return All(l, func(r Scanner) (s ProjectSession, err error) { return s, r.Scan(&s.ID, &s.Tool, &s.LastSeq) }, `SELECT id, tool, next_seq - 1 FROM sessions WHERE project = ? ORDER BY id`, project)
}

// RowsAfter returns a session's rows with a sequence number above seq, in
// order, at most limit.
func (l *Ledger) RowsAfter(s ProjectSession, seq int64, limit int) ([]Row, error) {
	return l.rows(s.Tool, `SELECT `+rowCols+` FROM rows WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`, s.ID, seq, limit)
}

// PromoteSubagentOnly clears the sidechain mark when every row of a session
// is a subagent's: the user handed over a subagent's own file (an old
// <slug>/agent-*.jsonl or a subagents/ file), so its prompt is the task.
func PromoteSubagentOnly(rows []Row) {
	if slices.ContainsFunc(rows, func(r Row) bool { return !r.Sidechain }) {
		return
	}
	for i := range rows {
		rows[i].Sidechain = false
	}
}

// ProjectTools lists the agents that have sessions in project.
func (l *Ledger) ProjectTools(project string) ([]string, error) {
	return All(l, scanString, `SELECT DISTINCT tool FROM sessions WHERE project = ? ORDER BY tool`, project)
}

// MissedInjections lists the agents whose start injection did not arrive
// in project: of the newest "hook" receipts, those whose session replied
// after it while its transcript never showed that handoff (no
// "transcript" receipt of the same header).
func (l *Ledger) MissedInjections(project string) ([]string, error) {
	return All(l, scanString, `SELECT DISTINCT d.tool FROM (SELECT * FROM deliveries WHERE project = ? AND via = 'hook' ORDER BY at DESC LIMIT 20) d
		WHERE NOT EXISTS (SELECT 1 FROM deliveries t WHERE t.project = d.project AND t.header = d.header AND t.session_id = d.session_id AND t.via = 'transcript')
		AND (SELECT last_active FROM sessions WHERE id = d.session_id) > d.at
		AND (SELECT r.ts FROM rows r WHERE r.session_id = d.session_id AND r.kind = 'text' AND r.role = 'assistant' ORDER BY r.seq DESC LIMIT 1) > d.at
		ORDER BY d.tool`, project)
}

// KnownProjects lists every project the ledger has a session, handoff or
// receipt of, sorted.
func (l *Ledger) KnownProjects() ([]string, error) {
	ps, err := All(l, func(r Scanner) (p sql.NullString, err error) { return p, r.Scan(&p) }, `SELECT project FROM sessions WHERE project != '' UNION SELECT project FROM handoffs
		UNION SELECT project FROM handoff_log UNION SELECT project FROM deliveries ORDER BY 1`)
	var out []string
	for _, p := range ps {
		if p.Valid && strings.TrimSpace(p.String) != "" {
			out = append(out, p.String)
		}
	}
	return out, err
}

// Store is what the ledger offers the features that keep their own
// queries over its tables (publish/lifecycle, publish/limits): statements
// on its database, or on a transaction (Tx). The ledger keeps the schema,
// the migrations and the salvage of those tables.
type Store interface {
	Exec(q string, args ...any) (sql.Result, error)
	Query(q string, args ...any) (*sql.Rows, error)
	QueryRow(q string, args ...any) *sql.Row
}

// Exec runs a statement on the ledger.
func (l *Ledger) Exec(q string, args ...any) (sql.Result, error) { return l.db.Exec(q, args...) }

// Query runs a query on the ledger.
func (l *Ledger) Query(q string, args ...any) (*sql.Rows, error) { return l.db.Query(q, args...) }

// QueryRow runs a query for one row on the ledger.
func (l *Ledger) QueryRow(q string, args ...any) *sql.Row { return l.db.QueryRow(q, args...) }

// Begin starts a transaction (a Store the caller commits, or rolls back
// on every path). Every Stop records what it published in one: as
// separate statements it paid one WAL commit each, and every later hook
// process reads the WAL's frames back. Not a callback, so no call chain
// leaves a feature's file and enters it again through the ledger.
func (l *Ledger) Begin() (*sql.Tx, error) { return l.db.Begin() }

// Scanner is a *sql.Row or *sql.Rows.
type Scanner interface{ Scan(...any) error }

// Changed runs a statement and reports whether it changed a row.
func Changed(s Store, q string, args ...any) (bool, error) {
	res, err := s.Exec(q, args...)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// Has reports whether a COUNT(*) query counts anything.
func Has(s Store, q string, args ...any) bool {
	var n int
	_ = s.QueryRow(q, args...).Scan(&n)
	return n > 0
}

// ForProject is the WHERE condition on column for one project, or every
// project when project is empty (forProject).
func ForProject(column, project string) (string, []any) { return forProject(column, project) }
