package e2e

import (
	"bytes"
	"crypto/rand"
	"database/sql"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/publish"
)

// The fault matrix of the hook path (issue 5). Every case runs the built
// binary as a process and asserts the hook contract (exit 0; stdout empty or
// one valid injection), the reason in carryover.log, and afterwards that a
// normal snapshot leaves exactly the rows a fresh ingest of the same
// transcript states gives: none lost, none extra. TestReliabilityReport
// turns the results into the README's figures.

type faultCase struct {
	name string
	run  func(t *testing.T, r *faultRig)
}

func faultCases() []faultCase {
	cs := []faultCase{
		{"concurrent-16", faultConcurrent},
		{"kill-9", faultKill9},
		{"transcript-truncated", faultTruncated},
		{"transcript-replaced", faultReplaced},
		{"transcript-rewritten-regrown", faultRewrittenRegrown},
		{"transcript-deleted", faultDeleted},
		{"transcript-growing", faultGrowing},
		{"ledger-garbage-header", func(t *testing.T, r *faultRig) { faultLedger(t, r, damageHeader, true) }},
		{"ledger-truncated", func(t *testing.T, r *faultRig) { faultLedger(t, r, damageTruncate, false) }},
		{"ledger-damaged-pages", func(t *testing.T, r *faultRig) { faultLedger(t, r, damagePages, false) }},
		{"disk-full", faultDiskFull},
		{"readonly-carryover-home", faultReadOnlyHome},
		{"readonly-project", faultReadOnlyProject},
	}
	cs = append(cs, faultCase{"privacy-by-construction", privacyByConstruction})
	cs = append(cs, faultCase{"guest-by-default", guestByDefault})
	for _, s := range hostileStdins() {
		cs = append(cs, faultCase{"stdin-" + s.name, func(t *testing.T, r *faultRig) { faultStdin(t, r, s) }})
	}
	for _, p := range hostilePaths() {
		cs = append(cs, faultCase{"path-" + p.name, func(t *testing.T, r *faultRig) { faultPath(t, r, p) }})
	}
	for _, u := range userFileCases() {
		cs = append(cs, faultCase{"userfile-" + u.name, func(t *testing.T, r *faultRig) { faultUserFile(t, r, u) }})
	}
	return cs
}

// runMatrix runs every case as a subtest and tallies the survivors.
func runMatrix(t *testing.T) {
	for _, c := range faultCases() {
		ok := t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			c.run(t, r)
			r.finish()
		})
		faultTally.result(c.name, ok)
	}
}

func TestFaultMatrix(t *testing.T) {
	runMatrix(t)
}

// --- concurrency ---------------------------------------------------------

func faultConcurrent(t *testing.T, r *faultRig) {
	r.setTranscript(r.sid, append(claudeFixture(t, "session-tools.jsonl"), canaryLines(r.sid, 0, 20)...))
	events := []string{"PostToolUse", "Stop", "SessionStart", "UserPromptSubmit"}
	var wg sync.WaitGroup
	procs := make([]hookProc, 16)
	errs := make([]error, 16)
	for i := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ev := events[i%len(events)]
			procs[i], errs[i] = spawnHook(r.env(), "claude", ev, bytes.NewReader(r.payload(r.sid, ev)))
		}()
	}
	wg.Wait()
	for i, p := range procs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		r.checkContract(p)
	}
	if n := strings.Count(r.log(), "done in"); n != 16 {
		t.Errorf("log has %d completed snapshots, want 16", n)
	}
	r.checkRows()
}

// --- kill -9 ---------------------------------------------------------------

var (
	bigOnce sync.Once
	bigBlob []byte
)

// bigTranscript is ~16 MB of synthetic Claude lines (unique uuids).
func bigTranscript(t testing.TB) []byte {
	bigOnce.Do(func() {
		var b bytes.Buffer
		for i := 0; b.Len() < 16<<20; i += 500 {
			for _, l := range synthLines(t, 10_000+i, 500) {
				b.Write(l)
				b.WriteByte('\n')
			}
		}
		bigBlob = b.Bytes()
	})
	return bigBlob
}

