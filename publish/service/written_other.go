//go:build !unix

package service

// notWritten: Windows keeps no changed time apart from the modified one, so nothing says a file was unpacked.
func notWritten(string) string { return "" }
