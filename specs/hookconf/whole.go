package hookconf

// Whole hook files (shape "whole"): carryover renders the template and owns the file byte for byte. A file is
// carryover's when it is exactly the template rendered for some absolute carryover path, or its SHA-256 is the one
// install recorded (an older template); anything else is the user's: install refuses to replace it, uninstall leaves it
// and says so. No backup (the file was absent, or ours); per-event layouts delete carryover's files for events no
// longer hooked.

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/carryover/carryover/specs"
)

// wholeFile is one file of a whole-file target as found on disk; event is "" for the one file that relays every event,
// exe "" when recognised only by the recorded digest.
type wholeFile struct {
	path, event  string
	b            []byte
	exists, ours bool
	exe          string
}

// Where is t's hook file for people: ~/.cline/hooks/<event>.
func (t Target) Where() string { return strings.ReplaceAll(t.Path, specs.EventSlot, "<event>") }

func (t Target) perEvent() bool { return strings.Contains(t.Path, specs.EventSlot) }

// wholeFiles lists t's files for events (a single-file target has one).
func (t Target) wholeFiles(events []string) []wholeFile {
	if !t.perEvent() {
		return []wholeFile{{path: t.Path}}
	}
	var out []wholeFile
	for _, ev := range events {
		out = append(out, wholeFile{path: strings.ReplaceAll(t.Path, specs.EventSlot, ev), event: ev})
	}
	return out
}

// renderWhole fills in t's template; exe's JSON literal is also a JS/TS one.
func renderWhole(t Target, exe, event string) []byte {
	js, _ := marshal(exe)
	return []byte(strings.NewReplacer(specs.SlotExeSh, quote(exe), specs.SlotExeJSON, string(js),
		specs.SlotTool, t.Tool, specs.EventSlot, event).Replace(t.Layout.Content()))
}

