package hookconf

// Whole hook files (hook_file shape "whole"): carryover writes the file
// from its template and owns it byte for byte.
//   - a file is carryover's when it is exactly the template rendered for
//     some absolute carryover path, or when its SHA-256 is the one install
//     recorded (an older template); anything else is the user's: install
//     refuses to replace it, uninstall leaves it and says so;
//   - install writes it with the layout's mode (0o755 for Cline's executable
//     hooks) and records its digest; no backup (it was absent, or ours);
//   - per-event layouts delete carryover's files for events no longer hooked.

import (
	"bytes"
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

// wholeFile is one file of a whole-file target, as found on disk.
type wholeFile struct {
	path  string
	event string // "" for the one file that relays every event

	b            []byte
	exists, ours bool
	exe          string // the carryover path it runs ("" when recognised only by the recorded digest)
}

// Where is t's hook file for people: a per-event path names the event
// "<event>" (~/.cline/hooks/<event>).
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

// renderWhole fills in t's template for exe and event; the JSON string
// literal of exe is also a JS and TS one.
func renderWhole(t Target, exe, event string) []byte {
	js, _ := marshal(exe, "", "")
	return []byte(strings.NewReplacer(specs.SlotExeSh, quote(exe), specs.SlotExeJSON, string(js),
		specs.SlotTool, t.Tool, specs.EventSlot, event).Replace(t.Layout.Content()))
}

// parseWhole returns the carryover path b was rendered for, when b is
// exactly t's template for event rendered for some absolute path.
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
	var exe string
	for i, name := range re.SubexpNames() {
		switch {
		case m == nil || exe != "":
		case name == "json":
			json.Unmarshal(m[i], &exe)
		case name == "sh":
			exe, _ = unquote(string(m[i]))
		}
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

// wholeOwner recognises carryover's whole files for one target.
type wholeOwner struct {
	t       Target
	digests map[string]string // path → SHA-256 install recorded
}

func ownerFor(t Target, files FS) (wholeOwner, error) {
	r, err := loadRecord(files, t.Record)
	return wholeOwner{t: t, digests: r.Files}, err
}

// read reads f (after checking its path when check) and judges whether it
// is carryover's.
func (w wholeOwner) read(f wholeFile, files FS, check bool) (wholeFile, error) {
	if check && (f.path == "" || checkExe(f.path) != nil) {
		return f, fmt.Errorf("hook file path %q is not absolute; set HOME (or the agent's config variable) and run the command again", f.path)
	}
	var err error
	if f.b, f.exists, err = read(files, f.path); err != nil {
		return f, err
	}
	if f.exe, f.ours = parseWhole(w.t, f.event, f.b); !f.ours {
		d, rec := w.digests[f.path]
		f.ours = rec && d == digest(f.b)
	}
	return f, nil
}

// modeWrong reports whether the file at path lacks the bits want asks for
// (an executable hook that is not executable is never run).
func modeWrong(files FS, path string, want os.FileMode) bool {
	m, ok := files.(modeFS)
	if !ok || want == 0 {
		return false
	}
	got, known := m.mode(path)
	return known && got&want != want
}

func planWholeInstall(t Target, cap specs.Capability, exe string, files FS) ([]Plan, error) {
	w, err := ownerFor(t, files)
	if err != nil {
		return nil, err
	}
	events := hookNames(cap)
	var plans []Plan
	for _, f := range t.wholeFiles(events) {
		p, err := w.planFile(f, exe, files)
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	stale, err := w.stale(events, files)
	if err != nil {
		return nil, err
	}
	plans = append(plans, stale...)
	for i := range plans {
		plans[i].Hooks = events
	}
	return plans, nil
}

// planFile plans writing f for exe, refusing a file that is not carryover's.
func (w wholeOwner) planFile(f wholeFile, exe string, files FS) (Plan, error) {
	f, err := w.read(f, files, true)
	if err != nil {
		return Plan{}, err
	}
	after := renderWhole(w.t, exe, f.event)
	if got, ok := parseWhole(w.t, f.event, after); !ok || got != exe {
		// JSON cannot carry a path that is not UTF-8
		return Plan{}, fmt.Errorf("carryover's path %q cannot be written into %s as it is; run carryover from a path of plain UTF-8 characters", exe, f.path)
	}
	if f.exists && !f.ours && !bytes.Equal(f.b, after) {
		return Plan{}, fmt.Errorf("%s exists and is not the file carryover writes there, so carryover does not replace it; "+
			"move it aside (or run carryover from it yourself), then run `carryover install` again", f.path)
	}
	mode := os.FileMode(w.t.Layout.Mode)
	return Plan{Tool: w.t.Tool, Path: f.path, Before: f.b, After: after, Created: !f.exists,
		Mode: mode, whole: true, chmod: f.exists && modeWrong(files, f.path, mode)}, nil
}

// stale plans deleting carryover's per-event files for events of the
// tool's other rows that keep is not hooking.
func (w wholeOwner) stale(keep []string, files FS) ([]Plan, error) {
	var out []Plan
	for _, f := range w.t.wholeFiles(w.t.Events) {
		if !w.t.perEvent() || slices.Contains(keep, f.event) {
			continue
		}
		f, err := w.read(f, files, false)
		if err != nil {
			return nil, err
		}
		if f.exists && f.ours {
			out = append(out, Plan{Tool: w.t.Tool, Path: f.path, Before: f.b, Delete: true, whole: true})
		}
	}
	return out, nil
}

func planWholeUninstall(t Target, files FS) ([]Plan, error) {
	w, err := ownerFor(t, files)
	if err != nil {
		return nil, err
	}
	var plans []Plan
	for _, f := range t.wholeFiles(t.Events) {
		if f, err = w.read(f, files, true); err != nil {
			return nil, err
		}
		p := Plan{Tool: t.Tool, Path: f.path, Before: f.b, After: f.b, whole: true}
		_, recorded := w.digests[f.path]
		switch {
		case f.exists && f.ours:
			p.After, p.Delete = nil, true
		case f.exists && recorded: // carryover wrote it once; it was changed since
			p.Warnings = append(p.Warnings, fmt.Sprintf("left %s: it changed since carryover wrote it; delete it yourself if you no longer want it", f.path))
		}
		plans = append(plans, p)
	}
	return plans, nil
}

func checkWhole(t Target, cap specs.Capability, exe string, files FS) (Status, error) {
	st := Status{Tool: t.Tool, Path: t.Where()}
	w, err := ownerFor(t, files)
	if err != nil {
		return st, err
	}
	events := hookNames(cap)
	var problems, missing []string
	for _, f := range t.wholeFiles(events) {
		if f, err = w.read(f, files, false); err != nil {
			return st, err
		}
		if !f.exists {
			missing = append(missing, f.path)
			continue
		}
		problems = append(problems, w.judge(f, exe, files)...)
		switch {
		case !f.ours:
		case f.event != "":
			st.Hooks = append(st.Hooks, f.event)
		default:
			st.Hooks = append(st.Hooks, events...)
		}
	}
	stale, err := w.stale(events, files)
	if err != nil {
		return st, err
	}
	for _, p := range stale {
		problems = append(problems, "extra hook file "+p.Path)
	}
	st.State, st.Detail = wholeState(missing, problems, len(missing) == len(t.wholeFiles(events)))
	return st, nil
}

// wholeState is the state of a whole-file tool from its missing files
// (all of them when allMissing) and the problems of the others.
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

// judge says what is wrong with the existing file f.
func (w wholeOwner) judge(f wholeFile, exe string, files FS) (problems []string) {
	switch {
	case !f.ours:
		return []string{f.path + " is not the file carryover writes there (edited, or not carryover's)"}
	case f.exe == "":
		problems = append(problems, f.path+" was written by another carryover version")
	case f.exe != exe:
		problems = append(problems, f.path+" runs "+f.exe+", not "+exe)
	}
	if modeWrong(files, f.path, os.FileMode(w.t.Layout.Mode)) {
		problems = append(problems, fmt.Sprintf("%s lacks mode %#o, so the agent may not run it", f.path, w.t.Layout.Mode))
	}
	return problems
}

// wholeStubs lists what doctor runs for t's whole files: a per-event file
// is run itself, as the agent runs it; a single file relaying every event
// cannot be (the agent loads it), so doctor runs the command it runs for
// each event it relays.
func wholeStubs(t Target, files FS) ([]Stub, error) {
	w, err := ownerFor(t, files)
	if err != nil {
		return nil, err
	}
	var out []Stub
	for _, f := range t.wholeFiles(t.Events) {
		if f, err = w.read(f, files, false); err != nil {
			return nil, err
		}
		switch {
		case !f.exists || !f.ours:
		case f.event != "":
			out = append(out, Stub{Event: f.event, Command: quote(filepath.Clean(f.path))})
		case f.exe != "":
			out = append(out, relayed(t, f)...)
		}
	}
	return out, nil
}

// relayed is the stub command of each of t's events the single file f relays.
func relayed(t Target, f wholeFile) (out []Stub) {
	for _, ev := range t.Events {
		if bytes.Contains(f.b, []byte(`"`+ev+`"`)) {
			out = append(out, Stub{Event: ev, Command: StubCommand(f.exe, t.Tool, ev)})
		}
	}
	return out
}
