// Package redact finds and masks secrets in transcript text before carryover
// stores it (every ledger row) and again before any egress (handoff.md,
// clipboard, another vendor's context).
//
// Vendor token formats are data: gitleaks' rule file (MIT,
// gitleaks/gitleaks@b58d3f1) and ours in testdata/extra.toml, reduced by
// TestRulesGenerated to rules_gen.go (matched by the engine in this file).
// detect.go holds the hand-written detectors for what a literal plus a byte
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

// allKinds are carryover's kinds: the hand-written detectors' and the ids
// of its own data rules (testdata/extra.toml), which win over gitleaks'.
var allKinds = []Kind{
	KindAPIKey, KindAWSAccessKeyID, KindAWSSecret, KindAzureSAS, KindAzureStorageKey, KindBearerToken,
	KindDatabaseURL, KindDiscordToken, KindMailgunKey, KindPassword, KindPrivateKey, KindSecret,
	KindSlackWebhook, KindTelegramToken, KindToken, KindTwilioKey, KindURLCredentials,
	"age-secret-key", "anthropic-key", "atlassian-token", "azure-ad-secret", "databricks-token",
	"digitalocean-token", "doppler-token", "github-token", "gitlab-token", "google-api-key",
	"google-oauth-token", "grafana-token", "heroku-key", "huggingface-token", "jwt", "linear-key",
	"newrelic-key", "npm-token", "openai-key", "postman-key", "pypi-token", "sendgrid-key",
	"shopify-token", "slack-token", "stripe-key", "vault-token",
}

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

	setWord      = cAlnum | cUnder
	setURLSafe   = cAlnum | cUnder | cDash
	setBase64    = cAlnum | cB64
	setKeyName   = cAlnum | cUnder | cDash | cKey
	setWebhook   = cAlnum | cUnder | cDash | cB64
	setBearerTok = cAlnum | cUnder | cDash | cB64 | cKey // plus '~' handled by caller
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
		for x := range 256 {
			passPrev[c][x], passNext[c][x] = b2u(inSet(&passPN[c].prev, byte(x))), b2u(inSet(&passPN[c].next, byte(x)))
		}
	}
	handDetectors = [256]detector{
		'-': dashToken, '_': prefixedToken, '=': assignment, ':': assignment, '@': urlCredentials,
		'A': twilio, 'S': twilio, 'B': bearer, '.': discord,
		'w': proseKey, 'k': proseKey, '>': xmlElement, 0x9a: fullColon, // a full-width colon's last byte
		0xb1: foreignProse, 0xa9: foreignProse, 0x8c: foreignProse, 0x89: foreignProse, 0x81: foreignProse, 0xa4: foreignProse,
	}
	vendorDetectors = [256]detector{'-': dashToken, 'A': twilio, 'S': twilio, '.': discord, ':': colonVendor}
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
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
	}
	return genMatch(s, i, n.tok)
}

// needleMatches appends the matches of the grouped needles. done[kind] is
// where the last match of that kind ends: a needle inside it is not tried.
func needleMatches(s string, ms []Match) []Match {
	for _, g := range needleGroups {
		var done [3]int
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
func (g *needleGroup) matchAt(s string, j int, done *[3]int, ms []Match) []Match {
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
	return v == "" || allSame(v) || containsFold(v, "xxxx") || containsFold(v, "example")
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
