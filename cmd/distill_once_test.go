package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/distill"
)

// distillations runs f and returns how many times it distilled (Refresh
// or Distill; distill.Distillations).
func distillations(f func()) int64 {
	before := distill.Distillations.Load()
	f()
	return distill.Distillations.Load() - before
}

// TestOneDistillationPerEvent: every hook event and the manual handoff
// distil the project at most once; what they write and inject comes from
// that one State (issue 23). A limit writes RESUME.md from the same State
// as handoff.md.
func TestOneDistillationPerEvent(t *testing.T) {
	le := newLifecycleEnv(t)
	src, err := os.ReadFile("../testdata/adapters/claude/session-tools.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	// The last Stop reads a rate limit: RESUME.md is written
	// (limits.WriteResume) from the State that event distilled.
	lines = append(lines, `{"parentUuid":null,"isSidechain":false,"type":"assistant","uuid":"lim-1","timestamp":"2026-11-21T09:30:00.000Z","message":{"id":"m-lim","model":"<synthetic>","role":"assistant","type":"message","usage":{"input_tokens":0,"output_tokens":0},"content":[{"type":"text","text":"You've hit your limit · resets 2pm (Europe/Paris)"}]},"error":"rate_limit","isApiErrorMessage":true,"sessionId":"4fbd56c9-cd10-4412-a9cc-58af839aaddf"}`+"\n")
	tr := filepath.Join(t.TempDir(), "s1.jsonl")
	payload := func() map[string]any {
		return map[string]any{"session_id": "4fbd56c9-cd10-4412-a9cc-58af839aaddf", "transcript_path": tr, "source": "startup"}
	}
	os.WriteFile(tr, []byte(strings.Join(lines[:8], "")), 0o600)
	events := []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "PostToolUse", "Stop"}
	for i, ev := range events {
		upto := min(8+2*i, len(lines))
		if i == len(events)-1 {
			upto = len(lines)
		}
		os.WriteFile(tr, []byte(strings.Join(lines[:upto], "")), 0o600) // new rows for each event
		le.now = le.now.Add(time.Minute)
		if n := distillations(func() { le.snap("claude", ev, payload()) }); n > 1 {
			t.Errorf("%s (event %d) distilled %d times; want at most 1", ev, i, n)
		}
	}
	if _, err := os.Stat(filepath.Join(le.project, ".carryover", "RESUME.md")); err != nil {
		t.Errorf("no RESUME.md at the limit: %v", err)
	}
	le.e.Stderr = &bytes.Buffer{}
	if n := distillations(func() { le.run(t, "handoff", "--stdout") }); n != 1 {
		t.Errorf("carryover handoff distilled %d times; want 1 (the project's State, not the session's rows again)", n)
	}
	if n := distillations(func() { le.run(t, "handoff", "--stdout", "--session", "4fbd56c9") }); n != 1 {
		t.Errorf("carryover handoff --session distilled %d times; want 1", n)
	}
}

