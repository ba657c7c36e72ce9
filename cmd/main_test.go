package cmd

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain also makes this test binary a real carryover executable for the
// scripts: testscript copies it onto their PATH as carryover-exe, which is
// what hook stubs written by an in-process `carryover install` run (doctor
// runs them as the agents would).
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		scriptExeName: func() { os.Exit(Main(os.Args, OSEnv())) },
	})
}

const scriptExeName = "carryover-exe"
