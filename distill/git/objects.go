package git

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/carryover/carryover/publish/safefile"
	"github.com/go-git/go-git/v5/plumbing"
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

// store reads objects with go-git's idxfile, packfile and objfile
// decoders over files safefile opened. go-git's Packfile resolves deltas
// by unbounded recursion (a ref-delta whose base is itself overflows the
// stack, which no recover catches: a FuzzPackObject seed), so the chain
// is followed here, bounded in depth, size and time.
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
	common, o := commonDir(gitDir), &store{deadline: deadline}
	o.dir, _ = openSub(common, "objects")
	pd, err := openSub(common, "objects/pack")
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

// openPack opens a pack and decodes its index (the decoder checks the
// size it stats against the object count before it allocates).
func openPack(d *safefile.Dir, base string) *pack {
	f, err := d.Open(base + ".idx")
	if err != nil {
		return nil
	}
	defer f.Close()
	p := &pack{idx: idxfile.NewMemoryIndex()}
	if fi, err := f.Stat(); err != nil || fi.Size() > maxPackIndex || idxfile.NewDecoder(f).Decode(p.idx) != nil {
		return nil
	}
	if p.file, err = d.Open(base + ".pack"); err != nil {
		return nil
	}
	p.s = packfile.NewScanner(p.file)
	if _, _, err := p.s.Header(); err != nil {
		p.file.Close()
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

// spentOut reports a read past its bounds.
func (o *store) spentOut(depth int) bool {
	return depth > maxDeltaDepth || o.spent > maxReadBytes || time.Now().After(o.deadline)
}

// read returns an object's type and content, packed or loose.
func (o *store) read(id plumbing.Hash, depth int) (plumbing.ObjectType, []byte, error) {
	for _, p := range o.packs {
		if off, err := p.idx.FindOffset(id); err == nil {
			return o.packed(p, off, depth)
		}
	}
	if o.dir == nil || o.spentOut(0) {
		return 0, nil, errObject
	}
	h := id.String()
	sub, err := o.dir.Sub(h[:2], false, 0)
	if err != nil {
		return 0, nil, errObject
	}
	defer sub.Close()
	raw, err := sub.ReadFile(h[2:], maxObject)
	r, err2 := objfile.NewReader(bytes.NewReader(raw))
	if err != nil || err2 != nil {
		return 0, nil, errObject
	}
	defer r.Close()
	typ, size, err := r.Header()
	if err != nil || size > maxObject {
		return 0, nil, errObject
	}
	b, err := io.ReadAll(io.LimitReader(r, size+1))
	if o.spent += int64(len(b)); (err != nil && !errors.Is(err, io.ErrUnexpectedEOF)) || int64(len(b)) != size {
		return 0, nil, errObject
	}
	return typ, b, nil
}

// packed reads the object at off: go-git's scanner inflates the entry
// (never past its declared size) and its PatchDelta applies a delta to
// its base, read one level deeper.
func (o *store) packed(p *pack, off int64, depth int) (plumbing.ObjectType, []byte, error) {
	if o.spentOut(depth) {
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

// applyDelta is PatchDelta once the result size the delta declares (its
// second varint) is checked: PatchDelta grows its output up to it, and a
// 4 MB delta can declare terabytes.
func applyDelta(base, delta []byte) ([]byte, error) {
	_, n := binary.Uvarint(delta)
	if size, m := binary.Uvarint(delta[max(n, 0):]); n <= 0 || m <= 0 || size > maxObject {
		return nil, errObject
	}
	if out, err := packfile.PatchDelta(base, delta); err == nil {
		return out, nil
	}
	return nil, errObject
}

// commit is what is read of a commit object. (go-git's object.Commit
// would bring OpenPGP, a config parser and a container library into every
// hook process, +1.7 MB and ~0.7 ms of init measured, for two headers.)
type commit struct {
	id      plumbing.Hash
	parents []plumbing.Hash
	when    time.Time // committer time
	message string
}

func (o *store) commit(id plumbing.Hash) (*commit, error) {
	typ, data, err := o.read(id, 0)
	if err != nil || typ != plumbing.CommitObject {
		return nil, errObject
	}
	head, msg, _ := bytes.Cut(data, []byte("\n\n"))
	c := &commit{id: id, message: string(msg)}
	for line := range strings.Lines(string(head)) {
		switch k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " "); k {
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

// walk reads the history from start breadth first, each commit once, at
// most limit (more: it went on); a commit for which stop is true is
// neither read nor gone past. ok false: a commit was unreadable (a
// shallow clone, damage, the deadline).
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

// Commit is one entry of Log.
type Commit struct {
	ID      string // short id, 7 digits
	Message string
}

// Log is HEAD's n newest commits by committer time out of the 4n nearest,
// newest first, as `git log -n` lists them unless a clock ran behind a
// parent's; nil when HEAD is unknown.
func (r *Repo) Log(n int, deadline time.Time) (out []Commit) {
	if r == nil || r.head.IsZero() || n <= 0 {
		return nil
	}
	defer recoverTo(&out, nil)
	o := openStore(r.gitDir, deadline)
	defer o.close()
	cs, _, _ := o.walk(r.head, 4*n, nil)
	slices.SortStableFunc(cs, func(a, b *commit) int { return b.when.Compare(a.when) })
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, Commit{ID: c.id.String()[:7], Message: c.message})
	}
	return out
}

// CommitCount is how far HEAD moved from an older commit.
type CommitCount struct {
	N           int
	More        bool // the walk stopped at its bound: at least N
	NotAncestor bool // the old commit is not in HEAD's history (rebased, reset, another branch)
	Known       bool // false: it could not be told (objects unreadable or missing, out of time)
}

// String is the count as the staleness line says it ("12 commits",
// "1000+ commits"); "" when unknown.
func (c CommitCount) String() string {
	switch {
	case !c.Known || c.NotAncestor:
		return ""
	case c.More:
		return fmt.Sprintf("%d+ commits", c.N)
	case c.N == 1:
		return "1 commit"
	}
	return fmt.Sprintf("%d commits", c.N)
}

// MaxCommitWalk is how many commits CommitsSince reads before "1000+".
const MaxCommitWalk = 1000

// CommitsSince counts the commits in HEAD's history not in old's (a hex
// prefix of an id, as handoffs record HEAD), like `git rev-list --count
// old..HEAD`, up to MaxCommitWalk or the deadline. A hostile .git gives
// an unknown count, never a hang or a panic (FuzzPackObject).
func (r *Repo) CommitsSince(old string, deadline time.Time) (c CommitCount) {
	if r == nil || r.head.IsZero() || len(old) < 4 || len(old) > 40 || strings.Trim(old, "0123456789abcdef") != "" {
		return CommitCount{}
	}
	if strings.HasPrefix(r.head.String(), old) {
		return CommitCount{Known: true}
	}
	defer recoverTo(&c, CommitCount{})
	o := openStore(r.gitDir, deadline)
	defer o.close()
	return o.since(r.head, old, MaxCommitWalk)
}

// since walks HEAD's history breadth first, not past old.
func (o *store) since(head plumbing.Hash, old string, limit int) CommitCount {
	var oldID plumbing.Hash
	walked, more, ok := o.walk(head, limit, func(id plumbing.Hash) bool {
		if strings.HasPrefix(id.String(), old) {
			oldID = id
		}
		return id == oldID
	})
	switch {
	case !ok:
		return CommitCount{}
	case more:
		return CommitCount{N: limit, More: true, Known: true}
	case oldID.IsZero():
		return CommitCount{Known: true, NotAncestor: true}
	case !slices.ContainsFunc(walked, func(c *commit) bool { return len(c.parents) == 0 }):
		return CommitCount{N: len(walked), Known: true} // every path down from HEAD stopped at old
	}
	// A path went around old (a merged branch that forked before it) to
	// the root: old's own history, walked as far as the bound allows, is
	// not new (an upper bound beyond it).
	ancestors, _, _ := o.walk(oldID, 2*limit, nil)
	in := map[plumbing.Hash]bool{}
	for _, a := range ancestors {
		in[a.id] = true
	}
	n := 0
	for _, c := range walked {
		if !in[c.id] {
			n++
		}
	}
	return CommitCount{N: n, Known: true}
}