func faultKill9(t *testing.T, r *faultRig) {
	// An old handoff first, then a large append whose ingest is killed.
	r.setTranscript(r.sid, claudeFixture(t, "session-tools.jsonl"))
	r.snap("Stop")
	old, err := os.ReadFile(publish.HandoffPath(r.project))
	if err != nil {
		t.Fatalf("no first handoff: %v\n%s", err, r.log())
	}
	r.appendTranscript(r.sid, bigTranscript(t))
	env := r.env("CARRYOVER_DEADLINE_MS=60000")
	// Calibrate the window on a copy of the home: one whole uninterrupted run.
	full := timedRun(t, env, r.payload(r.sid, "Stop"))
	base := filepath.Join(t.TempDir(), "base")
	if out, err := exec.Command("cp", "-a", r.chome, base).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	for seed := uint64(1); seed <= 6; seed++ {
		// Seeds 1-4 each kill a cold ingest of the append; 5 and 6 kill
		// the runs that resume after the kills before them.
		if seed <= 4 {
			os.RemoveAll(r.chome)
			if out, err := exec.Command("cp", "-a", base, r.chome).CombinedOutput(); err != nil {
				t.Fatalf("%v %s", err, out)
			}
		}
		// Kill points fall between 10 % and 80 % of a whole calibrated
		// run. The calibration says nothing about how fast the next run
		// goes on a busy machine, so a kill that comes after the run has
		// finished is retried at half the delay until one hits a running
		// snapshot: every seed ends with a landed kill, whatever the load
		// (a 16 MB ingest cannot finish within the last, sub-millisecond
		// delay). A run that finished instead is not rolled back: its
		// state is simply the start of the retry, as for seeds 5 and 6.
		rnd := mrand.New(mrand.NewPCG(seed, 42))
		at := full/10 + time.Duration(rnd.Int64N(int64(full*7/10)))
		for !timedKill(t, env, r.payload(r.sid, "Stop"), at) {
			if at < time.Microsecond {
				t.Fatalf("seed %d: no kill landed on a running snapshot, even at %s", seed, at)
			}
			at /= 2
		}
		// Whatever the kill point: the handoff is the old or a whole new
		// one, its directory is ignored, the cursor sits on a line
		// boundary and every stored row is a row of the transcript.
		if h, err := os.ReadFile(publish.HandoffPath(r.project)); err != nil {
			t.Fatalf("seed %d (kill at %s): handoff gone: %v", seed, at, err)
		} else if !bytes.Equal(h, old) {
			if err := checkHandoff(h); err != nil {
				t.Fatalf("seed %d (kill at %s): torn handoff: %v", seed, at, err)
			}
		}
		if _, err := os.Stat(filepath.Join(publish.Dir(r.project), ".gitignore")); err != nil {
			t.Errorf("seed %d: .carryover/.gitignore missing: %v", seed, err)
		}
		checkCursor(t, r)
		want := r.expectedKeys(r.sid)
		for k := range r.ledgerKeys(r.sid) {
			if !want[k] {
				t.Fatalf("seed %d: ledger holds row %q that the transcript does not", seed, k)
			}
		}
	}
	r.wantLog(hookProc{}, `done in`)
	r.checkRows()
}

// timedRun runs one whole snapshot on a throwaway copy of the state and
// returns its wall time (the calibration of the kill points).
func timedRun(t *testing.T, env []string, payload []byte) time.Duration {
	t.Helper()
	cmd := exec.Command(carryoverBin, "snapshot", "--tool", "claude", "--event", "Stop")
	cmd.Stdin = bytes.NewReader(payload)
	start := time.Now()
	home := envGet(env, "CARRYOVER_HOME")
	tmp := t.TempDir()
	defer os.RemoveAll(tmp) // the whole ingested copy, ~60 MB: kept to the test's end it doubled TestFaultMatrix/kill-9's peak
	exec.Command("cp", "-a", home, tmp).Run()
	cmd.Env = append(append([]string{}, env...), "CARRYOVER_HOME="+filepath.Join(tmp, filepath.Base(home)))
	cmd.Env = append(cmd.Env, "CLAUDE_PROJECT_DIR="+t.TempDir())
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return time.Since(start)
}

// timedKill runs one snapshot and sends it SIGKILL after at; it reports
// whether the kill hit the running process (false: it had already exited).
func timedKill(t *testing.T, env []string, payload []byte, at time.Duration) bool {
	t.Helper()
	cmd := exec.Command(carryoverBin, "snapshot", "--tool", "claude", "--event", "Stop")
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(payload)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(at)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}

func envGet(env []string, k string) string {
	v := ""
	for _, e := range env {
		if strings.HasPrefix(e, k+"=") {
			v = e[len(k)+1:]
		}
	}
	return v
}

// checkCursor: the saved offset is within the file and on a line boundary.
func checkCursor(t *testing.T, r *faultRig) {
	t.Helper()
	l, err := ledger.Open(r.chome)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := l.Cursor(r.transcript)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(r.transcript)
	if c.Offset < 0 || c.Offset > int64(len(b)) || (c.Offset > 0 && b[c.Offset-1] != '\n') {
		t.Fatalf("cursor offset %d is not a line boundary of a %d-byte transcript", c.Offset, len(b))
	}
}

// --- transcript faults ------------------------------------------------------

func faultTruncated(t *testing.T, r *faultRig) {
	data := claudeFixture(t, "session-tools.jsonl")
	r.setTranscript(r.sid, data)
	r.snap("Stop")
	// Cut in place in the middle of a line, then the agent writes on.
	if err := os.Truncate(r.transcript, int64(len(data)/2)); err != nil {
		t.Fatal(err)
	}
	r.record(r.sid)
	p := r.snap("Stop")
	r.wantLog(p, `replaced or truncated; re-read from the start`)
	r.appendTranscript(r.sid, append([]byte("\n"), canaryLines(r.sid, 0, 3)...))
	r.snap("Stop")
	r.checkRows()
}

