package redact

import (
	"strings"
)

// This file holds the byte classes and the trigger dispatch. Rules: every
// detector takes (s, i) where s[i] is its trigger byte, must never index
// outside s, and must cost a few comparisons when it does not match.

// hot marks the trigger bytes (handTriggers, the generated anchors and the
// triggered needles); everything else is skipped by one lookup. hot8 is
// hot as bytes, so that eight lookups can be OR-ed without branches.
var (
	hot  [256]bool
	hot8 [256]uint8
)

// skipCold returns the index of the first trigger at or after i that passes
// the neighbour filters (see handTriggers), or len(s). It tests eight
// bytes per branch, and drops filtered triggers without returning: this loop
// is most of the cost of clean text, where a trigger byte comes every dozen
// bytes of code but few of them are worth a detector call.
func skipCold(s string, i int) int {
	for {
		for ; i+8 <= len(s); i += 8 {
			b := s[i : i+8]
			if hot8[b[0]]|hot8[b[1]]|hot8[b[2]]|hot8[b[3]]|hot8[b[4]]|hot8[b[5]]|hot8[b[6]]|hot8[b[7]] != 0 {
				break
			}
		}
		end := min(i+8, len(s))
		if i > 0 && end < len(s) {
			// Branch-free filters inside the text: one branch per byte.
			for ; i < end; i++ {
				c := s[i]
				if passPrev[c][s[i-1]]&passNext[c][s[i+1]] == 0 {
					continue
				}
				if c == '.' && !dotShape(s, i) {
					continue
				}
				return i
			}
			continue
		}
		// At the edges of the text: the same tables, and needPrev/needNext
		// for a neighbour that is not there.
		for ; i < end; i++ {
			if hot[s[i]] && passesAtEdge(s, i) {
				return i
			}
		}
		if i >= len(s) {
			return len(s)
		}
	}
}

// passesAtEdge is skipCold's filter for the trigger s[i] at the start or
// the end of the text, where needPrev/needNext stand for a neighbour that
// is not there.
func passesAtEdge(s string, i int) bool {
	c := s[i]
	if i > 0 && passPrev[c][s[i-1]] == 0 || i == 0 && needPrev[c] {
		return false
	}
	if i+1 < len(s) && passNext[c][s[i+1]] == 0 || i+1 == len(s) && needNext[c] {
		return false
	}
	return c != '.' || dotShape(s, i)
}

type class uint8

const (
	cAlnum  class = 1 << iota // [A-Za-z0-9]
	cUnder                    // _
	cDash                     // -
	cB64                      // + / =
	cHexLow                   // [0-9a-f]
	cUpper                    // [A-Z]
	cDigit                    // [0-9]
	cKey                      // . (key names like spring.datasource.password)
)

var classes = func() (t [256]class) {
	for c := '0'; c <= '9'; c++ {
		t[c] |= cAlnum | cHexLow | cDigit
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] |= cAlnum
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] |= cHexLow
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] |= cAlnum | cUpper
	}
	t['_'] |= cUnder
	t['-'] |= cDash
	t['+'] |= cB64
	t['/'] |= cB64
	t['='] |= cB64
	t['.'] |= cKey
	return t
}()

const (
	setWord      = cAlnum | cUnder         // [A-Za-z0-9_]
	setURLSafe   = cAlnum | cUnder | cDash // [A-Za-z0-9_-]
	setBase64    = cAlnum | cB64           // [A-Za-z0-9+/=]
	setKeyName   = cAlnum | cUnder | cDash | cKey
	setWebhook   = cAlnum | cUnder | cDash | cB64
	setBearerTok = cAlnum | cUnder | cDash | cB64 | cKey // plus '~' handled by caller
)

// maxRun bounds how far a detector looks before it decides, so that input
// built to fail late (ghp_ghp_ghp_...) stays linear.
const maxRun = 4096

