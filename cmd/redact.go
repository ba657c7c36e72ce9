package cmd

// redactString is replaced by publish/redact.String once that package lands.
var redactString = func(s string) string { return s }
