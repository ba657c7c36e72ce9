package adapters

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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
// path with every character outside [A-Za-z0-9] replaced by '-'.
func ClaudeSlug(dir string) string {
	b := []byte(dir)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
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
			s, err := l.Describe(f)
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
		if !jsonLine(l, &h) {
			continue
		}
		if s.Project == "" && h.Cwd != "" {
			s.Project = h.Cwd
		}
		if h.SessionID != "" && s.ID == "" {
			s.ID = h.SessionID
		}
		switch {
		case (h.Type == "custom-title" || h.Type == "ai-title") && h.Title != "" && s.Preview == "":
			s.Preview = preview(h.Title)
		case h.Type == "queue-operation" && h.Operation == "enqueue" && queued == "":
			queued = h.Content
		case h.Type == "user" && h.PromptSource != "" && !h.IsMeta && !h.IsSidechain && h.Message != nil && s.Preview == "":
			var text string
			if json.Unmarshal(h.Message.Content, &text) != nil {
				var blocks []claudeBlock
				_ = json.Unmarshal(h.Message.Content, &blocks)
				for _, b := range blocks {
					if b.Type == "text" {
						text = b.Text
						break
					}
				}
			}
			if text != "" && !IsCarryoverText(text) && !strings.HasPrefix(text, "<command-") {
				s.Preview = preview(text)
			}
		}
	}
	if s.Preview == "" && queued != "" && !IsCarryoverText(queued) {
		s.Preview = preview(queued)
	}
	all := append(lines(fs.head), lines(fs.tail)...)
	s.LastActive = newestTimestamp(all, "timestamp")
	if s.LastActive.IsZero() {
		s.LastActive = fs.modTime
	}
	s.MessageCount, s.CountEstimated = countMessages(path, fs, []byte(`"type":"user"`), []byte(`"type":"assistant"`))
	if s.ID == "" {
		s.ID = strings.TrimSuffix(filepath.Base(path), ".jsonl")
	}
	if !bytes.Contains(fs.head, []byte(`"sessionId"`)) && len(fs.head) > 0 {
		return s, errNoSession
	}
	return s, nil
}
