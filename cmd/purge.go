package cmd

// uninstall --purge: every trace of carryover in the projects the ledger
// knows (publish.Purge), and with --yes the ledger and carryover's home.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
)

func runPurge(e *Env, dryRun, yes bool) error {
	home := e.Home()
	var projects []string
	if path := filepath.Join(home, ledger.FileName); fileExists(path) {
		l, err := ledger.Open(home)
		if err != nil {
			return exitf(ExitError, "cannot read the ledger %s to find the projects: %v; no project purged", path, err)
		}
		projects, err = l.KnownProjects()
		l.Close()
		if err != nil {
			return exitf(ExitError, "cannot read the ledger %s to find the projects: %v; no project purged", path, err)
		}
	}
	for _, p := range publish.EditedProjects(home) {
		if !slices.Contains(projects, p) {
			projects = append(projects, p)
		}
	}
	slices.Sort(projects)
	would := ""
	if dryRun {
		would = "would "
	}
	left := 0
	for _, p := range projects {
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			continue // gone: nothing of carryover's is left there
		}
		tracked := func(path string) bool { return distill.OpenRepo(p).Tracked(path) }
		steps := publish.Purge(home, p, tracked, dryRun)
		if len(steps) == 0 {
			continue
		}
		fmt.Fprintf(e.Stdout, "project  %s\n", p)
		for _, s := range steps {
			if s.Err != nil {
				left++
				fmt.Fprintf(e.Stdout, "  left alone %s: %v\n", s.Path, s.Err)
				continue
			}
			fmt.Fprintf(e.Stdout, "  %s%s %s (%s)\n", would, s.Action, s.Path, s.Why)
		}
	}
	if !yes {
		if !dryRun {
			fmt.Fprintf(e.Stdout, "kept     the ledger and settings in %s (`carryover uninstall --purge --yes` deletes them too)\n", home)
		}
	} else {
		left += purgeHome(e, home, would)
	}
	if left > 0 {
		return exitf(ExitError, "%d file(s) left alone; see the lines above", left)
	}
	return nil
}

// homeNames are the files and directories carryover keeps in its home;
// a name starting with one of homePrefixes is carryover's too (the
// ledger's WAL, salvage copies, the rotated log).
var (
	homeNames    = []string{"config.toml", "install.json", agentsFile, "handoff.md", "published", "edits", "run", "recovery.lock", adapters.ListCacheName}
	homePrefixes = []string{ledger.FileName, "carryover.log"}
)

// purgeHome deletes carryover's files from its home, then the home when
// nothing else is in it; it returns how many entries it left.
func purgeHome(e *Env, home, would string) int {
	ents, err := os.ReadDir(home)
	if err != nil {
		return 0
	}
	var other []string
	for _, d := range ents {
		n := d.Name()
		ours := slices.Contains(homeNames, n) || strings.Contains(n, ".carryover-tmp-") ||
			slices.ContainsFunc(homePrefixes, func(p string) bool { return strings.HasPrefix(n, p) })
		if !ours {
			other = append(other, n)
			continue
		}
		if would == "" {
			if err := os.RemoveAll(filepath.Join(home, n)); err != nil {
				fmt.Fprintf(e.Stdout, "  left alone %s: %v\n", filepath.Join(home, n), err)
				continue
			}
		}
	}
	fmt.Fprintf(e.Stdout, "%sdelete the ledger, settings and records in %s\n", would, home)
	if len(other) > 0 {
		fmt.Fprintf(e.Stdout, "kept     %s: it also holds %s, which is not carryover's\n", home, strings.Join(other, ", "))
		return 0
	}
	if would == "" && canonicalDir(home) != canonicalDir(e.UserHome()) {
		_ = os.Remove(home)
	}
	return 0
}

func canonicalDir(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
