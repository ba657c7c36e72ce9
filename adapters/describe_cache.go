package adapters

import (
	"errors"
	"os"
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
	switch {
	case err == nil:
		c.Store(tool, path, id, s, true)
	case errors.Is(err, errNoSession):
		c.Store(tool, path, id, s, false)
	}
	return s, err
}

// MemDescriptions is an in-memory DescriptionCache (tests).
type MemDescriptions map[string]memDesc

type memDesc struct {
	id FileStamp
	s  NativeSession
	ok bool
}

func (m MemDescriptions) Lookup(tool, path string, id FileStamp) (NativeSession, bool, bool) {
	d, found := m[tool+"\x00"+path]
	if !found || d.id != id {
		return NativeSession{}, false, false
	}
	return d.s, d.ok, true
}

func (m MemDescriptions) Store(tool, path string, id FileStamp, s NativeSession, ok bool) {
	m[tool+"\x00"+path] = memDesc{id: id, s: s, ok: ok}
}

// ErrNotSession is what a lister's Describe returns for a file that is not
// one of its agent's sessions (remembered by DescribeCached).
var ErrNotSession error = errNoSession
