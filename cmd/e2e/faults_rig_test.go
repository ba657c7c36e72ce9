package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/publish"
)

// The fault matrix's faultRig: a temp HOME whose Claude store holds the session's
// transcript, a git project, and a private $CARRYOVER_HOME. Every state the
// transcript is put in is remembered, so that the ledger can be compared
// with a fresh ingest of the same states into an empty ledger.

// hostileBound is a hang detector for one hook on hostile input, not a
// speed check. The internal deadline is 2 s (0.9 s for SessionEnd); the
// bound only catches a hook that ignores it and blocks (on a FIFO, on a
// stdin that never closes), so it sits far above anything a loaded CI
// machine adds: with two CPU-bound processes beside the suite on 2 cores
// (load average 8-11) the slowest hostile hook took 0.6 s. Whether a hook honours its deadline is asserted by
// mechanism (the "deadline reached" log line), and latency by
// BenchmarkSnapshotIncremental.
const hostileBound = 60 * time.Second

// canaries are strings that appear only in transcripts; none may reach a log.
var canaries = []string{"CANARY-PROMPT", "CANARY-TEXT", "CANARY-RESULT", "Add a retry helper in retry.py"}

type faultRig struct {
	t          *testing.T
	root       string
	home       string // $HOME
	chome      string // $CARRYOVER_HOME
	project    string // a git repository
	transcript string // in $HOME/.claude/projects/…
	sid        string
	extraEnv   []string
	// versions are the transcript states, per session id, in order.
	versions map[string][]transcriptState
}

type transcriptState struct {
	path string
	data []byte
}

func newRig(t *testing.T) *faultRig {
	t.Helper()
	root := t.TempDir()
	r := &faultRig{t: t, root: root, home: filepath.Join(root, "home"), sid: "4fbd56c9-fault-" + fmt.Sprint(time.Now().UnixNano()%1e6),
		versions: map[string][]transcriptState{}}
	r.chome = filepath.Join(r.home, ".carryover")
	r.project = filepath.Join(root, "src", "proj")
	for _, d := range []string{r.home, r.project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gitRun(t, r.project, "init", "-q")
	os.WriteFile(filepath.Join(r.project, "README.md"), []byte("# proj\n"), 0o644)
	gitRun(t, r.project, "add", "-A")
	gitRun(t, r.project, "-c", "user.email=f@x", "-c", "user.name=f", "commit", "-qm", "init")
	r.transcript = r.transcriptFor(r.sid)
	return r
}

func gitRun(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// transcriptFor is where Claude Code keeps session sid of r.project.
func (r *faultRig) transcriptFor(sid string) string {
	slug := strings.NewReplacer("/", "-", ".", "-").Replace(r.project)
	return filepath.Join(r.home, ".claude", "projects", slug, sid+".jsonl")
}

func (r *faultRig) env(extra ...string) []string {
	env := []string{"HOME=" + r.home, "CARRYOVER_HOME=" + r.chome, "CLAUDE_PROJECT_DIR=" + r.project, "PATH=" + os.Getenv("PATH")}
	env = append(env, r.extraEnv...)
	return append(env, extra...)
}

func (r *faultRig) payload(sid, event string) []byte {
	b, _ := json.Marshal(map[string]any{"session_id": sid, "transcript_path": r.transcriptFor(sid), "cwd": r.project,
		"hook_event_name": event, "source": "startup"})
	return b
}

// setTranscript replaces session sid's transcript (in place: same inode
// when it exists) and records the state.
func (r *faultRig) setTranscript(sid string, data []byte) {
	r.t.Helper()
	p := r.transcriptFor(sid)
	os.MkdirAll(filepath.Dir(p), 0o700)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		r.t.Fatal(err)
	}
	r.record(sid)
}

// appendTranscript appends to session sid's transcript and records the state.
func (r *faultRig) appendTranscript(sid string, data []byte) {
	r.t.Helper()
	p := r.transcriptFor(sid)
	os.MkdirAll(filepath.Dir(p), 0o700)
	f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		r.t.Fatal(err)
	}
	f.Close()
	r.record(sid)
}

// record remembers the transcript's current bytes as a state.
func (r *faultRig) record(sid string) {
	p := r.transcriptFor(sid)
	b, err := os.ReadFile(p)
	if err != nil {
		b = nil
	}
	r.versions[sid] = append(r.versions[sid], transcriptState{path: p, data: b})
}

func claudeFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "adapters", "claude", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// canaryLines are Claude transcript lines (a prompt, assistant text and a
// tool result) whose text no log may ever contain.
func canaryLines(sid string, from, n int) []byte {
	var b bytes.Buffer
	for i := from; i < from+n; i++ {
		ts := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano)
		fmt.Fprintf(&b, `{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"CANARY-PROMPT-%d please fix the flux capacitor"},"uuid":"canary-u-%d","timestamp":%q,"promptSource":"sdk","sessionId":%q}`+"\n", i, i, ts, sid)
		fmt.Fprintf(&b, `{"parentUuid":"canary-u-%d","isSidechain":false,"type":"assistant","message":{"id":"msg_canary_%d","role":"assistant","model":"m","content":[{"type":"text","text":"CANARY-TEXT-%d looking at it"},{"type":"tool_use","id":"toolu_canary_%d","name":"Bash","input":{"command":"make flux","description":"build"}}],"usage":{"input_tokens":10,"output_tokens":5}},"uuid":"canary-a-%d","timestamp":%q,"sessionId":%q}`+"\n", i, i, i, i, i, ts, sid)
		fmt.Fprintf(&b, `{"parentUuid":"canary-a-%d","isSidechain":false,"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_canary_%d","content":"CANARY-RESULT-%d exit code 2","is_error":true}]},"uuid":"canary-r-%d","timestamp":%q,"sessionId":%q}`+"\n", i, i, i, i, ts, sid)
	}
	return b.Bytes()
}

// hookProc is one finished hook process.
type hookProc struct {
	Stdout, Stderr string
	Code           int
	Wall           time.Duration
	Killed         bool
}

// hook runs `carryover snapshot` with stdin and returns without failing the
// test (safe from any goroutine).
func spawnHook(env []string, tool, event string, stdin io.Reader) (hookProc, error) {
	cmd := exec.Command(carryoverBin, "snapshot", "--tool", tool, "--event", event)
	cmd.Env = env
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	p := hookProc{Stdout: out.String(), Stderr: errb.String(), Wall: time.Since(start)}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		p.Code = ee.ExitCode()
		err = nil
	}
	return p, err
}

// snap runs one hook for the faultRig's session and checks the hook contract:
// exit 0 and nothing on stdout but one valid injection.
func (r *faultRig) snap(event string, extra ...string) hookProc {
	r.t.Helper()
	return r.snapWith(r.sid, event, bytes.NewReader(r.payload(r.sid, event)), extra...)
}

func (r *faultRig) snapWith(sid, event string, stdin io.Reader, extra ...string) hookProc {
	r.t.Helper()
	p, err := spawnHook(r.env(extra...), "claude", event, stdin)
	if err != nil {
		r.t.Fatal(err)
	}
	r.checkContract(p)
	return p
}

func (r *faultRig) checkContract(p hookProc) {
	r.t.Helper()
	if p.Code != 0 {
		r.t.Errorf("exit %d (stderr %q)", p.Code, p.Stderr)
	}
	if err := validInjection(p.Stdout); err != nil {
		r.t.Errorf("stdout: %v: %q", err, clipStr(p.Stdout, 300))
	}
}

