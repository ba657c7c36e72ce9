package ledger

import (
	"database/sql"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters"
)

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
// updated first, at most limit. Used to catch up on sessions whose final
// hooks never ran or ran before the agent flushed.
func (l *Ledger) Tracked(project string, limit int) ([]TrackedFile, error) {
	rows, err := l.db.Query(`SELECT c.path, c.offset, c.sidechain, s.id, s.tool, s.native_id, s.project
		FROM cursors c JOIN sessions s ON s.id = c.session_id
		WHERE s.project = ? ORDER BY c.updated DESC LIMIT ?`, project, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []TrackedFile
	for rows.Next() {
		var t TrackedFile
		if err := rows.Scan(&t.Path, &t.Offset, &t.Sidechain, &t.Session.ID, &t.Session.Tool, &t.Session.NativeID, &t.Session.Project); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

const sessionCols = `s.id, s.tool, s.native_id, s.project, s.transcript, s.first_seen, s.last_seen, s.last_active, s.title, s.tokens_used, s.tokens_max, s.next_seq - 1 - s.pruned`

func scanSession(sc interface{ Scan(...any) error }) (Session, error) {
	var s Session
	var first, last, active int64
	err := sc.Scan(&s.ID, &s.Tool, &s.NativeID, &s.Project, &s.Transcript, &first, &last, &active, &s.Title, &s.TokensUsed, &s.TokensMax, &s.Rows)
	s.FirstSeen, s.LastSeen = time.UnixMilli(first), time.UnixMilli(last)
	if active > 0 {
		s.LastActive = time.UnixMilli(active)
	} else {
		s.LastActive = s.LastSeen
	}
	return s, err
}

// forProject is the WHERE condition on column for one project, or every
// project when project is empty, with its arguments. Two statements rather
// than `(? = ” OR column = ?)`: SQLite plans a statement once for any
// argument, so that form reads every project's rows even when one is
// asked for (the project indexes go unused).
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
	q := `SELECT ` + sessionCols + ` FROM sessions s WHERE ` + where + ` AND (? = '' OR s.tool = ?)
		ORDER BY MAX(s.last_active, s.last_seen) DESC, s.id DESC LIMIT ?`
	rows, err := l.db.Query(q, append(args, tool, tool, limit)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
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

// Rows returns the last limit rows of a session in sequence order.
func (l *Ledger) Rows(sessionID int64, limit int) ([]Row, error) {
	s, err := l.SessionByID(sessionID)
	if err != nil {
		return nil, err
	}
	rows, err := l.db.Query(`SELECT session_id, seq, key, ts, role, kind, tool_name, call_id, file_path, command, exit_code, text, sidechain, tokens_used, tokens_max
		FROM (SELECT * FROM rows WHERE session_id = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq`, sessionID, limit)
	if err != nil {
		return nil, err
	}
	return scanRows(rows, s.Tool)
}

// SetTitle records a session's one-line preview.
func (l *Ledger) SetTitle(id int64, title string) error {
	_, err := l.db.Exec(`UPDATE sessions SET title = ? WHERE id = ? AND title = ''`, title, id)
	return err
}

// How much of a project's history the hook-path handoff is distilled from:
// the newest sessions, and per session the newest rows plus the newest
// prompts, file edits and errors however far back they are, so a long
// session keeps its task and files without reading every row.
const (
	recentSessions = 4
	recentWindow   = 250
	recentPerKind  = 40
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

const rowCols = `session_id, seq, key, ts, role, kind, tool_name, call_id, file_path, command, exit_code,
	CASE WHEN kind = 'tool_result' THEN '' ELSE text END, sidechain, tokens_used, tokens_max`

func (l *Ledger) recentSessionRows(s Session) ([]Row, error) {
	// The newest rows, then the sequence numbers of older prompts, edits
	// and errors through the covering index, fetched by explicit value: a
	// "seq IN (subquery)" or a UNION over whole rows makes SQLite scan the
	// session.
	rows, err := l.db.Query(`SELECT `+rowCols+` FROM rows WHERE session_id = ? ORDER BY seq DESC LIMIT ?`, s.ID, recentWindow)
	if err != nil {
		return nil, err
	}
	out, err := scanRows(rows, s.Tool)
	if err != nil {
		return nil, err
	}
	oldest := int64(1 << 62)
	for _, r := range out {
		oldest = min(oldest, r.Seq)
	}
	extra, err := l.anchorSeqs(s.ID, oldest)
	if err != nil {
		return nil, err
	}
	if len(extra) > 0 {
		more, err := l.db.Query(`SELECT `+rowCols+` FROM rows WHERE session_id = ? AND seq IN (?`+strings.Repeat(",?", len(extra)-1)+`)`, append([]any{s.ID}, extra...)...)
		if err != nil {
			return nil, err
		}
		older, err := scanRows(more, s.Tool)
		if err != nil {
			return nil, err
		}
		out = append(out, older...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	calls, err := l.errorCalls(s, out)
	if err != nil {
		return nil, err
	}
	if len(calls) == 0 {
		return out, nil
	}
	out = append(out, calls...)
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, nil
}

// anchorSeqs are the sequence numbers of the newest prompts, edits and
// errors of session sid before seq oldest, recentPerKind of each.
func (l *Ledger) anchorSeqs(sid, oldest int64) ([]any, error) {
	var extra []any
	for _, q := range []string{
		`SELECT seq FROM rows INDEXED BY rows_anchor WHERE session_id = ? AND kind = 'prompt' AND seq < ? AND ` + anchorRows + ` ORDER BY seq DESC LIMIT ?`,
		`SELECT seq FROM rows INDEXED BY rows_anchor WHERE session_id = ? AND kind = 'tool_call' AND seq < ? AND file_path != '' AND ` + anchorRows + ` ORDER BY seq DESC LIMIT ?`,
		`SELECT seq FROM rows INDEXED BY rows_anchor WHERE session_id = ? AND kind = 'error' AND seq < ? AND ` + anchorRows + ` ORDER BY seq DESC LIMIT ?`,
	} {
		seqs, err := l.db.Query(q, sid, oldest, recentPerKind)
		if err != nil {
			return nil, err
		}
		for seqs.Next() {
			var n int64
			if err := seqs.Scan(&n); err != nil {
				seqs.Close()
				return nil, err
			}
			extra = append(extra, n)
		}
		seqs.Close()
	}
	return extra, nil
}

// errorCalls are the calls of errors in out that fell outside it, so a
// failure keeps its command.
func (l *Ledger) errorCalls(s Session, out []Row) ([]Row, error) {
	have := map[string]bool{}
	for _, r := range out {
		if r.Kind == adapters.KindToolCall {
			have[r.CallID] = true
		}
	}
	var calls []Row
	for _, r := range out {
		if r.Kind != adapters.KindError || r.CallID == "" || have[r.CallID] {
			continue
		}
		have[r.CallID] = true
		// A call precedes its result by a few rows (parallel calls by a
		// few more): look in the rows just before the error.
		more, err := l.db.Query(`SELECT `+rowCols+` FROM rows WHERE session_id = ? AND seq BETWEEN ? AND ? AND kind = 'tool_call' AND call_id = ? LIMIT 1`,
			s.ID, r.Seq-callLookback, r.Seq-1, r.CallID)
		if err != nil {
			return nil, err
		}
		c, err := scanRows(more, s.Tool)
		if err != nil {
			return nil, err
		}
		calls = append(calls, c...)
	}
	return calls, nil
}

// callLookback is how many rows before an error its tool call is looked
// for.
const callLookback = 256

func scanRows(rows *sql.Rows, tool string) ([]Row, error) {
	defer rows.Close()
	var out []Row
	for rows.Next() {
		var r Row
		var ts int64
		var exit sql.NullInt64
		var kind string
		if err := rows.Scan(&r.SessionID, &r.Seq, &r.Key, &ts, &r.Role, &kind, &r.ToolName, &r.CallID, &r.FilePath, &r.Command, &exit, &r.Text, &r.Sidechain, &r.TokensUsed, &r.TokensMax); err != nil {
			return nil, err
		}
		r.Tool = tool
		r.Time, r.Kind = time.UnixMilli(ts).UTC(), adapters.Kind(kind)
		if exit.Valid {
			n := int(exit.Int64)
			r.ExitCode = &n
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Seqs maps a ledger session id to the last row sequence number folded
// into a project's distill state.
type Seqs map[int64]int64

// LoadState returns a project's stored distill state and how far into each
// session it has read (ok false when there is none). version identifies the
// stored copy for SaveState's check.
func (l *Ledger) LoadState(project string) (state []byte, seqs Seqs, version string, ok bool) {
	err := l.db.QueryRow(`SELECT state, seqs FROM distill_state WHERE project = ?`, project).Scan(&state, &version)
	if err != nil {
		return nil, nil, "", false
	}
	if json.Unmarshal([]byte(version), &seqs) != nil {
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
	var res interface{ RowsAffected() (int64, error) }
	if version == "" {
		res, err = l.db.Exec(`INSERT INTO distill_state (project, state, seqs, updated) VALUES (?, ?, ?, ?) ON CONFLICT (project) DO NOTHING`,
			project, state, string(raw), now.UnixMilli())
	} else {
		res, err = l.db.Exec(`UPDATE distill_state SET state = ?, seqs = ?, updated = ? WHERE project = ? AND seqs = ?`,
			state, string(raw), now.UnixMilli(), project, version)
	}
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// ProjectSession is a session's id, agent and last row sequence number.
type ProjectSession struct {
	ID      int64
	Tool    string
	LastSeq int64
}

// ProjectSessions lists a project's sessions in creation order.
func (l *Ledger) ProjectSessions(project string) ([]ProjectSession, error) {
	rows, err := l.db.Query(`SELECT id, tool, next_seq - 1 FROM sessions WHERE project = ? ORDER BY id`, project)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ProjectSession
	for rows.Next() {
		var s ProjectSession
		if err := rows.Scan(&s.ID, &s.Tool, &s.LastSeq); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// RowsAfter returns a session's rows with a sequence number above seq, in
// order, at most limit.
func (l *Ledger) RowsAfter(s ProjectSession, seq int64, limit int) ([]Row, error) {
	rows, err := l.db.Query(`SELECT `+rowCols+` FROM rows WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`, s.ID, seq, limit)
	if err != nil {
		return nil, err
	}
	return scanRows(rows, s.Tool)
}

// DropState forgets a project's distill state (it is rebuilt).
func (l *Ledger) DropState(project string) error {
	_, err := l.db.Exec(`DELETE FROM distill_state WHERE project = ?`, project)
	return err
}

// PromoteSubagentOnly clears the sidechain mark when every row of a session
// is a subagent's: the user handed over a subagent's own file (an old
// <slug>/agent-*.jsonl or a subagents/ file), so its prompt is the task.
func PromoteSubagentOnly(rows []Row) {
	for i := range rows {
		if !rows[i].Sidechain {
			return
		}
	}
	for i := range rows {
		rows[i].Sidechain = false
	}
}

// ProjectTools lists the agents that have sessions in project.
func (l *Ledger) ProjectTools(project string) ([]string, error) {
	rows, err := l.db.Query(`SELECT DISTINCT tool FROM sessions WHERE project = ? ORDER BY tool`, project)
	return queryStrings(rows, err)
}

// MissedInjections lists the agents whose start injection did not arrive
// in project: carryover printed a handoff in a session (a "hook" receipt),
// the session went on to a reply after it, and its transcript never showed
// that handoff (no "transcript" receipt of the same header). The newest
// few hook receipts are looked at, each against its session's latest reply
// (read backwards from the end of the session's rows: a few rows, not the
// session).
func (l *Ledger) MissedInjections(project string) ([]string, error) {
	rows, err := l.db.Query(`SELECT DISTINCT d.tool FROM (SELECT * FROM deliveries WHERE project = ? AND via = 'hook' ORDER BY at DESC LIMIT 20) d
		WHERE NOT EXISTS (SELECT 1 FROM deliveries t WHERE t.project = d.project AND t.header = d.header AND t.session_id = d.session_id AND t.via = 'transcript')
		AND (SELECT last_active FROM sessions WHERE id = d.session_id) > d.at
		AND (SELECT r.ts FROM rows r WHERE r.session_id = d.session_id AND r.kind = 'text' AND r.role = 'assistant' ORDER BY r.seq DESC LIMIT 1) > d.at
		ORDER BY d.tool`, project)
	return queryStrings(rows, err)
}

// KnownProjects lists every project the ledger has a session, handoff or
// receipt of, sorted.
func (l *Ledger) KnownProjects() ([]string, error) {
	rows, err := l.db.Query(`SELECT project FROM sessions WHERE project != '' UNION SELECT project FROM handoffs
		UNION SELECT project FROM handoff_log UNION SELECT project FROM deliveries ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p sql.NullString
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		if p.Valid && strings.TrimSpace(p.String) != "" {
			out = append(out, p.String)
		}
	}
	return out, rows.Err()
}

// queryStrings reads a one-column string query's rows.
func queryStrings(rows *sql.Rows, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}
