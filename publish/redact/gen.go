package redact

import (
	"slices"
	"strings"
	"sync"
)

// The generated rules (rules_gen.go, see gen_test.go): token formats
// reduced to a literal with a byte-set span before and after it, and
// keyword rules (a vendor name in the key, a value of a given set and
// length). Each literal is anchored on one of its bytes (its last '_', '-',
// '.', '~' or '/', else its first digit or, when case matters, upper-case
// letter); that byte becomes a trigger whose neighbour filters admit only
// the bytes the literal has beside it. Literals with no such byte
// (databricks' "dapi", airtable's "pat") are found with strings.Index.

type genSpan struct {
	set      uint8 // index into genSets
	min, max int   // length range; max -1: unbounded
}

type genToken struct {
	id        string
	lit       string
	fold      bool // the literal matches in any case
	pre, post genSpan
}

type genKeyword struct {
	id       string
	keywords []string // folded like keys: lower case, no _ - .
	val      genSpan
}

// genAnchor is one generated token anchored on a byte of its literal.
type genAnchor struct {
	tok  *genToken
	off  int  // index of the anchor byte in tok.lit
	prev byte // lower-cased lit[off-1], 0 when off == 0
	// next and prev2 are lit[off+1] and lit[off-2] (lower-cased when the
	// literal folds), 0 when out of the literal: genTokenAt compares them
	// inline before calling genMatch. Without them every 'A' of clean
	// text called genMatch for the eight A-literals (AKIA, ASIA, AIza...)
	// and every '_' after a 't' for eleven (sk_test_, github_pat_...):
	// genTokenAt was 19 % of the clean corpus's time.
	next, prev2 byte
	// probe is the distance from the anchor to the last byte the
	// token's span after the literal must have (0: none), a byte of set
	// probeSet: "s." (a Vault token) anchored at every receiver's "s." of
	// Go code fails here, not after scanning the member's name.
	probe    int
	probeSet uint8
	// bound: the literal starts a word (no span before it), so the byte
	// before it must not be a letter or digit: "os." is not Vault's "s.".
	bound bool
}

// quick reports whether the literal's bytes beside the anchor at i match.
func (a *genAnchor) quick(s string, i int) bool {
	return a.byteIs(s, i+1, a.next) && a.byteIs(s, i-2, a.prev2) &&
		(a.probe == 0 || i+a.probe < len(s) && inGenSet(a.probeSet, s[i+a.probe])) &&
		!(a.bound && i-a.off > 0 && isAlnum(s[i-a.off-1]))
}

// byteIs reports whether s[k] is want (0: any byte), lower-cased when the
// literal folds.
func (a *genAnchor) byteIs(s string, k int, want byte) bool {
	if want == 0 {
		return true
	}
	if k < 0 || k >= len(s) {
		return false
	}
	if a.tok.fold {
		return lower(s[k]) == want
	}
	return s[k] == want
}

var (
	// genAt[c] lists the tokens anchored on byte c, sorted by prev;
	// genPrevStart[c][p] is the index of the first with prev p (a binary
	// search was most of genTokenAt's own time).
	genAt        [256][]genAnchor
	genPrevStart [256]*[256]uint8
	// genPrev2[c][k] filters a whole group of anchors of one prev byte on
	// the byte before that: '_' after "t" had 15 literals to try (sk_test_,
	// github_pat_, dckr_pat_...), 2,500 quick checks per 32 KB of clean text.
	genPrev2 [256][][4]uint64
	// genDotPrev marks the bytes before a '.' anchor, for dotShape;
	// genDotLits are the literals that start with their '.' anchor (.ey).
	genDotPrev [256]bool
	genDotLits []*genToken
	// genNeedPrev[c]: every token anchored on c needs a byte before it.
	genHasAnchorless [256]bool
	// genKeyMin is the shortest value a keyword rule accepts.
	genKeyMin = 1 << 30
)

func inGenSet(k uint8, c byte) bool { return genSets[k][c>>6]&(1<<(c&63)) != 0 }

func isLowerByte(c byte) bool { return c >= 'a' && c <= 'z' }

// byteRank orders the bytes a literal may be anchored on from the most to
// the least frequent in code and prose (letters by English frequency, then
// digits); the rarer the anchor, the fewer 8-byte blocks of clean text stop
// the scan. A byte that is a hand-written trigger already costs nothing.
const byteRank = "0123456789" + "etaoinsrhldcumfpgwybvkxjqz" + "ETAOINSRHLDCUMFPGWYBVKXJQZ"

