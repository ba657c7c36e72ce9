package adapters

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/go-version"
)

// Survey is what reading an agent's recent sessions found ("unreadable is not empty").
type Survey struct {
	Sessions int      `json:"sessions"`
	Lines    int      `json:"lines"`
	Unknown  int      `json:"unknown"`             // of a type the reader does not know (skipped)
	Failed   int      `json:"failed"`              // not JSON, or the reader could not use it
	Unread   int      `json:"unreadable_sessions"` // could not be opened
	Drift    []string `json:"drift,omitempty"`     // written by a newer agent than carryover knows
}

const surveyBytes = 4 << 20 // read of each transcript at most

// SurveyRecent surveys tool's n most recently active sessions (status; read-only).
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
	for _, s := range ss {
		if len(paths) < n && s.Path != "" && !slices.Contains(paths, s.Path) {
			paths = append(paths, s.Path)
		}
	}
	return SurveySessions(tool, paths)
}

// SurveySessions reads the first surveyBytes of each of an agent's paths
// with its reader and adds up what it found (stores not of lines: opened).
func SurveySessions(tool string, paths []string) Survey {
	var sv Survey
	if ag, ok := ByName(tool); ok {
		for _, p := range paths {
			sv.add(tool, ag, p)
		}
	}
	return sv
}

func (sv *Survey) add(tool string, ag *Agent, path string) {
	f, _, err := openTranscript(path) // regular files only: a FIFO must not hang `status`
	if err != nil {
		sv.Unread++
		return
	}
	defer f.Close()
	sv.Sessions++
	if w := DriftWarning(tool, surveyHead(f, ag.SurveyFromEnd)); w != "" {
		sv.Drift = append(sv.Drift, w)
	}
	lp, ok := ag.Adapter.(LineParser)
	if !ok || (ag.DocumentStore != nil && ag.DocumentStore(path)) {
		return
	}
	b, _ := io.ReadAll(io.NewSectionReader(f, 0, surveyBytes))
	for _, l := range lines(b) {
		sv.line(lp, l, ag.KnownTypes)
	}
}

// surveyHead is the 64 KB a version is looked for in (the tail: SurveyFromEnd).
func surveyHead(f *os.File, fromEnd bool) []byte {
	head := make([]byte, 64<<10)
	if fi, err := f.Stat(); fromEnd && err == nil && fi.Size() > int64(len(head)) {
		_, _ = f.Seek(fi.Size()-int64(len(head)), io.SeekStart)
	}
	n, _ := io.ReadFull(f, head)
	return head[:n]
}

// line counts one non-blank line: failed when not JSON or the reader erred,
// unknown when it yields no rows and its (payload's) type is not known.
func (sv *Survey) line(lp LineParser, line []byte, known map[string]bool) {
	sv.Lines++
	if !json.Valid(line) {
		sv.Failed++
		return
	}
	rows, err := lp.ParseLine(line, 0) // the rows are counted, not kept: no key matters
	var l struct {
		Type    string `json:"type"`
		Payload struct {
			Type string `json:"type"`
		} `json:"payload"`
	}
	switch {
	case err != nil:
		sv.Failed++
	case len(rows) > 0 || known == nil || json.Unmarshal(line, &l) != nil:
	case l.Type != "" && !known[l.Type] || l.Payload.Type != "" && !known[l.Payload.Type]:
		sv.Unknown++
	}
}

func (s Survey) String() string {
	return fmt.Sprintf("read %d recent session(s): %d lines, %d of an unknown type skipped, %d failed, %d session(s) unreadable",
		s.Sessions, s.Lines, s.Unknown, s.Failed, s.Unread)
}

// UnreadableNote is what `list --all` says when an agent's store holds
// session-like files but none was read ("" otherwise): an empty list must
// not hide a format carryover cannot read.
func UnreadableNote(tool string, env Env, listed int) string {
	l, ok := ListerFor(tool)
	if listed > 0 || !ok {
		return ""
	}
	files := 0
	for _, d := range l.Stores(env) {
		for depth := range 5 {
			m, _ := filepath.Glob(filepath.Join(globEscape(d), strings.Repeat("*/", depth)+"*.json*"))
			files += len(m)
		}
	}
	if files == 0 {
		return ""
	}
	return fmt.Sprintf("%s: %d file(s) in its store but no session could be read (run `carryover status` for what was skipped)", tool, files)
}

// Format is what an adapter reads, written down (Agent.Format): the shapes
// by agent version where the transcript records one. Newest is the newest
// version checked, as specs/tools.toml's newest row says ("tested").
type Format struct {
	Newest string   // "" when the agent records no version in its sessions
	Shapes []string // one line each, oldest first
	// MajorOnly: only a new major version may change the shape (Aider's
	// has not from 0.4x to 0.86; minor releases come weekly).
	MajorOnly bool
}

// Tried ends a refusal with the shapes tried: tool's (every agent's for "").
func Tried(tool string) string {
	if a := named(tool); a.Name != "" {
		return "tried: " + strings.Join(a.Format.Shapes, "; ")
	}
	return "tried the formats of " + strings.Join(Names(), ", ")
}

// versionRE finds the version an agent recorded in a transcript: Claude's
// and Gemini's "version", Codex's "cli_version", Copilot's "copilotVersion",
// Aider's "> Aider v" line.
var versionRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`"(?:version|cli_version|copilotVersion)"\s*:\s*"(\d+\.\d+\.\d+)|(?m)^> Aider v(\d+\.\d+\.\d+)`)
})

// recordedVersion is the agent version a transcript records ("" none): the
// first JSON "version" field, or the last "> Aider vX" line (the newest
// session is last), in 64 KB (SurveySessions passes the right end).
func recordedVersion(head []byte) string {
	ms := versionRE().FindAllSubmatch(head[:min(len(head), 64<<10)], -1)
	if len(ms) == 0 {
		return ""
	}
	m := ms[len(ms)-1]
	if len(ms[0][1]) > 0 {
		m = ms[0]
	}
	return string(m[1]) + string(m[2]) // one of the two is empty
}

// DriftWarning is the line `status` shows for a transcript written by a
// newer agent than tool's adapter knows ("" none; it reads what it can).
// The same major.minor is the same shape: patch releases rarely change one.
func DriftWarning(tool string, head []byte) string {
	f, v := named(tool).Format, recordedVersion(head)
	got, err := version.NewVersion(v)
	known, kerr := version.NewVersion(f.Newest)
	if err != nil || kerr != nil { // none recorded, or none known
		return ""
	}
	gs, ks := got.Segments(), known.Segments()
	if gs[0] < ks[0] || gs[0] == ks[0] && (f.MajorOnly || gs[1] <= ks[1]) {
		return ""
	}
	return tool + " " + v + ": format newer than carryover knows (" + f.Newest + "): update carryover"
}