// run returns the end of the run of bytes in set starting at i, looking at
// most maxRun bytes.
func run(s string, i int, set class) int { return runTo(s, i, i+maxRun, set) }

// runTo returns the end of the run of bytes in set from i, before lim.
func runTo(s string, i, lim int, set class) int {
	for lim = min(lim, len(s)); i < lim && classes[s[i]]&set != 0; i++ {
	}
	return i
}

// runBack returns the start of the run of bytes in set that ends at j,
// not before lo.
func runBack(s string, j, lo int, set class) int {
	for lo = max(lo, 0); j > lo && classes[s[j-1]]&set != 0; j-- {
	}
	return j
}

// skipOver returns the end of the run of bytes of set from i, before lim.
func skipOver(s string, i, lim int, set string) int {
	for lim = min(lim, len(s)); i < lim && isOneOf(s[i], set); i++ {
	}
	return i
}

// skipBack returns the start of the run of bytes of set that ends at j,
// not before lo.
func skipBack(s string, j, lo int, set string) int {
	for lo = max(lo, 0); j > lo && isOneOf(s[j-1], set); j-- {
	}
	return j
}

// runAll is run without the bound; use it only to extend a match that has
// been accepted (Find then skips past it).
func runAll(s string, i int, set class) int {
	for i < len(s) && classes[s[i]]&set != 0 {
		i++
	}
	return i
}

func isAlnum(c byte) bool { return classes[c]&cAlnum != 0 }

// boundary reports whether a token may start at i: not glued to a preceding
// letter or digit.
func boundary(s string, i int) bool { return i <= 0 || i > len(s) || !isAlnum(s[i-1]) }

// endBoundary reports whether a token may end at i.
func endBoundary(s string, i int) bool { return i >= len(s) || !isAlnum(s[i]) }

// hasPrefixAt reports whether s[i:] starts with p (false when i is out of range).
func hasPrefixAt(s string, i int, p string) bool {
	return i >= 0 && i <= len(s) && len(s)-i >= len(p) && s[i:i+len(p)] == p
}

// hasSuffixAt reports whether s[:i] ends with p, i.e. p sits just before i.
func hasSuffixAt(s string, i int, p string) bool {
	return i <= len(s) && i >= len(p) && s[i-len(p):i] == p
}

// handTriggers are the hand-written detectors' trigger bytes and their
// neighbour filters: a trigger byte is worth a detector call only when the
// byte before it (prev) and the byte after it (next) can belong to a token
// there ("": any byte). A trigger is dropped at the edge of the text where
// the neighbour its prev or next names is missing (but for nextOpt); the
// rejected bytes (notPrev, notNext) pass there. Each rejection is one the
// detector itself would make first.
var handTriggers = [...]struct {
	c                byte
	prev, next       string
	notPrev, notNext string
	nextOpt          bool
}{
	{c: '-', prev: "-Yy \t"},                            // after "-----BEGIN", PuTTY, key, --flag, -p
	{c: '=', notPrev: "=!<>:+-*/%&|^~?", notNext: "=~"}, // ==, !=, <=, :=, +=, =~: no assignment
	{c: ':', notNext: ":"},                              // :: (assignment, telegram, webhook)
	{c: '@'},
	{c: 'A', next: "C"}, // Twilio AC
	{c: 'S', next: "K"}, // Twilio SK
	{c: 'B', next: "e"}, // Bearer
	{c: '.', next: letters + "0123456789_-", nextOpt: true}, // every dot format has a url-safe byte next
	{c: 'w', prev: "sSpP"},                             // after pass, pw
	{c: 'k', prev: "oO _-i", next: "e", nextOpt: true}, // to(k)en, (k)ey after to(ken), api key, api_key, apikey
	{c: '>', prev: "dDtTnNyYeEhHlLsS\"'"},              // after <password, <secret, <token, <apiKey, <passphrase, <auth, <credential(s), <entry key="...">
}

