package cmd

import "github.com/carryover/carryover/publish/redact"

// redactString is the redaction applied at ingest and at every egress when
// redaction is on (the default; `redact = false` in config turns it off).
var redactString = redact.String

// clip is redact.Clip: no partial word (no half secret) survives a cut.
func clip(s string, n int) string { return redact.Clip(s, n) }
