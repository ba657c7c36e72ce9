// Package hookconf installs, refreshes and removes carryover's hook stubs (`"<absolute carryover path>" snapshot --tool
// X --event E`) in each agent's own configuration, and reports their status. It merges, never overwrites (the user's
// bytes and order stay; JSONC comments survive); recognises its entries exactly (stubID); refuses a read-only file;
// changes no byte on a second install and only its own entries for a new event set or binary; and uninstall removes
// exactly what install added ([Cleanup] then drops redundant backups and the directories install created). Hook files
// of their own (Pi, Cline) are written whole (whole.go). Planning is pure (bytes in, bytes out); [Apply] writes plans
// through an [FS], backing each file up to <file>.carryover.bak before its first change.
package hookconf

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/utils/diff"

	"github.com/carryover/carryover/publish/safefile"
	"github.com/carryover/carryover/specs"
)

// BackupSuffix is appended to a file's path for its one-time backup.
const BackupSuffix = ".carryover.bak"

// FS is the file layer Apply and the planners use. ReadFile's error wraps fs.ErrNotExist for a missing file; WriteFile
// replaces atomically, creating parent directories. OSFS also implements the optional interfaces below.
type FS interface {
	ReadFile(name string) ([]byte, error)
	WriteFile(name string, data []byte, perm os.FileMode) error
	Remove(name string) error
}

type (
	writableFS interface{ writable(name string) error } // wraps ErrReadOnly for a file that must not be written
	modeFS     interface {
		mode(name string) (os.FileMode, bool) // false: unknown (Windows)
		chmod(name string, mode os.FileMode) error
	}
	dirFS interface {
		isDir(name string) bool
		removeEmptyDir(name string) bool
	}
)

// ErrReadOnly is returned for a file whose mode (or attributes) forbid writing.
var ErrReadOnly = errors.New("read-only")

func readOnlyErr(name string) error {
	return fmt.Errorf("%s is %w, so carryover left it unchanged; make it writable (chmod u+w %q) and run the command again, "+
		"or make the change yourself (run the command with --dry-run to see it)", name, ErrReadOnly, name)
}

// OSFS is the real file system.
type OSFS struct{}

func (OSFS) ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }
func (OSFS) Remove(name string) error             { return os.Remove(name) }

func (OSFS) isDir(name string) bool {
	fi, err := os.Stat(name)
	return err == nil && fi.IsDir()
}

func (OSFS) mode(name string) (os.FileMode, bool) {
	fi, err := os.Stat(name)
	if err != nil || runtime.GOOS == "windows" { // no execute bit there
		return 0, false
	}
	return fi.Mode().Perm(), true
}

func (OSFS) chmod(name string, mode os.FileMode) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	return os.Chmod(name, mode)
}

func (OSFS) removeEmptyDir(name string) bool {
	fi, err := os.Lstat(name)
	return err == nil && fi.IsDir() && os.Remove(name) == nil // rmdir: fails unless empty
}

// writable refuses a file without the owner's write bit (even for root) or that cannot be opened for writing
// (immutable, another owner). Opening without O_TRUNC changes nothing; a missing file is created.
func (OSFS) writable(name string) error {
	fi, err := os.Stat(name)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	if fi.Mode().Perm()&0o200 == 0 {
		return readOnlyErr(name)
	}
	f, err := os.OpenFile(name, os.O_WRONLY, 0)
	if errors.Is(err, fs.ErrPermission) {
		return readOnlyErr(name)
	}
	if err == nil {
		f.Close()
	}
	return nil
}

// WriteFile writes through safefile, synced before the rename (a user cannot regenerate their settings), keeping an
// existing file's mode and following a symlink (dotfile managers keep their links).
func (o OSFS) WriteFile(name string, data []byte, perm os.FileMode) error {
	if real, err := filepath.EvalSymlinks(name); err == nil {
		name = real
	}
	if err := o.writable(name); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return err
	}
	return safefile.WriteFile(name, data, safefile.Options{Mode: perm, KeepMode: true, Sync: true})
}

// Target names the files of one agent: Path the hook config ("" when the agent has no hooks), TrustPath a second file
// install edits (Codex config.toml), Record the install record ("": only stubs running the current binary are ours),
// Events the native events any row hooks.
type Target struct {
	Tool, Path, TrustPath string
	Layout                *specs.HookFile
	Record                string
	Events                []string
}

