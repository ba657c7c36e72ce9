package adapters

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// copilotLister lists ~/.copilot/session-state/<id>/, reading each
// session's workspace.yaml (id, cwd, name, timestamps) and falling back to
// the head of events.jsonl.
type copilotLister struct{}

func copilotHome(env Env) string {
	return envOr(env, "COPILOT_HOME", filepath.Join(env.Home, ".copilot"))
}

func (copilotLister) Stores(env Env) []string {
	return []string{filepath.Join(copilotHome(env), "session-state")}
}

func (l copilotLister) ListSessions(env Env, project string) ([]NativeSession, error) {
	root := l.Stores(env)[0]
	dirs, err := os.ReadDir(root)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []NativeSession
	for _, d := range dirs {
		if !d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			continue
		}
		if s, ok := l.dirSession(env, filepath.Join(root, d.Name()), project); ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// dirSession is the session of a session-state dir in project: its
// events.jsonl described, overridden by what workspace.yaml says.
func (l copilotLister) dirSession(env Env, dir, project string) (NativeSession, bool) {
	ws := readFlatYAML(filepath.Join(dir, "workspace.yaml"))
	cwd := firstNonEmpty(ws["cwd"], ws["git_root"])
	if project != "" && cwd != "" && !InProject(cwd, project) {
		return NativeSession{}, false // cheap skip before touching events.jsonl
	}
	events := filepath.Join(dir, "events.jsonl")
	s, err := DescribeCached(env, "copilot-cli", events, l.Describe)
	if err != nil {
		if len(ws) == 0 {
			return s, false
		}
		s = NativeSession{Tool: "copilot-cli", Path: events, ID: filepath.Base(dir)}
	}
	s.ID = firstNonEmpty(ws["id"], s.ID)
	s.Project = firstNonEmpty(cwd, s.Project)
	if ws["name"] != "" && s.Preview == "" {
		s.Preview = preview(ws["name"])
	}
	s.LastActive = newerTime(s.LastActive, ws["updated_at"])
	return s, InProject(s.Project, project)
}

// readFlatYAML reads the top-level "key: value" pairs of a small YAML file
// (Copilot's workspace.yaml); quoted scalars are unquoted.
func readFlatYAML(path string) map[string]string {
	m := map[string]string{}
	f, err := os.Open(path)
	if err != nil {
		return m
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == ' ' || line[0] == '#' || line[0] == '-' {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch {
		case strings.HasPrefix(v, `"`):
			if u, err := strconv.Unquote(v); err == nil {
				v = u
			}
		case strings.HasPrefix(v, "'") && strings.HasSuffix(v, "'") && len(v) >= 2:
			v = strings.ReplaceAll(v[1:len(v)-1], "''", "'")
		}
		m[strings.TrimSpace(k)] = v
	}
	return m
}

type copilotHeadLine struct {
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Data      struct {
		SessionID string `json:"sessionId"`
		Content   string `json:"content"`
		Context   struct {
			Cwd     string `json:"cwd"`
			GitRoot string `json:"gitRoot"`
		} `json:"context"`
	} `json:"data"`
}

func (copilotLister) Describe(path string) (NativeSession, error) {
	fs, err := sampleFile(path)
	if err != nil {
		return NativeSession{}, err
	}
	s := NativeSession{Tool: "copilot-cli", Path: path}
	for _, l := range lines(fs.head) {
		if !bytes.Contains(l[:min(len(l), 40)], []byte(`"type":"session.start"`)) && !bytes.Contains(l[:min(len(l), 40)], []byte(`"type":"user.message"`)) {
			continue
		}
		var h copilotHeadLine
		if !jsonLine(l, &h) {
			continue
		}
		switch h.Type {
		case "session.start":
			if s.ID == "" {
				s.ID = h.Data.SessionID
				s.Project = h.Data.Context.Cwd
			}
		case "user.message":
			if s.Preview == "" && h.Data.Content != "" && !IsCarryoverText(h.Data.Content) {
				s.Preview = preview(h.Data.Content)
			}
		}
	}
	if s.ID == "" {
		return s, errNoSession
	}
	s.LastActive = fs.lastActive()
	s.MessageCount, s.CountEstimated = countMessages(path, fs, []byte(`"type":"user.message"`), []byte(`"type":"assistant.message"`))
	return s, nil
}
