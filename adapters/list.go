package adapters

import (
	"github.com/carryover/carryover/publish/redact"

	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// NativeSession is one session as an agent's own store describes it,
// found without parsing the whole transcript.
type NativeSession struct {
	Tool       string    `json:"agent"`
	ID         string    `json:"id"`
	Path       string    `json:"path"`
	Project    string    `json:"project"` // the session's cwd / project root when known
	LastActive time.Time `json:"last_active"`
	// MessageCount counts user and assistant messages. When the transcript
	// is too big to scan it is extrapolated from its head and tail and
	// CountEstimated is set (display it as "~N").
	MessageCount   int    `json:"messages"`
	CountEstimated bool   `json:"messages_estimated,omitempty"`
	Preview        string `json:"preview"` // first real prompt or the agent's title, one line
}

// Lister is the optional capability of listing an agent's sessions from
// its native store. project "" lists every project's sessions; otherwise
// only sessions whose project is project or inside it. Implementations read
// heads and tails, or the agent's own index, never whole transcripts.
type Lister interface {
	ListSessions(env Env, project string) ([]NativeSession, error)
	// Describe reads one transcript file's session (handoff --transcript).
	Describe(path string) (NativeSession, error)
	// Stores are the directories the lister reads (for detect and info).
	Stores(env Env) []string
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

// Listing reads at most headBytes from the start and tailBytes from the
// end of a transcript.
const (
	headBytes = 256 << 10
	tailBytes = 64 << 10
	// scanLimit is the largest transcript whose messages are counted
	// exactly (a byte scan, no JSON decoding); bigger ones are estimated.
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
	head = head[:n]
	if int64(n) < fs.size {
		if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
			head = head[:i+1]
		}
	}
	fs.head = head
	if fs.size > int64(len(head)) {
		off := max(fs.size-tailBytes, int64(len(head)))
		tail := make([]byte, fs.size-off)
		n, _ := f.ReadAt(tail, off)
		tail = tail[:n]
		if off > int64(len(head)) {
			if i := bytes.IndexByte(tail, '\n'); i >= 0 {
				tail = tail[i+1:]
			} else {
				tail = nil
			}
		}
		fs.tail = tail
	}
	return fs, nil
}

// lines returns the complete, non-empty lines of b.
func lines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		var l []byte
		if i < 0 {
			l, b = b, nil
		} else {
			l, b = b[:i], b[i+1:]
		}
		if l = bytes.TrimSpace(l); len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// countMessages counts lines holding any of markers: exactly (a byte scan)
// up to scanLimit, else extrapolated from the head and tail samples.
func countMessages(path string, fs fileSample, markers ...[]byte) (int, bool) {
	count := func(b []byte) int {
		n := 0
		for _, l := range lines(b) {
			for _, m := range markers {
				if bytes.Contains(l, m) {
					n++
					break
				}
			}
		}
		return n
	}
	if fs.tail == nil {
		return count(fs.head), false
	}
	if fs.size <= scanLimit {
		f, err := os.Open(path)
		if err == nil {
			defer f.Close()
			n := 0
			r := bufio.NewReaderSize(f, 1<<20)
			for {
				l, err := r.ReadSlice('\n')
				for _, m := range markers {
					if bytes.Contains(l, m) {
						n++
						break
					}
				}
				if err == bufio.ErrBufferFull {
					// a long line: the rest of it is not a new message
					for err == bufio.ErrBufferFull {
						_, err = r.ReadSlice('\n')
					}
				}
				if err != nil {
					break
				}
			}
			return n, false
		}
	}
	sampled := int64(len(fs.head) + len(fs.tail))
	if sampled == 0 {
		return 0, true
	}
	n := count(fs.head) + count(fs.tail)
	return int(float64(n) * float64(fs.size) / float64(sampled)), true
}

// preview makes a one-line preview of a prompt.
func preview(s string) string {
	// Redact first, before clipping (a clipped secret is unrecognisable)
	// and before folding the lines into one (a key's base64 lines are told
	// from prose by their line breaks).
	s = strings.Join(strings.Fields(redact.String(s)), " ")
	return clip(s, 120)
}

// jsonLine decodes one line into v, ignoring errors.
func jsonLine(l []byte, v any) bool { return json.Unmarshal(l, v) == nil }

// newestTimestamp returns the newest RFC 3339 "timestamp" field among lines.
func newestTimestamp(ls [][]byte, key string) time.Time {
	var t time.Time
	for i := len(ls) - 1; i >= 0 && i >= len(ls)-50; i-- {
		var m map[string]json.RawMessage
		if !jsonLine(ls[i], &m) {
			continue
		}
		var s string
		if json.Unmarshal(m[key], &s) == nil {
			if ts, err := time.Parse(time.RFC3339Nano, s); err == nil && ts.After(t) {
				t = ts
			}
		}
	}
	return t
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

// errNoSession is returned by Describe for a file that is not a session of
// the lister's agent.
var errNoSession = errorString("not a session transcript of this agent")

type errorString string

func (e errorString) Error() string { return string(e) }
