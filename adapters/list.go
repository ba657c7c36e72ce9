package adapters

import (
	"bytes"
	"cmp"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/carryover/carryover/publish/redact"
	"github.com/carryover/carryover/publish/safefile"
	"github.com/hashicorp/go-version"
)

// NativeSession is one session as the agent's store describes it (no full parse).
type NativeSession struct {
	Tool       string    `json:"agent"`
	ID         string    `json:"id"`
	Path       string    `json:"path"`
	Project    string    `json:"project"` // the session's cwd / project root when known
	LastActive time.Time `json:"last_active"`
	// MessageCount counts user and assistant messages, extrapolated from
	// head and tail for a transcript too big to scan (CountEstimated: "~N").
	MessageCount   int    `json:"messages"`
	CountEstimated bool   `json:"messages_estimated,omitempty"`
	Preview        string `json:"preview"` // first real prompt or the agent's title, one line
}

// Lister lists an agent's sessions from its native store (every project's
// for project "") from heads and tails or the agent's index, never whole files.
type Lister interface {
	ListSessions(env Env, project string) ([]NativeSession, error)
	Describe(path string) (NativeSession, error) // one transcript file's session (handoff --transcript)
	Stores(env Env) []string                     // the directories it reads (detect and info)
}

// errNoSession (ErrNotSession): Describe's file is not a session of its agent.
var errNoSession, ErrNotSession error = errorString("not a session transcript of this agent"), errNoSession

type errorString string

func (e errorString) Error() string { return string(e) }

// Listing reads headBytes and tailBytes of a transcript and counts the
// messages of one up to scanLimit exactly (a byte scan); bigger: estimated.
const headBytes, tailBytes, scanLimit = 256 << 10, 64 << 10, 16 << 20

// fileSample is what listing reads of one transcript.
type fileSample struct {
	size    int64
	modTime time.Time
	head    []byte // complete lines from the start
	tail    []byte // complete lines at the end (nil when the head covers the file)
}

func sampleFile(path string) (fileSample, error) {
	var fs fileSample
	f, fi, err := openTranscript(path) // a FIFO in a store must not hang `list`
	if err != nil {
		return fs, err
	}
	defer f.Close()
	fs.size, fs.modTime = fi.Size(), fi.ModTime()
	head := make([]byte, min(fs.size, headBytes))
	n, _ := io.ReadFull(f, head)
	fs.head = head[:n]
	if i := bytes.LastIndexByte(fs.head, '\n'); i >= 0 && int64(n) < fs.size { // the head ends at a line's end
		fs.head = fs.head[:i+1]
	}
	if fs.size > int64(len(fs.head)) {
		off := max(fs.size-tailBytes, int64(len(fs.head)))
		tail := make([]byte, fs.size-off)
		n, _ := f.ReadAt(tail, off)
		fs.tail = tail[:n]
		if off > int64(len(fs.head)) { // drop the partial first line
			_, fs.tail, _ = bytes.Cut(fs.tail, []byte{'\n'})
		}
	}
	return fs, nil
}

