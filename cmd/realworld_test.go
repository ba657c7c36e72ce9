package cmd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/resume"
)

// realworldDir is the corpus of session files other people recorded
// (../shared/realworld, never copied into the repository; SOURCES.md says
// where each came from). CARRYOVER_REALWORLD overrides it.
func realworldDir() string {
	if d := os.Getenv("CARRYOVER_REALWORLD"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "shared", "realworld")
}

// realworldRefused lists the files SOURCES.md marks "should be refused":
// not a format the agent really writes.
func realworldRefused(t *testing.T, dir string) map[string]bool {
	f, err := os.Open(filepath.Join(dir, "SOURCES.md"))
	if err != nil {
		t.Fatalf("the corpus has no SOURCES.md: %v", err)
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "| ") || !strings.Contains(l, "should be refused") {
			continue
		}
		out[strings.TrimSpace(strings.Split(l, "|")[1])] = true
	}
	return out
}

type realworldResult struct {
	file                     string
	rc                       int
	task, degraded           bool
	files, errs              int
	next                     bool
	lines                    int
	ms                       int64
	refusedClearly, mustFail bool
}

// TestRealworldCorpus runs `carryover handoff --transcript FILE --source
// AGENT --format json` over every file of the corpus and reports, per file:
// task found, files/errors/next action found, exit code, time and whether
// handoff.md stays within 50 lines. It fails on a crash, on a native file
// without a goal or with an over-long handoff.md, and on a file that
// should be refused but is not refused clearly (exit 3 naming the formats
// tried). Without the corpus it skips, except under CI=true, where it
// fails: the corpus is part of the check.
func TestRealworldCorpus(t *testing.T) {
	dir := realworldDir()
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		if os.Getenv("CI") == "true" {
			t.Fatalf("realworld corpus missing at %s (set CARRYOVER_REALWORLD)", dir)
		}
		t.Skipf("no realworld corpus at %s", dir)
	}
	refused := realworldRefused(t, dir)
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
	sort.Strings(files)
	var res []realworldResult
	for _, f := range files {
		tool := filepath.Base(filepath.Dir(f))
		name := tool + "/" + filepath.Base(f)
		if fi, err := os.Stat(f); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		r := runRealworld(t, f, tool)
		r.file = name
		if refused[name] {
			r.mustFail = true
			if r.rc != ExitParse || !r.refusedClearly {
				t.Errorf("%s should be refused with exit 3 naming the formats tried; got exit %d", name, r.rc)
			}
		} else {
			if r.rc != 0 || !r.task {
				t.Errorf("%s: native session without a handoff goal (exit %d)", name, r.rc)
			}
			if r.lines > publish.MaxLines {
				t.Errorf("%s: handoff.md has %d lines (max %d)", name, r.lines, publish.MaxLines)
			}
		}
		res = append(res, r)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| file | exit | task | files | errors | next | ms | handoff.md lines |\n|---|---|---|---|---|---|---|---|\n")
	var noTask, degraded, refusals, agents = 0, 0, 0, map[string]bool{}
	for _, r := range res {
		agents[strings.Split(r.file, "/")[0]] = true
		task := "-"
		switch {
		case r.task && r.degraded:
			task, degraded = "degraded", degraded+1
		case r.task:
			task = "yes"
		case !r.mustFail:
			noTask++
		}
		if r.mustFail && r.rc == ExitParse {
			task, refusals = "refused", refusals+1
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %d | %d | %v | %d | %d |\n", r.file, r.rc, task, r.files, r.errs, r.next, r.ms, r.lines)
	}
	fmt.Fprintf(&b, "\nfiles %d, agents %d, no task %d, degraded (best line + warning) %d, crashes 0, refusals %d of %d to refuse\n",
		len(res), len(agents), noTask, degraded, refusals, len(refused))
	t.Log(b.String())
}

func runRealworld(t *testing.T, path, tool string) (r realworldResult) {
	home := t.TempDir()
	proj := t.TempDir()
	e, out, errb := manualEnv(t, map[string]string{"CARRYOVER_HOME": home}, func(string) error { return nil })
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("%s: crashed: %v", path, p)
			r.rc = -1
		}
	}()
	start := time.Now()
	r.rc = Main([]string{"carryover", "handoff", "--transcript", path, "--source", tool, "--project", proj,
		"--format", "json", "--stdout", "--no-clipboard"}, e)
	r.ms = time.Since(start).Milliseconds()
	r.refusedClearly = strings.Contains(errb.String(), "tried")
	if r.rc != 0 {
		return r
	}
	var h resume.Handoff
	if err := json.Unmarshal(out.Bytes(), &h); err != nil {
		t.Errorf("%s: output is not JSON: %v", path, err)
		return r
	}
	r.task = strings.TrimSpace(h.Goal) != ""
	for _, w := range h.Warnings {
		if w == resume.NoRequestWarning {
			r.degraded = true
		}
	}
	r.files = len(h.Files.Created) + len(h.Files.Modified) + len(h.Files.Deleted)
	r.errs = len(h.Failed)
	r.next = strings.TrimSpace(h.Now) != "" && !strings.HasPrefix(h.Now, "confirm the task")
	// handoff.md as the hook path would write it from the same ledger rows.
	l, err := ledger.Open(home)
	if err != nil {
		t.Errorf("%s: open ledger: %v", path, err)
		return r
	}
	defer l.Close()
	s, err := l.Session(tool, h.Session)
	if err != nil {
		t.Errorf("%s: session %s not in the ledger: %v", path, h.Session, err)
		return r
	}
	rows, _ := l.Rows(s.ID, 4000)
	ledger.PromoteSubagentOnly(rows)
	d := distill.Distill(rows, distill.Options{Project: proj})
	md := publish.Render(d, publish.RenderOptions{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Session: h.Session})
	r.lines = strings.Count(strings.TrimRight(md, "\n"), "\n") + 1
	// CARRYOVER_REALWORLD_DUMP=dir keeps each handoff.md for reading by eye (the audit reads them as the next agent would).
	if dir := os.Getenv("CARRYOVER_REALWORLD_DUMP"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, strings.NewReplacer("/", "_", "\\", "_").Replace(filepath.Base(filepath.Dir(path))+"_"+filepath.Base(path))+".md"), []byte(md), 0o644)
	}
	return r
}
