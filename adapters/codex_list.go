package adapters

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// codexLister lists $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl, using
// Codex's own thread index (state_5.sqlite, read-only) when it is there and
// globbing the rollouts otherwise.
type codexLister struct{}

func codexHome(env Env) string { return envOr(env, "CODEX_HOME", filepath.Join(env.Home, ".codex")) }

func (codexLister) Stores(env Env) []string {
	return []string{filepath.Join(codexHome(env), "sessions")}
}

func (l codexLister) ListSessions(env Env, project string) ([]NativeSession, error) {
	home := codexHome(env)
	if ss, ok := l.fromIndex(env, home, project); ok {
		return ss, nil
	}
	files, _ := filepath.Glob(filepath.Join(globEscape(home), "sessions", "*", "*", "*", "rollout-*.jsonl"))
	out := describeAll(env, "codex", files, project, l.Describe)
	for i := range out {
		out[i] = codexMarkSubagent(out[i])
	}
	return out, nil
}

// fromIndex reads the threads table of state_5.sqlite. ok is false when
// the index is missing or unreadable (the caller falls back to files).
func (l codexLister) fromIndex(env Env, home, project string) ([]NativeSession, bool) {
	path := filepath.Join(home, "state_5.sqlite")
	if _, err := os.Stat(path); err != nil {
		return nil, false
	}
	db, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro&_busy_timeout=2000")
	if err != nil {
		return nil, false
	}
	defer db.Close()
	q, ok := codexThreadsQuery(db)
	if !ok {
		return nil, false
	}
	rows, err := db.Query(q)
	if err != nil {
		return nil, false
	}
	defer rows.Close()
	var out []NativeSession
	for rows.Next() {
		if s, ok := l.indexRow(env, rows, project); ok {
			out = append(out, codexMarkSubagent(s))
		}
	}
	return out, rows.Err() == nil
}

// codexThreadsQuery selects id, rollout path, cwd, update time and title
// of the unarchived threads from the columns this version's table has;
// ok is false without the first three.
func codexThreadsQuery(db *sql.DB) (string, bool) {
	rows, err := db.Query(`SELECT name FROM pragma_table_info('threads')`)
	if err != nil {
		return "", false
	}
	cols := map[string]bool{}
	for rows.Next() {
		var n string
		if rows.Scan(&n) == nil {
			cols[n] = true
		}
	}
	rows.Close()
	if !cols["id"] || !cols["rollout_path"] || !cols["cwd"] {
		return "", false
	}
	pick := func(cands ...string) string {
		if i := slices.IndexFunc(cands, func(c string) bool { return cols[c] }); i >= 0 {
			return cands[i]
		}
		return "''"
	}
	updated := pick("recency_at_ms", "updated_at_ms", "updated_at")
	title := pick("title", "first_user_message", "preview")
	archived := pick("archived")
	if archived == "''" {
		archived = "0"
	}
	return `SELECT id, rollout_path, cwd, ` + updated + `, ` + title + ` FROM threads WHERE ` + archived + ` = 0`, true
}

// indexRow is the session of one threads row in project. A row can
// outlive its rollout: only sessions still on disk are listed.
func (l codexLister) indexRow(env Env, rows *sql.Rows, project string) (NativeSession, bool) {
	var id, rollout, cwd, title string
	var upd any
	if rows.Scan(&id, &rollout, &cwd, &upd, &title) != nil || !InProject(cwd, project) {
		return NativeSession{}, false
	}
	s, err := DescribeCached(env, "codex", rollout, l.Describe)
	if err != nil {
		return s, false
	}
	s.ID, s.Project = id, cwd
	if t := indexTime(upd); t.After(s.LastActive) {
		s.LastActive = t
	}
	if title != "" && s.Preview == "" {
		s.Preview = preview(title)
	}
	return s, true
}

// indexTime reads a timestamp column: epoch ms, epoch s or RFC 3339.
func indexTime(v any) time.Time {
	switch x := v.(type) {
	case int64:
		if x > 1e12 {
			return time.UnixMilli(x)
		}
		return time.Unix(x, 0)
	case float64:
		return indexTime(int64(x))
	case string:
		t, _ := time.Parse(time.RFC3339Nano, x)
		return t
	case []byte:
		return indexTime(string(x))
	}
	return time.Time{}
}

