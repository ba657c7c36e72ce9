package adapters

import (
	"cmp"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/carryover/carryover/publish/safefile"
)

// FileStamp is what says a transcript changed since it was described: its
// size, modification time and inode (a file replaced by rename keeps its
// size and may keep its mtime, never its inode).
type FileStamp struct {
	Size, ModNano int64
	Dev, Ino      uint64
}

// StatStamp returns fi's stamp.
func StatStamp(fi os.FileInfo) FileStamp {
	dev, ino := fileIdentity(fi)
	return FileStamp{Size: fi.Size(), ModNano: fi.ModTime().UnixNano(), Dev: dev, Ino: ino}
}

// DescribeCached is describe(path), answered from env.Descriptions when
// the file is the one described last time. `list` on 200 sessions spent
// 266 ms decoding every transcript's head and tail on every call; a stat
// per file is what a warm call costs instead. Only "not a session" is
// remembered among failures: an I/O error is tried again next time.
func DescribeCached(env Env, tool, path string, describe func(string) (NativeSession, error)) (NativeSession, error) {
	c := env.Descriptions
	if c == nil {
		return describe(path)
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return describe(path)
	}
	id := StatStamp(fi)
	if s, ok, found := c.Lookup(tool, path, id); found {
		if !ok {
			return s, errNoSession
		}
		return s, nil
	}
	s, err := describe(path)
	if err == nil || errors.Is(err, errNoSession) {
		c.Store(tool, path, id, s, err == nil)
	}
	return s, err
}

// ListCacheName is the file in carryover's home that keeps the listers'
// descriptions between calls (DescriptionFile).
const ListCacheName = "list-cache.json"

const (
	listCacheVersion = 1        // a file of another version is ignored; bump it when a Describe changes
	listCacheMax     = 16 << 20 // 200 sessions take about 60 KB; a larger file is ignored
)

// DescriptionFile caches listers' descriptions for `list` and the commands
// that pick a session: one JSON file in carryover's home (never in a
// project), read once and written back only when something was described
// anew. It works before any hook ran (as a ledger table it did not: with
// no ledger every `list` of 200 sessions decoded them all again, 215 ms a
// call); the hook path never reads or writes it. Descriptions of files
// gone since are dropped when it is written.
type DescriptionFile struct {
	path    string
	mu      sync.Mutex
	known   map[string]describedFile
	changed bool
}

type describedFile struct {
	Tool    string        `json:"tool"`
	Path    string        `json:"path"`
	Stamp   FileStamp     `json:"stamp"`
	OK      bool          `json:"ok"` // false: not a session of the agent
	Session NativeSession `json:"session"`
}

type listCache struct {
	Version int             `json:"version"`
	Entries []describedFile `json:"entries"`
}

// OpenDescriptionFile reads the cache kept in home; a missing, damaged,
// oversized or foreign file is an empty cache.
func OpenDescriptionFile(home string) *DescriptionFile {
	d := &DescriptionFile{path: filepath.Join(home, ListCacheName), known: map[string]describedFile{}}
	var c listCache
	b, err := safefile.ReadFile(d.path, listCacheMax)
	if err != nil || json.Unmarshal(b, &c) != nil || c.Version != listCacheVersion {
		return d
	}
	for _, e := range c.Entries {
		d.known[e.Tool+"\x00"+e.Path] = e
	}
	return d
}

// Lookup returns the description of path stored with stamp id; found is
// false on a miss.
func (d *DescriptionFile) Lookup(tool, path string, id FileStamp) (s NativeSession, ok, found bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, found := d.known[tool+"\x00"+path]
	if !found || e.Stamp != id {
		return NativeSession{}, false, false
	}
	return e.Session, e.OK, true
}

// Store keeps a description (ok false: not a session); Flush writes it.
func (d *DescriptionFile) Store(tool, path string, id FileStamp, s NativeSession, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.known[tool+"\x00"+path] = describedFile{Tool: tool, Path: path, Stamp: id, OK: ok, Session: s}
	d.changed = true
}

// Flush writes the cache when something was stored since it was read,
// without the descriptions of files that no longer exist, atomically (a
// concurrent `list` reads the old or the new one). Home is created (0700)
// if missing.
func (d *DescriptionFile) Flush() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.changed {
		return nil
	}
	c := listCache{Version: listCacheVersion}
	for _, e := range d.known {
		if _, err := os.Lstat(e.Path); !errors.Is(err, fs.ErrNotExist) {
			c.Entries = append(c.Entries, e)
		}
	}
	slices.SortFunc(c.Entries, func(a, b describedFile) int { return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Tool, b.Tool)) })
	b, err := json.Marshal(c)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(d.path), 0o700)
	}
	if err == nil {
		err = safefile.WriteFile(d.path, b, safefile.Options{Mode: 0o600})
	}
	if err == nil {
		d.changed = false
	}
	return err
}

// Forget drops the descriptions of session id (any agent) and of the
// transcript at path and writes the file (`forget`: a preview is a prompt).
func (d *DescriptionFile) Forget(id, path string) error {
	d.mu.Lock()
	for k, e := range d.known {
		if id != "" && e.Session.ID == id || path != "" && e.Path == path {
			delete(d.known, k)
			d.changed = true
		}
	}
	d.mu.Unlock()
	return d.Flush()
}

// ErrNotSession is what a lister's Describe returns for a file that is not
// one of its agent's sessions (remembered by DescribeCached).
var ErrNotSession error = errNoSession
