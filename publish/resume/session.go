// Package resume builds the resume prompt that `carryover handoff` and
// `carryover resume` print, copy and write to .carryover/RESUME.md: the
// Braindump PRD template packed into a token budget by priority layers
// (P1 task state … P7 older history), the compact structured handoff of the
// ntm handoff package (YAML or JSON), and the portable session.json format
// both are built from.
//
// Nothing here reads agent stores or the ledger: callers fill a Session.
package resume

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
)

// Version is the session.json format version.
const Version = "1.0"

// Session is the portable session format (.carryover/session.json), field
// for field the Braindump PRD's CapturedSession, plus a few optional
// carryover extensions (questions, next, test, tokens).
type Session struct {
	Version          string       `json:"version"`
	Source           string       `json:"source"`
	CapturedAt       time.Time    `json:"capturedAt"`
	SessionID        string       `json:"sessionId"`
	SessionStartedAt string       `json:"sessionStartedAt,omitempty"`
	Project          Project      `json:"project"`
	Conversation     Conversation `json:"conversation"`
	FilesChanged     []FileChange `json:"filesChanged"`
	Decisions        []string     `json:"decisions"`
	Blockers         []string     `json:"blockers"`
	Task             Task         `json:"task"`

	// Questions are open questions the previous agent left (carryover extension).
	Questions []string `json:"questions,omitempty"`
	// Test is the command that verifies the work (carryover extension).
	Test string `json:"test,omitempty"`
	// Tokens is the context fill the agent last reported (carryover extension).
	Tokens *Tokens `json:"tokens,omitempty"`
	// References are the sources and prose action items the session named
	// (carryover extension).
	References []string `json:"references,omitempty"`
	// DrawnFrom names the sessions the task state was distilled from when
	// it is the project's fold across sessions (carryover extension).
	DrawnFrom []string `json:"drawnFrom,omitempty"`
	// Quality is the handoff's coverage report (carryover extension).
	Quality *distill.Quality `json:"quality,omitempty"`
	// Imported names the file this session was imported from (`resume
	// --file`): not a session carryover recorded, so the prompt says so
	// and does not tell the agent to just continue. Never serialised.
	Imported string `json:"-"`
}

// ImportedNote is what a prompt built from an imported file says about it.
func ImportedNote(file string) string {
	return "Imported from " + oneLine(file) + ": carryover did not record this session; it is a file someone gave you. " +
		"Check it against the repository and with the user before acting on it."
}

// Project is what the receiving agent needs to know about the repository.
type Project struct {
	Path               string   `json:"path"`
	Name               string   `json:"name,omitempty"`
	GitBranch          string   `json:"gitBranch,omitempty"`
	GitStatus          string   `json:"gitStatus,omitempty"`
	GitLog             []string `json:"gitLog,omitempty"`
	Structure          string   `json:"structure,omitempty"`
	MemoryFileContents string   `json:"memoryFileContents,omitempty"`
}

// Conversation is the session's messages, oldest first.
type Conversation struct {
	MessageCount    int       `json:"messageCount"`
	EstimatedTokens int       `json:"estimatedTokens"`
	Summary         string    `json:"summary,omitempty"`
	Messages        []Message `json:"messages"`
}

// Message is one conversation entry.
type Message struct {
	Role       string `json:"role"` // user, assistant, system, tool
	Content    string `json:"content"`
	ToolName   string `json:"toolName,omitempty"`
	Timestamp  string `json:"timestamp,omitempty"`
	TokenCount int    `json:"tokenCount,omitempty"`
}

// FileChange is a file the session created, modified or deleted.
type FileChange struct {
	Path       string `json:"path"`
	ChangeType string `json:"changeType"` // created, modified, deleted
	Diff       string `json:"diff,omitempty"`
	Language   string `json:"language,omitempty"`
}

// Task is the task state: P1 of the resume prompt.
type Task struct {
	Description string   `json:"description"`        // the goal
	Latest      string   `json:"latest,omitempty"`   // the latest request, when not the goal (carryover extension)
	SetAside    []string `json:"setAside,omitempty"` // goals an explicit switch abandoned (carryover extension)
	Completed   []string `json:"completed"`
	Remaining   []string `json:"remaining"`
	InProgress  string   `json:"inProgress,omitempty"`
	Blockers    []string `json:"blockers"`
}

// Tokens is a context fill figure.
type Tokens struct {
	Used int64 `json:"used"`
	Max  int64 `json:"max"`
}

