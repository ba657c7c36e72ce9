package cmd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/term"
)

// openPTY opens a pseudo-terminal pair (Linux /dev/ptmx): the test types
// into master what a keyboard sends and reads the screen from it; the
// install runs on the slave, as on a user's terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminal on this machine: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("unlockpt: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("ptsname: %v", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// screen collects what the program writes to the terminal.
type screen struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	cond *sync.Cond
}

func readScreen(master *os.File) *screen {
	s := &screen{}
	s.cond = sync.NewCond(&s.mu)
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			s.mu.Lock()
			s.buf.Write(b[:n])
			s.cond.Broadcast()
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return s
}

// waitFor blocks until the screen shows text (no deadline: the test's own
// timeout is the only clock, so a busy machine cannot fail it).
func (s *screen) waitFor(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for !strings.Contains(s.buf.String(), text) {
		s.cond.Wait()
	}
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// lastFrame is the list as last drawn: what follows the final
// cursor-up, with the line clearing removed.
func lastFrame(out string) string {
	if m := regexp.MustCompile(`\x1b\[\d+A`).FindAllStringIndex(out, -1); len(m) > 0 {
		out = out[m[len(m)-1][1]:]
	}
	return strings.ReplaceAll(strings.ReplaceAll(out, "\r\x1b[2K", ""), "\r\n", "\n")
}

// ptyInstall runs `carryover install` on the slave side with raw mode
// available, as OSEnv would on a terminal.
func ptyInstall(t *testing.T, f *installFixture, slave *os.File, args ...string) chan int {
	f.env.Stdin, f.env.Stdout = slave, slave
	f.env.StdinTTY, f.env.StdoutTTY = true, true
	f.env.MakeRaw = func() (func(), error) {
		st, err := term.MakeRaw(int(slave.Fd()))
		if err != nil {
			return nil, err
		}
		return func() { term.Restore(int(slave.Fd()), st) }, nil
	}
	done := make(chan int, 1)
	go func() { done <- Main(append([]string{"carryover", "install"}, args...), f.env) }()
	return done
}

// TestInstallPickerPTY drives the checkbox picker through a real
// pseudo-terminal: arrows and j move, space toggles, enter confirms; the
// resume question follows; the choices land in config.toml and the agents'
// configs.
func TestInstallPickerPTY(t *testing.T) {
	f := newInstallFixture(t, fakeAgents)
	master, slave := openPTY(t)
	scr := readScreen(master)
	done := ptyInstall(t, f, slave)

	scr.waitFor("Agents to set up (")
	first := lastFrame(scr.String())
	for _, want := range []string{"> [x] Claude Code", "[x] Codex", "[ ] Gemini CLI", "[x] Aider"} {
		if !strings.Contains(first, want) {
			t.Errorf("first frame lacks %q:\n%s", want, first)
		}
	}
	// j: to Codex, space: off; ↓: to Gemini CLI, space: on; ↑↓ round trip;
	// enter. Then, typed ahead, the resume question: ↓ from ask, enter.
	master.Write([]byte("j \x1b[B \x1b[A\x1bOB\r" + "\x1b[B\r"))
	if code := <-done; code != 0 {
		t.Fatalf("install exited %d: %s\n%s", code, f.errb, scr.String())
	}
	scr.waitFor("When a new session starts with a handoff (")
	agentsFrame := scr.String()[:strings.Index(scr.String(), "When a new session starts")]
	last := lastFrame(agentsFrame)
	for _, want := range []string{"[x] Claude Code", "[ ] Codex", "> [x] Gemini CLI", "[x] Aider"} {
		if !strings.Contains(last, want) {
			t.Errorf("agents list after the keys lacks %q:\n%s", want, last)
		}
	}
	scr.waitFor(`resume = "brief" saved in`)
	if q := lastFrame(scr.String()); !strings.Contains(q, "> (•) brief") {
		t.Errorf("resume question after the keys:\n%s", q)
	}
	if got := f.savedTools(t); strings.Join(got, ",") != "claude,gemini,aider" {
		t.Errorf("saved tools = %v", got)
	}
	cfg, _ := os.ReadFile(filepath.Join(f.home, ".carryover", "config.toml"))
	if !strings.Contains(string(cfg), `resume = "brief"`) {
		t.Errorf("config.toml:\n%s", cfg)
	}
	if _, err := os.Stat(filepath.Join(f.home, ".claude", "settings.json")); err != nil {
		t.Errorf("Claude Code not set up: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.home, ".codex", "hooks.json")); err == nil {
		t.Error("Codex set up although unchecked")
	}
	if !termCooked(slave) {
		t.Error("terminal left in raw mode")
	}
}

// termCooked reports whether the terminal echoes and reads lines again.
func termCooked(f *os.File) bool {
	tio, err := getTermios(f)
	return err == nil && tio.Lflag&syscall.ICANON != 0 && tio.Lflag&syscall.ECHO != 0
}

func getTermios(f *os.File) (*syscall.Termios, error) {
	var tio syscall.Termios
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&tio))); e != 0 {
		return nil, e
	}
	return &tio, nil
}