// lines returns the non-empty lines of b, trimmed.
func lines(b []byte) [][]byte {
	var out [][]byte
	for l := range bytes.Lines(b) {
		if l = bytes.TrimSpace(l); len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// countMessages counts lines holding any of markers: of the sample, or of
// the whole file up to scanLimit; past it, extrapolated from the sample.
func countMessages(path string, fs fileSample, markers ...[]byte) (int, bool) {
	count := func(b []byte) (n int) {
		for l := range bytes.Lines(b) {
			if slices.ContainsFunc(markers, func(m []byte) bool { return bytes.Contains(l, m) }) {
				n++
			}
		}
		return n
	}
	if fs.tail == nil {
		return count(fs.head), false
	}
	if b, err := safefile.ReadFile(path, scanLimit); err == nil {
		return count(b), false
	}
	sampled := int64(len(fs.head) + len(fs.tail))
	if sampled == 0 {
		return 0, true
	}
	return int(float64(count(fs.head)+count(fs.tail)) * float64(fs.size) / float64(sampled)), true
}

// preview is a prompt in one line, redacted before clipping (a clipped
// secret is unrecognisable) and folding (base64 lines tell a key from prose).
func preview(s string) string {
	return clip(strings.Join(strings.Fields(redact.String(s)), " "), 120)
}

func jsonLine(l []byte, v any) bool { return json.Unmarshal(l, v) == nil }

// lastActive is the newest "timestamp" of the last 50 sampled lines, else the mtime.
func (fs fileSample) lastActive() time.Time {
	ls := append(lines(fs.head), lines(fs.tail)...)
	var t time.Time
	for _, l := range ls[max(0, len(ls)-50):] {
		var m map[string]json.RawMessage
		var ts string
		if jsonLine(l, &m) && json.Unmarshal(m["timestamp"], &ts) == nil {
			t = newerTime(t, ts)
		}
	}
	if t.IsZero() {
		return fs.modTime
	}
	return t
}

// newerTime is the later of t and the RFC 3339 time v (t when v is none).
func newerTime(t time.Time, v string) time.Time {
	if u, err := time.Parse(time.RFC3339Nano, v); err == nil && u.After(t) {
		return u
	}
	return t
}

// describeAll describes files (cached) and keeps those in project.
func describeAll(env Env, tool string, files []string, project string, describe func(string) (NativeSession, error)) []NativeSession {
	var out []NativeSession
	for _, f := range files {
		if s, err := DescribeCached(env, tool, f, describe); err == nil && InProject(s.Project, project) {
			out = append(out, s)
		}
	}
	return out
}

func firstPrompt(rows []Row) (string, bool) {
	i := slices.IndexFunc(rows, func(r Row) bool { return r.Kind == KindPrompt })
	if i < 0 {
		return "", false
	}
	return rows[i].Text, true
}

// noteRows counts prompts and replies, the first prompt the preview, the newest time last activity.
func (s *NativeSession) noteRows(rows []Row) {
	for _, r := range rows {
		if r.Kind == KindPrompt || r.Kind == KindText {
			s.MessageCount++
		}
		if r.Kind == KindPrompt && s.Preview == "" {
			s.Preview = preview(r.Text)
		}
		if r.Time.After(s.LastActive) {
			s.LastActive = r.Time
		}
	}
}

// sqliteRO opens agent databases read-only and query-only: carryover never
// writes, checkpoints or locks them (a WAL reader does not block the
// writer); 500 ms is the longest wait for a checkpoint's lock.
const sqliteRO = "?mode=ro&_busy_timeout=500&_query_only=1"

// openSQLite opens path with the DSN options query as a file: URL ('?' or '#' stay in the path).
func openSQLite(path, query string) (*sql.DB, error) {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return sql.Open("sqlite3", (&url.URL{Scheme: "file", Path: p}).String()+query)
}

// isSQLiteFile reports whether path is a regular file with SQLite's header.
func isSQLiteFile(path string) bool {
	f, err := openRegular(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	return string(head[:n]) == "SQLite format 3\x00"
}

// envOr is the environment variable name, or def when it is unset or empty.
func envOr(env Env, name, def string) string {
	if env.Getenv == nil {
		return def
	}
	return cmp.Or(env.Getenv(name), def)
}

// FileStamp says a transcript changed since it was described: size, mtime
// and inode (a file replaced by rename may keep size and mtime, not inode).
type FileStamp struct {
	Size, ModNano int64
	Dev, Ino      uint64
}

// StatStamp is fi's FileStamp.
func StatStamp(fi os.FileInfo) FileStamp {
	dev, ino := safefile.StatID(fi)
	return FileStamp{Size: fi.Size(), ModNano: fi.ModTime().UnixNano(), Dev: dev, Ino: ino}
}

// DescribeCached is describe(path), from env.Descriptions when the file is
// the one described last time: `list` of 200 sessions spent 266 ms decoding
// heads and tails every call, now a stat each. Of failures only "not a
// session" is remembered.
func DescribeCached(env Env, tool, path string, describe func(string) (NativeSession, error)) (NativeSession, error) {
	c := env.Descriptions
	fi, err := os.Stat(path)
	if c == nil || err != nil || !fi.Mode().IsRegular() {
		return describe(path)
	}
	id := StatStamp(fi)
	if s, ok, found := c.Lookup(tool, path, id); found {
		return s, map[bool]error{false: errNoSession}[ok]
	}
	s, err := describe(path)
	if err == nil || errors.Is(err, errNoSession) {
		c.Store(tool, path, id, s, err == nil)
	}
	return s, err
}

const (
	ListCacheName    = "list-cache.json" // the DescriptionFile in carryover's home
	listCacheVersion = 1                 // a file of another version is ignored; bump it when a Describe changes
	listCacheMax     = 16 << 20          // 200 sessions take about 60 KB; a larger file is ignored
)

// DescriptionFile caches listers' descriptions for `list` and the commands
// that pick a session: one JSON file in carryover's home, read once, written
// back when something was described anew, without files gone since. Unlike
// a ledger table it works before any hook ran (215 ms a `list` of 200
// without); the hook path never touches it.
type DescriptionFile struct {
	path    string
	mu      sync.Mutex
	known   map[string]describedFile
	changed bool
}

type describedFile struct {
	Tool    string        `json:"tool"`
	Path    string        `json:"path"`
	Stamp   FileStamp     `json:"stamp"`
	OK      bool          `json:"ok"` // false: not a session of the agent
	Session NativeSession `json:"session"`
}

type listCache struct {
	Version int             `json:"version"`
	Entries []describedFile `json:"entries"`
}

// OpenDescriptionFile reads the cache in home (missing, damaged, oversized, foreign: empty).
func OpenDescriptionFile(home string) *DescriptionFile {
	d := &DescriptionFile{path: filepath.Join(home, ListCacheName), known: map[string]describedFile{}}
	var c listCache
	b, err := safefile.ReadFile(d.path, listCacheMax)
	if err != nil || json.Unmarshal(b, &c) != nil || c.Version != listCacheVersion {
		return d
	}
	for _, e := range c.Entries {
		d.known[e.Tool+"\x00"+e.Path] = e
	}
	return d
}

// Lookup returns the description of path stored with stamp id (found: a hit).
func (d *DescriptionFile) Lookup(tool, path string, id FileStamp) (s NativeSession, ok, found bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, found := d.known[tool+"\x00"+path]
	if !found || e.Stamp != id {
		return NativeSession{}, false, false
	}
	return e.Session, e.OK, true
}

// Store keeps a description (ok false: not a session); Flush writes it.
func (d *DescriptionFile) Store(tool, path string, id FileStamp, s NativeSession, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.known[tool+"\x00"+path] = describedFile{Tool: tool, Path: path, Stamp: id, OK: ok, Session: s}
	d.changed = true
}

// Flush writes the cache, atomically, when something was stored since it was read.
func (d *DescriptionFile) Flush() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.changed {
		return nil
	}
	c := listCache{Version: listCacheVersion}
	for _, e := range d.known {
		if _, err := os.Lstat(e.Path); !errors.Is(err, fs.ErrNotExist) {
			c.Entries = append(c.Entries, e)
		}
	}
	slices.SortFunc(c.Entries, func(a, b describedFile) int { return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Tool, b.Tool)) })
	b, _ := json.Marshal(c) // strings, numbers, times: it cannot fail
	err := os.MkdirAll(filepath.Dir(d.path), 0o700)
	if err == nil {
		err = safefile.WriteFile(d.path, b, safefile.Options{Mode: 0o600})
	}
	d.changed = err != nil
	return err
}

