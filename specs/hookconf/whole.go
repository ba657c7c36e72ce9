package hookconf

// Whole hook files (hook_file shape "whole", specs/whole.go): carryover
// writes the file from its template and owns it byte for byte.
//   - a file is carryover's when it is exactly the template rendered for
//     some absolute carryover path (parseWhole), or when its SHA-256 is the
//     one install recorded for that path (an older carryover's template);
//     anything else is the user's: install refuses to replace it, uninstall
//     leaves it and says so;
//   - install writes the file with the layout's mode (0o755 for Cline's
//     executable hooks) and records its digest; no backup is taken (the
//     file was not there, or was carryover's);
//   - per-event layouts (path ending in {{event}}) delete carryover's files
//     for events this version no longer hooks.

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

// wholeFile is one file of a whole-file target.
type wholeFile struct {
	path string
	// event is the native event of a per-event file; "" for the one file
	// that relays every event.
	event string
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

// renderWhole fills in t's template for exe and event.
func renderWhole(t Target, exe, event string) []byte {
	return []byte(strings.NewReplacer(specs.SlotExeSh, quote(exe), specs.SlotExeJSON, jsString(exe),
		specs.SlotTool, t.Tool, specs.EventSlot, event).Replace(t.Layout.Content()))
}

// jsString is s as a JSON string literal, which JS and TS read as the same
// string (no HTML escaping: the path stays readable).
func jsString(s string) string {
	b, _ := marshal(s, "", "")
	return string(b)
}

// parseWhole returns the carryover path b was rendered for, when b is
// exactly t's template for event rendered for some absolute path.
func parseWhole(t Target, event string, b []byte) (string, bool) {
	pat := regexp.QuoteMeta(t.Layout.Content())
	pat = strings.NewReplacer(
		regexp.QuoteMeta(specs.SlotExeSh), `(?P<sh>.+?)`,
		regexp.QuoteMeta(specs.SlotExeJSON), `(?P<json>".*?")`,
		regexp.QuoteMeta(specs.SlotTool), regexp.QuoteMeta(t.Tool),
		regexp.QuoteMeta(specs.EventSlot), regexp.QuoteMeta(event),
	).Replace(pat)
	re, err := regexp.Compile(`\A(?s:` + pat + `)\z`)
	if err != nil {
		return "", false
	}
	m := re.FindSubmatch(b)
	if m == nil {
		return "", false
	}
	var exe string
	for i, name := range re.SubexpNames() {
		if i > 0 && exe == "" {
			exe = unquoteSlot(name, string(m[i]))
		}
	}
	if exe == "" || checkExe(exe) != nil || !bytes.Equal(renderWhole(t, exe, event), b) {
		return "", false
	}
	return exe, true
}

// unquoteSlot reads back what renderWhole put in a slot: a shell word
// ("sh", as quote writes it) or a JSON string ("json"); "" when it is not.
func unquoteSlot(kind, v string) string {
	var exe string
	switch {
	case kind == "json":
		json.Unmarshal([]byte(v), &exe)
	case kind == "sh" && len(v) >= 3:
		inner := v[1 : len(v)-1]
		for _, p := range []string{inner, strings.ReplaceAll(inner, `'\''`, `'`)} {
			if quote(p) == v {
				exe = p
			}
		}
	}
	return exe
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

// owns reports whether b at f is carryover's, and the carryover path it
// runs ("" when recognised only by the recorded digest).
func (w wholeOwner) owns(f wholeFile, b []byte) (string, bool) {
	if exe, ok := parseWhole(w.t, f.event, b); ok {
		return exe, true
	}
	d, ok := w.digests[f.path]
	return "", ok && d == digest(b)
}

func hookNames(cap specs.Capability) []string {
	var out []string
	for _, h := range cap.Hooks() {
		out = append(out, h.Native)
	}
	return out
}

func checkWholePath(p string) error {
	if p == "" || checkExe(p) != nil {
		return fmt.Errorf("hook file path %q is not absolute; set HOME (or the agent's config variable) and run the command again", p)
	}
	return nil
}

// modeFS is implemented by file systems with permission bits (OSFS).
type modeFS interface {
	// mode returns a file's permission bits (false: unknown, e.g. Windows).
	mode(name string) (os.FileMode, bool)
	chmod(name string, mode os.FileMode) error
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
	if err := checkExe(exe); err != nil {
		return nil, err
	}
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
	stale, err := staleWhole(t, w, events, files)
	if err != nil {
		return nil, err
	}
	plans = append(plans, stale...)
	for i := range plans {
		plans[i].Hooks, plans[i].exe, plans[i].record = events, exe, t.Record
	}
	return plans, nil
}

// planFile plans writing f for exe, refusing a file that is not carryover's.
func (w wholeOwner) planFile(f wholeFile, exe string, files FS) (Plan, error) {
	if err := checkWholePath(f.path); err != nil {
		return Plan{}, err
	}
	before, exists, err := read(files, f.path)
	if err != nil {
		return Plan{}, err
	}
	after := renderWhole(w.t, exe, f.event)
	if got, ok := parseWhole(w.t, f.event, after); !ok || got != exe {
		// JSON cannot carry a path that is not UTF-8
		return Plan{}, fmt.Errorf("carryover's path %q cannot be written into %s as it is; run carryover from a path of plain UTF-8 characters", exe, f.path)
	}
	if exists && !bytes.Equal(before, after) {
		if _, ours := w.owns(f, before); !ours {
			return Plan{}, fmt.Errorf("%s exists and is not the file carryover writes there, so carryover does not replace it; "+
				"move it aside (or run carryover from it yourself), then run `carryover install` again", f.path)
		}
	}
	mode := os.FileMode(w.t.Layout.Mode)
	return Plan{Tool: w.t.Tool, Path: f.path, Before: before, After: after, Created: !exists,
		Mode: mode, whole: true, chmod: exists && modeWrong(files, f.path, mode)}, nil
}

// staleWhole plans deleting carryover's per-event files for events of the
// tool's other rows that keep is not hooking.
func staleWhole(t Target, w wholeOwner, keep []string, files FS) ([]Plan, error) {
	if !t.perEvent() {
		return nil, nil
	}
	var out []Plan
	for _, f := range t.wholeFiles(t.Events) {
		if slices.Contains(keep, f.event) {
			continue
		}
		b, exists, err := read(files, f.path)
		if err != nil {
			return nil, err
		}
		if _, ours := w.owns(f, b); exists && ours {
			out = append(out, Plan{Tool: t.Tool, Path: f.path, Before: b, Delete: true, whole: true})
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
		if err := checkWholePath(f.path); err != nil {
			return nil, err
		}
		b, exists, err := read(files, f.path)
		if err != nil {
			return nil, err
		}
		p := Plan{Tool: t.Tool, Path: f.path, Before: b, After: b, whole: true}
		_, recorded := w.digests[f.path]
		switch _, ours := w.owns(f, b); {
		case exists && ours:
			p.After, p.Delete = nil, true
		case exists && recorded:
			// carryover wrote it once; it was changed since
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
		b, exists, err := read(files, f.path)
		if err != nil {
			return st, err
		}
		if !exists {
			missing = append(missing, f.path)
			continue
		}
		p, ours := w.judge(f, b, exe, files)
		problems = append(problems, p...)
		if !ours {
			continue
		}
		if f.event != "" {
			st.Hooks = append(st.Hooks, f.event)
		} else {
			st.Hooks = append(st.Hooks, events...)
		}
	}
	stale, err := staleWhole(t, w, events, files)
	if err != nil {
		return st, err
	}
	for _, p := range stale {
		problems = append(problems, "extra hook file "+p.Path)
	}
	switch {
	case len(missing) == len(t.wholeFiles(events)) && len(problems) == 0:
		st.State, st.Detail = StateMissing, "no carryover hook file at "+strings.Join(missing, ", ")+"; run `carryover install`"
	case len(missing)+len(problems) > 0:
		if len(missing) > 0 {
			problems = append([]string{"missing " + strings.Join(missing, ", ")}, problems...)
		}
		st.State, st.Detail = StateDrifted, strings.Join(problems, "; ")+"; run `carryover refresh`"
	default:
		st.State = StatePresent
	}
	return st, nil
}

// judge says what is wrong with the existing file f holding b, and
// whether it is carryover's at all.
func (w wholeOwner) judge(f wholeFile, b []byte, exe string, files FS) (problems []string, ours bool) {
	x, ours := w.owns(f, b)
	switch {
	case !ours:
		return []string{f.path + " is not the file carryover writes there (edited, or not carryover's)"}, false
	case x == "":
		problems = append(problems, f.path+" was written by another carryover version")
	case x != exe:
		problems = append(problems, f.path+" runs "+x+", not "+exe)
	}
	if modeWrong(files, f.path, os.FileMode(w.t.Layout.Mode)) {
		problems = append(problems, fmt.Sprintf("%s lacks mode %#o, so the agent may not run it", f.path, w.t.Layout.Mode))
	}
	return problems, true
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
		b, exists, err := read(files, f.path)
		if err != nil {
			return nil, err
		}
		exe, ours := w.owns(f, b)
		switch {
		case !exists || !ours:
		case f.event != "":
			out = append(out, Stub{Event: f.event, Command: quote(filepath.Clean(f.path))})
		case exe != "":
			for _, ev := range t.Events {
				if bytes.Contains(b, []byte(`"`+ev+`"`)) {
					out = append(out, Stub{Event: ev, Command: StubCommand(exe, t.Tool, ev)})
				}
			}
		}
	}
	return out, nil
}
