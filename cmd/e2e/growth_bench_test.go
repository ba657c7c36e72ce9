package e2e

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// envInt reads a benchmark size knob.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

// historyLayout names the ledger layout the cached history ledgers were
// built with (13: schema 13, incremental auto-vacuum, keys in row_keys):
// bump it with a migration or a layout change, or every timed run would
// also measure migrating a copy of an old one.
const historyLayout = 13

// historyLedger returns a ledger file holding about mb MB of older
// sessions (40 projects, sessions of about 25 MB of rows: prompts, calls
// and tool results with file contents), built once and kept in the user's
// cache directory (a 5 GB one takes minutes to build). 0 MB: "".
func historyLedger(b *testing.B, mb int) string { return historyLedgerShape(b, mb, "") }

// historyLedgerShape is historyLedger of a shape TestBuildHistoryLedger
// knows ("" or "hook"), cached under its own name.
func historyLedgerShape(b *testing.B, mb int, shape string) string {
	b.Helper()
	if mb == 0 {
		return ""
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	name := fmt.Sprintf("history-%dmb-v%d", mb, historyLayout)
	if shape != "" {
		name = fmt.Sprintf("history-%s-%dmb-v%d", shape, mb, historyLayout)
	}
	dir := filepath.Join(cache, "carryover-bench", name)
	path := filepath.Join(dir, "ledger.sqlite")
	if _, err := os.Stat(path + ".done"); err == nil {
		return path
	}
	os.RemoveAll(dir)
	// Built by the ledger package's own test (cmd/e2e imports none of
	// carryover's packages): rows written directly, no transcripts.
	_, file, _, _ := runtime.Caller(0)
	build := exec.Command("go", "test", "-count=1", "-run", "^TestBuildHistoryLedger$", "-timeout", "60m", "./adapters/ledger/")
	build.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	build.Env = append(os.Environ(), "CARRYOVER_BUILD_HISTORY="+dir+","+strconv.Itoa(mb)+","+shape)
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building the history ledger: %v\n%s", err, out)
	}
	os.WriteFile(path+".done", nil, 0o600)
	return path
}

// copyLedger copies a history ledger into home (untimed).
func copyLedger(b *testing.B, src, home string) {
	b.Helper()
	os.MkdirAll(home, 0o700)
	if src == "" {
		return
	}
	for _, suffix := range []string{"", "-wal"} {
		in, err := os.Open(src + suffix)
		if err != nil {
			continue
		}
		out, err := os.Create(filepath.Join(home, "ledger.sqlite"+suffix))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			b.Fatal(err)
		}
		in.Close()
		// On disk before the timed run: the kernel writing back a
		// gigabyte of copy during it would be measured as ingest.
		out.Sync()
		out.Close()
	}
}

func fileMB(path string) float64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return float64(fi.Size()) / (1 << 20)
}

// BenchmarkIngestCurve is the cold-ingest curve (issue 17): a realistic
// transcript (tool results with file contents) of each size in
// CARRYOVER_BENCH_SIZES (MB, "100,300,1024" by default) read whole by one
// process, into an empty ledger and into one holding
// CARRYOVER_BENCH_HISTORY_MB (1024 by default) of other sessions, on the
// hook path (`snapshot`) and the manual one (`handoff --transcript`).
// MB/s should not fall with size or history.
func BenchmarkIngestCurve(b *testing.B) {
	dir := b.TempDir()
	var sizes []int
	for _, s := range strings.Split(os.Getenv("CARRYOVER_BENCH_SIZES"), ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil && n > 0 {
			sizes = append(sizes, n)
		}
	}
	if len(sizes) == 0 {
		sizes = []int{100, 300, 1024}
	}
	histories := []int{0, envInt("CARRYOVER_BENCH_HISTORY_MB", 1024)}
	project := filepath.Join(dir, "p")
	os.MkdirAll(project, 0o755)
	for _, mb := range sizes {
		tr := filepath.Join(dir, fmt.Sprintf("s%d.jsonl", mb))
		writeRealistic(b, tr, int64(mb)<<20)
		for _, hist := range histories {
			src := historyLedger(b, hist)
			for _, path := range []string{"hook", "manual"} {
				b.Run(fmt.Sprintf("%dMB/history-%dMB/%s", mb, hist, path), func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						b.StopTimer()
						home := filepath.Join(dir, fmt.Sprintf("home-%d-%d-%s-%d", mb, hist, path, i))
						copyLedger(b, src, filepath.Join(home, ".carryover"))
						env := append(benchEnv(home, project), "CARRYOVER_DEADLINE_MS=3600000")
						var cmd *exec.Cmd
						if path == "hook" {
							cmd = exec.Command(carryoverBin, "snapshot", "--tool", "claude", "--event", "Stop")
							cmd.Stdin = strings.NewReader(fmt.Sprintf(`{"session_id":"cold","transcript_path":%q,"cwd":%q}`, tr, project))
						} else {
							cmd = exec.Command(carryoverBin, "handoff", "--transcript", tr, "--project", project, "--stdout")
							cmd.Stdout = io.Discard
						}
						cmd.Env = env
						var stderr bytes.Buffer
						cmd.Stderr = &stderr
						b.StartTimer()
						start := time.Now()
						peak, err := runPeak(cmd)
						if err != nil {
							b.Fatalf("%v: %s", err, stderr.String())
						}
						el := time.Since(start)
						b.StopTimer()
						b.ReportMetric(float64(mb)/el.Seconds(), "MB/s")
						// per CPU second of the process (user+system): steadier
						// than wall time on a loaded machine
						b.ReportMetric(float64(mb)/(cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime()).Seconds(), "MB/cpu-s")
						// the process's peak RSS (issue 23: ≤ 64 MiB on a cold 1 GB ingest)
						b.ReportMetric(peak, "peak-MiB")
						led := filepath.Join(home, ".carryover", "ledger.sqlite")
						// The hook path exits 0 whatever happens: a run that
						// stored nothing must not pass for a fast one.
						if grown := fileMB(led) - fileMB(src); grown < float64(mb)/20 {
							log, _ := os.ReadFile(filepath.Join(home, ".carryover", "carryover.log"))
							b.Fatalf("the ledger grew %.1f MB on a %d MB transcript: nothing stored?\n%s", grown, mb, log)
						}
						b.ReportMetric(fileMB(led), "ledger-MB")
						os.RemoveAll(home)
						b.StartTimer()
					}
				})
			}
		}
		os.Remove(tr)
	}
}
