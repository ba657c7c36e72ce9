package claudejson

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// This file holds two kinds of JSON scanning:
//
//   - lenient (topLevel, skipValue; the old pickFields): find where the fields of a
//     line's top-level object start and end without validating them, so a
//     parser can ignore big fields (Claude's toolUseResult repeats whole
//     files) at memory-scan speed;
//   - strict (jsonReader, AppendUnquoted, foldKey): validate and read the
//     few values a parser keeps exactly as encoding/json would, without
//     reflection and without allocating (the decoder in decode.go is
//     built on it).

// topLevel calls fn for each key of the top-level JSON object in b with the
// raw bytes of its value, without decoding or validating values. It lets a
// parser pick the few fields it needs from a large line (Claude's
// toolUseResult repeats whole files) at memory-scan speed and hand only
// those to encoding/json. It stops at the first malformed byte; callers
// still validate what they decode.
func topLevel(b []byte, fn func(key, val []byte)) {
	for i := topLevelStart(b); i >= 0; {
		key, val, next, ok := topLevelNext(b, i)
		if !ok {
			return
		}
		fn(key, val)
		i = next
	}
}

// topLevelStart returns the position topLevelNext reads the first field
// from, or -1 when b is not an object.
func topLevelStart(b []byte) int {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return -1
	}
	return i + 1
}

// topLevelNext reads the field at b[i:] (i from topLevelStart or a
// previous topLevelNext): the raw key (between its quotes, escapes left
// as they are) and the raw value. ok is false when there is no field at i
// (end of object or a malformed byte); next is where the following field
// starts, or -1 when this one was the last (no comma after it).
func topLevelNext(b []byte, i int) (key, val []byte, next int, ok bool) {
	key, vs, ok := topLevelKey(b, i)
	if !ok {
		return nil, nil, -1, false
	}
	end := skipValue(b, vs)
	if end < 0 {
		return nil, nil, -1, false
	}
	return key, b[vs:end], topLevelAfter(b, end), true
}

// topLevelKey reads the key of the field at b[i:] and returns where its
// value starts.
func topLevelKey(b []byte, i int) (key []byte, valStart int, ok bool) {
	i = skipWS(b, i)
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	ks := i + 1
	i = skipString(b, i)
	if i < 0 {
		return nil, 0, false
	}
	key = b[ks : i-1]
	i = skipWS(b, i)
	if i >= len(b) || b[i] != ':' {
		return nil, 0, false
	}
	return key, skipWS(b, i+1), true
}

// topLevelAfter returns where the field after the value ending at b[end]
// starts, or -1 if there is none.
func topLevelAfter(b []byte, end int) int {
	next := skipWS(b, end)
	if next >= len(b) || b[next] != ',' {
		return -1
	}
	return next + 1
}

// endsLenientScalar reports whether skipValue ends a number or literal
// at c: the bytes skipValue's default case stops at.
func endsLenientScalar(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"',
// or -1 if it does not end. It is lenient: a backslash escapes the next
// byte, nothing else is checked.
func skipString(b []byte, i int) int {
	i++
	// Most strings are short: look at 8 bytes at a time for a quote or a
	// backslash, for up to 64 bytes.
	for short := min(i+64, len(b)); i < short; {
		if i+8 <= len(b) {
			if m := quoteOrBackslash(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) / 8
			} else {
				i += 8
				continue
			}
		} else if c := b[i]; c != '"' && c != '\\' {
			i++
			continue
		}
		if b[i] == '"' {
			return i + 1
		}
		i += 2
	}
	if i >= len(b) {
		return -1
	}
	// A long one (a file's content): jump from quote to quote with
	// bytes.IndexByte. A quote ends the string unless an odd run of
	// backslashes precedes it (`\\"` ends, `\\\"` does not). The byte at
	// start is not escaped (the scan above never stops inside an escape),
	// so runs are counted from there.
	for start := i; i < len(b); {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return -1
		}
		q += i
		n := 0
		for q-n-1 >= start && b[q-n-1] == '\\' {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
	return -1
}

// quoteOrBackslash flags the bytes of w that are '"' or '\\' (the lowest
// flagged byte is exact; see stringStop).
func quoteOrBackslash(w uint64) uint64 {
	q := w ^ (swarOnes * '"')
	bs := w ^ (swarOnes * '\\')
	return (((q - swarOnes) &^ q) | ((bs - swarOnes) &^ bs)) & swarHigh
}

// skipValue returns the index after the value starting at b[i]. Like
// skipString it is lenient: brackets are counted, not matched.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				j := skipString(b, i)
				if j < 0 {
					return -1
				}
				i = j - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	default:
		for ; i < len(b); i++ {
			if endsLenientScalar(b[i]) {
				return i
			}
		}
		return i
	}
}

