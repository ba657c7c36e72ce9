package adapters

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Survey is what reading an agent's recent sessions found, so a silent
// gap is visible ("unreadable is not empty"): lines read, lines of a type
// the reader does not know (skipped), lines that are not JSON or that a
// reader could not use (failed), sessions that could not be opened, and
// drift warnings for transcripts written by a newer agent than carryover
// knows.
type Survey struct {
	Sessions int      `json:"sessions"`
	Lines    int      `json:"lines"`
	Unknown  int      `json:"unknown"`
	Failed   int      `json:"failed"`
	Unread   int      `json:"unreadable_sessions"`
	Drift    []string `json:"drift,omitempty"`
}

// surveyBytes bounds how much of each transcript a survey reads.
const surveyBytes = 4 << 20

// knownTypes are the line types (and, for Codex, payload types) a reader
// knows, whether or not they yield rows. A type outside them is counted as
// unknown: the first sign of a format change.
var knownTypes = map[string]map[string]bool{
	"claude": set("user", "assistant", "attachment", "system", "summary", "queue-operation", "last-prompt",
		"file-history-snapshot", "mode", "permission-mode", "custom-title", "ai-title", "tag", "progress",
		"relocated", "agent-name", "agent-color", "agent-setting", "isolation-latch", "worktree-state", "pr-link",
		"bridge-session", "attribution-snapshot", "content-replacement", "fork-context-ref"),
	"codex": set("session_meta", "response_item", "event_msg", "turn_context", "compacted", "world_state",
		"token_usage_record",
		// payload types
		"message", "reasoning", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output",
		"local_shell_call", "local_shell_call_output", "web_search_call", "task_started", "task_complete", "token_count",
		"user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content", "item_started", "item_completed",
		"thread_settings_applied", "turn_aborted", "patch_apply_begin", "patch_apply_end", "exec_command_begin",
		"exec_command_end", "exec_command_output_delta", "error", "stream_error", "web_search_begin", "web_search_end",
		"context_compacted", "sub_agent_activity", "image_generation_end", "mcp_tool_call_begin", "mcp_tool_call_end",
		"plan_update", "turn_diff", "entered_review_mode", "exited_review_mode", "view_image_tool_call", "ghost_snapshot"),
	"copilot-cli": nil, // types are open-ended dotted names; only JSON failures are counted
}

func set(ss ...string) map[string]bool {
	m := make(map[string]bool, len(ss))
	for _, s := range ss {
		m[s] = true
	}
	return m
}

// SurveySessions reads the first surveyBytes of each of paths (an agent's
// most recent transcripts) with that agent's reader and adds up what it
// found. Agents whose stores are not line files are only opened.
func SurveySessions(tool string, paths []string) Survey {
	var sv Survey
	a, err := Lookup(tool)
	if err != nil {
		return sv
	}
	lp, _ := a.(LineParser)
	known := knownTypes[tool]
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			sv.Unread++
			continue
		}
		sv.Sessions++
		head := make([]byte, 64<<10)
		if tool == "aider" { // the newest session is at the end of the history
			if fi, err := f.Stat(); err == nil && fi.Size() > int64(len(head)) {
				_, _ = f.Seek(fi.Size()-int64(len(head)), io.SeekStart)
			}
		}
		n, _ := io.ReadFull(f, head)
		if w := DriftWarning(tool, head[:n]); w != "" {
			sv.Drift = append(sv.Drift, w)
		}
		if lp == nil || (tool == "gemini" && isGeminiDoc(p)) || tool == "aider" {
			f.Close()
			continue
		}
		_, _ = f.Seek(0, io.SeekStart)
		sc := bufio.NewScanner(io.LimitReader(f, surveyBytes))
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		var off int64
		for sc.Scan() {
			line := sc.Bytes()
			off += int64(len(line)) + 1
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			sv.Lines++
			if !json.Valid(line) {
				sv.Failed++
				continue
			}
			if rows, err := lp.ParseLine(line, off); err != nil {
				sv.Failed++
				continue
			} else if len(rows) > 0 || known == nil {
				continue
			}
			if !lineTypeKnown(line, known) {
				sv.Unknown++
			}
		}
		f.Close()
	}
	return sv
}

// lineTypeKnown: the line's "type" and its payload's "type" (Codex) are
// both known (or absent).
func lineTypeKnown(line []byte, known map[string]bool) bool {
	var l struct {
		Type    string `json:"type"`
		Payload struct {
			Type string `json:"type"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &l) != nil {
		return true
	}
	return (l.Type == "" || known[l.Type]) && (l.Payload.Type == "" || known[l.Payload.Type])
}

// SurveyRecent surveys tool's n most recently active sessions of any
// project (status runs it: read-only, bounded by n × surveyBytes).
func SurveyRecent(tool string, env Env, n int) Survey {
	l, ok := ListerFor(tool)
	if !ok {
		return Survey{}
	}
	ss, err := l.ListSessions(env, "")
	if err != nil {
		return Survey{Unread: 1}
	}
	sortNewest(ss)
	var paths []string
	seen := map[string]bool{}
	for _, s := range ss {
		if len(paths) == n {
			break
		}
		if s.Path != "" && !seen[s.Path] {
			seen[s.Path] = true
			paths = append(paths, s.Path)
		}
	}
	return SurveySessions(tool, paths)
}

// String is the survey's one line for status.
func (s Survey) String() string {
	return fmt.Sprintf("read %d recent session(s): %d lines, %d of an unknown type skipped, %d failed, %d session(s) unreadable",
		s.Sessions, s.Lines, s.Unknown, s.Failed, s.Unread)
}

// UnreadableNote is what `list --all` says when an agent's store holds
// session-like files but none could be read as a session ("" otherwise):
// an empty list must not hide a format carryover cannot read.
func UnreadableNote(tool string, env Env, listed int) string {
	if listed > 0 {
		return ""
	}
	l, ok := ListerFor(tool)
	if !ok {
		return ""
	}
	files := 0
	for _, d := range l.Stores(env) {
		for _, pat := range []string{"*.json*", "*/*.json*", "*/*/*.json*", "*/*/*/*.json*", "*/*/*/*/*.json*"} {
			m, _ := filepath.Glob(filepath.Join(globEscape(d), pat))
			files += len(m)
		}
	}
	if files == 0 {
		return ""
	}
	return fmt.Sprintf("%s: %d file(s) in its store but no session could be read (run `carryover status` for what was skipped)", tool, files)
}