// TargetFor resolves tool's files (see specs.Tool.ConfigPath).
func TargetFor(tl specs.Tool, goos string, getenv func(string) string, home string, exists func(string) bool) Target {
	var all specs.Capability // every row's hooks in row order; hookNames keeps each event's first
	for _, r := range tl.Rows {
		all.InjectEvents = append(all.InjectEvents, specs.Capability{InjectEvents: r.Inject, SnapshotEvents: r.Snapshot}.Hooks()...)
	}
	return Target{Tool: tl.Name, Layout: tl.HookFile, Events: hookNames(all),
		Path:      tl.ConfigPath(goos, getenv, home, exists),
		TrustPath: tl.TrustPath(goos, getenv, home, exists)}
}

// Plan is the change to one file. Before/After nil: the file does not exist, or is deleted; Hooks the native events
// carrying stubs after it; Mode a whole file's permission bits (0: 0o600, a settings file).
type Plan struct {
	Tool, Path      string
	Before, After   []byte
	Created, Delete bool
	Hooks           []string
	Warnings        []string
	Mode            os.FileMode

	exe, record string // install: recorded in the record before writing
	// whole: a file carryover writes whole (no backup, digest recorded); chmod: its content is right but its mode is
	// not.
	whole, chmod bool
}

// Changed reports whether applying the plan writes anything.
func (p Plan) Changed() bool {
	return p.Delete || p.Created || p.chmod || !bytes.Equal(p.Before, p.After)
}

// Apply writes every changed plan: it checks the file still holds Before, backs it up once, then writes After or
// deletes it. A read-only file is refused before anything is written (a rename would replace it); the install record is
// updated first.
func Apply(plans []Plan, files FS) error {
	if w, ok := files.(writableFS); ok {
		for _, p := range plans {
			if !p.Changed() {
				continue // writable opens for writing: only files about to change
			} else if err := w.writable(p.Path); err != nil {
				return err
			}
		}
	}
	if err := record(plans, files); err != nil {
		return err
	}
	for _, p := range plans {
		if err := p.apply(files); err != nil {
			return err
		}
	}
	return nil
}

func (p Plan) apply(files FS) error {
	if !p.Changed() {
		return nil
	}
	exists, err := p.unchanged(files)
	if err != nil {
		return err
	}
	if p.Delete { // only files carryover created
		if err = files.Remove(p.Path); errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		return writeErr(p.Path, err)
	}
	if exists && !p.whole {
		if err := backUp(files, p.Path, p.Before); err != nil {
			return err
		}
	}
	perm := cmp.Or(p.Mode, 0o600)
	err = files.WriteFile(p.Path, p.After, perm)
	if m, ok := files.(modeFS); ok && p.whole && err == nil { // WriteFile keeps an existing file's mode
		err = m.chmod(p.Path, perm)
	}
	return writeErr(p.Path, err)
}

// unchanged checks that the file still holds Before, and whether it exists.
func (p Plan) unchanged(files FS) (exists bool, err error) {
	cur, exists, err := read(files, p.Path)
	if err == nil && (exists != (p.Before != nil) || !bytes.Equal(cur, p.Before)) {
		err = fmt.Errorf("%s changed since carryover read it; run the command again", p.Path)
	}
	return exists, err
}

// backUp keeps before as path's backup unless it has one: the file as it was before carryover's first install.
func backUp(files FS, path string, before []byte) error {
	_, has, err := read(files, path+BackupSuffix)
	if err == nil && !has {
		err = writeErr(path+BackupSuffix, files.WriteFile(path+BackupSuffix, before, 0o600))
	}
	return err
}

func writeErr(path string, err error) error {
	if err == nil || errors.Is(err, ErrReadOnly) {
		return err
	}
	return fmt.Errorf("cannot write %s: %w; check its permissions (or use --dry-run to see the change)", path, err)
}

