package adapters

// This file is the made-up "Ninth" agent that cmd/e2e/ninth_agent_test.go
// adds the documented way (README, "Adding an agent"): this file, one line
// in All, fixtures under testdata/adapters/ninth/ and one [[tool]] entry in
// specs/tools.toml. It lives under testdata so the real build never sees it.

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Ninth is the adapter: its transcript is JSONL, one event per line.
var Ninth Adapter = ninth{}

// ninthAgent is what carryover knows about the agent besides its files.
var ninthAgent = &Agent{
	Name:     "ninth",
	Display:  "Ninth Agent",
	Adapter:  Ninth,
	Lister:   ninthLister{},
	Envelope: EnvelopeFlatCamel,
	Format:   Format{Newest: "1.2.3", Version: `"ninth_version":"(\d+\.\d+\.\d+)"`, Shapes: []string{"Ninth 1.x JSONL (header, user, assistant, tool lines)"}},
	Events: map[string]Class{
		"SessionStart": ClassStart, "UserPrompt": ClassPrompt, "AfterTool": ClassTool, "Stop": ClassStop,
	},
	Sniff:         func(b []byte) bool { return containsAll(b, `"ninth_version"`) },
	Launch:        []string{"ninth"},
	ContextWindow: 100_000,
}

var _ LineParser = ninth{} // (the descriptor's Lister field checks ninthLister)

type ninth struct{}

func (ninth) Name() string { return "ninth" }

// ParseHook: Ninth's payloads have the fields of Claude Code's.
func (ninth) ParseHook(event string, b []byte, env Env) (Hook, error) {
	h, _, err := claudeShapedHook("ninth", event, b)
	return h, err
}

func (ninth) Transcripts(h Hook, env Env) []Transcript {
	if h.TranscriptPath == "" {
		return nil
	}
	return []Transcript{{Path: h.TranscriptPath, SessionID: h.SessionID, MaybeMissing: true}}
}

type ninthLine struct {
	Type    string `json:"type"` // header, user, assistant, tool
	Cwd     string `json:"cwd"`  // header: the session's project
	Time    string `json:"time"`
	Text    string `json:"text"`
	Tool    string `json:"tool"`
	Command string `json:"command"`
	File    string `json:"file"`
	Exit    *int   `json:"exit"`
	Output  string `json:"output"`
}

// ParseLine keys rows by byte offset: the file only grows.
func (ninth) ParseLine(line []byte, off int64) ([]Row, error) {
	var l ninthLine
	if json.Unmarshal(line, &l) != nil {
		return nil, nil
	}
	t, _ := time.Parse(time.RFC3339, l.Time)
	key := strconv.FormatInt(off, 10)
	switch {
	case l.Type == "user" && IsCarryoverText(l.Text): // carryover's own handoff, delivered
		return []Row{{Key: key, Time: t, Role: "user", Kind: KindInjection, Text: clip(l.Text, maxText)}}, nil
	case l.Type == "user": // a paste is bounded as every agent's
		return []Row{{Key: key, Time: t, Role: "user", Kind: KindPrompt, Text: promptText(l.Text)}}, nil
	case l.Type == "assistant":
		return []Row{{Key: key, Time: t, Role: "assistant", Kind: KindText, Text: clip(l.Text, maxText)}}, nil
	case l.Type == "tool":
		call := Row{Key: key + ".call", Time: t, Role: "assistant", Kind: KindToolCall, ToolName: l.Tool, CallID: key,
			Command: l.Command, FilePath: l.File}
		res := Row{Key: key + ".result", Time: t, Role: "tool", Kind: KindToolResult, ToolName: l.Tool, CallID: key,
			ExitCode: l.Exit, Text: clip(l.Output, maxResult)}
		if l.Exit != nil && *l.Exit != 0 {
			res.Kind = KindError
		}
		return []Row{call, res}, nil
	}
	return nil, nil
}

// ninthLister lists ~/.ninth/sessions/*.jsonl; the header names the project.
type ninthLister struct{}

func (ninthLister) Stores(env Env) []string {
	return []string{filepath.Join(env.Home, ".ninth", "sessions")}
}

func (l ninthLister) ListSessions(env Env, project string) ([]NativeSession, error) {
	files, _ := filepath.Glob(filepath.Join(globEscape(env.Home), ".ninth", "sessions", "*.jsonl"))
	return describeAll(env, "ninth", files, project, l.Describe), nil
}

func (ninthLister) Describe(path string) (NativeSession, error) {
	fs, err := sampleFile(path)
	if err != nil {
		return NativeSession{}, err
	}
	s := NativeSession{Tool: "ninth", Path: path, ID: strings.TrimSuffix(filepath.Base(path), ".jsonl"), LastActive: fs.modTime}
	for _, ln := range lines(fs.head) {
		var l ninthLine
		if json.Unmarshal(ln, &l) == nil && l.Type == "header" {
			s.Project = l.Cwd
		}
		rows, _ := ninth{}.ParseLine(ln, 0)
		s.noteRows(rows)
	}
	if s.MessageCount == 0 {
		return s, errNoSession
	}
	return s, nil
}
