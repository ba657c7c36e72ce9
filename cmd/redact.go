package cmd

import "github.com/carryover/carryover/publish/redact"

// clip is redact.Clip: no partial word (no half secret) survives a cut.
func clip(s string, n int) string { return redact.Clip(s, n) }
