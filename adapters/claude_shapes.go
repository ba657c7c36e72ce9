package adapters

import (
	"encoding/json"
	"strings"
)

// Claude Code transcript shapes carryover reads (see
// ../shared/agents/claude-code.md §3.3 and testdata/adapters/claude/):
//
//   - 1.0.x (2025): no promptSource on prompts; subagents inline in the main
//     file (isSidechain) or in top-level <slug>/agent-<id>.jsonl files whose
//     lines carry the parent's sessionId; custom slash commands echo as
//     <command-message>…<command-name>/x</command-name><command-args>…;
//     prompts may be a list of text blocks.
//   - 2.0.x: the same, with compact_boundary + isCompactSummary and Read
//     results carrying a <system-reminder> the harness appended.
//   - 2.1.x: promptSource on typed and -p prompts, subagents in
//     <session>/subagents/agent-*.jsonl, the compaction summary may be a
//     text block.
//
// A real prompt is therefore a main-thread user line whose content is text
// that is not isMeta, not a tool result, not a harness wrapper and not a
// compaction summary; promptSource only confirms it.

// claudeControlCommands are built-in slash commands that steer the session
// rather than ask for work: their echo is never the request.
var claudeControlCommands = map[string]bool{
	"clear": true, "compact": true, "exit": true, "quit": true, "model": true, "cost": true, "config": true,
	"help": true, "login": true, "logout": true, "status": true, "resume": true, "memory": true,
	"permissions": true, "hooks": true, "mcp": true, "agents": true, "doctor": true, "vim": true, "theme": true,
	"bug": true, "release-notes": true, "terminal-setup": true, "add-dir": true, "export": true, "context": true,
	"usage": true, "rewind": true, "statusline": true, "ide": true, "upgrade": true, "privacy-settings": true,
	"output-style": true, "todos": true, "bashes": true, "continue": true, "fast": true, "effort": true,
	"plugin": true, "sandbox": true, "stats": true, "feedback": true, "rename": true, "tasks": true,
}

// claudeCommandPrompt returns the request carried by a slash-command echo
// (`<command-message>…</command-message><command-name>/x</command-name>
// <command-args>…</command-args>`): its arguments, or "/x" for a command
// without arguments that is not a session control (/init, /review). ok is
// false for control commands, local-command output and anything else.
func claudeCommandPrompt(s string) (string, bool) {
	if !strings.HasPrefix(s, "<command-") {
		return "", false
	}
	name := strings.TrimPrefix(strings.TrimSpace(tagText(s, "command-name")), "/")
	if name == "" || claudeControlCommands[name] {
		return "", false
	}
	if args := strings.TrimSpace(tagText(s, "command-args")); args != "" {
		return args, true
	}
	return "/" + name, true
}

// tagText returns the text between <tag> and </tag> in s ("" when absent).
func tagText(s, tag string) string {
	i := strings.Index(s, "<"+tag+">")
	if i < 0 {
		return ""
	}
	s = s[i+len(tag)+2:]
	if j := strings.Index(s, "</"+tag+">"); j >= 0 {
		return s[:j]
	}
	return s
}

// claudeInterrupted reports the harness's "[Request interrupted by user…]"
// marker, which old versions write as a user text.
func claudeInterrupted(s string) bool {
	return strings.HasPrefix(strings.TrimSpace(s), "[Request interrupted by user")
}

// claudeStopped classifies an is_error tool_result's text from Claude
// Code's fixed messages: REJECT ("The user doesn't want to proceed with this
// tool use…", the user answered No, possibly with feedback) is a refusal;
// CANCEL ("The user doesn't want to take this action right now…", Esc at
// the prompt or during the call) and "[Request interrupted by user…" are
// interruptions. Anything else is an ordinary error ("").
func claudeStopped(text []byte) Kind {
	t := bytesTrimLeft(text)
	switch {
	case hasPrefixFold(t, "The user doesn't want to proceed with this tool use"), hasPrefixFold(t, "The user does not want to proceed with this tool use"):
		return KindRefused
	case hasPrefixFold(t, "The user doesn't want to take this action right now"), hasPrefixFold(t, "[Request interrupted by user"):
		return KindInterrupted
	}
	return ""
}

