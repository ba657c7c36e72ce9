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
	roots := map[string]string{} // slug -> project root
	if b, err := os.ReadFile(filepath.Join(dir, "projects.json")); err == nil {
		var pj struct {
			Projects map[string]string `json:"projects"`
		}
		if json.Unmarshal(b, &pj) == nil {
			for root, slug := range pj.Projects {
				roots[slug] = root
			}
		}
	}
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
		root := roots[d.Name()]
		if b, err := os.ReadFile(filepath.Join(dir, "tmp", d.Name(), ".project_root")); err == nil {
			root = strings.TrimSpace(string(b))
		}
		if project != "" && root != "" && !InProject(root, project) {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(globEscape(filepath.Join(dir, "tmp", d.Name())), "chats", "session-*.jsonl"))
		docs, _ := filepath.Glob(filepath.Join(globEscape(filepath.Join(dir, "tmp", d.Name())), "chats", "session-*.json"))
		files = append(files, docs...)
		for _, f := range files {
			s, err := DescribeCached(env, "gemini", f, l.Describe)
			if err != nil {
				continue
			}
			if root != "" {
				s.Project = root
			}
			if !InProject(s.Project, project) {
				continue
			}
			out = append(out, s)
		}
	}
	return out, nil
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
	s := NativeSession{Tool: "gemini", Path: path}
	var last time.Time
	note := func(v string) {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil && t.After(last) {
			last = t
		}
	}
	seen := map[string]bool{}
	check := func(ls [][]byte, head bool) {
		for _, l := range ls {
			var h geminiHeadLine
			if !jsonLine(l, &h) {
				continue
			}
			// Early JSONL headers have no projectHash: a sessionId with
			// a startTime or lastUpdated is the header too.
			if h.SessionID != "" && (h.ProjectHash != "" || h.StartTime != "" || h.LastUpdated != "") && s.ID == "" {
				s.ID = h.SessionID
			}
			note(h.LastUpdated)
			note(h.Timestamp)
			if h.Set != nil {
				note(h.Set.LastUpdated)
			}
			if h.ID != "" && (h.Type == "user" || h.Type == "gemini") {
				seen[h.ID] = true
			}
			if head && h.Type == "user" && s.Preview == "" {
				var parts []struct {
					Text string `json:"text"`
				}
				if json.Unmarshal(h.Content, &parts) == nil {
					for _, p := range parts {
						t := p.Text
						if i := strings.Index(t, "</hook_context>"); strings.HasPrefix(t, "<hook_context>") && i >= 0 {
							t = strings.TrimSpace(t[i+len("</hook_context>"):])
						}
						if t != "" && !strings.HasPrefix(t, "<session_context>") && !strings.HasPrefix(t, "/") && !IsCarryoverText(t) {
							s.Preview = preview(t)
							break
						}
					}
				}
			}
		}
	}
	check(lines(fs.head), true)
	check(lines(fs.tail), false)
	if s.ID == "" {
		return s, errNoSession
	}
	s.LastActive = last
	if s.LastActive.IsZero() {
		s.LastActive = fs.modTime
	}
	// Messages are upserted by id: count distinct ids when the file was
	// read whole; otherwise extrapolate line counts.
	if fs.tail == nil {
		s.MessageCount = len(seen)
	} else {
		s.MessageCount, s.CountEstimated = countMessages(path, fs, []byte(`"type":"user"`), []byte(`"type":"gemini"`))
		s.CountEstimated = true // upserts repeat a message: the count is an upper bound
	}
	return s, nil
}
