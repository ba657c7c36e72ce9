package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkHookHistory is the hook's cost against the history a user's
// ledger holds (issue 17): incremental `snapshot` runs (Stop: 50 new lines,
// re-distil, handoff.md written) on a 20 MB session in a 10,000-file repo
// (the repository BenchmarkSnapshotIncremental uses), with ledgers holding
// each of CARRYOVER_BENCH_HOOK_HISTORY_MB ("0,5120" by default; the
// history ledgers are built once and kept in the user cache directory) of
// older sessions of 40 other projects, in the shape months of hooks leave
// (thousands of sessions with their transcripts' cursors, published
// handoffs and receipts: TestBuildHistoryLedger's "hook" shape). The ledgers' runs are interleaved,
// and so is one `git status --porcelain` in the same repo per round, so
// every figure sees the same load. Reports per history size p50 and p99
// of the wall clock, p50 of the process's CPU time (user + system: the
// steadier figure on a shared machine) and p50 as a share of the git
// status p50. Targets: p50 and p99 within 10 % of the empty ledger's, and
// p50 ≤ 0.5× git status.
func BenchmarkHookHistory(b *testing.B) {
	sizes := []int{0, 5120}
	if v := os.Getenv("CARRYOVER_BENCH_HOOK_HISTORY_MB"); v != "" {
		sizes = nil
		for _, s := range strings.Split(v, ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n >= 0 {
				sizes = append(sizes, n)
			}
		}
	}
	dir := b.TempDir()
	project := filepath.Join(dir, "repo")
	bigRepo(b, project, 10000)
	// One session per ledger, their runs interleaved: the machine's load
	// changes by the minute, and each ledger sees the same share of it.
	type rig struct {
		hist     int
		home     string
		env      []string
		payload  []byte
		f        *os.File
		ds, cpus []time.Duration
	}
	var rigs []*rig
	for _, hist := range sizes {
		src := historyLedgerShape(b, hist, "hook")
		r := &rig{hist: hist, home: filepath.Join(dir, fmt.Sprintf("home-%d", hist))}
		copyLedger(b, src, filepath.Join(r.home, ".carryover"))
		defer os.RemoveAll(r.home)
		tr := filepath.Join(dir, fmt.Sprintf("s%d.jsonl", hist))
		writeRealistic(b, tr, 20<<20)
		r.payload, _ = json.Marshal(map[string]any{"session_id": "hookbench", "transcript_path": tr, "cwd": project, "hook_event_name": "Stop"})
		runHook(b, append(benchEnv(r.home, project), "CARRYOVER_DEADLINE_MS=600000"), "claude", "Stop", r.payload)
		r.env = benchEnv(r.home, project)
		runHook(b, r.env, "claude", "Stop", r.payload) // the first incremental Stop builds the distill state
		r.f, _ = os.OpenFile(tr, os.O_APPEND|os.O_WRONLY, 0)
		defer r.f.Close()
		rigs = append(rigs, r)
	}
	var gs []time.Duration
	next := 2_000_000
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, r := range rigs {
			b.StopTimer()
			var buf bytes.Buffer
			for _, l := range synthLines(b, next, 50) {
				buf.Write(l)
				buf.WriteByte('\n')
			}
			next += 10
			r.f.Write(buf.Bytes())
			b.StartTimer()
			wall, cpu := timedHook(b, r.env, "Stop", r.payload)
			r.ds, r.cpus = append(r.ds, wall), append(r.cpus, cpu)
		}
		b.StopTimer()
		start := time.Now()
		st := exec.Command("git", "status", "--porcelain")
		st.Dir = project
		st.Run()
		gs = append(gs, time.Since(start))
		b.StartTimer()
	}
	b.StopTimer()
	g := median(gs)
	b.ReportMetric(float64(g.Microseconds())/1000, "git-status-ms")
	for _, r := range rigs {
		p50, p99 := median(r.ds), percentile(r.ds, 99) // median sorts ds
		name := fmt.Sprintf("%dMB", r.hist)
		b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms-"+name)
		b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms-"+name)
		b.ReportMetric(float64(median(r.cpus).Microseconds())/1000, "cpu-p50-ms-"+name)
		b.ReportMetric(float64(p50)/float64(g), "ratio-to-git-status-"+name)
		b.ReportMetric(fileMB(filepath.Join(r.home, ".carryover", "ledger.sqlite")), "ledger-MB-"+name)
	}
}

// timedHook runs one Stop snapshot and returns its wall time and the
// process's CPU time (user + system).
func timedHook(b *testing.B, env []string, event string, payload []byte) (time.Duration, time.Duration) {
	b.Helper()
	cmd := exec.Command(carryoverBin, "snapshot", "--tool", "claude", "--event", event)
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(payload)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil || out.Len() > 0 {
		b.Fatalf("hook: %v, stdout %q, stderr %q", err, out.String(), errb.String())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return wall, time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// percentile is the p-th percentile of ds (sorted in place).
func percentile(ds []time.Duration, p int) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[min(len(ds)-1, len(ds)*p/100)]
}
