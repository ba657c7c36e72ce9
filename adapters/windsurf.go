package adapters

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Windsurf is the Windsurf (Cascade) adapter.
//
// Cascade's own history is encrypted, so the hook payloads are the record
// (ParseHook fills Hook.Rows), plus the transcript JSONL Windsurf writes to
// ~/.windsurf/transcripts/<trajectory_id>.jsonl while a
// post_cascade_response_with_transcript hook is configured (LineParser).
// Hooks cannot inject: the handoff reaches Cascade through AGENTS.md or
// .windsurf/rules only.
var Windsurf Adapter = windsurf{}

// windsurfAgent is what carryover knows about the agent besides its files.
var windsurfAgent = &Agent{
	Name:     "windsurf",
	Display:  "Windsurf",
	Adapter:  Windsurf,
	Lister:   windsurfLister{},
	Envelope: EnvelopeNone,
	Format:   Format{Shapes: []string{"Windsurf: the hook payloads themselves (no readable store)"}},
	Events: map[string]Class{
		"pre_user_prompt": ClassPrompt,
		"post_write_code": ClassTool, "post_run_command": ClassTool, "post_mcp_tool_use": ClassTool, "post_read_code": ClassTool,
		"post_cascade_response_with_transcript": ClassStop,
	},
}

var (
	_ LineParser = windsurf{}
	_ Lister     = windsurfLister{}
)

type windsurf struct{}

func (windsurf) Name() string { return "windsurf" }

func (windsurf) ParseHook(event string, b []byte, env Env) (Hook, error) {
	p, err := decodePayload(b)
	if err != nil {
		return Hook{}, err
	}
	ti := p.obj("tool_info")
	h := Hook{
		Tool:      "windsurf",
		Event:     event,
		SessionID: p.str("trajectory_id"),
	}
	if h.Event == "" {
		h.Event = p.str("agent_action_name")
	}
	action := p.str("agent_action_name")
	if action == "" {
		action = h.Event
	}
	if ti == nil {
		return h, nil
	}
	h.TranscriptPath = ti.str("transcript_path")
	// Cwd stays empty: the hook process runs in the workspace root, which
	// is steadier than post_run_command's cwd (a subdirectory, or /tmp).
	h.Prompt = ti.str("user_prompt")
	h.Rows = windsurfRows(action, p, ti)
	return h, nil
}

// windsurfKey is stable for the same payload (a hook registered at two
// levels runs twice with identical stdin) and distinct for two actions of
// one turn.
func windsurfKey(action string, p, ti payload) string {
	h := sha256.New()
	h.Write([]byte(p.str("trajectory_id") + "\x00" + p.str("execution_id") + "\x00" + action + "\x00" + p.str("timestamp") + "\x00"))
	if raw, ok := p["tool_info"]; ok {
		h.Write(raw)
	}
	return action + ":" + hex.EncodeToString(h.Sum(nil)[:8])
}

// windsurfPromptKey is shared by the pre_user_prompt hook and the
// transcript's user_input line so the same prompt is stored once.
func windsurfPromptKey(text string) string {
	s := sha256.Sum256([]byte(strings.TrimSpace(text)))
	return "prompt:" + hex.EncodeToString(s[:8])
}

func windsurfRows(action string, p, ti payload) []Row {
	ts, _ := time.Parse(time.RFC3339Nano, p.str("timestamp"))
	base := Row{Time: ts}
	switch action {
	case "pre_user_prompt":
		text := ti.str("user_prompt")
		if strings.TrimSpace(text) == "" {
			return nil
		}
		return []Row{windsurfPrompt(base, text)}
	case "post_write_code":
		path := ti.str("file_path")
		if path == "" {
			return nil
		}
		key := windsurfKey(action, p, ti)
		var edits []struct {
			New string `json:"new_string"`
		}
		_ = json.Unmarshal(ti["edits"], &edits)
		var b strings.Builder
		for _, e := range edits {
			b.WriteString(e.New)
			b.WriteByte('\n')
		}
		call := base
		call.Key, call.Role, call.Kind, call.ToolName, call.CallID = key, "assistant", KindToolCall, "write_code", key
		call.FilePath, call.Text = path, clip(b.String(), maxResult)
		res := base
		res.Key, res.Role, res.Kind, res.ToolName, res.CallID = key+"#result", "tool", KindToolResult, "write_code", key
		res.Text = strconv.Itoa(len(edits)) + " edit(s) applied"
		return []Row{call, res}
	case "post_run_command":
		cmd := ti.str("command_line", "command")
		if cmd == "" {
			return nil
		}
		key := windsurfKey(action, p, ti)
		call := base
		call.Key, call.Role, call.Kind, call.ToolName, call.CallID = key, "assistant", KindToolCall, "run_command", key
		call.Command = clip(cmd, maxResult)
		res := base
		res.Key, res.Role, res.Kind, res.ToolName, res.CallID = key+"#result", "tool", KindToolResult, "run_command", key
		// The documented payload has neither output nor exit code; use
		// them should a build add them.
		res.Text = clip(ti.str("output", "stdout"), maxResult)
		if n, ok := ti.num("exit_code", "exitCode"); ok {
			res.ExitCode = intPtr(int(n))
			if n != 0 {
				res.Kind = KindError
			}
		}
		return []Row{call, res}
	case "post_mcp_tool_use":
		key := windsurfKey(action, p, ti)
		name := "mcp:" + ti.str("mcp_server_name") + "/" + ti.str("mcp_tool_name")
		call := base
		call.Key, call.Role, call.Kind, call.ToolName, call.CallID = key, "assistant", KindToolCall, name, key
		res := base
		res.Key, res.Role, res.Kind, res.ToolName, res.CallID = key+"#result", "tool", KindToolResult, name, key
		res.Text = clip(ti.str("mcp_result"), maxResult)
		return []Row{call, res}
	case "post_cascade_response":
		text := ti.str("response")
		if strings.TrimSpace(text) == "" {
			return nil
		}
		r := base
		r.Key, r.Role, r.Kind, r.Text = windsurfKey(action, p, ti), "assistant", KindText, clip(text, maxText)
		return []Row{r}
	}
	return nil
}

