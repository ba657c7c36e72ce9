package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// listStore writes n Claude sessions of about size bytes each (realistic
// lines: tool results carrying file contents) under home, spread over 10
// projects, each with its own session id.
func listStore(tb testing.TB, home string, n int, size int64) {
	tb.Helper()
	for i := 0; i < n; i++ {
		project := fmt.Sprintf("/home/u/src/p%02d", i%10)
		dir := filepath.Join(home, ".claude", "projects", "-home-u-src-p"+fmt.Sprintf("%02d", i%10))
		os.MkdirAll(dir, 0o700)
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		var buf bytes.Buffer
		for k := 0; int64(buf.Len()) < size; k += 100 {
			for _, l := range realisticLines(tb, i*100000+k, 100) {
				l = bytes.ReplaceAll(l, []byte(`"sessionId":"4fbd56c9-cd10-4412-a9cc-58af839aaddf"`), []byte(`"sessionId":"`+id+`"`))
				l = bytes.ReplaceAll(l, []byte(`"cwd":"/home/dev-a/src/retrylib"`), []byte(`"cwd":"`+project+`"`))
				buf.Write(l)
				buf.WriteByte('\n')
			}
		}
		if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), buf.Bytes(), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkList is `carryover list --all --json` over 200 Claude sessions
// (CARRYOVER_BENCH_LIST_KB each, 512 by default), the whole process, with
// no ledger (no hook ever ran) and with one, each cold (nothing described
// yet: the call describes and caches in carryover's home) and warm (every
// transcript unchanged since it was described). Target: warm ≤ 50 ms
// with or without a ledger (issue 23: without one, every call took 215
// ms). It also reports the process's peak RSS.
func BenchmarkList(b *testing.B) {
	dir := b.TempDir()
	home := filepath.Join(dir, "home")
	kb := int64(512)
	if v, err := strconv.Atoi(os.Getenv("CARRYOVER_BENCH_LIST_KB")); err == nil && v > 0 {
		kb = int64(v)
	}
	listStore(b, home, 200, kb<<10)
	run := func(b *testing.B, carryoverHome string) float64 {
		cmd := exec.Command(carryoverBin, "list", "--all", "--limit", "0", "--json")
		cmd.Env = []string{"HOME=" + home, "CARRYOVER_HOME=" + carryoverHome, "PATH=" + os.Getenv("PATH")}
		var out bytes.Buffer
		cmd.Stdout = &out
		peak, err := runPeak(cmd)
		if err != nil {
			b.Fatal(err)
		}
		if c := bytes.Count(out.Bytes(), []byte(`"agent": "claude"`)); c != 200 {
			b.Fatalf("%d sessions listed", c)
		}
		return peak
	}
	newLedger := func(b *testing.B, h string) {
		// A ledger exists (hooks made it): a hook of a session in
		// another project creates it (the session has no rows, so list
		// shows nothing of it).
		os.MkdirAll(h, 0o700)
		cmd := exec.Command(carryoverBin, "snapshot", "--tool", "claude", "--event", "SessionStart")
		cmd.Env = []string{"HOME=" + filepath.Join(dir, "elsewhere"), "CARRYOVER_HOME=" + h, "PATH=" + os.Getenv("PATH")}
		cmd.Stdin = strings.NewReader(`{"session_id":"none","transcript_path":"` + filepath.Join(dir, "none.jsonl") + `","cwd":"` + dir + `"}`)
		cmd.Run()
		if _, err := os.Stat(filepath.Join(h, "ledger.sqlite")); err != nil {
			b.Fatal("no ledger made")
		}
	}
	var rss []float64
	report := func(b *testing.B, ds []time.Duration) {
		b.ReportMetric(float64(median(ds).Microseconds())/1000, "p50-ms")
		b.ReportMetric(slices.Max(rss), "peak-MiB")
		rss = rss[:0]
	}
	timed := func(b *testing.B, h string) time.Duration {
		start := time.Now()
		rss = append(rss, run(b, h))
		return time.Since(start)
	}
	b.Run("no-ledger/cold", func(b *testing.B) {
		var ds []time.Duration
		for i := 0; i < b.N; i++ {
			ds = append(ds, timed(b, filepath.Join(dir, fmt.Sprintf("none%d", i))))
		}
		report(b, ds)
	})
	b.Run("no-ledger/warm", func(b *testing.B) {
		h := filepath.Join(dir, "none-warm")
		run(b, h)
		b.ResetTimer()
		var ds []time.Duration
		for i := 0; i < b.N; i++ {
			ds = append(ds, timed(b, h))
		}
		report(b, ds)
		if _, err := os.Stat(filepath.Join(h, "ledger.sqlite")); err == nil {
			b.Fatal("list made a ledger")
		}
	})
	b.Run("ledger/cold", func(b *testing.B) {
		var ds []time.Duration
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			h := filepath.Join(dir, fmt.Sprintf("cold%d", i))
			newLedger(b, h)
			b.StartTimer()
			ds = append(ds, timed(b, h))
		}
		report(b, ds)
	})
	b.Run("ledger/warm", func(b *testing.B) {
		h := filepath.Join(dir, "warm")
		newLedger(b, h)
		run(b, h)
		b.ResetTimer()
		var ds []time.Duration
		for i := 0; i < b.N; i++ {
			ds = append(ds, timed(b, h))
		}
		report(b, ds)
	})
}