// read returns the file, whether it exists, and real errors only.
func read(files FS, path string) ([]byte, bool, error) {
	b, err := files.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("cannot read %s: %w", path, err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, true, nil
}

func blank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

// StubCommand is the command line of one stub.
func StubCommand(exe, tool, native string) string {
	return quote(exe) + " snapshot --tool " + tool + " --event " + native
}

// quote makes p one shell word: double quotes when nothing in p is special inside them, else single quotes.
func quote(p string) string {
	if !strings.ContainsAny(p, "\"$`\\!\n") {
		return `"` + p + `"`
	}
	return `'` + strings.ReplaceAll(p, `'`, `'\''`) + `'`
}

// unquote is the absolute path quote turned into the shell word w.
func unquote(w string) (string, bool) {
	if len(w) < 3 {
		return "", false
	}
	inner := w[1 : len(w)-1]
	for _, p := range []string{inner, strings.ReplaceAll(inner, `'\''`, `'`)} {
		if quote(p) == w && checkExe(p) == nil {
			return p, true
		}
	}
	return "", false
}

func checkExe(exe string) error {
	if !filepath.IsAbs(exe) && !strings.HasPrefix(exe, `\\`) && !(len(exe) > 2 && exe[1] == ':') {
		return fmt.Errorf("carryover path %q is not absolute; run carryover by its full path", exe)
	}
	return nil
}

// stubID recognises carryover's stubs for one tool: a command is ours only when it is exactly what StubCommand writes
// for this tool and the event it is listed under, run by the current binary or one an earlier install recorded (any: by
// any absolute path, as doctor lists them). A wrapper script, extra flags, a relative path or a pipe is the user's.
type stubID struct {
	tool, exe string
	known     []string
	any       bool
}

func (s stubID) ours(cmd, event string) bool {
	p, ok := parseStub(cmd, s.tool, event)
	return ok && (s.any || p == s.exe || slices.Contains(s.known, p))
}

// parseStub returns the binary path of cmd when cmd is StubCommand(path, tool, event) for an absolute path.
func parseStub(cmd, tool, event string) (string, bool) {
	head, ok := strings.CutSuffix(cmd, " snapshot --tool "+tool+" --event "+event)
	if !ok {
		return "", false
	}
	return unquote(head)
}

// owner is one target with the binary in use and the install record.
type owner struct {
	t   Target
	exe string
	rec Record
}

func ownerOf(t Target, exe string, files FS) (owner, error) {
	r, err := loadRecord(files, t.Record)
	return owner{t: t, exe: exe, rec: r}, err
}

func (o owner) id() stubID { return stubID{tool: o.t.Tool, exe: o.exe, known: o.rec.Exes} }

// PlanInstall plans writing cap's hooks for t. Plans with no change are returned too (Changed reports false), so
// callers can list every file.
func PlanInstall(t Target, cap specs.Capability, exe string, files FS) ([]Plan, error) {
	if t.Path == "" || len(cap.Hooks()) == 0 {
		return nil, nil
	}
	if err := checkExe(exe); err != nil {
		return nil, err
	}
	o, err := ownerOf(t, exe, files)
	if err != nil {
		return nil, err
	}
	var plans []Plan
	if t.Layout.Whole() {
		plans, err = o.planWholeInstall(cap, files)
	} else {
		plans, err = o.planSettings(files, true, func(f format, before, _ []byte, exists bool) (Plan, error) {
			after, err := f.install(before, cap, o.id())
			warns, _ := f.warnings(after)
			return Plan{After: after, Created: !exists, Hooks: hookNames(cap), Warnings: warns}, err
		})
	}
	for i := range plans {
		plans[i].exe, plans[i].record = exe, t.Record
	}
	return plans, err
}

// PlanUninstall plans removing carryover's stubs (and Codex trust entries) for t.
func PlanUninstall(t Target, exe string, files FS) ([]Plan, error) {
	if t.Path == "" {
		return nil, nil
	}
	o, err := ownerOf(t, exe, files)
	if err != nil {
		return nil, err
	} else if t.Layout.Whole() {
		return o.planWholeUninstall(files)
	}
	return o.planSettings(files, false, func(f format, before, backup []byte, _ bool) (p Plan, err error) {
		p.After, p.Delete, err = f.uninstall(before, o.id(), backup) // a missing file (nil, no backup) stays missing
		return p, err
	})
}

// planSettings plans the settings file with edit (given, on uninstall, its backup; nil when none), then (Codex) its
// trust file for the installed content, or for none on uninstall.
func (o owner) planSettings(files FS, install bool, edit func(f format, before, backup []byte, exists bool) (Plan, error)) ([]Plan, error) {
	t := o.t
	f, err := formatFor(t)
	if err != nil {
		return nil, err
	}
	before, exists, err := read(files, t.Path)
	var backup []byte
	if err == nil && exists && !install {
		backup, _, err = read(files, t.Path+BackupSuffix)
	}
	if err != nil {
		return nil, err
	}
	p, err := edit(f, before, backup, exists)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Path, err)
	}
	p.Tool, p.Path, p.Before = t.Tool, t.Path, before
	if t.TrustPath == "" || t.Layout.Trust == nil {
		return []Plan{p}, nil
	}
	var after []byte
	if install {
		after = p.After
	}
	tp, err := planTrust(t, after, o.id(), files)
	return []Plan{p, tp}, err
}

