//go:build windows

package adapters

import "os"

// fileIdentity: Windows' FileInfo carries no file index; size and mtime
// alone decide there.
func fileIdentity(fi os.FileInfo) (dev, ino uint64) { return 0, 0 }