// anchorOf picks the byte of lit that triggers the token (see above), or -1.
func anchorOf(lit string, fold bool) int {
	if k := strings.LastIndexAny(lit, "_-.~/"); k >= 0 {
		return k
	}
	for k := 0; k < len(lit); k++ {
		if !isAlnum(lit[k]) {
			return k // @, %, |
		}
	}
	best, score := -1, -1
	for k := 0; k < len(lit); k++ {
		if r := anchorRank(lit[k], fold); r > score {
			best, score = k, r
		}
	}
	return best
}

// anchorRank is how rare the letter or digit c is as an anchor (see
// byteRank), -1 when it cannot be one.
func anchorRank(c byte, fold bool) int {
	switch {
	case !fold && isLowerByte(c):
		return -1 // lower-case letters are most of the text
	case !fold && hot[c]:
		return 1000 // a hand-written trigger: no new stop in clean text
	case !fold:
		return strings.IndexByte(byteRank, c) // digits rank first: in every number, date and hash
	case c >= '0' && c <= '9':
		return 0
	}
	// Both cases become triggers: rank by the lower-case one, and only the
	// six rarest letters qualify.
	if r := strings.IndexByte(byteRank[10:36], lower(c)); r >= 26-6 {
		return r + 10
	}
	return -1
}

// initGen anchors the generated tokens and widens the trigger tables; it
// runs before the pass tables are filled (scan.go init). ~200 tokens: a
// few microseconds.
func initGen() {
	for i := range genTokens {
		anchorToken(&genTokens[i])
	}
	for c := range genAt {
		indexAnchors(c)
	}
	for i := range genKeywords {
		indexKeywords(i)
	}
	for c, h := range hot {
		if h {
			hot8[c] = 1
		}
	}
}

// anchorToken adds token t to genAt under its anchor byte (both cases when
// it folds), or to the needles when it has no anchor.
func anchorToken(t *genToken) {
	a := anchorOf(t.lit, t.fold)
	if a < 0 {
		indexToken(t)
		return
	}
	an := genAnchor{tok: t, off: a, bound: t.pre.max == 0 && isAlnum(t.lit[0]),
		prev: lower(litByte(t.lit, a-1)), next: litByte(t.lit, a+1), prev2: litByte(t.lit, a-2)}
	if t.fold {
		an.next, an.prev2 = lower(an.next), lower(an.prev2)
	}
	if t.post.min > 0 {
		an.probe = len(t.lit) - 1 - a + t.post.min
	}
	an.probeSet = t.post.set
	addAnchor(t.lit[a], an)
	if t.fold && (lower(t.lit[a]) != t.lit[a] || isLowerByte(t.lit[a])) {
		addAnchor(swapCase(t.lit[a]), an)
	}
}

// litByte is lit[k], or 0 out of the literal.
func litByte(lit string, k int) byte {
	if k < 0 || k >= len(lit) {
		return 0
	}
	return lit[k]
}

// indexToken adds a token without an anchor byte to the needles Find
// searches for, in the two spellings real tokens use when it folds.
func indexToken(t *genToken) {
	addNeedle(needle{lit: t.lit, kind: needleGen, tok: t})
	if !t.fold {
		return
	}
	for _, n := range []string{strings.ToLower(t.lit), strings.ToUpper(t.lit)} {
		if n != t.lit {
			addNeedle(needle{lit: n, kind: needleGen, tok: t})
		}
	}
}

// addAnchor makes c a trigger byte for anchor an.
func addAnchor(c byte, an genAnchor) {
	t, a := an.tok, an.off
	genAt[c] = append(genAt[c], an)
	hot[c] = true
	if c == '.' && a > 0 {
		genDotPrev[t.lit[a-1]] = true
		genDotPrev[swapCase(t.lit[a-1])] = genDotPrev[swapCase(t.lit[a-1])] || t.fold
	}
	if a == 0 {
		genHasAnchorless[c] = true
		if c == '.' {
			genDotLits = append(genDotLits, t)
		}
	}
}

