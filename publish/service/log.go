package service

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/publish"
)

// LogMax is the size at which carryover.log is rotated to carryover.log.1.
const LogMax = 1 << 20

// Log appends one line per message to $CARRYOVER_HOME/carryover.log. Lines name events, ids, counts and errors, never
// transcript content; failures are swallowed (the hook path must not break). It has a file of its own: the feature
// packages call it back from the hook's steps (Logf), and a Stop's call chain enters no service file twice.
type Log struct {
	Path   string
	now    func() time.Time
	Prefix string
	Redact func(string) string
	Muted  bool // a hook in an ignored project writes no log line
}

func NewLog(home string, now func() time.Time) *Log {
	return &Log{Path: filepath.Join(home, "carryover.log"), now: now}
}

// Printf writes one line (nothing when l is nil or muted).
func (l *Log) Printf(format string, args ...any) {
	if l == nil || l.Muted {
		return
	}
	// One line, no terminal escapes: session ids, paths and error text come from hook payloads and transcripts
	// (publish.OneLine).
	msg := publish.OneLine(l.Prefix + fmt.Sprintf(format, args...))
	if l.Redact != nil {
		msg = l.Redact(msg)
	}
	if err := os.MkdirAll(filepath.Dir(l.Path), 0o700); err != nil {
		return
	}
	if fi, err := os.Stat(l.Path); err == nil && fi.Size() > LogMax {
		_ = os.Rename(l.Path, l.Path+".1")
	}
	f, err := os.OpenFile(l.Path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	_, _ = f.WriteString(l.now().UTC().Format(time.RFC3339) + " " + msg + "\n")
	_ = f.Close()
}

func (l *Log) notes(notes []string) {
	for _, n := range notes {
		l.Printf("%s", n)
	}
}

// err logs err, when there is one, as what failed.
func (l *Log) err(what string, err error) {
	if err != nil {
		l.Printf("%s: %v", what, err)
	}
}

// recovered logs the ledger's recovery from damage, when it recovered.
func (l *Log) recovered(led *ledger.Ledger) {
	if n := led.RecoveryNote(); n != "" {
		l.Printf("%s", n)
	}
}
