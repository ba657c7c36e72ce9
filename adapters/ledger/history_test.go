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
// CARRYOVER_BUILD_HISTORY is "dir,MB" (cmd/e2e's growth benchmarks run
// it; cmd/e2e may not import the ledger): about MB MB of older sessions of
// 40 projects, sessions of about 25 MB of rows (prompts, calls and tool
// results with file contents). Unset, it builds a 2 MB one in a temporary
// directory and checks it, so the generator the benchmarks rely on runs in
// every test run.
func TestBuildHistoryLedger(t *testing.T) {
	spec := os.Getenv("CARRYOVER_BUILD_HISTORY")
	small := spec == ""
	if small {
		spec = t.TempDir() + ",2"
	}
	dir, mbs, _ := strings.Cut(spec, ",")
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
	var written int64
	for s := 0; written < int64(mb)<<20; s++ {
		ref := ledger.SessionRef{Tool: "claude", NativeID: fmt.Sprintf("hist-%06d", s), Project: fmt.Sprintf("/home/u/src/old%02d", s%40)}
		at := start.Add(time.Duration(s) * time.Hour)
		for batch := 0; batch < 25 && written < int64(mb)<<20; batch++ {
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
		if err != nil || st.Sessions == 0 || st.Rows == 0 {
			t.Fatalf("the history ledger holds %+v (%v)", st, err)
		}
	}
}
