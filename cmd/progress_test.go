package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSpinnerShowsBytesRead: while a transcript is read on a terminal, the
// spinner line says how much of the file has been read; stopping it clears
// the line and the hook into the reader.
func TestSpinnerShowsBytesRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(path, bytes.Repeat([]byte("x"), 3<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	var errb lockedBuffer
	e := &Env{StderrTTY: true, Stderr: &errb, Getenv: func(string) string { return "" }}
	stop := spinner(e, "reading the transcript…")
	e.progress(path, 1<<20)
	want := "reading the transcript… " + humanBytes(1<<20) + " of " + humanBytes(3<<20)
	// No deadline: the spinner redraws every 100 ms; the test's own timeout
	// is the only clock.
	for !strings.Contains(errb.String(), want) {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if e.progress != nil {
		t.Error("progress hook left set after stop")
	}
	if !strings.HasSuffix(errb.String(), "\r\x1b[K") {
		t.Errorf("line not cleared: %q", errb.String())
	}
}
