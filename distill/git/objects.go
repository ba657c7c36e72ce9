package git

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/carryover/carryover/publish/safefile"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// Bounds of one read of the object store (a walk, a log, a diff).
const (
	maxObject      = 4 << 20  // one inflated object (a commit is ~1 KB)
	maxReadBytes   = 64 << 20 // everything inflated by one store
	maxDeltaDepth  = 50       // git's default
	maxPacks       = 64       // pack files looked at
	maxPackIndex   = 64 << 20 // one .idx file (2.3 million objects)
	maxParents     = 64       // of one commit (octopus merges)
	maxTreeEntries = 200_000  // of HEAD's tree, flattened
)

var errObject = errors.New("unreadable git object")

// store is a read-only view of a repository's objects: go-git's idxfile
// and packfile decoders over packs, its objfile reader over loose
// objects, every file opened through safefile. go-git's Packfile resolves
// deltas by recursion with no depth bound (a ref-delta whose base is
// itself overflows the stack, which no recover catches: FuzzPackObject
// has that seed), so the chain is followed here, bounded in depth, size
// and time.
type store struct {
	dir      *safefile.Dir // objects/ (nil when unreadable)
	packs    []*pack
	deadline time.Time
	spent    int64 // bytes inflated so far
}

type pack struct {
	idx  *idxfile.MemoryIndex
	file *os.File
	s    *packfile.Scanner
}

func openStore(gitDir string, deadline time.Time) *store {
	o := &store{deadline: deadline}
	d, err := openSub(commonDir(gitDir), "objects")
	if err != nil {
		return o
	}
	o.dir = d
	pd, err := d.Sub("pack", false, 0)
	if err != nil {
		return o
	}
	defer pd.Close()
	names, _ := pd.Names()
	for _, n := range names {
		if base, ok := strings.CutSuffix(n, ".idx"); ok && len(o.packs) < maxPacks {
			if p := openPack(pd, base); p != nil {
				o.packs = append(o.packs, p)
			}
		}
	}
	return o
}

func openPack(d *safefile.Dir, base string) *pack {
	f, err := d.Open(base + ".idx")
	if err != nil {
		return nil
	}
	defer f.Close()
	// The decoder checks the file's size against the object count before
	// it allocates (it stats *os.File).
	idx := idxfile.NewMemoryIndex()
	if fi, err := f.Stat(); err != nil || fi.Size() > maxPackIndex || idxfile.NewDecoder(f).Decode(idx) != nil {
		return nil
	}
	data, err := d.Open(base + ".pack")
	if err != nil {
		return nil
	}
	p := &pack{idx: idx, file: data, s: packfile.NewScanner(data)}
	if _, _, err := p.s.Header(); err != nil {
		data.Close()
		return nil
	}
	return p
}

func (o *store) close() {
	for _, p := range o.packs {
		p.file.Close()
	}
	o.dir.Close()
}

// spentOut reports whether the store's byte budget or time is used up.
func (o *store) spentOut() bool { return o.spent > maxReadBytes || time.Now().After(o.deadline) }

// read returns an object's type and content.
func (o *store) read(id plumbing.Hash, depth int) (plumbing.ObjectType, []byte, error) {
	for _, p := range o.packs {
		if off, err := p.idx.FindOffset(id); err == nil {
			return o.packed(p, off, depth)
		}
	}
	if o.dir == nil || o.spentOut() {
		return 0, nil, errObject
	}
	h := id.String()
	sub, err := o.dir.Sub(h[:2], false, 0)
	if err != nil {
		return 0, nil, errObject
	}
	defer sub.Close()
	raw, err := sub.ReadFile(h[2:], maxObject)
	if err != nil {
		return 0, nil, errObject
	}
	r, err := objfile.NewReader(bytes.NewReader(raw))
	if err != nil {
		return 0, nil, errObject
	}
	defer r.Close()
	typ, size, err := r.Header()
	if err != nil || size > maxObject {
		return 0, nil, errObject
	}
	b, err := io.ReadAll(io.LimitReader(r, size+1))
	o.spent += int64(len(b))
	if (err != nil && !errors.Is(err, io.ErrUnexpectedEOF)) || int64(len(b)) != size {
		return 0, nil, errObject
	}
	return typ, b, nil
}

