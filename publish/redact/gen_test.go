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
package redact_test

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"regexp/syntax"
	"slices"
	"sort"
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
	lo, hi := re.Min, re.Max
	switch re.Op {
	case syntax.OpStar:
		lo, hi = 0, -1
	case syntax.OpPlus:
		lo, hi = 1, -1
	case syntax.OpQuest:
		lo, hi = 0, 1
	}
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
// hand-written assignment detector classifies (detect.go classifyKey).
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
	src, err := format.Source(render(tokens, tb.keywords, tb.skipped, nGitleaks, len(rules)-nGitleaks))
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

func onlyLetters(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
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
	for _, t := range tokens {
		fmt.Fprintf(&b, "\t{%q, %q, %v, genSpan{%d, %d, %d}, genSpan{%d, %d, %d}},\n",
			t.id, t.lit, t.fold, idx(t.pre.set), t.pre.min, t.pre.max, idx(t.post.set), t.post.min, t.post.max)
	}
	b.WriteString("}\n\nvar genKeywords = [...]genKeyword{\n")
	for _, k := range keywords {
		fmt.Fprintf(&b, "\t{%q, %#v, genSpan{%d, %d, %d}},\n", k.id, k.keywords, idx(k.val.set), k.val.min, k.val.max)
	}
	b.WriteString("}\n\n// genSets are the byte sets the spans index, as four 64-bit words.\nvar genSets = [...][4]uint64{\n")
	for _, s := range setList {
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