func bytesTrimLeft(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}

// hasPrefixFold reports whether b starts with p, ASCII case and the
// apostrophe's typographic form (’) ignored.
func hasPrefixFold(b []byte, p string) bool {
	s := strings.ReplaceAll(string(b[:min(len(b), len(p)+8)]), "’", "'")
	return len(s) >= len(p) && strings.EqualFold(s[:len(p)], p)
}

// claudeTaskNotification reports Claude Code's <task-notification> user
// message (a background command's or, from 2.1.33x, a background
// subagent's completion), which the harness writes in the user's role.
func claudeTaskNotification(s []byte) bool {
	return hasPrefixFold(s, "<task-notification>")
}

// claudeOriginHarness reads a user line's "origin" (Claude Code 2.1:
// {"kind":…}; absent or "human" for what the user typed): a
// task-notification, an auto-continuation or a peer agent's message is the
// harness writing in the user's role (Claude Code's own "is this the
// human" test is: not isMeta, no toolUseResult, origin absent or human).
// "channel" (the user writing from another client) stays the user's.
func claudeOriginHarness(raw []byte) bool {
	if len(raw) == 0 || raw[0] != '{' {
		return false
	}
	var o struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return false
	}
	return o.Kind != "" && o.Kind != "human" && o.Kind != "channel"
}

// harnessTags are wrappers the agent harness (not the user or the model)
// puts into transcript text. Their content never reaches a handoff.
var harnessTags = []string{
	"system-reminder", "local-command-stdout", "local-command-stderr", "local-command-caveat",
	"command-name", "command-message", "command-args", "user-prompt-submit-hook",
}

// StripHarness removes harness-inserted blocks (<system-reminder>…</…> and
// friends) from text; an unterminated block (clipped) is cut to the end.
// Text without a '<' is returned as it is, at the cost of one scan.
func StripHarness(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	changed := false
	for _, tag := range harnessTags {
		open, close := "<"+tag+">", "</"+tag+">"
		for {
			i := strings.Index(s, open)
			if i < 0 {
				break
			}
			changed = true
			rest := s[i+len(open):]
			if j := strings.Index(rest, close); j >= 0 {
				s = s[:i] + rest[j+len(close):]
			} else {
				s = s[:i]
			}
		}
	}
	if !changed {
		return s
	}
	return strings.TrimSpace(s)
}

// claudeScrub is the last step of both Claude line parsers (the fast one
// and its oracle): harness text out of every row, prompts that held only
// harness text dropped.
func claudeScrub(rows []Row) []Row {
	out := rows[:0]
	for _, r := range rows {
		switch r.Kind {
		case KindPrompt, KindQueued, KindToolResult, KindError, KindText:
			t := StripHarness(r.Text)
			if r.Kind == KindPrompt && t == "" {
				continue
			}
			r.Text = t
		}
		out = append(out, r)
	}
	return out
}

// ExplicitTranscripts is what `--transcript FILE` reads: FILE itself and,
// for agents that keep subagents in files of their own, those files too
// (a session's subagents are part of its work).
func ExplicitTranscripts(a Adapter, h Hook, env Env) []Transcript {
	if isSQLiteFile(h.TranscriptPath) {
		return []Transcript{} // a database: read by the store reader, never tailed
	}
	ts := []Transcript{{Path: h.TranscriptPath, SessionID: h.SessionID}}
	lp, ok := a.(LineParser)
	if !ok {
		return ts
	}
	for _, t := range lp.Transcripts(h, env) {
		if t.Sidechain && t.Path != h.TranscriptPath {
			ts = append(ts, t)
		}
	}
	return ts
}
