package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/carryover/carryover/publish"
)

// LogMax is the size at which carryover.log is rotated to carryover.log.1.
const LogMax = 1 << 20

// logger appends one line per message to $CARRYOVER_HOME/carryover.log.
// Messages name events, ids, counts and errors; they never carry transcript
// content. Logging failures are swallowed: the hook path must not break.
type logger struct {
	path   string
	now    func() time.Time
	prefix string
	redact func(string) string
	// muted: a hook in an ignored project writes no log line.
	muted bool
}

func newLogger(e *Env) *logger {
	return &logger{path: filepath.Join(e.Home(), "carryover.log"), now: e.Now}
}

func (l *logger) Printf(format string, args ...any) {
	if l == nil || l.muted {
		return
	}
	// One line, no terminal escapes: session ids, paths and error text
	// come from hook payloads and transcripts (publish.OneLine).
	msg := publish.OneLine(l.prefix + fmt.Sprintf(format, args...))
	if l.redact != nil {
		msg = l.redact(msg)
	}
	line := l.now().UTC().Format(time.RFC3339) + " " + msg + "\n"
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return
	}
	if fi, err := os.Stat(l.path); err == nil && fi.Size() > LogMax {
		_ = os.Rename(l.path, l.path+".1")
	}
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	_, _ = f.WriteString(line)
	_ = f.Close()
}
