package adapters

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/carryover/carryover/publish/redact"
)

// NativeSession is one session as an agent's own store describes it,
// found without parsing the whole transcript.
type NativeSession struct {
	Tool       string    `json:"agent"`
	ID         string    `json:"id"`
	Path       string    `json:"path"`
	Project    string    `json:"project"` // the session's cwd / project root when known
	LastActive time.Time `json:"last_active"`
	// MessageCount counts user and assistant messages; for a transcript too
	// big to scan it is extrapolated from head and tail and CountEstimated
	// is set (shown as "~N").
	MessageCount   int    `json:"messages"`
	CountEstimated bool   `json:"messages_estimated,omitempty"`
	Preview        string `json:"preview"` // first real prompt or the agent's title, one line
}

// Lister lists an agent's sessions from its native store: every project's
// for project "", else those of project or inside it. It reads heads and
// tails, or the agent's own index, never whole transcripts.
type Lister interface {
	ListSessions(env Env, project string) ([]NativeSession, error)
	Describe(path string) (NativeSession, error) // one transcript file's session (handoff --transcript)
	Stores(env Env) []string                     // the directories it reads (detect and info)
}

// InProject reports whether dir is project or inside it.
func InProject(dir, project string) bool {
	if project == "" {
		return true
	}
	if dir == "" {
		return false
	}
	dir, project = filepath.Clean(dir), filepath.Clean(project)
	return dir == project || strings.HasPrefix(dir, project+string(filepath.Separator))
}

// Listing reads headBytes from the start and tailBytes from the end of a
// transcript, and counts the messages of one up to scanLimit exactly (a
// byte scan, no JSON decoding); bigger ones are estimated.
const (
	headBytes = 256 << 10
	tailBytes = 64 << 10
	scanLimit = 16 << 20
)

// fileSample is what listing reads of one transcript.
type fileSample struct {
	size    int64
	modTime time.Time
	head    []byte // complete lines from the start
	tail    []byte // complete lines at the end (nil when the head covers the file)
}

func sampleFile(path string) (fileSample, error) {
	var fs fileSample
	f, err := os.Open(path)
	if err != nil {
		return fs, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fs, err
	}
	fs.size, fs.modTime = fi.Size(), fi.ModTime()
	head := make([]byte, min(fs.size, headBytes))
	n, _ := io.ReadFull(f, head)
	fs.head = head[:n]
	if int64(n) < fs.size {
		if i := bytes.LastIndexByte(fs.head, '\n'); i >= 0 {
			fs.head = fs.head[:i+1]
		}
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

// lines returns the complete, non-empty lines of b, trimmed.
func lines(b []byte) [][]byte {
	var out [][]byte
	for l := range bytes.Lines(b) {
		if l = bytes.TrimSpace(l); len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// countMessages counts lines holding any of markers: exactly (a byte scan)
// up to scanLimit, else extrapolated from the head and tail samples.
func countMessages(path string, fs fileSample, markers ...[]byte) (int, bool) {
	has := func(l []byte) bool {
		return slices.ContainsFunc(markers, func(m []byte) bool { return bytes.Contains(l, m) })
	}
	count := func(b []byte) (n int) {
		for l := range bytes.Lines(b) {
			if has(l) {
				n++
			}
		}
		return n
	}
	if fs.tail == nil {
		return count(fs.head), false
	}
	if n, err := scanCount(path, fs.size, has); err == nil {
		return n, false
	}
	sampled := int64(len(fs.head) + len(fs.tail))
	if sampled == 0 {
		return 0, true
	}
	return int(float64(count(fs.head)+count(fs.tail)) * float64(fs.size) / float64(sampled)), true
}

// scanCount counts the lines of path that has accepts, in the first 1 MiB
// of each line; a file over scanLimit is not scanned (an error).
func scanCount(path string, size int64, has func([]byte) bool) (int, error) {
	if size > scanLimit {
		return 0, errorString("too big to scan")
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		l, err := r.ReadSlice('\n')
		if has(l) {
			n++
		}
		for err == bufio.ErrBufferFull { // a long line: the rest of it is not a new message
			_, err = r.ReadSlice('\n')
		}
		if err != nil {
			return n, nil
		}
	}
}

// preview makes a one-line preview of a prompt. Redacted first, before
// clipping (a clipped secret is unrecognisable) and before folding the
// lines into one (a key's base64 lines are told from prose by their line
// breaks).
func preview(s string) string {
	return clip(strings.Join(strings.Fields(redact.String(s)), " "), 120)
}

// jsonLine decodes one line into v, ignoring errors.
func jsonLine(l []byte, v any) bool { return json.Unmarshal(l, v) == nil }

// lastActive is the newest "timestamp" among the last 50 sampled lines,
// else the file's modification time.
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

// describeAll describes files (cached) and keeps the sessions in project.
func describeAll(env Env, tool string, files []string, project string, describe func(string) (NativeSession, error)) []NativeSession {
	var out []NativeSession
	for _, f := range files {
		if s, err := DescribeCached(env, tool, f, describe); err == nil && InProject(s.Project, project) {
			out = append(out, s)
		}
	}
	return out
}

// firstPrompt is the text of the first prompt row.
func firstPrompt(rows []Row) (string, bool) {
	i := slices.IndexFunc(rows, func(r Row) bool { return r.Kind == KindPrompt })
	if i < 0 {
		return "", false
	}
	return rows[i].Text, true
}

// noteRows counts the prompts and replies of a listed session's rows, with
// the first prompt as preview and the newest time as last activity.
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

// sqliteRO opens every agent database read-only and query-only: carryover
// never writes, checkpoints or locks the agent's live database (a WAL
// reader does not block the writer); 500 ms is the longest wait for a lock
// a checkpoint holds.
const sqliteRO = "?mode=ro&_busy_timeout=500&_query_only=1"

// openSQLite opens the SQLite file at path with the DSN options query as a
// file: URL (so a path with '?' or '#' stays a path).
func openSQLite(path, query string) (*sql.DB, error) {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return sql.Open("sqlite3", (&url.URL{Scheme: "file", Path: p}).String()+query)
}

// isSQLiteFile reports whether path is a regular file that starts with
// SQLite's header (Cursor's state.vscdb, Crush's crush.db, OpenCode's).
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

// envOr returns the environment variable or the default.
func envOr(env Env, name, def string) string {
	if env.Getenv != nil {
		if v := env.Getenv(name); v != "" {
			return v
		}
	}
	return def
}

// errNoSession (ErrNotSession) is what Describe returns for a file that is
// not a session of the lister's agent.
var errNoSession = errorString("not a session transcript of this agent")

type errorString string

func (e errorString) Error() string { return string(e) }
