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
// declaration order (enc.state and dec.state below, which mirror each
// other), each encoded as:
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
func (st *State) Marshal() ([]byte, error) {
	size := enc{sizing: true}
	size.header(st)
	size.state(st)
	e := enc{b: make([]byte, size.n)}
	e.header(st)
	e.state(st)
	return e.b, nil
}

func (e *enc) header(st *State) {
	e.raw(stateMagic)
	e.uvarint(uint64(st.Version))
}

// LoadState decodes a stored state; ok is false when it is missing, broken,
// not in the canonical encoding or of another version (the JSON states of
// version 1 included). It never panics, and allocates no more than the
// length of b allows for.
func LoadState(b []byte) (*State, bool) {
	if len(b) < len(stateMagic) || string(b[:len(stateMagic)]) != stateMagic {
		return nil, false
	}
	d := dec{b: b, off: len(stateMagic)}
	if d.uvarint() != StateVersion || d.err != nil {
		return nil, false
	}
	// One copy of the blob as a string: every decoded string is a slice of
	// it rather than an allocation of its own (they keep the whole blob
	// alive, which for a state loaded once per process is no loss).
	d.s = string(b)
	st := &State{Version: StateVersion}
	d.state(st)
	if d.err == nil && d.off != len(b) {
		d.fail("trailing bytes")
	}
	// Add indexes Failures by FailureKeys' positions.
	if d.err != nil || len(st.FailureKeys) != len(st.Failures) {
		return nil, false
	}
	return st, true
}

// enc.state and dec.state read and write State's fields in the same order.
// A new State field goes in both, at the same place (TestStateCodecFields
// fails until it does), and bumps StateVersion.

func (e *enc) state(st *State) {
	e.str(st.Tool)
	e.varint(st.SessionID)
	e.time(st.LastAt)
	e.int(st.Rows)
	e.int(st.Prompts)
	e.str(st.Task)
	e.time(st.TaskAt)
	e.str(st.Fallback)
	e.time(st.FallbackAt)
	e.varint(st.Tokens.Used)
	e.varint(st.Tokens.Max)
	e.varint(st.Seq)
	writeMap(e, st.Calls, (*enc).call)
	writeList(e, st.CallOrder, (*enc).str)
	writeMap(e, st.FailedCalls, (*enc).bool)
	writeList(e, st.Edits, (*enc).edit)
	writeList(e, st.TestFails, (*enc).varint)
	writeList(e, st.Failures, (*enc).failure)
	writeList(e, st.FailureKeys, (*enc).str)
	writeList(e, st.Done, (*enc).done)
	writeList(e, st.Decided, (*enc).str)
	writeList(e, st.Seen, (*enc).str)
	writeList(e, st.TurnTexts, (*enc).str)
	e.str(st.LastText)
	e.bool(st.GoalWeak)
	e.str(st.Latest)
	e.time(st.LatestAt)
	writeList(e, st.SetAside, (*enc).str)
	e.varint(st.PromptSession)
	e.bool(st.AfterBreak)
	e.bool(st.Answered)
	writeList(e, st.Plan, (*enc).plan)
	writeList(e, st.Refs, (*enc).str)
	writeList(e, st.Actions, (*enc).str)
	e.str(st.CauseKey)
	e.str(st.LastTest)
	writeList(e, st.Instructions, (*enc).note)
	writeList(e, st.Refused, (*enc).note)
	e.note(st.Interrupted)
	e.ref(st.TaskRef)
	e.ref(st.LatestRef)
	e.ref(st.LastTextRef)
	e.varint(st.LastTextSeq)
	e.varint(st.LastPassSeq)
	e.varint(st.PlanSession)
	e.str(st.PendingCall)
	e.varint(st.StopSeq)
	e.ref(st.RowRef)
	writeList(e, st.TurnRefs, (*enc).ref)
	writeList(e, st.Sources, (*enc).note)
}

