//go:build !unix

package redact_test

func cpuSeconds() float64 { return 0 }
