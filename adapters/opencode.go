package adapters

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// OpenCode is the OpenCode adapter (npm `opencode-ai`, 1.18.x); Kilo is
// Kilo CLI (npm `@kilocode/cli`, 7.7.x), a fork that keeps OpenCode's store
// and plugin API under its own names. One reader serves both.
//
// Sessions live in one SQLite database per user,
// $XDG_DATA_HOME|~/.local/share/opencode/opencode.db (kilo/kilo.db), in WAL
// mode: table session (id, parent_id, directory, title, time_updated),
// message (id, session_id, data JSON: role, tokens, error, summary) and
// part (id, message_id, session_id, time_created, time_updated, data JSON:
// type text|reasoning|tool|step-start|step-finish|patch|compaction|file|…).
// A tool part carries its whole life in state: {status pending|running|
// completed|error, input, output, metadata{exit,…}, error}; a failing
// shell command is status "completed" with metadata.exit non-zero, so the
// exit code, not the text, makes it a failure. Prompts typed to `opencode
// run` are stored wrapped in literal double quotes. Seen with 1.18.30,
// 1.18.33 and Kilo 7.7.7 run headless against a fake Chat Completions
// server; `opencode export <id>` prints the same rows as one JSON document
// ({info, messages:[{info, parts}]}), which `handoff --transcript` reads too.
//
// OpenCode and Kilo have no command hooks; `carryover install` writes a
// plugin file into their plugins folder (specs/hookfiles/opencode-plugin.js)
// that relays a session's first prompt (SessionStart: the handoff is added
// to that message as a synthetic text part, which OpenCode stores, so the
// reader sees carryover's receipt) and session.idle (Stop) to `carryover
// snapshot`.
var (
	OpenCode Adapter = opencode{tool: "opencode"}
	Kilo     Adapter = opencode{tool: "kilo"}
)

// opencodeEvents are the plugin's relays, under Claude Code's names as
// Pi's extension does (the payload's opencode_event keeps OpenCode's):
// a session's first model request is SessionStart, the session.idle bus
// event (the end of a run) Stop, the experimental.session.compacting hook
// PreCompact and the session.error event StopFailure.
var opencodeEvents = map[string]Class{
	"SessionStart": ClassStart, "Stop": ClassStop, "PreCompact": ClassCompact, "StopFailure": ClassFailure,
}

var opencodeAgent = &Agent{
	Name:     "opencode",
	Display:  "OpenCode",
	Aliases:  []string{"opencode-ai", "sst-opencode"},
	Adapter:  OpenCode,
	Lister:   opencodeLister{tool: "opencode"},
	Envelope: EnvelopeFlatCamel,
	Format: Format{Newest: "1.18.33", Version: JSONVersion, Shapes: []string{
		"OpenCode 1.18.x opencode.db (SQLite WAL: session, message and part rows with JSON data)",
		"OpenCode `opencode export` JSON ({info, messages:[{info, parts}]})",
	}},
	Events:        opencodeEvents,
	Sniff:         opencodeSniff,
	Launch:        []string{"opencode"},
	ContextWindow: 128_000,
	MemoryFile:    "", // OpenCode reads AGENTS.md
	PlanTools:     []string{"todowrite"},
}

var kiloAgent = &Agent{
	Name:     "kilo",
	Display:  "Kilo CLI",
	Aliases:  []string{"kilocode", "kilo-cli"},
	Adapter:  Kilo,
	Lister:   opencodeLister{tool: "kilo"},
	Envelope: EnvelopeFlatCamel,
	Format: Format{Newest: "7.7.7", Shapes: []string{
		"Kilo CLI 7.7.x kilo.db (OpenCode's session, message and part tables plus Kilo's own)",
	}},
	Events:        opencodeEvents,
	Launch:        []string{"kilo"},
	ContextWindow: 128_000,
	MemoryFile:    "",                    // Kilo reads AGENTS.md
	PlanTools:     []string{"todowrite"}, // OpenCode's tool
}

var (
	_ StoreReader = opencode{}
	_ Lister      = opencodeLister{}
)

type opencode struct{ tool string }

func (o opencode) Name() string { return o.tool }

// ParseHook reads the JSON carryover's plugin writes on stdin: session_id,
// cwd (the session's directory), worktree, hook_event_name, opencode_event.
func (o opencode) ParseHook(event string, b []byte, env Env) (Hook, error) {
	p, err := decodePayload(b)
	if err != nil {
		return Hook{}, err
	}
	h := Hook{Tool: o.tool, Event: event, SessionID: p.str("session_id", "sessionID"), Cwd: p.str("cwd", "directory"),
		Project: p.str("worktree")}
	if h.Event == "" {
		h.Event = p.str("hook_event_name", "event")
	}
	if h.Project == "/" { // a directory outside any git repository
		h.Project = ""
	}
	return h, nil
}

