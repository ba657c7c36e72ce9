package ledger

import (
	"database/sql"
	"sort"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters"
)

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