// faultRewrittenRegrown: the transcript is truncated and rewritten in
// place (same inode) and has grown past the saved offset by the next hook,
// its first lines (and so its first kilobyte) unchanged and the rest
// different: 40 rows, of which the old cursor would skip the 20 before its
// offset.
func faultRewrittenRegrown(t *testing.T, r *faultRig) {
	r.setTranscript(r.sid, canaryLines(r.sid, 0, 7)) // 21 rows
	r.snap("Stop")
	f, err := os.OpenFile(r.transcript, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(append(canaryLines(r.sid, 0, 2), canaryLines(r.sid, 100, 12)...)) // 6 same rows + 36 new
	f.Close()
	r.record(r.sid)
	p := r.snap("Stop")
	r.wantLog(p, `replaced or truncated`)
	r.checkRows()
	got := r.ledgerKeys(r.sid)
	for i := 100; i < 112; i++ {
		if !got[fmt.Sprintf("canary-u-%d", i)] && !anyKeyHas(got, fmt.Sprintf("canary-u-%d", i)) {
			t.Errorf("row of rewritten prompt %d missing from the ledger", i)
		}
	}
}

func anyKeyHas(keys map[string]bool, sub string) bool {
	for k := range keys {
		if strings.Contains(k, sub) {
			return true
		}
	}
	return false
}

func faultReplaced(t *testing.T, r *faultRig) {
	r.setTranscript(r.sid, claudeFixture(t, "session-tools.jsonl"))
	r.snap("Stop")
	tmp := r.transcript + ".new"
	os.WriteFile(tmp, claudeFixture(t, "session-resumed.jsonl"), 0o600)
	if err := os.Rename(tmp, r.transcript); err != nil {
		t.Fatal(err)
	}
	r.record(r.sid)
	p := r.snap("Stop")
	r.wantLog(p, `replaced or truncated`)
	r.checkRows()
}

func faultDeleted(t *testing.T, r *faultRig) {
	r.setTranscript(r.sid, append(claudeFixture(t, "session-tools.jsonl"), canaryLines(r.sid, 0, 2)...))
	r.snap("Stop")
	os.Remove(r.transcript)
	r.record(r.sid)
	p := r.snap("SessionStart")
	r.bound(p)
	if p.Stdout == "" {
		t.Error("the handoff was not injected after the transcript was deleted")
	}
	r.wantLog(p, `event=SessionStart .*done in`)
	r.checkRows() // the ledger keeps what the deleted transcript held
}

func faultGrowing(t *testing.T, r *faultRig) {
	r.setTranscript(r.sid, claudeFixture(t, "session-tools.jsonl"))
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(r.transcript, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			done <- err
			return
		}
		defer f.Close()
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			// Lines arrive in two writes, as a partial line then the rest.
			chunk := canaryLines(r.sid, 100+i, 5)
			cut := len(chunk) / 3
			f.Write(chunk[:cut])
			time.Sleep(time.Millisecond)
			f.Write(chunk[cut:])
		}
	}()
	for i := 0; i < 8; i++ {
		r.bound(r.snap("PostToolUse"))
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r.record(r.sid)
	r.checkRows()
}

// --- ledger damage ------------------------------------------------------------

type damage func(t *testing.T, path string)

func damageHeader(t *testing.T, path string) {
	garbage := make([]byte, 100)
	rand.Read(garbage)
	overwrite(t, path, 0, garbage)
}

func damageTruncate(t *testing.T, path string) {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()*2/5); err != nil {
		t.Fatal(err)
	}
}

// damagePages overwrites with junk, whole, every page of the ledger but
// those recovery needs to find the transcripts again: page 1 (the schema)
// and the pages of the sessions and cursors tables, found from their root
// pages wherever the layout put them (btree_test.go). The rows, the key
// tables, every index, the lifecycle tables (then restored from the
// verified handoff), an auto-vacuum ledger's pointer map and any free page
// are destroyed. It used to overwrite 4 KiB of every 12 KiB from 64 KiB
// on, sized for 4 KiB pages "to spare the first few": on 16 KiB pages it
// damaged pages 5 onwards, each in part, and the cursors' page (7) only in
// its unallocated middle, so every byte it destroyed is destroyed here
// too, and pages 3–4 (the sessions' indexes) besides.
func damagePages(t *testing.T, path string) {
	f, err := readDBFile(path)
	if err != nil {
		t.Fatal(err)
	}
	roots, err := rootPages(path)
	if err != nil {
		t.Fatal(err)
	}
	keep := map[int]bool{1: true}
	for _, table := range []string{"sessions", "cursors"} {
		if roots[table] == 0 {
			t.Fatalf("no %s table in the ledger: %v", table, roots)
		}
		pages, err := f.tablePages(roots[table])
		if err != nil {
			t.Fatalf("pages of %s: %v", table, err)
		}
		for _, n := range pages {
			keep[n] = true
		}
	}
	if f.pages()-len(keep) < 8 {
		t.Fatalf("only %d of %d pages to damage: the test ledger is too small", f.pages()-len(keep), f.pages())
	}
	junk := bytes.Repeat([]byte{0xA5}, f.ps)
	for n := 2; n <= f.pages(); n++ {
		if !keep[n] {
			overwrite(t, path, int64(n-1)*int64(f.ps), junk)
		}
	}
}

