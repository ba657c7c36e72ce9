package cmd

import (
	"path/filepath"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
)

// openDescriptions opens the ledger for a listing and points aenv at its
// cached transcript descriptions (issue 17: a warm `list --all` of 200
// sessions stats files instead of decoding 200 heads and tails). No
// ledger is created for it: nil, nil without one. Waits for another
// process's lock are bounded: the cache is only worth a short wait.
func openDescriptions(e *Env, aenv *adapters.Env) (*ledger.Ledger, *ledger.Descriptions) {
	if !fileExists(filepath.Join(e.Home(), ledger.FileName)) {
		return nil, nil
	}
	l, err := ledger.OpenBy(e.Home(), time.Now().Add(2*time.Second))
	if err != nil {
		return nil, nil
	}
	d, err := l.Descriptions()
	if err != nil {
		return l, nil
	}
	aenv.Descriptions = d
	return l, d
}
