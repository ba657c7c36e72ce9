// Command carryover keeps AI coding agents on task across sessions,
// compactions and tool switches. See README.md.
package main

import (
	"os"

	"github.com/carryover/carryover/cmd"
)

func main() {
	os.Exit(cmd.Main(os.Args, cmd.OSEnv()))
}
