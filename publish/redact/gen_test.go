// TestRulesGenerated turns the vendored gitleaks rule data
// (testdata/gitleaks.toml, MIT, a trimmed copy of gitleaks/gitleaks
// config/gitleaks.toml, and our testdata/extra.toml) into rules_gen.go, the
// table the engine matches with, and fails when the committed file differs;
// -update rewrites it.
//
// No regexp runs at redaction time. Each rule's regex is parsed here
// (regexp/syntax) and reduced to what a prefix+charset matcher needs:
//
//   - a token rule (ghp_..., pul-..., hashicorp's <14>.atlasv1.<60>) becomes
//     one entry per spelling of its fixed literal (alternations and one-byte
//     classes such as gh[su]_ are expanded), with the byte set and length
//     range of what comes before the literal (pre) and after it (post);
//   - a keyword rule ((?i)[\w.-]{0,50}?(?:adafruit)...=...(<value>)) becomes
//     its keywords plus the byte set and length range of the secret group.
//
// Alternatives that reduce to neither are listed in the generated file's
// skipped comment, so a data update shows what the engine does not cover.
//
// It then derives the engine's tables (trigger bytes, neighbour filters,
// anchors, needles, keyword triples) from the compiled rules and
// handTriggers and appends them as static data (renderTables): after a
// rule change, -update rewrites both.
package redact

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"go/format"
	"os"
	"reflect"
	"regexp/syntax"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

type rule struct {
	ID          string   `toml:"id"`
	Regex       string   `toml:"regex"`
	Keywords    []string `toml:"keywords"`
	SecretGroup int      `toml:"secretGroup"`
	Path        string   `toml:"path"`
}

// set is a byte set (ASCII only: the engine matches bytes).
type set [4]uint64

func (s *set) add(c rune) {
	if c >= 0 && c < 128 {
		s[c>>6] |= 1 << (c & 63)
	}
}
func (s set) has(c byte) bool { return s[c>>6]&(1<<(c&63)) != 0 }
func (s *set) union(o set) {
	for i := range s {
		s[i] |= o[i]
	}
}

func classSet(r []rune) set {
	var s set
	for i := 0; i+1 < len(r); i += 2 {
		for c := r[i]; c <= r[i+1] && c < 128; c++ {
			s.add(c)
		}
	}
	return s
}

// span is a run of bytes from one set with a length range (max -1:
// unbounded).
type span struct {
	set      set
	min, max int
}

func (a span) then(b span) span {
	a.set.union(b.set)
	a.min += b.min
	if a.max < 0 || b.max < 0 {
		a.max = -1
	} else {
		a.max += b.max
	}
	return a
}

// spanOf sums up a sub-expression as one span; ok is false for what has no
// byte-set form (anchors inside, nested unbounded groups are fine).
func spanOf(re *syntax.Regexp) (span, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpWordBoundary, syntax.OpNoWordBoundary,
		syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText:
		return span{}, true
	case syntax.OpLiteral:
		return literalSpan(re), true
	case syntax.OpCharClass:
		return span{classSet(re.Rune), 1, 1}, true
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		return anySpan(), true
	case syntax.OpCapture:
		return spanOf(re.Sub[0])
	case syntax.OpConcat:
		return concatSpan(re.Sub)
	case syntax.OpAlternate:
		return alternateSpan(re.Sub)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		return repeatSpan(re)
	}
	return span{}, false
}

func literalSpan(re *syntax.Regexp) span {
	var s span
	for _, c := range re.Rune {
		s.set.add(c)
		if re.Flags&syntax.FoldCase != 0 {
			s.set.add(foldRune(c))
		}
	}
	s.min, s.max = len(re.Rune), len(re.Rune)
	return s
}

// anySpan is '.': one printable byte but a quote.
func anySpan() span {
	var s span
	for c := rune(0x21); c < 0x7f; c++ {
		if c != '"' && c != '\'' && c != '`' {
			s.set.add(c)
		}
	}
	s.min, s.max = 1, 1
	return s
}

func concatSpan(subs []*syntax.Regexp) (span, bool) {
	var s span
	for _, sub := range subs {
		t, ok := spanOf(sub)
		if !ok {
			return s, false
		}
		s = s.then(t)
	}
	return s, true
}

func alternateSpan(subs []*syntax.Regexp) (span, bool) {
	var s span
	for i, sub := range subs {
		t, ok := spanOf(sub)
		if !ok {
			return s, false
		}
		if i == 0 {
			s = t
			continue
		}
		s.set.union(t.set)
		s.min = min(s.min, t.min)
		if s.max >= 0 && (t.max < 0 || t.max > s.max) {
			s.max = t.max
		}
	}
	return s, true
}

func repeatSpan(re *syntax.Regexp) (span, bool) {
	t, ok := spanOf(re.Sub[0])
	if !ok {
		return t, false
	}
	lo, hi := repeatBounds(re)
	s := span{set: t.set, min: t.min * lo, max: -1}
	if hi >= 0 && t.max >= 0 {
		s.max = t.max * hi
	}
	return s, true
}

func foldRune(c rune) rune {
	switch {
	case c >= 'a' && c <= 'z':
		return c - 32
	case c >= 'A' && c <= 'Z':
		return c + 32
	}
	return c
}

// piece is one element of an expanded alternative: a literal or a span.
type piece struct {
	lit  string
	fold bool
	sp   span
}

const maxExpand = 64

// expand returns the alternatives of re as sequences of pieces: literals
// stay literals (alternations and classes of up to 4 bytes, matched once,
// are expanded into several sequences) and everything else becomes a span.
func expand(re *syntax.Regexp) ([][]piece, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpWordBoundary, syntax.OpNoWordBoundary,
		syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText:
		return [][]piece{nil}, true
	case syntax.OpLiteral:
		return [][]piece{{{lit: string(re.Rune), fold: re.Flags&syntax.FoldCase != 0}}}, true
	case syntax.OpCapture:
		return expand(re.Sub[0])
	case syntax.OpCharClass:
		if out, ok := expandClass(re.Rune); ok {
			return out, true
		}
	case syntax.OpConcat:
		return expandConcat(re.Sub)
	case syntax.OpRepeat:
		if c := unrolled(re); c != nil {
			return expand(c)
		}
	case syntax.OpAlternate:
		out, ok := expandAlternate(re.Sub)
		if !ok || len(out) <= maxExpand {
			return out, ok
		}
	}
	sp, ok := spanOf(re)
	if !ok {
		return nil, false
	}
	return [][]piece{{{sp: sp}}}, true
}

// unrolled is a short fixed repeat as a concatenation, so that
// (?:-[0-9]{10,13}){3}'s '-' after xoxp joins the literal and anchors it;
// nil for others.
func unrolled(re *syntax.Regexp) *syntax.Regexp {
	if re.Min != re.Max || re.Min < 1 || re.Min > 4 || re.Sub[0].Op == syntax.OpCharClass {
		return nil
	}
	c := &syntax.Regexp{Op: syntax.OpConcat}
	for range re.Min {
		c.Sub = append(c.Sub, re.Sub[0])
	}
	return c
}

