// Package redact finds and masks secrets in transcript text before carryover
// stores it (every ledger row) and again before any egress (handoff.md,
// clipboard, another vendor's context).
//
// Vendor token formats are data: gitleaks' rule file (MIT,
// gitleaks/gitleaks@b58d3f1) and ours in testdata/extra.toml, reduced by
// TestRulesGenerated to rules_gen.go (matched by the engine in this file).
// The hand-written detectors (below the engine) cover what a literal plus a byte
// set cannot say: assignments and headers, URL credentials, flags and
// secrets stated in words, PEM/PuTTY key blocks (cut, behind line numbers,
// base64'd) and the vendor formats that need context. No regexp runs: one
// pass looks only at trigger bytes, eight bytes per branch, and drops a
// trigger whose neighbours cannot belong to a token, so text without
// secrets costs a table lookup per byte and no allocation.
//
// Rule sets read, no code copied: trufflehog pkg/detectors/uri (AGPL,
// @05a5fc1: user:pass@host masks only the password; a '$' password is a
// variable) and detect-secrets plugins/keyword.py (Apache-2.0, @010e929:
// the assignment keywords and its FALSE_POSITIVES idea). Azure storage
// connection strings follow Microsoft's documented format.
//
// Assignments keep the key and mask only the value (password=hunter2
// becomes password=[REDACTED:password]); a value that is a variable, call,
// reference, placeholder, type name, boolean, number, its own key or prose
// is left alone. Results are sorted and non-overlapping; [String] is
// idempotent and never leaves anything [Find] would match.
package redact

import (
	"encoding/base64"
	"encoding/binary"
	"slices"
	"strings"
	"sync"
)

// Kind names what a [Match] found; it appears in "[REDACTED:<kind>]".
type Kind string

// The hand-written detectors' kinds. The generic ones (password, secret,
// token, api-key, bearer-token, url-credentials, database-url) lose to a
// vendor kind covering the same bytes.
const (
	KindAPIKey          Kind = "api-key"
	KindAWSAccessKeyID  Kind = "aws-access-key-id"
	KindAWSSecret       Kind = "aws-secret"
	KindAzureSAS        Kind = "azure-sas"
	KindAzureStorageKey Kind = "azure-storage-key"
	KindBearerToken     Kind = "bearer-token"
	KindDatabaseURL     Kind = "database-url"
	KindDiscordToken    Kind = "discord-token"
	KindMailgunKey      Kind = "mailgun-key"
	KindPassword        Kind = "password"
	KindPrivateKey      Kind = "private-key"
	KindSecret          Kind = "secret"
	KindSlackWebhook    Kind = "slack-webhook"
	KindTelegramToken   Kind = "telegram-token"
	KindToken           Kind = "token"
	KindTwilioKey       Kind = "twilio-key"
	KindURLCredentials  Kind = "url-credentials"
)

// rank orders kinds for a merged match: one of carryover's vendor kinds
// (2) wins over a gitleaks rule's (1), which wins over a generic kind (0).
func rank(k Kind) int {
	switch k {
	case KindPassword, KindSecret, KindToken, KindAPIKey, KindBearerToken, KindURLCredentials, KindDatabaseURL:
		return 0
	}
	if slices.Contains(allKinds, k) {
		return 2
	}
	return 1
}

// Match is one secret: s[Start:End] is the sensitive part (for an
// assignment, only the value).
type Match struct {
	Kind       Kind
	Start, End int
}

// setup expands the pass tables from the generated bit sets on first use
// (the rest is static data in rules_gen.go): a hook that never redacts
// does not pay for them.
var setup sync.Once

// Find returns the secrets in s, non-overlapping and sorted by Start; nil
// when there are none. It never panics, whatever the input.
func Find(s string) []Match {
	setup.Do(initTables)
	var ms []Match
	genericEnd := 0
	for i := skipCold(s, 0); i < len(s); i = skipCold(s, i+1) {
		m, ok := detect(s, i, i < genericEnd)
		if !ok {
			continue
		}
		ms = append(ms, m)
		if m.Kind == KindAWSAccessKeyID {
			if m2, ok := awsPairedSecret(s, m.End); ok {
				ms, i = append(ms, m2), m2.End-1
				continue
			}
		}
		i, genericEnd = resume(s, i, m, genericEnd)
	}
	return resolve(needleMatches(s, ms))
}

// resume returns where the scan goes on after match m at trigger i, and
// the end of the generic matches so far: inside a generic match (or a
// generated keyword rule's value), so a vendor token in it gets its own
// kind; past a vendor token.
func resume(s string, i int, m Match, genericEnd int) (int, int) {
	if rank(m.Kind) == 0 || rank(m.Kind) < 2 && isOneOf(s[i], "=:") {
		return i, max(genericEnd, m.End)
	}
	return max(i, m.End-1), genericEnd
}

// resolve sorts ms and merges overlaps, keeping the highest-ranked kind.
func resolve(ms []Match) []Match {
	if len(ms) < 2 {
		return ms
	}
	slices.SortFunc(ms, func(a, b Match) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return b.End - a.End
	})
	out := ms[:1]
	for _, m := range ms[1:] {
		last := &out[len(out)-1]
		if m.Start >= last.End {
			out = append(out, m)
			continue
		}
		last.End = max(last.End, m.End)
		if rank(m.Kind) > rank(last.Kind) {
			last.Kind = m.Kind
		}
	}
	return out
}

const markerPrefix = "[REDACTED:"

// String returns s with each match replaced by "[REDACTED:<kind>]";
// String(String(s)) == String(s). Without a secret it returns s itself,
// without allocating. A replacement can join text into a new match, so
// it repeats, at most 8 rounds.
func String(s string) string {
	ms := Find(s)
	for round := 0; len(ms) > 0 && round < 8; round++ {
		var b strings.Builder
		b.Grow(len(s) + 16*len(ms))
		prev := 0
		for _, m := range ms {
			b.WriteString(s[prev:m.Start])
			b.WriteString(markerPrefix)
			b.WriteString(string(m.Kind))
			b.WriteByte(']')
			prev = m.End
		}
		b.WriteString(s[prev:])
		s = b.String()
		ms = Find(s)
	}
	return s
}

// ClipReach is how far past a cut [Clip] reads to find a secret that the
// cut would split. 4 KB covers every token and assignment value the
// detectors accept whole (maxRun, maxValueLen) and a PEM RSA-4096 key with
// line-number prefixes (~3.7 KB); a longer key block is still seen
// crossing the cut, since a block without its END line runs to the end of
// its body. A caller holding only a prefix of a long text (the Claude
// decoder unquotes no more than it needs) must give Clip n+ClipReach bytes.
const ClipReach = 4 << 10

// Clip cuts s to at most n bytes, on a rune boundary, marking the cut with
// "…". It never keeps part of a secret, which Find could no longer
// recognise: a secret crossing the cut, as Find sees it in
// s[:n+ClipReach], is dropped whole (with its opening quote), so clipping
// then redacting keeps what redacting then clipping would, minus the
// markers. A cut inside a word drops the partial word too. Every package
// clips through here; the result depends only on s[:n+ClipReach].
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && cut < len(s) && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	cut = wordStart(s, secretStart(s, cut))
	return strings.TrimRight(s[:cut], " \t\r\n") + "…"
}

// secretStart moves cut back to the start of a secret crossing it (and of
// its opening quote).
func secretStart(s string, cut int) int {
	for _, m := range Find(s[:min(len(s), cut+ClipReach)]) {
		if m.End > cut {
			if m.Start < cut {
				return skipBack(s, m.Start, 0, "\"'`")
			}
			break
		}
	}
	return cut
}

// wordStart moves a cut inside a word to the start of the word (within
// 256 bytes) or of the text.
func wordStart(s string, cut int) int {
	if cut >= len(s) || isSpaceByte(s[cut]) {
		return cut
	}
	lo := max(0, cut-256)
	if k := strings.LastIndexAny(s[lo:cut], " \n\t\r"); k >= 0 {
		return lo + k + 1
	} else if cut < 256 {
		return 0
	}
	return cut
}

// The scanner. Every detector takes (s, i) with s[i] its trigger byte,
// never indexes outside s, and costs a few comparisons when it fails.

// skipCold returns the index of the first trigger at or after i that
// passes the neighbour filters, or len(s). It tests eight bytes per branch
// and drops filtered triggers without returning: this loop is most of the
// cost of clean text, with a trigger every dozen bytes of code.
func skipCold(s string, i int) int {
	for i < len(s) {
		for ; i+8 <= len(s); i += 8 {
			b := s[i : i+8]
			if hot8[b[0]]|hot8[b[1]]|hot8[b[2]]|hot8[b[3]]|hot8[b[4]]|hot8[b[5]]|hot8[b[6]]|hot8[b[7]] != 0 {
				break
			}
		}
		end := min(i+8, len(s))
		if i == 0 || end == len(s) {
			if i = edgeTrigger(s, i, end); i < end {
				return i
			}
			continue
		}
		for ; i < end; i++ { // inside the text, one branch per byte
			c := s[i]
			if passPrev[c][s[i-1]]&passNext[c][s[i+1]] != 0 && (c != '.' || dotShape(s, i)) {
				return i
			}
		}
	}
	return len(s)
}

// edgeTrigger is skipCold's loop over s[i:end] at the edges of the text.
func edgeTrigger(s string, i, end int) int {
	for ; i < end; i++ {
		if hot8[s[i]] != 0 && passesAtEdge(s, i) {
			return i
		}
	}
	return end
}

// passesAtEdge is the neighbour filter of the trigger s[i] at the start or
// end of the text, where needPrev/needNext stand for the missing neighbour.
func passesAtEdge(s string, i int) bool {
	c := s[i]
	prevOK, nextOK := !needPrev[c], !needNext[c]
	if i > 0 {
		prevOK = passPrev[c][s[i-1]] != 0
	}
	if i+1 < len(s) {
		nextOK = passNext[c][s[i+1]] != 0
	}
	return prevOK && nextOK && (c != '.' || dotShape(s, i))
}

type class uint16

const (
	cAlnum  class = 1 << iota // [A-Za-z0-9]
	cUnder                    // _
	cDash                     // -
	cB64                      // + / =
	cHexLow                   // [0-9a-f]
	cUpper                    // [A-Z]
	cDigit                    // [0-9]
	cKey                      // . (key names like spring.datasource.password)
	cStar                     // * (a .pgpass field matching any)

	setWord      = cAlnum | cUnder
	setURLSafe   = cAlnum | cUnder | cDash
	setBase64    = cAlnum | cB64
	setKeyName   = cAlnum | cUnder | cDash | cKey
	setWebhook   = cAlnum | cUnder | cDash | cB64
	setBearerTok = cAlnum | cUnder | cDash | cB64 | cKey // plus '~' handled by caller
	setPgpass    = setKeyName | cStar
)

// maxRun bounds how far a detector looks before it decides, so that input
// built to fail late (ghp_ghp_ghp_...) stays linear.
const maxRun = 4096

func run(s string, i int, set class) int { return runTo(s, i, i+maxRun, set) }

// runTo returns the end of the run of bytes in set from i, before lim.
func runTo(s string, i, lim int, set class) int {
	for lim = min(lim, len(s)); i < lim && classes[s[i]]&set != 0; i++ {
	}
	return i
}

// runBack returns the start of the run of bytes in set ending at j, not
// before lo.
func runBack(s string, j, lo int, set class) int {
	for lo = max(lo, 0); j > lo && classes[s[j-1]]&set != 0; j-- {
	}
	return j
}

// skipOver and skipBack are runTo and runBack over the bytes of a string.
func skipOver(s string, i, lim int, set string) int {
	for lim = min(lim, len(s)); i < lim && isOneOf(s[i], set); i++ {
	}
	return i
}

func skipBack(s string, j, lo int, set string) int {
	for lo = max(lo, 0); j > lo && isOneOf(s[j-1], set); j-- {
	}
	return j
}

func isOneOf(c byte, set string) bool {
	for i := 0; i < len(set); i++ {
		if set[i] == c {
			return true
		}
	}
	return false
}

func isAlnum(c byte) bool { return classes[c]&cAlnum != 0 }

// boundary reports whether a token may start at i: not glued to a letter
// or digit before it; endBoundary whether one may end at i.
func boundary(s string, i int) bool { return i <= 0 || i > len(s) || !isAlnum(s[i-1]) }

func endBoundary(s string, i int) bool { return i >= len(s) || !isAlnum(s[i]) }

// hasPrefixAt reports whether s[i:] starts with p (false out of range);
// hasSuffixAt whether p sits just before i.
func hasPrefixAt(s string, i int, p string) bool {
	return i >= 0 && i <= len(s) && len(s)-i >= len(p) && s[i:i+len(p)] == p
}

func hasSuffixAt(s string, i int, p string) bool {
	return i <= len(s) && i >= len(p) && s[i-len(p):i] == p
}

const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// The trigger and filter tables (hot8, passPN, handPN, genAt, needleGroups...)
// are derived from the rules and handTriggers (gen_test.go) by TestRulesGenerated and
// stored in rules_gen.go as static data; only the two 64 KB pass tables and
// the detector tables are filled here, at the first Find.
var (
	// passPrev[c][p] is 1 when trigger c passes its filters on the byte p
	// before it, passNext[c][n] on the byte n after it (passPN as bytes:
	// skipCold's one load per byte).
	passPrev, passNext [256][256]uint8
	// handDetectors holds each trigger byte's detector; vendorDetectors
	// those that run inside a generic match (vendor formats only).
	handDetectors, vendorDetectors [256]detector
)

type detector func(s string, i int) (Match, bool)

