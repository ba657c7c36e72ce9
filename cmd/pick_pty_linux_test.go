package cmd

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/term"
)

// ptyManual runs carryover args on the slave side of a pseudo-terminal,
// with the fixture stores of four agents as HOME.
func ptyManual(t *testing.T, args ...string) (scr *screen, master func(string), done chan int, errb *bytes.Buffer) {
	t.Helper()
	home, _ := filepath.Abs("../testdata/stores/home")
	e, _, eb := manualEnv(t, map[string]string{"HOME": home, "NO_COLOR": "1"}, nil)
	e.WorkDir = t.TempDir()
	m, slave := openPTY(t)
	scr = readScreen(m)
	e.Stdin, e.Stdout = slave, slave
	e.StdinTTY, e.StdoutTTY = true, true
	e.MakeRaw = func() (func(), error) {
		st, err := term.MakeRaw(int(slave.Fd()))
		if err != nil {
			return nil, err
		}
		return func() { term.Restore(int(slave.Fd()), st) }, nil
	}
	done = make(chan int, 1)
	go func() { done <- Main(append([]string{"carryover"}, args...), e) }()
	return scr, func(s string) { m.Write([]byte(s)) }, done, eb
}

// TestHandoffPickPTY: handoff --pick lists the sessions newest first on
// the terminal, j moves, enter hands off the one under the cursor.
func TestHandoffPickPTY(t *testing.T) {
	scr, keys, done, errb := ptyManual(t, "handoff", "--pick", "--stdout", "--no-clipboard")
	scr.waitFor("Session (")
	frame := lastFrame(scr.String())
	rows := regexp.MustCompile(`(?m)^(?:> |  )\(.\) (\S+ \S+)`).FindAllStringSubmatch(frame, -1)
	if len(rows) < 3 || !strings.HasPrefix(frame[strings.Index(frame, "\n")+1:], "> (•) ") {
		t.Fatalf("picker frame:\n%s", frame)
	}
	keys("j\r")
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errb, scr.String())
	}
	want := "using " + strings.Replace(rows[1][1], " ", " session ", 1)
	if !strings.Contains(errb.String(), want) {
		t.Errorf("stderr %q lacks %q (the second row)", errb, want)
	}
}

// TestPickCancelAndNoTerminal: q exits 130 having done nothing; without a
// terminal --pick is a usage error (2).
func TestPickCancelAndNoTerminal(t *testing.T) {
	scr, keys, done, errb := ptyManual(t, "list", "--pick", "--all")
	scr.waitFor("Session (")
	keys("q")
	if code := <-done; code != ExitCancelled || !strings.Contains(errb.String(), "cancelled") {
		t.Fatalf("q: exit %d, stderr %q", code, errb)
	}
	e, _, eb := manualEnv(t, nil, nil)
	if code := Main([]string{"carryover", "handoff", "--pick"}, e); code != ExitUsage || !strings.Contains(eb.String(), "--pick needs a terminal") {
		t.Errorf("no terminal: exit %d, stderr %q", code, eb)
	}
}

// TestListPickPrintsID: list --pick prints the chosen session's full id.
func TestListPickPrintsID(t *testing.T) {
	scr, keys, done, errb := ptyManual(t, "list", "--pick", "--all")
	scr.waitFor("Session (")
	first := regexp.MustCompile(`> \(•\) \S+ (\S+)`).FindStringSubmatch(lastFrame(scr.String()))
	if first == nil {
		t.Fatalf("picker frame:\n%s", scr.String())
	}
	keys("\r")
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	scr.waitFor("\n" + first[1]) // the full id, alone on the line after the list
	if !regexp.MustCompile(`(?m)^` + first[1] + `[0-9a-f-]*\r?$`).MatchString(scr.String()) {
		t.Errorf("no full id after the list:\n%q", scr.String())
	}
}
