package adapters

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// cursorLister lists Cursor sessions for the manual path, from the stores
// Cursor itself writes, so a session its hooks never saw can be handed off:
// ~/.cursor/projects/<slug>/agent-transcripts/ (<id>.jsonl or
// <id>/<id>.jsonl) and, for --all, the composers of the global
// state.vscdb (opened read-only; they record no project).
type cursorLister struct{}

func (cursorLister) Stores(env Env) []string {
	if env.Home == "" {
		return nil
	}
	return []string{filepath.Join(env.Home, ".cursor", "projects"), filepath.Join(cursorUserDir(env), "globalStorage")}
}

func (l cursorLister) ListSessions(env Env, project string) ([]NativeSession, error) {
	if env.Home == "" {
		return nil, nil
	}
	var dirs []string
	if project != "" {
		dirs = []string{cursorTranscriptDir(Hook{Project: project}, env)}
	} else {
		dirs, _ = filepath.Glob(filepath.Join(globEscape(filepath.Join(env.Home, ".cursor", "projects")), "*", "agent-transcripts"))
	}
	var out []NativeSession
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(globEscape(d), "*.jsonl"))
		nested, _ := filepath.Glob(filepath.Join(globEscape(d), "*", "*.jsonl"))
		for _, f := range append(files, nested...) {
			if filepath.Base(filepath.Dir(f)) == "subagents" {
				continue
			}
			s, err := l.Describe(f)
			if err != nil {
				continue
			}
			if project != "" {
				s.Project = project
			}
			out = append(out, s)
		}
	}
	if project == "" {
		db := filepath.Join(cursorUserDir(env), "globalStorage", "state.vscdb")
		if ss, err := cursorComposers(db, 50); err == nil {
			out = append(out, ss...)
		}
	}
	return out, nil
}

func (l cursorLister) Describe(path string) (NativeSession, error) {
	if strings.HasSuffix(path, ".vscdb") {
		ss, err := cursorComposers(path, 1)
		if err != nil {
			return NativeSession{}, err
		}
		if len(ss) == 0 {
			return NativeSession{}, errNoSession
		}
		return ss[0], nil
	}
	fs, err := sampleFile(path)
	if err != nil {
		return NativeSession{}, err
	}
	s := NativeSession{Tool: "cursor", Path: path, ID: strings.TrimSuffix(filepath.Base(path), ".jsonl"), LastActive: fs.modTime}
	for _, ln := range lines(fs.head) {
		rows, _ := cursor{}.ParseLine(ln, 0)
		s.noteRows(rows)
	}
	if s.MessageCount == 0 && !strings.Contains(string(fs.head), `"role"`) {
		return s, errNoSession
	}
	s.CountEstimated = fs.tail != nil
	return s, nil
}

// cursorComposers lists the newest composers of a state.vscdb, newest first.
func cursorComposers(path string, limit int) ([]NativeSession, error) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, errNoSession
	}
	db, err := openSQLite(path, sqliteRO)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), cursorStoreTimeout)
	defer cancel()
	rs, err := db.QueryContext(ctx, `SELECT key, value FROM cursorDiskKV WHERE key >= 'composerData:' AND key < 'composerData;' AND value IS NOT NULL`)
	if err != nil {
		return nil, errNoSession // not a Cursor database
	}
	defer rs.Close()
	var out []NativeSession
	for rs.Next() {
		var k string
		var v []byte
		if rs.Scan(&k, &v) != nil {
			continue
		}
		var c struct {
			Name          string            `json:"name"`
			CreatedAt     int64             `json:"createdAt"`
			LastUpdatedAt int64             `json:"lastUpdatedAt"`
			Headers       []json.RawMessage `json:"fullConversationHeadersOnly"`
			Conversation  []json.RawMessage `json:"conversation"`
		}
		if json.Unmarshal(v, &c) != nil {
			continue
		}
		at := c.LastUpdatedAt
		if at == 0 {
			at = c.CreatedAt
		}
		s := NativeSession{Tool: "cursor", ID: strings.TrimPrefix(k, "composerData:"), Path: path,
			LastActive: time.UnixMilli(at).UTC(), MessageCount: len(c.Headers) + len(c.Conversation), Preview: preview(c.Name)}
		if s.MessageCount == 0 {
			continue
		}
		out = append(out, s)
	}
	sortNewest(out)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func sortNewest(ss []NativeSession) {
	for i := 1; i < len(ss); i++ {
		for j := i; j > 0 && ss[j].LastActive.After(ss[j-1].LastActive); j-- {
			ss[j], ss[j-1] = ss[j-1], ss[j]
		}
	}
}