// opencodeDB is the agent's database: $OPENCODE_DB ($KILO_DB), absolute
// or relative to the data folder, else <data>/<tool>/<tool>.db, the data
// folder being $XDG_DATA_HOME or ~/.local/share on every OS (OpenCode
// resolves it with xdg-basedir, which has no macOS or Windows branch).
// Release builds use that name; dev-channel builds write
// <tool>-<channel>.db, which carryover does not look for.
func opencodeDB(env Env, tool string) string {
	data := filepath.Join(envOr(env, "XDG_DATA_HOME", filepath.Join(env.Home, ".local", "share")), tool)
	if p := envOr(env, strings.ToUpper(tool)+"_DB", ""); p != "" && p != ":memory:" {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(data, p)
	}
	return filepath.Join(data, tool+".db")
}

// opencodeStoreTimeout bounds one read of the database. Reads never wait
// for the agent in WAL mode (readers and the one writer do not block each
// other); the bound covers a damaged or non-WAL file whose writer holds
// its lock (TestOpenCodeReadWhileWriting).
const opencodeStoreTimeout = 1500 * time.Millisecond

// openOpenCodeDB opens path strictly read-only. mode=ro, not immutable=1:
// a live database keeps its recent pages in the -wal file (a real 1.18.30
// run left opencode.db at 4 KiB and opencode.db-wal at 2.4 MB), which
// immutable=1 ignores, seeing no tables at all. A read-only connection
// still reads the WAL through the -shm index, never checkpoints it and
// never deletes -wal or -shm on close; _query_only refuses any write
// statement; the busy timeout (500 ms) only matters to a rollback-journal
// file whose writer holds its lock.
func openOpenCodeDB(path string) (*sql.DB, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("database: %w", fs.ErrNotExist)
	}
	if !fi.Mode().IsRegular() {
		return nil, errorString("the database is not a regular file")
	}
	db, err := openSQLite(path, sqliteRO)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// ReadStore returns every row of the session h.SessionID: from the database
// h.TranscriptPath names (`handoff --transcript`; an `opencode export`
// document is read as JSON), else the agent's own database.
//
// The cursor is the session itself: each event re-reads the session's
// parts in (time_created, id) order, and the ledger keeps one row per part
// id, replaced when a part changed (a tool part goes pending → running →
// completed in place, so a watermark on time_created alone would miss its
// result, and one on time_updated has no index). One session's read is
// one indexed range scan (part_session_idx): a 2,000-part session costs
// ~23 ms of CPU to read and convert (BenchmarkOpenCodeRead's profile; its
// wall time was 190-270 ms on a machine at load 22), inside a hook's budget.
func (o opencode) ReadStore(h Hook, env Env) ([]Row, error) {
	path := h.TranscriptPath
	if path == "" {
		if env.Home == "" && (env.Getenv == nil || env.Getenv("XDG_DATA_HOME") == "") {
			return nil, nil
		}
		path = opencodeDB(env, o.tool)
	}
	if h.SessionID == "" {
		return nil, errorString("no session id to read")
	}
	if path != "" && !isSQLiteFile(path) {
		b, err := readDocument(path, clineDocMax)
		if err != nil {
			return nil, err
		}
		doc, err := parseOpenCodeExport(b)
		if err != nil {
			return nil, err
		}
		return doc.rows(), nil
	}
	return readOpenCodeSession(path, h.SessionID)
}

// ocPart is one part row; ocMessage one message row.
type ocPart struct {
	ID, MessageID string
	Created       int64
	Data          []byte
}

type ocMessage struct {
	ID   string
	Data []byte
}

