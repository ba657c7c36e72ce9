package cmd

import (
	"errors"
	"testing"
	"time"
)

func TestRunByGivesUpOnABlockedStep(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	ok, err := runBy(time.Now().Add(50*time.Millisecond), func() error { <-block; return nil })
	if ok || err != nil {
		t.Errorf("blocked step: ok=%v err=%v", ok, err)
	}
	ok, err = runBy(time.Now().Add(time.Hour), func() error { return errors.New("x") })
	if !ok || err == nil {
		t.Errorf("finished step: ok=%v err=%v", ok, err)
	}
	ok, err = runBy(time.Now().Add(time.Hour), func() error { panic("boom") })
	if !ok || err == nil {
		t.Errorf("panicking step: ok=%v err=%v", ok, err)
	}
	if got := watchdogGrace(900 * time.Millisecond); got != 450*time.Millisecond {
		t.Errorf("grace(900ms) = %s", got)
	}
}
