//go:build unix

package redact

import "syscall"

// cpuSeconds is the process's user+system CPU time: on a shared machine
// wall-clock MB/s swings 3x with load, CPU time much less.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}