// maxJSONDepth is encoding/json's nesting limit (its scanner's
// maxNestingDepth): a document nesting deeper is a syntax error.
const maxJSONDepth = 10000

// Span is a part of the buffer a jsonReader reads: b[lo:hi]. Decoders
// record spans rather than slices: they hold no pointers, so recording a
// field costs no GC write barrier.
type Span struct{ lo, hi int }

// Of returns the bytes of s in b, the buffer it was read from.
func (s Span) Of(b []byte) []byte { return b[s.lo:s.hi] }

// Len is the length of s in bytes.
func (s Span) Len() int { return s.hi - s.lo }

// jsonReader reads JSON values strictly: it accepts exactly what
// encoding/json's scanner accepts (RFC 8259 grammar, no control bytes in
// strings, nesting at most maxJSONDepth deep; invalid UTF-8 is accepted
// and replaced when strings are unquoted). On the first syntax error it
// sets bad and moves to the end of the input, so every later read fails
// fast and callers only check bad once at the end.
type jsonReader struct {
	b     []byte
	i     int
	depth int // open objects and arrays, counting any enclosing ones
	bad   bool
	// open has one bit per nesting level skip is inside: 1 for an
	// object, 0 for an array.
	open [maxJSONDepth/64 + 1]uint64
}

// reset makes r read b from b[i], inside depth open objects and arrays.
func (r *jsonReader) reset(b []byte, i, depth int) {
	r.b, r.i, r.depth, r.bad = b, i, depth, false
}

func (r *jsonReader) fail() {
	r.bad = true
	r.i = len(r.b)
}

// peek skips whitespace and returns the next byte (0 at the end).
func (r *jsonReader) peek() byte {
	if r.i < len(r.b) && r.b[r.i] > ' ' {
		return r.b[r.i] // compact JSON: no white space to skip
	}
	r.i = skipWS(r.b, r.i)
	if r.i >= len(r.b) {
		return 0
	}
	return r.b[r.i]
}

// enter consumes the '{' or '[' at r.i.
func (r *jsonReader) enter() {
	r.i++
	r.depth++
	if r.depth > maxJSONDepth {
		r.fail()
	}
}

// nextKey reads up to the next member of the object entered last: it
// returns the raw key (between its quotes) with ok, or ok false after
// the closing '}' (or on a syntax error). first is true for the first call
// after enter.
func (r *jsonReader) nextKey(first bool) (key []byte, ok bool) {
	c := r.peek()
	if c == '}' {
		r.i++
		r.depth--
		return nil, false
	}
	if !first {
		if c != ',' {
			r.fail()
			return nil, false
		}
		r.i++
		c = r.peek()
	}
	if c != '"' {
		r.fail()
		return nil, false
	}
	key = r.str().Of(r.b)
	if r.peek() != ':' {
		r.fail()
		return nil, false
	}
	r.i++
	return key, !r.bad
}

// nextElem reads up to the next element of the array entered last; ok is
// false after the closing ']' (or on a syntax error).
func (r *jsonReader) nextElem(first bool) bool {
	c := r.peek()
	if c == ']' {
		r.i++
		r.depth--
		return false
	}
	if !first {
		if c != ',' {
			r.fail()
			return false
		}
		r.i++
	}
	return !r.bad
}

