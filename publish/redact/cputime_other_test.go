//go:build !unix

package redact

func cpuSeconds() float64 { return 0 }
