package e2e

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The suite's disk, measured on 2026-11-28 with `go test -count=1 -v
// ./cmd/e2e/` and a du of its TMPDIR every 2 s. Before this kit's private
// run dir: a peak of 370 MB (Copilot's 235 MB package unpacked in the HOME
// of each of its 11 fresh-HOME runs, 2.6 GB written a run; TestSecretEgress
// 192 MB, TestFaultMatrix/kill-9 165 MB) and 51 MB left behind in TMPDIR.
// Now: a peak of 201 MB (the test binary's 54 MB build beside the
// OpenCode tests' 100 MB HOMEs), nothing left behind.
const (
	// tmpNeed is the free space TMPDIR must have: the 201 MB peak, and as
	// much again for the other package `go test ./...` builds and runs
	// beside this one (-p 2 on CI's 2 cores) and for what a 2 s sample
	// misses.
	tmpNeed = 512 << 20
	// installNeed is what one agent not yet installed adds to CacheDir: the
	// 12 npm installs of Pinned and Newest take 3.5 GB (100-434 MB each)
	// and npm's tarball cache ~1.5 GB, ~420 MB an agent.
	installNeed = 450 << 20
	// copilotPkgNeed is Copilot's unpacked package (see RunCopilot).
	copilotPkgNeed = 235 << 20
	// lowFree: under this much free space at some moment of a failed run,
	// the failures are blamed on the disk (sampled each second, so a full
	// disk that was freed again within the second goes unseen).
	lowFree = 64 << 20
)

// runDirPrefix names each run's private TMPDIR under the system's: every
// t.TempDir, the carryover binary, and what the agents leave in TMPDIR
// (Claude's claude-<uid>/, Node's compile cache, the Bun-built OpenCode's
// 5.5 MB .so per run: 174 of them, 970 MB, had piled up in /tmp) go there
// and are removed with it.
const runDirPrefix = "carryover-e2e-run"

// runLock holds the run dir's lock until the process exits (an unreachable
// *os.File would be closed by its finalizer, releasing it).
var runLock *os.File

// newRunDir makes the run's private TMPDIR and points TMPDIR at it for this
// process and its children. First it removes the run dirs of runs that died
// before their cleanup (a -timeout panic, a kill): their lock is free.
func newRunDir() (string, error) {
	base := os.TempDir()
	old, _ := filepath.Glob(filepath.Join(base, runDirPrefix+"*", ".lock"))
	for _, l := range old {
		f, err := os.Open(l)
		if err != nil {
			continue
		}
		// A minute's age: a run that made its dir but has not locked it
		// yet is not dead.
		fi, err := f.Stat()
		if err == nil && time.Since(fi.ModTime()) > time.Minute && syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			os.RemoveAll(filepath.Dir(l))
		}
		f.Close()
	}
	root, err := os.MkdirTemp(base, runDirPrefix)
	if err != nil {
		return "", diskError(err, base)
	}
	if runLock, err = os.Create(filepath.Join(root, ".lock")); err == nil {
		err = syscall.Flock(int(runLock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err == nil {
		err = os.Setenv("TMPDIR", root)
	}
	if err != nil {
		os.RemoveAll(root)
		return "", diskError(err, base)
	}
	return root, nil
}

// diskShortfall says why the disk cannot hold the run ("" when it can):
// free space under TMPDIR below tmpNeed, plus installNeed for each agent
// CacheDir still lacks (counted against TMPDIR's file system when the cache
// is on it too).
func diskShortfall(tmp string) string {
	missing := 0
	for _, as := range []map[string]Agent{Pinned, Newest} {
		for _, a := range as {
			if _, err := os.Stat(agentBin(a)); err != nil {
				missing++
			}
		}
	}
	need, cacheNeed := int64(tmpNeed), int64(missing)*installNeed
	if _, err := os.Stat(copilotPkgCache(agentBin(Pinned["copilot-cli"]))); err != nil {
		cacheNeed += copilotPkgNeed
	}
	tmpDev, tmpFree := fsFree(tmp)
	cacheDev, cacheFree := fsFree(CacheDir())
	if cacheDev == tmpDev {
		need, cacheNeed = need+cacheNeed, 0
	}
	switch {
	case tmpFree >= 0 && tmpFree < need:
		return fmt.Sprintf("not enough disk for the end-to-end tests (ENOSPC ahead): %s free under TMPDIR (%s), they need %s there%s; free some space or set TMPDIR",
			mb(tmpFree), filepath.Dir(tmp), mb(need), installing(missing))
	case cacheFree >= 0 && cacheFree < cacheNeed:
		return fmt.Sprintf("not enough disk for the end-to-end tests (ENOSPC ahead): %s free under %s, they need %s there%s; free some space or set CARRYOVER_AGENT_CACHE",
			mb(cacheFree), CacheDir(), mb(cacheNeed), installing(missing))
	}
	return ""
}

func installing(agents int) string {
	if agents == 0 {
		return ""
	}
	return fmt.Sprintf(" (with %d agents to install into %s)", agents, CacheDir())
}

// fsFree is the device and the free bytes (-1: unknown) of the file system
// holding dir, or its nearest existing parent.
func fsFree(dir string) (uint64, int64) {
	for {
		var st syscall.Stat_t
		var fs syscall.Statfs_t
		if syscall.Stat(dir, &st) == nil && syscall.Statfs(dir, &fs) == nil {
			return uint64(st.Dev), int64(fs.Bavail) * int64(fs.Bsize)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return 0, -1
		}
		dir = parent
	}
}

// watchFree samples the free space under dir every second until the
// returned func is called, which returns the lowest sample (a statfs a
// second costs nothing measurable).
func watchFree(dir string) func() int64 {
	_, low := fsFree(dir)
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if _, f := fsFree(dir); f >= 0 && f < low {
					low = f
				}
			}
		}
	}()
	return func() int64 {
		close(done)
		<-stopped
		return low
	}
}

func mb(n int64) string { return fmt.Sprintf("%d MB", n>>20) }

// diskError is err, said in one line with the free space when it is ENOSPC.
func diskError(err error, dir string) error {
	if errors.Is(err, syscall.ENOSPC) {
		_, free := fsFree(dir)
		return fmt.Errorf("the disk is full (ENOSPC, %s free under %s): %v", mb(free), dir, err)
	}
	return err
}

// failIfDiskFull fails t with one line when an agent's output says it ran
// out of disk: left alone, that output is pages of write errors (each of
// CI's Copilot runs printed ~40 KB of TAR_ENTRY_ERROR(ENOSPC)).
func failIfDiskFull(t testing.TB, name, output string) {
	t.Helper()
	if strings.Contains(output, "ENOSPC") || strings.Contains(output, "no space left on device") {
		_, free := fsFree(os.TempDir())
		_, cacheFree := fsFree(CacheDir())
		t.Fatalf("e2e kit: %s ran out of disk (ENOSPC): %s free under TMPDIR (%s), %s under %s; the suite needs %s in TMPDIR",
			name, mb(free), os.TempDir(), mb(cacheFree), CacheDir(), mb(tmpNeed))
	}
}