// indexAnchors sorts the anchors of byte c by the byte before them and
// fills genPrevStart[c] and genPrev2[c].
func indexAnchors(c int) {
	as := genAt[c]
	slices.SortStableFunc(as, func(x, y genAnchor) int { return int(x.prev) - int(y.prev) })
	if len(as) == 0 || len(as) > 255 {
		return // over 255: genTokenAt scans from 0
	}
	st := new([256]uint8)
	for p, k := 0, 0; p < 256; p++ { // st[p]: the first anchor whose prev is >= p
		for k < len(as) && int(as[k].prev) < p {
			k++
		}
		st[p] = uint8(k)
	}
	genPrevStart[c] = st
	// genPrev2[c][k]: the lower-cased bytes two before the anchor that
	// the anchors sharing as[k].prev accept (all when one has none).
	p2 := make([][4]uint64, len(as))
	for k := 0; k < len(as); {
		e := k
		var set [4]uint64
		for ; e < len(as) && as[e].prev == as[k].prev; e++ {
			set = addPrev2(set, as[e])
		}
		for ; k < e; k++ {
			p2[k] = set
		}
	}
	genPrev2[c] = p2
}

func addPrev2(set [4]uint64, a genAnchor) [4]uint64 {
	if a.prev2 == 0 || a.tok.fold {
		return [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
	}
	b := lower(a.prev2)
	set[b>>6] |= 1 << (b & 63)
	return set
}

// indexKeywords adds the keywords of rule i to keyTri and genKwAt.
func indexKeywords(i int) {
	genKeyMin = min(genKeyMin, genKeywords[i].val.min)
	for _, w := range genKeywords[i].keywords {
		addKeyTri(w, triGen) // every keyword has 3 letters (TestRulesGenerated)
		t := uint32(w[0]&31)<<10 | uint32(w[1]&31)<<5 | uint32(w[2]&31)
		if genKwAt[t] == 0 {
			genKwGroups = append(genKwGroups, nil)
			genKwAt[t] = uint8(len(genKwGroups))
		}
		genKwGroups[genKwAt[t]-1] = append(genKwGroups[genKwAt[t]-1], genKwRef{w, i})
	}
}

// genDotShape reports whether the '.' at i may start one of the tokens
// whose literal starts with its '.' anchor (jwt's .ey, airtable's
// pat<14>.<64 hex>): the literal, then 4 bytes of its span after it and a
// byte of its span before it; member accesses (foo.bar) stop here.
func genDotShape(s string, i int) bool {
	for _, t := range genDotLits {
		if !hasPrefixAt(s, i, t.lit) || t.pre.max != 0 && (i == 0 || !inGenSet(t.pre.set, s[i-1])) {
			continue
		}
		p, ok := i+len(t.lit), true
		for k := p; k < p+min(4, t.post.min) && ok; k++ {
			ok = k < len(s) && inGenSet(t.post.set, s[k])
		}
		if ok {
			return true
		}
	}
	return false
}

func onlyDigits(v string) bool { return runTo(v, 0, len(v), cDigit) == len(v) }

func swapCase(c byte) byte {
	switch {
	case c >= 'a' && c <= 'z':
		return c - 32
	case c >= 'A' && c <= 'Z':
		return c + 32
	}
	return c
}

// genFilter is the neighbour filter of the generated anchors on byte c:
// the bytes each may follow and precede, unioned. Built as bit sets, the
// literal's own neighbours set directly: the byte-by-byte version of this
// (256 tests per anchor into two 64 KB tables) was ~40 % of the package's
// init, which every hook process pays.
func genFilter(c int) (f pnFilter) {
	for _, a := range genAt[c] {
		t := a.tok
		switch {
		case a.off > 0:
			f.prev = setBytes(f.prev, t.lit[a.off-1], a.prev)
			if isLowerByte(a.prev) {
				f.prev = setBytes(f.prev, swapCase(a.prev))
			}
		case t.pre.max != 0:
			f.prev = orSet(f.prev, genSets[t.pre.set])
		default:
			f.prev = orSet(f.prev, nonAlnumSet())
		}
		switch {
		case a.off+1 < len(t.lit):
			n := t.lit[a.off+1]
			f.next = setBytes(f.next, n)
			if t.fold && isLetter(n) {
				f.next = setBytes(f.next, lower(n), swapCase(lower(n)))
			}
		default:
			f.next = orSet(f.next, genSets[t.post.set])
		}
	}
	return f
}

func setBytes(set [4]uint64, bs ...byte) [4]uint64 {
	for _, b := range bs {
		set[b>>6] |= 1 << (b & 63)
	}
	return set
}

func orSet(a, b [4]uint64) [4]uint64 {
	for i := range a {
		a[i] |= b[i]
	}
	return a
}

// nonAlnumSet is the bytes that are neither letters nor digits.
var nonAlnumSet = sync.OnceValue(func() (set [4]uint64) {
	for x := 0; x < 256; x++ {
		if !isAlnum(byte(x)) {
			set = setBytes(set, byte(x))
		}
	}
	return set
})

// genTokenAt tries the tokens anchored on s[i].
func genTokenAt(s string, i int) (Match, bool) {
	as := genAt[s[i]]
	if len(as) == 0 {
		return Match{}, false
	}
	var p byte
	if i > 0 {
		p = lower(s[i-1])
	}
	// Anchors at the literal's start (prev 0) come first, then those whose
	// byte before matches p, from genPrevStart.
	if m, ok := tryAnchors(s, i, as, 0, 0); ok || p == 0 {
		return m, ok
	}
	lo := 0
	if st := genPrevStart[s[i]]; st != nil {
		lo = int(st[p])
	}
	if lo < len(as) && as[lo].prev == p {
		if p2 := genPrev2[s[i]][lo]; i >= 2 {
			if c2 := lower(s[i-2]); p2[c2>>6]&(1<<(c2&63)) == 0 {
				return Match{}, false // no anchor of this prev has that byte before it
			}
		}
	}
	return tryAnchors(s, i, as, lo, p)
}

// tryAnchors tries the anchors as[k:] whose byte before is p.
func tryAnchors(s string, i int, as []genAnchor, k int, p byte) (Match, bool) {
	for ; k < len(as) && as[k].prev == p; k++ {
		if !as[k].quick(s, i) {
			continue
		}
		if m, ok := genMatch(s, i-as[k].off, as[k].tok); ok {
			return m, true
		}
	}
	return Match{}, false
}

// genWindow is how far past its minimum an unbounded span is read before
// the token is accepted: "ghp_ghp_ghp_..." or "dp.pt.dp.pt...." rejected at
// every trigger after reading 4 KB each made Find quadratic up to maxRun
// (0.7 s for 32 KB); an accepted token is then read whole and skipped.
const genWindow = 64

// genMatch matches token t whose literal should start at st.
func genMatch(s string, st int, t *genToken) (Match, bool) {
	if !genLiteralAt(s, st, t) || t.post.max == 0 && t.pre.max == 0 {
		return Match{}, false
	}
	start, ok := genSpanBefore(s, st, t, window(t.pre))
	if !ok {
		return Match{}, false
	}
	from := st + len(t.lit)
	e, ok := genSpanAfter(s, from, t, window(t.post))
	if !ok {
		return Match{}, false
	}
	rnd := s[start:st] + s[from:e]
	switch {
	case rnd == "" && len(t.lit) >= 16: // a long fixed header alone
	case !genRandom(rnd, t.pre.set, t.post.set):
		return Match{}, false
	case len(t.lit) < 3 && (!hasDigit(rnd) || onlyDigits(rnd)):
		// s.<24> and SK<32>: a short literal needs a random part with
		// digits and letters, not a method name (s.parseConfiguration...).
		return Match{}, false
	}
	if t.pre.max < 0 {
		start, _ = genSpanBefore(s, st, t, maxRun)
	}
	if t.post.max < 0 {
		e, _ = genSpanAfter(s, from, t, maxRun)
	}
	return Match{Kind(t.id), start, e}, true
}

// window is how far a span is read before its token is accepted: a
// bounded one only to one byte past its maximum.
func window(sp genSpan) int {
	if sp.max < 0 {
		return sp.min + genWindow
	}
	return sp.max + 1
}

// genLiteralAt reports whether t's literal is at st (ignoring case when it
// folds).
func genLiteralAt(s string, st int, t *genToken) bool {
	if st < 0 || st+len(t.lit) > len(s) {
		return false
	}
	if t.fold {
		return equalFold(s[st:st+len(t.lit)], t.lit)
	}
	return s[st:st+len(t.lit)] == t.lit
}

// genSpanBefore returns where the token whose literal starts at st
// starts: its span before the literal (at least pre.min, at most pre.max
// bytes), or the literal itself on a word boundary.
func genSpanBefore(s string, st int, t *genToken, lim int) (int, bool) {
	if t.pre.max == 0 {
		return st, !isAlnum(t.lit[0]) || boundary(s, st)
	}
	p := st
	for p > 0 && st-p < lim && inGenSet(t.pre.set, s[p-1]) {
		p--
	}
	if t.pre.max > 0 && st-p > t.pre.max {
		return st - t.pre.max, st-p >= t.pre.min
	}
	return p, st-p >= t.pre.min
}

// genSpanAfter returns the end of the token's span after its literal
// (from): at least post.min bytes; longer than post.max, the token ends at
// max when what follows is not part of a word (a sentence's '.').
func genSpanAfter(s string, from int, t *genToken, lim int) (int, bool) {
	e := from
	for e < len(s) && e-from < lim && inGenSet(t.post.set, s[e]) {
		e++
	}
	if e-from < t.post.min {
		return 0, false
	}
	if t.post.max >= 0 && e-from > t.post.max {
		e = from + t.post.max
		return e, !isAlnum(s[e])
	}
	return e, true
}

// genRandom reports whether the random part of a token looks generated:
// not a placeholder, and with two kinds of characters when its sets allow
// two (gitleaks uses an entropy threshold; this is the cheap form).
func genRandom(v string, sets ...uint8) bool {
	if v == "" || allSame(v) || containsFold(v, "xxxx") || containsFold(v, "example") {
		return false
	}
	kinds := 0
	for _, probe := range []byte{'7', 'q', 'Q'} {
		if setsHave(sets, probe) {
			kinds++
		}
	}
	// Only a set with lower-case letters holds words; an upper-case body
	// without a digit is a token (an AWS key id's 16 base32 bytes have
	// none 3.6 % of the time), and so are digits between dashes (Slack's
	// xoxb-<digits>-<digits>-... cut before its letters) or alone.
	return kinds < 2 || mixed(v) || !setsHave(sets, 'q') || hasDigit(v) && hasSymbol(v) || len(v) >= 10 && onlyDigits(v)
}

// setsHave reports whether one of the generated sets holds c.
func setsHave(sets []uint8, c byte) bool {
	for _, k := range sets {
		if inGenSet(k, c) {
			return true
		}
	}
	return false
}

// genKeywordValue matches a keyword rule: the folded key names a vendor
// (adafruit, mapbox, twitter...) and val has the rule's byte set and
// length. It runs only where the hand-written classifier did not accept the
// key.
func genKeywordValue(key []byte, val string) (Kind, bool) {
	if len(val) < genKeyMin || len(val) > maxValueLen {
		return "", false
	}
	// The rules whose keyword the key holds, found through the key's
	// letter triples (genKwAt); the first rule in table order whose value
	// shape fits wins, as when every rule was tried in turn (that loop
	// checked the value against all 99 rules' sets: 6 % of the clean
	// corpus's time, for keys such as "message" or "private").
	best := bestKeywordRule(key, val)
	if best == len(genKeywords) || !mixed(val) && !numeric(val) || isPlaceholder(val) && !numeric(val) {
		return "", false
	}
	return Kind(genKeywords[best].id), true
}

// bestKeywordRule returns the first rule in table order whose keyword the
// key holds and whose value shape fits val (len(genKeywords): none).
func bestKeywordRule(key []byte, val string) int {
	best := len(genKeywords)
	for p := 0; p+3 <= len(key); p++ {
		g := genKwAt[uint32(key[p]&31)<<10|uint32(key[p+1]&31)<<5|uint32(key[p+2]&31)]
		if g == 0 {
			continue
		}
		for _, ref := range genKwGroups[g-1] {
			if ref.rule < best && hasAt(key, p, ref.word) && genValueFits(&genKeywords[ref.rule], val) {
				best = ref.rule
			}
		}
	}
	return best
}

func genValueFits(r *genKeyword, val string) bool {
	if len(val) < r.val.min || r.val.max >= 0 && len(val) > r.val.max {
		return false
	}
	for j := 0; j < len(val); j++ {
		if !inGenSet(r.val.set, val[j]) {
			return false
		}
	}
	return true
}

// genKwAt[triple] is 1 + the index in genKwGroups of the keywords that
// start with that letter triple (as keyTri's index).
var (
	genKwAt     [1 << 15]uint8
	genKwGroups [][]genKwRef
)

type genKwRef struct {
	word string
	rule int
}
