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
	b       byte // the group's filter byte
	needles []needle
	// whole is the group's one needle when its filter byte is a common
	// lower-case letter: strings.Index of it beats IndexByte of the letter
	// (dapi: 7 us against 11 us per 32 KB of clean text).
	whole string
}

var needleGroups []needleGroup

func addNeedle(n needle) {
	n.off = filterByte(n.lit)
	b := n.lit[n.off]
	for k := range needleGroups {
		if needleGroups[k].b == b {
			needleGroups[k].needles = append(needleGroups[k].needles, n)
			return
		}
	}
	needleGroups = append(needleGroups, needleGroup{b: b, needles: []needle{n}})
}

// initNeedleGroups sets whole (see needleGroup) once the groups are full.
func initNeedleGroups() {
	for k := range needleGroups {
		g := &needleGroups[k]
		if len(g.needles) == 1 && isLowerByte(g.b) && strings.IndexByte(byteRank[10:36], g.b) < 20 {
			g.whole = g.needles[0].lit
		}
	}
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
	initNeedleGroups()
}

// needleMatches appends the matches the needles find in s.
func needleMatches(s string, ms []Match) []Match {
	for _, g := range needleGroups {
		b64Done, expectDone := 0, 0
		for off := 0; ; {
			var k int
			if g.whole != "" {
				k = strings.Index(s[off:], g.whole) // dapi: its 'p' is in every other word
				if k >= 0 {
					k += g.needles[0].off
				}
			} else {
				k = strings.IndexByte(s[off:], g.b)
			}
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
