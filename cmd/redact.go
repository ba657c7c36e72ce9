package cmd

import "github.com/carryover/carryover/publish/redact"

// redactString is the redaction applied at ingest and at every egress when
// redaction is on (the default; `redact = false` in config turns it off).
var redactString = redact.String
