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
	"slices"
	"strconv"
	"strings"
	"time"
)

// Crush is the Crush adapter (charmbracelet/crush, npm @charmland/crush,
// 0.9x).
//
// Crush keeps its sessions in SQLite inside the project:
// <project>/.crush/crush.db (WAL), tables sessions (id, parent_session_id,
// title, message_count, prompt_tokens, updated_at, created_at; child
// sessions are the agent tool's sub-agents) and messages (id, session_id,
// role user|assistant|tool, parts: a JSON array of {"type","data"} with
// text, reasoning, tool_call {id,name,input: a JSON string}, tool_result
// {tool_call_id,name,content,metadata,is_error}, finish {reason,message},
// shell_command {command,output,exit_code}; created_at in ms). Read from
// Crush's source (schema migrations to 2026-01, message/content.go,
// agent/tools/bash.go); its binary could not be built here, so fixtures
// are written from that reading (crush_test.go builds the database).
//
// A command that exits non-zero is stored is_error:false: Crush's bash
// tool appends its own last line "Exit code N" to the output, before a
// "<cwd>…</cwd>" trailer, and that line is the evidence read here.
//
// Its only hook is PreToolUse (a command in crush.json, the JSON on stdin
// has session_id and cwd, CRUSH_PROJECT_DIR is set): carryover records the
// session there, and the handoff reaches the next session through the
// AGENTS.md/CRUSH.md pointer block (specs row pointer = true).
var Crush Adapter = crush{}

var crushAgent = &Agent{
	Name:     "crush",
	Display:  "Crush",
	Adapter:  Crush,
	Lister:   crushLister{},
	Envelope: EnvelopeNone,
	Format: Format{Shapes: []string{
		"Crush 0.9x <project>/.crush/crush.db (SQLite: sessions, messages with a parts JSON column)",
	}},
	// Crush compares event names case-insensitively and snake-cased.
	Events: map[string]Class{"PreToolUse": ClassTool},
	// A crush.db is an SQLite file whose schema (in its first pages) has
	// Crush's two tables and the parts column.
	Sniff: func(b []byte) bool {
		return strings.HasPrefix(string(b), "SQLite format 3\x00") &&
			containsAll(b, "parent_session_id", "parts TEXT", "message_count")
	},
	MemoryFile:  "CRUSH.md",
	CreateTools: []string{"write"},
	PlanTools:   []string{"todos"},
	ProjectEnv:  "CRUSH_PROJECT_DIR",
}

var (
	_ StoreReader = crush{}
	_ Lister      = crushLister{}
)

type crush struct{}

func (crush) Name() string { return "crush" }

func (crush) ParseHook(event string, b []byte, env Env) (Hook, error) {
	p, err := decodePayload(b)
	if err != nil {
		return Hook{}, err
	}
	h := Hook{Tool: "crush", Event: event, SessionID: p.str("session_id"), Cwd: p.str("cwd")}
	if h.Event == "" {
		h.Event = p.str("event")
	}
	h.Project = envOr(env, "CRUSH_PROJECT_DIR", "")
	return h, nil
}

// crushStoreTimeout bounds one read of Crush's database: the hook runs
// while Crush writes to it (WAL readers never wait for the writer, but a
// planted file may be slow to read).
const crushStoreTimeout = 1500 * time.Millisecond

// crushMaxMessages bounds the messages read of one session (a long
// session has a few thousand).
const crushMaxMessages = 20000

// crushDB is the database of a project: <project>/.crush/crush.db.
func crushDB(project string) string { return filepath.Join(project, ".crush", "crush.db") }

// crushFind is the hook's database: <project>/.crush/crush.db when Crush
// named the project (CRUSH_PROJECT_DIR), else the nearest .crush/crush.db
// above cwd up to the repository root, where Crush looks for it.
func crushFind(h Hook) string {
	if h.Project != "" {
		return crushDB(h.Project)
	}
	dir := h.Cwd
	for i := 0; i < 32; i++ {
		if p := crushDB(dir); fileExistsRegular(p) {
			return p
		}
		parent := filepath.Dir(dir)
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil || parent == dir {
			break
		}
		dir = parent
	}
	return crushDB(h.Cwd)
}