// checkpoint copies the ledger's WAL into its file and empties the WAL.
func checkpoint(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var busy, logFrames, done int
	if err := db.QueryRow(`PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &done); err != nil || busy != 0 {
		t.Fatalf("checkpoint: %v (busy %d)", err, busy)
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() != 0 {
		t.Fatalf("WAL still holds %d bytes after a checkpoint", fi.Size())
	}
}

func overwrite(t *testing.T, path string, off int64, b []byte) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func faultLedger(t *testing.T, r *faultRig, d damage, exact bool) {
	// Two sessions of the project in the ledger, enough rows for many pages.
	other := r.sid + "-b"
	r.setTranscript(r.sid, append(claudeFixture(t, "session-tools.jsonl"), canaryLines(r.sid, 0, 150)...))
	r.setTranscript(other, append(claudeFixture(t, "session-resumed.jsonl"), canaryLines(other, 500, 150)...))
	r.snapWith(other, "Stop", bytes.NewReader(r.payload(other, "Stop")))
	r.snap("Stop")
	// The user's own bookkeeping, which no transcript holds: it must
	// survive the rebuild (salvaged, or restored from the verified handoff).
	for _, args := range [][]string{{"decide", "Use Postgres advisory locks, not Redis", "--why", "one service fewer"}, {"task", "Finish the CSV importer"}} {
		if _, errOut, code := runCarryover(t, r.env(), r.project, args...); code != 0 {
			t.Fatalf("carryover %v: exit %d: %s", args, code, errOut)
		}
	}
	path := filepath.Join(r.chome, ledger.FileName)
	// Hooks leave their commits in the WAL for the next process (Leave);
	// a later commit checkpoints them into the file. Damage the file after
	// such a checkpoint, when it alone holds the ledger.
	checkpoint(t, path)
	d(t, path)
	damagedCopy, _ := os.ReadFile(path)

	// The agent carries on: a new line, a hook.
	r.appendTranscript(r.sid, canaryLines(r.sid, 900, 1))
	p := r.snap("SessionStart")
	r.bound(p)
	r.wantLog(p, `ledger was corrupt; moved aside to \S+ and started a new one; \d+ transcripts`)
	if p.Stdout == "" {
		t.Errorf("no injection on the hook that found the ledger damaged")
	}
	for _, want := range []string{"Use Postgres advisory locks, not Redis (why: one service fewer)", "[pinned by the user", "Resuming: Finish the CSV importer"} {
		if !strings.Contains(p.Stdout, want) {
			t.Errorf("the rebuilt ledger lost the lifecycle: the injection lacks %q:\n%s", want, p.Stdout)
		}
	}
	if out, _, _ := runCarryover(t, r.env(), r.project, "decide", "--list"); !strings.Contains(out, "Use Postgres advisory locks") {
		t.Errorf("decide --list after the rebuild:\n%s", out)
	}
	// The damaged file is kept. (Damage SQLite notices only on a later
	// statement lets the hook's earlier commits reach it: closing the last
	// connection checkpoints the WAL into it.)
	moved, _ := filepath.Glob(path + ".corrupt-*[0-9]")
	if len(moved) != 1 {
		t.Fatalf("damaged ledger not kept aside once (found %v)", moved)
	}
	b, err := os.ReadFile(moved[0])
	if err != nil || len(b) < len(damagedCopy)/2 || (exact && !bytes.Equal(b, damagedCopy)) {
		t.Errorf("damaged ledger not kept as it was (%d bytes, was %d; %v)", len(b), len(damagedCopy), err)
	}
	if m := regexp.MustCompile(`started a new one; (\d+) transcripts`).FindStringSubmatch(r.log()); m == nil || m[1] == "0" {
		t.Errorf("no transcript of the damaged ledger was registered again: %v", m)
	}
	// Both sessions are whole again: the hook's own session at once, the
	// other one through the catch-up of the rebuilt ledger, before any hook
	// of its own runs.
	r.snap("Stop", "CARRYOVER_DEADLINE_MS=60000")
	want, got := r.expectedKeys(other), r.ledgerKeys(other)
	if lost := keyDiff(want, got); len(lost) > 0 {
		t.Errorf("session %s not rebuilt by catch-up: %d of %d rows missing", other, len(lost), len(want))
	}
	r.checkRows(r.sid, other)
}

// --- file system faults --------------------------------------------------------

func faultDiskFull(t *testing.T, r *faultRig) {
	mountTmpfs(t, r.chome, "4m")
	r.setTranscript(r.sid, claudeFixture(t, "session-tools.jsonl"))
	r.snap("Stop")
	r.appendTranscript(r.sid, canaryLines(r.sid, 0, 1500)) // ~1.5 MB of rows
	filler := filepath.Join(r.chome, "filler")
	f, _ := os.Create(filler)
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	f.Close()
	p := r.snap("Stop")
	r.bound(p)
	// The reason reaches the log if the log itself can still grow (its last
	// page may have room); otherwise the hook's stderr.
	r.wantLog(p, `(?i)disk is full|no space left`)
	os.Remove(filler)
	if m, _ := filepath.Glob(filepath.Join(r.chome, ledger.FileName+".corrupt-*")); len(m) > 0 {
		t.Errorf("a full disk was taken for a damaged ledger: %v", m)
	}
	r.checkRows()
}

func faultReadOnlyHome(t *testing.T, r *faultRig) {
	r.setTranscript(r.sid, claudeFixture(t, "session-tools.jsonl"))
	r.snap("Stop")
	r.appendTranscript(r.sid, canaryLines(r.sid, 0, 5))
	bindReadOnly(t, r.chome)
	p := r.snap("SessionStart")
	r.bound(p)
	if p.Stdout == "" {
		t.Error("the existing handoff was not delivered with a read-only carryover home")
	}
	r.wantLog(p, `read-only file system`)
	exec.Command("umount", "-l", r.chome).Run()
	r.checkRows()
}

func faultReadOnlyProject(t *testing.T, r *faultRig) {
	r.setTranscript(r.sid, append(claudeFixture(t, "session-tools.jsonl"), canaryLines(r.sid, 0, 3)...))
	bindReadOnly(t, r.project)
	p := r.snap("Stop")
	r.bound(p)
	r.wantLog(p, `publish: .*read-only file system`)
	if _, err := os.Stat(filepath.Join(r.chome, "handoff.md")); err != nil {
		t.Errorf("the global handoff copy was not written: %v", err)
	}
	r.checkRows()
	exec.Command("umount", "-l", r.project).Run()
}

// --- hostile stdin ----------------------------------------------------------------

type hostileStdin struct {
	name, tool, event string
	stdin             func(r *faultRig) []byte
	open              bool   // stdin is never closed
	log               string // regexp the log must match
}

func hostileStdins() []hostileStdin {
	huge := func(r *faultRig) []byte {
		var b bytes.Buffer
		b.WriteString(`{"session_id":"` + r.sid + `","pad":"`)
		b.Write(bytes.Repeat([]byte("CANARY-PROMPT "), 100<<20/14))
		b.WriteString(`"}`)
		return b.Bytes()
	}
	return []hostileStdin{
		{name: "empty", event: "Stop", stdin: func(*faultRig) []byte { return nil }, log: `not a JSON object \(0 bytes\)`},
		{name: "invalid-json", event: "Stop", stdin: func(*faultRig) []byte { return []byte(`{"session_id": CANARY-PROMPT`) }, log: `not a JSON object`},
		{name: "json-array", event: "Stop", stdin: func(*faultRig) []byte { return []byte(`["CANARY-PROMPT"]`) }, log: `not a JSON object`},
		{name: "100MB-json", event: "Stop", stdin: huge, log: `larger than \d+ bytes; ignored`},
		{name: "unknown-tool", tool: "bogus", event: "Stop", stdin: func(r *faultRig) []byte { return r.payload(r.sid, "Stop") }, log: `unknown --tool "bogus"`},
		{name: "unknown-event", event: "Bogus", stdin: func(r *faultRig) []byte { return r.payload(r.sid, "Bogus") }, log: `event=Bogus .*done in`},
		{name: "missing-session-id", event: "SessionStart", stdin: func(*faultRig) []byte { return []byte(`{"hook_event_name":"SessionStart"}`) }, log: `no session id`},
		{name: "wrong-types", event: "Stop", stdin: func(*faultRig) []byte { return []byte(`{"session_id":42,"transcript_path":["x"],"cwd":{}}`) }, log: `no session id`},
		{name: "missing-transcript", event: "Stop", stdin: func(r *faultRig) []byte { return []byte(`{"session_id":"` + r.sid + `"}`) }, log: `done in`},
		{name: "stdin-never-closed", event: "Stop", open: true, stdin: func(r *faultRig) []byte { return r.payload(r.sid, "Stop") }, log: `stdin was not closed before the deadline`},
	}
}

func faultStdin(t *testing.T, r *faultRig, h hostileStdin) {
	r.setTranscript(r.sid, append(claudeFixture(t, "session-tools.jsonl"), canaryLines(r.sid, 0, 3)...))
	tool := h.tool
	if tool == "" {
		tool = "claude"
	}
	var p hookProc
	var err error
	if h.open {
		p, err = hookOpenStdin(r.env(), tool, h.event, h.stdin(r))
	} else {
		p, err = spawnHook(r.env(), tool, h.event, bytes.NewReader(h.stdin(r)))
	}
	if err != nil {
		t.Fatal(err)
	}
	r.checkContract(p)
	if p.Stdout != "" {
		t.Errorf("hostile stdin produced an injection")
	}
	r.bound(p)
	r.wantLog(p, h.log)
	r.checkRows()
}

// hookOpenStdin writes payload to the hook's stdin and never closes it.
func hookOpenStdin(env []string, tool, event string, payload []byte) (hookProc, error) {
	cmd := exec.Command(carryoverBin, "snapshot", "--tool", tool, "--event", event)
	cmd.Env = env
	pr, pw, err := os.Pipe()
	if err != nil {
		return hookProc{}, err
	}
	defer pw.Close()
	cmd.Stdin = pr
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return hookProc{}, err
	}
	pr.Close()
	pw.Write(payload)
	err = cmd.Wait()
	p := hookProc{Stdout: out.String(), Stderr: errb.String(), Wall: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		p.Code = ee.ExitCode()
	}
	return p, nil
}