// expandClass expands a class of up to 4 bytes into one literal each.
func expandClass(ranges []rune) ([][]piece, bool) {
	var cs []rune
	for i := 0; i+1 < len(ranges) && len(cs) <= 4; i += 2 {
		for c := ranges[i]; c <= ranges[i+1] && len(cs) <= 4; c++ {
			cs = append(cs, c)
		}
	}
	if len(cs) > 4 {
		return nil, false
	}
	var out [][]piece
	for _, c := range cs {
		out = append(out, []piece{{lit: string(c)}})
	}
	return out, true
}

// expandConcat is the product of the parts' alternatives; a part that
// would make more than maxExpand becomes a span.
func expandConcat(subs []*syntax.Regexp) ([][]piece, bool) {
	out := [][]piece{nil}
	for _, sub := range subs {
		alts, ok := expand(sub)
		if !ok {
			return nil, false
		}
		if len(out)*len(alts) > maxExpand {
			sp, ok := spanOf(sub)
			if !ok {
				return nil, false
			}
			alts = [][]piece{{{sp: sp}}}
		}
		var next [][]piece
		for _, o := range out {
			for _, a := range alts {
				next = append(next, append(slices.Clone(o), a...))
			}
		}
		out = next
	}
	return out, true
}

func expandAlternate(subs []*syntax.Regexp) ([][]piece, bool) {
	var out [][]piece
	for _, sub := range subs {
		alts, ok := expand(sub)
		if !ok {
			return nil, false
		}
		out = append(out, alts...)
	}
	return out, true
}

// terminator reports whether re is gitleaks' end-of-secret group
// (?:[\x60'"\s;]|\\[nr]|$) or its start-of-secret twin (?:^|[...]): it
// checks the surroundings, and is not part of the token.
func terminator(re *syntax.Regexp) bool {
	if re.Op != syntax.OpAlternate {
		return false
	}
	for _, s := range re.Sub {
		switch s.Op {
		case syntax.OpEndText, syntax.OpEndLine, syntax.OpBeginText, syntax.OpBeginLine:
			return true
		}
	}
	return false
}

func stripTerminators(re *syntax.Regexp) *syntax.Regexp {
	if re.Op != syntax.OpConcat {
		return re
	}
	c := *re
	c.Sub = slices.DeleteFunc(slices.Clone(re.Sub), terminator)
	return &c
}

// keywordContext reports whether alt starts like gitleaks' semi-generic
// keyword template, [\w.-]{0,50}? then the keyword.
func keywordContext(alt *syntax.Regexp) bool {
	for alt.Op == syntax.OpConcat || alt.Op == syntax.OpCapture {
		if len(alt.Sub) == 0 {
			return false
		}
		alt = alt.Sub[0]
	}
	return alt.Op == syntax.OpRepeat && alt.Min == 0 && alt.Max == 50
}

// capture returns the n-th capture group (1-based) under re; n 0: the
// first.
func capture(re *syntax.Regexp, n int) *syntax.Regexp {
	if re.Op == syntax.OpCapture && (n == 0 || re.Cap == n) {
		return re
	}
	for _, s := range re.Sub {
		if c := capture(s, n); c != nil {
			return c
		}
	}
	return nil
}

// foldKeyword folds a keyword like the engine folds a key: lower case,
// without _ - . separators.
func foldKeyword(k string) string {
	return strings.NewReplacer("_", "", "-", "", ".", "").Replace(strings.ToLower(k))
}

// handKeyword reports whether k is one of the generic key words the
// hand-written assignment detector classifies (classifyKey).
func handKeyword(k string) bool {
	for _, w := range []string{"password", "passwd", "secret", "token", "key", "api", "auth", "access", "credential", "creds"} {
		if k == w {
			return true
		}
	}
	return false
}

// keyLiterals returns the spellings of the keyword that follows the
// leading [\w.-]{0,50}? of a keyword rule, lower-cased, or nil. The
// regex, not the rule's keywords field, says which key names it: lob's
// keywords are "test_" and "live_", its key is "lob".
func keyLiterals(alt *syntax.Regexp) []string {
	words := []string{""}
	for _, r := range flatten(alt, nil) {
		if r.Op == syntax.OpRepeat && r.Min == 0 && r.Max == 50 && words[0] == "" {
			continue
		}
		alts, ok := expand(r)
		if !ok || !allLiteral(alts) || len(words)*len(alts) > maxExpand {
			break
		}
		var next []string
		for _, w := range words {
			for _, a := range alts {
				x := w
				for _, p := range a {
					x += p.lit
				}
				next = append(next, x)
			}
		}
		words = next
	}
	if words[0] == "" {
		return nil
	}
	for i, w := range words {
		words[i] = foldKeyword(w)
	}
	slices.Sort(words)
	return slices.Compact(words)
}

// flatten appends the parts of nested concatenations in order.
func flatten(r *syntax.Regexp, seq []*syntax.Regexp) []*syntax.Regexp {
	if r.Op != syntax.OpConcat {
		return append(seq, r)
	}
	for _, s := range r.Sub {
		seq = flatten(s, seq)
	}
	return seq
}

// allLiteral reports alternatives made only of literals.
func allLiteral(alts [][]piece) bool {
	for _, a := range alts {
		for _, p := range a {
			if p.lit == "" {
				return false
			}
		}
	}
	return true
}

type tokenEntry struct {
	id        string
	lit       string
	fold      bool
	pre, post span
}

type keywordEntry struct {
	id       string
	keywords []string
	val      span
}

