package adapters

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// geminiLister lists ~/.gemini/tmp/<slug>/chats/session-*.jsonl. The
// project of a slug dir is its .project_root file (or projects.json).
type geminiLister struct{}

func geminiDir(env Env) string {
	return filepath.Join(envOr(env, "GEMINI_CLI_HOME", env.Home), ".gemini")
}

func (geminiLister) Stores(env Env) []string { return []string{filepath.Join(geminiDir(env), "tmp")} }

func (l geminiLister) ListSessions(env Env, project string) ([]NativeSession, error) {
	dir := geminiDir(env)
	roots := geminiSlugRoots(dir)
	slugs, err := os.ReadDir(filepath.Join(dir, "tmp"))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []NativeSession
	for _, d := range slugs {
		if !d.IsDir() {
			continue
		}
		slugDir := filepath.Join(dir, "tmp", d.Name())
		root := roots[d.Name()]
		if b, err := os.ReadFile(filepath.Join(slugDir, ".project_root")); err == nil {
			root = strings.TrimSpace(string(b))
		}
		if project == "" || root == "" || InProject(root, project) {
			out = append(out, l.slugSessions(env, slugDir, root, project)...)
		}
	}
	return out, nil
}

// geminiSlugRoots maps slug dirs to their project root from projects.json.
func geminiSlugRoots(dir string) map[string]string {
	roots := map[string]string{}
	b, err := os.ReadFile(filepath.Join(dir, "projects.json"))
	var pj struct {
		Projects map[string]string `json:"projects"`
	}
	if err != nil || json.Unmarshal(b, &pj) != nil {
		return roots
	}
	for root, slug := range pj.Projects {
		roots[slug] = root
	}
	return roots
}

// slugSessions lists the sessions of one slug dir whose project is root
// (when known) and lies in project.
func (l geminiLister) slugSessions(env Env, slugDir, root, project string) []NativeSession {
	files, _ := filepath.Glob(filepath.Join(globEscape(slugDir), "chats", "session-*.jsonl"))
	docs, _ := filepath.Glob(filepath.Join(globEscape(slugDir), "chats", "session-*.json"))
	var out []NativeSession
	for _, f := range append(files, docs...) {
		s, err := DescribeCached(env, "gemini", f, l.Describe)
		if err != nil {
			continue
		}
		s.Project = firstNonEmpty(root, s.Project)
		if InProject(s.Project, project) {
			out = append(out, s)
		}
	}
	return out
}

type geminiHeadLine struct {
	SessionID   string          `json:"sessionId"`
	ProjectHash string          `json:"projectHash"`
	StartTime   string          `json:"startTime"`
	LastUpdated string          `json:"lastUpdated"`
	ID          string          `json:"id"`
	Type        string          `json:"type"`
	Timestamp   string          `json:"timestamp"`
	Content     json.RawMessage `json:"content"`
	Set         *struct {
		LastUpdated string `json:"lastUpdated"`
	} `json:"$set"`
}

func (geminiLister) Describe(path string) (NativeSession, error) {
	if isGeminiDoc(path) {
		return describeGeminiDoc(path)
	}
	fs, err := sampleFile(path)
	if err != nil {
		return NativeSession{}, err
	}
	g := geminiSummary{s: NativeSession{Tool: "gemini", Path: path}, seen: map[string]bool{}}
	for _, l := range lines(fs.head) {
		g.line(l, true)
	}
	for _, l := range lines(fs.tail) {
		g.line(l, false)
	}
	s := g.s
	if s.ID == "" {
		return s, errNoSession
	}
	s.LastActive = g.last
	if s.LastActive.IsZero() {
		s.LastActive = fs.modTime
	}
	// Messages are upserted by id: count distinct ids when the file was
	// read whole; otherwise extrapolate line counts.
	if fs.tail == nil {
		s.MessageCount = len(g.seen)
	} else {
		s.MessageCount, _ = countMessages(path, fs, []byte(`"type":"user"`), []byte(`"type":"gemini"`))
		s.CountEstimated = true // upserts repeat a message: the count is an upper bound
	}
	return s, nil
}

// geminiSummary gathers a JSONL session's id, newest time, message ids
// and preview, line by line.
type geminiSummary struct {
	s    NativeSession
	last time.Time
	seen map[string]bool // ids of user and gemini messages
}

// line reads one line; only lines of the head give the preview.
func (g *geminiSummary) line(l []byte, head bool) {
	var h geminiHeadLine
	if !jsonLine(l, &h) {
		return
	}
	g.s.ID = firstNonEmpty(g.s.ID, geminiHeaderID(&h))
	g.last = newerTime(newerTime(g.last, h.LastUpdated), h.Timestamp)
	if h.Set != nil {
		g.last = newerTime(g.last, h.Set.LastUpdated)
	}
	if h.ID != "" && (h.Type == "user" || h.Type == "gemini") {
		g.seen[h.ID] = true
	}
	if head && h.Type == "user" && g.s.Preview == "" {
		if t := geminiHeadPrompt(h.Content); t != "" {
			g.s.Preview = preview(t)
		}
	}
}

// geminiHeaderID is the session id of a header line. Early JSONL headers
// have no projectHash: a sessionId with a startTime or lastUpdated is the
// header too.
func geminiHeaderID(h *geminiHeadLine) string {
	if h.ProjectHash != "" || h.StartTime != "" || h.LastUpdated != "" {
		return h.SessionID
	}
	return ""
}

// geminiHeadPrompt is the first part of a user message's content that the
// user typed: after a hook's context, never a session context, a command
// or carryover's own text.
func geminiHeadPrompt(content json.RawMessage) string {
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(content, &parts) != nil {
		return ""
	}
	for _, p := range parts {
		t := p.Text
		if i := strings.Index(t, "</hook_context>"); strings.HasPrefix(t, "<hook_context>") && i >= 0 {
			t = strings.TrimSpace(t[i+len("</hook_context>"):])
		}
		if t != "" && !strings.HasPrefix(t, "<session_context>") && !strings.HasPrefix(t, "/") && !IsCarryoverText(t) {
			return t
		}
	}
	return ""
}
