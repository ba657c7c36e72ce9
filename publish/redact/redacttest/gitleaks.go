package redacttest

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp/syntax"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/carryover/carryover/publish/redact"
)

// ContextRules are gitleaks rules whose regex describes a context rather
// than a token: a random walk of it gives no realistic text (any byte in a
// key body, a curl line without spaces). Their shapes are lines of
// secrets.txt, masked by the hand-written detectors.
var ContextRules = map[string]string{
	"curl-auth-header":       "curl -H 'Authorization: Bearer ...' lines in secrets.txt (bearer-token)",
	"curl-auth-user":         "curl -u user:pass lines in secrets.txt (password)",
	"generic-api-key":        "key=value assignments in secrets.txt (api-key, secret, token, password)",
	"hashicorp-tf-password":  "password = \"...\" in secrets.txt (password)",
	"kubernetes-secret-yaml": "a Secret's data: values in secrets.txt (private-key|b64 under tls.key)",
	"freemius-secret-key":    "'secret_key' => '...' in secrets.txt (secret)",
	"private-key":            "PEM blocks in secrets.txt (private-key, whole, cut, numbered, split)",
	"sidekiq-sensitive-url":  "https://user:pass@host in secrets.txt (url-credentials: the password is masked, user and host kept)",
}

// GitleaksLines generates one secret line per alternative of every gitleaks
// rule in the rule data at path (publish/redact/gen/gitleaks.toml or
// extra.toml): a fake drawn at
// random from the rule's own regex (a seeded walk of its syntax tree), put
// bare into a sentence, a JSON value or an env line for a token rule, or
// after a key that names the vendor for a keyword rule. The line's Kinds
// hold the rule id. Rules without a regex (a file-name rule) and the
// ContextRules are skipped.
func GitleaksLines(path string) ([]SecretLine, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read gitleaks rule data: %w", err)
	}
	var cfg struct {
		Rules []gitleaksRule `toml:"rules"`
	}
	if err := toml.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []SecretLine
	for n, r := range cfg.Rules {
		if _, ok := ContextRules[r.ID]; ok || r.Regex == "" {
			continue
		}
		re, err := syntax.Parse(r.Regex, syntax.Perl)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.ID, err)
		}
		alts := []*syntax.Regexp{re}
		if re.Op == syntax.OpAlternate {
			alts = re.Sub
		}
		for k, alt := range alts {
			if l, ok := r.line(n, k, re, alt); ok {
				out = append(out, l)
			}
		}
	}
	return out, nil
}

type gitleaksRule struct {
	ID          string `toml:"id"`
	Regex       string `toml:"regex"`
	SecretGroup int    `toml:"secretGroup"`
}

// secretGroup is the sub-expression of alternative alt that is the
// secret: the rule's secretGroup of its whole regex re, else alt's first
// capture (nil: none).
func (r gitleaksRule) secretGroup(re, alt *syntax.Regexp) *syntax.Regexp {
	if r.SecretGroup > 0 {
		return nthCap(re, r.SecretGroup)
	}
	return nthCap(alt, 0)
}

// line is the secret line of alternative k of rule n: a fake after a key
// naming the vendor for a keyword rule, else the whole match put bare
// into a sentence, a JSON value or an env line.
func (r gitleaksRule) line(n, k int, re, alt *syntax.Regexp) (SecretLine, bool) {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", r.ID, k)
	w := &walker{r: rand.New(rand.NewPCG(h.Sum64(), 0x5eed))}
	g := r.secretGroup(re, alt)
	var text, sec string
	if kw := keywordOf(alt); kw != "" {
		if g == nil {
			return SecretLine{}, false
		}
		sec = w.gen(g)
		key := strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(kw))
		text = pick(n+k, "export "+key+"_KEY="+sec, `{"`+strings.ToLower(key)+`_id": "`+sec+`"}`, strings.ToLower(key)+": "+sec)
	} else {
		// The secret is the rule's secret group (gitleaks reports that),
		// the text the whole match around it.
		w.capture = g
		sec = w.gen(alt)
		w.full = sec
		if g != nil && w.captured != "" {
			sec = w.captured
		}
		m := w.full
		text = pick(n+k, "the deploy log printed "+m+" before the error", `{"value": "`+m+`"}`, "CONFIG_VALUE="+m+" ./run.sh")
	}
	return SecretLine{Line: n + 1, Text: text, Secrets: []string{sec}, Kinds: []redact.Kind{redact.Kind(r.ID)}}, true
}

// pick is one of the forms, in turn by i.
func pick(i int, forms ...string) string { return forms[i%len(forms)] }

