package cmd

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
)

// openDescriptions points aenv at the listers' description cache
// (adapters.DescriptionFile, in carryover's home, ledger or not) and
// opens the ledger for the sessions only it knows. No ledger is created
// for a listing: nil without one. Waits for another process's lock are
// bounded: a listing is only worth a short wait.
func openDescriptions(e *Env, aenv *adapters.Env) (*ledger.Ledger, *adapters.DescriptionFile) {
	d := adapters.OpenDescriptionFile(e.Home())
	aenv.Descriptions = d
	if !fileExists(filepath.Join(e.Home(), ledger.FileName)) {
		return nil, d
	}
	l, err := ledger.OpenBy(e.Home(), time.Now().Add(2*time.Second))
	if err != nil {
		return nil, d
	}
	return l, d
}

// forgetListed drops a forgotten session from the list cache.
func forgetListed(e *Env, id, transcript string) {
	if err := adapters.OpenDescriptionFile(e.Home()).Forget(id, transcript); err != nil {
		fmt.Fprintf(e.Stderr, "carryover: could not drop the session from %s: %v\n", filepath.Join(e.Home(), adapters.ListCacheName), err)
	}
}