func TestRulesGenerated(t *testing.T) {
	var rules []rule
	nGitleaks := 0
	for _, in := range ruleFiles {
		rs, err := readRules(in)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(in, "gitleaks.toml") {
			nGitleaks = len(rs)
		}
		rules = append(rules, rs...)
	}
	var tb tables
	for _, r := range rules {
		if err := tb.add(r); err != nil {
			t.Fatal(err)
		}
	}
	tokens := dedupe(tb.tokens)
	src, err := format.Source(append(render(tokens, tb.keywords, tb.skipped, nGitleaks, len(rules)-nGitleaks), renderTables()...))
	if err != nil {
		t.Fatalf("format: %v", err)
	}
	const out = "rules_gen.go"
	if *update {
		if err := os.WriteFile(out, src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if old, err := os.ReadFile(out); err != nil || !bytes.Equal(old, src) {
		t.Errorf("%s is not what the rule data generates (%d token entries, %d keyword rules); run go test ./publish/redact -run TestRulesGenerated -update", out, len(tokens), len(tb.keywords))
	}
}

// wordSets reports spans whose sets together allow two kinds of characters
// (digits, lower-case, upper-case letters), one of them lower-case letters:
// a token's genToken.words.
func wordSets(pre, post set) bool {
	pre.union(post)
	kinds := 0
	for _, probe := range []byte{'7', 'q', 'Q'} {
		if pre.has(probe) {
			kinds++
		}
	}
	return kinds >= 2 && pre.has('q')
}

// readRules reads the [[rules]] of a gitleaks-schema TOML file.
func readRules(path string) ([]rule, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c struct {
		Rules []rule `toml:"rules"`
	}
	if err := toml.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c.Rules, nil
}

// tables are the generated entries and the rules left out.
type tables struct {
	tokens   []tokenEntry
	keywords []keywordEntry
	skipped  []string
}

// add reduces rule r to token and keyword entries, one per alternative
// that has a form the engine matches.
func (t *tables) add(r rule) error {
	if r.Regex == "" {
		t.skipped = append(t.skipped, r.ID+" (no regex: a file-name rule)")
		return nil
	}
	re, err := syntax.Parse(r.Regex, syntax.Perl)
	if err != nil {
		return fmt.Errorf("%s: %w", r.ID, err)
	}
	alts := []*syntax.Regexp{re}
	if re.Op == syntax.OpAlternate {
		alts = re.Sub
	}
	covered := false
	for _, alt := range alts {
		if keywordContext(alt) {
			covered = t.addKeyword(r, re, alt) || covered
			continue
		}
		seqs, ok := expand(stripTerminators(alt))
		if !ok {
			continue
		}
		for _, seq := range seqs {
			if e, ok := tokenOf(r.ID, seq); ok {
				t.tokens = append(t.tokens, e)
				covered = true
			}
		}
	}
	if !covered {
		t.skipped = append(t.skipped, r.ID)
	}
	return nil
}

// addKeyword adds the keyword rule of alternative alt; it reports whether
// the alternative is covered.
func (t *tables) addKeyword(r rule, re, alt *syntax.Regexp) bool {
	g := capture(alt, 0)
	if r.SecretGroup > 0 {
		g = capture(re, r.SecretGroup)
	}
	if g == nil {
		return false
	}
	sp, ok := spanOf(g)
	if !ok || sp.min < 8 {
		return false
	}
	kws := keyLiterals(alt)
	if kws == nil {
		for _, k := range r.Keywords {
			kws = append(kws, foldKeyword(k))
		}
	}
	if slices.ContainsFunc(kws, handKeyword) {
		// generic-api-key, hashicorp-tf-password: the keyword is one the
		// hand-written assignment detector owns, with its placeholder and
		// prose filters.
		t.skipped = append(t.skipped, r.ID+" (generic keyword: the assignment detector's)")
		return true
	}
	if slices.ContainsFunc(kws, func(k string) bool { return len(k) < 3 }) {
		// The engine indexes keywords by their first three letters.
		t.skipped = append(t.skipped, r.ID+" (a keyword shorter than 3 letters)")
		return true
	}
	t.keywords = append(t.keywords, keywordEntry{r.ID, kws, sp})
	return true
}

// tokenOf reduces one expanded sequence to a literal with a span before
// and after it: the longest run of adjacent literals is the anchor.
func tokenOf(id string, seq []piece) (tokenEntry, bool) {
	// The longest run of literals wins, but one with a byte the engine can
	// trigger on (not a lower-case letter) beats one without: airtable's
	// pat<14>.<64 hex> anchors on its '.', not on "pat", which strings.Index
	// would look for at every "path" and "pattern".
	bestI, bestJ := anchorRun(seq)
	if bestI < 0 {
		return tokenEntry{}, false
	}
	e := tokenEntry{id: id}
	for _, p := range seq[bestI:bestJ] {
		e.lit += p.lit
		e.fold = e.fold || p.fold
	}
	for _, p := range seq[:bestI] {
		e.pre = e.pre.then(pieceSpan(p))
	}
	for _, p := range seq[bestJ:] {
		e.post = e.post.then(pieceSpan(p))
	}
	// A literal is an anchor when it is specific: 3 bytes or more, or 2
	// with a long fixed body (Twilio's SK + 32 hex). A bare literal with no
	// random part around it (a URL host) is not a secret by itself.
	if len(e.lit) >= 16 && e.pre.min == 0 && e.post.max == 0 {
		// A long fixed header is a secret's start by itself (bedrock's
		// base64 of "bedrock.amazonaws.com"): mask the base64 after it.
		for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=" {
			e.post.set.add(c)
		}
		e.post.max = -1
	}
	return e, specific(e) && !ownedElsewhere(e)
}

// anchorRun returns the run seq[i:j] of adjacent literals that anchors
// the token (i < 0: none).
func anchorRun(seq []piece) (bestI, bestJ int) {
	bestI, bestJ, bestN := -1, -1, 0
	for i := 0; i < len(seq); i++ {
		if seq[i].lit == "" {
			continue
		}
		n, j, lit := 0, i, ""
		for j < len(seq) && seq[j].lit != "" {
			n += len(seq[j].lit)
			lit += seq[j].lit
			j++
		}
		if strings.IndexFunc(lit, func(c rune) bool { return !(c >= 'a' && c <= 'z') }) >= 0 {
			n += 1000
		}
		if n > bestN {
			bestI, bestJ, bestN = i, j, n
		}
		i = j
	}
	return bestI, bestJ
}

// specific reports enough fixed and random bytes to be specific: a long
// literal, or a shorter one with more random bytes (2-byte literals, s.
// and SK, get the engine's strict randomness check: a digit and a letter).
func specific(e tokenEntry) bool {
	r := e.pre.min + e.post.min
	return len(e.lit) >= 16 || len(e.lit) >= 5 && r >= 6 || len(e.lit) >= 3 && r >= 8 || len(e.lit) >= 2 && r >= 20 || r >= 30
}

// ownedElsewhere reports a token a hand-written detector owns. A literal
// made only of letters has no byte to anchor a trigger on and is searched
// for; when its spans are a URL's (sidekiq's contribsys.com) the URL
// credential detector owns it. A token has no spaces or quotes: a literal
// or a span with them is a context rule (curl ... --header, "SECRET_KEY"
// => in PHP, <add key=), left to the context detectors.
func ownedElsewhere(e tokenEntry) bool {
	if onlyLetters(e.lit) && (urlIn(e.pre.set) || urlIn(e.post.set)) {
		return true
	}
	return strings.ContainsAny(e.lit, " \t\r\n\"'<>") || spaceIn(e.pre.set) || spaceIn(e.post.set)
}

func urlIn(s set) bool { return s.has(':') && s.has('@') }

func spaceIn(s set) bool { return s.has(' ') || s.has('\t') || s.has('"') }

func pieceSpan(p piece) span {
	if p.lit == "" {
		return p.sp
	}
	var s span
	for _, c := range p.lit {
		s.set.add(c)
		if p.fold {
			s.set.add(foldRune(c))
		}
	}
	s.min, s.max = len(p.lit), len(p.lit)
	return s
}

func dedupe(ts []tokenEntry) []tokenEntry {
	seen := map[string]bool{}
	var out []tokenEntry
	for _, t := range ts {
		k := fmt.Sprintf("%s|%s|%v|%v|%v", t.id, t.lit, t.fold, t.pre, t.post)
		if !seen[k] {
			seen[k] = true
			out = append(out, t)
		}
	}
	return out
}

func render(tokens []tokenEntry, keywords []keywordEntry, skipped []string, nrules, nextra int) []byte {
	sets := map[set]int{}
	var setList []set
	idx := func(s set) int {
		if i, ok := sets[s]; ok {
			return i
		}
		sets[s] = len(setList)
		setList = append(setList, s)
		return len(setList) - 1
	}
	idx(set{})
	var b bytes.Buffer
	fmt.Fprintf(&b, `// Code generated by TestRulesGenerated (gen_test.go) from testdata/gitleaks.toml and testdata/extra.toml; DO NOT EDIT.

// The data comes from gitleaks' config/gitleaks.toml (MIT, Copyright (c)
// 2019 Zachary Rice; gitleaks/gitleaks@b58d3f1): %d rules, and %d of our
// own in testdata/extra.toml; %d token spellings and %d keyword rules are
// tabled here.
//
// Not tabled (their shape is a file name or has no fixed part the engine
// can anchor on; the hand-written detectors cover some of them):
`, nrules, nextra, len(tokens), len(keywords))
	sort.Strings(skipped)
	for _, s := range skipped {
		fmt.Fprintf(&b, "//   - %s\n", s)
	}
	b.WriteString("\npackage redact\n\n")
	b.WriteString("var genTokens = [...]genToken{\n")
	dTokens, dKeywords = nil, nil
	for _, t := range tokens {
		g := genToken{t.id, t.lit, t.fold, wordSets(t.pre.set, t.post.set), genSpan{uint8(idx(t.pre.set)), t.pre.min, t.pre.max}, genSpan{uint8(idx(t.post.set)), t.post.min, t.post.max}}
		dTokens = append(dTokens, g)
		fmt.Fprintf(&b, "\t{%q, %q, %v, %v, genSpan{%d, %d, %d}, genSpan{%d, %d, %d}},\n",
			g.id, g.lit, g.fold, g.words, g.pre.set, g.pre.min, g.pre.max, g.post.set, g.post.min, g.post.max)
	}
	b.WriteString("}\n\nvar genKeywords = [...]genKeyword{\n")
	for _, k := range keywords {
		dKeywords = append(dKeywords, genKeyword{k.id, k.keywords, genSpan{uint8(idx(k.val.set)), k.val.min, k.val.max}})
		fmt.Fprintf(&b, "\t{%q, %#v, genSpan{%d, %d, %d}},\n", k.id, k.keywords, idx(k.val.set), k.val.min, k.val.max)
	}
	b.WriteString("}\n\n// genSets are the byte sets the spans index, as four 64-bit words.\nvar genSets = [...][4]uint64{\n")
	dSets = nil
	for _, s := range setList {
		dSets = append(dSets, s)
		fmt.Fprintf(&b, "\t{%#x, %#x, %#x, %#x}, // %s\n", s[0], s[1], s[2], s[3], describe(s))
	}
	b.WriteString("}\n")
	return b.Bytes()
}

func describe(s set) string {
	var b strings.Builder
	for c := 0x20; c < 0x7f; c++ {
		if !s.has(byte(c)) {
			continue
		}
		e := c
		for e+1 < 0x7f && s.has(byte(e+1)) {
			e++
		}
		if e-c >= 2 {
			fmt.Fprintf(&b, "%c-%c", c, e)
			c = e
		} else {
			b.WriteByte(byte(c))
		}
	}
	if s.has('\t') || s.has('\n') {
		b.WriteString(`\s`)
	}
	return "[" + b.String() + "]"
}

// The tables the engine reads, derived from the rule tables above and
// handTriggers and emitted into rules_gen.go as static data (no init code;
// deriving them at the first Find cost ~0.4 ms of every Stop). Deriving
// reads the rules as render tabled them (dTokens, dKeywords, dSets), not
// the compiled ones.

var (
	dTokens   []genToken
	dKeywords []genKeyword
	dSets     []set
)

// derived lists the generated tables with their doc comments.
var derived = []struct {
	name, doc string
	v         any
}{
	{"classes", "classes holds each byte's character classes.", &classes},
	{"hot8", "hot8 marks the trigger bytes (handTriggers, the generated anchors, the\ntriggered needles) so that eight lookups can be OR-ed without branches.", &hot8},
	{"passPN", "passPN[c] is the union of trigger c's filters (initTables expands it\ninto passPrev and passNext).", &passPN},
	{"needPrev", "needPrev[c], needNext[c]: trigger c is dropped at the start or end of\nthe text; handNeedPrev/Next the same for the hand filters alone.", &needPrev},
	{"needNext", "", &needNext},
	{"handNeedPrev", "", &handNeedPrev},
	{"handNeedNext", "", &handNeedNext},
	{"handHot", "handHot are the hand-written trigger bytes.", &handHot},
	{"handPN", "handPN and genPN are the two families' filters kept apart: skipCold\ntests their union one side at a time, so a '_' after a letter (a\ngenerated anchor's prev) passes with any next byte (the hand-written\nnext). detect calls only the family that admits the pair: snake_case\nmade 4x more '_' calls before this.", &handPN},
	{"genPN", "", &genPN},
	{"needleGroups", "needleGroups are the needles with no trigger byte, by 4-byte key.", &needleGroups},
	{"trigNeedles", "trigNeedles[c] are the needles triggered on c; trigNeedleAny[c]: one\nstarts with c, so needs no byte before.", &trigNeedles},
	{"trigNeedlePN", "", &trigNeedlePN},
	{"trigNeedleAny", "", &trigNeedleAny},
	{"needleOnly", "needleOnly[c]: c triggers only needles.", &needleOnly},
	{"genAt", "genAt[c] lists the tokens anchored on c, sorted by prev;\ngenPrevStart[c][p] indexes the first with prev p (a binary search was\nmost of genTokenAt's time); genPrev2[c][k] the bytes two before the\nanchor that the group sharing genAt[c][k].prev accepts ('_' after 't'\nhad 15 literals: 2,500 quick checks per 32 KB).", &genAt},
	{"genPrevStart", "", &genPrevStart},
	{"genPrev2", "", &genPrev2},
	{"genDotPrev", "genDotPrev marks the bytes before a '.' anchor (dotShape); genDotLits\nare the literals that start with it (.ey).", &genDotPrev},
	{"genDotLits", "", &genDotLits},
	{"genHasAnchorless", "genHasAnchorless[c]: a token anchored on c at its literal's start.", &genHasAnchorless},
	{"genKeyMin", "genKeyMin is the shortest value a keyword rule takes.", &genKeyMin},
	{"genKwAt", "genKwAt[triple] is 1 + the index in genKwGroups of the keywords that\nstart with that triple.", &genKwAt},
	{"genKwGroups", "", &genKwGroups},
	{"keyTri", "keyTri[f] marks the first three letters (bytes &31, any case) of the\nkeywords of family f: triHand for the hand-written classifier's, triGen\nfor the generated keyword rules'. A key none of whose triples is marked\nskips the classifiers: a letter-set filter let most keys through once\nshort vendor names (lob, okta, etsy) joined it (2x the clean corpus's\nassignment cost). Two 4 KB bitsets: a 32 KB byte table missed the cache\nat every key letter (a third of assignment's time).", &keyTri},
	{"partsByFirst", "partsByFirst indexes placeholderParts by their first byte; keywordsAt\nindexes keywords by theirs.", &partsByFirst},
	{"keywordsAt", "", &keywordsAt},
	{"wordsByFirst", "wordsByFirst indexes placeholderWords by their first byte.", &wordsByFirst},
	{"proseWordsAt", "proseWordsAt[c] are the foreignProseWords (gen_test.go) whose lit ends in c.", &proseWordsAt},
	{"valueStop", "valueStop ends an unquoted value.", &valueStop},
	{"allKinds", "allKinds are carryover's kinds: the hand-written detectors' and the ids\nof its own data rules (testdata/extra.toml), which win over gitleaks'.", &allKinds},
	{"foreignWords", "foreignWords are the secret words of keys spelled beyond ASCII (foreignKey).", &foreignWords},
	{"keyWords", "keyWords end names of a secret no keyword names (keyName).", &keyWords},
	{"qualifiers", "qualifiers follow a keyword in names whose value is not the secret itself\n(PASSWORD_FILE, TOKEN_URL, API_KEY_ID, SECRET_NAME, TOKEN_EXPIRES_AT).", &qualifiers},
	{"databaseSchemes", "databaseSchemes get their own kind in URL credentials.", &databaseSchemes},
	{"wStems", "wStems end where a password's word has its 'w': pw, passwd, passwort,\nkennwort, wachtwoord.", &wStems},
	{"promptWords", "promptWords are the words of a prompt for a credential, lower case\n(\"pin\" only as a word of its own: not ping, spinner), and the kind of\nthe answer.", &promptWords},
	{"passFlags", "passFlags lists, per one-letter flag, the commands in which it takes a\npassword or passphrase attached (mysql/mariadb/sshpass/7z -pX) or as its\nnext word (sshpass and \"<tool> login ... -p X\", ssh-keygen -N/-P, zip -P,\nredis-cli -a).", &passFlags},
	{"idPrefixes", "idPrefixes label object ids and digests, not secrets.", &idPrefixes},
}

// deriveTables recomputes every derived table from the compiled rules.
func deriveTables() {
	for _, d := range derived {
		reflect.ValueOf(d.v).Elem().SetZero()
	}
	nonAlnum, genKeyMin = byteSet{}, 1<<30
	initClasses()
	initDetect()
	allKinds = allKindsSrc
	foreignWords = foreignWordsSrc
	keyWords = keyWordsSrc
	qualifiers = qualifiersSrc
	databaseSchemes = databaseSchemesSrc
	wStems = wStemsSrc
	promptWords = promptWordsSrc
	passFlags = passFlagsSrc
	idPrefixes = idPrefixesSrc
	for _, h := range allHandTriggers() {
		handHot[h.c], hot8[h.c] = true, 1
	}
	initGen() // adds the generated anchors to hot8
	addTrigNeedle(needle{lit: "expect", kind: needleExpect})
	for _, w := range foreignProseWords {
		proseWordsAt[w.lit[len(w.lit)-1]] = append(proseWordsAt[w.lit[len(w.lit)-1]], w)
		if w.lit[len(w.lit)-1] < 0x80 {
			addNeedle(needle{lit: w.lit[w.first:], kind: needleProse}) // no byte beyond ASCII to trigger on
		}
	}
	for _, h := range []string{"-----BEGIN ", "PuTTY-User-Key-File-", "AGE-SECRET-KEY-1"} {
		for _, b := range b64Spellings(h) {
			addTrigNeedle(needle{lit: b, kind: needleB64})
		}
	}
	initPass()
	for c := range needleOnly {
		needleOnly[c] = len(trigNeedles[c]) > 0 && !handHot[c] && len(genAt[c]) == 0
	}
	for _, t := range dTokens {
		if t.pre.max == 0 && t.post.max == 0 {
			panic(t.id + ": a bare literal (no span) is never a token; genMatch assumes a span")
		}
	}
}

// renderTables is the Go source of the derived tables: sparse arrays keyed
// by index, pointers into genTokens by index.
func renderTables() []byte {
	for _, d := range derived { // restore the compiled tables for the other tests
		v := reflect.ValueOf(d.v).Elem()
		saved := reflect.New(v.Type()).Elem()
		saved.Set(v)
		defer v.Set(saved)
	}
	deriveTables()
	var b bytes.Buffer
	for _, d := range derived {
		if d.doc != "" {
			b.WriteString("\n// " + strings.ReplaceAll(d.doc, "\n", "\n// ") + "\n")
		}
		v := reflect.ValueOf(d.v).Elem()
		fmt.Fprintf(&b, "var %s = %s%s\n", d.name, typeName(v.Type()), goValue(v, 0))
	}
	return b.Bytes()
}

func typeName(t reflect.Type) string {
	if t.Kind() == reflect.Int {
		return ""
	}
	return strings.ReplaceAll(t.String(), "redact.", "")
}

func goValue(v reflect.Value, depth int) string {
	switch v.Kind() {
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint8, reflect.Uint16:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Uint64:
		return fmt.Sprintf("%#x", v.Uint())
	case reflect.String:
		return strconv.Quote(v.String())
	case reflect.Pointer:
		if v.Type().Elem() == reflect.TypeFor[genToken]() {
			for i := range dTokens {
				if reflect.ValueOf(&dTokens[i]).Pointer() == v.Pointer() {
					return fmt.Sprintf("&genTokens[%d]", i)
				}
			}
			panic("token not in genTokens")
		}
		return "&" + typeName(v.Type().Elem()) + goValue(v.Elem(), depth)
	case reflect.Struct:
		var fs []string
		for i := range v.NumField() {
			if !v.Field(i).IsZero() {
				f := v.Field(i)
				typ := "" // a field's composite value names its type
				if k := f.Kind(); k == reflect.Array || k == reflect.Slice || k == reflect.Struct {
					typ = typeName(f.Type())
				}
				fs = append(fs, v.Type().Field(i).Name+": "+typ+goValue(f, depth+1))
			}
		}
		return "{" + strings.Join(fs, ", ") + "}"
	}
	return goElems(v, depth)
}

// index is i as a key of an array of n: a byte table's printable
// bytes as characters.
func index(n, i int) string {
	if n == 256 && i > ' ' && i < 0x7f {
		return strconv.QuoteRune(rune(i))
	}
	return strconv.Itoa(i)
}

// goElems renders an array (non-zero elements, keyed) or a slice, one
// composite element per line at the top levels.
func goElems(v reflect.Value, depth int) string {
	var es []string
	for i := range v.Len() {
		switch {
		case v.Kind() == reflect.Slice:
			es = append(es, goValue(v.Index(i), depth+1))
		case v.Len() <= 4:
			es = append(es, goValue(v.Index(i), depth+1))
		case !v.Index(i).IsZero():
			es = append(es, index(v.Len(), i)+": "+goValue(v.Index(i), depth+1))
		}
	}
	if depth == 0 || depth == 1 && len(es) > 0 && strings.HasSuffix(es[0], "}") {
		return "{\n" + strings.Join(es, ",\n") + ",\n}"
	}
	return "{" + strings.Join(es, ", ") + "}"
}

func initClasses() {
	for _, r := range [...]struct {
		lo, hi byte
		c      class
	}{
		{'0', '9', cAlnum | cHexLow | cDigit}, {'a', 'z', cAlnum}, {'a', 'f', cHexLow}, {'A', 'Z', cAlnum | cUpper},
		{'_', '_', cUnder}, {'-', '-', cDash}, {'.', '.', cKey}, {'+', '+', cB64}, {'/', '/', cB64}, {'=', '=', cB64}, {'*', '*', cStar},
	} {
		for c := r.lo; c <= r.hi; c++ {
			classes[c] |= r.c
		}
	}
	for x := range 256 {
		if !isAlnum(byte(x)) {
			nonAlnum = setBytes(nonAlnum, byte(x))
		}
	}
}

// handTriggers are the hand-written detectors' trigger bytes and their
// neighbour filters: a trigger is worth a call only when the byte before
// it (prev) and after it (next) can belong to a token there ("": any;
// notPrev/notNext are rejected). At the edge of the text a filter that
// names a neighbour drops the trigger (but for nextOpt). Each rejection is
// one the detector itself would make first.
type handTrigger struct {
	c                byte
	prev, next       string
	notPrev, notNext string
	nextOpt          bool
}

var handTriggers = []handTrigger{
	{c: '-', prev: "-Yy \t" + lowerDigits},                    // after "-----BEGIN", PuTTY, key, --flag, -p, xai-
	{c: '_', prev: lowerDigits, next: letters + "0123456789"}, // gsk_ (prefixedToken)
	{c: '=', notPrev: "=!<>:+-*/%&|^~?", notNext: "=~"},       // ==, !=, <=, :=, +=, =~: no assignment
	{c: ':', notNext: ":"},                                    // :: (assignment, telegram, webhook)
	{c: '@'},
	{c: 'A', next: "C"},                                     // Twilio AC
	{c: 'S', next: "K"},                                     // Twilio SK
	{c: 'B', next: "e"},                                     // Bearer
	{c: '.', next: letters + "0123456789_-", nextOpt: true}, // every dot format has a url-safe byte next
	{c: 'w', prev: "sSpPnNtT"},                              // after pass, pw, kenn, wacht (wStems)
	{c: 'k', prev: "oO _-i", next: "e", nextOpt: true},      // to(k)en, (k)ey after to(ken), api key, api_key, apikey
	{c: '>', prev: "dDtTnNyYeEhHlLsS\"'"},
	{c: 0x9a, prev: "\xbc"}, // ：(U+FF1A, EF BC 9A) after 密码 (assignment)                   // after <password, <secret, <token, <apiKey, <passphrase, <auth, <credential(s), <entry key="...">
}

// allHandTriggers are handTriggers and foreignProse's: the last byte of a
// foreign password word beyond ASCII (contraseña's ñ, C3 B1; 密码's 码, E7
// A0 81), after the byte before it in the word and before the first byte
// of one of its verbs (は E3, 是 E6, 为 E4).
func allHandTriggers() []handTrigger {
	ts := slices.Clone(handTriggers)
	for _, w := range foreignProseWords {
		if c := w.lit[len(w.lit)-1]; c >= 0x80 {
			t := handTrigger{c: c, prev: w.lit[len(w.lit)-2 : len(w.lit)-1]}
			for _, v := range w.verbs {
				t.next += v[:1]
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// foreignProseWords are the words of a password stated in words in the
// languages whose word has no 'w' for proseKey to trigger on: lit up to
// the byte that triggers foreignProse (the last one beyond ASCII; for
// Portuguese the verb's é), and the rest of the word and the verb after it.
// A word all in ASCII (fr) is a needle.
var foreignProseWords = []statedWord{
	{"contraseñ", 1, []string{"a es ", "a era "}},
	{"senha é", 1, []string{" "}},
	{"пароль", 2, []string{" — ", " – ", " - ", " это "}},
	{"パスワード", 3, []string{"は"}},
	{"密码", 3, []string{"是", "为"}},
	{"口令", 3, []string{"是", "为"}},
	{"hasł", 1, []string{"o to ", "o jest ", "o: "}},
	{"mot de passe", 1, []string{" est : ", " est ", " : ", ": "}},
}

const lowerDigits = "abcdefghijklmnopqrstuvwxyz0123456789"

// initPass fills the filters and needPrev/needNext from the three
// families'.
func initPass() {
	for c := 0; c < 256; c++ {
		needPrev[c], needNext[c] = hot8[c] != 0 && !genHasAnchorless[c], hot8[c] != 0
	}
	for _, h := range allHandTriggers() {
		c := h.c
		handNeedPrev[c], handNeedNext[c] = h.prev != "", h.next != "" && !h.nextOpt
		needPrev[c], needNext[c] = handNeedPrev[c] && !genHasAnchorless[c], handNeedNext[c]
		handPN[c] = pnFilter{allowSet(h.prev, h.notPrev), allowSet(h.next, h.notNext)}
		passPN[c] = handPN[c]
	}
	for c := 0; c < 256; c++ {
		if len(genAt[c]) > 0 {
			genPN[c] = genFilter(c)
			passPN[c] = pnFilter{orSet(passPN[c].prev, genPN[c].prev), orSet(passPN[c].next, genPN[c].next)}
		}
		if len(trigNeedles[c]) > 0 {
			passPN[c] = pnFilter{orSet(passPN[c].prev, trigNeedlePN[c].prev), orSet(passPN[c].next, trigNeedlePN[c].next)}
			needPrev[c] = needPrev[c] && !trigNeedleAny[c]
		}
	}
}

// allowSet is the bytes of allow ("": all) but not of reject.
func allowSet(allow, reject string) byteSet {
	set := setBytes(byteSet{}, []byte(allow)...)
	if allow == "" {
		set = allBytes
	}
	for k := 0; k < len(reject); k++ {
		set[reject[k]>>6] &^= 1 << (reject[k] & 63)
	}
	return set
}

// nonAlnum is the bytes that are neither letters nor digits.
var nonAlnum byteSet

// addNeedle files n under the four bytes from its rarest one, or from its
// start when that is a common letter (dapi's 'p'): a key starting with a
// rare byte is a SIMD scan that seldom stops (LS0t: 1.4 us per 32 KB).
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

// filterByte returns the index of lit's first byte that is not a
// lower-case letter, else of its rarest letter.
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

func addTrigNeedle(n needle) {
	n.off = filterByte(n.lit)
	c := n.lit[n.off]
	trigNeedles[c] = append(trigNeedles[c], n)
	hot8[c] = 1
	f := &trigNeedlePN[c]
	if n.off == 0 {
		trigNeedleAny[c] = true
		f.prev = allBytes
	} else {
		f.prev = setBytes(f.prev, n.lit[n.off-1])
	}
	f.next = setBytes(f.next, n.lit[n.off+1]) // every needle has a byte after its rarest one
}

var allBytes = byteSet{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}

func isLowerByte(c byte) bool { return c-'a' < 26 }

// byteRank orders the bytes a literal may be anchored on from the most to
// the least frequent in code and prose (digits, then letters by English
// frequency): the rarer the anchor, the fewer blocks of clean text stop.
const byteRank = "0123456789" + "etaoinsrhldcumfpgwybvkxjqz" + "ETAOINSRHLDCUMFPGWYBVKXJQZ"

// anchorOf picks the byte of lit that triggers the token, or -1.
func anchorOf(lit string, fold bool) int {
	if k := strings.LastIndexAny(lit, "_-.~/"); k >= 0 {
		return k
	}
	if k := runTo(lit, 0, len(lit), cAlnum); k < len(lit) {
		return k // @, %, |
	}
	best, score := -1, -1
	for k := 0; k < len(lit); k++ {
		if r := anchorRank(lit[k], fold); r > score {
			best, score = k, r
		}
	}
	return best
}

// anchorRank is how rare c is as an anchor, -1 when it cannot be one: not
// a lower-case letter (most of the text); a trigger already (hand-written
// or an earlier anchor) costs nothing more; a folding literal's letter becomes a trigger in both cases,
// so only the six rarest letters qualify.
func anchorRank(c byte, fold bool) int {
	switch {
	case !fold && isLowerByte(c):
		return -1
	case !fold && hot8[c] != 0:
		return 1000
	case !fold:
		return strings.IndexByte(byteRank, c)
	case c >= '0' && c <= '9':
		return 0
	}
	if r := strings.IndexByte(byteRank[10:36], lower(c)); r >= 26-6 {
		return r + 10
	}
	return -1
}

// initGen anchors the ~260 generated tokens (a few microseconds) and
// indexes the keyword rules.
func initGen() {
	for i := range dTokens {
		anchorToken(&dTokens[i])
	}
	for c := range genAt {
		indexAnchors(c)
	}
	for i, r := range dKeywords {
		genKeyMin = min(genKeyMin, r.val.min)
		for _, w := range r.keywords {
			addKeyTri(w, triGen) // every keyword has 3 letters (TestRulesGenerated)
			t := tri(w[0], w[1], w[2])
			if genKwAt[t] == 0 {
				genKwGroups = append(genKwGroups, nil)
				genKwAt[t] = uint8(len(genKwGroups))
			}
			genKwGroups[genKwAt[t]-1] = append(genKwGroups[genKwAt[t]-1], genKwRef{w, i})
		}
	}
}

// anchorToken files t under its anchor byte (both cases when it folds),
// or, with no anchor, as needles in the two spellings real tokens use.
func anchorToken(t *genToken) {
	a := anchorOf(t.lit, t.fold)
	if a < 0 {
		needleToken(t)
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
	if t.fold && isLetter(t.lit[a]) {
		addAnchor(swapCase(t.lit[a]), an)
	}
}

func needleToken(t *genToken) {
	addNeedle(needle{lit: t.lit, kind: needleGen, tok: t})
	for _, n := range []string{strings.ToLower(t.lit), strings.ToUpper(t.lit)} {
		if t.fold && n != t.lit {
			addNeedle(needle{lit: n, kind: needleGen, tok: t})
		}
	}
}

// litByte is lit[k], or 0 out of the literal.
func litByte(lit string, k int) byte {
	if k < 0 || k >= len(lit) {
		return 0
	}
	return lit[k]
}

// addAnchor makes c a trigger byte for anchor an.
func addAnchor(c byte, an genAnchor) {
	t, a := an.tok, an.off
	genAt[c] = append(genAt[c], an)
	hot8[c] = 1
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

// indexAnchors sorts the anchors of byte c by their prev and fills
// genPrevStart[c] and genPrev2[c].
func indexAnchors(c int) {
	as := genAt[c]
	slices.SortStableFunc(as, func(x, y genAnchor) int { return int(x.prev) - int(y.prev) })
	if len(as) == 0 {
		return
	} else if len(as) > 255 {
		panic("over 255 anchors on one byte: genPrevStart needs a wider index")
	}
	st := new([256]uint8)
	for p, k := 0, 0; p < 256; p++ { // st[p]: the first anchor whose prev is >= p
		for k < len(as) && int(as[k].prev) < p {
			k++
		}
		st[p] = uint8(k)
	}
	genPrevStart[c], genPrev2[c] = st, prev2Sets(as)
}

// prev2Sets returns for each anchor the bytes two before the anchor that
// the group sharing its prev accepts (all when one has none or folds).
func prev2Sets(as []genAnchor) []byteSet {
	p2 := make([]byteSet, len(as))
	for k := 0; k < len(as); {
		e := k
		var set byteSet
		for ; e < len(as) && as[e].prev == as[k].prev; e++ {
			if as[e].prev2 == 0 || as[e].tok.fold {
				set = allBytes
			}
			set = setBytes(set, lower(as[e].prev2))
		}
		for ; k < e; k++ {
			p2[k] = set
		}
	}
	return p2
}

func swapCase(c byte) byte {
	if isLetter(c) {
		return c ^ 0x20
	}
	return c
}

// genFilter is the union of the neighbour filters of the anchors on c.
// Built as bit sets: 256 tests per anchor into the two 64 KB tables were
// ~40 % of the package's init.
func genFilter(c int) (f pnFilter) {
	for _, a := range genAt[c] {
		t := a.tok
		switch {
		case a.off > 0:
			f.prev = setBytes(f.prev, t.lit[a.off-1], a.prev, swapCase(a.prev))
		case t.pre.max != 0:
			f.prev = orSet(f.prev, byteSet(dSets[t.pre.set]))
		default:
			f.prev = orSet(f.prev, nonAlnum)
		}
		if a.off+1 < len(t.lit) {
			n := t.lit[a.off+1]
			f.next = setBytes(f.next, n)
			if t.fold {
				f.next = setBytes(f.next, lower(n), swapCase(lower(n)))
			}
		} else {
			f.next = orSet(f.next, byteSet(dSets[t.post.set]))
		}
	}
	return f
}

func setBytes(set byteSet, bs ...byte) byteSet {
	for _, b := range bs {
		set[b>>6] |= 1 << (b & 63)
	}
	return set
}

func orSet(a, b byteSet) byteSet {
	for i := range a {
		a[i] |= b[i]
	}
	return a
}

func addKeyTri(w string, fam uint8) {
	t := tri(w[0], w[1], w[2])
	keyTri[fam>>1][t>>6] |= 1 << (t & 63)
}

// keywords are the words of a secret's key, and the kind of its value
// (classifyKey reads them as keywordsAt).
var keywords = []keyword{
	{"password", KindPassword}, {"passwd", KindPassword}, {"passphrase", KindPassword},
	{"private", KindSecret}, {"secret", KindSecret}, {"token", KindToken},
	{"apikey", KindAPIKey}, {"accesskey", KindSecret}, {"auth", KindSecret},
	{"credential", KindSecret},
	// de, es, fr, pt (distill/lang's languages that spell these in ASCII)
	{"passwort", KindPassword}, {"kennwort", KindPassword}, {"contrasena", KindPassword},
	{"motdepasse", KindPassword}, {"senha", KindPassword}, {"geheimnis", KindSecret},
	{"secreto", KindSecret}, {"segredo", KindSecret}, {"jeton", KindToken},
	// nl; keys whose kind is their own: a signed URL's signature (before
	// sig, which it starts; X-Amz-Signature=, ?sig=: literal masks them in a
	// URL's query only, a thinking block's JSON has one), an Azure storage
	// key, kubeconfig's client-key-data (a base64 PEM private key)
	{"wachtwoord", KindPassword}, {"signature", KindAzureSAS}, {"sig", KindAzureSAS},
	{"accountkey", KindAzureStorageKey}, {"sharedaccesskey", KindAzureStorageKey},
	{"clientkeydata", KindPrivateKey},
}

// placeholderWords are whole values (any case) that are never secrets
// (isPlaceholder reads them as wordsByFirst).
var placeholderWords = []string{
	"null", "nil", "none", "true", "false", "undefined", "yes", "no", "on", "off",
	"string", "str", "bool", "boolean", "int", "integer", "number", "object", "any", "bytes",
	"password", "passwd", "pass", "pwd", "secret", "secrets", "token", "apikey", "api_key", "key",
	"required", "optional", "empty", "test", "default", "value", "hidden", "masked", "prompt",
	"env", "n/a", "tbd", "todo", "unset", "omitted", "removed", "foo", "bar", "foobar", "baz",
	"secret_key", "access_token", "auth_token", "api-key", "api_token", "mysecret", "mypassword",
	"mytoken", "s3cr3t", "p@ssw0rd", "p@ssword", "passw0rd",
	"function", "func", "lambda", "async", "await", "new", "require", "import", "typeof", "self", "this",
}

// placeholderParts mark a value (any case) as a placeholder wherever they
// occur (isPlaceholder reads them as partsByFirst).
var placeholderParts = []string{
	"${", "{{", "$(", "<", ">", "...", "\u2026", "xxxx", "****", "####",
	"changeme", "change_me", "change-me", "changeit", "your", "example", "placeholder",
	"dummy", "redacted", "replace_me", "replace-me", "replaceme", "insert_", "insert-",
	"fixme", "todo_", "sample_", "here", ".*",
}

// The word lists below are copied as they are into rules_gen.go (derived).

// allKinds are carryover's kinds: the hand-written detectors' and the ids
// of its own data rules (testdata/extra.toml), which win over gitleaks'.
var allKindsSrc = []Kind{
	KindAPIKey, KindAWSAccessKeyID, KindAWSSecret, KindAzureSAS, KindAzureStorageKey, KindBearerToken,
	KindDatabaseURL, KindDiscordToken, KindMailgunKey, KindPassword, KindPrivateKey, KindSecret,
	KindSlackWebhook, KindTelegramToken, KindToken, KindTwilioKey, KindURLCredentials,
	"age-secret-key", "anthropic-key", "atlassian-token", "azure-ad-secret", "databricks-token",
	"digitalocean-token", "doppler-token", "github-token", "gitlab-token", "google-api-key",
	"google-oauth-token", "grafana-token", "heroku-key", "huggingface-token", "jwt", "linear-key",
	"newrelic-key", "npm-token", "openai-key", "postman-key", "pypi-token", "sendgrid-key",
	"shopify-token", "slack-token", "stripe-key", "vault-token",
}

// foreignWords are the secret words of keys spelled beyond ASCII (foreignKey).
var foreignWordsSrc = []keyword{
	{"contraseña", KindPassword}, {"пароль", KindPassword}, {"パスワード", KindPassword}, {"密码", KindPassword},
	{"口令", KindPassword}, {"暗証番号", KindPassword}, {"токен", KindToken}, {"トークン", KindToken},
	{"令牌", KindToken}, {"секрет", KindSecret}, {"シークレット", KindSecret}, {"秘密", KindSecret},
	{"密钥", KindSecret}, {"秘钥", KindSecret}, {"ключ", KindSecret}, {"秘密鍵", KindSecret},
}

// keyWords end names of a secret no keyword names (keyName).
var keyWordsSrc = []string{"key", "passcode", "seed", "hmac", "jwt", "bearer", "cookie", "cred", "pat"}

// qualifiers follow a keyword in names whose value is not the secret itself
// (PASSWORD_FILE, TOKEN_URL, API_KEY_ID, SECRET_NAME, TOKEN_EXPIRES_AT).
var qualifiersSrc = []string{
	"file", "path", "dir", "url", "uri", "endpoint", "host", "port", "name", "user", "id",
	"type", "length", "len", "count", "limit", "min", "max", "size", "ttl", "expir", "timeout",
	"header", "prefix", "suffix", "env", "var", "ref", "policy", "required", "enabled",
	"disabled", "mode", "method", "format", "regex", "pattern", "location", "provider",
	"store", "backend", "command", "cmd", "scope", "audience", "issuer", "alg", "version",
	"field", "param", "rotation", "reset", "hint", "label", "arn", "kms", "source",
}

// databaseSchemes get their own kind in URL credentials.
var databaseSchemesSrc = []string{
	"postgres", "postgresql", "mysql", "mariadb", "mongodb", "mongodb+srv", "redis", "rediss",
	"amqp", "amqps", "mssql", "sqlserver", "clickhouse", "cockroachdb", "oracle", "couchdb",
	"memcached", "neo4j", "neo4j+s", "bolt", "cassandra", "influxdb",
}

// wStems end where a password's word has its 'w': pw, passwd, passwort,
// kennwort, wachtwoord.
var wStemsSrc = []string{"p", "pass", "kenn", "wacht"}

// promptWords are the words of a prompt for a credential, lower case
// ("pin" only as a word of its own: not ping, spinner), and the kind of
// the answer.
var promptWordsSrc = []keyword{
	{"assword", KindPassword}, {"asswd", KindPassword}, {"passphrase", KindPassword}, {"passcode", KindPassword},
	{"token", KindToken}, {"secret", KindSecret}, {"pin", KindPassword},
}

// passFlags lists, per one-letter flag, the commands in which it takes a
// password or passphrase attached (mysql/mariadb/sshpass/7z -pX) or as its
// next word (sshpass and "<tool> login ... -p X", ssh-keygen -N/-P, zip -P,
// redis-cli -a).
var passFlagsSrc = [256]passFlag{
	'p': {[]string{"mysql", "mariadb", "sshpass", "7z "}, []string{"sshpass", " login"}},
	'N': {nil, []string{"ssh-keygen"}},
	'P': {nil, []string{"ssh-keygen", "zip", "unzip"}},
	'a': {nil, []string{"redis-cli"}},
	'k': {nil, []string{"openssl enc", "openssl aes", "openssl des"}},
}

// idPrefixes label object ids and digests, not secrets.
var idPrefixesSrc = []string{"resp", "msg", "rs", "fc", "ci", "call", "item", "run", "step", "thread", "asst", "file",
	"batch", "req", "evt", "cus", "sub", "txn", "obj", "id", "conv", "chat", "trace", "span", "hash", "commit",
	"digest", "rev", "blob", "tree", "etag", "cache", "build", "uuid", "guid", "sha1", "sha256", "blake2b", "xxh"}

func initDetect() {
	for _, w := range []string{"pas", "pwd", "private", "secret", "token", "apikey", "accesskey", "auth", "credential", "accountkey", "clientkeydata", "key", "seed", "hmac", "jwt", "bearer", "cookie", "pat",
		// a rare triple of each keyword in de/es/fr/pt (se-nha, cont-ras-ena, ke-nnw-ort, jet-on, segr-edo,
		// geh-eimnis, wac-htw-oord, si-gna-ture; passwort, motdepasse and secreto have pas and sec): a common one (con, sen, egr) would send
		// config=, sensor= and integration= through the hand classifier
		"nha", "ras", "nnw", "jet", "edo", "geh", "htw", "gna"} {
		addKeyTri(w, triHand)
	}
	for _, p := range placeholderParts {
		partsByFirst[p[0]] = append(partsByFirst[p[0]], p)
	}
	for _, w := range placeholderWords {
		wordsByFirst[w[0]] = append(wordsByFirst[w[0]], w)
	}
	for _, kw := range keywords {
		keywordsAt[kw.word[0]] = append(keywordsAt[kw.word[0]], kw)
	}
	for _, c := range []byte(" \t\r\n\"'`,;)]}<>\\|") {
		valueStop[c] = true
	}
}

// b64Spellings are the base64 spellings of a header that starts a secret
// (a PEM block, a PuTTY key, an age key) at each byte alignment (0, 1 or 2
// mod 3 in the encoded data): only the 3-byte groups wholly inside the
// header, so they do not depend on the bytes around it. A base64 run
// holding one (a Kubernetes tls.key:, a base64'd id_rsa) is decoded and
// masked when the decoded text holds a secret.
func b64Spellings(h string) (hs []string) {
	for skip := 0; skip < 3; skip++ {
		g := h[skip:]
		hs = append(hs, base64.StdEncoding.EncodeToString([]byte(g[:len(g)/3*3])))
	}
	return hs
}

// repeatBounds is a repeat's min and max count (-1: unbounded) for *, +, ?
// and {m,n} alike.
func repeatBounds(re *syntax.Regexp) (lo, hi int) {
	switch re.Op {
	case syntax.OpStar:
		return 0, -1
	case syntax.OpPlus:
		return 1, -1
	case syntax.OpQuest:
		return 0, 1
	}
	return re.Min, re.Max
}
