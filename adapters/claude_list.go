package adapters

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
)

// claudeLister lists <config>/projects/<slug>/<session>.jsonl.
type claudeLister struct{}

func claudeConfigDir(env Env) string {
	return envOr(env, "CLAUDE_CONFIG_DIR", filepath.Join(env.Home, ".claude"))
}

func (claudeLister) Stores(env Env) []string {
	return []string{filepath.Join(claudeConfigDir(env), "projects")}
}

// ClaudeSlug is the directory name Claude Code gives a project: the absolute
// path with every UTF-16 code unit outside [A-Za-z0-9] replaced by '-' (so
// "é" is one '-', an emoji two), and a slug over 200 characters cut to 200
// plus '-' and the base-36 absolute value of a 32-bit string hash of the
// path (Claude Code 2.1.330: `S(t)` / `rse(t)` in its bundle). On Windows
// `C:\Users\u\p` is "C--Users-u-p" and `\\server\share\p` "--server-share-p".
func ClaudeSlug(dir string) string {
	units := utf16.Encode([]rune(dir))
	b := make([]byte, len(units))
	for i, c := range units {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b[i] = byte(c)
		} else {
			b[i] = '-'
		}
	}
	const maxSlug = 200
	if len(b) <= maxSlug {
		return string(b)
	}
	var h int32 // JavaScript's (h<<5)-h+c|0 over UTF-16 code units
	for _, c := range units {
		h = h<<5 - h + int32(c)
	}
	abs := int64(h)
	if abs < 0 {
		abs = -abs
	}
	return string(b[:maxSlug]) + "-" + strconv.FormatInt(abs, 36)
}

func (l claudeLister) ListSessions(env Env, project string) ([]NativeSession, error) {
	root := l.Stores(env)[0]
	dirs, err := os.ReadDir(root)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	slug := ClaudeSlug(project)
	var out []NativeSession
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		// The slug is lossy: use it to skip other projects cheaply, then
		// check the cwd recorded in the transcript.
		if project != "" && d.Name() != slug && !strings.HasPrefix(d.Name(), slug+"-") {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(root, d.Name(), "*.jsonl"))
		for _, f := range files {
			if strings.HasPrefix(filepath.Base(f), "agent-") {
				continue // a 1.0.x subagent file: part of its parent session
			}
			s, err := DescribeCached(env, "claude", f, l.Describe)
			if err != nil || !InProject(s.Project, project) {
				continue
			}
			out = append(out, s)
		}
	}
	return out, nil
}

type claudeHead struct {
	Type         string `json:"type"`
	SessionID    string `json:"sessionId"`
	Cwd          string `json:"cwd"`
	Timestamp    string `json:"timestamp"`
	PromptSource string `json:"promptSource"`
	IsMeta       bool   `json:"isMeta"`
	IsSidechain  bool   `json:"isSidechain"`
	Operation    string `json:"operation"`
	Content      string `json:"content"`
	Title        string `json:"title"`
	Summary      string `json:"summary"`
	Message      *struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	Raw json.RawMessage `json:"-"`
}

func (claudeLister) Describe(path string) (NativeSession, error) {
	fs, err := sampleFile(path)
	if err != nil {
		return NativeSession{}, err
	}
	s := NativeSession{Tool: "claude", Path: path}
	var queued string
	for _, l := range lines(fs.head) {
		var h claudeHead
		if jsonLine(l, &h) {
			claudeNoteHead(&s, &queued, &h, l)
		}
	}
	if s.Preview == "" && queued != "" && !IsCarryoverText(queued) {
		s.Preview = preview(queued)
	}
	s.LastActive = fs.lastActive()
	s.MessageCount, s.CountEstimated = countMessages(path, fs, []byte(`"type":"user"`), []byte(`"type":"assistant"`))
	if s.ID == "" {
		s.ID = strings.TrimSuffix(filepath.Base(path), ".jsonl")
	}
	if !bytes.Contains(fs.head, []byte(`"sessionId"`)) && len(fs.head) > 0 {
		return s, errNoSession
	}
	return s, nil
}

// claudeNoteHead takes a head line's project, session id, and the first
// title or prompt as the preview; queued keeps the first enqueued prompt
// for a session whose head holds no other.
func claudeNoteHead(s *NativeSession, queued *string, h *claudeHead, l []byte) {
	s.Project = firstNonEmpty(s.Project, h.Cwd)
	s.ID = firstNonEmpty(s.ID, h.SessionID)
	switch h.Type {
	case "custom-title", "ai-title":
		if h.Title != "" && s.Preview == "" {
			s.Preview = preview(h.Title)
		}
	case "queue-operation":
		if h.Operation == "enqueue" && *queued == "" {
			*queued = h.Content
		}
	case "user":
		if s.Preview != "" || h.IsMeta || h.IsSidechain || h.Message == nil {
			return
		}
		if text := claudeHeadPrompt(h.Message.Content); text != "" && !bytes.Contains(l, []byte(`"isCompactSummary":true`)) {
			s.Preview = preview(text)
		}
	}
}

// claudeHeadPrompt is what the user typed in a head line's message
// content: the request of a slash command, without harness tags; "" for
// markup, carryover's own text or an interruption.
func claudeHeadPrompt(content json.RawMessage) string {
	var text string
	if json.Unmarshal(content, &text) != nil {
		var blocks []claudeBlock
		_ = json.Unmarshal(content, &blocks)
		if i := slices.IndexFunc(blocks, func(b claudeBlock) bool { return b.Type == "text" }); i >= 0 {
			text = blocks[i].Text
		}
	}
	if req, ok := claudeCommandPrompt(text); ok {
		text = req
	}
	text = StripHarness(text)
	if IsCarryoverText(text) || strings.HasPrefix(text, "<") || claudeInterrupted(text) {
		return ""
	}
	return text
}
