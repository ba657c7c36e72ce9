// Package hookconf installs, refreshes and removes carryover's hook stubs in
// each agent's own configuration file, and reports their status.
//
// A stub runs `"<absolute carryover path>" snapshot --tool X --event E`.
// Rules:
//   - merge, never overwrite: the user's settings and other tools' hooks on the
//     same events stay, in order, byte for byte (edits are textual splices, see
//     jsonedit.go; JSONC comments survive);
//   - carryover's entries are recognised exactly: the command StubCommand
//     writes for that tool and event, run by the current binary or by one
//     the install record (RecordFile) lists; a user's look-alike hook is
//     never touched (stubs.go);
//   - a read-only file is refused, never replaced;
//   - a second install changes no byte; a changed event set or binary path
//     rewrites only carryover's entries;
//   - uninstall removes exactly what install added; a file install created is
//     deleted again (recognised as: only the skeleton is left and no backup exists);
//     [Cleanup] then deletes backups the restore made redundant and the empty
//     directories install created.
//
// Agents whose hooks are files of their own (Pi's extension, Cline's hook
// files) get files carryover writes whole and owns byte for byte (whole.go).
//
// The core is pure (bytes in, bytes out: [PlanInstall], [PlanUninstall],
// [Check]); [Apply] writes plans through an [FS], backing each file up to
// <file>.carryover.bak before its first change.
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
	"reflect"
	"runtime"
	"slices"
	"strings"

	"github.com/carryover/carryover/publish/safefile"
	"github.com/carryover/carryover/specs"
)

// BackupSuffix is appended to a file's path for its one-time backup.
const BackupSuffix = ".carryover.bak"

// FS is the file layer Apply and the planners use.
type FS interface {
	// ReadFile returns the content; an error wrapping fs.ErrNotExist when missing.
	ReadFile(name string) ([]byte, error)
	// WriteFile replaces the file atomically, creating parent directories.
	WriteFile(name string, data []byte, perm os.FileMode) error
	Remove(name string) error
}

// ErrReadOnly is returned for a file whose mode (or attributes) forbid writing.
var ErrReadOnly = errors.New("read-only")

// writableFS is implemented by file systems that can tell a read-only file.
type writableFS interface {
	// writable returns an error wrapping ErrReadOnly, in words, for an
	// existing file that must not be written; nil otherwise.
	writable(name string) error
}

func readOnlyErr(name string) error {
	return fmt.Errorf("%s is %w, so carryover left it unchanged; make it writable (chmod u+w %q) and run the command again, "+
		"or make the change yourself (run the command with --dry-run to see it)", name, ErrReadOnly, name)
}

// OSFS is the real file system. WriteFile writes a temp file in the same
// directory and renames it over the target (following a symlinked target, so
// dotfile managers keep their links), keeping an existing file's mode.
type OSFS struct{}

// ReadFile implements FS.
func (OSFS) ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }

// Remove implements FS.
func (OSFS) Remove(name string) error { return os.Remove(name) }

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

