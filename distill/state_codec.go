package distill

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"slices"
	"time"
)

// The stored State is a compact binary blob: the hook path loads and saves
// it on every snapshot, and JSON cost a millisecond of each.
//
// Layout: the magic "CS", the uvarint StateVersion, then State's fields in
// declaration order (codec.state below, one walk for both directions),
// each encoded as:
//
//	int, int64     zig-zag varint
//	string         uvarint length, then the bytes
//	bool           one byte, 0 or 1
//	time.Time      uvarint 0 for the zero time; else uvarint 1+nanoseconds,
//	               then the varint Unix seconds (times are UTC, see Add)
//	*int           bool (present), then the int
//	slice          uvarint 0 for nil, else 1+len, then the elements
//	map            uvarint len, then key and value per entry, keys ascending
//
// Maps in key order make the encoding a function of the State: the same
// State always gives the same bytes. The decoder accepts only that canonical
// encoding (minimal varints, ascending unique keys, 0/1 bools, no trailing
// bytes), so whatever LoadState accepts Marshal writes back byte for byte.
//
// Changing the layout, like changing State's meaning, bumps StateVersion: a
// stored state of another version (or the JSON of version 1) is rebuilt.
const stateMagic = "CS"

// Marshal encodes the state for storage. It runs the encoder twice, first
// only counting bytes, so the blob is allocated once at its exact size.
func (st *State) Marshal() []byte {
	size := codec{sizing: true}
	size.header(st)
	size.state(st)
	c := codec{b: make([]byte, size.n)}
	c.header(st)
	c.state(st)
	return c.b
}

func (c *codec) header(st *State) {
	c.raw(stateMagic)
	c.putUvarint(uint64(st.Version))
}

// LoadState decodes a stored state; ok is false when it is missing, broken,
// not in the canonical encoding or of another version (the JSON states of
// version 1 included). It never panics, and allocates no more than the
// length of b allows for.
func LoadState(b []byte) (*State, bool) {
	if len(b) < len(stateMagic) || string(b[:len(stateMagic)]) != stateMagic {
		return nil, false
	}
	c := codec{decoding: true, b: b, n: len(stateMagic)}
	if c.uvarint() != StateVersion || c.err != nil {
		return nil, false
	}
	// One copy of the blob as a string: every decoded string is a slice of
	// it rather than an allocation of its own (they keep the whole blob
	// alive, which for a state loaded once per process is no loss).
	c.s = string(b)
	st := &State{Version: StateVersion}
	c.state(st)
	if c.err == nil && c.n != len(b) {
		c.fail("trailing bytes")
	}
	// Add indexes Failures by FailureKeys' positions.
	if c.err != nil || len(st.FailureKeys) != len(st.Failures) {
		return nil, false
	}
	return st, true
}

// codec.state is the one walk over State's fields, in order, for both
// directions: each field method writes *p when encoding and sets it when
// decoding. A new State field goes here (TestStateCodecFields fails until
// it does), and bumps StateVersion.
func (c *codec) state(st *State) {
	c.str(&st.Tool)
	c.varint(&st.SessionID)
	c.time(&st.LastAt)
	c.int(&st.Rows)
	c.int(&st.Prompts)
	c.str(&st.Task)
	c.time(&st.TaskAt)
	c.str(&st.Fallback)
	c.time(&st.FallbackAt)
	c.varint(&st.Tokens.Used)
	c.varint(&st.Tokens.Max)
	c.varint(&st.Seq)
	codeMap(c, &st.Calls, 3, (*codec).call)
	codeList(c, &st.CallOrder, 1, (*codec).str)
	codeMap(c, &st.FailedCalls, 1, (*codec).bool)
	codeList(c, &st.Edits, 9, (*codec).edit)
	codeList(c, &st.TestFails, 1, (*codec).varint)
	codeList(c, &st.Failures, 11, (*codec).failure)
	codeList(c, &st.FailureKeys, 1, (*codec).str)
	codeList(c, &st.Done, 2, (*codec).done)
	codeList(c, &st.Decided, 1, (*codec).str)
	codeList(c, &st.Seen, 1, (*codec).str)
	codeList(c, &st.TurnTexts, 1, (*codec).str)
	c.str(&st.LastText)
	c.bool(&st.GoalWeak)
	c.str(&st.Latest)
	c.time(&st.LatestAt)
	codeList(c, &st.SetAside, 1, (*codec).str)
	c.varint(&st.PromptSession)
	c.bool(&st.AfterBreak)
	c.bool(&st.Answered)
	codeList(c, &st.Plan, 2, (*codec).plan)
	codeList(c, &st.Refs, 1, (*codec).str)
	codeList(c, &st.Actions, 1, (*codec).str)
	c.str(&st.CauseKey)
	c.str(&st.LastTest)
	codeList(c, &st.Instructions, 3, (*codec).note)
	codeList(c, &st.Refused, 3, (*codec).note)
	c.note(&st.Interrupted)
	c.ref(&st.TaskRef)
	c.ref(&st.LatestRef)
	c.ref(&st.LastTextRef)
	c.varint(&st.LastTextSeq)
	c.varint(&st.LastPassSeq)
	c.varint(&st.PlanSession)
	c.str(&st.PendingCall)
	c.varint(&st.StopSeq)
	c.ref(&st.RowRef)
	codeList(c, &st.TurnRefs, 2, (*codec).ref)
	codeList(c, &st.Sources, 3, (*codec).note)
}

