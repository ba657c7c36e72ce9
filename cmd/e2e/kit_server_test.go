package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Request kinds a fake model server files each recorded request under.
const (
	KindMain    = "main"    // a scripted conversation turn was played
	KindSide    = "side"    // title / tool-less helper request, answered without consuming a turn
	KindCompact = "compact" // the agent's compaction (summary) request
	KindCount   = "count"   // token counting
	KindOther   = "other"   // anything else (answered 404)
)

// RecordedRequest is one HTTP request a fake model server received.
type RecordedRequest struct {
	Method string
	Path   string
	Kind   string
	Body   []byte
}

// Recorder keeps every request a fake server received, in arrival order. It is
// safe for concurrent use and meant to be embedded in fake servers.
type Recorder struct {
	mu   sync.Mutex
	reqs []RecordedRequest
}

// Record appends one request.
func (r *Recorder) Record(method, path, kind string, body []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, RecordedRequest{Method: method, Path: path, Kind: kind, Body: append([]byte(nil), body...)})
}

// All returns a copy of every recorded request.
func (r *Recorder) All() []RecordedRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]RecordedRequest(nil), r.reqs...)
}

// Requests returns the body of every recorded request.
func (r *Recorder) Requests() [][]byte {
	return r.bodies("")
}

// MainRequests returns the bodies of the requests that played a scripted turn.
func (r *Recorder) MainRequests() [][]byte {
	return r.bodies(KindMain)
}

// RequestsOfKind returns the bodies of the requests filed under kind.
func (r *Recorder) RequestsOfKind(kind string) [][]byte {
	return r.bodies(kind)
}

func (r *Recorder) bodies(kind string) [][]byte {
	var out [][]byte
	for _, q := range r.All() {
		if kind == "" || q.Kind == kind {
			out = append(out, q.Body)
		}
	}
	return out
}

// Contains reports whether any recorded request body contains substr.
func (r *Recorder) Contains(substr string) bool {
	return r.FirstRequestContaining(substr) != nil
}

// FirstRequestContaining returns the first request body containing substr, or nil.
func (r *Recorder) FirstRequestContaining(substr string) []byte {
	for _, q := range r.All() {
		if bytes.Contains(q.Body, []byte(substr)) {
			return q.Body
		}
	}
	return nil
}

// Kinds returns the kind of every recorded request, in order (handy in failure messages).
func (r *Recorder) Kinds() []string {
	var out []string
	for _, q := range r.All() {
		out = append(out, q.Method+" "+q.Path+" "+q.Kind)
	}
	return out
}