// openCrushDB opens Crush's database read-only, never taking a lock
// Crush's writes wait for. While Crush runs, its WAL (crush.db-wal) holds
// the newest rows: mode=ro reads them through the shared-memory index like
// any WAL reader (readers never block the writer) and, being read-only,
// never checkpoints or removes the WAL. Without a WAL file nothing is
// pending, and immutable=1 reads the file as it is: SQLite would
// otherwise create crush.db-wal and -shm beside it and leave them there.
func openCrushDB(path string) (*sql.DB, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("crush database: %w", fs.ErrNotExist)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", filepath.Base(path))
	}
	q := sqliteRO
	if _, err := os.Lstat(path + "-wal"); err != nil {
		q = "?mode=ro&immutable=1&_query_only=1"
	}
	db, err := openSQLite(path, q)
	if err != nil {
		return nil, fmt.Errorf("open Crush's database read-only: %w", err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// ReadStore reads one session and its sub-agent sessions: from
// h.TranscriptPath when given (`handoff --transcript`; no or an unknown id
// is the newest session), else from the project's database by id.
func (crush) ReadStore(h Hook, env Env) ([]Row, error) {
	path := h.TranscriptPath
	if path == "" {
		if h.SessionID == "" || h.Project == "" && h.Cwd == "" {
			return nil, nil
		}
		path = crushFind(h)
	}
	db, err := openCrushDB(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), crushStoreTimeout)
	defer cancel()
	id := h.SessionID
	if h.TranscriptPath != "" && !crushHasSession(ctx, db, id) {
		if id, err = crushNewest(ctx, db); err != nil {
			return nil, err
		}
	}
	if id == "" {
		return nil, nil
	}
	return crushRows(ctx, db, id)
}

func crushHasSession(ctx context.Context, db *sql.DB, id string) bool {
	var n int
	return id != "" && db.QueryRowContext(ctx, `SELECT count(*) FROM sessions WHERE id = ?`, id).Scan(&n) == nil && n > 0
}

// crushNewest is the newest top-level session's id ("" when none).
func crushNewest(ctx context.Context, db *sql.DB) (string, error) {
	var id string
	err := db.QueryRowContext(ctx, `SELECT id FROM sessions WHERE parent_session_id IS NULL OR parent_session_id = ''
		ORDER BY updated_at DESC, created_at DESC LIMIT 1`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", crushErr(err)
	}
	return id, nil
}

func crushErr(err error) error {
	return fmt.Errorf("read Crush's database (not a Crush crush.db, or busy; run the command again): %w", err)
}

// crushRows reads the messages of session id, then those of its sub-agent
// sessions (Sidechain), oldest first.
func crushRows(ctx context.Context, db *sql.DB, id string) ([]Row, error) {
	summary := "0"
	if crushHasColumn(ctx, db, "messages", "is_summary_message") {
		summary = "is_summary_message"
	}
	rs, err := db.QueryContext(ctx, `SELECT m.id, m.role, m.parts, m.created_at, `+summary+`, m.session_id != ?
		FROM messages m WHERE m.session_id = ? OR m.session_id IN (SELECT id FROM sessions WHERE parent_session_id = ?)
		ORDER BY m.session_id != ?, m.created_at, m.rowid LIMIT ?`, id, id, id, id, crushMaxMessages)
	if err != nil {
		return nil, crushErr(err)
	}
	defer rs.Close()
	var rows []Row
	for rs.Next() {
		var m crushMessage
		if rs.Scan(&m.ID, &m.Role, &m.Parts, &m.Created, &m.Summary, &m.Sidechain) != nil {
			continue
		}
		rows = append(rows, crushMessageRows(m)...)
	}
	if err := rs.Err(); err != nil {
		return rows, crushErr(err)
	}
	return rows, nil
}

func crushHasColumn(ctx context.Context, db *sql.DB, table, col string) bool {
	var n int
	return db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, table, col).Scan(&n) == nil && n > 0
}