func readOpenCodeSession(path, id string) ([]Row, error) {
	db, err := openOpenCodeDB(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), opencodeStoreTimeout)
	defer cancel()
	msgs := map[string]ocMessage{}
	rs, err := db.QueryContext(ctx, `SELECT id, data FROM message WHERE session_id = ?`, id)
	if err != nil {
		return nil, opencodeReadErr(err)
	}
	for rs.Next() {
		var m ocMessage
		if rs.Scan(&m.ID, &m.Data) == nil {
			msgs[m.ID] = m
		}
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return nil, opencodeReadErr(err)
	}
	var parts []ocPart
	rs, err = db.QueryContext(ctx, `SELECT id, message_id, time_created, data FROM part WHERE session_id = ? ORDER BY time_created, id`, id)
	if err != nil {
		return nil, opencodeReadErr(err)
	}
	defer rs.Close()
	for rs.Next() {
		var p ocPart
		if rs.Scan(&p.ID, &p.MessageID, &p.Created, &p.Data) == nil {
			parts = append(parts, p)
		}
	}
	if err := rs.Err(); err != nil {
		return nil, opencodeReadErr(err)
	}
	return opencodeRows(msgs, parts), nil
}

func opencodeReadErr(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return errorString("the database stayed locked; the next event reads it again")
	}
	return fmt.Errorf("not an OpenCode database, or unreadable (%w); check --source", err)
}

// ocMsgData is the JSON of a message row (or an export's message info).
type ocMsgData struct {
	ID      string `json:"id"`
	Role    string `json:"role"`
	Summary any    `json:"summary"` // true on a compaction's summary reply (an object of diffs on user messages)
	Time    struct {
		Created int64 `json:"created"`
	} `json:"time"`
	Error *struct {
		Name string `json:"name"`
		Data struct {
			Message    string `json:"message"`
			StatusCode int    `json:"statusCode"`
		} `json:"data"`
	} `json:"error"`
}

// ocPartData is the JSON of a part row.
type ocPartData struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic"`
	Ignored   bool   `json:"ignored"`
	Tool      string `json:"tool"`
	CallID    string `json:"callID"`
	Auto      bool   `json:"auto"`
	State     *struct {
		Status   string          `json:"status"`
		Input    json.RawMessage `json:"input"`
		Output   string          `json:"output"`
		Error    string          `json:"error"`
		Metadata json.RawMessage `json:"metadata"`
	} `json:"state"`
	Tokens *struct {
		Input int64 `json:"input"`
		Cache struct {
			Read  int64 `json:"read"`
			Write int64 `json:"write"`
		} `json:"cache"`
	} `json:"tokens"`
}

// opencodeRows turns a session's parts (ordered) and messages into rows.
// Messages give each part its role; a message's error becomes a row after
// its last part.
func opencodeRows(msgs map[string]ocMessage, parts []ocPart) []Row {
	info := map[string]ocMsgData{}
	for id, m := range msgs {
		var d ocMsgData
		_ = json.Unmarshal(m.Data, &d)
		info[id] = d
	}
	last := map[string]int{} // message id → index of its last part
	for i, p := range parts {
		last[p.MessageID] = i
	}
	var rows []Row
	done := map[string]bool{}
	for i, p := range parts {
		rows = append(rows, opencodePartRows(p, info[p.MessageID])...)
		if last[p.MessageID] == i {
			rows = append(rows, opencodeMsgError(p.MessageID, info[p.MessageID], p.Created)...)
			done[p.MessageID] = true
		}
	}
	// A message that failed before any part was written.
	var rest []string
	for id := range info {
		if !done[id] && info[id].Error != nil {
			rest = append(rest, id)
		}
	}
	if len(rest) == 0 {
		return rows
	}
	sort.Strings(rest)
	for _, id := range rest {
		rows = append(rows, opencodeMsgError(id, info[id], info[id].Time.Created)...)
	}
	// into place by time (parts are already in time order)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Time.Before(rows[j].Time) })
	return rows
}

func opencodeMsgError(id string, m ocMsgData, at int64) []Row {
	if m.Error == nil || m.Error.Name == "" {
		return nil
	}
	r := Row{Key: id + "#error", Role: "system", Kind: KindError, Time: msTime(float64(at))}
	msg := m.Error.Data.Message
	if msg == "" {
		msg = m.Error.Name
	}
	r.Text = clip(msg, maxResult)
	switch m.Error.Name {
	case "MessageAbortedError":
		r.Kind, r.Text = KindInterrupted, "interrupted"
	case "APIError":
		r.Limit = LimitFromError(msg, m.Error.Data.StatusCode, r.Time)
	}
	return []Row{r}
}