// writable refuses a file without the owner's write bit (even for root,
// who could open it) or that cannot be opened for writing (immutable
// attribute, another owner). Opening without O_TRUNC changes nothing.
func (OSFS) writable(name string) error {
	fi, err := os.Stat(name)
	if err != nil || !fi.Mode().IsRegular() {
		return nil // missing: created; anything else fails later with its own error
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

// WriteFile implements FS through carryover's one atomic writer
// (publish/safefile), flushed before the rename: a user cannot regenerate
// their settings.
func (o OSFS) WriteFile(name string, data []byte, perm os.FileMode) error {
	if real, err := filepath.EvalSymlinks(name); err == nil {
		name = real
	}
	if err := o.writable(name); err != nil {
		return err
	}
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return safefile.WriteFile(name, data, safefile.Options{Mode: perm, KeepMode: true, Sync: true})
}

// Target names the files of one agent.
type Target struct {
	Tool string
	// Path is the hook config file; "" when the agent has no hooks (Aider).
	Path string
	// TrustPath is a second file install edits (Codex config.toml); "" for none.
	TrustPath string
	// Layout is the hook file's layout (specs.Tool.HookFile).
	Layout *specs.HookFile
	// Record is the install record (RecordFile in the carryover home); ""
	// recognises only stubs that run the current binary.
	Record string
	// Events are the native events any row of the tool hooks (where a
	// whole-file layout looks for carryover's files).
	Events []string
}

// TargetFor resolves tool's files (see specs.Tool.ConfigPath).
func TargetFor(tl specs.Tool, goos string, getenv func(string) string, home string, exists func(string) bool) Target {
	var events []string
	for _, r := range tl.Rows {
		for _, h := range append(slices.Clone(r.Inject), r.Snapshot...) {
			if !slices.Contains(events, h.Native) {
				events = append(events, h.Native)
			}
		}
	}
	return Target{
		Tool:      tl.Name,
		Path:      tl.ConfigPath(goos, getenv, home, exists),
		TrustPath: tl.TrustPath(goos, getenv, home, exists),
		Layout:    tl.HookFile,
		Events:    events,
	}
}

// Plan is the change to one file.
type Plan struct {
	Tool, Path string
	// Before is the current content; nil when the file does not exist.
	Before []byte
	// After is the new content; nil when Delete.
	After []byte
	// Created: install creates the file. Delete: uninstall removes it.
	Created, Delete bool
	// Hooks lists the native events that carry carryover stubs after the plan.
	Hooks []string
	// Warnings are things the user should know (e.g. transcript retention).
	Warnings []string
	// Mode is a whole file's permission bits (0: 0o600, a settings file).
	Mode os.FileMode

	exe, record string // install: recorded in the record before writing
	// whole: a file carryover writes whole (whole.go): no backup, its
	// digest recorded; chmod: its content is right but its mode is not.
	whole, chmod bool
}

// Changed reports whether applying the plan writes anything.
func (p Plan) Changed() bool {
	return p.Delete || p.Created || p.chmod || !bytes.Equal(p.Before, p.After)
}

// Apply writes every changed plan: it checks the file still holds Before,
// backs it up once, then writes After (mode 0600 for new files) or deletes it.
// A read-only file is refused before anything is written (a rename over it
// would otherwise replace it). Install plans first add the binary path and
// the directories about to be created to the install record.
func Apply(plans []Plan, files FS) error {
	if w, ok := files.(writableFS); ok {
		for _, p := range plans {
			if p.Changed() {
				if err := w.writable(p.Path); err != nil {
					return err
				}
			}
		}
	}
	if err := record(plans, files); err != nil {
		return err
	}
	for _, p := range plans {
		if p.Changed() {
			if err := p.apply(files); err != nil {
				return err
			}
		}
	}
	return nil
}

// apply writes one changed plan.
func (p Plan) apply(files FS) error {
	cur, exists, err := read(files, p.Path)
	if err != nil {
		return err
	}
	if exists != (p.Before != nil) || !bytes.Equal(cur, p.Before) {
		return fmt.Errorf("%s changed since carryover read it; run the command again", p.Path)
	}
	if p.Delete { // Delete only removes files carryover created
		if err := files.Remove(p.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return writeErr(p.Path, err)
		}
		return nil
	}
	if exists && !p.whole {
		if err := backUp(files, p.Path, p.Before); err != nil {
			return err
		}
	}
	return p.write(files)
}

// write writes After with the plan's mode (0600 unless set).
func (p Plan) write(files FS) error {
	perm := cmp.Or(p.Mode, 0o600)
	if err := files.WriteFile(p.Path, p.After, perm); err != nil {
		return writeErr(p.Path, err)
	}
	if m, ok := files.(modeFS); ok && p.whole { // WriteFile keeps an existing file's mode
		if err := m.chmod(p.Path, perm); err != nil {
			return writeErr(p.Path, err)
		}
	}
	return nil
}

// backUp keeps before as path's backup, unless one exists already: the
// backup is the file as it was before carryover's first install.
func backUp(files FS, path string, before []byte) error {
	_, has, err := read(files, path+BackupSuffix)
	if err != nil || has {
		return err
	}
	if err := files.WriteFile(path+BackupSuffix, before, 0o600); err != nil {
		return writeErr(path+BackupSuffix, err)
	}
	return nil
}

func writeErr(path string, err error) error {
	if errors.Is(err, ErrReadOnly) {
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

// StubCommand is the command line of one stub: the quoted absolute path of
// carryover, then `snapshot --tool <tool> --event <native>`.
func StubCommand(exe, tool, native string) string {
	return quote(exe) + " snapshot --tool " + tool + " --event " + native
}

// quote makes p one shell word: double quotes when nothing in p is special
// inside them, else single quotes.
func quote(p string) string {
	if !strings.ContainsAny(p, "\"$`\\!\n") {
		return `"` + p + `"`
	}
	return `'` + strings.ReplaceAll(p, `'`, `'\''`) + `'`
}

func checkExe(exe string) error {
	if !filepath.IsAbs(exe) && !strings.HasPrefix(exe, `\\`) && !(len(exe) > 2 && exe[1] == ':') {
		return fmt.Errorf("carryover path %q is not absolute; run carryover by its full path", exe)
	}
	return nil
}

// PlanInstall plans writing cap's hooks for t. Plans with no change are
// returned too (Changed reports false), so callers can list every file.
func PlanInstall(t Target, cap specs.Capability, exe string, files FS) ([]Plan, error) {
	if t.Path == "" || len(cap.Hooks()) == 0 {
		return nil, nil
	}
	if t.Layout.Whole() {
		return planWholeInstall(t, cap, exe, files)
	}
	if err := checkExe(exe); err != nil {
		return nil, err
	}
	f, before, exists, err := load(t, files)
	if err != nil {
		return nil, err
	}
	id, err := identify(t, exe, files)
	if err != nil {
		return nil, err
	}
	after, hooks, warns, err := f.install(before, exists, cap, id)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Path, err)
	}
	p := Plan{Tool: t.Tool, Path: t.Path, Before: before, After: after, Created: !exists, Hooks: hooks, Warnings: warns}
	plans := []Plan{p}
	if f.trust && t.TrustPath != "" {
		tp, err := planTrust(t, after, id, files)
		if err != nil {
			return nil, err
		}
		plans = append(plans, tp)
	}
	for i := range plans {
		plans[i].exe, plans[i].record = exe, t.Record
	}
	return plans, nil
}

// PlanUninstall plans removing carryover's stubs (and Codex trust entries) for t.
func PlanUninstall(t Target, exe string, files FS) ([]Plan, error) {
	if t.Path == "" {
		return nil, nil
	}
	if t.Layout.Whole() {
		return planWholeUninstall(t, files)
	}
	f, before, exists, err := load(t, files)
	if err != nil {
		return nil, err
	}
	id, err := identify(t, exe, files)
	if err != nil {
		return nil, err
	}
	p := Plan{Tool: t.Tool, Path: t.Path, Before: before, After: before}
	if exists {
		if p.After, p.Delete, err = f.planRemoval(t.Path, before, id, files); err != nil {
			return nil, err
		}
	}
	plans := []Plan{p}
	if f.trust && t.TrustPath != "" {
		tp, err := planTrust(t, nil, id, files)
		if err != nil {
			return nil, err
		}
		plans = append(plans, tp)
	}
	return plans, nil
}

// planRemoval is the file at path (holding before) without carryover's
// entries, or del when nothing else is left of it. When nothing but
// carryover changed the file since the backup was taken, the backup's
// exact bytes come back (an empty "hooks": {} the user had, key order,
// spacing); an empty (or blank) original comes back as it was too:
// install treated it as a missing file and wrote the skeleton around its
// hooks.
func (f format) planRemoval(path string, before []byte, id stubID, files FS) (_ []byte, del bool, _ error) {
	backup, hasBackup, err := read(files, path+BackupSuffix)
	if err != nil {
		return nil, false, err
	}
	after, del, err := f.uninstall(before, id, backup, hasBackup)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	if hasBackup && !del && (sameJSON(after, backup) || blank(backup) && f.isSkeleton(after)) {
		after = backup
	}
	return after, del, nil
}

// sameJSON reports whether a and b are the same JSON value (false when
// either is not JSON). An empty list or object and a missing key count as
// the same only where carryover adds and removes them: the "hooks" object
// and the event lists in it ("Stop": [], "Notification": {}).
func sameJSON(a, b []byte) bool {
	var x, y map[string]any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	for _, m := range []map[string]any{x, y} {
		h, ok := m["hooks"].(map[string]any)
		if !ok {
			continue
		}
		for k, v := range h {
			if a, ok := v.([]any); ok && len(a) == 0 {
				delete(h, k)
			}
			if o, ok := v.(map[string]any); ok && len(o) == 0 {
				delete(h, k)
			}
		}
		if len(h) == 0 {
			delete(m, "hooks")
		}
	}
	return reflect.DeepEqual(x, y)
}