// The element types, each in 9 (Edit), 8 (Failure), 3 (Call, Note), 2
// (Done, PlanItem, Ref) or 1 byte at least: codeList's and codeMap's
// minimum sizes above.

func (c *codec) note(x *Note) {
	c.str(&x.Text)
	c.time(&x.At)
	codeList(c, &x.Refs, 2, (*codec).ref)
}

func (c *codec) ref(x *Ref) {
	c.varint(&x.Session)
	c.varint(&x.Seq)
}

func (c *codec) edit(x *Edit) {
	c.str(&x.Path)
	c.str(&x.Call)
	c.time(&x.At)
	c.varint(&x.Seq)
	c.bool(&x.Created)
	c.bool(&x.Deleted)
	codeList(c, &x.Todos, 1, (*codec).str)
	c.ref(&x.Ref)
}

func (c *codec) failure(x *Failure) {
	c.str(&x.What)
	c.str(&x.Error)
	has := x.ExitCode != nil
	c.bool(&has)
	if has {
		if x.ExitCode == nil {
			x.ExitCode = new(int)
		}
		c.int(x.ExitCode)
	}
	c.int(&x.Count)
	c.bool(&x.Resolved)
	c.time(&x.At)
	codeList(c, &x.Errors, 1, (*codec).str)
	c.str(&x.Cause)
	c.varint(&x.Seq)
	codeList(c, &x.Refs, 2, (*codec).ref)
	c.bool(&x.Superseded)
}

func (c *codec) done(x *Done) {
	c.str(&x.Text)
	c.str(&x.Call)
}

func (c *codec) call(x *Call) {
	c.str(&x.ToolName)
	c.str(&x.Command)
	c.str(&x.FilePath)
}

func (c *codec) plan(x *PlanItem) {
	c.str(&x.Text)
	c.bool(&x.Done)
}

// codec encodes into b, which it does not grow (n is how much is written;
// with sizing set it only counts bytes in n), or, with decoding set,
// decodes from b (n is how much is read). A decoder keeps its first error
// in err; every read after it gives the zero value, so callers check err
// once at the end.
type codec struct {
	b        []byte
	n        int
	sizing   bool
	decoding bool
	s        string // decoding: b as a string, which decoded strings share
	err      error
}

func (c *codec) putUvarint(v uint64) {
	if c.sizing {
		c.n += (bits.Len64(v|1) + 6) / 7
		return
	}
	c.n += binary.PutUvarint(c.b[c.n:], v)
}

func (c *codec) raw(s string) {
	if !c.sizing {
		copy(c.b[c.n:], s)
	}
	c.n += len(s)
}

func (c *codec) fail(why string) {
	if c.err == nil {
		c.err = errors.New("distill state: " + why)
	}
}

func (c *codec) uvarint() uint64 {
	if c.err != nil {
		return 0
	}
	if c.n < len(c.b) && c.b[c.n] < 0x80 { // one byte: most counts and lengths
		c.n++
		return uint64(c.b[c.n-1])
	}
	v, n := binary.Uvarint(c.b[c.n:])
	if n <= 0 {
		c.fail("bad varint")
		return 0
	}
	if c.b[c.n+n-1] == 0 { // a trailing zero group: not the shortest form
		c.fail("overlong varint")
		return 0
	}
	c.n += n
	return v
}

