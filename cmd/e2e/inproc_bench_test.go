package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/carryover/carryover/cmd"
)

// BenchmarkStopInProcess is BenchmarkSnapshotIncremental's Stop without
// the process: cmd.Main in this process, so -cpuprofile and -memprofile see
// the hook's own work (start-up is BenchmarkSnapshotIncremental minus this).
// 20 MB transcript, 50 new lines per Stop, 10,000-file repository.
func BenchmarkStopInProcess(b *testing.B) {
	dir := b.TempDir()
	home, project := filepath.Join(dir, "home"), filepath.Join(dir, "repo")
	os.MkdirAll(home, 0o700)
	bigRepo(b, project, 10000)
	tr := filepath.Join(dir, "s.jsonl")
	writeTranscript(b, tr, 20<<20)
	env := append(benchEnv(home, project), "CARRYOVER_DEADLINE_MS=600000")
	payload := map[string]any{"session_id": "bench", "transcript_path": tr, "cwd": project, "hook_event_name": "Stop"}
	runHook(b, env, "claude", "Stop", payload)
	runHook(b, benchEnv(home, project), "claude", "Stop", payload)
	vars := map[string]string{"HOME": home, "CARRYOVER_HOME": filepath.Join(home, ".carryover"), "CLAUDE_PROJECT_DIR": project, "PATH": os.Getenv("PATH")}
	raw, _ := json.Marshal(payload)
	f, _ := os.OpenFile(tr, os.O_APPEND|os.O_WRONLY, 0)
	defer f.Close()
	next := 1_000_000
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		var buf bytes.Buffer
		for _, l := range synthLines(b, next, 50) {
			buf.Write(l)
			buf.WriteByte('\n')
		}
		next += 10
		f.Write(buf.Bytes())
		e := &cmd.Env{Stdin: bytes.NewReader(raw), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(k string) string { return vars[k] },
			Now: time.Now, WorkDir: project, Executable: "/usr/bin/carryover"}
		b.StartTimer()
		cmd.Main([]string{"carryover", "snapshot", "--tool", "claude", "--event", "Stop"}, e)
	}
}