// --- hostile transcript paths ----------------------------------------------------------

type hostilePath struct {
	name string
	// make puts the hostile thing at the session's transcript path (or
	// returns another path to name in the payload).
	make func(t *testing.T, r *faultRig) string
	log  string
	// rows: the transcript's bytes are recorded as a state (they are read).
	rows bool
	// partial: reading the file may legitimately stop at the internal
	// deadline (how far it gets depends on the machine's load); the first
	// hook then logs that instead, and a second one with no deadline to
	// speak of must reach log.
	partial bool
}

func hostilePaths() []hostilePath {
	inStore := func(r *faultRig) string {
		os.MkdirAll(filepath.Dir(r.transcript), 0o700)
		return r.transcript
	}
	return []hostilePath{
		{name: "fifo", log: `not a regular file`, make: func(t *testing.T, r *faultRig) string {
			p := inStore(r)
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{name: "dev-zero", log: `not a regular file`, make: func(*testing.T, *faultRig) string { return "/dev/zero" }},
		{name: "directory", log: `not a regular file`, make: func(t *testing.T, r *faultRig) string {
			p := inStore(r)
			os.MkdirAll(p, 0o700)
			return p
		}},
		{name: "symlink-out-of-store", log: `out of the agent's session store`, make: func(t *testing.T, r *faultRig) string {
			outside := filepath.Join(r.root, "elsewhere", "secret.jsonl")
			os.MkdirAll(filepath.Dir(outside), 0o700)
			os.WriteFile(outside, append(claudeFixture(t, "session-tools.jsonl"), canaryLines(r.sid, 0, 2)...), 0o600)
			p := inStore(r)
			if err := os.Symlink(outside, p); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{name: "random-bytes", rows: true, log: `done in`, make: func(t *testing.T, r *faultRig) string {
			b := make([]byte, 4<<20)
			rand.Read(b)
			os.WriteFile(inStore(r), b, 0o600)
			return r.transcript
		}},
		{name: "100MB-single-line", rows: true, log: `skipped 1 lines over`, partial: true, make: func(t *testing.T, r *faultRig) string {
			f, err := os.Create(inStore(r))
			if err != nil {
				t.Fatal(err)
			}
			// One 100 MB line, well over adapters.MaxLine (64 MB). Its
			// first and last MB are canary text, the 98 MB between them a
			// hole (NULs on reading, no blocks on disk): the reader still
			// goes through all of it, in 2 MB of disk instead of 100.
			line := bytes.Repeat([]byte("CANARY-TEXT "), 1<<20/12)
			f.Write(line)
			f.Seek(98*int64(len(line)), io.SeekCurrent)
			f.Write(line)
			f.Write([]byte("\n"))
			f.Write(canaryLines(r.sid, 0, 2))
			f.Close()
			return r.transcript
		}},
		{name: "non-utf8", rows: true, log: `done in`, make: func(t *testing.T, r *faultRig) string {
			b := append(claudeFixture(t, "session-tools.jsonl"), canaryLines(r.sid, 0, 3)...)
			b = bytes.ReplaceAll(b, []byte("retry"), []byte("re\xff\xfe\xc3y"))
			b = bytes.ReplaceAll(b, []byte("CANARY-PROMPT-1 "), []byte("CANARY-PROMPT-1 \xed\xa0\x80\xc0\xaf "))
			os.WriteFile(inStore(r), b, 0o600)
			return r.transcript
		}},
	}
}

func faultPath(t *testing.T, r *faultRig, h hostilePath) {
	path := h.make(t, r)
	if h.rows {
		r.record(r.sid)
	}
	payload := fmt.Sprintf(`{"session_id":%q,"transcript_path":%q,"cwd":%q,"hook_event_name":"Stop"}`, r.sid, path, r.project)
	p := r.snapWith(r.sid, "Stop", strings.NewReader(payload))
	r.bound(p)
	if h.partial && !regexp.MustCompile(h.log).MatchString(r.log()) {
		r.wantLog(p, `deadline reached; the rest is read at the next event`)
		p = r.snapWith(r.sid, "Stop", strings.NewReader(payload), "CARRYOVER_DEADLINE_MS=600000")
	}
	r.wantLog(p, h.log)
	// And a SessionStart on the same path still answers in time.
	payload = strings.Replace(payload, `"Stop"`, `"SessionStart"`, 1)
	r.bound(r.snapWith(r.sid, "SessionStart", strings.NewReader(payload)))
	if path == r.transcript {
		r.checkRows()
	} else {
		if n := len(r.ledgerKeys(r.sid)); n != 0 {
			t.Errorf("%d rows read from %s", n, path)
		}
	}
}

// --- user files: AGENTS.md, CLAUDE.md, .gitignore ---------------------------------------

type userFileCase struct {
	name  string
	setup func(t *testing.T, r *faultRig)
	check func(t *testing.T, r *faultRig, p hookProc)
}

func userFileCases() []userFileCase {
	// unchanged asserts that files keep their exact bytes (and link-ness)
	// and that the log says why they were left alone.
	unchanged := func(why string, names ...string) func(t *testing.T, r *faultRig) func(t *testing.T, r *faultRig, p hookProc) {
		return func(t *testing.T, r *faultRig) func(t *testing.T, r *faultRig, p hookProc) {
			before := map[string]string{}
			for _, n := range names {
				before[n] = fileState(filepath.Join(r.project, n))
			}
			return func(t *testing.T, r *faultRig, p hookProc) {
				for _, n := range names {
					if got := fileState(filepath.Join(r.project, n)); got != before[n] {
						t.Errorf("%s changed:\nbefore %q\nafter  %q", n, clipStr(before[n], 200), clipStr(got, 200))
					}
				}
				r.wantLog(p, `left unchanged: `+why)
			}
		}
	}
	var cases []userFileCase
	add := func(name string, setup func(t *testing.T, r *faultRig), check func(t *testing.T, r *faultRig) func(t *testing.T, r *faultRig, p hookProc)) {
		var c func(t *testing.T, r *faultRig, p hookProc)
		cases = append(cases, userFileCase{name: name,
			setup: func(t *testing.T, r *faultRig) { setup(t, r); c = check(t, r) },
			check: func(t *testing.T, r *faultRig, p hookProc) { c(t, r, p) }})
	}
	write := func(r *faultRig, name, data string, mode os.FileMode) {
		os.WriteFile(filepath.Join(r.project, name), []byte(data), mode)
	}
	add("symlink-outside-project", func(t *testing.T, r *faultRig) {
		shared := filepath.Join(r.root, "dotfiles", "AGENTS.md")
		os.MkdirAll(filepath.Dir(shared), 0o755)
		os.WriteFile(shared, []byte("# my global rules\n"), 0o644)
		os.Symlink(shared, filepath.Join(r.project, "AGENTS.md"))
		os.Symlink(shared, filepath.Join(r.project, ".gitignore"))
	}, unchanged("it is a symlink to a file outside the project", "AGENTS.md", ".gitignore", "../../dotfiles/AGENTS.md"))
	add("symlink-dangling", func(t *testing.T, r *faultRig) {
		os.Symlink("does-not-exist.md", filepath.Join(r.project, "CLAUDE.md"))
	}, unchanged("it is a symlink whose target cannot be resolved", "CLAUDE.md"))
	add("symlink-inside-project", func(t *testing.T, r *faultRig) {
		write(r, "CLAUDE.md", "# rules\n", 0o644)
		os.Symlink("CLAUDE.md", filepath.Join(r.project, "AGENTS.md"))
	}, func(t *testing.T, r *faultRig) func(t *testing.T, r *faultRig, p hookProc) {
		return func(t *testing.T, r *faultRig, p hookProc) {
			if fi, err := os.Lstat(filepath.Join(r.project, "AGENTS.md")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("AGENTS.md is no longer a symlink")
			}
			b, _ := os.ReadFile(filepath.Join(r.project, "CLAUDE.md"))
			if string(b) != "# rules\n\n"+publish.PointerBlock {
				t.Errorf("CLAUDE.md = %q", b)
			}
		}
	})
	add("read-only", func(t *testing.T, r *faultRig) {
		write(r, "AGENTS.md", "# read only rules\n", 0o444)
	}, unchanged("it is read-only", "AGENTS.md"))
	add("huge", func(t *testing.T, r *faultRig) {
		write(r, "CLAUDE.md", strings.Repeat("# a very long rules file line\n", 2<<20/30), 0o644)
	}, unchanged("it is larger than", "CLAUDE.md"))
	add("damaged-marker", func(t *testing.T, r *faultRig) {
		write(r, "AGENTS.md", "# rules\n<!--CARRYOVER:START-->\nold text the user kept\n", 0o644)
		write(r, "CLAUDE.md", "# rules\n<!--CARRYOVER:END-->\n<!--CARRYOVER:START-->\n", 0o644)
	}, unchanged("its carryover marker block is damaged", "AGENTS.md", "CLAUDE.md"))
	keepsBytes := func(name, orig string, crlf bool) func(t *testing.T, r *faultRig) func(t *testing.T, r *faultRig, p hookProc) {
		return func(t *testing.T, r *faultRig) func(t *testing.T, r *faultRig, p hookProc) {
			return func(t *testing.T, r *faultRig, p hookProc) {
				b, _ := os.ReadFile(filepath.Join(r.project, name))
				if !strings.HasPrefix(string(b), orig) {
					t.Errorf("%s lost user bytes: %q", name, clipStr(string(b), 200))
				}
				added := string(b[len(orig):])
				if crlf && strings.Count(added, "\n") != strings.Count(added, "\r\n") {
					t.Errorf("%s: appended lines are not CRLF: %q", name, added)
				}
			}
		}
	}
	add("crlf", func(t *testing.T, r *faultRig) {
		write(r, "AGENTS.md", "# rules\r\nuse tabs\r\n", 0o644)
		write(r, ".gitignore", "bin/\r\n*.o", 0o644)
	}, func(t *testing.T, r *faultRig) func(t *testing.T, r *faultRig, p hookProc) {
		a := keepsBytes("AGENTS.md", "# rules\r\nuse tabs\r\n", true)(t, r)
		return func(t *testing.T, r *faultRig, p hookProc) {
			a(t, r, p)
			// The project's .gitignore is never edited (.carryover/ has its own).
			if got := fileState(filepath.Join(r.project, ".gitignore")); got != "bin/\r\n*.o" {
				t.Errorf(".gitignore changed: %q", got)
			}
		}
	})
	add("bom", func(t *testing.T, r *faultRig) {
		write(r, "CLAUDE.md", "\xef\xbb\xbf# rules with a BOM\n", 0o644)
	}, keepsBytes("CLAUDE.md", "\xef\xbb\xbf# rules with a BOM\n", false))
	return cases
}

// guestByDefault: with the default settings (pointer = "auto", Claude
// Code's injection working) a project gets .carryover/ and nothing else:
// no AGENTS.md, CLAUDE.md or .gitignore, and the next session still gets
// the handoff.
func guestByDefault(t *testing.T, r *faultRig) {
	r.setTranscript(r.sid, append(claudeFixture(t, "session-tools.jsonl"), canaryLines(r.sid, 0, 3)...))
	r.snap("Stop")
	if p := r.snap("SessionStart"); !strings.Contains(p.Stdout, "[CARRYOVER]") {
		t.Fatalf("no injection: %q", p.Stdout)
	}
	for _, name := range []string{"AGENTS.md", "CLAUDE.md", "GEMINI.md", ".gitignore"} {
		if _, err := os.Lstat(filepath.Join(r.project, name)); err == nil {
			t.Errorf("%s was written", name)
		}
	}
	if out := gitRun(t, r.project, "status", "--porcelain", "--untracked-files=all"); out != "" {
		t.Errorf("git sees changes:\n%s", out)
	}
	r.checkRows()
}

// alwaysPointer sets pointer = "always" in the rig's carryover config.
func alwaysPointer(t *testing.T, r *faultRig) {
	t.Helper()
	os.MkdirAll(r.chome, 0o700)
	if err := os.WriteFile(filepath.Join(r.chome, "config.toml"), []byte("pointer = \"always\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// fileState is a file's link target or bytes ("" when absent).
func fileState(p string) string {
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		l, _ := os.Readlink(p)
		return "symlink:" + l
	}
	b, _ := os.ReadFile(p)
	return string(b)
}

func faultUserFile(t *testing.T, r *faultRig, u userFileCase) {
	// The pointer block is written only where needed by default (issue
	// 24); these cases are about how it is written, so it is asked for.
	alwaysPointer(t, r)
	u.setup(t, r)
	r.setTranscript(r.sid, append(claudeFixture(t, "session-tools.jsonl"), canaryLines(r.sid, 0, 3)...))
	p := r.snap("Stop")
	r.bound(p)
	if _, err := os.Stat(publish.HandoffPath(r.project)); err != nil {
		t.Errorf("no handoff: %v", err)
	}
	u.check(t, r, p)
	// .carryover/ stays out of git whatever happened to .gitignore.
	if out := gitRun(t, r.project, "status", "--porcelain", "--untracked-files=all"); strings.Contains(out, ".carryover") {
		t.Errorf("git sees carryover's files:\n%s", out)
	}
	r.checkRows()
}

// --- privacy by construction --------------------------------------------------------------

// privacyByConstruction: carryover's state is private (files 0600, dirs
// 0700), the committed pointer blocks are the static text and nothing of
// the task, and git ignores .carryover/ (its own .gitignore is written
// before any payload; the kill -9 case checks that at random kill points).
func privacyByConstruction(t *testing.T, r *faultRig) {
	alwaysPointer(t, r)
	r.setTranscript(r.sid, append(claudeFixture(t, "session-tools.jsonl"), canaryLines(r.sid, 0, 3)...))
	r.snap("Stop")
	p := r.snap("SessionStart")
	if p.Stdout == "" {
		t.Fatal("no injection")
	}
	modes := map[string]os.FileMode{
		r.chome:                                             0o700,
		filepath.Join(r.chome, ledger.FileName):             0o600,
		filepath.Join(r.chome, "carryover.log"):             0o600,
		filepath.Join(r.chome, "handoff.md"):                0o600,
		publish.Dir(r.project):                              0o700,
		publish.HandoffPath(r.project):                      0o600,
		filepath.Join(publish.Dir(r.project), ".gitignore"): 0o600,
	}
	for path, want := range modes {
		fi, err := os.Stat(path)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s has mode %o, want %o", path, got, want)
		}
	}
	h, _ := os.ReadFile(publish.HandoffPath(r.project))
	if !strings.Contains(string(h), "CANARY-PROMPT") {
		t.Errorf("the handoff does not carry the task (test premise): %s", h)
	}
	for _, name := range []string{"AGENTS.md", "CLAUDE.md"} {
		b, err := os.ReadFile(filepath.Join(r.project, name))
		if err != nil || string(b) != publish.PointerBlock {
			t.Errorf("%s is not exactly the static pointer block (%v):\n%s", name, err, b)
		}
	}
	gitRun(t, r.project, "check-ignore", "-q", ".carryover/handoff.md")
	if out := gitRun(t, r.project, "status", "--porcelain", "--untracked-files=all"); strings.Contains(out, ".carryover") {
		t.Errorf("git sees carryover's files:\n%s", out)
	}
	r.checkRows()
}