func (d *dec) state(st *State) {
	st.Tool = d.str()
	st.SessionID = d.varint()
	st.LastAt = d.time()
	st.Rows = d.int()
	st.Prompts = d.int()
	st.Task = d.str()
	st.TaskAt = d.time()
	st.Fallback = d.str()
	st.FallbackAt = d.time()
	st.Tokens.Used = d.varint()
	st.Tokens.Max = d.varint()
	st.Seq = d.varint()
	st.Calls = readMap(d, 3, (*dec).call)
	st.CallOrder = readList(d, 1, (*dec).str)
	st.FailedCalls = readMap(d, 1, (*dec).bool)
	st.Edits = readList(d, 9, (*dec).edit)
	st.TestFails = readList(d, 1, (*dec).varint)
	st.Failures = readList(d, 11, (*dec).failure)
	st.FailureKeys = readList(d, 1, (*dec).str)
	st.Done = readList(d, 2, (*dec).done)
	st.Decided = readList(d, 1, (*dec).str)
	st.Seen = readList(d, 1, (*dec).str)
	st.TurnTexts = readList(d, 1, (*dec).str)
	st.LastText = d.str()
	st.GoalWeak = d.bool()
	st.Latest = d.str()
	st.LatestAt = d.time()
	st.SetAside = readList(d, 1, (*dec).str)
	st.PromptSession = d.varint()
	st.AfterBreak = d.bool()
	st.Answered = d.bool()
	st.Plan = readList(d, 2, (*dec).plan)
	st.Refs = readList(d, 1, (*dec).str)
	st.Actions = readList(d, 1, (*dec).str)
	st.CauseKey = d.str()
	st.LastTest = d.str()
	st.Instructions = readList(d, 3, (*dec).note)
	st.Refused = readList(d, 3, (*dec).note)
	st.Interrupted = d.note()
	st.TaskRef = d.ref()
	st.LatestRef = d.ref()
	st.LastTextRef = d.ref()
	st.LastTextSeq = d.varint()
	st.LastPassSeq = d.varint()
	st.PlanSession = d.varint()
	st.PendingCall = d.str()
	st.StopSeq = d.varint()
	st.RowRef = d.ref()
	st.TurnRefs = readList(d, 2, (*dec).ref)
	st.Sources = readList(d, 3, (*dec).note)
}

func (e *enc) note(x Note) {
	e.str(x.Text)
	e.time(x.At)
	writeList(e, x.Refs, (*enc).ref)
}

func (d *dec) note() (x Note) {
	x.Text = d.str()
	x.At = d.time()
	x.Refs = readList(d, 2, (*dec).ref)
	return x
}

func (e *enc) ref(x Ref) {
	e.varint(x.Session)
	e.varint(x.Seq)
}

func (d *dec) ref() (x Ref) {
	x.Session = d.varint()
	x.Seq = d.varint()
	return x
}

// The element types, each in 9 (Edit), 8 (Failure), 3 (Call), 2 (Done,
// PlanItem) or 1 byte at least: readList's and readMap's minimum sizes above.

func (e *enc) edit(x Edit) {
	e.str(x.Path)
	e.str(x.Call)
	e.time(x.At)
	e.varint(x.Seq)
	e.bool(x.Created)
	e.bool(x.Deleted)
	writeList(e, x.Todos, (*enc).str)
	e.ref(x.Ref)
}

func (d *dec) edit() (x Edit) {
	x.Path = d.str()
	x.Call = d.str()
	x.At = d.time()
	x.Seq = d.varint()
	x.Created = d.bool()
	x.Deleted = d.bool()
	x.Todos = readList(d, 1, (*dec).str)
	x.Ref = d.ref()
	return x
}

func (e *enc) failure(x Failure) {
	e.str(x.What)
	e.str(x.Error)
	e.bool(x.ExitCode != nil)
	if x.ExitCode != nil {
		e.int(*x.ExitCode)
	}
	e.int(x.Count)
	e.bool(x.Resolved)
	e.time(x.At)
	writeList(e, x.Errors, (*enc).str)
	e.str(x.Cause)
	e.varint(x.Seq)
	writeList(e, x.Refs, (*enc).ref)
	e.bool(x.Superseded)
}

func (d *dec) failure() (x Failure) {
	x.What = d.str()
	x.Error = d.str()
	if d.bool() {
		n := d.int()
		x.ExitCode = &n
	}
	x.Count = d.int()
	x.Resolved = d.bool()
	x.At = d.time()
	x.Errors = readList(d, 1, (*dec).str)
	x.Cause = d.str()
	x.Seq = d.varint()
	x.Refs = readList(d, 2, (*dec).ref)
	x.Superseded = d.bool()
	return x
}

func (e *enc) done(x Done) {
	e.str(x.Text)
	e.str(x.Call)
}

func (d *dec) done() (x Done) {
	x.Text = d.str()
	x.Call = d.str()
	return x
}

func (e *enc) call(x Call) {
	e.str(x.ToolName)
	e.str(x.Command)
	e.str(x.FilePath)
}

func (e *enc) plan(x PlanItem) {
	e.str(x.Text)
	e.bool(x.Done)
}

func (d *dec) plan() (x PlanItem) {
	x.Text = d.str()
	x.Done = d.bool()
	return x
}

func (d *dec) call() (x Call) {
	x.ToolName = d.str()
	x.Command = d.str()
	x.FilePath = d.str()
	return x
}

// enc writes the encoding of values into b, which it does not grow: n is
// how much is written. With sizing set it only counts bytes in n.
type enc struct {
	b      []byte
	n      int
	sizing bool
}

func (e *enc) uvarint(v uint64) {
	if e.sizing {
		e.n += (bits.Len64(v|1) + 6) / 7
		return
	}
	e.n += binary.PutUvarint(e.b[e.n:], v)
}