const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// handNeedPrev and handNeedNext: the filter of hand-written trigger c needs
// the byte before or after it.
var handNeedPrev, handNeedNext [256]bool

// allowRow is a pass table row: 1 for the bytes of allow ("": all) but
// not of reject.
func allowRow(allow, reject string) (r [256]uint8) {
	if allow == "" {
		for x := range r {
			r[x] = 1
		}
	}
	for k := 0; k < len(allow); k++ {
		r[allow[k]] = 1
	}
	for k := 0; k < len(reject); k++ {
		r[reject[k]] = 0
	}
	return r
}

// passPrev[c][p] is 1 when trigger c passes its filters on the byte p before
// it, passNext[c][n] when it passes those on the byte n after it; both are 0
// for bytes that are not triggers. Filled in place by init: a function
// returning the two 64 KB tables by value copied 128 KB into them at every
// process start (0.22 ms of each hook's ~1.2 ms of package init); only the
// rows of the 15 triggers are written now.
var passPrev, passNext [256][256]uint8

// needPrev[c] and needNext[c] say that trigger c is dropped at the start or
// the end of the text, where its filtered neighbour is missing.
var needPrev, needNext [256]bool

// handHot are the hand-written detectors' trigger bytes (hot before the
// generated anchors join it).
var handHot [256]bool

