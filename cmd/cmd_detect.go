package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/specs"
)

func detectCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:        "detect",
		Usage:       "show which AI coding agents are installed (✓/✗); exit 1 when none is",
		Description: "An agent counts as detected when its binary is on PATH or its session store exists.",
		Flags:       []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		Action: func(c *cli.Context) error {
			return runDetect(e, c.Bool("json"))
		},
	}
}

// Detection is one agent's `detect` line.
type Detection struct {
	Tool     string   `json:"agent"`
	Display  string   `json:"display"`
	Detected bool     `json:"detected"`
	Binary   string   `json:"binary,omitempty"`
	Version  string   `json:"version,omitempty"`
	Stores   []string `json:"stores,omitempty"` // existing session stores
	Hint     string   `json:"hint,omitempty"`
	Problem  string   `json:"problem,omitempty"`

	// VersionFrom: package.json, install path, self-update or version command.
	VersionFrom string `json:"version_from,omitempty"`
}

func detect(e *Env, project string) ([]Detection, error) {
	tab, err := specs.Load()
	if err != nil {
		return nil, err
	}
	aenv := adapterEnv(e)
	var out []Detection
	for _, a := range detectAgents(e, tab) {
		tl, _ := tab.Tool(a.Tool)
		d := Detection{Tool: a.Tool, Display: a.Display, Binary: a.Binary, Version: a.Version, VersionFrom: a.VersionFrom, Problem: a.Problem}
		var cands []string
		if l, ok := adapters.ListerFor(a.Tool); ok {
			cands = append(cands, l.Stores(aenv)...)
		}
		for _, p := range tl.TranscriptPaths(runtime.GOOS, e.Getenv, e.UserHome()) {
			if !filepath.IsAbs(p) {
				if project == "" {
					continue
				}
				p = filepath.Join(project, p)
			}
			cands = append(cands, p)
		}
		seen := map[string]bool{}
		for _, p := range cands {
			if seen[p] {
				continue
			}
			seen[p] = true
			if _, err := os.Stat(p); err == nil {
				d.Stores = append(d.Stores, p)
			}
		}
		d.Detected = d.Binary != "" || len(d.Stores) > 0
		if !d.Detected {
			d.Hint = tl.InstallHint
			d.Problem = ""
		}
		out = append(out, d)
	}
	return out, nil
}

func runDetect(e *Env, asJSON bool) error {
	project, _ := currentProject(e, "")
	stop := spinner(e, "looking for agents…")
	ds, err := detect(e, project)
	stop()
	if err != nil {
		return exitf(ExitError, "%v", err)
	}
	n := 0
	for _, d := range ds {
		if d.Detected {
			n++
		}
	}
	if asJSON {
		if err := printJSON(e.Stdout, struct {
			Agents   []Detection `json:"agents"`
			Detected int         `json:"detected"`
		}{nonNil(ds), n}); err != nil {
			return err
		}
	} else {
		for _, d := range ds {
			mark := colour(e, e.StdoutTTY, "31", "✗")
			if d.Detected {
				mark = colour(e, e.StdoutTTY, "32", "✓")
			}
			line := fmt.Sprintf("%s %-22s", mark, d.Display)
			switch {
			case d.Detected:
				var parts []string
				if d.Version != "" {
					parts = append(parts, d.Version)
				}
				if d.Binary != "" {
					parts = append(parts, d.Binary)
				} else {
					parts = append(parts, "(not on PATH)")
				}
				if len(d.Stores) > 0 {
					parts = append(parts, "sessions: "+strings.Join(d.Stores, ", "))
				}
				if d.Problem != "" {
					parts = append(parts, "note: "+d.Problem)
				}
				line += " " + strings.Join(parts, "  ")
			default:
				line += " not found (install: " + d.Hint + ")"
			}
			fmt.Fprintln(e.Stdout, strings.TrimRight(line, " "))
		}
	}
	if n == 0 {
		return exitf(ExitError, "no agents detected: none of %d supported agents is on PATH or has a session store; "+
			"install one (e.g. %s), or set %s if yours live elsewhere", len(ds), firstHint(ds), strings.Join(specs.StoreVariables(runtime.GOOS), "/"))
	}
	return nil
}

// firstHint is the install hint of the first agent of the table.
func firstHint(ds []Detection) string {
	if len(ds) == 0 {
		return "see `carryover detect`"
	}
	return ds[0].Hint
}
