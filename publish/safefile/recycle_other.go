//go:build !linux && !windows

package safefile

// Recycled writes need Linux's RENAME_EXCHANGE and write leases; elsewhere
// every write is a new temp file (writeRecycled sees a nil renameat2).
var renameat2 func(olddirfd int, oldpath string, newdirfd int, newpath string, flags uint) error

const renameExchange, renameNoReplace, fSetLease = 0, 0, 0