// RecordFile is the file in the carryover home where install remembers what it wrote outside that home, so refresh and
// uninstall recognise it later.
const RecordFile = "install.json"

// Record is the content of RecordFile: the carryover paths stubs were written with (the binary may move), the
// directories install created, and the SHA-256 of each whole hook file it wrote (still carryover's after its template
// changed).
type Record struct {
	Exes  []string          `json:"exes,omitempty"`
	Dirs  []string          `json:"dirs,omitempty"`
	Files map[string]string `json:"files,omitempty"`
}

// loadRecord reads the record at path ("" or missing: empty).
func loadRecord(files FS, path string) (Record, error) {
	var r Record
	if path == "" {
		return r, nil
	}
	b, exists, err := read(files, path)
	if err != nil || !exists || blank(b) {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s is not valid JSON (%v); fix it or delete it (it lists the carryover paths earlier installs wrote into hook stubs)", path, err)
	}
	return r, nil
}

func saveRecord(files FS, path string, r Record) error {
	b, _ := json.MarshalIndent(r, "", "  ")
	return files.WriteFile(path, append(b, '\n'), 0o600)
}

// record adds to the install record the binary, the whole files' digests and the directories about to be created of
// every changed install plan (the plans of one Apply come from one target, so share one record).
func record(plans []Plan, files FS) error {
	ps := slices.DeleteFunc(slices.Clone(plans), func(p Plan) bool {
		return p.record == "" || p.exe == "" || !p.Changed() || p.Delete
	})
	if len(ps) == 0 {
		return nil
	}
	r, err := loadRecord(files, ps[0].record)
	if err != nil || !r.add(ps, files) {
		return err
	}
	if err := saveRecord(files, ps[0].record, r); err != nil {
		return fmt.Errorf("cannot write %s: %w; check the permissions of the carryover home", ps[0].record, err)
	}
	return nil
}

// add records ps in r; changed is false when r held them all already.
func (r *Record) add(ps []Plan, files FS) (changed bool) {
	add := func(l *[]string, v string) {
		if !slices.Contains(*l, v) {
			*l, changed = append(*l, v), true
		}
	}
	d, _ := files.(dirFS)
	for _, p := range ps {
		add(&r.Exes, p.exe)
		if h := digest(p.After); p.whole && r.Files[p.Path] != h {
			if r.Files == nil {
				r.Files = map[string]string{}
			}
			r.Files[p.Path], changed = h, true
		}
		// the directories WriteFile will create, deepest first
		for dir := filepath.Dir(p.Path); p.Created && d != nil && !d.isDir(dir) && dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
			add(&r.Dirs, dir)
		}
	}
	return changed
}

// Cleanup runs after uninstall plans were applied: it deletes each backup the file is now byte-identical to, and the
// empty directories install created; it returns, in words, every backup it kept and why.
func Cleanup(plans []Plan, files FS, recordPath string) []string {
	var notes, dirs []string
	seen := map[string]bool{}
	for _, p := range plans {
		if p.Path == "" || seen[p.Path] {
			continue
		}
		seen[p.Path] = true
		dirs = append(dirs, filepath.Dir(p.Path))
		if note := dropBackup(files, p.Path); note != "" {
			notes = append(notes, note)
		}
	}
	if d, ok := files.(dirFS); ok && recordPath != "" {
		removeInstallDirs(d, files, recordPath, plans, dirs)
	}
	return notes
}

// dropBackup deletes path's backup when path is now byte-identical to it; otherwise it says why the backup was kept (""
// when there is none).
func dropBackup(files FS, path string) string {
	bak := path + BackupSuffix
	backup, has, err := read(files, bak)
	if err != nil || !has {
		return ""
	}
	cur, exists, err := read(files, path)
	switch {
	case err != nil:
		return fmt.Sprintf("kept %s: %v", bak, err)
	case exists && bytes.Equal(cur, backup):
		if err := files.Remove(bak); err != nil {
			return fmt.Sprintf("kept %s: could not delete it (%v)", bak, err)
		}
		return ""
	case !exists:
		return fmt.Sprintf("kept %s: %s is gone; the backup holds it as it was before carryover's first install", bak, path)
	}
	return fmt.Sprintf("kept %s: %s changed since carryover's first install; compare them, then delete the backup", bak, path)
}

