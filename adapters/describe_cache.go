package adapters

import (
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// FileStamp is what says a transcript changed since it was described: its
// size, modification time and inode (a file replaced by rename keeps its
// size and may keep its mtime, never its inode).
type FileStamp struct {
	Size    int64
	ModNano int64
	Dev     uint64
	Ino     uint64
}

// StatID returns fi's identity.
func StatStamp(fi os.FileInfo) FileStamp {
	dev, ino := fileIdentity(fi)
	return FileStamp{Size: fi.Size(), ModNano: fi.ModTime().UnixNano(), Dev: dev, Ino: ino}
}

// DescriptionCache keeps a lister's description of a transcript for as
// long as the file's identity is unchanged. Found is false on a miss; ok
// false records a file that is not a session of the agent.
type DescriptionCache interface {
	Lookup(tool, path string, id FileStamp) (s NativeSession, ok, found bool)
	Store(tool, path string, id FileStamp, s NativeSession, ok bool)
}

// DescribeCached is describe(path), answered from env.Descriptions when
// the file is the one described last time. `list` on 200 sessions spent
// 266 ms decoding every transcript's head and tail on every call; a stat
// per file is what a warm call costs instead (DescriptionFile). Only "not a session" is
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
	switch {
	case err == nil:
		c.Store(tool, path, id, s, true)
	case errors.Is(err, errNoSession):
		c.Store(tool, path, id, s, false)
	}
	return s, err
}

// ListCacheName is the file in carryover's home that keeps the listers'
// descriptions between calls (DescriptionFile).
const ListCacheName = "list-cache.json"

// listCacheVersion is the cache file's format; a file of another version
// is ignored (and replaced at the next save). Bump it when a lister's
// Describe changes what it returns, so no description of an older
// carryover is shown.
const listCacheVersion = 1

// listCacheMax bounds what is read of the cache file (200 sessions take
// about 60 KB); a larger one is ignored.
const listCacheMax = 16 << 20

// DescriptionFile is the DescriptionCache of `list` and of the commands
// that pick a session: one JSON file in carryover's home (never in a
// project), read once and written back only when something was described
// anew. It works before any hook ran: the cache used to be a ledger table,
// and with no ledger (a machine whose hooks never ran) every `list` of 200
// sessions decoded them all again, 215 ms a call; the hook path never
// reads or writes it. Descriptions of files gone since are dropped when it
// is written.
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
	OK      bool          `json:"ok"`
	Session NativeSession `json:"session"`
}

type listCache struct {
	Version int             `json:"version"`
	Entries []describedFile `json:"entries"`
}

// OpenDescriptionFile reads the cache kept in home; a missing, damaged or
// foreign file is an empty cache.
func OpenDescriptionFile(home string) *DescriptionFile {
	d := &DescriptionFile{path: filepath.Join(home, ListCacheName), known: map[string]describedFile{}}
	f, err := openRegular(d.path)
	if err != nil {
		return d
	}
	defer f.Close()
	var c listCache
	if json.NewDecoder(io.LimitReader(f, listCacheMax)).Decode(&c) != nil || c.Version != listCacheVersion {
		return d
	}
	for _, e := range c.Entries {
		d.known[e.Tool+"\x00"+e.Path] = e
	}
	return d
}

// Lookup implements DescriptionCache.
func (d *DescriptionFile) Lookup(tool, path string, id FileStamp) (NativeSession, bool, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, found := d.known[tool+"\x00"+path]
	if !found || e.Stamp != id {
		return NativeSession{}, false, false
	}
	return e.Session, e.OK, true
}

// Store implements DescriptionCache (written by Flush).
func (d *DescriptionFile) Store(tool, path string, id FileStamp, s NativeSession, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.known[tool+"\x00"+path] = describedFile{Tool: tool, Path: path, Stamp: id, OK: ok, Session: s}
	d.changed = true
}

// Flush writes the cache when something was stored since it was read,
// without the descriptions of files that no longer exist, through a
// temporary file renamed over it (a concurrent `list` reads the old or
// the new one, never half of one). Home is created (0700) if missing.
func (d *DescriptionFile) Flush() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.changed {
		return nil
	}
	c := listCache{Version: listCacheVersion}
	for _, e := range d.known {
		if _, err := os.Lstat(e.Path); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		c.Entries = append(c.Entries, e)
	}
	slices.SortFunc(c.Entries, func(a, b describedFile) int { return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Tool, b.Tool)) })
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	dir := filepath.Dir(d.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ListCacheName+".carryover-tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), d.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	d.changed = false
	return nil
}

// Forget drops the descriptions of session id (any agent) and of the
// transcript at path, and writes the file (`forget`: the preview is the
// session's first prompt).
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