type codexHeadLine struct {
	Timestamp string `json:"timestamp"`
	Type      string `json:"type"`
	ID        string `json:"id"`   // the oldest rollouts' bare header
	Role      string `json:"role"` // and their bare message items
	Payload   struct {
		Type    string `json:"type"`
		ID      string `json:"id"`
		Cwd     string `json:"cwd"`
		Role    string `json:"role"`
		Message string `json:"message"`
		Item    *struct {
			Type    string `json:"type"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"item"`
	} `json:"payload"`
}

func (codexLister) Describe(path string) (NativeSession, error) {
	fs, err := sampleFile(path)
	if err != nil {
		return NativeSession{}, err
	}
	s := NativeSession{Tool: "codex", Path: path}
	for _, l := range lines(fs.head) {
		var h codexHeadLine
		if jsonLine(l, &h) {
			codexNoteHead(&s, &h, l)
		}
	}
	if s.ID == "" {
		// rollout-YYYY-MM-DDTHH-MM-SS-<uuid>.jsonl
		const prefix = "rollout-2006-01-02T15-04-05-"
		base := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		if len(base) <= len(prefix) || !strings.HasPrefix(base, "rollout-") {
			return s, errNoSession
		}
		s.ID = base[len(prefix):]
	}
	s.LastActive = fs.lastActive()
	s.MessageCount, s.CountEstimated = countMessages(path, fs,
		[]byte(`"type":"UserMessage"`), []byte(`"type":"AgentMessage"`), []byte(`"type":"user_message"`), []byte(`"type":"agent_message"`))
	return s, nil
}

// codexNoteHead takes the session id and project from a head line, and
// the first prompt as the preview.
func codexNoteHead(s *NativeSession, h *codexHeadLine, l []byte) {
	switch {
	case h.Type == "session_meta" && s.ID == "":
		s.ID, s.Project = h.Payload.ID, h.Payload.Cwd
	case h.Type == "" && h.ID != "" && h.Timestamp != "" && s.ID == "":
		s.ID = h.ID // the oldest rollouts' bare header {"id","timestamp","instructions"}
	case s.Preview == "":
		if t := codexHeadPrompt(h, l); t != "" {
			s.Preview = preview(t)
		}
	}
}

// codexHeadPrompt is the prompt a head line holds, if any.
func codexHeadPrompt(h *codexHeadLine, l []byte) string {
	switch {
	case h.Type == "message" && h.Role == "user":
		rows, _ := codex{}.ParseLine(l, 0)
		p, _ := firstPrompt(rows)
		return p
	case h.Type != "event_msg":
	case h.Payload.Type == "item_completed" && h.Payload.Item != nil && h.Payload.Item.Type == "UserMessage":
		for _, c := range h.Payload.Item.Content {
			if c.Text != "" && !IsCarryoverText(c.Text) {
				return c.Text
			}
		}
	case h.Payload.Type == "user_message":
		return h.Payload.Message
	}
	return ""
}

// codexSubagentOf reads a rollout's session_meta (its first line, within
// 16 KB): sub is true when a subagent wrote it — source
// {"subagent":{"thread_spawn":{"parent_thread_id":P,…}}} for a thread the
// model spawned (parent P), {"subagent":"review"} or another name for
// Codex's own helpers (parent ""). Codex 0.169 also writes
// thread_source:"subagent".
func codexSubagentOf(path string) (sub bool, parent, kind string) {
	f, err := os.Open(path)
	if err != nil {
		return false, "", ""
	}
	defer f.Close()
	buf := make([]byte, 16<<10)
	n, _ := io.ReadFull(f, buf)
	head := buf[:n]
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		head = head[:i]
	}
	if !bytes.Contains(head, []byte(`"subagent"`)) {
		return false, "", ""
	}
	var meta struct {
		Type    string `json:"type"`
		Payload struct {
			Source       json.RawMessage `json:"source"`
			ThreadSource string          `json:"thread_source"`
		} `json:"payload"`
	}
	if json.Unmarshal(head, &meta) != nil || meta.Type != "session_meta" {
		return false, "", ""
	}
	var src struct {
		Subagent json.RawMessage `json:"subagent"`
	}
	_ = json.Unmarshal(meta.Payload.Source, &src)
	if len(src.Subagent) == 0 {
		return meta.Payload.ThreadSource == "subagent", "", ""
	}
	var name string
	if json.Unmarshal(src.Subagent, &name) == nil {
		return true, "", name
	}
	var spawn struct {
		ThreadSpawn *struct {
			Parent string `json:"parent_thread_id"`
		} `json:"thread_spawn"`
	}
	if json.Unmarshal(src.Subagent, &spawn) == nil && spawn.ThreadSpawn != nil {
		return true, spawn.ThreadSpawn.Parent, "thread_spawn"
	}
	return true, "", ""
}

// codexMarkSubagent says in a listed session's preview that a subagent
// wrote it, and whose: its rows are also read with its parent's
// (codexSubagents), but on its own it is a session a user may want to
// hand off (a parent archived or in another day's directory, a review).
func codexMarkSubagent(s NativeSession) NativeSession {
	sub, parent, kind := codexSubagentOf(s.Path)
	if !sub {
		return s
	}
	tag := "subagent"
	switch {
	case parent != "":
		tag += " of " + parent[:min(len(parent), 8)]
	case kind != "":
		tag += " (" + preview(kind) + ")"
	}
	if s.Preview == "" {
		s.Preview = tag
	} else {
		s.Preview = tag + ": " + s.Preview
	}
	return s
}
