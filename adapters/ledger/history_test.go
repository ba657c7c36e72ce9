package ledger_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
)

// TestBuildHistoryLedger builds a benchmark's history ledger when
// CARRYOVER_BUILD_HISTORY is "dir,MB" or "dir,MB,hook" (cmd/e2e's growth
// benchmarks run it; cmd/e2e may not import the ledger): about MB MB of
// older sessions of 40 projects, sessions of about 25 MB of rows (prompts,
// calls and tool results with file contents), or in the "hook" shape many
// sessions of 0.3-1.5 MB with their cursors, handoffs and receipts (see
// historyExtras). Unset, it builds a 2 MB one of the hook shape in a
// temporary directory and checks it, so the generator the benchmarks rely
// on runs in every test run.
func TestBuildHistoryLedger(t *testing.T) {
	spec := os.Getenv("CARRYOVER_BUILD_HISTORY")
	small := spec == ""
	if small {
		spec = t.TempDir() + ",2,hook"
	}
	dir, mbs, _ := strings.Cut(spec, ",")
	mbs, shape, _ := strings.Cut(mbs, ",")
	mb, err := strconv.Atoi(mbs)
	if err != nil || dir == "" {
		t.Fatalf("CARRYOVER_BUILD_HISTORY=%q: want dir,MB", spec)
	}
	l, err := ledger.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	// The "hook" shape (BenchmarkHookHistory) is what months of use leave
	// besides rows: many sessions of a few batches (the default is a few
	// big ones), each with its transcript's cursor, every third with a
	// subagent's, a published handoff and its receipt. The hook's queries
	// by project and session must not read the other projects' share.
	hook := shape == "hook"
	batches := func(s int) int { return 25 }
	if hook {
		batches = func(s int) int { return 1 + s%4 }
	}
	var written int64
	for s := 0; written < int64(mb)<<20; s++ {
		ref := ledger.SessionRef{Tool: "claude", NativeID: fmt.Sprintf("hist-%06d", s), Project: fmt.Sprintf("/home/u/src/old%02d", s%40)}
		at := start.Add(time.Duration(s) * time.Hour)
		if hook {
			if err := historyExtras(l, ref, s, at); err != nil {
				t.Fatal(err)
			}
		}
		for batch := 0; batch < batches(s) && written < int64(mb)<<20; batch++ {
			var rows []adapters.Row
			for i := 0; i < 200; i++ {
				k := batch*200 + i
				r := adapters.Row{Key: "k" + strconv.Itoa(k), Time: at.Add(time.Duration(k) * time.Second), Role: "assistant", Kind: adapters.KindText}
				switch k % 4 {
				case 0:
					r.Role, r.Kind, r.Text = "user", adapters.KindPrompt, "please fix the failing test in handler "+strconv.Itoa(k)
				case 1:
					r.Kind, r.ToolName, r.CallID, r.FilePath = adapters.KindToolCall, "Read", "toolu_"+strconv.Itoa(k), fmt.Sprintf("/home/u/src/old%02d/pkg/f%d.go", s%40, k)
				case 2:
					var body strings.Builder
					for n := 1; body.Len() < 2048+(k*7919)%(16<<10); n++ {
						fmt.Fprintf(&body, "%d\tfunc handler%d_%d(w http.ResponseWriter, r *http.Request) error { return render(w, \"t-%d\") }\n", n, s, k, (s*31+n)%997)
					}
					r.Role, r.Kind, r.CallID, r.Text = "tool", adapters.KindToolResult, "toolu_"+strconv.Itoa(k-1), body.String()
				default:
					r.Text = "The handler now returns the rendered template; running the tests again."
				}
				written += int64(len(r.Text)) + 100
				rows = append(rows, r)
			}
			if _, err := l.Write(ledger.Batch{Session: ref, Rows: rows}, at); err != nil {
				t.Fatal(err)
			}
		}
	}
	if small {
		st, err := l.Stats()
		if tracked, _ := l.Tracked("/home/u/src/old00", 256); err != nil || st.Sessions == 0 || st.Rows == 0 || len(tracked) == 0 {
			t.Fatalf("the history ledger holds %+v (%v)", st, err)
		}
	}
}

// historyExtras gives a history session of the "hook" shape its cursors, a
// published handoff and a delivery receipt.
func historyExtras(l *ledger.Ledger, ref ledger.SessionRef, s int, at time.Time) error {
	dir := fmt.Sprintf("/home/u/.claude/projects/-home-u-src-old%02d/", s%40)
	ref.Transcript = dir + ref.NativeID + ".jsonl"
	if _, err := l.Write(ledger.Batch{Session: ref, Cursor: &adapters.Cursor{Path: ref.Transcript, Offset: int64(s) << 10, Head: "0123456789abcdef", HeadLen: 1024}}, at); err != nil {
		return err
	}
	if s%3 == 0 {
		sub := dir + ref.NativeID + "/subagents/agent-" + strconv.Itoa(s) + ".jsonl"
		if _, err := l.Write(ledger.Batch{Session: ref, Sidechain: true, Cursor: &adapters.Cursor{Path: sub, Offset: 4096, Head: "fedcba9876543210", HeadLen: 1024}}, at); err != nil {
			return err
		}
	}
	sess, err := l.SessionIn(ref.Tool, ref.NativeID, ref.Project)
	if err != nil {
		return err
	}
	id := fmt.Sprintf("HO-%s-%s", at.Format("20060102-150405"), ref.NativeID)
	header := "# [CARRYOVER] Last updated " + at.Format(time.RFC3339) + " from claude · " + id
	digest := fmt.Sprintf("%064x", s)
	if err := l.RecordPublished(ledger.Published{
		Handoff: ledger.Handoff{Project: ref.Project, Header: header, Tool: ref.Tool, SessionID: sess.ID, Written: at, Hash: digest},
		Record: ledger.HandoffRecord{ID: id, Project: ref.Project, Tool: ref.Tool, SessionID: sess.ID, NativeID: ref.NativeID, Hash: digest, Header: header,
			Goal: "fix the failing handler test", Next: "run the tests", Files: []string{"pkg/handler.go"}, Written: at, Updated: at},
	}); err != nil {
		return err
	}
	return l.RecordDelivery(ledger.Delivery{Project: ref.Project, Header: header, Tool: ref.Tool, SessionID: sess.ID, Via: "hook", At: at.Add(time.Minute)})
}