// removeInstallDirs forgets the whole files uninstall deleted and removes, deepest first, the empty recorded
// directories that hold (or are) one of dirs.
func removeInstallDirs(d dirFS, files FS, recordPath string, plans []Plan, dirs []string) {
	r, err := loadRecord(files, recordPath)
	if err != nil {
		return
	}
	dropped := r.forget(plans, files)
	recorded := slices.Clone(r.Dirs)
	slices.SortFunc(recorded, func(a, b string) int { return len(b) - len(a) })
	var keep []string
	for _, dir := range recorded {
		under := slices.ContainsFunc(dirs, func(fd string) bool {
			return fd == dir || strings.HasPrefix(fd, dir+string(filepath.Separator))
		})
		if !(under && d.removeEmptyDir(dir)) && d.isDir(dir) {
			keep = append(keep, dir)
		}
	}
	if len(keep) != len(r.Dirs) || dropped {
		r.Dirs = slices.DeleteFunc(r.Dirs, func(dir string) bool { return !slices.Contains(keep, dir) })
		saveRecord(files, recordPath, r)
	}
}

// forget drops from r the whole files the plans deleted.
func (r *Record) forget(plans []Plan, files FS) (dropped bool) {
	for _, p := range plans {
		if _, rec := r.Files[p.Path]; rec && p.whole {
			if _, exists, err := read(files, p.Path); err == nil && !exists {
				delete(r.Files, p.Path)
				dropped = true
			}
		}
	}
	return dropped
}

// Diff renders p as a unified diff, "" when unchanged: 3 lines of context, hunks merged when at most 6 unchanged lines
// apart (as git does).
func Diff(p Plan) string {
	if !p.Changed() {
		return ""
	}
	var out strings.Builder
	diffHeader(&out, p)
	ops := script(string(p.Before), string(p.After))
	shown := make([]bool, len(ops)+1) // the last stays false: it ends the last hunk
	for i, o := range ops {
		for j := max(0, i-3); o.kind != ' ' && j < min(len(ops), i+4); j++ {
			shown[j] = true
		}
	}
	for i := 0; i < len(ops); i++ {
		if shown[i] {
			end := i + slices.Index(shown[i:], false)
			out.WriteString(formatHunk(ops, i, end))
			i = end
		}
	}
	return out.String()
}

// diffHeader writes p's mode line, if any (a whole hook file's, as git shows it: an executable hook needs it), and its
// file names.
func diffHeader(out *strings.Builder, p Plan) {
	from, to := p.Path, p.Path
	if p.Before == nil {
		from = "/dev/null"
	}
	if p.Delete {
		to = "/dev/null"
	}
	switch {
	case p.whole && p.Created && p.Mode != 0:
		fmt.Fprintf(out, "new file mode 100%o\n", p.Mode)
	case p.chmod:
		fmt.Fprintf(out, "new mode 100%o\n", p.Mode)
	}
	fmt.Fprintf(out, "--- %s\n+++ %s\n", from, to)
}

type op struct {
	kind byte // ' ', '-', '+'
	line string
}

// script is the line edit script from a to b by go-git's line diff (Myers with an hour's time limit: in practice a
// function of the input alone).
func script(a, b string) []op {
	var ops []op
	for _, d := range diff.Do(a, b) {
		kind := "- +"[d.Type+1] // diffmatchpatch.DiffDelete -1, DiffEqual 0, DiffInsert 1
		for l := range strings.Lines(d.Text) {
			ops = append(ops, op{kind, l})
		}
	}
	return ops
}

// sides counts the lines of ops on the old side (a) and the new (b).
func sides(ops []op) (a, b int) {
	for _, o := range ops {
		if o.kind != '+' {
			a++
		}
		if o.kind != '-' {
			b++
		}
	}
	return a, b
}

// formatHunk is ops[start:end] as a unified diff hunk.
func formatHunk(ops []op, start, end int) string {
	aStart, bStart := sides(ops[:start])
	aN, bN := sides(ops[start:end])
	aStart, bStart = aStart+min(aN, 1), bStart+min(bN, 1) // a range starts at its first line, an empty one at the line before
	var body strings.Builder
	for _, o := range ops[start:end] {
		body.WriteByte(o.kind)
		body.WriteString(o.line)
		if !strings.HasSuffix(o.line, "\n") {
			body.WriteString("\n\\ No newline at end of file\n")
		}
	}
	return fmt.Sprintf("@@ -%d,%d +%d,%d @@\n", aStart, aN, bStart, bN) + body.String()
}
