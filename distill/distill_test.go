package distill_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
)

var update = flag.Bool("update", false, "rewrite golden files")

var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func rowsOf(t *testing.T, tool, path string) []ledger.Row {
	t.Helper()
	a, err := adapters.Lookup(tool)
	if err != nil {
		t.Fatal(err)
	}
	lp := a.(adapters.LineParser)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []ledger.Row
	var off int64
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			break
		}
		rs, _ := lp.ParseLine(bytes.TrimSuffix(line, []byte("\n")), off)
		off += int64(len(line))
		for _, r := range rs {
			out = append(out, ledger.Row{Row: r, Tool: tool, SessionID: 1, Seq: int64(len(out) + 1)})
		}
	}
	return out
}

// TestGolden distills every Claude fixture and renders handoff.md.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("../testdata/adapters/claude/session-*.jsonl")
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		t.Run(name, func(t *testing.T) {
			h := distill.Distill(rowsOf(t, "claude", f), distill.Options{Project: "/home/dev-a/src/retrylib"})
			got := publish.Render(h, publish.RenderOptions{Now: now, Mode: "ask", Session: "sample"})
			again := publish.Render(distill.Distill(rowsOf(t, "claude", f), distill.Options{Project: "/home/dev-a/src/retrylib"}), publish.RenderOptions{Now: now, Mode: "ask", Session: "sample"})
			if got != again {
				t.Fatal("distill+render is not deterministic")
			}
			if n := strings.Count(got, "\n"); n > publish.MaxLines {
				t.Errorf("%d lines > %d", n, publish.MaxLines)
			}
			path := filepath.Join("../testdata/distill", name+".md")
			if *update {
				os.WriteFile(path, []byte(got), 0o644)
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if string(want) != got {
				t.Errorf("handoff differs from %s (run with -update and review):\n%s", path, got)
			}
		})
	}
}

func TestToolsSession(t *testing.T) {
	h := distill.Distill(rowsOf(t, "claude", "../testdata/adapters/claude/session-tools.jsonl"), distill.Options{Project: "/home/dev-a/src/retrylib"})
	if h.Task != "Add a retry helper in retry.py and run the tests" {
		t.Errorf("task = %q", h.Task)
	}
	if len(h.Files) != 1 || h.Files[0].Path != "retry.py" || !h.Files[0].FailedAfter {
		t.Errorf("files = %+v", h.Files)
	}
	if len(h.Failures) != 1 || h.Failures[0].ExitCode == nil || *h.Failures[0].ExitCode != 2 || !strings.Contains(h.Failures[0].Error, "cannot access") {
		t.Errorf("failures = %+v", h.Failures)
	}
	if h.Next != "Next I will add the retry test." {
		t.Errorf("next = %q", h.Next)
	}
}

func row(kind adapters.Kind, text string) ledger.Row {
	return ledger.Row{Row: adapters.Row{Kind: kind, Text: text, Role: "user"}, Tool: "claude"}
}

func TestNudgesNeverReplaceTask(t *testing.T) {
	for _, nudge := range []string{"yes", "continue", "ok go ahead", "do it", "Yes please!", "sounds good, carry on", "k", "/compact"} {
		rows := []ledger.Row{row(adapters.KindPrompt, "Port the parser to Go and keep the tests green"), row(adapters.KindText, "Shall I start?"), row(adapters.KindPrompt, nudge)}
		h := distill.Distill(rows, distill.Options{})
		if h.Task != "Port the parser to Go and keep the tests green" {
			t.Errorf("nudge %q replaced the task: %q", nudge, h.Task)
		}
	}
	rows := []ledger.Row{row(adapters.KindPrompt, "Port the parser"), row(adapters.KindPrompt, "now fix the flaky login test")}
	if h := distill.Distill(rows, distill.Options{}); h.Task != "now fix the flaky login test" {
		t.Errorf("a real new request must replace the task, got %q", h.Task)
	}
}