// Forget drops the descriptions of session id (any agent) and of path and
// writes the file (`forget`: a preview is a prompt).
func (d *DescriptionFile) Forget(id, path string) error {
	d.mu.Lock()
	for k, e := range d.known {
		if id != "" && e.Session.ID == id || path != "" && e.Path == path {
			delete(d.known, k)
			d.changed = true
		}
	}
	d.mu.Unlock()
	return d.Flush()
}

// Surveys: what `status` reads of an agent's recent sessions (formats it
// cannot read, versions newer than it knows).

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
	f, fi, err := openTranscript(path) // regular files only: a FIFO must not hang `status`
	if err != nil {
		sv.Unread++
		return
	}
	defer f.Close()
	sv.Sessions++
	from := int64(0) // the 64 KB a version is looked for in: the tail when the newest session is last
	if ag.SurveyFromEnd {
		from = max(0, fi.Size()-64<<10)
	}
	head, _ := io.ReadAll(io.NewSectionReader(f, from, 64<<10))
	if w := DriftWarning(tool, head); w != "" {
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
	// Version finds the agent version a session file records: a regexp whose
	// first group is the version, its first match in the file's first (or,
	// SurveyFromEnd, last) 64 KB ("": none recorded, so no drift warning).
	Version string
	// MajorOnly: only a new major version may change the shape (Aider's
	// has not from 0.4x to 0.86; minor releases come weekly).
	MajorOnly bool
}

// JSONVersion is Format.Version for a JSON "version":"x.y.z" field.
const JSONVersion = `"version"\s*:\s*"(\d+\.\d+\.\d+)`

// Tried ends a refusal with the shapes tried: tool's (every agent's for "").
func Tried(tool string) string {
	if a := named(tool); a.Name != "" {
		return "tried: " + strings.Join(a.Format.Shapes, "; ")
	}
	return "tried the formats of " + strings.Join(Names(), ", ")
}

// versionREs holds each Format.Version compiled, on first use (never on the hook path).
var versionREs sync.Map

// recordedVersion is the version a session file's 64 KB head records by pattern
// ("" none).
func recordedVersion(pattern string, head []byte) string {
	re, ok := versionREs.Load(pattern)
	if !ok {
		re, _ = versionREs.LoadOrStore(pattern, regexp.MustCompile(pattern))
	}
	if m := re.(*regexp.Regexp).FindSubmatch(head[:min(len(head), 64<<10)]); len(m) > 1 {
		return string(m[1])
	}
	return ""
}

// DriftWarning is the line `status` shows for a transcript written by a
// newer agent than tool's adapter knows ("" none; it reads what it can).
// The same major.minor is the same shape: patch releases rarely change one.
func DriftWarning(tool string, head []byte) string {
	f := named(tool).Format
	v := recordedVersion(f.Version, head)
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