// TestStopFootprint measures which files of the project one incremental
// Stop touches (README, "The path of one hook event"): run it twice with
// a coverage profile, CARRYOVER_FOOTPRINT=setup (a session start and a
// first Stop) and =stop (the same plus one Stop with new rows); the
// blocks whose counts grew are the second Stop's.
//
//	CARRYOVER_FOOTPRINT=setup go test -covermode=count -coverpkg=./... -coverprofile=/tmp/a -run TestStopFootprint ./cmd/
//	CARRYOVER_FOOTPRINT=stop  go test -covermode=count -coverpkg=./... -coverprofile=/tmp/b -run TestStopFootprint ./cmd/
//
// Without CARRYOVER_FOOTPRINT it runs as =stop and checks that the second
// Stop rewrote the handoff, so the measured path is the one that publishes.
func TestStopFootprint(t *testing.T) {
	mode := os.Getenv("CARRYOVER_FOOTPRINT")
	if mode == "" || mode == "chains" {
		mode = "stop"
	}
	le := newLifecycleEnv(t)
	src, err := os.ReadFile("../testdata/adapters/claude/session-tools.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	tr := filepath.Join(t.TempDir(), "s1.jsonl")
	payload := map[string]any{"session_id": "4fbd56c9-cd10-4412-a9cc-58af839aaddf", "transcript_path": tr, "source": "startup"}
	os.WriteFile(tr, []byte(strings.Join(lines[:12], "")), 0o600)
	le.snap("claude", "SessionStart", payload)
	le.snap("claude", "Stop", payload)
	if mode == "stop" {
		handoff := filepath.Join(le.project, ".carryover", "handoff.md")
		before, _ := os.ReadFile(handoff)
		os.WriteFile(tr, src, 0o600)
		le.now = le.now.Add(time.Minute)
		le.snap("claude", "Stop", payload)
		if after, err := os.ReadFile(handoff); err != nil || bytes.Equal(before, after) {
			t.Errorf("the incremental Stop did not rewrite handoff.md (err %v)", err)
		}
	}
}

// TestStopCallChains samples the stacks of repeated incremental Stops
// (CARRYOVER_FOOTPRINT=chains) and reports the project files a call chain
// leaves and enters again (a → b → a), the issue's "none twice in one call
// chain". A sampler sees what runs long enough to be caught, not every
// call: it is a measure, not a proof. It fails on a chain that re-enters any
// project file. Callbacks were what re-entered: the log (now the leaf
// safefile.Log), the ledger's row scanners (now with its types), Render's
// lifecycle step (now run by the service between Prepare and Render).
func TestStopCallChains(t *testing.T) {
	le := newLifecycleEnv(t)
	src, err := os.ReadFile("../testdata/adapters/claude/session-tools.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	tr := filepath.Join(t.TempDir(), "s1.jsonl")
	payload := map[string]any{"session_id": "4fbd56c9-cd10-4412-a9cc-58af839aaddf", "transcript_path": tr, "source": "startup"}
	os.WriteFile(tr, []byte(strings.Join(lines[:8], "")), 0o600)
	le.snap("claude", "SessionStart", payload)
	reentries := map[string]int{}
	wd, _ := os.Getwd()
	root := filepath.Dir(wd) + string(filepath.Separator)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 1<<20)
		for {
			select {
			case <-stop:
				return
			default:
			}
			n := runtime.Stack(buf, true)
			for _, g := range strings.Split(string(buf[:n]), "\n\n") {
				if key := reentry(g, root); key != "" {
					reentries[key]++
				}
			}
			time.Sleep(20 * time.Microsecond)
		}
	}()
	for i := 0; i < 200; i++ {
		os.WriteFile(tr, []byte(strings.Join(lines[:8+i%(len(lines)-8)], "")+strings.Repeat(lines[len(lines)-2], i)), 0o600)
		le.now = le.now.Add(time.Minute)
		le.snap("claude", "Stop", payload)
	}
	close(stop)
	<-done
	for k, n := range reentries {
		t.Logf("%4d samples: %s", n, k)
		t.Errorf("a Stop's call chain re-enters %s", k)
	}
	t.Logf("%d distinct re-entering chains", len(reentries))
}

// reentry is "a → b → a" for the first project file a goroutine's stack
// (outermost first) leaves and enters again ("" none).
func reentry(stack, root string) string {
	var files []string
	for _, l := range strings.Split(stack, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, root) || strings.Contains(l, "_test.go") {
			continue
		}
		f := strings.TrimPrefix(l, root)
		f, _, _ = strings.Cut(f, ":")
		if len(files) == 0 || files[len(files)-1] != f {
			files = append(files, f)
		}
	}
	seen := map[string]int{}
	for i := len(files) - 1; i >= 0; i-- { // outermost first
		if j, ok := seen[files[i]]; ok {
			return files[i] + " → " + files[j-1] + " → " + files[i]
		}
		seen[files[i]] = i
	}
	return ""
}
