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
	needleDapi needleKind = iota
	needleExpect
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

// initNeedles runs after initGen has filled genIndexed.
func initNeedles() {
	addNeedle(needle{lit: "dapi", kind: needleDapi})
	addNeedle(needle{lit: "expect", kind: needleExpect})
	for _, h := range b64Headers {
		addNeedle(needle{lit: h, kind: needleB64})
	}
	for _, n := range genIndexed {
		addNeedle(needle{lit: n.needle, kind: needleGen, tok: n.tok})
	}
}

// needleMatches appends the matches the needles find in s.
func needleMatches(s string, ms []Match) []Match {
	for _, g := range needleGroups {
		b64Done, expectDone := 0, 0
		for off := 0; ; {
			k := strings.Index(s[off:], g.key)
			if k < 0 {
				break
			}
			j := off + k
			off = j + 1
			for _, n := range g.needles {
				i := j - n.off
				if !hasPrefixAt(s, i, n.lit) {
					continue
				}
				switch n.kind {
				case needleDapi:
					if m, ok := databricks(s, i); ok {
						ms = append(ms, m)
					}
				case needleExpect:
					if i < expectDone {
						continue
					}
					if m, ok := promptAnswer(s, i+len(n.lit)); ok {
						ms = append(ms, m)
						expectDone = m.End
					}
				case needleB64:
					if i < b64Done {
						continue
					}
					if m, ok := base64Secret(s, i); ok {
						ms = append(ms, m)
						b64Done = m.End
					}
				case needleGen:
					if m, ok := genMatch(s, i, n.tok); ok {
						ms = append(ms, m)
					}
				}
			}
		}
	}
	return ms
}