// varint codes v zig-zag, as binary.AppendVarint.
func (c *codec) varint(p *int64) {
	if !c.decoding {
		c.putUvarint(uint64(*p<<1) ^ uint64(*p>>63))
		return
	}
	u := c.uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	*p = v
}

func (c *codec) int(p *int) {
	v := int64(*p)
	c.varint(&v)
	if !c.decoding {
		return
	}
	if int64(int(v)) != v {
		c.fail("int out of range")
		v = 0
	}
	*p = int(v)
}

func (c *codec) bool(p *bool) {
	if !c.decoding {
		var v uint64
		if *p {
			v = 1
		}
		c.putUvarint(v)
		return
	}
	switch c.uvarint() {
	case 0:
		*p = false
	case 1:
		*p = true
	default:
		c.fail("bad bool")
		*p = false
	}
}

func (c *codec) str(p *string) {
	if !c.decoding {
		c.putUvarint(uint64(len(*p)))
		c.raw(*p)
		return
	}
	n := c.uvarint()
	if c.err == nil && n > uint64(len(c.b)-c.n) {
		c.fail("string past the end")
	}
	if c.err != nil {
		*p = ""
		return
	}
	*p = c.s[c.n : c.n+int(n)]
	c.n += int(n)
}

func (c *codec) time(p *time.Time) {
	if !c.decoding {
		if p.IsZero() {
			c.putUvarint(0)
			return
		}
		c.putUvarint(uint64(p.Nanosecond()) + 1)
		sec := p.Unix()
		c.varint(&sec)
		return
	}
	*p = time.Time{}
	h := c.uvarint()
	if h == 0 {
		return
	}
	if h > 1e9 {
		c.fail("bad nanoseconds")
		return
	}
	var sec int64
	c.varint(&sec)
	if c.err != nil {
		return
	}
	*p = time.Unix(sec, int64(h-1)).UTC()
	if p.IsZero() { // the zero time has its own, shorter encoding
		c.fail("overlong zero time")
	}
}

// fits checks a length just read, of elements that take at least minSize
// bytes each: a length the remaining bytes cannot hold is an error, so a
// broken blob never makes the decoder allocate more than its size implies.
func (c *codec) fits(n uint64, minSize int) int {
	if c.err == nil && n > uint64((len(c.b)-c.n)/minSize) {
		c.fail("length past the end")
	}
	if c.err != nil {
		return 0
	}
	return int(n)
}

// codeList codes a slice: uvarint 0 for nil, else 1+len and the elements,
// which take at least minSize bytes each.
func codeList[T any](c *codec, p *[]T, minSize int, each func(*codec, *T)) {
	if !c.decoding {
		if *p == nil {
			c.putUvarint(0)
			return
		}
		c.putUvarint(uint64(len(*p)) + 1)
		for i := range *p {
			each(c, &(*p)[i])
		}
		return
	}
	*p = nil
	h := c.uvarint()
	if h == 0 {
		return
	}
	n := c.fits(h-1, minSize)
	if c.err != nil {
		return
	}
	s := make([]T, n)
	for i := range s {
		if c.err != nil {
			break
		}
		each(c, &s[i])
	}
	*p = s
}

// codeMap codes a map: its length, then each key and value by ascending
// key. Values take at least minSize bytes each (and keys one). A decoded
// map is never nil.
func codeMap[V any](c *codec, p *map[string]V, minSize int, each func(*codec, *V)) {
	v := new(V)   // one per map: each may keep its argument, so it is on the heap
	if c.sizing { // the order does not change the size
		c.putUvarint(uint64(len(*p)))
		for k, x := range *p {
			*v = x
			c.str(&k)
			each(c, v)
		}
		return
	}
	if !c.decoding {
		c.putUvarint(uint64(len(*p)))
		keys := make([]string, 0, len(*p))
		for k := range *p {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			*v = (*p)[k]
			c.str(&k)
			each(c, v)
		}
		return
	}
	n := c.fits(c.uvarint(), 1+minSize)
	m := make(map[string]V, n)
	var prev, k string
	for i := 0; i < n && c.err == nil; i++ {
		c.str(&k)
		if i > 0 && k <= prev {
			c.fail("map keys out of order")
		}
		*v = *new(V)
		each(c, v)
		m[k] = *v
		prev = k
	}
	*p = m
}
