package redact

import "strings"

// The formats with no trigger byte are found by literal needles: "dapi"
// (databricks), "expect" (prompt answers), the base64 spellings of secret
// headers (b64Headers) and the generated literals with no anchor byte
// (genIndexed). Needles are grouped by their rarest byte (the first one
// that is not a lower-case letter, else the rarest letter: 'x' of expect,
// 'p' of dapi), and each group costs one SIMD strings.IndexByte pass: a
// strings.Index per needle was 11 passes (17 % of the clean corpus's
// time: 'e' and 'd' in every other word restarted each one), a byte-pair
// table read at every byte 12 %.

type needleKind uint8

const (
	needleExpect needleKind = iota
	needleB64
	needleGen
)

type needle struct {
	lit  string
	kind needleKind
	tok  *genToken // needleGen
	off  int       // index of the group's filter byte in lit
}

type needleGroup struct {
	key     string // searched with strings.Index; each needle has it at off
	needles []needle
}

var needleGroups []needleGroup

// addNeedle files n under the four bytes of its literal from its rarest
// byte (or the whole literal when that byte is a common letter: dapi's
// 'p' is in every other word): one strings.Index pass per key. A key
// beginning with a rare byte is a SIMD IndexByte scan that seldom stops
// (LS0t: 1.4 us per 32 KB of clean text); an IndexByte loop per byte
// stopped at every 'x' of expect or 'R' and re-entered (2-3x that).
func addNeedle(n needle) {
	n.off = filterByte(n.lit)
	if c := n.lit[n.off]; isLowerByte(c) && strings.IndexByte(byteRank[10:36], c) < 20 {
		n.off = 0
	}
	key := n.lit[n.off:min(len(n.lit), n.off+4)]
	for k := range needleGroups {
		if needleGroups[k].key == key {
			needleGroups[k].needles = append(needleGroups[k].needles, n)
			return
		}
	}
	needleGroups = append(needleGroups, needleGroup{key, []needle{n}})
}

// filterByte returns the index of lit's rarest byte (see needleGroup).
func filterByte(lit string) int {
	best, rank := 0, -1
	for k := 0; k < len(lit); k++ {
		if !isLowerByte(lit[k]) {
			return k
		}
		if r := strings.IndexByte(byteRank[10:36], lit[k]); r > rank {
			best, rank = k, r
		}
	}
	return best
}

// trigNeedles[c] are the needles whose rarest byte c is a trigger: the
// base64 header spellings (on 'L', 'U', 'V', 'Q', 'R') and "expect" (on
// its 'x'). Their byte before and after go into the neighbour filters, so
// clean text pays for them in skipCold's table lookups, not in a search
// pass each (seven strings.Index passes were 12 % of 4 KB of Go's time).
var (
	trigNeedles   [256][]needle
	trigNeedlePN  [256]pnFilter
	trigNeedleAny [256]bool // a needle of c starts with c: no byte before needed
)

func addTrigNeedle(n needle) {
	n.off = filterByte(n.lit)
	c := n.lit[n.off]
	trigNeedles[c] = append(trigNeedles[c], n)
	hot[c], hot8[c] = true, 1
	f := &trigNeedlePN[c]
	if n.off == 0 {
		trigNeedleAny[c] = true
		f.prev = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
	} else {
		p := n.lit[n.off-1]
		f.prev[p>>6] |= 1 << (p & 63)
	}
	x := n.lit[n.off+1] // every needle has a byte after its rarest one
	f.next[x>>6] |= 1 << (x & 63)
}

// needlePass adds the triggered needles' rows to the pass tables (after
// scan.go's init has filled them).
func needlePass(pp, pn *[256][256]uint8) {
	for c := range trigNeedles {
		if len(trigNeedles[c]) == 0 {
			continue
		}
		f := &trigNeedlePN[c]
		for x := 0; x < 256; x++ {
			if f.prev[x>>6]&(1<<(x&63)) != 0 {
				pp[c][x] = 1
			}
			if f.next[x>>6]&(1<<(x&63)) != 0 {
				pn[c][x] = 1
			}
		}
		if trigNeedleAny[c] {
			needPrev[c] = false
		}
	}
}

// trigNeedleAt tries the needles anchored on s[i].
func trigNeedleAt(s string, i int) (Match, bool) {
	c := s[i]
	if i+1 >= len(s) || !trigNeedlePN[c].ok(0, s[i+1]) && !trigNeedlePN[c].ok(s[max(0, i-1)], s[i+1]) {
		return Match{}, false
	}
	for _, n := range trigNeedles[c] {
		st := i - n.off
		if !hasPrefixAt(s, st, n.lit) {
			continue
		}
		switch n.kind {
		case needleExpect:
			return promptAnswer(s, st+len(n.lit))
		case needleB64:
			if m, ok := base64Secret(s, st); ok {
				return m, true
			}
		}
	}
	return Match{}, false
}

// initNeedles runs after initGen has filled genIndexed.
func initNeedles() {
	addTrigNeedle(needle{lit: "expect", kind: needleExpect})
	for _, h := range b64Headers {
		addTrigNeedle(needle{lit: h, kind: needleB64})
	}
	for _, n := range genIndexed {
		addNeedle(needle{lit: n.needle, kind: needleGen, tok: n.tok})
	}
}

// needleMatches appends the matches the needles find in s.
func needleMatches(s string, ms []Match) []Match {
	for _, g := range needleGroups {
		var done needleDone
		for off := 0; ; {
			k := strings.Index(s[off:], g.key)
			if k < 0 {
				break
			}
			j := off + k
			off = j + 1
			for _, n := range g.needles {
				if i := j - n.off; hasPrefixAt(s, i, n.lit) {
					ms = done.match(s, i, n, ms)
				}
			}
		}
	}
	return ms
}

// needleDone is where the last expect and base64 matches of a group end:
// a needle inside one is not tried again.
type needleDone struct{ b64, expect int }

// match appends what needle n finds at i.
func (d *needleDone) match(s string, i int, n needle, ms []Match) []Match {
	var m Match
	ok := false
	switch n.kind {
	case needleExpect:
		if i >= d.expect {
			if m, ok = promptAnswer(s, i+len(n.lit)); ok {
				d.expect = m.End
			}
		}
	case needleB64:
		if i >= d.b64 {
			if m, ok = base64Secret(s, i); ok {
				d.b64 = m.End
			}
		}
	case needleGen:
		m, ok = genMatch(s, i, n.tok)
	}
	if ok {
		ms = append(ms, m)
	}
	return ms
}