func initTables() {
	for c := range passPN {
		if hot8[c] == 0 {
			continue // not a trigger: its rows stay 0
		}
		spreadSet(&passPrev[c], &passPN[c].prev)
		spreadSet(&passNext[c], &passPN[c].next)
	}
	handDetectors = [256]detector{
		'-': dashToken, '_': prefixedToken, '=': assignment, ':': assignment, '@': urlCredentials,
		'A': twilio, 'S': twilio, 'B': bearer, '.': discord,
		'w': proseKey, 'k': proseKey, '>': xmlElement, 0x9a: fullColon, // a full-width colon's last byte
	}
	for c, ws := range proseWordsAt {
		if len(ws) > 0 { // mot de passe's 'e' is a needle's, never a trigger
			handDetectors[c] = foreignProse
		}
	}
	vendorDetectors = [256]detector{'-': dashToken, 'A': twilio, 'S': twilio, '.': discord, ':': slackWebhook}
}

// spreadSet writes set as 256 bytes of 0 or 1, four at a time: byte by byte
// this fill was ~255,000 instructions of every hook that redacts (~1.4 % of
// a Stop's, cachegrind).
func spreadSet(dst *[256]uint8, set *byteSet) {
	for i := range 64 {
		// The multiply copies bit k of the nibble to bit 8k, with no two
		// copies on one bit (so no carries); the mask keeps those four.
		n := uint32(set[i>>4]>>(i&15*4)) & 0xf
		binary.LittleEndian.PutUint32(dst[i*4:], n*0x204081&0x01010101)
	}
}

// byteSet is a set of bytes as four 64-bit words.
type byteSet = [4]uint64

type pnFilter struct{ prev, next byteSet }

func inSet(set *byteSet, c byte) bool { return set[c>>6]&(1<<(c&63)) != 0 }

func (f *pnFilter) ok(p, n byte) bool { return inSet(&f.prev, p) && inSet(&f.next, n) }

// dotShape reports a dot worth a call: a generated literal's or the first
// dot of a Discord token.
func dotShape(s string, i int) bool {
	if i < 2 || i+1 >= len(s) {
		return false
	}
	if genDotPrev[s[i-1]] || genDotShape(s, i) {
		return true
	}
	return i >= 24 && i+7 < len(s) && s[i+7] == '.' // a Discord token's first dot
}

// detect runs the detectors for the trigger byte s[i]. Inside a generic
// match (inGeneric) only vendor formats are looked for: they refine its
// kind, and skipping the context detectors keeps Find linear.
func detect(s string, i int, inGeneric bool) (Match, bool) {
	c := s[i]
	if !proseShaped(s, i) {
		return Match{}, false
	}
	if len(trigNeedles[c]) > 0 {
		if m, ok := trigNeedleAt(s, i); ok || needleOnly[c] {
			return m, ok
		}
	}
	if !handAt(s, i) {
		return genTokenAt(s, i)
	}
	return handThenGen(s, i, inGeneric)
}