// parseWhole returns the carryover path b was rendered for, when b is exactly t's template for event rendered for some
// absolute path.
func parseWhole(t Target, event string, b []byte) (string, bool) {
	pat := strings.NewReplacer(
		regexp.QuoteMeta(specs.SlotExeSh), `(?P<sh>.+?)`,
		regexp.QuoteMeta(specs.SlotExeJSON), `(?P<json>".*?")`,
		regexp.QuoteMeta(specs.SlotTool), regexp.QuoteMeta(t.Tool),
		regexp.QuoteMeta(specs.EventSlot), regexp.QuoteMeta(event),
	).Replace(regexp.QuoteMeta(t.Layout.Content()))
	re, err := regexp.Compile(`\A(?s:` + pat + `)\z`)
	if err != nil {
		return "", false
	}
	m := re.FindSubmatch(b)
	var exe string // every slot of a file rendered for exe names exe: any one will do
	if i := re.SubexpIndex("json"); m != nil && i > 0 {
		json.Unmarshal(m[i], &exe)
	}
	if i := re.SubexpIndex("sh"); m != nil && exe == "" && i > 0 {
		exe, _ = unquote(string(m[i]))
	}
	if exe == "" || checkExe(exe) != nil || !bytes.Equal(renderWhole(t, exe, event), b) {
		return "", false
	}
	return exe, true
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// readWhole reads t's files for events (checking first, when check, that each path is absolute) and judges whether each
// is carryover's.
func (o owner) readWhole(events []string, files FS, check bool) ([]wholeFile, error) {
	found := o.t.wholeFiles(events)
	for i, f := range found {
		if check && (f.path == "" || checkExe(f.path) != nil) {
			return nil, fmt.Errorf("hook file path %q is not absolute; set HOME (or the agent's config variable) and run the command again", f.path)
		}
		var err error
		if f.b, f.exists, err = read(files, f.path); err != nil {
			return nil, err
		}
		if f.exe, f.ours = parseWhole(o.t, f.event, f.b); !f.ours {
			d, rec := o.rec.Files[f.path]
			f.ours = rec && d == digest(f.b)
		}
		found[i] = f
	}
	return found, nil
}

// modeWrong reports whether path lacks the bits want asks for (an executable hook that is not executable is never run).
func modeWrong(files FS, path string, want os.FileMode) bool {
	m, ok := files.(modeFS)
	if !ok || want == 0 {
		return false
	}
	got, known := m.mode(path)
	return known && got&want != want
}

func (o owner) planWholeInstall(cap specs.Capability, files FS) ([]Plan, error) {
	events := hookNames(cap)
	found, err := o.readWhole(events, files, true)
	var plans []Plan
	for _, f := range found {
		p, err := o.planFile(f, files)
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	stale, err2 := o.stale(events, files)
	err = cmp.Or(err, err2)
	plans = append(plans, stale...)
	for i := range plans {
		plans[i].Hooks = events
	}
	return plans, err
}

// planFile plans writing f, refusing a file that is not carryover's.
func (o owner) planFile(f wholeFile, files FS) (Plan, error) {
	after := renderWhole(o.t, o.exe, f.event)
	if got, ok := parseWhole(o.t, f.event, after); !ok || got != o.exe { // JSON cannot carry a non-UTF-8 path
		return Plan{}, fmt.Errorf("carryover's path %q cannot be written into %s as it is; run carryover from a path of plain UTF-8 characters", o.exe, f.path)
	}
	if f.exists && !f.ours && !bytes.Equal(f.b, after) {
		return Plan{}, fmt.Errorf("%s exists and is not the file carryover writes there, so carryover does not replace it; "+
			"move it aside (or run carryover from it yourself), then run `carryover install` again", f.path)
	}
	mode := os.FileMode(o.t.Layout.Mode)
	return Plan{Tool: o.t.Tool, Path: f.path, Before: f.b, After: after, Created: !f.exists,
		Mode: mode, whole: true, chmod: f.exists && modeWrong(files, f.path, mode)}, nil
}

// stale plans deleting carryover's per-event files for the events of the tool's other rows that keep is not hooking.
func (o owner) stale(keep []string, files FS) ([]Plan, error) {
	if !o.t.perEvent() {
		return nil, nil
	}
	gone := slices.DeleteFunc(slices.Clone(o.t.Events), func(ev string) bool { return slices.Contains(keep, ev) })
	found, err := o.readWhole(gone, files, false)
	var out []Plan
	for _, f := range found {
		if f.exists && f.ours {
			out = append(out, Plan{Tool: o.t.Tool, Path: f.path, Before: f.b, Delete: true, whole: true})
		}
	}
	return out, err
}

func (o owner) planWholeUninstall(files FS) ([]Plan, error) {
	found, err := o.readWhole(o.t.Events, files, true)
	var plans []Plan
	for _, f := range found {
		p := Plan{Tool: o.t.Tool, Path: f.path, Before: f.b, After: f.b, whole: true}
		_, recorded := o.rec.Files[f.path]
		switch {
		case f.exists && f.ours:
			p.After, p.Delete = nil, true
		case f.exists && recorded: // carryover wrote it once; it was changed since
			p.Warnings = append(p.Warnings, fmt.Sprintf("left %s: it changed since carryover wrote it; delete it yourself if you no longer want it", f.path))
		}
		plans = append(plans, p)
	}
	return plans, err
}

func (o owner) checkWhole(cap specs.Capability, files FS) (Status, error) {
	st := Status{Tool: o.t.Tool, Path: o.t.Where()}
	events := hookNames(cap)
	found, err := o.readWhole(events, files, false)
	if err != nil {
		return st, err
	}
	var problems, missing []string
	for _, f := range found {
		if !f.exists {
			missing = append(missing, f.path)
			continue
		}
		problems = append(problems, o.judgeWhole(f, files)...)
		switch {
		case !f.ours:
		case f.event != "":
			st.Hooks = append(st.Hooks, f.event)
		default:
			st.Hooks = append(st.Hooks, events...)
		}
	}
	stale, err := o.stale(events, files)
	for _, p := range stale {
		problems = append(problems, "extra hook file "+p.Path)
	}
	st.State, st.Detail = wholeState(missing, problems, len(missing) == len(found))
	return st, err
}

// wholeState is the state of a whole-file tool from its missing files (all of them when allMissing) and the problems of
// the others.
func wholeState(missing, problems []string, allMissing bool) (State, string) {
	switch {
	case allMissing && len(problems) == 0:
		return StateMissing, "no carryover hook file at " + strings.Join(missing, ", ") + "; run `carryover install`"
	case len(missing) > 0:
		problems = append([]string{"missing " + strings.Join(missing, ", ")}, problems...)
	}
	if len(problems) > 0 {
		return StateDrifted, strings.Join(problems, "; ") + "; run `carryover refresh`"
	}
	return StatePresent, ""
}

// judgeWhole says what is wrong with the existing file f.
func (o owner) judgeWhole(f wholeFile, files FS) (problems []string) {
	switch {
	case !f.ours:
		return []string{f.path + " is not the file carryover writes there (edited, or not carryover's)"}
	case f.exe == "":
		problems = append(problems, f.path+" was written by another carryover version")
	case f.exe != o.exe:
		problems = append(problems, f.path+" runs "+f.exe+", not "+o.exe)
	}
	if modeWrong(files, f.path, os.FileMode(o.t.Layout.Mode)) {
		problems = append(problems, fmt.Sprintf("%s lacks mode %#o, so the agent may not run it", f.path, o.t.Layout.Mode))
	}
	return problems
}

// wholeStubs lists what doctor runs: a per-event file itself, as the agent runs it; for a single file relaying every
// event (the agent loads it, so it cannot be run), the command it runs for each event it relays.
func (o owner) wholeStubs(files FS) ([]Stub, error) {
	found, err := o.readWhole(o.t.Events, files, false)
	var out []Stub
	for _, f := range found {
		switch {
		case !f.exists || !f.ours:
		case f.event != "":
			out = append(out, Stub{Event: f.event, Command: quote(filepath.Clean(f.path))})
		case f.exe != "":
			out = append(out, o.relayed(f)...)
		}
	}
	return out, err
}

// relayed is the stub command of each event the single file f relays.
func (o owner) relayed(f wholeFile) (out []Stub) {
	for _, ev := range o.t.Events {
		if bytes.Contains(f.b, []byte(`"`+ev+`"`)) {
			out = append(out, Stub{Event: ev, Command: StubCommand(f.exe, o.t.Tool, ev)})
		}
	}
	return out
}
