package distill

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/carryover/carryover/publish/safefile"
)

// Counting the commits made since a handoff: a walk from HEAD back to the
// commit the handoff recorded, reading git's object store directly (loose
// objects and packs, deltas included) the way the rest of this reader
// does: every file opened through safefile (regular files only, never
// through a symlink, never blocking), every size checked against the
// file's before it is read, every object bounded, and the walk bounded by
// a commit count and a deadline. A hostile .git gives an unknown count,
// never a hang or a panic (fuzzed: FuzzCommitsSince).

// CommitCount is how far HEAD moved from an older commit.
type CommitCount struct {
	N           int
	More        bool // the walk stopped at its bound: at least N
	NotAncestor bool // the old commit is not in HEAD's history (rebased, reset, another branch)
	Known       bool // false: it could not be told (objects unreadable or missing, out of time)
}

// String renders the count as the staleness line says it ("12 commits",
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

// Bounds of the walk.
const (
	MaxCommitWalk  = 1000     // commits read before answering "1000+"
	maxObject      = 4 << 20  // one inflated object (a commit is ~1 KB)
	maxWalkBytes   = 64 << 20 // everything inflated in one walk
	maxDeltaDepth  = 50       // git's default is 50
	maxPacks       = 64       // pack files looked at
	maxParents     = 64       // of one commit (octopus merges)
	maxLooseObject = 4 << 20  // a loose object file, compressed
)

// CommitsSince counts the commits in HEAD's history that are not in the
// history of old (a hex prefix of a commit id, as handoffs record HEAD),
// like `git rev-list --count old..HEAD`, stopping at MaxCommitWalk or the
// deadline.
func (r *Repo) CommitsSince(old string, deadline time.Time) (c CommitCount) {
	if r == nil || len(r.headFull) != 40 || !isHex(r.headFull) || len(old) < 4 || len(old) > 40 || !isHex(old) {
		return CommitCount{}
	}
	if strings.HasPrefix(r.headFull, old) {
		return CommitCount{Known: true}
	}
	defer func() {
		if recover() != nil { // a reader bug on hostile data: unknown, never a crash
			c = CommitCount{}
		}
	}()
	o := openObjects(commonDir(r.gitDir), deadline)
	defer o.close()
	return o.since(r.headFull, old, MaxCommitWalk)
}

type oid [20]byte

func (h oid) hasPrefix(p string) bool { return strings.HasPrefix(hex.EncodeToString(h[:]), p) }

// objects is a read-only view of a git object store.
type objects struct {
	dir      *safefile.Dir // objects/
	packs    []*pack
	deadline time.Time
	spent    int64 // bytes inflated so far
	br       *bufio.Reader
	zr       io.ReadCloser // a zlib reader, reset for each object
}

type pack struct {
	idx, data         *os.File
	idxSize, dataSize int64
	n                 int64
	fanout            [256]uint32
}

var errObject = errors.New("unreadable git object")

func openObjects(gitDir string, deadline time.Time) *objects {
	o := &objects{deadline: deadline}
	d, err := safefile.OpenDir(gitDir)
	if err != nil {
		return o
	}
	o.dir, err = d.Sub("objects", false, 0)
	d.Close()
	if err != nil {
		o.dir = nil
		return o
	}
	pd, err := o.dir.Sub("pack", false, 0)
	if err != nil {
		return o
	}
	defer pd.Close()
	names, err := pd.Names()
	if err != nil {
		return o
	}
	for _, n := range names {
		if len(o.packs) == maxPacks {
			break
		}
		if base, ok := strings.CutSuffix(n, ".idx"); ok {
			if p := openPack(pd, base); p != nil {
				o.packs = append(o.packs, p)
			}
		}
	}
	return o
}

func (o *objects) close() {
	for _, p := range o.packs {
		p.idx.Close()
		p.data.Close()
	}
	if o.dir != nil {
		o.dir.Close()
	}
}

