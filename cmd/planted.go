package cmd

// Planted sessions (issue 21): a session file found in a project is not
// "your most recent session" just because it is there or says it is new.
// Public repositories commit .aider.chat.history.md files (the realworld
// corpus is made of them), and a repository can date one 2099, so that
// `carryover handoff` picked it and every later handoff carried its task.
// A session whose file the project's git tracks, or whose last activity is
// in the future, is listed (marked) but never chosen unless named:
// --transcript for a tracked file, --session or --transcript for a
// future-dated one.

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/publish/service"
)

const (
	notYoursTracked = "its file is tracked by git"
	notYoursFuture  = "dated in the future"
)

// futureSlack is how far ahead of the clock a session may be dated and
// still be chosen: clock steps and a file written a moment ago. Aider
// dates its sessions in local time without a zone, so a history written on
// another machine in a zone ahead of this one also looks future-dated —
// and is someone else's session anyway.
const futureSlack = 10 * time.Minute

// markNotYours sets NotYours on the candidates that are not to be chosen
// by themselves. The git index is read once per repository.
func markNotYours(e *Env, cs []candidate) {
	repos := service.Tracker{}
	limit := e.Now().Add(futureSlack)
	for i := range cs {
		c := &cs[i]
		if c.LastActive.After(limit) {
			c.NotYours = notYoursFuture
		}
		if c.Path == "" || c.Project == "" || !adapters.InProject(c.Path, c.Project) {
			continue // the agent's own store, outside any repository
		}
		if root := service.RepoRoot(c.Project); root != "" && repos.Tracked(root, c.Path) {
			c.NotYours = notYoursTracked
		}
	}
}

// yours returns the candidates that may be chosen by themselves, and a
// sentence naming what was passed over ("" when nothing was).
func yours(cs []candidate) ([]candidate, string) {
	var out []candidate
	skipped := map[string][]string{}
	for _, c := range cs {
		if c.NotYours == "" {
			out = append(out, c)
			continue
		}
		skipped[c.NotYours] = append(skipped[c.NotYours], c.Tool+" "+shortID(c.ID)+" in "+filepath.Base(c.Path))
	}
	var parts []string
	for _, why := range []string{notYoursTracked, notYoursFuture} {
		if s := skipped[why]; len(s) > 0 {
			if len(s) > 3 {
				s = append(s[:3], fmt.Sprintf("and %d more", len(s)-3))
			}
			parts = append(parts, fmt.Sprintf("passed over %s (%s)", strings.Join(s, ", "), why))
		}
	}
	if len(parts) == 0 {
		return out, ""
	}
	return out, strings.Join(parts, "; ") + ": such a session is used only when you name it (--transcript FILE)"
}

// trackedFile reports whether the git repository holding path tracks it.
func trackedFile(path string) bool {
	root := service.RepoRoot(filepath.Dir(path))
	return root != "" && service.Tracker{}.Tracked(root, path)
}

// importedKey is the ledger project a foreign file's session is recorded
// under: not a directory, so no project's fold, catch-up or handoff ever
// reads it.
func importedKey(path string) string { return "imported:" + path }
