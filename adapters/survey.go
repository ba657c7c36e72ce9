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
	ag, ok := ByName(tool)
	if !ok {
		return sv
	}
	lp, _ := ag.Adapter.(LineParser)
	known := ag.KnownTypes
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			sv.Unread++
			continue
		}
		sv.Sessions++
		head := make([]byte, 64<<10)
		if ag.SurveyFromEnd {
			if fi, err := f.Stat(); err == nil && fi.Size() > int64(len(head)) {
				_, _ = f.Seek(fi.Size()-int64(len(head)), io.SeekStart)
			}
		}
		n, _ := io.ReadFull(f, head)
		if w := DriftWarning(tool, head[:n]); w != "" {
			sv.Drift = append(sv.Drift, w)
		}
		if lp == nil || (ag.DocumentStore != nil && ag.DocumentStore(p)) {
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
