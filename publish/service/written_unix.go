//go:build unix

package service

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// notWritten says why a session file inside a project was not written there by the user's agent ("" when nothing
// says so). An agent appends: each write moves the file's modified and changed times together (equal to the
// nanosecond on Linux). tar, unzip, cp -p, rsync -a and a sync client restore the modified time and the kernel stamps
// the changed time when they do, which no one can set; so times more than writeSlack apart mean the file was unpacked
// or copied here. A file of another user (tar as root keeps the archive's owner) is not the user's either.
func notWritten(path string) string {
	var st unix.Stat_t
	switch {
	case unix.Stat(path, &st) != nil:
		return ""
	case st.Uid != uint32(os.Getuid()):
		return NotYoursOwner
	case time.Unix(st.Ctim.Unix()).Sub(time.Unix(st.Mtim.Unix())).Abs() > writeSlack:
		return NotYoursUnpacked
	}
	return ""
}