// TestInstallPickerQuitWritesNothing: q leaves every file as it was.
func TestInstallPickerQuitWritesNothing(t *testing.T) {
	f := newInstallFixture(t, fakeAgents)
	master, slave := openPTY(t)
	scr := readScreen(master)
	done := ptyInstall(t, f, slave, "--resume", "silent")
	scr.waitFor("Agents to set up (")
	master.Write([]byte("j q"))
	if code := <-done; code != ExitCancelled || !strings.Contains(f.errb.String(), "install cancelled; nothing was written") {
		t.Fatalf("exit %d, stderr %q", code, f.errb)
	}
	if strings.Contains(scr.String(), "When a new session starts") {
		t.Error("--resume given, yet the resume question was asked")
	}
	for _, p := range []string{".carryover/config.toml", ".claude/settings.json", ".codex"} {
		if _, err := os.Stat(filepath.Join(f.home, p)); err == nil {
			t.Errorf("%s written after q", p)
		}
	}
	if !termCooked(slave) {
		t.Error("terminal left in raw mode")
	}
}

// TestInstallPickerUntickRemoves: unticking an agent whose hooks an
// earlier install wrote says they stay, and offers to remove them; picking
// "remove them" uninstalls them, "keep them" leaves them.
func TestInstallPickerUntickRemoves(t *testing.T) {
	f := newInstallFixture(t, fakeAgents)
	if code := f.run(t, "install", "--tools", "claude,codex", "--yes"); code != 0 {
		t.Fatalf("first install: %d %s", code, f.errb.String())
	}
	settings := filepath.Join(f.home, ".claude", "settings.json")
	codexHooks := filepath.Join(f.home, ".codex", "hooks.json")
	master, slave := openPTY(t)
	scr := readScreen(master)
	done := ptyInstall(t, f, slave, "--resume", "ask")
	scr.waitFor("Agents to set up (")
	// Untick Claude Code (first) and Codex (second), enter.
	master.Write([]byte(" j \r"))
	scr.waitFor("Claude Code is unticked; its carryover hooks in " + settings + " stay unless removed")
	master.Write([]byte("j\r")) // remove them
	scr.waitFor("Codex CLI is unticked")
	master.Write([]byte("\r")) // keep them
	if code := <-done; code != 0 {
		t.Fatalf("install exited %d: %s\n%s", code, f.errb, scr.String())
	}
	if b, _ := os.ReadFile(settings); strings.Contains(string(b), "snapshot --tool claude") {
		t.Errorf("Claude Code's hooks not removed:\n%s", b)
	}
	if b, _ := os.ReadFile(codexHooks); !strings.Contains(string(b), "snapshot --tool codex") {
		t.Errorf("Codex's hooks removed although kept:\n%s", b)
	}
}