// crushMessage is one messages row.
type crushMessage struct {
	ID, Role  string
	Parts     []byte
	Created   int64
	Summary   bool
	Sidechain bool
}

type crushPart struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

type crushData struct {
	Text       string `json:"text"`
	ID         string `json:"id"`
	Name       string `json:"name"`
	Input      string `json:"input"`
	ToolCallID string `json:"tool_call_id"`
	Content    string `json:"content"`
	Metadata   string `json:"metadata"`
	IsError    bool   `json:"is_error"`
	Reason     string `json:"reason"`
	Message    string `json:"message"`
	Details    string `json:"details"`
	Command    string `json:"command"`
	Output     string `json:"output"`
	ExitCode   *int   `json:"exit_code"`
}

// crushMessageRows turns one message into rows keyed by message id and
// part index (stable across Crush's updates of a streaming message).
func crushMessageRows(m crushMessage) []Row {
	var parts []crushPart
	if json.Unmarshal(m.Parts, &parts) != nil {
		return nil
	}
	t := crushTime(m.Created)
	var rows []Row
	for i, p := range parts {
		var d crushData
		if json.Unmarshal(p.Data, &d) != nil {
			continue
		}
		r := Row{Key: m.ID + "." + strconv.Itoa(i), Time: t, Sidechain: m.Sidechain}
		rows = append(rows, crushPartRows(m, p.Type, d, r)...)
	}
	return rows
}

// crushTime reads a Unix-ms column; an older update trigger wrote seconds.
func crushTime(ts int64) time.Time {
	switch {
	case ts >= 1e11:
		return time.UnixMilli(ts).UTC()
	case ts > 0:
		return time.Unix(ts, 0).UTC()
	}
	return time.Time{}
}

// crushPartRows turns one part into rows (r has the key, time and
// sidechain); reasoning, images, attachments and plain finishes yield none.
func crushPartRows(m crushMessage, typ string, d crushData, r Row) []Row {
	switch typ {
	case "text":
		return crushTextRows(m, d, r)
	case "tool_call":
		if d.Name == "" {
			return nil
		}
		r.Role, r.Kind, r.ToolName, r.CallID = "assistant", KindToolCall, d.Name, d.ID
		r.Command, r.FilePath, r.Text = crushToolArgs(d.Name, d.Input)
		return []Row{r}
	case "tool_result":
		return []Row{crushResult(r, d)}
	case "shell_command":
		return crushShellRows(d, r)
	case "finish":
		switch d.Reason {
		case "error": // the provider failed the turn
			r.Role, r.Kind, r.Text = "system", KindError, clip(strings.TrimSpace(d.Message+"\n"+d.Details), maxResult)
			return []Row{r}
		case "canceled":
			r.Role, r.Kind = "user", KindInterrupted
			return []Row{r}
		}
	}
	return nil
}

// crushTextRows: a user's text is the prompt (or carryover's own handoff),
// an assistant's is prose, or the summary that replaced the context.
func crushTextRows(m crushMessage, d crushData, r Row) []Row {
	switch {
	case strings.TrimSpace(d.Text) == "":
		return nil
	case m.Role == "user" && IsCarryoverText(d.Text):
		r.Role, r.Kind, r.Text = "user", KindInjection, clip(d.Text, maxText)
	case m.Role == "user":
		r.Role, r.Kind, r.Text = "user", KindPrompt, clip(d.Text, maxPrompt)
	case m.Role == "assistant" && m.Summary:
		r.Role, r.Kind, r.Text = "assistant", KindCompaction, clip(d.Text, maxText)
	case m.Role == "assistant":
		r.Role, r.Kind, r.Text = "assistant", KindText, clip(d.Text, maxText)
	default:
		return nil
	}
	return []Row{r}
}