// packed reads the object at off: go-git's scanner reads the header and
// inflates the entry (never past its declared size), go-git's PatchDelta
// applies a delta to its base, read here one level deeper.
func (o *store) packed(p *pack, off int64, depth int) (plumbing.ObjectType, []byte, error) {
	if depth > maxDeltaDepth || o.spentOut() {
		return 0, nil, errObject
	}
	h, err := p.s.SeekObjectHeader(off)
	if err != nil || h.Length > maxObject || h.Length < 0 {
		return 0, nil, errObject
	}
	var buf bytes.Buffer
	if n, _, err := p.s.NextObject(&buf); err != nil || n != h.Length {
		return 0, nil, errObject
	}
	o.spent += h.Length
	var typ plumbing.ObjectType
	var base []byte
	switch h.Type {
	case plumbing.OFSDeltaObject:
		typ, base, err = o.packed(p, h.OffsetReference, depth+1)
	case plumbing.REFDeltaObject:
		typ, base, err = o.read(h.Reference, depth+1)
	default: // the callers check the type they want
		return h.Type, buf.Bytes(), nil
	}
	if err != nil {
		return 0, nil, errObject
	}
	out, err := applyDelta(base, buf.Bytes())
	return typ, out, err
}

// applyDelta is go-git's PatchDelta once the result size the delta
// declares (its second LEB128 varint) is checked: PatchDelta grows its
// output up to it, and a 4 MB delta can declare terabytes.
func applyDelta(base, delta []byte) ([]byte, error) {
	_, n := binary.Uvarint(delta)
	size, m := binary.Uvarint(delta[max(n, 0):])
	if n <= 0 || m <= 0 || size > maxObject {
		return nil, errObject
	}
	out, err := packfile.PatchDelta(base, delta)
	if err != nil {
		return nil, errObject
	}
	return out, nil
}

// commit is what is read of a commit object. (go-git's object.Commit
// decoder would bring OpenPGP, a config parser and a container library
// into every hook process: +1.7 MB and 0.7 ms of init measured, for four
// header lines.)
type commit struct {
	id, tree plumbing.Hash
	parents  []plumbing.Hash
	when     time.Time // committer time
	message  string
}

func (o *store) commit(id plumbing.Hash) (*commit, error) {
	typ, data, err := o.read(id, 0)
	if err != nil || typ != plumbing.CommitObject {
		return nil, errObject
	}
	head, msg, _ := bytes.Cut(data, []byte("\n\n"))
	c := &commit{id: id, message: string(msg)}
	for line := range strings.Lines(string(head)) {
		k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		switch k {
		case "tree":
			c.tree = hashOf(v)
		case "parent":
			if c.parents = append(c.parents, hashOf(v)); c.parents[len(c.parents)-1].IsZero() || len(c.parents) > maxParents {
				return nil, errObject
			}
		case "committer": // Name <email> 1700000000 +0000
			if f := strings.Fields(v[strings.LastIndexByte(v, '>')+1:]); len(f) > 0 {
				t, _ := strconv.ParseInt(f[0], 10, 64)
				c.when = time.Unix(t, 0)
			}
		}
	}
	return c, nil
}

// treeEntry is a file of a flattened tree.
type treeEntry struct {
	mode filemode.FileMode
	id   plumbing.Hash
}

// flatten adds the files below tree id to out by path (only the path
// want, when want is not ""), bounded in entries and depth. A tree is
// "<octal mode> <name>\0<20-byte id>" entries.
func (o *store) flatten(id plumbing.Hash, prefix, want string, out map[string]treeEntry, depth int) error {
	typ, data, err := o.read(id, 0)
	if err != nil || typ != plumbing.TreeObject || depth > 64 {
		return errObject
	}
	for len(data) > 0 {
		sp, nul := bytes.IndexByte(data, ' '), bytes.IndexByte(data, 0)
		if sp < 0 || nul < sp || nul+21 > len(data) || len(out) >= maxTreeEntries {
			return errObject
		}
		mode, err := filemode.New(string(data[:sp]))
		if err != nil {
			return errObject
		}
		p, e := prefix+string(data[sp+1:nul]), treeEntry{mode: mode}
		copy(e.id[:], data[nul+1:nul+21])
		data = data[nul+21:]
		switch {
		case want != "" && p != want && !strings.HasPrefix(want, p+"/"):
		case mode == filemode.Dir:
			if err := o.flatten(e.id, p+"/", want, out, depth+1); err != nil {
				return err
			}
		default:
			out[p] = e
		}
	}
	return nil
}

// walk reads the history from start breadth first, each commit once, at
// most limit of them (more: it went on); a commit for which stop is true
// is neither read nor gone past. ok is false when a commit could not be
// read (missing in a shallow clone, damaged, out of time).
func (o *store) walk(start plumbing.Hash, limit int, stop func(plumbing.Hash) bool) (out []*commit, more, ok bool) {
	seen := map[plumbing.Hash]bool{start: true}
	for q := []plumbing.Hash{start}; len(q) > 0; q = q[1:] {
		if stop != nil && stop(q[0]) {
			continue
		}
		if len(out) == limit {
			return out, true, true
		}
		c, err := o.commit(q[0])
		if err != nil {
			return out, false, false
		}
		out = append(out, c)
		for _, p := range c.parents {
			if !seen[p] {
				seen[p] = true
				q = append(q, p)
			}
		}
	}
	return out, false, true
}