func init() {
	for _, h := range handTriggers {
		hot[h.c] = true
	}
	handHot = hot
	initGen() // adds the generated anchors to hot
	initNeedles()
	pp, pn := &passPrev, &passNext
	for c := 0; c < 256; c++ {
		if hot[c] && !handHot[c] {
			needPrev[c], needNext[c] = !genHasAnchorless[c], true
		}
	}
	for _, h := range handTriggers {
		c := h.c
		handNeedPrev[c], handNeedNext[c] = h.prev != "", h.next != "" && !h.nextOpt
		needPrev[c], needNext[c] = handNeedPrev[c] && !genHasAnchorless[c], handNeedNext[c]
		pp[c], pn[c] = allowRow(h.prev, h.notPrev), allowRow(h.next, h.notNext)
		handPN[c] = pnBits(&pp[c], &pn[c])
	}
	for c := 0; c < 256; c++ {
		if len(genAt[c]) == 0 {
			continue
		}
		f := genFilter(c)
		genPN[c] = f
		for x := 0; x < 256; x++ {
			pp[c][x] |= b2u(f.prev[x>>6]&(1<<(x&63)) != 0)
			pn[c][x] |= b2u(f.next[x>>6]&(1<<(x&63)) != 0)
		}
	}
	needlePass(pp, pn)
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// handPN and genPN are the neighbour filters of the hand-written
// detectors and of the generated anchors kept apart: skipCold tests their
// union one side at a time, so a '_' after a letter (a generated anchor's
// prev) passed with any next byte (the hand-written detectors' next)
// though neither admits that pair. detect tests each family's pair and
// calls only the family that admits it: snake_case identifiers were 4x
// more '_' calls than before the generated table.
var handPN, genPN [256]pnFilter

type pnFilter struct{ prev, next [4]uint64 }

func pnBits(p, n *[256]uint8) (f pnFilter) {
	for x := 0; x < 256; x++ {
		if p[x] != 0 {
			f.prev[x>>6] |= 1 << (x & 63)
		}
		if n[x] != 0 {
			f.next[x>>6] |= 1 << (x & 63)
		}
	}
	return f
}

func (f *pnFilter) ok(p, n byte) bool {
	return f.prev[p>>6]&(1<<(p&63)) != 0 && f.next[n>>6]&(1<<(n&63)) != 0
}

// dotShape reports a dot worth a call: a generated literal's or the first
// dot of a Discord token.
func dotShape(s string, i int) bool {
	if i < 2 || i+1 >= len(s) {
		return false
	}
	if genDotPrev[s[i-1]] {
		return true
	}
	if len(genDotLits) > 0 && genDotShape(s, i) {
		return true
	}
	return i >= 24 && i+7 < len(s) && s[i+7] == '.' // a Discord token's first dot
}

func byteSet(cs string) (t [256]bool) {
	for i := 0; i < len(cs); i++ {
		t[cs[i]] = true
	}
	return t
}

// detect runs the detectors for the trigger byte s[i]. Inside a generic
// match (inGeneric) only vendor formats are looked for: they refine its kind,
// and skipping the context detectors keeps Find linear.
func detect(s string, i int, inGeneric bool) (Match, bool) {
	c := s[i]
	if len(trigNeedles[c]) > 0 {
		if m, ok := trigNeedleAt(s, i); ok {
			return m, true
		}
		if !handHot[c] && len(genAt[c]) == 0 {
			return Match{}, false
		}
	}
	if !handHot[c] || missingNeighbour(s, i) {
		// The hand-written detector of c reads the neighbour its filter
		// needs; here only a generated anchor let the byte through.
		return genTokenAt(s, i)
	}
	g := len(genAt[c]) > 0
	if i > 0 && i+1 < len(s) {
		p, n := s[i-1], s[i+1]
		g = g && genPN[c].ok(p, n)
		if !handPN[c].ok(p, n) {
			return genIf(g, s, i)
		}
	}
	if m, ok := handDetect(s, i, inGeneric); ok {
		return m, true
	}
	return genIf(g, s, i)
}

// genIf tries the generated anchors at i when g.
func genIf(g bool, s string, i int) (Match, bool) {
	if g {
		return genTokenAt(s, i)
	}
	return Match{}, false
}

// missingNeighbour reports a trigger at the edge of the text whose
// neighbour filter needs the byte that is not there.
func missingNeighbour(s string, i int) bool {
	c := s[i]
	return handNeedPrev[c] && i == 0 || handNeedNext[c] && i+1 >= len(s)
}

func handDetect(s string, i int, inGeneric bool) (Match, bool) {
	t := &handDetectors
	if inGeneric {
		t = &vendorDetectors
	}
	if d := t[s[i]]; d != nil {
		return d(s, i)
	}
	return Match{}, false
}

type detector func(s string, i int) (Match, bool)

// handDetectors holds the hand-written detector of each trigger byte;
// vendorDetectors those that run inside a generic match: vendor formats
// only, no assignment, URL, bearer, prose or XML context.
var handDetectors, vendorDetectors [256]detector

func init() {
	handDetectors = [256]detector{
		'-': dashToken, '=': assignment, ':': assignment, '@': urlCredentials,
		'A': twilio, 'S': twilio, 'B': bearer, '.': discord,
		'w': proseKey, 'k': proseKey, '>': xmlElement,
	}
	vendorDetectors = handDetectors
	for _, c := range "=@Bwk>" {
		vendorDetectors[c] = nil
	}
	vendorDetectors[':'] = colonVendor
}

// colonVendor is the vendor formats a ':' starts: a Slack webhook URL or a
// Telegram bot token.
func colonVendor(s string, i int) (Match, bool) {
	if hasPrefixAt(s, i+1, "//") {
		return slackWebhook(s, i+3)
	}
	if i > 0 && classes[s[i-1]]&cDigit != 0 {
		return telegram(s, i)
	}
	return Match{}, false
}

// The formats with no trigger byte are found by literal needles: "expect"
// (prompt answers), the base64 spellings of secret headers (b64Headers)
// and the generated literals with no anchor byte (indexToken: "dapi"). Needles are grouped by their rarest byte (the first one
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

// initNeedles adds the triggered needles (initGen added the generated
// ones).
func initNeedles() {
	addTrigNeedle(needle{lit: "expect", kind: needleExpect})
	for _, h := range b64Headers {
		addTrigNeedle(needle{lit: h, kind: needleB64})
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
