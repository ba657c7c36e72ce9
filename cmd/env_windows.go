package cmd

import "github.com/atotto/clipboard"

// Windows has no clipboard program that takes UTF-8 on stdin; atotto/clipboard calls the Win32 API (and, unlike on
// Linux, searches nothing at init).
func init() { systemClipboard = func(_ *Env, text string) error { return clipboard.WriteAll(text) } }