// RuleFake draws a fake for the generated rule id (gitleaks.toml or
// extra.toml in genDir) from its regex's first alternative.
func RuleFake(genDir, id string, seed uint64) (string, error) {
	for _, f := range []string{"gitleaks.toml", "extra.toml"} {
		b, err := os.ReadFile(filepath.Join(genDir, f))
		if err != nil {
			return "", fmt.Errorf("read rule data: %w", err)
		}
		var cfg struct {
			Rules []struct {
				ID    string `toml:"id"`
				Regex string `toml:"regex"`
			} `toml:"rules"`
		}
		if err := toml.Unmarshal(b, &cfg); err != nil {
			return "", fmt.Errorf("%s: %w", f, err)
		}
		for _, r := range cfg.Rules {
			if r.ID != id {
				continue
			}
			re, err := syntax.Parse(r.Regex, syntax.Perl)
			if err != nil {
				return "", fmt.Errorf("%s: %w", id, err)
			}
			if re.Op == syntax.OpAlternate {
				re = re.Sub[0]
			}
			w := &walker{r: rand.New(rand.NewPCG(seed, 0x5eed))}
			return w.gen(re), nil
		}
	}
	return "", fmt.Errorf("no rule %q in %s", id, genDir)
}

// keywordOf returns the vendor keyword of a gitleaks keyword rule
// ([\w.-]{0,50}?(?:keyword)...=...(value)), or "".
func keywordOf(alt *syntax.Regexp) string {
	var seq []*syntax.Regexp
	var flat func(*syntax.Regexp)
	flat = func(r *syntax.Regexp) {
		if r.Op == syntax.OpConcat {
			for _, s := range r.Sub {
				flat(s)
			}
			return
		}
		seq = append(seq, r)
	}
	flat(alt)
	if len(seq) == 0 || seq[0].Op != syntax.OpRepeat || seq[0].Min != 0 || seq[0].Max != 50 {
		return ""
	}
	w := &walker{r: rand.New(rand.NewPCG(1, 2))}
	var b strings.Builder
	for _, r := range seq[1:] {
		switch r.Op {
		case syntax.OpRepeat, syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
			if b.Len() == 0 {
				continue // the nested [\w.-]{0,50}? of okta and cohere
			}
		default:
			b.WriteString(w.gen(r))
			continue
		}
		break
	}
	return strings.ToLower(b.String())
}

// nthCap returns the n-th capture group (1-based) under re; n 0: the
// first.
func nthCap(re *syntax.Regexp, n int) *syntax.Regexp {
	if re.Op == syntax.OpCapture && (n == 0 || re.Cap == n) {
		return re
	}
	for _, s := range re.Sub {
		if c := nthCap(s, n); c != nil {
			return c
		}
	}
	return nil
}

// walker draws a random string that a regexp matches. Repeats take their
// minimum plus up to 4 more; character classes give printable ASCII, never
// a space or a quote; the end-of-secret groups ([\s;'"]|$) give nothing.
type walker struct {
	r *rand.Rand
	// capture, when set, is recorded into captured as it is generated;
	// full keeps the whole text of the last gen.
	capture  *syntax.Regexp
	captured string
	full     string
}

func (w *walker) gen(re *syntax.Regexp) string {
	var b strings.Builder
	w.walk(re, &b)
	return b.String()
}

func (w *walker) walk(re *syntax.Regexp, b *strings.Builder) {
	switch re.Op {
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		if cs := classChars(re.Rune); len(cs) > 0 {
			b.WriteRune(cs[w.r.IntN(len(cs))])
		}
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		b.WriteByte(alnum[w.r.IntN(len(alnum))])
	case syntax.OpCapture:
		from := b.Len()
		w.walk(re.Sub[0], b)
		if re == w.capture {
			w.captured = b.String()[from:]
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			w.walk(s, b)
		}
	case syntax.OpAlternate:
		if !boundaryGroup(re) { // a boundary group is the secret's surroundings
			w.walk(re.Sub[w.r.IntN(len(re.Sub))], b)
		}
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		for range w.count(re) {
			w.walk(re.Sub[0], b)
		}
	}
}

// classChars are the printable bytes of a class but quotes and '\\'.
func classChars(ranges []rune) []rune {
	var cs []rune
	for i := 0; i+1 < len(ranges); i += 2 {
		for c := ranges[i]; c <= ranges[i+1] && c < 0x7f; c++ {
			if c > ' ' && !strings.ContainsRune("\"'`\\", c) {
				cs = append(cs, c)
			}
		}
	}
	return cs
}

// boundaryGroup reports an alternation with a begin or end anchor.
func boundaryGroup(re *syntax.Regexp) bool {
	for _, s := range re.Sub {
		switch s.Op {
		case syntax.OpEndText, syntax.OpEndLine, syntax.OpBeginText, syntax.OpBeginLine:
			return true
		}
	}
	return false
}

// count draws how many times a repeat runs.
func (w *walker) count(re *syntax.Regexp) int {
	lo, hi := re.Min, re.Max
	switch re.Op {
	case syntax.OpStar:
		lo, hi = 0, -1
	case syntax.OpPlus:
		lo, hi = 1, -1
	case syntax.OpQuest:
		lo, hi = 0, 1
	}
	switch {
	case hi < 0 && lo <= 1:
		return lo + 8 + w.r.IntN(9) // [A-Z0-9]+ in a real token is a long run
	case hi < 0 || hi > lo:
		extra := 4
		if hi >= 0 {
			extra = min(extra, hi-lo)
		}
		return lo + w.r.IntN(extra+1)
	}
	return lo
}