// opencodeUnquote undoes what `opencode run` does to its arguments before
// storing them as the prompt (1.18.30's run command): each argument holding
// a space is wrapped in double quotes with its quotes escaped as \", and
// the arguments are joined by spaces; `opencode run "Fix the bug"` is
// stored as "Fix the bug" with the quotes. A text is unwrapped only when it
// parses back exactly into such arguments, one of them quoted: a prompt
// typed in the TUI that merely contains a quotation ("cursor" must stay
// opaque) has a quoted part without a space, which run never writes, and
// is kept as it is.
func opencodeUnquote(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, `"`) && !strings.Contains(t, ` "`) {
		return s
	}
	var out []string
	quoted := false
	for len(t) > 0 {
		arg, rest, q, ok := opencodeArg(t)
		if !ok {
			return s
		}
		out, quoted, t = append(out, arg), quoted || q, rest
	}
	if !quoted {
		return s
	}
	return strings.Join(out, " ")
}

// opencodeArg splits t into its first argument as `opencode run` wrote it
// (q: in quotes) and the rest after one space; ok is false when t cannot
// be such arguments: an unterminated quote, quotes run would not have
// added (no space inside) or no space after the argument.
func opencodeArg(t string) (arg, rest string, q, ok bool) {
	if t[0] != '"' {
		i := strings.IndexByte(t, ' ')
		if i < 0 {
			return t, "", false, true
		}
		return t[:i], t[i+1:], false, true
	}
	var b strings.Builder
	j := 1
	for ; j < len(t) && t[j] != '"'; j++ {
		if t[j] == '\\' && j+1 < len(t) && t[j+1] == '"' {
			j++
		}
		b.WriteByte(t[j])
	}
	if j >= len(t) || !strings.Contains(b.String(), " ") {
		return "", "", true, false
	}
	rest = t[j+1:]
	if rest == "" {
		return b.String(), "", true, true
	}
	if rest[0] != ' ' {
		return "", "", true, false
	}
	return b.String(), rest[1:], true, true
}

func opencodePartRows(p ocPart, m ocMsgData) []Row {
	var d ocPartData
	if json.Unmarshal(p.Data, &d) != nil {
		return nil
	}
	r := Row{Key: p.ID, Time: msTime(float64(p.Created))}
	switch d.Type {
	case "text":
		if d.Ignored || strings.TrimSpace(d.Text) == "" {
			return nil
		}
		return []Row{opencodeTextRow(r, d, m)}
	case "compaction":
		r.Role, r.Kind, r.Text = "system", KindCompaction, "context compacted"
		if d.Auto {
			r.Text += " (auto)"
		}
		return []Row{r}
	case "step-finish":
		if d.Tokens == nil || d.Tokens.Input+d.Tokens.Cache.Read+d.Tokens.Cache.Write <= 0 {
			return nil
		}
		r.Role, r.Kind, r.TokensUsed = "system", KindUsage, d.Tokens.Input+d.Tokens.Cache.Read+d.Tokens.Cache.Write
		return []Row{r}
	case "tool":
		if d.Tool == "" || d.State == nil {
			return nil
		}
		return opencodeToolRows(r, d)
	}
	return nil
}

// opencodeTextRow is a text part's row: an injection, the harness's text
// beside a prompt, the prompt, a compaction summary or assistant prose.
func opencodeTextRow(r Row, d ocPartData, m ocMsgData) Row {
	switch {
	case m.Role == "user" && IsCarryoverText(d.Text):
		r.Role, r.Kind, r.Text = "user", KindInjection, carryoverHeader(d.Text)
	case m.Role == "user" && d.Synthetic:
		// text OpenCode adds beside a prompt (a file's content, a
		// subagent instruction): context, not the request
		r.Role, r.Kind, r.Text = "user", KindHarness, clip(d.Text, maxText)
	case m.Role == "user":
		r.Role, r.Kind, r.Text = "user", KindPrompt, promptText(opencodeUnquote(d.Text))
	case m.Summary == true:
		r.Role, r.Kind, r.Text = "system", KindCompaction, clip(d.Text, maxText)
	default:
		r.Role, r.Kind, r.Text = "assistant", KindText, clip(d.Text, maxText)
	}
	return r
}

// opencodeEditTools change the file named by input.filePath.
var opencodeEditTools = map[string]bool{"edit": true, "write": true, "multiedit": true, "patch": true}