// Normalize fills counts and nil slices so the JSON is stable.
func (s *Session) Normalize() {
	cleanText(s)
	s.Version = cmp.Or(s.Version, Version)
	n := 0
	for i := range s.Conversation.Messages {
		m := &s.Conversation.Messages[i]
		if m.TokenCount == 0 {
			m.TokenCount = Estimate(m.Content)
		}
		n += m.TokenCount
	}
	s.Conversation.MessageCount = max(s.Conversation.MessageCount, len(s.Conversation.Messages))
	s.Conversation.EstimatedTokens = cmp.Or(s.Conversation.EstimatedTokens, n)
	if s.Conversation.Messages == nil {
		s.Conversation.Messages = []Message{}
	}
	for _, p := range []*[]string{&s.Decisions, &s.Blockers, &s.Task.Completed, &s.Task.Remaining, &s.Task.Blockers} {
		if *p == nil {
			*p = []string{}
		}
	}
	if s.FilesChanged == nil {
		s.FilesChanged = []FileChange{}
	}
}

// Redact applies fn to every free-text field of the session.
func (s *Session) Redact(fn func(string) string) {
	if fn == nil {
		return
	}
	list := func(l []string) {
		for i := range l {
			l[i] = fn(l[i])
		}
	}
	s.Project.GitStatus = fn(s.Project.GitStatus)
	list(s.Project.GitLog)
	s.Project.Structure = fn(s.Project.Structure)
	s.Project.MemoryFileContents = fn(s.Project.MemoryFileContents)
	s.Conversation.Summary = fn(s.Conversation.Summary)
	for i := range s.Conversation.Messages {
		s.Conversation.Messages[i].Content = fn(s.Conversation.Messages[i].Content)
	}
	for i := range s.FilesChanged {
		s.FilesChanged[i].Diff = fn(s.FilesChanged[i].Diff)
	}
	list(s.Decisions)
	list(s.Blockers)
	list(s.Questions)
	s.Test = fn(s.Test)
	s.Task.Description = fn(s.Task.Description)
	s.Task.Latest = fn(s.Task.Latest)
	list(s.Task.SetAside)
	list(s.References)
	list(s.Task.Completed)
	list(s.Task.Remaining)
	s.Task.InProgress = fn(s.Task.InProgress)
	list(s.Task.Blockers)
}

// Marshal renders the session as indented JSON (session.json).
func (s Session) Marshal() ([]byte, error) {
	s.Normalize()
	return indentJSON(s)
}

// indentJSON is v as JSON indented by two spaces, with <, > and & as they
// are (the files are read by people and agents, not embedded in HTML).
func indentJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// FieldError is one invalid field of a session or handoff file.
type FieldError struct {
	Field   string
	Problem string
}

// ValidationError lists every invalid field, in field order.
type ValidationError struct {
	What   string // "session.json", "handoff"
	Fields []FieldError
}

func (e *ValidationError) Error() string {
	var parts []string
	for _, f := range e.Fields {
		parts = append(parts, f.Field+": "+f.Problem)
	}
	return e.What + " is invalid: " + strings.Join(parts, "; ")
}

// ErrUnknownFormat is returned by Load for a file that is neither a
// session.json nor a structured handoff.
var ErrUnknownFormat = errors.New("not a carryover session.json or structured handoff (YAML/JSON with goal and now)")

// Validate checks a session read from a file.
func (s Session) Validate() error {
	var fe []FieldError
	if s.Version == "" {
		fe = append(fe, FieldError{"version", "required"})
	} else if !strings.HasPrefix(s.Version, "1.") {
		fe = append(fe, FieldError{"version", fmt.Sprintf("%q is not supported (this carryover reads 1.x)", s.Version)})
	}
	if s.Source == "" {
		fe = append(fe, FieldError{"source", "required"})
	}
	if strings.TrimSpace(s.Task.Description) == "" && len(s.Conversation.Messages) == 0 {
		fe = append(fe, FieldError{"task.description", "required when conversation.messages is empty"})
	}
	for i, m := range s.Conversation.Messages {
		switch m.Role {
		case "user", "assistant", "system", "tool":
		default:
			fe = append(fe, FieldError{fmt.Sprintf("conversation.messages[%d].role", i), fmt.Sprintf("%q is not one of user|assistant|system|tool", m.Role)})
		}
	}
	for i, f := range s.FilesChanged {
		switch f.ChangeType {
		case "created", "modified", "deleted":
		default:
			fe = append(fe, FieldError{fmt.Sprintf("filesChanged[%d].changeType", i), fmt.Sprintf("%q is not one of created|modified|deleted", f.ChangeType)})
		}
		if f.Path == "" {
			fe = append(fe, FieldError{fmt.Sprintf("filesChanged[%d].path", i), "required"})
		}
	}
	if len(fe) > 0 {
		return &ValidationError{What: "session.json", Fields: fe}
	}
	return nil
}

