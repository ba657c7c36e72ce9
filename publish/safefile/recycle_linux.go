package safefile

import "golang.org/x/sys/unix"

// Linux's renameat2 (RENAME_EXCHANGE, RENAME_NOREPLACE) and write leases make
// recycled writes possible (writeRecycled).
var renameat2 = unix.Renameat2

const (
	renameExchange  = unix.RENAME_EXCHANGE
	renameNoReplace = unix.RENAME_NOREPLACE
	fSetLease       = unix.F_SETLEASE
)
