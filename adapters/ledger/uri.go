package ledger

import (
	"net/url"
	"path/filepath"
	"strings"
)

// FileURI is the SQLite URI of the file at path with the given query
// (go-sqlite3 and SQLite parameters, already escaped). The path is
// percent-encoded: SQLite reads a URI, so a CARRYOVER_HOME holding '#'
// (fragment), '?' (query), '%' (escape) or a space would otherwise open a
// different file than the one carryover created and checked.
func FileURI(path, query string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs // a URI path is absolute: "file:/x" is the file x in the root
	}
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // "C:/x" on Windows becomes "file:///C:/x"
	}
	u := (&url.URL{Scheme: "file", Path: p}).String()
	if query != "" {
		u += "?" + query
	}
	return u
}