// SWAR ("SIMD within a register") constants: with these, one 64-bit word
// tests 8 bytes at once.
const (
	swarOnes = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

// stringStop returns a mask with the high bit set in the bytes of w that a
// string scan must stop at ('"', '\\', control bytes < 0x20). Bytes above
// the lowest flagged one may be flagged wrongly (borrows), but the lowest
// flagged byte is always a real match, which is all callers use.
func stringStop(w uint64) uint64 {
	q := w ^ (swarOnes * '"')
	bs := w ^ (swarOnes * '\\')
	return ((q-swarOnes)&^q | (bs-swarOnes)&^bs | (w-swarOnes*0x20)&^w) & swarHigh
}

// str reads the string at r.i (r.b[r.i] == '"') and returns its raw
// content between the quotes, still escaped.
func (r *jsonReader) str() Span {
	b := r.b
	start := r.i + 1
	i := start
	for {
		for i+8 <= len(b) {
			if m := stringStop(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		if i >= len(b) {
			r.fail()
			return Span{}
		}
		switch c := b[i]; {
		case c == '"':
			r.i = i + 1
			return Span{start, i}
		case c == '\\':
			n := escapeLen(b[i:])
			if n == 0 {
				r.fail()
				return Span{}
			}
			i += n
		case c < 0x20:
			r.fail()
			return Span{}
		default:
			i++
		}
	}
}

// escapeLen is the length of the escape sequence b starts with, 0 when
// it is not a valid one.
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(b) >= 6 && isHex(b[2]) && isHex(b[3]) && isHex(b[4]) && isHex(b[5]) {
			return 6
		}
	}
	return 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// number reads the number at r.i and returns its bytes.
func (r *jsonReader) number() []byte {
	b, start := r.b, r.i
	i := numberEnd(b, start)
	if i < 0 {
		r.fail()
		return nil
	}
	r.i = i
	return b[start:i]
}

// numberEnd is the index after the JSON number at b[i], -1 if there is
// none: an integer part (a leading 0 is the whole of it), a fraction and
// an exponent.
func numberEnd(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if i = skipDigits(b, i); i < 0 {
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if i = skipDigits(b, i+1); i < 0 {
			return -1
		}
	}
	if i >= len(b) || b[i] != 'e' && b[i] != 'E' {
		return i
	}
	i++
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	return skipDigits(b, i)
}

// skipDigits returns the index after the one or more digits at b[i:], or
// -1 if there is none.
func skipDigits(b []byte, i int) int {
	j := i
	for j < len(b) && '0' <= b[j] && b[j] <= '9' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// literal reads true, false or null at r.i.
func (r *jsonReader) literal() {
	var want string
	switch r.b[r.i] {
	case 't':
		want = "true"
	case 'f':
		want = "false"
	default:
		want = "null"
	}
	if len(r.b)-r.i < len(want) || string(r.b[r.i:r.i+len(want)]) != want {
		r.fail()
		return
	}
	r.i += len(want)
}

// scalar reads the string, number or literal at r.i, whose first byte is
// c; anything else is a syntax error.
func (r *jsonReader) scalar(c byte) {
	switch {
	case c == '"':
		r.str()
	case c == 't' || c == 'f' || c == 'n':
		r.literal()
	case c == '-' || '0' <= c && c <= '9':
		r.number()
	default:
		r.fail()
	}
}

// skip validates and steps over the next value, whatever it is. Nesting
// is tracked in r.open, not on the Go stack, so deep input cannot
// overflow it.
func (r *jsonReader) skip() {
	level := 0 // containers opened by this call and still open
	for {
		// A value.
		switch c := r.peek(); c {
		case '{', '[':
			r.enter()
			if r.bad {
				return
			}
			if c == '{' {
				r.open[level/64] |= 1 << (level % 64)
			} else {
				r.open[level/64] &^= 1 << (level % 64)
			}
			level++
			if c == '{' {
				if _, ok := r.nextKey(true); ok {
					continue // read the member's value
				}
			} else if r.nextElem(true) {
				continue // read the element
			}
			// Empty container (or a syntax error): closed already.
			level--
		default:
			r.scalar(c)
		}
		// After a value: close containers until one has another member.
		for {
			if r.bad || level == 0 {
				return
			}
			inObject := r.open[(level-1)/64]&(1<<((level-1)%64)) != 0
			var more bool
			if inObject {
				_, more = r.nextKey(false)
			} else {
				more = r.nextElem(false)
			}
			if more {
				break
			}
			level--
		}
	}
}

// AppendUnquoted appends the JSON string content raw (the bytes between
// the quotes) to dst, unescaped exactly as encoding/json does it: escapes
// decoded, \uXXXX surrogate pairs combined, a lone or mismatched surrogate
// and every byte of invalid UTF-8 replaced by U+FFFD.
//
// With limit >= 0 it stops once it has appended at least limit bytes; more
// then reports that raw was not used up. What it appends is always a
// prefix of the full result: it only stops between units (a character, an
// escape, a surrogate pair), and it looks at the bytes after the unit it
// ends on just like the full decode would. ok is false for an incomplete
// or invalid escape (raw was cut short), as encoding/json would reject it.
func AppendUnquoted(dst, raw []byte, limit int) (out []byte, more, ok bool) {
	start := len(dst)
	r := 0
	for r < len(raw) {
		room := len(raw) // bytes that may still be appended
		if limit >= 0 {
			room = limit - (len(dst) - start)
			if room <= 0 {
				return dst, true, true
			}
		}
		c := raw[r]
		switch {
		case c == '\\':
			var ok bool
			if dst, r, ok = appendEscape(dst, raw, r); !ok {
				return dst, false, false
			}
		case c < utf8.RuneSelf:
			// A run of plain ASCII is copied as it is.
			end := ASCIIRun(raw, r)
			if end-r > room {
				end = r + room
			}
			dst = append(dst, raw[r:end]...)
			r = end
		default:
			rr, size := utf8.DecodeRune(raw[r:])
			if rr == utf8.RuneError && size == 1 {
				dst = append(dst, "\uFFFD"...)
			} else {
				dst = append(dst, raw[r:r+size]...)
			}
			r += size
		}
	}
	return dst, false, true
}

// unescapes maps the byte after a backslash to the byte it stands for
// (0: none; \u is read apart).
var unescapes = [256]byte{'"': '"', '\\': '\\', '/': '/', '\'': '\'', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// appendEscape appends what the escape at raw[r] stands for and returns
// the index after it; ok is false for an invalid escape. A lone or
// invalid surrogate is U+FFFD.
func appendEscape(dst, raw []byte, r int) (_ []byte, next int, ok bool) {
	if r+1 >= len(raw) {
		return dst, r, false
	}
	if v := unescapes[raw[r+1]]; v != 0 {
		return append(dst, v), r + 2, true
	}
	if raw[r+1] != 'u' {
		return dst, r, false
	}
	rr := getu4(raw[r:])
	if rr < 0 {
		return dst, r, false
	}
	r += 6
	if utf16.IsSurrogate(rr) {
		if dec := utf16.DecodeRune(rr, getu4(raw[r:])); dec != unicode.ReplacementChar {
			return utf8.AppendRune(dst, dec), r + 6, true // a valid pair
		}
		rr = unicode.ReplacementChar
	}
	return utf8.AppendRune(dst, rr), r, true
}

// ASCIIRun returns the end of the run of ASCII bytes other than '\\'
// starting at raw[i] (8 bytes at a time).
func ASCIIRun(raw []byte, i int) int {
	for i+8 <= len(raw) {
		w := binary.LittleEndian.Uint64(raw[i:])
		bs := w ^ (swarOnes * '\\')
		if m := (w | ((bs - swarOnes) &^ bs)) & swarHigh; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
		i += 8
	}
	for i < len(raw) && raw[i] < utf8.RuneSelf && raw[i] != '\\' {
		i++
	}
	return i
}

// getu4 decodes \uXXXX from the beginning of s, or returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c = c - '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// plainString reports whether the raw string content needs no unquoting:
// no escapes and valid UTF-8, so its bytes are the decoded string.
func plainString(raw []byte) bool {
	return bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw)
}

// maxFoldedKey bounds the keys foldKey folds: longer ones cannot match
// any struct field name the decoders know (the longest is 27 bytes, and
// folding shrinks a key at most threefold: "K" is 3 bytes for 'k').
const maxFoldedKey = 96

// foldKey returns the raw object key (escaped, between its quotes)
// unescaped and case-folded the way encoding/json matches keys to struct
// fields: a key matches a field when foldKey(key) == the field name in
// upper case (ASCII letters are upper-cased, other runes mapped to the
// smallest rune of their case-folding orbit, so "K" (Kelvin) folds to
// 'K' and "ſ" to 'S'). buf is scratch space for the result; a key that
// cannot match any field (too long) folds to nil.
func foldKey(buf *[maxFoldedKey]byte, raw []byte) []byte {
	key := raw
	if !plainString(raw) {
		var dec [maxFoldedKey + 8]byte // room for the last rune past the limit
		d, more, ok := AppendUnquoted(dec[:0], raw, maxFoldedKey+1)
		if more || !ok || len(d) > maxFoldedKey {
			return nil
		}
		key = d
	}
	if len(key) > maxFoldedKey {
		return nil
	}
	out := buf[:0]
	for i := 0; i < len(key); {
		if c := key[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(key[i:])
		out = utf8.AppendRune(out, foldRune(r))
		i += n
	}
	return out
}

// foldRune returns the smallest rune of r's case-folding orbit (as
// encoding/json's fold.go does).
func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}