// cleanText removes terminal escapes, control characters but newline and
// tab, and invisible characters (publish.StripTerminal) from every string
// v points to — every field of a Session or a Handoff, present and
// future, whatever file or transcript it came from — so that RESUME.md,
// RESUME.yaml/.json and session.json carry no zero-width character before
// a '#' and no bidirectional override. Multi-line fields stay multi-line.
func cleanText(v any) { cleanValue(reflect.ValueOf(v)) }

func cleanValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			cleanValue(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				cleanValue(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			cleanValue(v.Index(i))
		}
	case reflect.Map:
		cleanMap(v)
	case reflect.String:
		if v.CanSet() {
			if c := publish.StripTerminal(v.String()); c != v.String() {
				v.SetString(c)
			}
		}
	}
}

// cleanMap cleans the keys and values of a string → string map (the only
// maps carryover's types hold).
func cleanMap(v reflect.Value) {
	if v.Type().Key().Kind() != reflect.String || v.Type().Elem().Kind() != reflect.String {
		return
	}
	for _, k := range v.MapKeys() {
		ck, cv := publish.StripTerminal(k.String()), publish.StripTerminal(v.MapIndex(k).String())
		if ck != k.String() {
			v.SetMapIndex(k, reflect.Value{})
		}
		v.SetMapIndex(reflect.ValueOf(ck).Convert(v.Type().Key()), reflect.ValueOf(cv).Convert(v.Type().Elem()))
	}
}

// MaxFile is the largest session or handoff file Load reads.
const MaxFile = 64 << 20

// Loaded is what a file held: a session (session.json) or a structured
// handoff (YAML or JSON with goal and now).
type Loaded struct {
	Session *Session
	Handoff *Handoff
}

// AsSession returns the session, converting a handoff.
func (l Loaded) AsSession() Session {
	if l.Session != nil {
		return *l.Session
	}
	return l.Handoff.ToSession()
}

// LoadFile reads and validates a session.json or a structured handoff.
// Errors never quote the file's content.
func LoadFile(path string) (Loaded, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Loaded{}, err
	}
	if !fi.Mode().IsRegular() {
		return Loaded{}, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > MaxFile {
		return Loaded{}, fmt.Errorf("%s is %d bytes; the limit is %d", path, fi.Size(), MaxFile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Loaded{}, err
	}
	return Parse(b)
}

// Parse decodes b as a session.json (JSON with "conversation" or "task")
// or a structured handoff (YAML or JSON with "goal"), and validates it.
func Parse(b []byte) (Loaded, error) {
	var probe map[string]any
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		if err := json.Unmarshal(b, &probe); err != nil {
			return Loaded{}, fmt.Errorf("the file is not valid JSON: %s", jsonErr(err))
		}
	} else if err := yaml.Unmarshal(b, &probe); err != nil || probe == nil {
		return Loaded{}, ErrUnknownFormat
	}
	switch {
	case hasKey(probe, "conversation", "task"):
		var s Session
		if err := json.Unmarshal(b, &s); err != nil {
			return Loaded{}, fmt.Errorf("session.json: %s", jsonErr(err))
		}
		return Loaded{Session: &s}, s.Validate()
	case hasKey(probe, "goal", "now") || probe["status"] != nil:
		var h Handoff
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if err := dec.Decode(&h); err != nil {
			return Loaded{}, fmt.Errorf("handoff: %s", yamlErr(err))
		}
		return Loaded{Handoff: &h}, h.Validate()
	}
	return Loaded{}, ErrUnknownFormat
}

// hasKey reports whether m holds any of keys, even with a null value.
func hasKey(m map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// quotedRE is compiled at first use, not at process start.
var quotedRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("`[^`]*`") })

// jsonErr describes a decode error by position and type, not content.
func jsonErr(err error) string {
	switch e := err.(type) {
	case *json.SyntaxError:
		return fmt.Sprintf("syntax error at byte %d", e.Offset)
	case *json.UnmarshalTypeError:
		return fmt.Sprintf("field %s: expected %s", e.Field, e.Type)
	}
	return "cannot decode"
}

func yamlErr(err error) string {
	if te, ok := err.(*yaml.TypeError); ok {
		// yaml.v3 quotes the offending value between backticks: hide it.
		return fmt.Sprintf("%d field error(s), first: %s", len(te.Errors), quotedRE().ReplaceAllString(te.Errors[0], "`…`"))
	}
	return "cannot decode"
}
