package git

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/carryover/carryover/publish/safefile"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// File states, as the handoff shows them.
const (
	Clean     = "clean"
	Modified  = "modified"
	Untracked = "untracked"
	Deleted   = "deleted"
)

// lookup finds the wanted paths' entries in the mapped index. It is the
// one format reader here that is not go-git's: go-git's index.Decoder
// decodes every entry (43 ms and 160,000 allocations for a 10,000-file
// index on this 2-core VM, where `git status` takes ~70 ms), and the hook
// wants two or three entries of a sorted file, so this scan stops past
// the greatest wanted path and allocates only for a match (well under
// 1 ms). A damaged or unknown index yields what was read; a fault reading
// the mapping (the file truncated under it) is a missing index.
func (r *Repo) lookup(wanted map[string]bool) (out map[string]index.Entry) {
	out = map[string]index.Entry{}
	defer runtime.KeepAlive(r) // the finalizer unmaps r.index
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverTo(&out, nil)
	d, be := r.index, binary.BigEndian
	if len(d) < 12 || string(d[:4]) != "DIRC" || be.Uint32(d[4:]) < 2 || be.Uint32(d[4:]) > 4 {
		return out
	}
	version, n, last := be.Uint32(d[4:]), be.Uint32(d[8:]), ""
	for w := range wanted {
		last = max(last, w)
	}
	off, prev := 12, []byte(nil)
	for i := uint32(0); i < n && len(out) < len(wanted) && off+62 <= len(d); i++ {
		start := off
		if off += 62; version >= 3 && be.Uint16(d[off-2:])&0x4000 != 0 {
			off += 2 // extended flags
		}
		if off > len(d) {
			break
		}
		var name []byte
		if version == 4 { // the name is a prefix of the previous one plus a suffix
			strip, k := varint(d[off:])
			end := bytes.IndexByte(d[min(off+k, len(d)):], 0)
			if k == 0 || int(strip) > len(prev) || end < 0 {
				break
			}
			name = append(prev[:len(prev)-int(strip):len(prev)-int(strip)], d[off+k:off+k+end]...)
			off, prev = off+k+end+1, name
		} else {
			end := bytes.IndexByte(d[off:], 0)
			if end < 0 {
				break
			}
			name, off = d[off:off+end], start+(off-start+end+8)&^7
		}
		if wanted[string(name)] {
			e := index.Entry{Size: be.Uint32(d[start+36:]), ModifiedAt: time.Unix(int64(be.Uint32(d[start+8:])), int64(be.Uint32(d[start+12:])))}
			copy(e.Hash[:], d[start+40:start+60])
			out[string(name)] = e
		}
		if string(name) > last {
			break
		}
	}
	return out
}

// varint decodes git's offset varint (index v4's path prefix length).
func varint(b []byte) (v uint64, n int) {
	for i, c := range b[:min(len(b), 10)] {
		v = v<<7 | uint64(c&127)
		if c&128 == 0 {
			return v, i + 1
		}
		v++
	}
	return 0, 0
}

// rel is abs (or a path relative to the directory Open was given) relative
// to the work tree's top, slash-separated; ok false when outside it.
func (r *Repo) rel(p string) (string, bool) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.root, p)
	}
	rel, err := filepath.Rel(r.top, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// Tracked reports whether the file at p is in the index (false for a nil
// Repo or an unreadable index).
func (r *Repo) Tracked(p string) bool {
	if r == nil || r.index == nil {
		return false
	}
	rel, ok := r.rel(p)
	_, tracked := r.lookup(map[string]bool{rel: true})[rel]
	return ok && tracked
}

// States is the state of each file (absolute, or relative to the
// directory Open was given): Clean, Modified, Untracked, Deleted, or ""
// when unknown (outside the work tree, no HEAD, missing and untracked).
// It never walks the work tree: its cost grows with the number of files
// asked about and the index's size, not the tree.
func (r *Repo) States(paths []string) []string {
	out := make([]string, len(paths))
	if r == nil || r.noHead || len(paths) == 0 {
		return out
	}
	rels, wanted := make([]string, len(paths)), map[string]bool{}
	for i, p := range paths {
		if rel, ok := r.rel(p); ok {
			rels[i], wanted[rel] = rel, true
		}
	}
	idx := r.lookup(wanted)
	for i, rel := range rels {
		if rel == "" {
			continue
		}
		abs := filepath.Join(r.top, filepath.FromSlash(rel))
		fi, err := os.Lstat(abs) // a symlink is tracked as its target's name
		e, tracked := idx[rel]
		switch {
		case err != nil && tracked:
			out[i] = Deleted
		case err != nil:
		case !tracked:
			out[i] = Untracked
		case unchanged(abs, fi, e):
			out[i] = Clean
		default:
			out[i] = Modified
		}
	}
	return out
}

// maxHashed is the largest work-tree file hashed to tell a touched file
// from a changed one; a larger one whose stat differs is Modified.
const maxHashed = 64 << 20

// unchanged reports whether the work-tree file at abs (lstat'ed as fi)
// still has index entry e's content: git's stat shortcut (same size and
// mtime), else the same blob id.
func unchanged(abs string, fi os.FileInfo, e index.Entry) bool {
	if uint32(fi.Size()) != e.Size || fi.ModTime().Equal(e.ModifiedAt) {
		return uint32(fi.Size()) == e.Size
	}
	b, ok := worktreeBlob(abs, fi, maxHashed)
	return ok && plumbing.ComputeHash(plumbing.BlobObject, b) == e.Hash
}

// worktreeBlob reads the file at abs (lstat'ed as fi) as git would store
// it: a symlink's target, or a regular file's bytes up to max. A FIFO,
// device or directory is never opened (ok false).
func worktreeBlob(abs string, fi os.FileInfo, max int64) ([]byte, bool) {
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		t, err := os.Readlink(abs)
		return []byte(t), err == nil
	case fi.Mode().IsRegular() && fi.Size() <= max:
		b, err := safefile.ReadFileNoFollow(abs, max)
		return b, err == nil
	}
	return nil, false
}
