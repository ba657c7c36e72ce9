package git

import (
	"bytes"
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
	maxObject     = 4 << 20  // one inflated object (a commit is ~1 KB)
	maxReadBytes  = 64 << 20 // everything inflated by one store
	maxDeltaDepth = 50       // git's default
	maxPacks      = 64       // pack files looked at
	maxPackIndex  = 64 << 20 // one .idx file (2.3 million objects)
	maxParents    = 64       // of one commit (octopus merges)
)

var errObject = errors.New("unreadable git object")

// store is a read-only view of a repository's objects: go-git's idxfile
// and packfile decoders over packs, its objfile reader over loose
// objects, every file opened through safefile. go-git resolves deltas
// itself only by recursion with no depth bound (a ref-delta cycle in a
// crafted pack would overflow the stack, which no recover catches), so
// the chain is followed here, bounded in depth, size and time.
type store struct {
	dir      *safefile.Dir // objects/
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
	var err error
	if o.dir, err = openSub(commonDir(gitDir), "objects"); err != nil {
		o.dir = nil
		return o
	}
	pd, err := o.dir.Sub("pack", false, 0)
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
	idx := idxfile.NewMemoryIndex()
	// The decoder checks the file's size against the object count before
	// it allocates (it stats *os.File).
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
	if o.dir != nil {
		o.dir.Close()
	}
}

// read returns an object's type and content.
func (o *store) read(id plumbing.Hash, depth int) (plumbing.ObjectType, []byte, error) {
	if o.spent > maxReadBytes || time.Now().After(o.deadline) {
		return 0, nil, errObject
	}
	for _, p := range o.packs {
		if off, err := p.idx.FindOffset(id); err == nil {
			return o.packed(p, off, depth)
		}
	}
	return o.loose(id)
}

func (o *store) loose(id plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	if o.dir == nil {
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
	if depth > maxDeltaDepth || o.spent > maxReadBytes || time.Now().After(o.deadline) {
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
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
		return h.Type, buf.Bytes(), nil
	case plumbing.OFSDeltaObject:
		typ, base, err = o.packed(p, h.OffsetReference, depth+1)
	case plumbing.REFDeltaObject:
		typ, base, err = o.read(h.Reference, depth+1)
	default:
		return 0, nil, errObject
	}
	if err != nil {
		return 0, nil, errObject
	}
	out, err := applyDelta(base, buf.Bytes())
	return typ, out, err
}

// applyDelta is go-git's PatchDelta once the size the delta declares is
// checked (PatchDelta grows its output up to it).
func applyDelta(base, delta []byte) ([]byte, error) {
	if deltaTarget(delta) > maxObject {
		return nil, errObject
	}
	out, err := packfile.PatchDelta(base, delta)
	if err != nil {
		return nil, errObject
	}
	return out, nil
}

// deltaTarget is the result size a delta declares (its second varint).
func deltaTarget(d []byte) int64 {
	var v [2]int64
	for k := range v {
		for shift := 0; ; shift += 7 {
			if len(d) == 0 || shift > 56 {
				return 1 << 62
			}
			c := d[0]
			d = d[1:]
			v[k] |= int64(c&0x7f) << shift
			if c&0x80 == 0 {
				break
			}
		}
	}
	return v[1]
}

// commit is what is read of a commit object.
type commit struct {
	tree    plumbing.Hash
	parents []plumbing.Hash
	when    time.Time // committer time
	message string
}

// commit reads and parses id. (go-git's object.Commit decoder would bring
// OpenPGP, a config parser and a container library into the binary for
// four header lines.)
func (o *store) commit(id plumbing.Hash) (*commit, error) {
	typ, data, err := o.read(id, 0)
	if err != nil || typ != plumbing.CommitObject {
		return nil, errObject
	}
	c := &commit{}
	head, msg, _ := bytes.Cut(data, []byte("\n\n"))
	c.message = string(msg)
	for line := range bytes.Lines(head) {
		k, v, _ := strings.Cut(strings.TrimRight(string(line), "\n"), " ")
		switch k {
		case "tree":
			c.tree = hashOf(v)
		case "parent":
			if c.parents = append(c.parents, hashOf(v)); c.parents[len(c.parents)-1].IsZero() || len(c.parents) > maxParents {
				return nil, errObject
			}
		case "committer": // Name <email> 1700000000 +0000
			f := strings.Fields(v[strings.LastIndexByte(v, '>')+1:])
			if len(f) > 0 {
				if t, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					c.when = time.Unix(t, 0)
				}
			}
		}
	}
	return c, nil
}

// treeEntry is one entry of a tree object.
type treeEntry struct {
	name string
	mode filemode.FileMode
	id   plumbing.Hash
}

// tree reads and parses id: "<octal mode> <name>\0<20-byte id>" entries.
func (o *store) tree(id plumbing.Hash) ([]treeEntry, error) {
	typ, data, err := o.read(id, 0)
	if err != nil || typ != plumbing.TreeObject {
		return nil, errObject
	}
	var out []treeEntry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp < 0 || nul < sp || nul+21 > len(data) {
			return nil, errObject
		}
		mode, err := filemode.New(string(data[:sp]))
		if err != nil {
			return nil, errObject
		}
		e := treeEntry{name: string(data[sp+1 : nul]), mode: mode}
		copy(e.id[:], data[nul+1:nul+21])
		out = append(out, e)
		data = data[nul+21:]
	}
	return out, nil
}