// crushShellRows: the user's own "!command" in the prompt box, a call and
// its result with the exit code Crush recorded.
func crushShellRows(d crushData, r Row) []Row {
	if d.Command == "" {
		return nil
	}
	call := r
	call.Role, call.Kind, call.ToolName, call.CallID, call.Command = "user", KindToolCall, "bash", r.Key, clip(d.Command, maxResult)
	r.Key += ".out"
	r.Role, r.Kind, r.ToolName, r.CallID, r.Text, r.ExitCode = "tool", KindToolResult, "bash", call.CallID, clip(d.Output, maxResult), d.ExitCode
	if d.ExitCode != nil && *d.ExitCode != 0 {
		r.Kind = KindError
	}
	return []Row{call, r}
}

// crushToolArgs reads the command of a bash call, the file of a file tool
// and a todos call's list (for the plan).
func crushToolArgs(name, input string) (cmd, file, text string) {
	var in struct {
		Command  string          `json:"command"`
		FilePath string          `json:"file_path"`
		Path     string          `json:"path"`
		Content  string          `json:"content"`
		New      string          `json:"new_string"`
		Todos    json.RawMessage `json:"todos"`
	}
	if json.Unmarshal([]byte(input), &in) != nil {
		return "", "", ""
	}
	switch name {
	case "bash":
		cmd = clip(in.Command, maxResult)
	case "edit", "multiedit", "write":
		file, text = in.FilePath, clip(in.New+in.Content, maxResult)
	case "todos":
		text = clip(string(in.Todos), maxResult)
	}
	return cmd, file, text
}

// crushResult reads a tool result: is_error marks a tool's own failure; a
// command's exit status is the "Exit code N" line Crush's bash tool ends
// its output with.
func crushResult(r Row, d crushData) Row {
	r.Role, r.Kind, r.ToolName, r.CallID = "tool", KindToolResult, d.Name, d.ToolCallID
	text := d.Content
	if d.Name == "bash" {
		text = crushStripCwd(text)
		if n, ok := crushExit(text); ok {
			r.ExitCode = intPtr(n)
		}
	}
	r.Text = clip(text, maxResult)
	switch {
	case d.IsError && strings.TrimSpace(d.Content) == crushDenied:
		r.Kind = KindRefused
	case d.IsError, r.ExitCode != nil && *r.ExitCode != 0:
		r.Kind = KindError
	}
	return r
}

// crushDenied is the whole content of the result of a call the user did
// not allow (tools.NewPermissionDeniedResponse).
const crushDenied = "User denied permission"

// crushStripCwd removes the "\n\n<cwd>dir</cwd>" trailer the bash tool
// adds to a non-empty output.
func crushStripCwd(s string) string {
	t := strings.TrimRight(s, "\n")
	if strings.HasSuffix(t, "</cwd>") {
		if i := strings.LastIndex(t, "<cwd>"); i >= 0 && !strings.Contains(t[i:], "\n") {
			return strings.TrimRight(t[:i], "\n")
		}
	}
	return s
}

// crushExit reads the last line of a bash output: "Exit code N", written
// by Crush when the command exited non-zero.
func crushExit(s string) (int, bool) {
	s = strings.TrimRight(s, "\n")
	last := s[strings.LastIndexByte(s, '\n')+1:]
	num, ok := strings.CutPrefix(last, "Exit code ")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(num)
	return n, err == nil && n != 0
}

// crushLister lists the sessions of a project's .crush/crush.db; without a
// project, those of every project in Crush's projects.json.
type crushLister struct{}

// crushData is Crush's global data folder (projects.json).
func crushDataDir(env Env) string {
	if d := envOr(env, "XDG_DATA_HOME", ""); d != "" {
		return filepath.Join(d, "crush")
	}
	return filepath.Join(env.Home, ".local", "share", "crush")
}

func (crushLister) Stores(env Env) []string {
	return []string{crushDataDir(env)}
}