// WriteJSONL writes one JSON object per request ({method,path,kind,body}) to
// path; bodies that are JSON are embedded as JSON, others as strings.
func (r *Recorder) WriteJSONL(path string) error {
	var buf bytes.Buffer
	for _, q := range r.All() {
		var body any = string(q.Body)
		if json.Valid(q.Body) && len(q.Body) > 0 {
			body = json.RawMessage(q.Body)
		}
		line, err := json.Marshal(map[string]any{"method": q.Method, "path": q.Path, "kind": q.Kind, "body": body})
		if err != nil {
			return err
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

var fakeIDs atomic.Int64

// nextFakeID numbers responses, messages and tool calls across all fake
// servers of the process, so ids stay unique when a session is resumed
// against a new server.
func nextFakeID() int { return int(fakeIDs.Add(1)) }

// readBody reads a request body (at most 64 MB).
func readBody(req *http.Request) []byte {
	b, _ := io.ReadAll(io.LimitReader(req.Body, 64<<20))
	return b
}

// SSE writes server-sent events and flushes after each one.
type SSE struct {
	w http.ResponseWriter
	f http.Flusher
}

// NewSSE sets the event-stream headers and returns a writer.
func NewSSE(w http.ResponseWriter) *SSE {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &SSE{w: w, f: f}
}

// Event writes `event: name` (omitted when empty) and `data: <json of data>`.
func (s *SSE) Event(name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		b = []byte(`{}`)
	}
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if s.f != nil {
		s.f.Flush()
	}
}

// WriteJSON writes v as a JSON response with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Result is what running an agent CLI produced.
type Result struct {
	Stdout   string
	Stderr   string
	ExitCode int // -1 when the process could not start or was killed by the timeout
	Duration time.Duration
	TimedOut bool
}

// String summarises a result for failure messages (output cut to 4 KB each).
func (r Result) String() string {
	return fmt.Sprintf("exit=%d timedOut=%v after %s\n--- stdout ---\n%s\n--- stderr ---\n%s",
		r.ExitCode, r.TimedOut, r.Duration.Round(time.Millisecond), tail(r.Stdout, 4096), tail(r.Stderr, 4096))
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// RunProcess runs bin with args in dir with exactly env (no inheritance),
// killing it (and its process group) after timeout (default and maximum AgentMaxTimeout).
func RunProcess(t testing.TB, dir string, env []string, timeout time.Duration, bin string, args ...string) Result {
	t.Helper()
	if timeout <= 0 || timeout > AgentMaxTimeout {
		timeout = AgentMaxTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = nil // /dev/null: headless runs must never wait for input
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	setProcessGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	if cmd.Process != nil {
		// Hooks may leave children behind; they share the agent's process group.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	res := Result{Stdout: stdout.String(), Stderr: stderr.String(), Duration: time.Since(start)}
	failIfDiskFull(t, filepath.Base(bin), res.Stdout+res.Stderr)
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		res.TimedOut, res.ExitCode = true, -1
	case err == nil:
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	default:
		res.ExitCode = -1
		res.Stderr += "\ne2e kit: " + err.Error()
	}
	return res
}

// BaseEnv is a minimal, deterministic environment for an agent process:
// HOME=home, a PATH holding node and the system dirs, UTC, C.UTF-8, no colour.
// Nothing from the caller's environment leaks in except the location of node.
func BaseEnv(home string) []string {
	path := []string{}
	if node, err := exec.LookPath("node"); err == nil {
		path = append(path, filepath.Dir(node))
	}
	path = append(path, "/usr/local/bin", "/usr/bin", "/bin")
	return []string{
		"HOME=" + home,
		"USER=tester",
		"LOGNAME=tester",
		"PATH=" + strings.Join(uniq(path), string(os.PathListSeparator)),
		"SHELL=/bin/bash",
		"TERM=dumb",
		"NO_COLOR=1",
		"LANG=C.UTF-8",
		"LC_ALL=C.UTF-8",
		"TZ=UTC",
		"TMPDIR=" + os.TempDir(),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.invalid",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.invalid",
		"npm_config_update_notifier=false",
	}
}

// MergeEnv returns base with the KEY=VALUE entries of extra appended,
// replacing earlier entries for the same key.
func MergeEnv(base []string, extra ...string) []string {
	out := append([]string(nil), base...)
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		for i, e := range out {
			if strings.HasPrefix(e, k+"=") {
				out = append(out[:i], out[i+1:]...)
				break
			}
		}
		out = append(out, kv)
	}
	return out
}

func uniq(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// InitGitRepo makes dir a git repository with one commit holding a README,
// using a throwaway identity (no global git config is read).
func InitGitRepo(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# demo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := BaseEnv(t.TempDir())
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "README.md"},
		{"-c", "commit.gpgsign=false", "commit", "-q", "-m", "init"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("e2e kit: git %s in %s failed: %v\n%s (is git installed?)", strings.Join(args, " "), dir, err, out)
		}
	}
}

// LogHookCommand returns a shell command for a hook that appends its stdin
// payload, followed by a newline, to logPath. When stdout is not empty the
// command then prints it (e.g. a SessionStart additionalContext JSON).
func LogHookCommand(logPath, stdout string) string {
	cmd := "{ cat; echo; } >> " + ShellQuote(logPath)
	if stdout != "" {
		cmd += "; printf '%s' " + ShellQuote(stdout)
	}
	return cmd
}

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ReadJSONValues decodes a file holding a stream of JSON values (JSONL, or
// pretty-printed objects back to back). A missing file yields nil, nil.
func ReadJSONValues(path string) ([]map[string]any, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var out []map[string]any
	for {
		var v map[string]any
		if err := dec.Decode(&v); err == io.EOF {
			return out, nil
		} else if err != nil {
			return out, fmt.Errorf("%s: value %d: %w", path, len(out)+1, err)
		}
		out = append(out, v)
	}
}

// HookEvents returns the hook_event_name of every payload, in order.
func HookEvents(payloads []map[string]any) []string {
	var out []string
	for _, p := range payloads {
		s, _ := p["hook_event_name"].(string)
		out = append(out, s)
	}
	return out
}

// WriteCompactJSONL writes values one per line, compactly (for recordings).
func WriteCompactJSONL(path string, values []map[string]any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, v := range values {
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// setProcessGroup puts the command in its own process group so a timeout
// kills the agent together with its hooks and tools.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
