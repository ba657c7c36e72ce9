package adapters

import (
	"cmp"
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/carryover/carryover/publish/redact"
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

// claudeShapedHook decodes a hook payload of Claude Code's shape, which most
// agents copied (hook_event_name when the command line names no event).
func claudeShapedHook(tool, event string, b []byte) (Hook, payload, error) {
	p, err := decodePayload(b)
	if err != nil {
		return Hook{}, nil, err
	}
	return Hook{Tool: tool, Event: cmp.Or(event, p.str("hook_event_name")), SessionID: p.str("session_id"),
		TranscriptPath: p.str("transcript_path"), Cwd: p.str("cwd"), Source: p.str("source"), Prompt: p.str("prompt")}, p, nil
}

// str returns the first of keys that holds a non-empty JSON string.
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

func intPtr(n int) *int { return &n }

// exitWith records a command's exit code on its result row (non-zero: an error).
func exitWith(r *Row, n int64) {
	r.ExitCode = intPtr(int(n))
	if n != 0 {
		r.Kind = KindError
	}
}

// clip is redact.Clip: no partial word or secret survives a cut (it reads s
// up to n+clipReach to see a secret crossing it).
func clip(s string, n int) string { return redact.Clip(s, n) }

// Text limits at ingest: the ledger keeps what a handoff can use, not whole
// tool outputs; a parser keeps clipReach past a clip's limit.
const (
	maxPrompt = 8 << 10
	maxText   = 4 << 10
	maxResult = 2 << 10
	clipReach = redact.ClipReach
)

// IsCarryoverText reports whether text is carryover's own handoff (an
// injection receipt, not user content): a handoff's first line ("#
// [CARRYOVER] Last updated <date>…" or "… Session handoff"), blanks aside,
// starting the text or a JSON string, after a tag (a recorded envelope) or
// after the banner line ("carryover · <project> · handoff HO-… from …",
// publish.Banner, placed likewise, then a newline, JSON-escaped or not). A
// prompt merely mentioning [CARRYOVER] or quoting a header further down is not.
func IsCarryoverText(text string) bool {
	return strings.Contains(text, "# [CARRYOVER] ") && carryoverHeaderRE().MatchString(text)
}

var carryoverHeaderRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:\A|[">])[ \t]*(?:carryover(?: · [^"<>\n]*)? · handoff HO-[^"<>\n]*(?:\n|\\n)[ \t]*)?# \[CARRYOVER\] (?:Session handoff|Last updated [0-9])`)
})

// planText is a plan tool's input (PlanTools) for the call row's Text, raw
// JSON for distill ("" for other tools); a JSON string holding JSON is unwrapped.
func planText(name string, raw json.RawMessage) string {
	if !PlanTool(name) || len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return clip(s, maxResult)
	}
	return clip(string(raw), maxResult)
}

// PastedLines is where a prompt becomes a paste (a spec, a log): beyond it
// the row keeps the request around the paste. 40: hand-typed requests in the
// fixtures and realworld corpus are under 30 lines, pastes 100 to thousands.
const PastedLines = 40

// promptText is a prompt row's text: bounded, then clipped.
func promptText(s string) string { return clip(BoundPrompt(s), maxPrompt) }

// BoundPrompt returns s, or for a paste over PastedLines lines the lines
// that carry the request: the first sentence, the paste's title (first
// heading, else first line), the last line when it reads as a request, then
// "(pasted, N lines)". Heading marks go: a paste opens no handoff section.
func BoundPrompt(s string) string {
	n := strings.Count(strings.TrimRight(s, "\n"), "\n") + 1
	if n <= PastedLines {
		return s
	}
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			lines = append(lines, t)
		}
	}
	var out []string
	if len(lines) > 0 {
		out = pasteGist(lines)
	}
	return strings.Join(append(out, "(pasted, "+strconv.Itoa(n)+" lines)"), "\n")
}

// pasteGist is BoundPrompt's lines for a paste's non-blank lines.
func pasteGist(lines []string) (out []string) {
	title, isHead := pasteHeading(lines[0])
	if !isHead {
		out = append(out, clipRunes(firstSentence(title), 200))
		title = pasteTitle(lines)
	}
	if title != "" {
		out = append(out, "Title: "+clipRunes(title, 120))
	}
	last, lastHead := pasteHeading(lines[len(lines)-1])
	if len(lines) > 2 && !lastHead && looksLikeRequest(last) && (len(out) == 0 || last != lines[0]) {
		out = append(out, clipRunes(last, 200))
	}
	return out
}

// pasteHeading is a markdown heading line's text (# to ######), else the line.
func pasteHeading(l string) (string, bool) {
	t := strings.TrimLeft(l, "#")
	if len(t) < len(l) && len(l)-len(t) <= 6 && strings.HasPrefix(t, " ") {
		return strings.TrimSpace(t), true
	}
	return l, false
}

// pasteTitle is the first heading of a paste's first 12 lines, else line 2.
func pasteTitle(lines []string) string {
	for _, l := range lines[1:min(len(lines), 12)] {
		if h, ok := pasteHeading(l); ok {
			return h
		}
	}
	if len(lines) > 1 {
		return lines[1]
	}
	return ""
}

// firstSentence is s up to its first sentence end.
func firstSentence(s string) string {
	for _, end := range []string{". ", "? ", "! ", "。", "？", "！"} {
		if i := strings.Index(s, end); i > 0 {
			s = s[:i+len(strings.TrimRight(end, " "))]
		}
	}
	return s
}

// looksLikeRequest: a short prose line, not code, a list item or a table row.
func looksLikeRequest(l string) bool {
	if utf8.RuneCountInString(l) > 300 || strings.ContainsAny(l[:1], "-*|`{}[]<>/\\;") {
		return false
	}
	return strings.Count(l, " ") >= 2 || utf8.RuneCountInString(l) >= 8 && !strings.ContainsAny(l, "(){};=")
}

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// InProject reports whether dir is project or inside it.
func InProject(dir, project string) bool {
	if project == "" {
		return true
	}
	if dir == "" {
		return false
	}
	dir, project = filepath.Clean(dir), filepath.Clean(project)
	return dir == project || strings.HasPrefix(dir, project+string(filepath.Separator))
}
