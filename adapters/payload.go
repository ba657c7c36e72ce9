package adapters

import (
	"cmp"
	"encoding/json"
	"errors"
	"github.com/carryover/carryover/publish/redact"
	"strconv"
	"strings"
)

// ErrBadPayload is returned for hook stdin that is not a JSON object.
var ErrBadPayload = errors.New("hook payload is not a JSON object")

// payload is a decoded hook payload or transcript line with lazy fields.
type payload map[string]json.RawMessage

func decodePayload(b []byte) (payload, error) {
	var p payload
	if err := json.Unmarshal(b, &p); err != nil || p == nil {
		return nil, ErrBadPayload
	}
	return p, nil
}

// claudeShapedHook decodes a hook payload of Claude Code's shape, the one
// most agents copied: session_id, transcript_path, cwd, source, prompt,
// and hook_event_name when the command line names no event.
func claudeShapedHook(tool, event string, b []byte) (Hook, payload, error) {
	p, err := decodePayload(b)
	if err != nil {
		return Hook{}, nil, err
	}
	return Hook{Tool: tool, Event: cmp.Or(event, p.str("hook_event_name")), SessionID: p.str("session_id"),
		TranscriptPath: p.str("transcript_path"), Cwd: p.str("cwd"), Source: p.str("source"), Prompt: p.str("prompt")}, p, nil
}

// str returns the first of keys that holds a JSON string.
func (p payload) str(keys ...string) string {
	for _, k := range keys {
		var s string
		if raw, ok := p[k]; ok && json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// obj returns the nested object at key, or nil.
func (p payload) obj(key string) payload {
	var o payload
	if raw, ok := p[key]; !ok || json.Unmarshal(raw, &o) != nil {
		return nil
	}
	return o
}

// num returns the first of keys holding a JSON number.
func (p payload) num(keys ...string) (int64, bool) {
	for _, k := range keys {
		var f float64
		if raw, ok := p[k]; ok && json.Unmarshal(raw, &f) == nil {
			return int64(f), true
		}
	}
	return 0, false
}

// intPtr returns &n.
func intPtr(n int) *int { return &n }

// exitWith records a command's exit code on its result row: non-zero is
// a failure.
func exitWith(r *Row, n int64) {
	r.ExitCode = intPtr(int(n))
	if n != 0 {
		r.Kind = KindError
	}
}

// exitFromText takes the exit code a failed call's text names ("exit
// code 2", "exited with code: 1") when no field gave one.
func exitFromText(r *Row, text string) {
	if r.ExitCode != nil {
		return
	}
	if m := exitCodeRE().FindStringSubmatch(text); m != nil {
		n, _ := strconv.Atoi(m[1])
		r.ExitCode = intPtr(n)
	}
}

// clip is redact.Clip: no partial word and no part of a secret survives a
// cut; it reads s up to n+clipReach to see a secret crossing it.
func clip(s string, n int) string { return redact.Clip(s, n) }

// clipReach is how much past a clip's limit a parser must keep of a text
// (redact.ClipReach).
const clipReach = redact.ClipReach

// Text limits applied at ingest: the ledger keeps what a handoff can use,
// not whole tool outputs.
const (
	maxPrompt = 8 << 10
	maxText   = 4 << 10
	maxResult = 2 << 10
)

// IsCarryoverText reports whether text is carryover's own handoff, so that
// adapters record it as an injection receipt rather than user content: it
// starts with a handoff's first line ("# [CARRYOVER] Last updated
// <date>…", or the resume prompt's "# [CARRYOVER] Session handoff"), or
// holds one at the start of a JSON string or right after a tag (an
// envelope in a hook's recorded output), or right after the banner line
// that starts an injection (isBanner). A prompt that merely mentions
// [CARRYOVER], or quotes a header further down, is still a prompt.
func IsCarryoverText(text string) bool {
	const tag = "# [CARRYOVER] "
	for i := 0; ; {
		j := strings.Index(text[i:], tag)
		if j < 0 {
			return false
		}
		at := i + j
		i = at + 1
		if isHandoffHeader(text[at+len(tag):]) && startsText(text, at) {
			return true
		}
	}
}

// isHandoffHeader reports whether the rest of a "# [CARRYOVER] " line is
// a handoff's first line.
func isHandoffHeader(rest string) bool {
	return strings.HasPrefix(rest, "Session handoff") ||
		strings.HasPrefix(rest, "Last updated ") && len(rest) > 13 && rest[13] >= '0' && rest[13] <= '9'
}

// startsText reports whether text[at:], blanks aside, starts the text, a
// JSON string or a tag, or follows the banner line Deliver puts first
// (agents without a user message), JSON-escaped or not.
func startsText(text string, at int) bool {
	k := at
	for k > 0 && (text[k-1] == ' ' || text[k-1] == '\t') {
		k--
	}
	if k == 0 {
		return true
	}
	switch text[k-1] {
	case '"', '>':
		return true
	case '\n':
		return isBanner(text[:k-1])
	case 'n':
		return k >= 2 && text[k-2] == '\\' && isBanner(text[:k-2])
	}
	return false
}

// isBanner reports whether s ends with carryover's whole banner line
// ("carryover · <project> · handoff HO-… from …", publish.Banner) that
// starts the text, a JSON string or a tag.
func isBanner(s string) bool {
	if i := strings.LastIndexAny(s, "\"><\n"); i >= 0 {
		if s[i] == '\n' || s[i] == '<' {
			return false
		}
		s = s[i+1:]
	}
	s = strings.TrimLeft(s, " \t")
	return strings.HasPrefix(s, "carryover · ") && strings.Contains(s, " · handoff HO-")
}