// handThenGen runs the hand-written detector of s[i], then the generated
// anchors, each only when its family's filter admits s[i]'s neighbours.
func handThenGen(s string, i int, inGeneric bool) (Match, bool) {
	c := s[i]
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

// proseShaped runs the cheap part of proseKey on a 'w' or 'k' before any
// family's detector.
func proseShaped(s string, i int) bool {
	if s[i] != 'w' && s[i] != 'k' {
		return true
	}
	_, ok := proseShape(s, i)
	return ok
}

// handAt reports whether the hand-written detector of s[i] may run: else
// only a generated anchor let the byte through, and the hand-written one
// would read the neighbour its filter needs.
func handAt(s string, i int) bool {
	c := s[i]
	return handHot[c] && !(handNeedPrev[c] && i == 0) && !(handNeedNext[c] && i+1 >= len(s))
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

func genIf(g bool, s string, i int) (Match, bool) {
	if g {
		return genTokenAt(s, i)
	}
	return Match{}, false
}

// Needles: the formats with no trigger byte, found by literal. "expect"
// (prompt answers) and the base64 spellings of secret headers are
// triggered on their rarest byte ('x', 'L', 'U', 'V', 'Q', 'R'), whose
// neighbours join the pass tables: seven strings.Index passes were 12 % of
// 4 KB of Go's time. The generated literals with no anchor byte ("dapi",
// "pat") are grouped by a 4-byte key from their rarest byte, one SIMD
// strings.Index pass per key: a pass per needle was 17 % of the clean
// corpus's time, a byte-pair table read at every byte 12 %.

type needleKind uint8

const (
	needleExpect needleKind = iota
	needleB64
	needleGen
	needleProse // a password's words all in ASCII ("mot de passe"): foreignProse
)

type needle struct {
	lit  string
	kind needleKind
	tok  *genToken // needleGen
	off  int       // index of the filter byte in lit
}

type needleGroup struct {
	key     string // each needle has it at off
	needles []needle
}

// trigNeedleAt tries the needles triggered on s[i].
func trigNeedleAt(s string, i int) (Match, bool) {
	c := s[i]
	if i+1 >= len(s) || !trigNeedlePN[c].ok(s[max(0, i-1)], s[i+1]) { // a needle starting at c passes any byte before
		return Match{}, false
	}
	for _, n := range trigNeedles[c] {
		if st := i - n.off; hasPrefixAt(s, st, n.lit) {
			if m, ok := needleAt(s, st, n); ok || n.kind == needleExpect {
				return m, ok
			}
		}
	}
	return Match{}, false
}

func needleAt(s string, i int, n needle) (Match, bool) {
	switch n.kind {
	case needleExpect:
		return promptAnswer(s, i+len(n.lit))
	case needleB64:
		return base64Secret(s, i)
	case needleProse:
		return foreignProse(s, i+len(n.lit)-1)
	}
	return genMatch(s, i, n.tok)
}

// needleMatches appends the matches of the grouped needles. done[kind] is
// where the last match of that kind ends: a needle inside it is not tried.
func needleMatches(s string, ms []Match) []Match {
	for _, g := range needleGroups {
		var done [4]int
		for off := 0; ; {
			k := strings.Index(s[off:], g.key)
			if k < 0 {
				break
			}
			off += k + 1
			ms = g.matchAt(s, off-1, &done, ms)
		}
	}
	return ms
}

// matchAt appends what the group's needles find at its key at j.
func (g *needleGroup) matchAt(s string, j int, done *[4]int, ms []Match) []Match {
	for _, n := range g.needles {
		if i := j - n.off; hasPrefixAt(s, i, n.lit) && (n.kind == needleGen || i >= done[n.kind]) {
			if m, ok := needleAt(s, i, n); ok {
				ms, done[n.kind] = append(ms, m), m.End
			}
		}
	}
	return ms
}

// The generated rules (rules_gen.go): token formats reduced to a literal
// with a byte-set span before and after it, and keyword rules (a vendor
// name in the key, a value of a given set and length). Each literal is
// anchored on one of its bytes (its last '_', '-', '.', '~' or '/', else
// its first other symbol, else its rarest digit or letter); that byte
// becomes a trigger whose neighbour filters admit only the literal's
// bytes beside it. Literals with no such byte are needles.

type genSpan struct {
	set      uint8 // index into genSets
	min, max int   // length range; max -1: unbounded
}

type genToken struct {
	id        string
	lit       string
	fold      bool // the literal matches in any case
	words     bool // its spans allow two kinds of characters, one of them lower-case letters (genRandom)
	pre, post genSpan
}

type genKeyword struct {
	id       string
	keywords []string // folded like keys: lower case, no _ - .
	val      genSpan
}

// genAnchor is one generated token anchored on the byte lit[off].
type genAnchor struct {
	tok  *genToken
	off  int
	prev byte // lower-cased lit[off-1], 0 when off == 0
	// next and prev2 (lit[off+1], lit[off-2], lower-cased when it folds; 0
	// outside it) are compared before genMatch: without them every 'A' of
	// clean text tried eight literals (AKIA, ASIA, AIza...) and every '_'
	// after 't' eleven: genTokenAt was 19 % of the clean corpus's time.
	next, prev2 byte
	// probe is the distance from the anchor to the last byte the span
	// after the literal must have (0: none), one of set probeSet: the "s."
	// (Vault) of every Go receiver fails here, not after reading a name.
	probe    int
	probeSet uint8
	// bound: the literal starts a word ("os." is not Vault's "s.").
	bound bool
}

// quick reports whether the literal's bytes beside the anchor at i match.
func (a *genAnchor) quick(s string, i int) bool {
	return a.byteIs(s, i+1, a.next) && a.byteIs(s, i-2, a.prev2) &&
		(a.probe == 0 || i+a.probe < len(s) && inGenSet(a.probeSet, s[i+a.probe])) &&
		!(a.bound && i-a.off > 0 && isAlnum(s[i-a.off-1]))
}

// byteIs reports whether s[k] is want (0: any), lower-cased when it folds.
func (a *genAnchor) byteIs(s string, k int, want byte) bool {
	switch {
	case want == 0:
		return true
	case k < 0 || k >= len(s):
		return false
	case a.tok.fold:
		return lower(s[k]) == want
	}
	return s[k] == want
}

func inGenSet(k uint8, c byte) bool { return inSet(&genSets[k], c) }

// genDotShape reports whether the '.' at i may start a literal that
// starts with its '.' anchor (jwt's .ey, airtable's pat<14>.<64 hex>): the
// literal, a byte of its span before and 4 of its span after; member
// accesses (foo.bar) stop here.
func genDotShape(s string, i int) bool {
	for _, t := range genDotLits {
		if !hasPrefixAt(s, i, t.lit) || t.pre.max != 0 && (i == 0 || !inGenSet(t.pre.set, s[i-1])) {
			continue
		}
		p := i + len(t.lit)
		if k := p + min(4, t.post.min); k <= len(s) && genSpanAfterLen(s, p, k, t) == k {
			return true
		}
	}
	return false
}

// genSpanAfterLen returns the end of t's post span from p, before lim.
func genSpanAfterLen(s string, p, lim int, t *genToken) int {
	for lim = min(lim, len(s)); p < lim && inGenSet(t.post.set, s[p]); p++ {
	}
	return p
}

// genTokenAt tries the tokens anchored on s[i]: those at the literal's
// start (prev 0), then those whose byte before matches s[i-1].
func genTokenAt(s string, i int) (Match, bool) {
	as := genAt[s[i]]
	if len(as) == 0 {
		return Match{}, false
	}
	var p byte
	if i > 0 {
		p = lower(s[i-1])
	}
	if m, ok := tryAnchors(s, i, as, 0, 0); ok || p == 0 {
		return m, ok
	}
	return tryPrevAnchors(s, i, as, p)
}

// tryPrevAnchors tries the anchors of s[i] whose byte before is p, unless
// none of them accepts the byte two before.
func tryPrevAnchors(s string, i int, as []genAnchor, p byte) (Match, bool) {
	lo := int(genPrevStart[s[i]][p]) // set for every anchored byte (TestRulesGenerated)
	if lo < len(as) && as[lo].prev == p && i >= 2 && !inSet(&genPrev2[s[i]][lo], lower(s[i-2])) {
		return Match{}, false // no anchor of this prev has that byte before it
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
// the token is accepted: "ghp_ghp_ghp_..." rejected at every trigger after
// reading 4 KB each made Find quadratic (0.7 s for 32 KB); an accepted
// token is then read whole and skipped.
const genWindow = 64

// genMatch matches token t whose literal should start at st.
func genMatch(s string, st int, t *genToken) (Match, bool) {
	if !genLiteralAt(s, st, t) { // every token has a span (TestRulesGenerated)
		return Match{}, false
	}
	start, ok := genSpanBefore(s, st, t, window(t.pre))
	if !ok {
		return Match{}, false
	}
	from := st + len(t.lit)
	e, ok := genSpanAfter(s, from, t, window(t.post))
	if !ok || !genRandomPart(s[start:st]+s[from:e], t) {
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

// genRandomPart reports whether rnd, a token's spans, looks generated; a
// long fixed header may stand alone, and a short literal (s.<24>,
// SK<32>) needs digits and letters, not a method name
// (s.parseConfiguration...).
func genRandomPart(rnd string, t *genToken) bool {
	switch {
	case rnd == "" && len(t.lit) >= 16:
		return true
	case !genRandom(rnd, t.words):
		return false
	}
	return len(t.lit) >= 3 || hasDigit(rnd) && !onlyDigits(rnd)
}

// window is how far a span is read before its token is accepted: a
// bounded one only to one byte past its maximum.
func window(sp genSpan) int {
	if sp.max < 0 {
		return sp.min + genWindow
	}
	return sp.max + 1
}

// genLiteralAt reports whether t's literal is at st.
func genLiteralAt(s string, st int, t *genToken) bool {
	if st < 0 || st+len(t.lit) > len(s) {
		return false
	}
	if t.fold {
		return equalFold(s[st:st+len(t.lit)], t.lit)
	}
	return s[st:st+len(t.lit)] == t.lit
}

// genSpanBefore returns where the token whose literal starts at st starts:
// its span before the literal (pre.min to pre.max bytes), or the literal
// itself on a word boundary.
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
	e := genSpanAfterLen(s, from, from+lim, t)
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
// two and one is lower-case letters (words: only such a set holds words;
// the generator sets it per token). gitleaks uses an entropy threshold;
// this is the cheap form. An upper-case body without a digit is a token
// (an AWS key id's 16 base32 bytes have none 3.6 % of the time), and so
// are digits between dashes (Slack's xoxb-<digits>-... cut before its
// letters) or alone.
func genRandom(v string, words bool) bool {
	if fakeRun(v) {
		return false
	}
	return !words || mixed(v) || hasDigit(v) && hasSymbol(v) || len(v) >= 10 && onlyDigits(v)
}

// fakeRun reports an empty, one-byte-repeated or placeholder span.
func fakeRun(v string) bool {
	return v == "" || allSame(v) || indexFold(v, "xxxx") >= 0 || indexFold(v, "example") >= 0
}

// genKeywordValue matches a keyword rule where the hand-written classifier
// did not take the key: the folded key names a vendor (adafruit, mapbox,
// twitter...) and val has the rule's byte set and length.
func genKeywordValue(key []byte, val string) (Kind, bool) {
	if len(val) < genKeyMin || len(val) > maxValueLen {
		return "", false
	}
	best := bestKeywordRule(key, val)
	if best == len(genKeywords) || !numeric(val) && (!mixed(val) || isPlaceholder(val)) {
		return "", false
	}
	return Kind(genKeywords[best].id), true
}

// bestKeywordRule returns the first rule in table order whose keyword the
// key holds and whose value shape fits val (len(genKeywords): none),
// through the key's letter triples: trying all 99 rules' sets was 6 % of
// the clean corpus's time, for keys such as "message".
func bestKeywordRule(key []byte, val string) int {
	best := len(genKeywords)
	for p := 0; p+3 <= len(key); p++ {
		g := genKwAt[tri(key[p], key[p+1], key[p+2])]
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

// tri indexes a letter triple, case-insensitively (bytes &31).
func tri(a, b, c byte) uint32 { return uint32(a&31)<<10 | uint32(b&31)<<5 | uint32(c&31) }

type genKwRef struct {
	word string
	rule int
}

// The hand-written detectors, called by trigger byte (initTables): '=' and
// ':' assignments and headers, '@' URL credentials, '>' XML elements, 'B'
// Bearer, 'w'/'k' secrets stated in words, '-' flags, key blocks and
// Mailgun/PuTTY, 'A'/'S' Twilio, '.' Discord; "expect" and base64 key
// headers are needles (redact.go). Then the checks that keep code and docs
// under 1 % false positives (testdata/redact/clean, TestCorpus): after a
// strong key (password=) a value is redacted when in doubt; after a weaker
// one (token, secret, credential, auth, private) it must also look random.

const (
	maxKeyLen     = 64
	maxValueLen   = 4096
	maxProseValue = 256 // a password stated in a sentence or on a .pgpass line
)

// assignment reads KEY=value, key: value, "key": "value", key := "v",
// key => 'v' or Authorization: Bearer v around the operator at i: the key
// backwards, the value forwards. Only the value is masked.
func assignment(s string, i int) (Match, bool) {
	if s[i] == ':' {
		if m, ok, done := colonForms(s, i); done {
			return m, ok
		}
	}
	a, ok := readAssign(s, i)
	if !ok {
		return Match{}, false
	}
	if m, ok, done := a.otherKeys(s); done {
		return m, ok
	}
	if !a.handKey(s) {
		return genAssign(s, a.j, a.ke, a.sepEnd, a.fam)
	}
	var buf [maxKeyLen]byte
	var wide [maxKeyLen + 8]byte
	key := widenKey(s, a.j, foldKey(buf[:0], s[a.j:a.ke]), wide[:0])
	return a.keyed(s, key)
}

// otherKeys reads the keys the classifiers do not: a Cookie: or
// Set-Cookie: header, a key spelled beyond ASCII.
func (a *assign) otherKeys(s string) (m Match, ok, done bool) {
	if a.sep == ':' && equalFoldAny(s[a.j:a.ke], []string{"cookie", "set-cookie"}) {
		m, ok = cookieHeader(s, a.sepEnd)
		return m, ok, true
	}
	if kind, ok := a.foreignKey(s); ok {
		m, ok = a.literal(s, min(a.valueStart(s), len(s)-1), []byte(s[a.j:a.ke]), kind, false)
		return m, ok, true
	}
	return m, false, false
}

// cookieHeader reads the name=value pairs of a Cookie: or Set-Cookie:
// header from v and masks the first value that reads as generated; names
// stay. String's next round masks the next one. It stops at the first
// byte that is no pair, so a header repeated stays linear.
func cookieHeader(s string, v int) (Match, bool) {
	lim := min(len(s), v+maxValueLen)
	for p := skipOver(s, v, v+8, " "); p < lim; p = skipOver(s, p+1, p+3, " ") {
		n := runTo(s, p, lim, setKeyName)
		if n == p || !hasPrefixAt(s[:lim], n, "=") {
			break
		}
		m, ok := cookieValue(s, n+1)
		if p = m.End; ok || !hasPrefixAt(s[:lim], p, ";") {
			return m, ok
		}
	}
	return Match{}, false
}

// cookieValue masks a cookie's value from v to ';' when it reads as
// generated (a session id: letters and digits changing every 4, or a
// random mix); a preference (theme=dark) or an analytics id (GA1.2.n.n)
// stays, and so does the name.
func cookieValue(s string, v int) (Match, bool) {
	val := s[v:min(len(s), v+maxValueLen)]
	if k := strings.IndexAny(val, "; \t\r\n\"'"); k >= 0 {
		val = val[:k]
	}
	e := v + len(val)
	return Match{KindToken, v, e}, len(val) >= 16 && (digitMixes(val)*4 >= len(val) || randomIdent(val)) && !isPlaceholder(val)
}

// fullColon reads the assignment at a full-width colon (U+FF1A, "密码：x"),
// s[i] its last byte; the key and value are read as after '='.
func fullColon(s string, i int) (Match, bool) {
	if i < 2 || s[i-2] != 0xef {
		return Match{}, false
	}
	return assignment(s, i)
}

// wideKeyStart is where a key with letters beyond ASCII (пароль,
// contraseña, 密码) ending at ke starts: back over key bytes and UTF-8
// bytes, at most maxKeyLen, to a rune's first byte.
func wideKeyStart(s string, ke int) int {
	j := ke
	for j > 0 && ke-j < maxKeyLen && (s[j-1] >= 0x80 || classes[s[j-1]]&setKeyName != 0) {
		j--
	}
	for j < ke && s[j]&0xc0 == 0x80 {
		j++
	}
	return j
}

// foreignKey classifies a key spelled beyond ASCII by the secret words of
// the languages distill reads (es, ru, ja, zh; de, fr and pt spell theirs
// in ASCII: keywords): DB_КЛЮЧ, "contraseña", パスワード, 用户密码.
func (a *assign) foreignKey(s string) (Kind, bool) {
	if !a.wide || a.sepEnd >= len(s) {
		return "", false
	}
	k := strings.ToLower(s[a.j:a.ke])
	for _, w := range foreignWords {
		if strings.Contains(k, w.word) {
			return w.kind, true
		}
	}
	return "", false
}

// keyEnd is readAssign's way back from the operator at i (the last byte
// of a full-width colon) to the key's end.
func keyEnd(s string, i int) (j int, spaced bool) {
	if s[i] == 0x9a {
		i -= 2
	}
	j = skipBack(s, i, i-4, " \t")
	spaced = j < i
	if j > 1 && s[j-1] == ']' && isOneOf(s[j-2], "\"'") {
		j--
	}
	j = skipBack(s, j, j-2, "\"'`*")
	if j > 0 && s[j-1] == '\\' {
		j--
	}
	return j, spaced
}

// assign is an assignment being read: the operator sep at i ending at
// sepEnd, the key s[j:ke] and the keyword families its letters may start.
type assign struct {
	i, j, ke, sepEnd int
	sep              byte
	spaced           bool // spaces around the operator
	wide             bool // the key has letters beyond ASCII
	fam              uint8
}

// colonForms reads what a ':' starts besides "key: value": a Slack
// webhook, curl's -u user:password, or "::"; done says the colon was
// decided. A Telegram bot token is a generated rule (extra.toml).
func colonForms(s string, i int) (m Match, ok, done bool) {
	if hasPrefixAt(s, i+1, "//") || hasPrefixAt(s, i+1, ":") || i > 0 && s[i-1] == ':' {
		m, ok := slackWebhook(s, i)
		return m, ok, true
	}
	if m, ok = pgpass(s, i); !ok {
		m, ok = curlUser(s, i)
	}
	return m, ok, ok
}

// pgpass masks the password of a .pgpass line, host:port:db:user:password
// (s[i] is the colon after the host): the port digits or '*', the
// database and user names not numbers (file:line:col: is no such line),
// the password the rest of the line (at most maxProseValue bytes: reading
// maxValueLen at every colon of "h:1:d:u:xxxx " cost 1.4 ms per KB).
func pgpass(s string, i int) (Match, bool) {
	h := runBack(s, i, i-64, setPgpass)
	if h > 0 && !isOneOf(s[h-1], " \t\n\"'>\\") {
		return Match{}, false
	}
	p := h - 1
	for f := 0; f < 4; f++ { // host, port, database, user
		e := runTo(s, p+1, p+65, setPgpass)
		if !pgField(s[p+1:e], f == 1) || !hasPrefixAt(s, e, ":") {
			return Match{}, false
		}
		p = e
	}
	rest := s[p+1 : min(len(s), p+1+maxProseValue)]
	if k := strings.IndexAny(rest, "\r\n\"\\"); k >= 0 {
		rest = rest[:k]
	}
	// The placeholder test reads the first word only: a .pgpass line quoted in prose runs on ("… :Dc31n. Next I will
	// retry with db.example.net…"), and a placeholder word later in the sentence must not release the password.
	first, _, _ := strings.Cut(rest, " ")
	return Match{KindPassword, p + 1, p + 1 + len(rest)}, !isPlaceholder(first)
}

// pgField: a port is digits, a name (host, database, user) is not; any
// may be '*'.
func pgField(v string, port bool) bool { return v == "*" || v != "" && port == onlyDigits(v) }

// operator reads the operator at i: ':', ':=' (read as '='), '=' or '=>';
// not ==, !=, <=, +=, =~.
func operator(s string, i int) (sep byte, end int, ok bool) {
	switch {
	case s[i] == ':' && hasPrefixAt(s, i+1, "="):
		return '=', i + 2, true
	case s[i] == ':':
		return ':', i + 1, true
	case i > 0 && isOneOf(s[i-1], "=!<>:+-*/%&|^~?") || hasPrefixAt(s, i+1, "=") || hasPrefixAt(s, i+1, "~"):
		return 0, 0, false
	case hasPrefixAt(s, i+1, ">"):
		return '=', i + 2, true
	}
	return '=', i + 1, true
}

// readAssign reads the operator at i and the key before it: back over
// spaces, a closing quote (maybe JSON-escaped), the ']' of
// config["KEY"] or markdown emphasis, then the name [A-Za-z0-9_.-]+.
func readAssign(s string, i int) (a assign, ok bool) {
	a.i = i
	if a.sep, a.sepEnd, ok = operator(s, i); !ok {
		return a, false
	}
	a.ke, a.spaced = keyEnd(s, i)
	a.j = runBack(s, a.ke, a.ke-maxKeyLen-1, setKeyName)
	if a.wide = a.j > 0 && s[a.j-1] >= 0x80; a.wide {
		a.j = wideKeyStart(s, a.ke)
	}
	a.fam = keyFamilies(s[a.j:a.ke])
	return a, a.j < a.ke && a.ke-a.j <= maxKeyLen
}

// handKey reports whether the hand-written classifier may know the key
// (its triples, or the short pw, sig, key, and value); the others are
// left to the generated rules.
func (a *assign) handKey(s string) bool {
	k := s[a.j:a.ke]
	return a.fam&triHand != 0 || len(k) <= 5 && equalFoldAny(k, []string{"pw", "sig", "key", "value"}) ||
		len(k) <= 2 && a.j > 0 && s[a.j-1] == '"' && jwkKey(s, a.j, a.ke)
}

// jwkKey: a JSON Web Key's private member (handKey has seen its opening quote; JSON-escaped too) with "kty within 1 KB
// ("d": the EC/OKP scalar or RSA's exponent; RSA's "p" "q" "dp" "dq" "qi"; an "oct" key's "k"). gitleaks has no rule
// for them: its keys are one or two letters.
func jwkKey(s string, j, ke int) bool {
	return slices.Contains([]string{"d", "p", "q", "dp", "dq", "qi", "k"}, s[j:ke]) && strings.Contains(s[max(0, j-1024):min(len(s), ke+1024)], `"kty`)
}

// jwkMember reads the value of a JWK's private member: base64url, 43 bytes for a P-256 or Ed25519 scalar.
func (a *assign) jwkMember(s string) (Match, bool) {
	v := a.valueStart(s)
	if v >= len(s) || !jwkKey(s, a.j, a.ke) {
		return Match{}, false
	}
	vs, ve, _ := value(s, v)
	return Match{KindPrivateKey, vs, ve}, ve-vs >= 20 && run(s, vs, setWebhook) == ve
}

// keyed reads the value of the folded key.
func (a *assign) keyed(s string, key []byte) (Match, bool) {
	if len(key) < 3 && string(key) != "pw" {
		return a.jwkMember(s)
	}
	if a.notKey(s) {
		return Match{}, false
	}
	v := a.valueStart(s)
	if v >= len(s) || hasPrefixAt(s, v, markerPrefix) {
		return Match{}, false
	}
	if hasSuffixBytes(key, "authorization") {
		return authorization(s, v)
	}
	env := envStyle(s[a.j:a.ke])
	kind, ok := a.keyKind(s, key, env)
	if ok {
		return a.literal(s, v, key, kind, env)
	}
	if m, ok := genAssign(s, a.j, a.ke, a.sepEnd, a.fam); ok {
		return m, true
	}
	return a.unknownKey(s, v, key, env)
}

// unknownKey reads the value of a key no keyword names: a password in a
// connection string (Server=db;Uid=sa;Pwd=x;), key material after a name
// ending in key.
func (a *assign) unknownKey(s string, v int, key []byte, env bool) (Match, bool) {
	switch {
	case hasSuffixBytes(key, "pass") || hasSuffixBytes(key, "pwd"):
		m, ok := a.literal(s, v, key, KindPassword, false)
		return m, ok && (a.connPair(s, m.End) || a.lonePass(key, s[m.Start:m.End]))
	case keyName(key):
		m, ok := a.literal(s, v, key, KindSecret, env)
		return m, ok && keyMaterial(s[m.Start:m.End])
	}
	return Match{}, false
}

// lonePass: pass=/pwd= alone, unspaced, before a value that mixes letters
// and digits (pwd=hunter2x; not PWD=/home/x, pwd=$(pwd), bypass=on).
func (a *assign) lonePass(key []byte, val string) bool {
	return a.sep == '=' && !a.spaced && digitMixes(val) >= 2 && !strings.ContainsAny(val, "/$") && !hasSuffixBytes(key, "bypass")
}

// keyName: a name whose last word names a secret no keyword does (SIGNING_KEY,
// hmacKey, APP_KEY, ?key=, passcode, seed, cookie, jwt, creds; not a session
// id, which payloads carry), not a public key (PUBLIC_KEY, pubKey, hostKey);
// keyMaterial judges its value.
func keyName(key []byte) bool {
	k := strings.TrimSuffix(string(key), "s")
	return slices.ContainsFunc(keyWords, func(w string) bool { return strings.HasSuffix(k, w) }) &&
		!hasAnySuffix(k, len(k)-3, "public", "pub", "host")
}

// keyMaterial reports a value that reads as generated key material, after
// an encoding label (base64:...): randomIdent's mix, with digits inside (a
// CamelCase name flips case as often: UserProfileCache2). Not hex: a key
// is as often a digest (key=sha256:2c26...).
func keyMaterial(val string) bool {
	if l, rest, ok := strings.Cut(val, ":"); ok && len(l) <= 8 {
		val = rest
	}
	return randomIdent(val) && digitMixes(val) >= 3 && !strings.Contains(strings.TrimRight(val, "="), "=") // not "name=value"
}

// digitMixes counts letter-digit neighbours: about 5 in 16 random base62
// bytes.
func digitMixes(v string) (n int) {
	for i := 1; i < len(v); i++ {
		if (classes[v[i-1]]|classes[v[i]])&cDigit != 0 && isLetter(v[i-1]) != isLetter(v[i]) {
			n++
		}
	}
	return n
}

// connPair reports a pair of a connection string
// (Server=db;User Id=sa;Password=x;) whose value ends at e: unspaced '='
// after a ';' or before "; Name=".
func (a *assign) connPair(s string, e int) bool {
	if a.sep != '=' || a.spaced || a.sepEnd != a.i+1 {
		return false
	}
	return a.j > 0 && s[a.j-1] == ';' || e < len(s) && s[e] == ';' && connKey(s, skipOver(s, e+1, e+3, " "))
}

// connKey reports a connection string's "Name=" or "User Id=" at n.
func connKey(s string, n int) bool {
	k := runTo(s, n, n+32, cAlnum|cUnder)
	for k+1 < len(s) && s[k] == ' ' && isAlnum(s[k+1]) {
		k = runTo(s, k+1, k+32, cAlnum|cUnder)
	}
	return k > n && k < len(s) && s[k] == '='
}

// keyKind classifies the key, or for "value" the name in its element
// (<add key="DbPassword" value="...">).
func (a *assign) keyKind(s string, key []byte, env bool) (Kind, bool) {
	if kind, ok := classifyKey(key, env); ok || string(key) != "value" || a.sep != '=' {
		return kind, ok
	}
	return attributeName(s, a.j)
}

// notKey reports a key that is no assignment's: the user of
// scheme://user:pass@ (urlCredentials'), or a string ending in its colon
// ('passphrase:').
func (a *assign) notKey(s string) bool {
	return hasSuffixAt(s, a.j, "//") ||
		a.sep == ':' && a.j > 0 && a.ke == a.i && a.i+1 < len(s) && isOneOf(s[a.j-1], "\"'") && s[a.i+1] == s[a.j-1]
}

// valueStart skips the closing "**" of **Password:** and up to 8 spaces
// after the operator.
func (a *assign) valueStart(s string) int {
	v := a.sepEnd
	if hasPrefixAt(s, v, "**") {
		v += 2
	}
	v = skipOver(s, v, a.sepEnd+8, " \t")
	a.spaced = a.spaced || v > a.sepEnd
	return v
}

// literal matches the value at v of a key of kind when it is a literal
// secret. A shell assignment (PGPASSWORD=word psql: unspaced, unquoted,
// UPPER_SNAKE) is a password even as one lower-case word.
func (a *assign) literal(s string, v int, key []byte, kind Kind, env bool) (Match, bool) {
	vs, ve, quoted := value(s, v)
	if ve <= vs || hasPrefixAt(s[vs:ve], 0, markerPrefix) {
		return Match{}, false
	}
	val := s[vs:ve]
	switch {
	case kind == KindAzureStorageKey || kind == KindPrivateKey: // AccountKey=, client-key-data:
		if !quoted {
			ve = vs + len(strings.TrimRight(val, ".")) // the end of a sentence
		}
		return Match{kind, vs, ve}, base64Literal(s[vs:ve])
	case kind == KindAzureSAS:
		return a.signature(s, vs, ve)
	case kind == KindPassword && !quoted && a.bare(s, ve, env):
		return Match{kind, vs, ve}, shellPassword(key, val)
	case awsSecret(kind, key, val):
		return Match{KindAWSSecret, vs, ve}, !keyAsValue(key, val)
	}
	return Match{kind, vs, ve}, plausible(s, kind, val, ve, quoted, a.spaced, a.sep) && !keyAsValue(key, val)
}

// signature masks a URL's signature, ?sig= or ?X-Amz-Signature=: an Azure
// SAS's (sv= near it) or, in a query, another signed URL's (S3, GCS,
// CloudFront) when it reads as random.
func (a *assign) signature(s string, vs, ve int) (Match, bool) {
	val := s[vs:ve]
	if sasContext(s, a.i) {
		return Match{KindAzureSAS, vs, ve}, len(val) >= 20 && !isPlaceholder(val)
	}
	return Match{KindSecret, vs, ve}, hasAnySuffix(s, a.j, "?", "&") && looksRandom(val) && !isPlaceholder(val)
}

// bare: an unquoted password ending at ve whose context says it is one
// even as one word: a shell assignment, a connection string's pair.
func (a *assign) bare(s string, ve int, env bool) bool {
	return a.sep == '=' && !a.spaced && env || a.connPair(s, ve)
}

func shellPassword(key []byte, val string) bool {
	return len(val) >= 4 && !isPlaceholder(val) && !strings.ContainsAny(val, "([{") && !keyAsValue(key, val)
}

// awsSecret reports a 40-byte base64 secret under an AWS key name.
func awsSecret(kind Kind, key []byte, val string) bool {
	return aws40(kind, val) && (strings.Contains(string(key), "aws") || strings.Contains(string(key), "secretaccesskey")) && !isPlaceholder(val)
}

func aws40(kind Kind, val string) bool {
	return kind == KindSecret && len(val) == 40 && run(val, 0, setBase64) == 40
}

// base64Literal reports a base64 key of at least 20 bytes.
func base64Literal(val string) bool {
	return len(val) >= 20 && run(val, 0, setBase64) == len(val) && !isPlaceholder(val)
}

// keyAsValue reports a value that repeats its key (POSTGRES_PASSWORD:
// postgres, password: password).
func keyAsValue(key []byte, val string) bool {
	var b [maxKeyLen]byte
	return len(val) <= len(key) && indexFold(string(key), string(foldKey(b[:0], val))) >= 0
}

// attributeName classifies the value attribute of an XML element by its
// key or name attribute (<add key="ClearTextPassword" value="...">); j is
// where "value" starts. NuGet writes <add key=...>, some tools <ADD KEY=...>.
func attributeName(s string, j int) (Kind, bool) {
	tag := strings.LastIndexByte(s[max(0, j-256):j], '<')
	if tag < 0 {
		return "", false
	}
	head := s[max(0, j-256)+tag : j]
	for _, a := range []string{`key="`, `name="`, `key='`, `name='`} {
		k := strings.Index(strings.ToLower(head), a)
		if k < 0 {
			continue
		}
		n := head[k+len(a):]
		e := strings.IndexAny(n, `"'`)
		if e < 0 || e > maxKeyLen {
			continue
		}
		var buf [maxKeyLen]byte
		return classifyKey(foldKey(buf[:0], n[:e]), envStyle(n[:e]))
	}
	return "", false
}

// xmlElement masks the text of an element named like a secret
// (<password>x</password>, <apiToken>, Maven's and Ant's settings, or
// <entry key="db.password">x</entry>); s[i] is the '>' of the opening tag.
func xmlElement(s string, i int) (Match, bool) {
	j := runBack(s, i, i-maxKeyLen-1, setKeyName)
	if j == i && i > 0 && isOneOf(s[i-1], "\"'") {
		return xmlKeyAttr(s, i)
	}
	if j == i || j == 0 || s[j-1] != '<' || i-j > maxKeyLen {
		return Match{}, false
	}
	var buf [maxKeyLen]byte
	if kind, ok := nameKind(foldKey(buf[:0], s[j:i])); ok {
		return xmlText(s, i, s[j:i], kind)
	}
	return Match{}, false
}

// xmlKeyAttr reads <entry key="db.password">x</entry>, whose name is an
// attribute; s[i] is the '>' after its closing quote.
func xmlKeyAttr(s string, i int) (Match, bool) {
	t := strings.LastIndexByte(s[max(0, i-256):i], '<')
	if t < 0 {
		return Match{}, false
	}
	j := max(0, i-256) + t + 1
	n := run(s, j, setKeyName)
	if kind, ok := attributeName(s, i); ok && n > j {
		return xmlText(s, i, s[j:n], kind)
	}
	return Match{}, false
}

// nameKind classifies a flag's or an element's folded name: a secret's
// key, or a password's abbreviation (--db-pass, --admin-pwd, <userPwd>, <pw>).
func nameKind(key []byte) (Kind, bool) {
	if kind, ok := classifyKey(key, false); ok {
		return kind, true
	}
	return KindPassword, hasSuffixBytes(key, "pass") || hasSuffixBytes(key, "pwd") || string(key) == "pw"
}

// xmlText masks the text of element name, whose opening tag ends at the
// '>' at i, when it is a plausible literal of kind; ${env.PASS} is not, a
// Maven {encrypted} one is.
func xmlText(s string, i int, name string, kind Kind) (Match, bool) {
	vs := i + 1
	k := strings.Index(s[vs:min(len(s), vs+maxValueLen)], "</")
	if k < 0 || !hasPrefixAt(s, vs+k+2, name) {
		return Match{}, false
	}
	ve := vs + k
	vs = skipOver(s, vs, ve, " ")
	ve = skipBack(s, ve, vs, " ")
	val := s[vs:ve]
	if len(val) < 4 || strings.ContainsAny(val, "\n<") || isPlaceholder(val) && !mavenEncrypted(val) {
		return Match{}, false
	}
	return Match{kind, vs, ve}, kind == KindPassword || looksRandom(val)
}

func mavenEncrypted(val string) bool {
	return val[0] == '{' && strings.HasSuffix(val, "}") && len(val) > 16
}

// genAssign tries the generated keyword rules on key s[j:ke] and the value
// after sepEnd (MAPBOX_TOKEN, twitter_secret, "okta": ...). A value shorter
// than any rule's costs nothing more than finding its end.
func genAssign(s string, j, ke, sepEnd int, fam uint8) (Match, bool) {
	if fam&triGen == 0 {
		return Match{}, false
	}
	v := skipOver(s, sepEnd, sepEnd+8, " \t")
	if v >= len(s) {
		return Match{}, false
	}
	vs, ve, quoted := value(s, v)
	if ve-vs < genKeyMin || hasPrefixAt(s, vs, markerPrefix) {
		return Match{}, false
	}
	var buf [maxKeyLen]byte
	key := foldKey(buf[:0], s[j:ke])
	kind, ok := genKeywordValue(key, s[vs:ve])
	for !ok && !quoted && ve-vs > genKeyMin && isOneOf(s[ve-1], ".,;:") {
		ve-- // the end of a sentence: "... is X0OsUOCc655IVhzCD43EBC6b."
		kind, ok = genKeywordValue(key, s[vs:ve])
	}
	return Match{kind, vs, ve}, ok
}

const (
	triHand = 1 << iota
	triGen
)

// keyFamilies is the keyTri test of the whole name k (letters only).
func keyFamilies(k string) uint8 {
	var fam uint8
	var c1, c2 byte
	n := 0
	for j := len(k) - 1; j >= 0; j-- {
		if classes[k[j]]&cAlnum == 0 {
			continue
		}
		if n++; n >= 3 {
			t := tri(k[j], c1, c2)
			fam |= uint8(keyTri[0][t>>6]>>(t&63)&1) | uint8(keyTri[1][t>>6]>>(t&63)&1)<<1
		}
		c1, c2 = k[j], c1
	}
	return fam
}

// foldKey appends k lower-cased without its _ - . separators.
func foldKey(dst []byte, k string) []byte {
	for i := 0; i < len(k); i++ {
		if c := k[i]; c != '_' && c != '-' && c != '.' {
			dst = append(dst, lower(c))
		}
	}
	return dst
}

// envStyle reports an environment variable name (UPPER_SNAKE), whose
// keyword may be followed by a qualifier (_PROD).
func envStyle(k string) bool {
	upper := false
	for i := 0; i < len(k); i++ {
		c := k[i]
		upper = upper || classes[c]&cUpper != 0
		if classes[c]&(cAlnum|cUnder) == 0 || c >= 'a' && c <= 'z' {
			return false
		}
	}
	return upper
}

// classifyKey maps a folded key to the kind of secret its value holds: a
// keyword followed only by an allowed tail, so DB_PASSWORD, clientSecret,
// SECRET_KEY_BASE and AWS_SECRET_ACCESS_KEY count but tokenizer,
// token_count, secretName, password_file and api_key_id do not; in
// environment style (env) any tail but a known qualifier, so
// DB_PASSWORD_PROD does, and names ending in pass or pwd (MYSQL_PWD,
// SSHPASS, SMTP_PASS; not OLDPWD, BYPASS).
func classifyKey(key []byte, env bool) (Kind, bool) {
	if string(key) == "pw" || env && envPassword(key) {
		return KindPassword, true
	}
	for p := range key {
		if kw, ok := keywordAt(key, p); ok && allowedTail(string(key[p+len(kw.word):]), kw.word, env) {
			return kw.kind, true
		}
	}
	return "", false
}

func envPassword(key []byte) bool {
	return len(key) > 4 && (hasSuffixBytes(key, "pass") || hasSuffixBytes(key, "pwd")) && string(key) != "oldpwd" && !hasSuffixBytes(key, "bypass")
}

// keywordAt returns the keyword that starts at key[p] (keywordsAt: the
// generator's keywords, gen_test.go, indexed by their first byte).
func keywordAt(key []byte, p int) (keyword, bool) {
	for _, kw := range keywordsAt[key[p]] {
		if hasAt(key, p, kw.word) {
			return kw, true
		}
	}
	return keyword{}, false
}

type keyword struct {
	word string
	kind Kind
}

func allowedTail(tail, word string, env bool) bool {
	switch word {
	case "auth":
		return tail == "" || tail == "key"
	case "sig", "signature": // SIGNING_KEY is no URL's
		return tail == ""
	}
	switch tail {
	case "", "s", "key", "keys", "keybase", "accesskey", "value", "plain", "plaintext", "hash", "str", "secret":
		return true
	}
	return env && !slices.ContainsFunc(qualifiers, func(q string) bool { return strings.HasPrefix(tail, q) || strings.HasSuffix(tail, q) })
}

// value returns the bounds of the value at v: inside quotes ('..', "..",
// `..`, or JSON-escaped \"..\") on one line, or up to the first space, a
// delimiter or the next query parameter (?password=x&user=y).
func value(s string, v int) (vs, ve int, quoted bool) {
	c := s[v]
	switch {
	case isOneOf(c, "\"'`"):
		return quotedValue(s, v+1, c)
	case c == '\\' && hasPrefixAt(s, v+1, "\""):
		vs = v + 2
		k := strings.Index(s[vs:min(len(s), vs+maxValueLen)], `\"`)
		if k < 0 {
			return 0, 0, false
		}
		return vs, vs + k, true
	}
	return v, unquotedEnd(s, v), false
}

func unquotedEnd(s string, v int) int {
	e := v
	for e < len(s) && e-v <= maxValueLen && !valueStop[s[e]] && !(s[e] == '&' && nextParam(s, e+1)) {
		e++
	}
	return e
}

// quotedValue returns the bounds of a value quoted with q, from vs to the
// closing quote on the same line.
func quotedValue(s string, vs int, q byte) (int, int, bool) {
	for e := vs; e < len(s) && e-vs <= maxValueLen; e++ {
		switch s[e] {
		case '\n':
			return 0, 0, false
		case '\\':
			e++ // escaped character
		case q:
			return vs, e, true
		}
	}
	return 0, 0, false
}

// nextParam reports whether s[p:] starts like a query parameter, "name=" (X-Amz-Date=).
func nextParam(s string, p int) bool {
	e := run(s, p, setURLSafe)
	return e > p && e < len(s) && s[e] == '='
}

// plausible reports whether val, the value of a key of kind k, is a literal
// secret rather than code, a reference, a placeholder or prose.
func plausible(s string, k Kind, val string, ve int, quoted, spaced bool, sep byte) bool {
	strong := k == KindPassword
	switch {
	case !valueLen(val, strong):
		return false
	case quoted:
		return plausibleQuoted(val, strong)
	case notLiteral(val, spaced, sep) || !strong && !looksRandom(val):
		return false
	case isIdent(val) && !randomIdent(val) && identInCode(s, val, ve, spaced, sep):
		return false
	}
	return !isPlaceholder(val)
}

// valueLen: at least 8 bytes, 4 for a password, at most maxValueLen.
func valueLen(val string, strong bool) bool {
	return len(val) >= 4 && len(val) <= maxValueLen && (strong || len(val) >= 8)
}

// plausibleQuoted is plausible for a quoted value: not a sentence.
func plausibleQuoted(val string, strong bool) bool {
	n := strings.Count(val, " ")
	return n < 2 && (n == 0 || strong) && (strong || looksRandom(val)) && !isPlaceholder(val)
}

// notLiteral reports an unquoted value that is code or a reference: a
// call, index, member access or arithmetic, a file holding the secret
// (--from-file=password=./pw.txt), or a format such as
// name:password:GID:users.
func notLiteral(val string, spaced bool, sep byte) bool {
	switch {
	case strings.ContainsAny(val, "([{") || isMemberAccess(val) || hasAnyPrefix(val, 0, "./", "../", "~/"):
		return true
	case spaced && sep == '=' && strings.IndexByte(val, '*') >= 0:
		return true
	}
	return sep == ':' && !spaced && strings.IndexByte(val, ':') >= 0
}

func hasAnyPrefix(s string, i int, ps ...string) bool {
	return slices.ContainsFunc(ps, func(p string) bool { return hasPrefixAt(s, i, p) })
}

// identInCode reports an identifier value ending at ve that reads as code
// or prose rather than a password.
func identInCode(s, val string, ve int, spaced bool, sep byte) bool {
	if spaced && sep == '=' {
		return true // token = tokenize  /  password := pw
	}
	next := skipOver(s, ve, len(s), " \t")
	if next >= len(s) {
		return false
	}
	if isOneOf(s[next], ",);}") {
		return !connValue(s, val, next, spaced, sep) // Password: pw,  f(password=pw); not Password=hunter2x;
	}
	return next > ve && isAlnum(s[next]) && onlyLetters(val) // Password: must be at least 8 characters
}

// connValue: a lone connection-string pair (Password=hunter2x;), unspaced
// with ';' after it, whose value mixes letters and digits (a variable
// named for what it holds does not: userPassword2).
func connValue(s, val string, next int, spaced bool, sep byte) bool {
	return !spaced && sep == '=' && s[next] == ';' && digitMixes(val) >= 2 && indexFold(val, "pass") < 0
}

// authorization masks the credential of an Authorization header value
// ("Bearer <t>", "Basic <t>", "token <t>" or a bare one, maybe quoted or
// JSON-escaped), not a digest's parameters.
func authorization(s string, v int) (Match, bool) {
	p, q := v, byte(0)
	if isOneOf(s[p], "\"'`") {
		p, q = p+1, s[p]
	} else if hasPrefixAt(s, p, `\"`) {
		p += 2
	}
	scheme, p, ok := authScheme(s, p)
	e := bearerEnd(s, p, maxValueLen)
	if !ok || q != 0 && (e >= len(s) || s[e] != q) || !authToken(s, s[p:e], e, scheme) {
		return Match{}, false
	}
	return Match{KindBearerToken, p, bearerEnd(s, p, len(s))}, true
}

// authScheme reads a scheme and its spaces at p ("Bearer ", "Basic ",
// "token "); "" when the token is bare; ok false for a digest.
func authScheme(s string, p int) (scheme string, next int, ok bool) {
	w := skipOver(s, p, p+16, letters+"-")
	if w == p || w >= len(s) || s[w] != ' ' {
		return "", p, true
	}
	return s[p:w], skipOver(s, w, len(s), " "), !equalFold(s[p:w], "digest")
}

// authToken reports whether tok, ending at e, is a credential rather than
// code (authorization = base64.decodebytes(x)) or a placeholder; a bare
// one needs 16 bytes.
func authToken(s, tok string, e int, scheme string) bool {
	if e < len(s) && s[e] == '(' || scheme == "" && isMemberAccess(tok) {
		return false
	}
	return len(tok) >= 8 && looksRandom(tok) && !isPlaceholder(tok) && (scheme != "" || len(tok) >= 16)
}

// bearer matches "Bearer <token>" anywhere (curl -H, logs, prose).
func bearer(s string, i int) (Match, bool) {
	if !hasPrefixAt(s, i, "Bearer ") || !boundary(s, i) {
		return Match{}, false
	}
	p := skipOver(s, i+7, len(s), " ")
	tok := s[p:bearerEnd(s, p, maxValueLen)]
	if len(tok) < 16 || !looksRandom(tok) || isPlaceholder(tok) {
		return Match{}, false
	}
	return Match{KindBearerToken, p, bearerEnd(s, p, len(s))}, true
}

// bearerEnd returns the end of an RFC 6750 b64token ([A-Za-z0-9._~+/-]+=*)
// at p, without a trailing '.', looking at most limit bytes.
func bearerEnd(s string, p, limit int) int {
	e := p
	for e < len(s) && e-p < limit && (classes[s[e]]&setBearerTok != 0 || s[e] == '~') {
		e++
	}
	for e > p && s[e-1] == '.' {
		e--
	}
	return e
}

func hasAt(b []byte, p int, w string) bool {
	return len(b)-p >= len(w) && string(b[p:p+len(w)]) == w
}

func hasSuffixBytes(b []byte, w string) bool {
	return len(b) >= len(w) && string(b[len(b)-len(w):]) == w
}

// sasContext reports whether the sig= at i belongs to an Azure shared
// access signature: its signed version (sv=) is within 512 bytes.
func sasContext(s string, i int) bool {
	w := s[max(0, i-512):min(len(s), i+512)]
	return strings.Contains(w, "sv=") || strings.Contains(w, "sv%3D")
}

// curlUser masks the password of curl's -u/--user user:password; s[i] is
// the colon, which must not be "key": value, x := y, scheme:// or "a":"b",
// nor start a redaction marker.
func curlUser(s string, i int) (Match, bool) {
	if !userColon(s, i) {
		return Match{}, false
	}
	j := userStart(s, i)
	if j == i || j > 0 && s[j-1] == '[' || !afterUserFlag(s, j) {
		return Match{}, false // no user, or a redaction marker
	}
	ve := i + 1
	for ve < len(s) && ve-i <= maxValueLen && !valueStop[s[ve]] {
		ve++
	}
	return Match{KindPassword, i + 1, ve}, curlPassword(s[i+1:ve], s[j:i])
}

func curlPassword(val, user string) bool { return len(val) >= 3 && !isPlaceholder(val) && val != user }

// userStart reads the user name back from the colon at i.
func userStart(s string, i int) int {
	j := i
	for j > 0 && i-j < maxKeyLen && !isOneOf(s[j-1], " \n\t\r\"'=:[") {
		j--
	}
	return j
}

func userColon(s string, i int) bool {
	return i+1 < len(s) && !isOneOf(s[i+1], " \n\t\r=/\"'") && (i == 0 || !isOneOf(s[i-1], "\"'")) && !hasPrefixAt(s, i+1, markerPrefix)
}

// afterUserFlag reports whether the user at u, maybe quoted, follows
// curl's -u or --user.
func afterUserFlag(s string, u int) bool {
	if u > 0 && isOneOf(s[u-1], "\"'") {
		u--
	}
	return hasAnySuffix(s, u, "-u ", "--user ", "--user=", " -u")
}

func hasAnySuffix(s string, i int, ps ...string) bool {
	return slices.ContainsFunc(ps, func(p string) bool { return hasSuffixAt(s, i, p) })
}

// urlCredentials masks the password of scheme://user:password@host
// (triggered on the '@'), so scheme, user and host stay readable. The
// userinfo is read back to a '/', at most 256 bytes, no space, quote or
// bracket in it.
func urlCredentials(s string, at int) (Match, bool) {
	j, colon, ok := userinfo(s, at)
	if !ok || colon < 0 || !hasSuffixAt(s, j, "://") {
		return Match{}, false
	}
	user, pass := s[j:colon], s[colon+1:at]
	if pass == user || isPlaceholder(pass) { // "" and a marker are placeholders
		return Match{}, false
	}
	if databaseScheme(s, j-3) {
		return Match{KindDatabaseURL, colon + 1, at}, true
	}
	return Match{KindURLCredentials, colon + 1, at}, true
}

// databaseScheme reports whether the scheme ending at se names a database.
func databaseScheme(s string, se int) bool {
	sb := se
	for sb > 0 && se-sb < 16 && (isAlnum(s[sb-1]) || isOneOf(s[sb-1], "+.-")) {
		sb--
	}
	return equalFoldAny(s[sb:se], databaseSchemes)
}

// userinfo reads back from the '@' at at to a '/' (at most 256 bytes) and
// where its first ':' is (-1: none); ok is false for a byte no userinfo holds.
func userinfo(s string, at int) (j, colon int, ok bool) {
	colon = -1
	for j = at; j > 0 && at-j < 256 && s[j-1] != '/'; j-- {
		if c := s[j-1]; c <= ' ' || isOneOf(c, "\"'`<>?#\\") {
			return 0, 0, false
		} else if c == ':' {
			colon = j - 1
		}
	}
	return j, colon, true
}

// isPlaceholder reports whether v is obviously not a real secret: one
// byte repeated, a reference, a number, a placeholder word (gen_test.go's
// placeholderWords, indexed by first byte in wordsByFirst) or part.
func isPlaceholder(v string) bool {
	return v == "" || allSame(v) || reference(v) || numeric(v) ||
		equalFoldAny(v, wordsByFirst[lower(v[0])]) || hasPlaceholderPart(v)
}

// hasPlaceholderPart reports a placeholder part (gen_test.go's
// placeholderParts, indexed by first byte in partsByFirst) anywhere in v.
func hasPlaceholderPart(v string) bool {
	for i := 0; i < len(v); i++ {
		for _, p := range partsByFirst[lower(v[i])] {
			if len(v)-i >= len(p) && equalFold(v[i:i+len(p)], p) {
				return true
			}
		}
	}
	return false
}

// equalFoldAny reports whether v equals one of ws, ignoring ASCII case.
func equalFoldAny(v string, ws []string) bool {
	return slices.ContainsFunc(ws, func(w string) bool { return equalFold(v, w) })
}

// reference reports a value that names another: $TOKEN, ${TOKEN}, $(cmd)
// (a $2b$... bcrypt hash stays secret), %TOKEN%, %s, {token}, <token>,
// YAML tags/aliases/anchors, @Value, arrays.
func reference(v string) bool {
	if v[0] == '$' {
		return len(v) > 1 && (isLetter(v[1]) || isOneOf(v[1], "_{("))
	}
	return isOneOf(v[0], "%{<!*&@[")
}

// numeric reports whether v is a number, a version or a duration-like value
// (digits and . - _ : only), or a hex literal (0x53c2_37) shorter than a key.
func numeric(v string) bool {
	if len(v) > 2 && v[0] == '0' && lower(v[1]) == 'x' { // up to 63 digits: 64 are a 256-bit key (Ethereum's)
		return skipOver(v, 2, min(len(v), 65), "0123456789abcdefABCDEF_") == len(v)
	}
	return skipOver(v, 0, len(v), "0123456789.-_:") == len(v)
}

// looksRandom reports whether v has the character mix of a generated
// credential rather than a word or identifier.
func looksRandom(v string) bool {
	if len(v) < 8 {
		return false
	}
	d, l, u := charKinds(v)
	return d && (l || u) || l && u && len(v) >= 12 && caseFlips(v)*3 >= len(v)
}

// caseFlips counts adjacent letter pairs that differ in case: few in
// CamelCase words (StartElement: 3), many in random base62/base64.
func caseFlips(v string) int {
	flips := 0
	for i := 1; i < len(v); i++ {
		if isLetter(v[i-1]) && isLetter(v[i]) && (v[i-1]^v[i])&0x20 != 0 {
			flips++
		}
	}
	return flips
}

// randomIdent reports whether an identifier-shaped value is more likely a
// generated credential than a CamelCase name: long, all three character
// classes, and the case flips often (testRSA2048PrivateKey flips 5 times in
// 21 bytes; 20 random base62 bytes about 8 times).
func randomIdent(v string) bool {
	return len(v) >= 20 && looksRandom(v) && hasDigit(v) && caseFlips(v)*4 >= len(v)
}

// isIdent reports whether v is a single identifier: [A-Za-z_][A-Za-z0-9_]*.
func isIdent(v string) bool {
	return v != "" && classes[v[0]]&cDigit == 0 && runTo(v, 0, len(v), setWord) == len(v)
}

// isMemberAccess reports a dotted identifier path such as cfg.Password,
// os.environ or process.env.TOKEN.
func isMemberAccess(v string) bool {
	for part := range strings.SplitSeq(v, ".") {
		if !isIdent(part) {
			return false
		}
	}
	return strings.IndexByte(v, '.') >= 0
}

func onlyLetters(v string) bool { return v != "" && strings.TrimLeft(v, letters) == "" }

// Secrets stated in words: "my db password is Hunter2-Prod!", "the api key
// is 8f3a...", "password s3cr3t-Value" in a .netrc, "aws configure set
// aws_secret_access_key X"; triggered on the 'w' of pw/passwd/password or
// the 'k' of token/key ("key: value" and "key=value" are assignments).

// proseKey is called with s[i] == 'w' or 'k'. The keyword's word must not
// be in a path, variable or field, and needs a verb, a "set " before it or
// be .netrc's "password"; without a verb the value follows only in
// "set <key> <value>" and .netrc's "[machine|login ...] password <value>".
func proseKey(s string, i int) (Match, bool) {
	we, ok := proseShape(s, i)
	if !ok {
		return Match{}, false
	}
	p, verb := afterVerb(s, we+1)
	ws := runBack(s, i, i-maxKeyLen, setURLSafe)
	if !proseWord(s, ws, we, verb) {
		return Match{}, false
	}
	var buf [2*maxKeyLen + 1]byte
	key := widenKey(s, ws, foldKey(buf[:0], s[ws:we]), buf[:0])
	kind, ok := proseKind(key, envStyle(s[ws:we]))
	if !ok || !verb && !setOrNetrc(lineBefore(s, ws), kind) {
		return Match{}, false
	}
	if p = skipOver(s, p, we+16, " "); p >= len(s) || hasPrefixAt(s, p, markerPrefix) {
		return Match{}, false
	}
	return proseValue(s, p, kind, key)
}

func proseWord(s string, ws, we int, verb bool) bool {
	if ws > 0 && isOneOf(s[ws-1], "./$%{<@") {
		return false // a path, variable or field
	}
	return verb || hasSuffixAt(s, ws, "set ") || s[ws:we] == "password"
}

// proseKind classifies the folded key; "pw" and "pass" are passwords.
func proseKind(key []byte, env bool) (Kind, bool) {
	if kind, ok := classifyKey(key, env); ok {
		return kind, true
	}
	return KindPassword, string(key) == "pw" || string(key) == "pass"
}

// proseValue matches the value at p, without the punctuation that ends
// its sentence.
func proseValue(s string, p int, kind Kind, key []byte) (Match, bool) {
	vs, ve, quoted := value(s, p)
	if !quoted {
		ve = skipBack(s, ve, vs, ".,:;)")
	}
	val := s[vs:ve]
	if ve <= vs || !proseSecret(val, kind) {
		return Match{}, false
	}
	if aws40(kind, val) && strings.Contains(string(key), "aws") {
		kind = KindAWSSecret
	}
	return Match{kind, vs, ve}, true
}

func setOrNetrc(line string, kind Kind) bool {
	line = strings.TrimLeft(line, " \t")
	if strings.HasSuffix(line, "set ") {
		return true
	}
	return kind == KindPassword && (line == "" || strings.Contains(line, "login ") || strings.Contains(line, "machine "))
}

// proseSecret reports whether a value stated in words is a literal secret:
// a password with a digit, a case change or a symbol, or a random token.
func proseSecret(val string, kind Kind) bool {
	if isPlaceholder(val) || strings.ContainsAny(val, "([{") || isMemberAccess(val) || len(val) > maxValueLen {
		return false
	}
	if kind == KindPassword {
		return len(val) >= 6 && !onlyLetters(val) && (mixed(val) || hasSymbol(val))
	}
	return len(val) >= 12 && looksRandom(val)
}

// widenKey turns the key "key" into "apikey", "accesskey" or "secretkey"
// when the word before it (ending at ws-1) says so: "the API key is",
// "Here is the API key: ...". dst is scratch space.
func widenKey(s string, ws int, key, dst []byte) []byte {
	if string(key) != "key" || ws < 2 || s[ws-1] != ' ' {
		return key
	}
	p := ws - 1
	for _, w := range []string{"api", "access", "secret"} {
		if p >= len(w) && equalFold(s[p-len(w):p], w) && boundary(s, p-len(w)) {
			return append(append(dst, w...), "key"...)
		}
	}
	return key
}

// proseShape is proseKey's cheap part, which Find runs before the call:
// s[i] is the 'w' of pw/passw(or)d or the 'k' of token/key, its word ends
// (we) before a space, and no operator follows ("token := x", "password =
// y" are code, left to assignment), nor a lower-case word ("password must
// be", "token string", "is returned"), which proseKey never accepts.
func proseShape(s string, i int) (we int, ok bool) {
	if !keywordShape(s, i) {
		return 0, false
	}
	if we = runTo(s, i+1, i+maxKeyLen, setURLSafe); we >= len(s) || s[we] != ' ' {
		return 0, false // password), token. token, ...: not a statement
	}
	v, verb := afterVerb(s, we+1)
	if !verb && wordEnd(s, skipOver(s, v, len(s), " "), ":=!<>", 2) {
		return 0, false
	}
	v = skipOver(s, v, we+16, " ")
	return we, v < len(s) && !wordEnd(s, v, "abcdefghijklmnopqrstuvwxyz", len(s))
}

// keywordShape: s[i] is the 'w' of pw/passw(or)d or the 'k' of token/key.
func keywordShape(s string, i int) bool {
	if i < 1 || i+2 >= len(s) {
		return false
	}
	p := lower(s[i-1])
	switch {
	case s[i] == 'w':
		return slices.ContainsFunc(wStems, func(w string) bool { return i >= len(w) && equalFold(s[i-len(w):i], w) })
	case p == 'o':
		return i >= 2 && lower(s[i-2]) == 't' && s[i+1:i+3] == "en"
	}
	return s[i+1:i+3] == "ey"
}

// wordEnd reports whether at p a run of 1 to n bytes of set ends a word
// (the text or a valueStop follows).
func wordEnd(s string, p int, set string, n int) bool {
	q := skipOver(s, p, p+n+1, set)
	return q > p && q-p <= n && (q == len(s) || valueStop[s[q]])
}

// afterVerb returns where the text after the "is " or "was " at p starts,
// and whether one is there.
func afterVerb(s string, p int) (int, bool) {
	for _, v := range [...]string{"is ", "was ", "ist ", "lautet ", "est ", "es ", "é ", "è "} { // en, nl, de, fr, es, pt, it
		if hasPrefixAt(s, p, v) {
			return p + len(v), true
		}
	}
	return p, false
}

// foreignProse is proseKey for the languages whose password word has no
// 'w' to trigger on (es, pt, ru, ja, zh): the word, then a verb, then the
// value ("la contraseña es X", "a senha é X", "пароль — X", "パスワードはX",
// "密码是X"). It is triggered on the last byte of lit: one of the word's
// bytes beyond ASCII (or, for Portuguese, the verb's é), so text in other
// scripts never calls it. The value is ASCII (a CJK sentence goes on
// without a space after it).
func foreignProse(s string, i int) (Match, bool) {
	for _, w := range proseWordsAt[s[i]] {
		j := i + 1 - len(w.lit)
		if j < 0 || !hasSuffixAt(s, i+1, w.lit[w.first:]) || !strings.EqualFold(s[j:j+w.first], w.lit[:w.first]) || !boundary(s, j) {
			continue // the first letter in either case: Пароль, Senha
		}
		for _, v := range w.verbs {
			if p := i + 1 + len(v); hasPrefixAt(s, i+1, v) {
				return foreignValue(s, skipOver(s, p, p+4, " "))
			}
		}
	}
	return Match{}, false
}

// statedWord is a password's word in foreignProseWords (gen_test.go),
// which TestRulesGenerated indexes by lit's last byte as proseWordsAt.
type statedWord struct {
	lit   string
	first int      // the length of lit's first letter
	verbs []string // one follows the word
}

// foreignValue reads the value at p of a password stated in words, up to
// the first byte beyond ASCII, at most maxProseValue bytes on: reading
// maxValueLen made "mot de passe est " repeated cost 2 ms per KB.
func foreignValue(s string, p int) (Match, bool) {
	e := p
	for e < len(s) && e-p <= maxProseValue && s[e] < 0x80 {
		e++
	}
	if e == p {
		return Match{}, false
	}
	return proseValue(s[:e], p, KindPassword, nil) // a marker is a placeholder (proseSecret)
}

// promptAnswer masks what a script types at a prompt for a credential:
// expect's send "X\r" and pexpect's sendline('X'), within 320 bytes after
// an expect whose quoted pattern (maybe in a list, behind -re/-ex/-gl,
// JSON-escaped) asks on its line for a password, passphrase, passcode, PIN,
// token or secret. It is called at each "expect" (a needle), as the
// prompt words share no byte the trigger table could filter on ("pass"
// alone put a call on every 'w' after it in code); p is where "expect"
// ends. expect(res.token) is a test assertion, not a pattern.
func promptAnswer(s string, p int) (Match, bool) {
	q, ok := promptPattern(s, p)
	if !ok {
		return Match{}, false
	}
	k := strings.Index(s[q:min(len(s), q+320)], "send")
	if k < 0 {
		return Match{}, false
	}
	le := strings.IndexByte(s[q:min(len(s), q+256)], '\n')
	if le < 0 {
		le = min(len(s), q+256) - q
	}
	kind, ok := promptCredential(s[q+1 : q+min(le, k)]) // the pattern: its line, up to the send
	vs, ve, ok2 := sentAnswer(s, q+k)
	val := s[vs:ve]
	if !ok || !ok2 || len(val) < 4 || isPlaceholder(val) || strings.ContainsAny(val, " $[") {
		return Match{}, false // $env(PIN), [exec pass show x]: a reference
	}
	return Match{kind, vs, ve}, true
}

// promptPattern returns where the quoted pattern after "expect" (ending at
// p) starts: maybe in a list, behind -re/-ex/-gl, JSON-escaped.
func promptPattern(s string, p int) (int, bool) {
	q := skipOver(s, p, p+16, " ([")
	for _, f := range []string{"-re ", "-ex ", "-gl "} {
		if hasPrefixAt(s, q, f) {
			q += len(f)
		}
	}
	return q, q < len(s) && isOneOf(s[q], "\"'\\{")
}

// sentAnswer returns the quoted answer of the send or sendline at k,
// without its typed Enter (\r, \n, maybe escaped).
func sentAnswer(s string, k int) (vs, ve int, ok bool) {
	v := k + 4
	if hasPrefixAt(s, v, "line") {
		v += 4
	}
	v = skipOver(s, v, k+16, " (")
	if hasPrefixAt(s, v, "-- ") {
		v += 3
	}
	if v >= len(s) || !isOneOf(s[v], "\"'\\") {
		return 0, 0, false
	}
	vs, ve, quoted := value(s, v)
	if !quoted || ve <= vs {
		return 0, 0, false
	}
	return vs, trimEnter(s, vs, ve), true
}

// trimEnter returns the end of s[vs:ve] without a typed Enter.
func trimEnter(s string, vs, ve int) int {
	for _, esc := range []string{`\\r`, `\\n`, `\r`, `\n`, "\r", "\n"} {
		if e := ve - len(esc); e > vs && s[e:ve] == esc {
			return e
		}
	}
	return ve
}

// promptCredential reports whether an expect pattern (from after its
// opening quote) asks for a credential: a word of promptWords, then up to
// the closing quote either a ':' or '?' or no letter ("Password for
// deploy:", "*assword*", "(?i)passphrase"), so that a pattern that reports
// ("PIN accepted", "token expired") is not taken for a prompt.
func promptCredential(pat string) (Kind, bool) {
	pat = pat[:min(len(pat), 256)]
	for _, pw := range promptWords {
		if k := indexFold(pat, pw.word); k >= 0 && promptAsks(pat, k, k+len(pw.word)) {
			return pw.kind, true
		}
	}
	return "", false
}

// promptAsks reports whether the prompt word pat[k:e] asks: up to the
// closing quote a ':' or '?', or no letter; "pin" only as a word.
func promptAsks(pat string, k, e int) bool {
	if e-k == 3 && (!boundary(pat, k) || e < len(pat) && isLetter(pat[e])) {
		return false
	}
	rest := pat[e:]
	if c := strings.IndexAny(rest, "\"'"); c >= 0 {
		rest = rest[:c]
	}
	return strings.ContainsAny(rest, ":?") || !strings.ContainsFunc(rest, func(r rune) bool { return r < 0x80 && isLetter(byte(r)) })
}

// Secrets on a command line: --password X, mysql -pX, sshpass -p X,
// docker login -p X (--token=X is an assignment); triggered on the dash.

// longFlag masks the value of --<name> <value> when the name is a secret
// key (--password, --token, --api-key, --client-secret, ...); n is the index
// of the name.
func longFlag(s string, n int) (Match, bool) {
	e := runTo(s, n, n+maxKeyLen+1, setURLSafe)
	if e == n || e-n > maxKeyLen || e >= len(s) || s[e] != ' ' {
		return Match{}, false
	}
	var buf [maxKeyLen]byte
	key := foldKey(buf[:0], s[n:e])
	if kind, ok := nameKind(key); ok {
		return spacedValue(s, e, kind, key)
	}
	return Match{}, false
}

// shortFlag masks the password of a single-dash flag (s[i] is the dash):
// a letter whose commands take one attached (mysql -pX) or as the next word
// (ssh-keygen -N X) in passFlags, and single-dash long flags named like a
// password (openssl -passin pass:X, keytool -storepass X).
func shortFlag(s string, i int) (Match, bool) {
	if i+2 >= len(s) {
		return Match{}, false
	}
	if isAlnum(s[i+2]) && s[i+1] != 'p' || s[i+1] == 'p' && hasPrefixAt(s, i+2, "ass") {
		return longSingleDash(s, i)
	}
	f, v := passFlags[s[i+1]].spaced, i+2
	if c := s[i+2]; !isSpaceByte(c) {
		f, v = passFlags[s[i+1]].attached, i+1
		if valueStop[c] && !isOneOf(c, "\"'") {
			return Match{}, false // "-p;", "-p`cat pw`" ("-p-": spacedValue takes no flag for a value)
		}
	}
	if len(f) > 0 && containsAny(lineBefore(s, i), f) {
		return spacedValue(s, v, KindPassword, nil)
	}
	return Match{}, false // "- item", "-v ", "-x"
}

type passFlag struct{ attached, spaced []string }

func containsAny(s string, words []string) bool {
	return slices.ContainsFunc(words, func(w string) bool { return strings.Contains(s, w) })
}

// longSingleDash masks the value of -<name> <value> (openssl's -passin,
// -passout, -pass; keytool's -storepass, -keypass) when a hand-written
// keyword may start in the name (not -name, -exec, -delete) and it is a
// password's; openssl's "pass:X" keeps its prefix, and its env:/file:/fd:
// forms name no secret.
func longSingleDash(s string, i int) (Match, bool) {
	n := i + 1
	e, ok := singleDashName(s, n)
	if !ok {
		return Match{}, false
	}
	var buf [maxKeyLen]byte
	key := foldKey(buf[:0], s[n:e])
	if _, ok := classifyKey(key, false); !ok && !hasSuffixBytes(key, "pass") && string(key) != "passin" && string(key) != "passout" {
		return Match{}, false
	}
	v := e + 1
	if hasPrefixAt(s, v, "pass:") {
		return spacedValue(s, v+4, KindPassword, nil)
	}
	if hasAnyPrefix(s, v, "env:", "file:", "fd:", "stdin") {
		return Match{}, false
	}
	return spacedValue(s, e, KindPassword, key)
}

// singleDashName returns the end of the flag name at n, followed by a
// space, when a hand-written keyword may start in it.
func singleDashName(s string, n int) (int, bool) {
	e := runTo(s, n, n+maxKeyLen+1, cAlnum)
	return e, e-n >= 4 && e-n <= maxKeyLen && e < len(s) && s[e] == ' ' && keyFamilies(s[n:e])&triHand != 0
}

// spacedValue masks the value that starts after the spaces at p (or right
// after the flag letter p for -pX), quoted or up to the next space, if it is
// a plausible literal secret of kind k. key, when given, is the folded name.
func spacedValue(s string, p int, k Kind, key []byte) (Match, bool) {
	v := skipOver(s, p+1, p+4, " ")
	if v >= len(s) || s[v] == '-' || hasPrefixAt(s, v, markerPrefix) {
		return Match{}, false
	}
	vs, ve, quoted := value(s, v)
	val := s[vs:ve]
	if ve <= vs || !plausible(s, k, val, ve, quoted, false, ' ') || keyAsValue(key, val) {
		return Match{}, false
	}
	return Match{k, vs, ve}, true
}

// lineBefore returns the text from the start of i's line (at most 256 bytes
// back) to i.
func lineBefore(s string, i int) string {
	lo := max(0, i-256)
	if k := strings.LastIndexByte(s[lo:i], '\n'); k >= 0 {
		lo += k + 1
	}
	return s[lo:i]
}

// The vendor formats the generated table cannot hold: those that need
// context (Twilio and Mailgun beside their name, an AWS secret after its
// key id, a Slack webhook keeping its host) or have no literal to anchor
// on (Discord bot tokens).

// dashToken handles private key blocks, flags, Mailgun's key- and PuTTY
// key files; a -----BEGIN or -----END line is triggered on its second dash.
func dashToken(s string, i int) (Match, bool) {
	switch {
	case isOneOf(s[i-1], " \t"):
		return shortFlag(s, i)
	case s[i-1] == 'y' && hasSuffixAt(s, i, "key"):
		if m, ok := mailgun(s, i); ok {
			return m, true
		}
	case s[i-1] == 'Y' && hasSuffixAt(s, i, "PuTTY") && hasPrefixAt(s, i, "-User-Key-File-"):
		return puttyKey(s, i-5)
	case s[i-1] == 'e' && hasSuffixAt(s, i, "Private") && hasPrefixAt(s, i, "-Lines:"):
		return puttyKey(s, i-7) // a read that starts past the header
	case s[i-1] == '-':
		return doubleDash(s, i)
	}
	return prefixedToken(s, i)
}

// prefixedToken matches a vendor-shaped token no rule names (sbp_, gsk_,
// xai-, tskey-auth-, pcsk_ ...): a lower-case prefix of 2-10 bytes opening
// a word, its first separator at i, then url-safe bytes whose longest part
// between separators has 28+ bytes that read as generated (keyMaterial;
// ids such as toolu_, msg_, call_ or a Stripe object's carry 24, maybe
// followed by __vscode-<n>). Not a digest's label (sha512-<base64>, md5_)
// nor a key that says it is public (pk_live_, pub-); a vendor rule anchored
// on the same separator names its kind.
func prefixedToken(s string, i int) (Match, bool) {
	p := tokenPrefix(s, i)
	if i-p < 2 || hasAnyPrefix(s, p, "sha", "md5", "pk", "pub") {
		return Match{}, false
	}
	e := runTo(s, i+1, i+1+maxValueLen, setURLSafe)
	if part := longestPart(s[i+1 : e]); len(part) < 28 || !keyMaterial(part) && !lowerMaterial(s, p, i, part) {
		return Match{}, false
	}
	if m, ok := genTokenAt(s, i); ok {
		return m, true
	}
	return Match{KindToken, p, e}, true
}

// lowerMaterial: a lower-case or hex body after a prefix that ends in '_'
// (sbp_<40 hex>, napi_<base36>, lsv2_pt_<32 hex>_<10 hex>), 32+ bytes
// changing between letter and digit at least every 4 (random base36: about
// 2 in 5; a name: rarely), or hex with both. A bare digest, git SHA, UUID or nix hash has no
// such prefix; an object id has a noun's (resp_<48 hex>, msg_, evt_) and a
// digest a hash's label.
func lowerMaterial(s string, p, i int, part string) bool {
	return s[i] == '_' && len(part) >= 32 && part == strings.ToLower(part) && !slices.Contains(idPrefixes, s[p:i]) &&
		(digitMixes(part)*4 >= len(part) || hexDigest(part))
}

// hexDigest: v is lower-case hex with letters and digits.
func hexDigest(v string) bool {
	return runTo(v, 0, len(v), cHexLow) == len(v) && hasDigit(v) && strings.ContainsAny(v, "abcdef")
}

// tokenPrefix is where the lower-case prefix ending at i starts (i when
// there is none): up to 10 bytes opening a word with a letter.
func tokenPrefix(s string, i int) int {
	p := i
	for p > 0 && i-p < 10 && isAlnum(s[p-1]) && classes[s[p-1]]&cUpper == 0 {
		p--
	}
	if !isLetter(s[p]) || p > 0 && classes[s[p-1]]&setURLSafe != 0 {
		return i
	}
	return p
}

// longestPart is the longest run of v between '_' and '-'.
func longestPart(v string) (part string) {
	for f := range strings.FieldsFuncSeq(v, func(r rune) bool { return r == '_' || r == '-' }) {
		if len(f) > len(part) {
			part = f
		}
	}
	return part
}

func doubleDash(s string, i int) (Match, bool) {
	dashes2 := i == 1 || s[i-2] != '-'
	switch {
	case dashes2 && hasPrefixAt(s, i-1, beginMarker):
		return privateKey(s, i-1)
	case dashes2 && hasPrefixAt(s, i-1, endMarker):
		return privateKeyTail(s, i-1) // a key whose BEGIN was in another read
	case i < 2 || isOneOf(s[i-2], " \t\n\"'`(="):
		return longFlag(s, i+1)
	}
	return Match{}, false
}

// awsPairedSecret matches the secret access key that follows an access key
// id ending at e (credentials.csv's "id,secret", a pasted "id secret"): 40
// base64 bytes after at most a few separators on the same line.
func awsPairedSecret(s string, e int) (Match, bool) {
	p := skipOver(s, e, e+8, " \t,;:|=\"'")
	if p == e || p >= len(s) || !boundary(s, p) {
		return Match{}, false
	}
	q := run(s, p, setBase64)
	v := s[p:q]
	return Match{KindAWSSecret, p, q}, len(v) == 40 && endBoundary(s, q) && mixed(v) && !isPlaceholder(v)
}

// hexBody reports a 32-byte lower-case hex run with a digit at p, ending
// on a word boundary, and returns its end.
func hexBody(s string, p int) (int, bool) {
	e := run(s, p, cHexLow)
	return e, e-p == 32 && endBoundary(s, e) && hasDigit(s[p:e])
}

// twilio matches SK/AC + 32 lowercase hex when "twilio" appears within the
// 256 bytes before it (the format alone collides with hex ids).
func twilio(s string, i int) (Match, bool) {
	if !boundary(s, i) || len(s)-i < 34 {
		return Match{}, false
	}
	e, ok := hexBody(s, i+2)
	return Match{KindTwilioKey, i, e}, ok && indexFold(s[max(0, i-256):i], "twilio") >= 0
}

// mailgun matches key-<32 hex> and pubkey-<32 hex>, s[i] being the dash,
// when "mailgun" appears within the 256 bytes before it or the key is the
// password of curl's "api:" basic auth (the format alone collides with
// cache keys built from an MD5).
func mailgun(s string, i int) (Match, bool) {
	start := i - 3
	if hasSuffixAt(s, start, "pub") {
		start -= 3
	}
	if !boundary(s, start) {
		return Match{}, false
	}
	e, ok := hexBody(s, i+1)
	return Match{KindMailgunKey, start, e}, ok && (hasSuffixAt(s, start, "api:") || indexFold(s[max(0, start-256):start], "mailgun") >= 0)
}

// discord matches a bot token, [MNO] + 23-27, '.', 6, '.', 27-38 url-safe
// bytes, triggered on its first dot.
func discord(s string, i int) (Match, bool) {
	if i < 24 || i+7 >= len(s) || s[i+7] != '.' {
		return Match{}, false // the middle part is exactly 6 bytes
	}
	for l := 24; l <= 28 && l <= i; l++ {
		if t := i - l; isOneOf(s[t], "MNO") && boundary(s, t) {
			return discordTail(s, t, i)
		}
	}
	return Match{}, false
}

// discordTail checks the first part s[t:i] and reads the 6-byte middle
// part and the 27-38 byte last part.
func discordTail(s string, t, i int) (Match, bool) {
	if run(s, t, setURLSafe) != i || !mixed(s[t:i]) {
		return Match{}, false
	}
	e2 := run(s, i+1, setURLSafe)
	if e2-(i+1) != 6 || e2 >= len(s) || s[e2] != '.' {
		return Match{}, false
	}
	e3 := run(s, e2+1, setURLSafe)
	n := e3 - (e2 + 1)
	return Match{KindDiscordToken, t, e3}, n >= 27 && n <= 38 && endBoundary(s, e3)
}

// slackWebhook is the vendor format a ':' starts (s[c] is the colon of
// "://"): it masks the path of https://hooks.slack.com/services/...,
// keeping the host.
func slackWebhook(s string, c int) (Match, bool) {
	if !hasPrefixAt(s, c, "://hooks.slack.com/") {
		return Match{}, false
	}
	i := c + len("://hooks.slack.com")
	for _, p := range []string{"/services/", "/workflows/", "/triggers/"} {
		if hasPrefixAt(s, i, p) {
			from := i + len(p)
			e := run(s, from, setWebhook)
			if e-from < 20 || isPlaceholder(s[from:e]) {
				return Match{}, false
			}
			return Match{KindSlackWebhook, from, runTo(s, e, len(s), setWebhook)}, true
		}
	}
	return Match{}, false
}

func isSpaceByte(c byte) bool { return isOneOf(c, " \n\t\r") }

func isLetter(c byte) bool { return (c|0x20)-'a' < 26 }

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

func onlyDigits(v string) bool { return runTo(v, 0, len(v), cDigit) == len(v) }

// hasSymbol reports whether v has a byte that is neither a letter nor a digit.
func hasSymbol(v string) bool { return runTo(v, 0, len(v), cAlnum) < len(v) }

// mixed reports whether s has at least two of: digit, lower, upper.
func mixed(s string) bool {
	d, l, u := charKinds(s)
	return d && (l || u) || l && u
}

// charKinds reports whether s has a digit, a lower-case and an upper-case
// ASCII letter.
func charKinds(s string) (d, l, u bool) {
	for i := 0; i < len(s); i++ {
		c := classes[s[i]]
		d, l, u = d || c&cDigit != 0, l || c&(cAlnum|cDigit|cUpper) == cAlnum, u || c&cUpper != 0
	}
	return d, l, u
}

func allSame(s string) bool { return s == "" || strings.Count(s, s[:1]) == len(s) }

func lower(c byte) byte {
	if c-'A' < 26 {
		return c + 'a' - 'A'
	}
	return c
}

// equalFold reports whether s equals w, ignoring ASCII case: a loop the
// compiler keeps simple (strings.EqualFold, Unicode-aware, cost the clean
// corpus 5 %).
func equalFold(s, w string) bool {
	if len(s) != len(w) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if lower(s[i]) != lower(w[i]) {
			return false
		}
	}
	return true
}

// indexFold returns the index of the first sub in s, ASCII
// case-insensitively, or -1; sub must be lower case.
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if equalFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// Key blocks: PEM/OpenSSH/PGP private keys, PuTTY key files, and base64
// of them.
const (
	beginMarker  = "-----BEGIN "
	endMarker    = "-----END "
	dashes       = "-----"
	maxLabel     = 64       // "ENCRYPTED PRIVATE KEY", "PGP PRIVATE KEY BLOCK"
	maxKeyBlock  = 64 << 10 // an armored RSA-16384 key is ~13 KB
	minKeyBase64 = 32
)

// privateKey masks a private key block, header to trailer, across real or
// JSON-escaped newlines; s[i:] starts with "-----BEGIN ". Without its END
// line (a transcript cut mid-key) the block runs to the end of its base64
// body; a text that ends with the header (a clip kept only that much) has
// the header masked, as it says a key follows. Certificates and public
// keys are not matched.
func privateKey(s string, i int) (Match, bool) {
	body, ok := privateLabel(s, i+len(beginMarker))
	if !ok {
		return Match{}, false
	}
	limit := min(len(s), body+maxKeyBlock)
	// The body ends at the first dashes: END, or the next BEGIN when this
	// block lost its END. Searching only that far keeps a text of headers
	// linear (searching for END scanned 64 KB per header).
	if k := strings.Index(s[body:limit], dashes); k >= 0 && hasPrefixAt(s, body+k, endMarker) {
		e, ok := privateLabel(s, body+k+len(endMarker))
		return Match{KindPrivateKey, i, e}, ok && countBase64(s[body:body+k]) >= minKeyBase64
	}
	if e := keyBody(s, body, limit); countBase64(s[body:e]) >= minKeyBase64 {
		return Match{KindPrivateKey, i, e}, true
	}
	return Match{KindPrivateKey, i, body}, strings.Trim(s[body:], " \t\r\n\u2026") == ""
}

// privateLabel returns the end of the label at p of a BEGIN or END line
// and its dashes; ok when it names a private key.
func privateLabel(s string, p int) (int, bool) {
	e := strings.Index(s[p:min(len(s), p+maxLabel)], dashes)
	return p + e + len(dashes), e >= 0 && strings.Contains(s[p:p+e], "PRIVATE KEY")
}

// keyBody returns the end of a key body without its END line from p: runs
// of base64 separated by line breaks (real or "\n"-escaped), each maybe
// behind a line-number prefix (Claude's Read "    12→", cat -n "    12\t",
// grep -n "12:") and wrapped in string-literal glue (quotes, '+', ',',
// ';', ')') as source code splits a PEM block. A run neither followed by
// a line break nor 16 bytes long (a word of prose after the key) ends it.
func keyBody(s string, p, limit int) int {
	end, i := p, p
	for first := true; i < limit; first = false {
		g, brk := skipKeyGlue(s, i, limit)
		if g >= limit || !brk && !first {
			break
		}
		k := runTo(s, g, limit, setBase64)
		if k == g {
			break
		}
		if _, brk2 := skipKeyGlue(s, k, limit); !brk2 && k < len(s) && k-g < 16 {
			break
		}
		end, i = k, k
	}
	return end
}

// skipKeyGlue skips what may sit between two lines of a key body from i
// (and a line-number prefix after a line break); brk reports a line break.
func skipKeyGlue(s string, i, limit int) (int, bool) {
	brk := false
	for i < limit {
		c := s[i]
		switch {
		case c == '\n':
			brk = true
			i = skipLineNumber(s, i+1, limit)
		case c == '\\' && i+1 < limit && isOneOf(s[i+1], "nr"):
			brk = brk || s[i+1] == 'n'
			if i += 2; s[i-1] == 'n' {
				i = skipLineNumber(s, i, limit)
			}
		case isOneOf(c, " \t\r\"'`+,;)\\"):
			i++
		default:
			return i, brk
		}
	}
	return i, brk
}

// skipLineNumber skips "   12→", "   12\t", "12:", "12|" or (cat -n in a
// JSON string) "12\\t" at i.
func skipLineNumber(s string, i, limit int) int {
	d := skipOver(s, i, min(limit, i+8), " \t")
	j := runTo(s, d, min(limit, d+8), cDigit)
	switch {
	case j == d:
		return i
	case hasPrefixAt(s, j, "\u2192"):
		return j + len("\u2192")
	case j < limit && isOneOf(s[j], "\t:|"):
		return j + 1
	case hasPrefixAt(s, j, `\t`) && j+2 <= limit:
		return j + 2
	}
	return i
}

// privateKeyTail masks the second part of a key read in two: base64 lines
// (as keyBody reads them) ending with an END line, with no BEGIN in reach.
// s[i:] starts with "-----END ".
func privateKeyTail(s string, i int) (Match, bool) {
	e, ok := privateLabel(s, i+len(endMarker))
	if !ok {
		return Match{}, false // a certificate's END: not read back
	}
	lim := max(0, i-maxKeyBlock)
	b := keyBodyBack(s, skipLineNumberBack(s, i, lim), lim)
	return Match{KindPrivateKey, b, e}, b < i && countBase64(s[b:i]) >= minKeyBase64
}

// keyBodyBack is keyBody read backwards: the start of the base64 lines
// that end at p, no further back than limit.
func keyBodyBack(s string, p, limit int) int {
	start := p
	for first := true; p > limit; first = false {
		g, brk := skipKeyGlueBack(s, p, limit)
		if !brk && !first {
			break
		}
		k := runBack(s, g, limit, setBase64)
		if k < g && hasSuffixAt(s, k, "\\") && isOneOf(s[k], "ntr") {
			k++ // the letter of a "\n" or "\t" escape
		}
		if k == g || proseBefore(s, k, g, limit) {
			break
		}
		start, p = k, skipLineNumberBack(s, k, limit)
	}
	return start
}

// proseBefore reports a run s[k:g] that is a word of the prose before the
// key: short, and no line break before it.
func proseBefore(s string, k, g, limit int) bool {
	pre, brk := skipKeyGlueBack(s, skipLineNumberBack(s, k, limit), limit)
	return !brk && pre > limit && g-k < 16
}

// skipKeyGlueBack is skipKeyGlue read backwards from p.
func skipKeyGlueBack(s string, p, limit int) (int, bool) {
	brk := false
	for p > limit {
		c := s[p-1]
		switch {
		case c == '\n':
			brk = true
			p--
		case p-2 >= limit && s[p-2] == '\\' && isOneOf(c, "nr"):
			brk = brk || c == 'n'
			p -= 2
		case isOneOf(c, " \t\r\"'`+,;(\\"):
			p--
		default:
			return p, brk
		}
	}
	return p, brk
}

// skipLineNumberBack steps back over a line-number prefix that ends at p.
func skipLineNumberBack(s string, p, limit int) int {
	j := p
	switch {
	case j-len("\u2192") >= limit && hasSuffixAt(s, j, "\u2192"):
		j -= len("\u2192")
	case j-2 >= limit && hasSuffixAt(s, j, `\t`):
		j -= 2
	case j-1 >= limit && isOneOf(s[j-1], "\t:|"):
		j--
	default:
		return p
	}
	if d := runBack(s, j, max(limit, j-8), cDigit); d < j {
		return skipBack(s, d, limit, " ")
	}
	return p
}

// base64Secret decodes the base64 data holding the header spelling at p
// from its start and masks it when the decoded text holds a secret.
func base64Secret(s string, p int) (Match, bool) {
	if hasPrefixAt(s, p, "LS0t") && !b64PrivateLabel(s, p) {
		return Match{}, false // a certificate or public key: not decoded
	}
	st := b64RunStart(s, p)
	if !boundary(s, st) {
		return Match{}, false
	}
	e := keyBody(s, st, min(len(s), st+4*maxKeyBlock/3))
	enc := b64Bytes(s[st:e])
	dec, err := base64.StdEncoding.DecodeString(enc)
	if err != nil && len(dec) == 0 {
		if dec, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(enc, "=")); err != nil {
			return Match{}, false
		}
	}
	if ms := Find(string(dec)); len(ms) > 0 {
		return Match{ms[0].Kind, st, e}, true
	}
	return Match{}, false
}

// b64Bytes returns the whole base64 groups of s, without glue and "\n"
// escapes.
func b64Bytes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
		} else if classes[s[i]]&setBase64 != 0 {
			b.WriteByte(s[i])
		}
	}
	return b.String()[:b.Len()/4*4]
}

// b64RunStart returns where the base64 data holding the header spelling
// at p starts: back over its lines to a 4-byte group boundary that keeps
// p on one.
func b64RunStart(s string, p int) int {
	lim := max(0, p-maxKeyBlock)
	st := p
	for st > lim && classes[s[st-1]]&setBase64 != 0 && s[st-1] != '=' {
		st-- // the line holding p, however short its start ('=' only pads its end)
	}
	if _, brk := skipKeyGlueBack(s, st, lim); brk {
		st = min(st, keyBodyBack(s, st, lim)) // and the lines before it
	}
	for n := countBase64(s[st:p]) % 4; n > 0 && st < p; st++ {
		if classes[s[st]]&setBase64 != 0 {
			n--
		}
	}
	return st
}

// b64PrivateLabel decodes the 20 base64 groups at p (a PEM header's
// dashes, aligned on a group) and reports whether they name a private
// key: Kubernetes secrets carry base64 certificates far more often than
// keys, and decoding one whole cost an allocation and a Find (~10 us/KB).
func b64PrivateLabel(s string, p int) bool {
	var enc [80]byte
	n := 0
	for i := p; i < len(s) && n < len(enc); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++ // a "\n" escape between lines
		case classes[c]&setBase64 != 0:
			enc[n] = c
			n++
		case c == '\n' || c == '\r' || c == ' ':
		default:
			i = len(s)
		}
	}
	var dec [60]byte
	k, _ := base64.StdEncoding.Decode(dec[:], enc[:n/4*4])
	return strings.Contains(string(dec[:k]), "PRIVATE KEY")
}

// puttyKey masks a PuTTY .ppk key file from its header at i (or, in a
// read that starts past it, its "Private-Lines:", which needs the lines
// after it) through the Private-MAC line that ends the private lines or,
// cut short, the private lines.
func puttyKey(s string, i int) (Match, bool) {
	if !boundary(s, i) {
		return Match{}, false
	}
	limit := min(len(s), i+maxKeyBlock)
	k := strings.Index(s[i:limit], "Private-Lines:")
	if k < 0 {
		return Match{}, false // no private part (yet)
	}
	p := skipOver(s, i+k+len("Private-Lines:"), limit, " 0123456789")
	e := max(p, keyBody(s, p, limit))
	if m := strings.Index(s[e:min(limit, e+24)], "Private-MAC:"); m >= 0 {
		e = runTo(s, skipOver(s, e+m+len("Private-MAC:"), limit, " "), len(s), cAlnum)
	}
	return Match{KindPrivateKey, i, e}, s[i+1] == 'u' || countBase64(s[p:e]) >= minKeyBase64
}

func countBase64(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if classes[s[i]]&setBase64 != 0 {
			n++
		}
	}
	return n
}