// varint writes v zig-zag encoded, as binary.AppendVarint.
func (e *enc) varint(v int64) { e.uvarint(uint64(v<<1) ^ uint64(v>>63)) }
func (e *enc) int(v int)      { e.varint(int64(v)) }

func (e *enc) raw(s string) {
	if !e.sizing {
		copy(e.b[e.n:], s)
	}
	e.n += len(s)
}

func (e *enc) str(s string) {
	e.uvarint(uint64(len(s)))
	e.raw(s)
}

func (e *enc) bool(v bool) {
	if v {
		e.uvarint(1)
	} else {
		e.uvarint(0)
	}
}

func (e *enc) time(t time.Time) {
	if t.IsZero() {
		e.uvarint(0)
		return
	}
	e.uvarint(uint64(t.Nanosecond()) + 1)
	e.varint(t.Unix())
}

// writeList writes a slice: 0 for nil, else 1+len and the elements.
func writeList[T any](e *enc, s []T, each func(*enc, T)) {
	if s == nil {
		e.uvarint(0)
		return
	}
	e.uvarint(uint64(len(s)) + 1)
	for _, x := range s {
		each(e, x)
	}
}

// writeMap writes a map: its length, then each key and value by ascending
// key.
func writeMap[V any](e *enc, m map[string]V, each func(*enc, V)) {
	e.uvarint(uint64(len(m)))
	if e.sizing { // the order does not change the size
		for k, v := range m {
			e.str(k)
			each(e, v)
		}
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		e.str(k)
		each(e, m[k])
	}
}

// dec reads values from b. The first error is kept in err; every read after
// it returns the zero value, so callers check err once at the end.
type dec struct {
	b   []byte
	s   string // b as a string, which decoded strings share
	off int
	err error
}

func (d *dec) fail(why string) {
	if d.err == nil {
		d.err = errors.New("distill state: " + why)
	}
}

func (d *dec) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	if d.off < len(d.b) && d.b[d.off] < 0x80 { // one byte: most counts and lengths
		d.off++
		return uint64(d.b[d.off-1])
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	if d.b[d.off+n-1] == 0 { // a trailing zero group: not the shortest form
		d.fail("overlong varint")
		return 0
	}
	d.off += n
	return v
}

func (d *dec) varint() int64 {
	u := d.uvarint() // zig-zag, as binary.Varint
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (d *dec) int() int {
	v := d.varint()
	if int64(int(v)) != v {
		d.fail("int out of range")
		return 0
	}
	return int(v)
}

func (d *dec) bool() bool {
	switch d.uvarint() {
	case 0:
		return false
	case 1:
		return true
	}
	d.fail("bad bool")
	return false
}

func (d *dec) str() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)-d.off) {
		d.fail("string past the end")
		return ""
	}
	s := d.s[d.off : d.off+int(n)]
	d.off += int(n)
	return s
}

func (d *dec) time() time.Time {
	h := d.uvarint()
	if h == 0 {
		return time.Time{}
	}
	if h > 1e9 {
		d.fail("bad nanoseconds")
		return time.Time{}
	}
	sec := d.varint()
	if d.err != nil {
		return time.Time{}
	}
	t := time.Unix(sec, int64(h-1)).UTC()
	if t.IsZero() { // the zero time has its own, shorter encoding
		d.fail("overlong zero time")
	}
	return t
}

// fits checks a length just read, of elements that take at least minSize
// bytes each: a length the remaining bytes cannot hold is an error, so a
// broken blob never makes the decoder allocate more than its size implies.
func (d *dec) fits(n uint64, minSize int) int {
	if d.err == nil && n > uint64((len(d.b)-d.off)/minSize) {
		d.fail("length past the end")
	}
	if d.err != nil {
		return 0
	}
	return int(n)
}

// readMap reads a map written by writeMap, whose values take at least
// minSize bytes each (and keys one). It is never nil.
func readMap[V any](d *dec, minSize int, each func(*dec) V) map[string]V {
	n := d.fits(d.uvarint(), 1+minSize)
	m := make(map[string]V, n)
	var prev string
	for i := 0; i < n && d.err == nil; i++ {
		k := d.str()
		if i > 0 && k <= prev {
			d.fail("map keys out of order")
		}
		m[k] = each(d)
		prev = k
	}
	return m
}

// readList reads a slice written by writeList; its elements take at least
// minSize bytes each.
func readList[T any](d *dec, minSize int, each func(*dec) T) []T {
	h := d.uvarint()
	if h == 0 {
		return nil
	}
	n := d.fits(h-1, minSize)
	if d.err != nil {
		return nil
	}
	s := make([]T, n)
	for i := range s {
		if d.err != nil {
			break
		}
		s[i] = each(d)
	}
	return s
}