func opencodeToolRows(base Row, d ocPartData) []Row {
	id := d.CallID
	if id == "" {
		id = base.Key
	}
	call := base
	call.Role, call.Kind, call.ToolName, call.CallID = "assistant", KindToolCall, d.Tool, id
	var in map[string]any
	_ = json.Unmarshal(d.State.Input, &in)
	str := func(k string) string { s, _ := in[k].(string); return s }
	switch {
	case opencodeEditTools[d.Tool]:
		call.FilePath = str("filePath")
		if call.FilePath == "" {
			call.FilePath = str("path")
		}
		call.Text = clip(strings.TrimSpace(str("content")+"\n"+str("newString")), maxResult)
	case d.Tool == "apply_patch":
		call.FilePath = patchFirstFile(str("patchText") + "\n" + str("input"))
	case d.Tool == "bash":
		call.Command = clip(str("command"), maxResult)
		call.Text = clip(str("description"), 200)
	default: // todowrite's {"todos":[{content,status}]}: without it the plan (done and left) is lost
		call.Text = planText(d.Tool, d.State.Input)
	}
	switch d.State.Status {
	case "completed", "error":
	default:
		return []Row{call} // pending or running: the result comes with a later read
	}
	res := base
	res.Key = base.Key + "#result"
	res.Role, res.Kind, res.ToolName, res.CallID = "tool", KindToolResult, d.Tool, id
	res.Text = d.State.Output
	var meta struct {
		Exit *float64 `json:"exit"`
	}
	_ = json.Unmarshal(d.State.Metadata, &meta)
	if meta.Exit != nil {
		res.ExitCode = intPtr(int(*meta.Exit))
		if *meta.Exit != 0 {
			res.Kind = KindError
		}
	}
	if d.State.Status == "error" {
		res.Kind = KindError
		if d.State.Error != "" {
			res.Text = d.State.Error
		}
		if opencodeRejected(d.State.Error) {
			res.Kind = KindRefused
		}
	}
	res.Text = clip(res.Text, maxResult)
	return []Row{call, res}
}

// opencodeRejected reports a tool call refused by the user or a deny rule.
// The state keeps only the error's text, so this matches the fixed
// messages of OpenCode's own error classes, as its UI does (1.18.30:
// PermissionRejectedError "…rejected permission…", DeniedError "…specified
// a rule…", QuestionRejectedError "…user dismissed…"); they are the
// agent's strings, never the model's or the user's.
func opencodeRejected(e string) bool {
	return containsAny([]byte(e), "QuestionRejectedError", "PermissionRejectedError", "rejected permission", "specified a rule", "user dismissed")
}

// patchFirstFile is the first file an apply_patch envelope adds, updates
// or deletes.
func patchFirstFile(s string) string {
	for _, ln := range strings.Split(s, "\n") {
		for _, pre := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: "} {
			if strings.HasPrefix(ln, pre) {
				return strings.TrimSpace(ln[len(pre):])
			}
		}
	}
	return ""
}

// opencodeSniff recognises an `opencode export` document (a database is
// recognised by its file name, in opencodeLister.Describe).
func opencodeSniff(b []byte) bool {
	return containsAll(b, `"info":`, `"messages":`, `"parts":`) && containsAny(b, `"id":"ses_`, `"id": "ses_`, `"sessionID":"ses_`, `"sessionID": "ses_`)
}

// ocExport is `opencode export <id>`'s document.
type ocExport struct {
	Info struct {
		ID        string `json:"id"`
		Directory string `json:"directory"`
		Title     string `json:"title"`
		ParentID  string `json:"parentID"`
		Time      struct {
			Updated int64 `json:"updated"`
		} `json:"time"`
	} `json:"info"`
	Messages []struct {
		Info  json.RawMessage   `json:"info"`
		Parts []json.RawMessage `json:"parts"`
	} `json:"messages"`
}

func parseOpenCodeExport(b []byte) (ocExport, error) {
	var e ocExport
	if json.Unmarshal(b, &e) != nil || e.Info.ID == "" {
		return e, errNoSession
	}
	return e, nil
}

func (e ocExport) rows() []Row {
	msgs := map[string]ocMessage{}
	var parts []ocPart
	for i, m := range e.Messages {
		var mi ocMsgData
		_ = json.Unmarshal(m.Info, &mi)
		if mi.ID == "" {
			mi.ID = "m" + strconv.Itoa(i)
		}
		msgs[mi.ID] = ocMessage{ID: mi.ID, Data: m.Info}
		at := mi.Time.Created
		for j, raw := range m.Parts {
			// An export has no part rows, so no time_created: a part's own
			// start (text, reasoning) or its tool state's, else the time
			// of the part before it.
			var pi struct {
				ID   string `json:"id"`
				Time struct {
					Start int64 `json:"start"`
				} `json:"time"`
				State struct {
					Time struct {
						Start int64 `json:"start"`
					} `json:"time"`
				} `json:"state"`
			}
			_ = json.Unmarshal(raw, &pi)
			if pi.ID == "" {
				pi.ID = mi.ID + "." + strconv.Itoa(j)
			}
			if t := max(pi.Time.Start, pi.State.Time.Start); t > 0 {
				at = t
			}
			parts = append(parts, ocPart{ID: pi.ID, MessageID: mi.ID, Created: at, Data: raw})
		}
	}
	return opencodeRows(msgs, parts)
}

