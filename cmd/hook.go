package cmd

import (
	"os"
	"strings"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/publish/service"
)

// logger appends one line per message to $CARRYOVER_HOME/carryover.log
// (service.Log).
type logger = service.Log

func newLogger(e *Env) *logger { return service.NewLog(e.Home(), e.Now) }

// openLedger opens the ledger, logging a recovery from corruption.
func openLedger(e *Env, log *logger) (*ledger.Ledger, error) {
	l, err := ledger.Open(e.Home())
	if err != nil {
		return nil, err
	}
	if n := l.RecoveryNote(); n != "" {
		log.Printf("%s", n)
	}
	return l, nil
}

func logNotes(log *logger, notes []string) {
	for _, n := range notes {
		log.Printf("%s", n)
	}
}

func joinNames(names []string) string { return strings.Join(names, ", ") }

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// redactor returns the redaction function for cfg (identity when off).
func redactor(cfg Config) func(string) string { return service.Redactor(cfg) }
