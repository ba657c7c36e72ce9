package cmd

import (
	"os"

	"github.com/carryover/carryover/publish/service"
)

// logger appends one line per message to $CARRYOVER_HOME/carryover.log
// (service.Log).
type logger = service.Log

func newLogger(e *Env) *logger { return service.NewLog(e.Home(), e.Now) }

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
