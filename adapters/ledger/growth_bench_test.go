package ledger_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
)

// writeRealisticTranscript writes about mb MB of the Claude fixture with
// unique ids and, every 20 lines, a Read result carrying a 2-24 KB file
// (as cmd/e2e's realistic transcript).
func writeRealisticTranscript(b *testing.B, path string, mb int) {
	src, err := os.ReadFile("../../testdata/adapters/claude/session-tools.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	base := bytes.Split(bytes.TrimSpace(src), []byte("\n"))
	var read []byte
	for _, l := range base {
		if bytes.Contains(l, []byte(`"type":"text","file":{`)) {
			read = l
		}
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	defer w.Flush()
	var n int64
	for c := 0; n < int64(mb)<<20; c++ {
		for i, l := range base {
			// random-looking like real UUID v4 message ids
			l = bytes.ReplaceAll(l, []byte(`"uuid":"`), []byte(fmt.Sprintf(`"uuid":"%08x-`, uint32(c)*2654435761)))
			l = bytes.ReplaceAll(l, []byte(`"toolu_`), []byte(`"toolu_c`+strconv.Itoa(c)+`_`))
			w.Write(l)
			w.WriteByte('\n')
			n += int64(len(l) + 1)
			if i%20 != 19 {
				continue
			}
			seed := c*100 + i
			var body strings.Builder
			for k := 1; body.Len() < 2048+(seed*7919)%(22<<10); k++ {
				fmt.Fprintf(&body, "%d\tfunc handler%d_%d(w http.ResponseWriter, r *http.Request) error { return render(w, \"t-%d\") }\n", k, seed, k, (seed*31+k)%997)
			}
			var m map[string]any
			json.Unmarshal(read, &m)
			m["uuid"] = fmt.Sprintf("%08x-r", uint32(seed)*2654435761)
			m["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["content"] = body.String()
			m["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["tool_use_id"] = "toolu_r" + strconv.Itoa(seed)
			m["toolUseResult"].(map[string]any)["file"].(map[string]any)["content"] = body.String()
			out, _ := json.Marshal(m)
			w.Write(out)
			w.WriteByte('\n')
			n += int64(len(out) + 1)
		}
	}
}

// BenchmarkTailIntoRealistic is a cold ingest in-process, for profiling
// (go test -cpuprofile): CARRYOVER_BENCH_INGEST_MB (100 by default) of a
// realistic transcript through TailInto into an empty ledger, or a copy of
// CARRYOVER_BENCH_HISTORY_LEDGER.
func BenchmarkTailIntoRealistic(b *testing.B) {
	mb := 100
	if v, err := strconv.Atoi(os.Getenv("CARRYOVER_BENCH_INGEST_MB")); err == nil && v > 0 {
		mb = v
	}
	tr := filepath.Join(b.TempDir(), "s.jsonl")
	writeRealisticTranscript(b, tr, mb)
	lp := adapters.Claude.(adapters.LineParser)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		home := b.TempDir()
		if h := os.Getenv("CARRYOVER_BENCH_HISTORY_LEDGER"); h != "" {
			// a ledger holding other sessions already (cmd/e2e builds one)
			raw, err := os.ReadFile(h)
			if err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(home, ledger.FileName), raw, 0o600); err != nil {
				b.Fatal(err)
			}
			raw = nil
		}
		l, err := ledger.Open(home)
		if err != nil {
			b.Fatal(err)
		}
		ref := ledger.SessionRef{Tool: "claude", NativeID: "s", Project: "/p"}
		b.StartTimer()
		start, cpu0 := time.Now(), cpuTime()
		fr := ledger.TailInto(l, lp, ref, adapters.Transcript{Path: tr}, ledger.IngestOptions{Adapter: adapters.Claude, Now: now})
		if fr.Err != nil {
			b.Fatal(fr.Err)
		}
		b.ReportMetric(float64(mb)/time.Since(start).Seconds(), "MB/s")
		// CPU time (user+system, both goroutines) says more than wall
		// time on a machine other jobs load: a page read back by pread is
		// system time.
		b.ReportMetric(float64(mb)/(cpuTime()-cpu0).Seconds(), "MB/cpu-s")
		b.StopTimer()
		l.Close()
		b.StartTimer()
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
