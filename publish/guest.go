package publish

// carryover is a guest in the user's repositories: it keeps its state in
// <project>/.carryover (ignored by git through its own .gitignore, never
// the project's), writes the pointer block into AGENTS.md and the agents'
// memory files only where an agent needs it (Pointer), never writes into
// the home directory, its ancestors or / (NotProject), and remembers every
// user file it created or appended to (the edit record), so `carryover
// uninstall --purge` can put each back byte for byte (purge.go).

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/carryover/carryover/publish/safefile"
)

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
	b, err := safefile.ReadFile(editsPath(home, project), 1<<20)
	if err != nil {
		return r
	}
	var got editRecord
	if json.Unmarshal(b, &got) == nil && got.Project == project && got.Files != nil {
		r.Files = got.Files
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
	path := filepath.Join(project, name)
	_, prior, rerr := readUserFile(path)
	missing := errors.Is(rerr, fs.ErrNotExist)
	changed, err := EnsurePointer(path)
	switch {
	case err != nil || !changed:
		return err
	case !missing && rerr != nil, rerr == nil && bytes.Contains(prior, []byte(startMarker)):
		return nil // unreadable before, or not a first insertion
	}
	_, after, err := readUserFile(path)
	if err != nil {
		return nil
	}
	if missing {
		prior = nil
	} else if prior == nil {
		prior = []byte{}
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