// openPack opens base.idx (version 2) and base.pack, checking their
// headers and that the index is as large as its object count says.
func openPack(d *safefile.Dir, base string) *pack {
	idx, err := d.Open(base + ".idx")
	if err != nil {
		return nil
	}
	data, err := d.Open(base + ".pack")
	if err != nil {
		idx.Close()
		return nil
	}
	p := &pack{idx: idx, data: data}
	ok := func() bool {
		fi, err := idx.Stat()
		if err != nil {
			return false
		}
		p.idxSize = fi.Size()
		if fi, err = data.Stat(); err != nil {
			return false
		}
		p.dataSize = fi.Size()
		head := make([]byte, 8+1024)
		if _, err := idx.ReadAt(head, 0); err != nil || !bytes.Equal(head[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
			return false
		}
		prev := uint32(0)
		for i := range p.fanout {
			p.fanout[i] = binary.BigEndian.Uint32(head[8+4*i:])
			if p.fanout[i] < prev {
				return false
			}
			prev = p.fanout[i]
		}
		p.n = int64(p.fanout[255])
		// ids, CRCs and offsets, then two trailing hashes.
		if 8+1024+p.n*28+40 > p.idxSize {
			return false
		}
		sig := make([]byte, 12)
		_, err = data.ReadAt(sig, 0)
		return err == nil && string(sig[:4]) == "PACK"
	}()
	if !ok {
		idx.Close()
		data.Close()
		return nil
	}
	return p
}

// find returns id's offset in the pack (ok false when it is not there).
func (p *pack) find(id oid) (int64, bool) {
	lo := int64(0)
	if id[0] > 0 {
		lo = int64(p.fanout[id[0]-1])
	}
	hi := int64(p.fanout[id[0]])
	var buf [20]byte
	for lo < hi {
		mid := lo + (hi-lo)/2
		if _, err := p.idx.ReadAt(buf[:], 8+1024+mid*20); err != nil {
			return 0, false
		}
		switch bytes.Compare(buf[:], id[:]) {
		case 0:
			return p.offset(mid)
		case -1:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return 0, false
}

func (p *pack) offset(i int64) (int64, bool) {
	var b [8]byte
	if _, err := p.idx.ReadAt(b[:4], 8+1024+p.n*24+i*4); err != nil {
		return 0, false
	}
	off := int64(binary.BigEndian.Uint32(b[:4]))
	if off&0x80000000 != 0 {
		at := 8 + 1024 + p.n*28 + (off&0x7fffffff)*8
		if at+8 > p.idxSize-40 {
			return 0, false
		}
		if _, err := p.idx.ReadAt(b[:], at); err != nil {
			return 0, false
		}
		off = int64(binary.BigEndian.Uint64(b[:]) & (1<<62 - 1))
	}
	return off, off >= 12 && off < p.dataSize-20
}

// read returns an object's type (1 commit, 2 tree, 3 blob, 4 tag) and
// content.
func (o *objects) read(id oid, depth int) (int, []byte, error) {
	if depth > maxDeltaDepth || time.Now().After(o.deadline) {
		return 0, nil, errObject
	}
	for _, p := range o.packs {
		if off, ok := p.find(id); ok {
			return o.readPacked(p, off, depth)
		}
	}
	return o.readLoose(id)
}

func (o *objects) readLoose(id oid) (int, []byte, error) {
	if o.dir == nil {
		return 0, nil, errObject
	}
	h := hex.EncodeToString(id[:])
	sub, err := o.dir.Sub(h[:2], false, 0)
	if err != nil {
		return 0, nil, errObject
	}
	defer sub.Close()
	raw, err := sub.ReadFile(h[2:], maxLooseObject)
	if err != nil {
		return 0, nil, errObject
	}
	data, err := o.inflate(bytes.NewReader(raw), -1, maxObject+64)
	if err != nil {
		return 0, nil, err
	}
	hdr, body, ok := bytes.Cut(data, []byte{0})
	if !ok {
		return 0, nil, errObject
	}
	kind, _, _ := strings.Cut(string(hdr), " ")
	typ := map[string]int{"commit": 1, "tree": 2, "blob": 3, "tag": 4}[kind]
	if typ == 0 {
		return 0, nil, errObject
	}
	return typ, body, nil
}

// inflate reads the zlib stream in r: exactly size bytes when size >= 0
// (a packed object states its size), else at most max. The bytes count
// against the walk's budget. One decompressor and one read buffer serve
// the whole walk (a new zlib reader allocates ~40 KB: 45 MB per 1,000
// commits, against 3 MB reused, BenchmarkCommitsSince).
func (o *objects) inflate(r io.Reader, size, max int64) ([]byte, error) {
	if o.spent > maxWalkBytes {
		return nil, errObject
	}
	if o.br == nil {
		o.br = bufio.NewReaderSize(r, 4096)
	} else {
		o.br.Reset(r)
	}
	if o.zr == nil {
		zr, err := zlib.NewReader(o.br)
		if err != nil {
			return nil, errObject
		}
		o.zr = zr
	} else if err := o.zr.(zlib.Resetter).Reset(o.br, nil); err != nil {
		return nil, errObject
	}
	if size >= 0 {
		b := make([]byte, size)
		_, err := io.ReadFull(o.zr, b)
		o.spent += size
		if err != nil {
			return nil, errObject
		}
		return b, nil
	}
	b, err := io.ReadAll(io.LimitReader(o.zr, max+1))
	o.spent += int64(len(b))
	if (err != nil && !errors.Is(err, io.ErrUnexpectedEOF)) || int64(len(b)) > max {
		return nil, errObject
	}
	return b, nil
}

func (o *objects) readPacked(p *pack, off int64, depth int) (int, []byte, error) {
	if depth > maxDeltaDepth || off < 12 || off >= p.dataSize {
		return 0, nil, errObject
	}
	var hdr [40]byte
	n, err := p.data.ReadAt(hdr[:], off)
	if n == 0 || (err != nil && err != io.EOF) {
		return 0, nil, errObject
	}
	b := hdr[:n]
	c := b[0]
	typ := int(c>>4) & 7
	size := int64(c & 15)
	i, shift := 1, 4
	for c&0x80 != 0 {
		if i >= len(b) || shift > 35 {
			return 0, nil, errObject
		}
		c = b[i]
		size |= int64(c&0x7f) << shift
		shift += 7
		i++
	}
	if size > maxObject {
		return 0, nil, errObject
	}
	body := func(at int) ([]byte, error) {
		start := off + int64(at)
		if start >= p.dataSize {
			return nil, errObject
		}
		data, err := o.inflate(io.NewSectionReader(p.data, start, p.dataSize-start), size, size)
		if err != nil {
			return nil, errObject
		}
		return data, nil
	}
	switch typ {
	case 1, 2, 3, 4:
		data, err := body(i)
		return typ, data, err
	case 6: // delta against the object rel bytes before this one
		if i >= len(b) {
			return 0, nil, errObject
		}
		c = b[i]
		i++
		rel := int64(c & 0x7f)
		for c&0x80 != 0 {
			if i >= len(b) || rel > 1<<48 {
				return 0, nil, errObject
			}
			c = b[i]
			i++
			rel = (rel+1)<<7 | int64(c&0x7f)
		}
		if rel <= 0 || rel >= off {
			return 0, nil, errObject
		}
		btyp, base, err := o.readPacked(p, off-rel, depth+1)
		if err != nil {
			return 0, nil, err
		}
		delta, err := body(i)
		if err != nil {
			return 0, nil, err
		}
		out, err := applyDelta(base, delta)
		return btyp, out, err
	case 7: // delta against the object named by id
		if i+20 > len(b) {
			return 0, nil, errObject
		}
		var id oid
		copy(id[:], b[i:i+20])
		btyp, base, err := o.read(id, depth+1)
		if err != nil {
			return 0, nil, err
		}
		delta, err := body(i + 20)
		if err != nil {
			return 0, nil, err
		}
		out, err := applyDelta(base, delta)
		return btyp, out, err
	}
	return 0, nil, errObject
}

// applyDelta rebuilds an object from its base and a git delta, checking
// every copy against both.
func applyDelta(base, delta []byte) ([]byte, error) {
	varint := func() (int64, bool) {
		var v int64
		for shift := 0; shift < 35; shift += 7 {
			if len(delta) == 0 {
				return 0, false
			}
			c := delta[0]
			delta = delta[1:]
			v |= int64(c&0x7f) << shift
			if c&0x80 == 0 {
				return v, true
			}
		}
		return 0, false
	}
	src, ok1 := varint()
	dst, ok2 := varint()
	if !ok1 || !ok2 || src != int64(len(base)) || dst > maxObject {
		return nil, errObject
	}
	out := make([]byte, 0, dst)
	for len(delta) > 0 {
		op := delta[0]
		delta = delta[1:]
		switch {
		case op&0x80 != 0:
			var off, n int64
			for k := 0; k < 7; k++ {
				if op&(1<<k) == 0 {
					continue
				}
				if len(delta) == 0 {
					return nil, errObject
				}
				if k < 4 {
					off |= int64(delta[0]) << (8 * k)
				} else {
					n |= int64(delta[0]) << (8 * (k - 4))
				}
				delta = delta[1:]
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > int64(len(base)) || int64(len(out))+n > dst {
				return nil, errObject
			}
			out = append(out, base[off:off+n]...)
		case op != 0:
			n := int(op)
			if n > len(delta) || int64(len(out)+n) > dst {
				return nil, errObject
			}
			out = append(out, delta[:n]...)
			delta = delta[n:]
		default:
			return nil, errObject
		}
	}
	if int64(len(out)) != dst {
		return nil, errObject
	}
	return out, nil
}

// parents reads a commit's parent ids.
func parents(commit []byte) ([]oid, bool) {
	var out []oid
	for line := range bytes.Lines(commit) {
		line = bytes.TrimRight(line, "\n")
		if len(line) == 0 {
			break // the message starts
		}
		h, ok := bytes.CutPrefix(line, []byte("parent "))
		if !ok {
			continue
		}
		var id oid
		if len(h) != 40 || len(out) == maxParents {
			return nil, false
		}
		if _, err := hex.Decode(id[:], h); err != nil {
			return nil, false
		}
		out = append(out, id)
	}
	return out, true
}

func (o *objects) commit(id oid) ([]oid, error) {
	typ, data, err := o.read(id, 0)
	if err != nil || typ != 1 {
		return nil, errObject
	}
	ps, ok := parents(data)
	if !ok {
		return nil, errObject
	}
	return ps, nil
}

// since walks HEAD's history breadth first, not past old.
func (o *objects) since(head, old string, limit int) CommitCount {
	var start oid
	if _, err := hex.Decode(start[:], []byte(head)); err != nil {
		return CommitCount{}
	}
	seen := map[oid]bool{start: true}
	queue := []oid{start}
	var walked []oid
	var oldID oid
	found, rooted := false, false
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c.hasPrefix(old) {
			found, oldID = true, c
			continue
		}
		if len(walked) == limit {
			return CommitCount{N: limit, More: true, Known: true}
		}
		ps, err := o.commit(c)
		if err != nil {
			return CommitCount{} // missing (a shallow clone), damaged, or out of time
		}
		walked = append(walked, c)
		if len(ps) == 0 {
			rooted = true
		}
		for _, p := range ps {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	if !found {
		return CommitCount{Known: true, NotAncestor: true}
	}
	if !rooted {
		// Every path down from HEAD stopped at old: all walked commits
		// are new since it.
		return CommitCount{N: len(walked), Known: true}
	}
	// Some path went around old (a merged branch that forked before it)
	// down to the root: old's own history is not new. It is walked as far
	// as the bound allows; what it does not reach is counted (an upper
	// bound, for histories of more than the bound).
	ancestors := map[oid]bool{}
	queue = []oid{oldID}
	for len(queue) > 0 && len(ancestors) < 2*limit {
		c := queue[0]
		queue = queue[1:]
		ps, err := o.commit(c)
		if err != nil {
			break
		}
		for _, p := range ps {
			if !ancestors[p] {
				ancestors[p] = true
				queue = append(queue, p)
			}
		}
	}
	n := 0
	for _, c := range walked {
		if !ancestors[c] {
			n++
		}
	}
	return CommitCount{N: n, Known: true}
}
