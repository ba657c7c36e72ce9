//go:build !unix

package adapters_test

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs on this system") }