// crushMaxProjects bounds the projects listed from projects.json.
const crushMaxProjects = 200

func (crushLister) ListSessions(env Env, project string) ([]NativeSession, error) {
	var out []NativeSession
	for _, st := range crushDBs(env, project) {
		ss, err := crushSessions(st.db, st.project, "")
		if err != nil {
			continue
		}
		for _, s := range ss {
			if InProject(s.Project, project) {
				out = append(out, s)
			}
		}
	}
	return out, nil
}

// crushStore is a database and the project it belongs to.
type crushStore struct{ db, project string }

// crushDBs are the databases to list: <project>/.crush/crush.db, and the
// projects in Crush's projects.json in or at project (their data_dir,
// which options.data_directory may have moved).
func crushDBs(env Env, project string) []crushStore {
	var dbs []crushStore
	if project != "" {
		dbs = append(dbs, crushStore{crushDB(project), project})
	}
	b, err := readDocument(filepath.Join(crushDataDir(env), "projects.json"), 16<<20)
	if err != nil {
		return dbs
	}
	var pl struct {
		Projects []struct {
			Path    string `json:"path"`
			DataDir string `json:"data_dir"`
		} `json:"projects"`
	}
	_ = json.Unmarshal(b, &pl)
	for i, p := range pl.Projects {
		if i == crushMaxProjects || p.Path == "" || !InProject(p.Path, project) {
			continue
		}
		db := crushDB(p.Path)
		if filepath.IsAbs(p.DataDir) {
			db = filepath.Join(p.DataDir, "crush.db")
		}
		if !slices.ContainsFunc(dbs, func(s crushStore) bool { return s.db == db }) {
			dbs = append(dbs, crushStore{db, p.Path})
		}
	}
	return dbs
}

// Describe is the newest session of a crush.db (`handoff --transcript`).
func (crushLister) Describe(path string) (NativeSession, error) {
	ss, err := crushSessions(path, "", "1")
	if err != nil {
		return NativeSession{}, err
	}
	if len(ss) == 0 {
		return NativeSession{}, errNoSession
	}
	return ss[0], nil
}

// crushSessions lists the top-level sessions of a database, newest first
// (limit "" = all). The project, when not given, is the folder that holds
// .crush.
func crushSessions(path, project, limit string) ([]NativeSession, error) {
	db, err := openCrushDB(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), crushStoreTimeout)
	defer cancel()
	q := `SELECT s.id, s.title, s.message_count, s.updated_at, s.created_at,
		(SELECT m.parts FROM messages m WHERE m.session_id = s.id AND m.role = 'user' ORDER BY m.created_at LIMIT 1)
		FROM sessions s WHERE s.parent_session_id IS NULL OR s.parent_session_id = ''
		ORDER BY s.updated_at DESC, s.created_at DESC`
	if limit != "" {
		q += " LIMIT " + limit
	} else {
		q += " LIMIT 1000"
	}
	rs, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, crushErr(err)
	}
	defer rs.Close()
	if project == "" && filepath.Base(filepath.Dir(path)) == ".crush" {
		project = filepath.Dir(filepath.Dir(path))
	}
	var out []NativeSession
	for rs.Next() {
		var id, title string
		var count, updated, created int64
		var first []byte
		if rs.Scan(&id, &title, &count, &updated, &created, &first) != nil {
			continue
		}
		s := NativeSession{Tool: "crush", ID: id, Path: path, Project: project, MessageCount: int(count)}
		for _, r := range crushMessageRows(crushMessage{Role: "user", Parts: first}) {
			if r.Kind == KindPrompt {
				s.Preview = preview(r.Text)
				break
			}
		}
		if s.Preview == "" {
			s.Preview = preview(title)
		}
		if s.LastActive = crushTime(updated); s.LastActive.IsZero() {
			s.LastActive = crushTime(created)
		}
		out = append(out, s)
	}
	return out, rs.Err()
}
