package hookconf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// RecordFile is the file in the carryover home where install remembers what
// it wrote outside that home: the carryover paths its stubs run (so a later
// refresh or uninstall recognises its own stubs after the binary moved) and
// the directories it created (so uninstall can remove them again).
const RecordFile = "install.json"

// Record is the content of RecordFile.
type Record struct {
	// Exes are the absolute carryover paths stubs were written with.
	Exes []string `json:"exes,omitempty"`
	// Dirs are directories install created for a hook file.
	Dirs []string `json:"dirs,omitempty"`
	// Files are the SHA-256 digests of the whole hook files install wrote,
	// by path: a file still holding them is carryover's even after its
	// template changed (whole.go).
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
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return files.WriteFile(path, append(b, '\n'), 0o600)
}

// stubID recognises carryover's own stubs for one tool: a command is ours
// only when it is exactly what StubCommand writes for this tool and the
// event it is listed under, run by the current binary or by one an earlier
// install recorded. A user's hook that merely mentions carryover or
// "snapshot --tool" (a wrapper script, extra flags, a relative path, a
// pipe) is never touched.
type stubID struct {
	tool  string
	exe   string
	known []string
}

func (s stubID) ours(cmd, event string) bool {
	p, ok := parseStub(cmd, s.tool, event)
	return ok && (p == s.exe || slices.Contains(s.known, p))
}

// parseStub returns the binary path of cmd when cmd is
// StubCommand(path, tool, event) for an absolute path.
func parseStub(cmd, tool, event string) (string, bool) {
	suffix := " snapshot --tool " + tool + " --event " + event
	head, ok := strings.CutSuffix(cmd, suffix)
	if !ok || len(head) < 3 {
		return "", false
	}
	inner := head[1 : len(head)-1]
	for _, p := range []string{inner, strings.ReplaceAll(inner, `'\''`, `'`)} {
		if quote(p) == head && checkExe(p) == nil {
			return p, true
		}
	}
	return "", false
}

// identify builds t's stubID for exe, with the paths t.Record lists.
func identify(t Target, exe string, files FS) (stubID, error) {
	r, err := loadRecord(files, t.Record)
	return stubID{tool: t.Tool, exe: exe, known: r.Exes}, err
}

// ancestorsToCreate lists the directories WriteFile would create for a
// file at path, deepest first (nil when files has no directories).
func ancestorsToCreate(files FS, path string) []string {
	d, ok := files.(dirFS)
	if !ok {
		return nil
	}
	var out []string
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if d.isDir(dir) || dir == filepath.Dir(dir) {
			return out
		}
		out = append(out, dir)
	}
}

// dirFS is implemented by file systems with directories (OSFS).
type dirFS interface {
	isDir(name string) bool
	// removeEmptyDir removes name when it is an empty directory.
	removeEmptyDir(name string) bool
}

// record adds the binary path and the directories about to be created of
// every changed install plan to its install record.
func record(plans []Plan, files FS) error {
	byFile := map[string][]Plan{}
	for _, p := range plans {
		if p.record != "" && p.exe != "" && p.Changed() && !p.Delete {
			byFile[p.record] = append(byFile[p.record], p)
		}
	}
	for path, ps := range byFile {
		r, err := loadRecord(files, path)
		if err != nil {
			return err
		}
		if !r.add(ps, files) {
			continue
		}
		if err := saveRecord(files, path, r); err != nil {
			return fmt.Errorf("cannot write %s: %w; check the permissions of the carryover home", path, err)
		}
	}
	return nil
}

// add records the plans' binary, the digests of the whole files they
// write and the directories they create; changed is false when the record
// held them all already.
func (r *Record) add(ps []Plan, files FS) (changed bool) {
	add := func(l *[]string, v string) {
		if !slices.Contains(*l, v) {
			*l = append(*l, v)
			changed = true
		}
	}
	for _, p := range ps {
		add(&r.Exes, p.exe)
		if d := digest(p.After); p.whole && r.Files[p.Path] != d {
			if r.Files == nil {
				r.Files = map[string]string{}
			}
			r.Files[p.Path], changed = d, true
		}
		if p.Created {
			for _, d := range ancestorsToCreate(files, p.Path) {
				add(&r.Dirs, d)
			}
		}
	}
	return changed
}

// Cleanup runs after uninstall plans were applied: it deletes each
// file's .carryover.bak when the file is now byte-identical to it (the
// restore is exact, so the backup holds nothing more), and removes the
// directories install created for these files when they are empty. It
// returns, in words, every backup it kept and why.
func Cleanup(plans []Plan, files FS, recordPath string) []string {
	var notes []string
	seen := map[string]bool{}
	var dirs []string
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

// dropBackup deletes path's backup when path is now byte-identical to it;
// otherwise it says why the backup was kept ("" when there is none).
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

// removeInstallDirs updates the install record: it forgets the whole
// files uninstall deleted (no longer carryover's to recognise), and
// removes the directories it lists that hold (or are) one of dirs when
// they are empty, deepest first so a parent empties after its child goes.
func removeInstallDirs(d dirFS, files FS, recordPath string, plans []Plan, dirs []string) {
	r, err := loadRecord(files, recordPath)
	if err != nil {
		return
	}
	dropped := dropDeletedWhole(files, r, plans)
	recorded := slices.Clone(r.Dirs)
	slices.SortFunc(recorded, func(a, b string) int { return len(b) - len(a) })
	var keep []string
	for _, dir := range recorded {
		under := slices.ContainsFunc(dirs, func(fd string) bool {
			return fd == dir || strings.HasPrefix(fd, dir+string(filepath.Separator))
		})
		if under && d.removeEmptyDir(dir) {
			continue
		}
		if d.isDir(dir) {
			keep = append(keep, dir)
		}
	}
	if len(keep) != len(r.Dirs) || dropped {
		r.Dirs = slices.DeleteFunc(r.Dirs, func(dir string) bool { return !slices.Contains(keep, dir) })
		saveRecord(files, recordPath, r)
	}
}

// dropDeletedWhole forgets in r the whole files the plans deleted.
func dropDeletedWhole(files FS, r Record, plans []Plan) bool {
	dropped := false
	for _, p := range plans {
		if _, rec := r.Files[p.Path]; !rec || !p.whole {
			continue
		}
		if _, exists, err := read(files, p.Path); err == nil && !exists {
			delete(r.Files, p.Path)
			dropped = true
		}
	}
	return dropped
}