// validInjection accepts "" or exactly one JSON object carrying a handoff.
func validInjection(out string) error {
	if out == "" {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var v struct {
		HSO struct {
			Event   string `json:"hookEventName"`
			Context string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := dec.Decode(&v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more than one JSON value")
	}
	if !strings.HasPrefix(v.HSO.Context, publish.HeaderPrefix) {
		return errors.New("injection does not carry a carryover handoff")
	}
	return nil
}

func clipStr(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func (r *faultRig) log() string {
	b, _ := os.ReadFile(filepath.Join(r.chome, "carryover.log"))
	return string(b)
}

// wantLog fails unless the log (or, when the log cannot be written, the
// hook's stderr) matches re.
func (r *faultRig) wantLog(p hookProc, re string) {
	r.t.Helper()
	rx := regexp.MustCompile(re)
	if !rx.MatchString(r.log()) && !rx.MatchString(p.Stderr) {
		r.t.Errorf("log lacks /%s/:\n%s\nstderr: %s", re, clipStr(r.log(), 3000), p.Stderr)
	}
}

func (r *faultRig) bound(p hookProc) {
	r.t.Helper()
	if p.Wall > hostileBound {
		r.t.Errorf("hook took %s (bound %s)", p.Wall, hostileBound)
	}
}

// expectedKeys ingests the recorded states of sid into an empty ledger.
func (r *faultRig) expectedKeys(sid string) map[string]bool {
	r.t.Helper()
	dir := r.t.TempDir()
	// Gone when read: kill-9 checks six times, each a copy of its 16 MB
	// transcript and the ledger of it (165 MB of TMPDIR at the test's end).
	defer os.RemoveAll(dir)
	l, err := ledger.Open(dir)
	if err != nil {
		r.t.Fatal(err)
	}
	defer l.Close()
	a, _ := adapters.Lookup("claude")
	p := filepath.Join(dir, "t.jsonl")
	for _, st := range r.versions[sid] {
		if st.data == nil {
			os.Remove(p)
		} else if err := writeSparse(p, st.data); err != nil {
			r.t.Fatal(err)
		}
		_, err := ledger.Ingest(l, ledger.IngestOptions{Adapter: a, Hook: adapters.Hook{Tool: "claude", SessionID: sid, TranscriptPath: p},
			Project: "/p", Now: time.Now(), Transcripts: []adapters.Transcript{{Path: p, SessionID: sid, MaybeMissing: true}}})
		if err != nil {
			r.t.Fatal(err)
		}
	}
	return sessionKeys(r.t, l, sid)
}

// writeSparse is os.WriteFile leaving a hole for each whole MB of NULs, as
// the transcript it copies has them (path-100MB-single-line's line is a
// 98 MB hole between two MB of text: 2 MB of disk, not 100).
func writeSparse(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	for off := 0; off < len(b); off += 1 << 20 {
		chunk := b[off:min(off+1<<20, len(b))]
		if len(chunk) == 1<<20 && len(bytes.TrimLeft(chunk, "\x00")) == 0 {
			continue
		}
		if _, err := f.WriteAt(chunk, int64(off)); err != nil {
			return err
		}
	}
	if err := f.Truncate(int64(len(b))); err != nil {
		return err
	}
	return f.Close()
}

func sessionKeys(t testing.TB, l *ledger.Ledger, sid string) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	s, err := l.Session("claude", sid)
	if err != nil {
		return keys // no such session: no rows
	}
	rows, err := l.Rows(s.ID, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		keys[row.Key] = true
	}
	if len(rows) != s.Rows {
		t.Errorf("session %s: %d rows stored, sequence says %d", sid, len(rows), s.Rows)
	}
	return keys
}

// ledgerKeys reads the faultRig's ledger for sid.
func (r *faultRig) ledgerKeys(sid string) map[string]bool {
	r.t.Helper()
	l, err := ledger.Open(r.chome)
	if err != nil {
		r.t.Fatal(err)
	}
	defer l.Close()
	return sessionKeys(r.t, l, sid)
}

// checkRows runs a normal snapshot for each session and compares the
// ledger with a fresh ingest of the same transcript states: no row lost,
// none extra. The counts go to the matrix's tally.
func (r *faultRig) checkRows(sids ...string) {
	r.t.Helper()
	if len(sids) == 0 {
		sids = []string{r.sid}
	}
	for _, sid := range sids {
		r.snapWith(sid, "Stop", bytes.NewReader(r.payload(sid, "Stop")), "CARRYOVER_DEADLINE_MS=60000")
	}
	for _, sid := range sids {
		want, got := r.expectedKeys(sid), r.ledgerKeys(sid)
		lost, extra := keyDiff(want, got), keyDiff(got, want)
		faultTally.rows(len(want), len(lost), len(extra))
		if len(lost) > 0 || len(extra) > 0 {
			r.t.Errorf("session %s: %d rows expected, %d lost %v, %d extra %v", sid, len(want), len(lost), firstKeys(lost, 5), len(extra), firstKeys(extra, 5))
		}
	}
}

func keyDiff(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func firstKeys(s []string, n int) []string { return s[:min(n, len(s))] }

// finish checks what every case must leave behind: no transcript content
// in the log, private file modes, nothing torn.
func (r *faultRig) finish() {
	r.t.Helper()
	for _, f := range []string{"carryover.log", "carryover.log.1"} {
		b, _ := os.ReadFile(filepath.Join(r.chome, f))
		for _, c := range canaries {
			if bytes.Contains(b, []byte(c)) {
				r.t.Errorf("%s echoes transcript content %q", f, c)
				faultTally.echo()
			}
		}
	}
	faultTally.logChecked()
	if h, err := os.ReadFile(publish.HandoffPath(r.project)); err == nil {
		if err := checkHandoff(h); err != nil {
			r.t.Errorf("handoff.md: %v", err)
		}
	}
}

var headerRE = regexp.MustCompile(`^# \[CARRYOVER\] Last updated \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ from [a-z-]+( · HO-\d{8}-\d{6}-[0-9A-Za-z_-]+)?\n`)

// checkHandoff parses a handoff.md: its header, its caps, a final newline.
func checkHandoff(b []byte) error {
	if !headerRE.Match(b) {
		return fmt.Errorf("bad header %q", clipStr(string(b), 80))
	}
	if !bytes.HasSuffix(b, []byte("\n")) {
		return errors.New("does not end with a newline (torn?)")
	}
	if n := bytes.Count(b, []byte("\n")); n > publish.MaxLines {
		return fmt.Errorf("%d lines", n)
	}
	return nil
}

// tally is the matrix's running figures (see TestReliabilityReport).
type tally struct {
	mu                                  sync.Mutex
	cases, survived                     int
	expected, lost, extra, logs, echoes int
	failed                              []string
}

var faultTally tally

func (t *tally) rows(expected, lost, extra int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.expected += expected
	t.lost += lost
	t.extra += extra
}

func (t *tally) echo() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.echoes++
}

func (t *tally) logChecked() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.logs++
}

func (t *tally) result(name string, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cases++
	if ok {
		t.survived++
	} else {
		t.failed = append(t.failed, name)
	}
}

// mount helpers: faults that need a real file system state (full, read-only).
// They need root; in CI (CI=true, where the runner is root) a failed mount
// fails the test rather than skipping it.

func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	os.MkdirAll(dir, 0o700)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		skipOrFail(t, "cannot mount a tmpfs (needs root): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
}

func bindReadOnly(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command("mount", "--bind", dir, dir).CombinedOutput(); err != nil {
		skipOrFail(t, "cannot bind-mount (needs root): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	if out, err := exec.Command("mount", "-o", "remount,ro,bind", dir).CombinedOutput(); err != nil {
		skipOrFail(t, "cannot remount read-only: %v %s", err, out)
	}
}