func TestNoToolSession(t *testing.T) {
	rows := []ledger.Row{
		row(adapters.KindPrompt, "Help me plan the migration from REST to gRPC"),
		{Row: adapters.Row{Kind: adapters.KindText, Role: "assistant", Text: "We decided to use buf for codegen because it pins plugin versions. Should the gateway stay on REST for now? Next I will draft the proto files for the user service."}, Tool: "claude"},
	}
	h := distill.Distill(rows, distill.Options{})
	if h.Task == "" || len(h.Decisions) != 1 || h.Next != "Next I will draft the proto files for the user service." {
		t.Fatalf("got %+v", h)
	}
	if len(h.Questions) != 1 || !strings.HasSuffix(h.Questions[0], "?") {
		t.Errorf("questions = %v", h.Questions)
	}
}

func exit(n int) *int { return &n }

func TestFailuresCollapseAndResolve(t *testing.T) {
	call := func(id, cmd string) ledger.Row {
		return ledger.Row{Row: adapters.Row{Kind: adapters.KindToolCall, ToolName: "Bash", CallID: id, Command: cmd}, Tool: "claude"}
	}
	fail := func(id string) ledger.Row {
		return ledger.Row{Row: adapters.Row{Kind: adapters.KindError, CallID: id, ExitCode: exit(1), Text: "Exit code 1\n\nFAIL: test_login (tests.test_auth)\nAssertionError"}, Tool: "claude"}
	}
	ok := func(id string) ledger.Row {
		return ledger.Row{Row: adapters.Row{Kind: adapters.KindToolResult, CallID: id, Text: "ok"}, Tool: "claude"}
	}
	rows := []ledger.Row{call("1", "go test ./..."), fail("1"), call("2", "go  test ./..."), fail("2"), call("3", "make lint"), fail("3"), call("4", "make lint"), ok("4")}
	h := distill.Distill(rows, distill.Options{})
	if len(h.Failures) != 2 {
		t.Fatalf("failures = %+v", h.Failures)
	}
	var gotest, lint distill.Failure
	for _, f := range h.Failures {
		if strings.HasPrefix(f.What, "go test") {
			gotest = f
		} else {
			lint = f
		}
	}
	if gotest.Count != 2 || gotest.Resolved || !strings.Contains(gotest.Error, "FAIL") {
		t.Errorf("go test failure = %+v", gotest)
	}
	if !lint.Resolved {
		t.Errorf("make lint later succeeded: %+v", lint)
	}
	if len(h.Questions) != 1 || !strings.Contains(h.Questions[0], "go test") {
		t.Errorf("open questions = %v", h.Questions)
	}
}

func TestTodoFromEdits(t *testing.T) {
	rows := []ledger.Row{
		row(adapters.KindPrompt, "add caching to the fetcher module please"),
		{Row: adapters.Row{Kind: adapters.KindToolCall, ToolName: "Edit", CallID: "e1", FilePath: "/p/fetch.go", Text: "\n// TODO: evict entries older than an hour\nfunc get() {}"}, Tool: "claude"},
	}
	h := distill.Distill(rows, distill.Options{Project: "/p"})
	if len(h.Files) != 1 || h.Files[0].Path != "fetch.go" {
		t.Errorf("files = %+v", h.Files)
	}
	found := false
	for _, q := range h.Questions {
		found = found || strings.Contains(q, "evict entries")
	}
	if !found {
		t.Errorf("TODO not in open questions: %v", h.Questions)
	}
}

// TestStateIncremental: folding rows a few at a time, with the state saved
// and reloaded between chunks as the hook path does, gives exactly the
// handoff of one pass over all rows.
func TestStateIncremental(t *testing.T) {
	files, _ := filepath.Glob("../testdata/adapters/*/*.jsonl")
	for _, f := range files {
		tool := filepath.Base(filepath.Dir(f))
		a, err := adapters.Lookup(tool)
		if err != nil {
			continue
		}
		if _, ok := a.(adapters.LineParser); !ok {
			continue
		}
		rows := rowsOf(t, tool, f)
		o := distill.Options{Project: "/home/dev-a/src/retrylib"}
		want := distill.Distill(rows, o)
		st := distill.NewState()
		for i := range rows {
			st.Add(&rows[i])
			if i%7 == 0 {
				b := st.Marshal()
				var ok bool
				if st, ok = distill.LoadState(b); !ok {
					t.Fatalf("%s: state did not round-trip", f)
				}
			}
		}
		got := st.Handoff(o)
		if !equalHandoff(got, want) {
			t.Errorf("%s: incremental handoff differs:\n got %+v\nwant %+v", f, got, want)
		}
	}
}

func equalHandoff(a, b distill.Handoff) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
