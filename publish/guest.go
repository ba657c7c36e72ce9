package publish

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/publish/safefile"
)

// carryover is a guest in the user's repositories: its state stays in
// <project>/.carryover, the pointer block goes only where an agent needs it
// (Pointer), nothing is written in the home directory, its ancestors or /
// (NotProject), and every user file it created or appended to is recorded
// (the edit record) so that `uninstall --purge` puts it back byte for byte.

// Pointer settings (config `pointer`).
const (
	// PointerAuto writes the block only where an installed agent needs it:
	// one whose version has no session-start injection (or one known to be
	// dropped), or whose injection a delivery receipt shows did not arrive
	// in the project.
	PointerAuto = "auto"
	// PointerAlways writes it in AGENTS.md and the agents' memory files in
	// every project (carryover before issue 24).
	PointerAlways = "always"
	// PointerNever never writes it.
	PointerNever = "never"
)

// PointerModes lists the settings, most writing first.
var PointerModes = []string{PointerAlways, PointerAuto, PointerNever}

// ValidPointer reports whether s is a pointer setting.
func ValidPointer(s string) bool { return s == PointerAuto || s == PointerAlways || s == PointerNever }

// NotProject reports whether dir is the user's home directory, one of its
// ancestors or the file system root: never a project, so a session there
// keeps its handoff in the ledger only and carryover writes no file in it
// (a CLAUDE.md in the home is loaded by Claude Code in every project under
// it; ~/.carryover is usually carryover's own home).
func NotProject(dir, home string) bool {
	if dir == "" {
		return true
	}
	dir = Canonical(dir)
	if filepath.Dir(dir) == dir { // "/", "C:\"
		return true
	}
	if home == "" {
		return false
	}
	home = Canonical(home)
	return dir == home || strings.HasPrefix(home, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// edit is what carryover did to one user file: created it, or appended
// Added to it. Prior and Written are the digests of the file before and
// right after (Prior "" for a file carryover created).
type edit struct {
	Created bool   `json:"created,omitempty"`
	Added   string `json:"added,omitempty"`
	Prior   string `json:"prior,omitempty"`
	Written string `json:"written"`
}

// editRecord is a project's record under the carryover home.
type editRecord struct {
	Project string          `json:"project"`
	Files   map[string]edit `json:"files"`
}

// editsPath is the record of the user files carryover changed in project.
func editsPath(home, project string) string {
	sum := sha256.Sum256([]byte(project))
	return filepath.Join(home, "edits", hex.EncodeToString(sum[:16])+".json")
}

func loadEdits(home, project string) editRecord {
	r := editRecord{Project: project, Files: map[string]edit{}}
	if got := readEdits(editsPath(home, project)); got.Project == project && got.Files != nil {
		r.Files = got.Files
	}
	return r
}

// readEdits is the edit record at path (zero when unreadable).
func readEdits(path string) (r editRecord) {
	if b, err := safefile.ReadFile(path, 1<<20); err != nil || json.Unmarshal(b, &r) != nil {
		return editRecord{}
	}
	return r
}

// recordEdit remembers that carryover changed name in project from prior
// (nil: it did not exist) to after. Only a first edit is recorded: a file
// already in the record keeps its original prior state.
func recordEdit(home, project, name string, prior, after []byte) error {
	r := loadEdits(home, project)
	if _, ok := r.Files[name]; ok {
		return nil
	}
	e := edit{Created: prior == nil, Written: Digest(after)}
	if prior != nil {
		if !bytes.HasPrefix(after, prior) {
			return nil // not an append: nothing carryover can undo by itself
		}
		e.Added, e.Prior = string(after[len(prior):]), Digest(prior)
	}
	r.Files[name] = e
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	path := editsPath(home, project)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return WriteAtomic(path, append(b, '\n'))
}

// ensurePointerRecorded is EnsurePointer that records a first insertion of
// the block in the edit record under home.
func ensurePointerRecorded(home, project, name string) error {
	changed, prior, after, err := ensurePointer(filepath.Join(project, name))
	if err != nil || !changed || bytes.Contains(prior, []byte(startMarker)) {
		return err // not a first insertion
	}
	return recordEdit(home, project, name, prior, after)
}

// Canonical is p cleaned, its symlinks resolved when it exists.
func Canonical(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// PurgeStep is one thing `uninstall --purge` does (or would do) in a
// project. Err is set for a file left alone, saying why.
type PurgeStep struct {
	Path   string
	Action string // "delete", "restore", "left alone"
	Why    string
	Err    error
}

// EditedProjects lists the projects the edit records under home name.
func EditedProjects(home string) []string {
	var out []string
	ents, _ := os.ReadDir(filepath.Join(home, "edits"))
	for _, d := range ents {
		if r := readEdits(filepath.Join(home, "edits", d.Name())); r.Project != "" {
			out = append(out, r.Project)
		}
	}
	sort.Strings(out)
	return out
}

// Purge takes carryover out of project: .carryover, the pointer blocks (a
// file it created and nobody changed is deleted, one it appended to gets
// its earlier bytes back), the .gitignore entry of carryover before issue
// 24, then the project's records under home. A file it cannot account for
// is left alone, with the reason. dryRun changes nothing.
func Purge(home, project string, tracked func(path string) bool, dryRun bool) []PurgeStep {
	var steps []PurgeStep
	rec := loadEdits(home, project)
	for _, name := range memoryFiles(func(*adapters.Agent) bool { return true }) {
		if s, ok := purgePointer(project, name, rec, dryRun); ok {
			steps = append(steps, s)
		}
	}
	if s, ok := purgeGitignore(project, dryRun); ok {
		steps = append(steps, s)
	}
	dir := Dir(project)
	if fi, err := os.Lstat(dir); err == nil {
		switch {
		case Canonical(dir) == Canonical(home), Exists(filepath.Join(dir, "ledger.sqlite")):
			// carryover's own home (a session once ran in the home
			// directory), or another one (CARRYOVER_HOME moved): not a
			// project's state
		case !fi.IsDir():
			steps = append(steps, PurgeStep{Path: dir, Action: "left alone", Err: errors.New("it is not a directory (a symlink?); carryover never wrote through it")})
		case tracked != nil && tracked(HandoffPath(project)):
			steps = append(steps, PurgeStep{Path: dir, Action: "left alone", Err: errors.New("its handoff.md is tracked by git (it came with the repository)")})
		default:
			s := PurgeStep{Path: dir + string(filepath.Separator), Action: "delete", Why: "carryover's handoff, history and resume prompts"}
			if !dryRun {
				s.Err = os.RemoveAll(dir)
			}
			steps = append(steps, s)
		}
	}
	if !dryRun && !failed(steps) {
		_ = os.Remove(editsPath(home, project))
		_ = os.Remove(SidecarPath(home, project))
	}
	return steps
}

func failed(steps []PurgeStep) bool {
	for _, s := range steps {
		if s.Err != nil {
			return true
		}
	}
	return false
}

// purgePointer undoes carryover's pointer block in project/name (ok false:
// nothing of carryover's there).
func purgePointer(project, name string, rec editRecord, dryRun bool) (PurgeStep, bool) {
	path := filepath.Join(project, name)
	e, recorded := rec.Files[name]
	rpath, data, err := readUserFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return PurgeStep{}, false
	}
	s := PurgeStep{Path: path}
	if err != nil {
		if !recorded && !errors.Is(err, ErrLeftAlone) {
			return PurgeStep{}, false
		}
		s.Action, s.Err = "left alone", err
		return s, true
	}
	if !bytes.Contains(data, []byte(startMarker)) && !bytes.Contains(data, []byte(endMarker)) {
		return PurgeStep{}, false // no block (removed by hand, or never written)
	}
	var prior []byte // nil: delete the file
	if recorded {
		prior, s.Why, s.Err = recordedPrior(data, e)
	} else {
		prior, s.Why, s.Err = unrecordedPrior(data)
	}
	if s.Err != nil {
		s.Action = "left alone"
		return s, true
	}
	return finishPurge(s, rpath, prior, dryRun), true
}

// recordedPrior is what the file was before carryover's recorded edit e
// (nil: carryover created it; delete it), and why; an error when it changed
// since.
func recordedPrior(data []byte, e edit) (prior []byte, why string, err error) {
	switch {
	case e.Created && Digest(data) == e.Written:
		return nil, "carryover created it; unchanged since", nil
	case !e.Created && bytes.HasSuffix(data, []byte(e.Added)) && Digest(data[:len(data)-len(e.Added)]) == e.Prior:
		return data[:len(data)-len(e.Added)], "the pointer block removed: its bytes before carryover", nil
	}
	return nil, "", errors.New("changed since carryover wrote its pointer block; remove the lines from <!--CARRYOVER:START--> to <!--CARRYOVER:END--> by hand")
}

// unrecordedPrior is the file without a pointer block written by a
// carryover that kept no record: exactly the block (nil: delete it), or the
// block appended after a blank line (EnsurePointer's shape); an error for
// any other shape.
func unrecordedPrior(data []byte) (prior []byte, why string, err error) {
	block, nl := pointerBlockLike(data)
	switch {
	case bytes.Equal(data, block):
		return nil, "it holds only carryover's pointer block", nil
	case bytes.HasSuffix(data, append(append([]byte{}, nl...), block...)):
		return data[:len(data)-len(nl)-len(block)], "the pointer block appended by an earlier carryover removed", nil
	}
	return nil, "", errors.New("its pointer block is not where carryover appends it (or is damaged), so the rest of the file cannot be accounted for; remove the lines from <!--CARRYOVER:START--> to <!--CARRYOVER:END--> by hand")
}

// purgeGitignore takes out the ".carryover/" entry carryover before issue
// 24 appended to the project's .gitignore under GitignoreComment (no
// record was kept: it is recognised by its exact two lines at the end).
func purgeGitignore(project string, dryRun bool) (PurgeStep, bool) {
	path := filepath.Join(project, ".gitignore")
	rpath, data, err := readUserFile(path)
	if err != nil {
		return PurgeStep{}, false
	}
	s := PurgeStep{Path: path}
	for _, nl := range []string{"\r\n", "\n"} {
		entry := []byte(GitignoreComment + nl + ".carryover/" + nl)
		switch {
		case bytes.Equal(data, entry):
			s.Why = "it holds only the entry carryover added"
			return finishPurge(s, rpath, nil, dryRun), true
		case bytes.HasSuffix(data, entry):
			s.Why = "the .carryover/ entry carryover added removed"
			return finishPurge(s, rpath, data[:len(data)-len(entry)], dryRun), true
		}
	}
	return PurgeStep{}, false
}

// finishPurge deletes (prior nil) or rewrites rpath, unless dryRun.
func finishPurge(s PurgeStep, rpath string, prior []byte, dryRun bool) PurgeStep {
	s.Action = "restore"
	if prior == nil {
		s.Action = "delete"
	}
	if dryRun {
		return s
	}
	if err := checkWritable(rpath); err != nil {
		s.Action, s.Err = "left alone", err
		return s
	}
	if prior == nil {
		s.Err = os.Remove(rpath)
	} else {
		s.Err = writeUserFile(rpath, prior)
	}
	return s
}
