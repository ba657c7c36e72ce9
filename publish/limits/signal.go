package limits

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
)

// `carryover run` and the hooks of the agent it started talk through files
// under $CARRYOVER_HOME/run/<run id>/, never through a daemon:
//
//	<gen>.session   the session id the generation's first SessionStart named
//	<gen>.critical  a Signal: that session's context reached CRITICAL
//
// The wrapper exports RunEnv = "<run id>.<gen>" and RunPIDEnv = its pid to
// the agent, whose hooks inherit them. It acts on a signal only when the
// run id, the generation, the registered session and its own pid all match,
// so a stale file, another session's signal or a copied environment never
// ends anything.
const (
	RunEnv    = "CARRYOVER_RUN_ID"
	RunPIDEnv = "CARRYOVER_RUN_PID"
)

// Signal is what a hook writes when the session it runs for reaches
// CRITICAL under `carryover run`.
type Signal struct {
	Run     string `json:"run"` // "<run id>.<gen>"
	PID     int    `json:"pid"` // the wrapper's pid (RunPIDEnv)
	Tool    string `json:"tool"`
	Session string `json:"session"`
	Level   string `json:"level"`
	Percent int    `json:"percent"`
	At      time.Time
}

// RunDir is a run's directory.
func RunDir(home, runID string) string { return filepath.Join(home, "run", runID) }

// splitRun splits "<id>.<gen>"; ok is false for anything else (the id is
// hex, so a path cannot be smuggled through it).
func splitRun(v string) (id string, gen int, ok bool) {
	id, g, found := strings.Cut(v, ".")
	n, err := strconv.Atoi(g)
	if !found || len(id) < 8 || len(id) > 64 || strings.Trim(id, "0123456789abcdef") != "" || err != nil || n < 0 || n > 1000 {
		return "", 0, false
	}
	return id, n, true
}

// RunHook is the hook's side: under `carryover run` (run = $CARRYOVER_RUN_ID
// non-empty) it registers the generation's session at its first start and
// writes the CRITICAL signal for that session. It returns a note for the
// log ("" when there was nothing to do).
func RunHook(home, run, pid, tool, session string, start bool, lvl distill.ContextLevel, pct int, now time.Time) (string, error) {
	if run == "" {
		return "", nil
	}
	id, gen, ok := splitRun(run)
	if !ok {
		return "", fmt.Errorf("%s=%q is not carryover's; ignored", RunEnv, run)
	}
	dir := RunDir(home, id)
	reg := filepath.Join(dir, strconv.Itoa(gen)+".session")
	if start {
		if _, err := os.Lstat(reg); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return "", err
			}
			return "run " + run + ": session registered", publish.WriteAtomic(reg, []byte(session+"\n"))
		}
	}
	if lvl != distill.ContextCritical {
		return "", nil
	}
	p, _ := strconv.Atoi(pid)
	b, _ := json.Marshal(Signal{Run: run, PID: p, Tool: tool, Session: session, Level: string(lvl), Percent: pct, At: now.UTC()})
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, strconv.Itoa(gen)+".critical")
	if _, err := os.Lstat(path); err == nil {
		return "", nil // signalled already
	}
	return "run " + run + ": CRITICAL signalled to carryover run", publish.WriteAtomic(path, b)
}

// ReadSignal is the wrapper's side: the verified CRITICAL signal of
// generation gen of run id, for the wrapper with pid and the agent tool;
// ok is false when there is none or it does not verify (why says why).
func ReadSignal(home, id string, gen, pid int, tool string) (sig Signal, ok bool, why string) {
	dir := RunDir(home, id)
	b, err := readSmall(filepath.Join(dir, strconv.Itoa(gen)+".critical"))
	if err != nil {
		return sig, false, ""
	}
	if json.Unmarshal(b, &sig) != nil {
		return sig, false, "unreadable signal"
	}
	reg, err := readSmall(filepath.Join(dir, strconv.Itoa(gen)+".session"))
	session := strings.TrimSpace(string(reg))
	switch {
	case sig.Run != id+"."+strconv.Itoa(gen):
		return sig, false, "signal for another run"
	case sig.PID != pid:
		return sig, false, "signal from another carryover run process"
	case err != nil || session == "":
		return sig, false, "no session registered for this run"
	case sig.Session != session:
		return sig, false, "signal for another session (" + shortID(sig.Session) + ", this run's is " + shortID(session) + ")"
	case tool != "" && sig.Tool != tool:
		return sig, false, "signal from another agent"
	}
	return sig, true, ""
}

// ClearSignal removes a generation's signal (one that did not verify is
// removed so it is not read again).
func ClearSignal(home, id string, gen int) {
	_ = os.Remove(filepath.Join(RunDir(home, id), strconv.Itoa(gen)+".critical"))
}

// readSmall reads a regular file of at most 4 KiB (never a FIFO or a link).
func readSmall(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return nil, fmt.Errorf("%s is not a small regular file", path)
	}
	return os.ReadFile(path)
}

func shortID(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