// opencodeLister lists the sessions of the agent's database (read-only,
// one query), the project from each session's directory. Subagent sessions
// (parent_id set) are left out: their work is summed up in the parent's
// task tool result.
type opencodeLister struct{ tool string }

func (l opencodeLister) Stores(env Env) []string {
	return []string{filepath.Dir(opencodeDB(env, l.tool))}
}

func (l opencodeLister) ListSessions(env Env, project string) ([]NativeSession, error) {
	if env.Home == "" && (env.Getenv == nil || env.Getenv("XDG_DATA_HOME") == "") {
		return nil, nil
	}
	path := opencodeDB(env, l.tool)
	if _, err := os.Stat(path); err != nil {
		return nil, nil
	}
	ss, err := l.sessions(path, 0)
	if err != nil {
		return nil, err
	}
	var out []NativeSession
	for _, s := range ss {
		if InProject(s.Project, project) {
			out = append(out, s)
		}
	}
	return out, nil
}

// opencodeListMax bounds how many sessions one listing reads (newest first).
const opencodeListMax = 500

// sessions reads the newest top-level sessions of the database at path
// (limit 0: opencodeListMax), each with its message count and first prompt.
func (l opencodeLister) sessions(path string, limit int) ([]NativeSession, error) {
	if limit <= 0 {
		limit = opencodeListMax
	}
	db, err := openOpenCodeDB(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), opencodeStoreTimeout)
	defer cancel()
	rs, err := db.QueryContext(ctx, `SELECT s.id, s.directory, s.title, s.time_updated,
		(SELECT COUNT(*) FROM message m WHERE m.session_id = s.id),
		(SELECT p.data FROM part p JOIN message m ON m.id = p.message_id
			WHERE p.session_id = s.id AND m.data LIKE '%"role":"user"%' AND p.data LIKE '{"type":"text"%'
			ORDER BY p.time_created, p.id LIMIT 1)
		FROM session s WHERE s.parent_id IS NULL OR s.parent_id = ''
		ORDER BY s.time_updated DESC LIMIT ?`, limit)
	if err != nil {
		return nil, opencodeReadErr(err)
	}
	defer rs.Close()
	var out []NativeSession
	for rs.Next() {
		var id, dir, title string
		var updated int64
		var n int
		var first sql.NullString
		if rs.Scan(&id, &dir, &title, &updated, &n, &first) != nil {
			continue
		}
		s := NativeSession{Tool: l.tool, ID: id, Path: path, Project: dir, LastActive: msTime(float64(updated)), MessageCount: n}
		var d ocPartData
		if first.Valid && json.Unmarshal([]byte(first.String), &d) == nil && !d.Synthetic && !IsCarryoverText(d.Text) {
			s.Preview = preview(opencodeUnquote(d.Text))
		}
		if s.Preview == "" {
			s.Preview = preview(title)
		}
		out = append(out, s)
	}
	return out, opencodeReadErr2(rs.Err())
}

func opencodeReadErr2(err error) error {
	if err == nil {
		return nil
	}
	return opencodeReadErr(err)
}

// Describe reads one session for `handoff --transcript`: the newest
// top-level session of a database, or an `opencode export` document.
func (l opencodeLister) Describe(path string) (NativeSession, error) {
	if isSQLiteFile(path) {
		ss, err := l.sessions(path, 1)
		if err != nil {
			return NativeSession{}, err
		}
		if len(ss) == 0 {
			return NativeSession{}, errNoSession
		}
		return ss[0], nil
	}
	b, err := readDocument(path, clineDocMax)
	if err != nil {
		return NativeSession{}, err
	}
	e, err := parseOpenCodeExport(b)
	if err != nil {
		return NativeSession{}, err
	}
	s := NativeSession{Tool: l.tool, ID: e.Info.ID, Path: path, Project: e.Info.Directory, LastActive: msTime(float64(e.Info.Time.Updated)),
		MessageCount: len(e.Messages)}
	for _, r := range e.rows() {
		if r.Kind == KindPrompt {
			s.Preview = preview(r.Text)
			break
		}
	}
	if s.Preview == "" {
		s.Preview = preview(e.Info.Title)
	}
	return s, nil
}