func windsurfPrompt(base Row, text string) Row {
	r := base
	r.Key, r.Role = windsurfPromptKey(text), "user"
	if IsCarryoverText(text) {
		r.Kind, r.Text = KindInjection, carryoverHeader(text)
		return r
	}
	r.Kind, r.Text = KindPrompt, promptText(text)
	return r
}

// Transcripts is the transcript the hook names, else the documented
// location for the trajectory (it exists only while the transcript hook is
// configured).
func (windsurf) Transcripts(h Hook, env Env) []Transcript {
	path := h.TranscriptPath
	if path == "" {
		if h.SessionID == "" || env.Home == "" || strings.ContainsAny(h.SessionID, `/\`) || h.SessionID == ".." {
			return nil
		}
		path = filepath.Join(env.Home, ".windsurf", "transcripts", h.SessionID+".jsonl")
	}
	return []Transcript{{Path: path, SessionID: h.SessionID, MaybeMissing: true}}
}

type windsurfLine struct {
	Status    string          `json:"status"`
	Type      string          `json:"type"`
	Timestamp json.RawMessage `json:"timestamp"`
}

// ParseLine reads one transcript step: {"status","type","<type>":{…}}.
// Pending steps are superseded by a later done copy and are skipped.
func (windsurf) ParseLine(line []byte, off int64) ([]Row, error) {
	var l windsurfLine
	if json.Unmarshal(line, &l) != nil || l.Status == "pending" {
		return nil, nil
	}
	var all payload
	if json.Unmarshal(line, &all) != nil {
		return nil, nil
	}
	body := all.obj(l.Type)
	if body == nil {
		return nil, nil
	}
	base := Row{Time: flexTime(l.Timestamp)}
	key := "off:" + strconv.FormatInt(off, 10)
	switch l.Type {
	case "user_input":
		text := body.str("user_response", "text", "message")
		if strings.TrimSpace(text) == "" {
			return nil, nil
		}
		return []Row{windsurfPrompt(base, text)}, nil
	case "planner_response":
		text := body.str("response", "text", "message")
		if strings.TrimSpace(text) == "" {
			return nil, nil
		}
		r := base
		r.Key, r.Role, r.Kind, r.Text = key, "assistant", KindText, clip(text, maxText)
		return []Row{r}, nil
	case "code_action":
		path := body.str("path", "file_path")
		if path == "" {
			return nil, nil
		}
		r := base
		r.Key, r.Role, r.Kind, r.ToolName, r.CallID = key, "assistant", KindToolCall, "code_action", key
		r.FilePath, r.Text = path, clip(body.str("new_content"), maxResult)
		return []Row{r}, nil
	}
	return nil, nil
}

// flexTime reads an ISO 8601 string or epoch seconds/milliseconds.
func flexTime(raw json.RawMessage) time.Time {
	if len(raw) == 0 {
		return time.Time{}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		t, _ := time.Parse(time.RFC3339Nano, s)
		return t
	}
	var f float64
	if json.Unmarshal(raw, &f) != nil || f <= 0 || f > 1e15 {
		return time.Time{}
	}
	if f > 1e11 {
		return time.UnixMilli(int64(f)).UTC()
	}
	return time.Unix(int64(f), 0).UTC()
}

// windsurfLister lists ~/.windsurf/transcripts/*.jsonl. A transcript does
// not name its workspace, so its sessions have no project: `list --all`
// shows them, `handoff --transcript` reads one.
type windsurfLister struct{}

func (windsurfLister) Stores(env Env) []string {
	return []string{filepath.Join(env.Home, ".windsurf", "transcripts")}
}

func (l windsurfLister) ListSessions(env Env, project string) ([]NativeSession, error) {
	if project != "" || env.Home == "" {
		return nil, nil
	}
	files, _ := filepath.Glob(filepath.Join(globEscape(env.Home), ".windsurf", "transcripts", "*.jsonl"))
	var out []NativeSession
	for _, f := range files {
		if s, err := DescribeCached(env, "windsurf", f, l.Describe); err == nil {
			out = append(out, s)
		}
	}
	return out, nil
}

func (windsurfLister) Describe(path string) (NativeSession, error) {
	fs, err := sampleFile(path)
	if err != nil {
		return NativeSession{}, err
	}
	s := NativeSession{Tool: "windsurf", Path: path, ID: strings.TrimSuffix(filepath.Base(path), ".jsonl"), LastActive: fs.modTime}
	for _, ln := range lines(fs.head) {
		rows, _ := windsurf{}.ParseLine(ln, 0)
		for _, r := range rows {
			if r.Kind == KindPrompt && s.Preview == "" {
				s.Preview = preview(r.Text)
			}
			if r.Kind == KindPrompt || r.Kind == KindText {
				s.MessageCount++
			}
		}
	}
	if s.MessageCount == 0 {
		return s, errNoSession
	}
	s.CountEstimated = fs.tail != nil
	return s, nil
}
