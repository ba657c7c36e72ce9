package redact

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/redact/secrets.golden and rules_gen.go")

const corpusDir = "../../testdata/redact"

// ruleFiles hold the rule data rules_gen.go is generated from.
var ruleFiles = []string{"testdata/extra.toml", "testdata/gitleaks.toml"}

// TestCorpus checks the published figures: no leak on the secret corpus and
// at most 0.3 % of clean lines touched. It also keeps secrets.golden, the
// redacted secret corpus, so a change in what gets masked shows up in review.
func TestCorpus(t *testing.T) {
	st, err := corpus(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("corpus: %s", st)
	if st.Leaks != 0 {
		t.Errorf("%d secret lines leak after String; run -v to see them", st.Leaks)
	}
	if st.Kinds != len(Kinds()) {
		t.Errorf("secrets.txt covers %d kinds; want all %d", st.Kinds, len(Kinds()))
	}
	if st.FalsePositives*1000 > st.CleanLines*3 {
		t.Errorf("false positives %d of %d clean lines; want <= 0.3%%", st.FalsePositives, st.CleanLines)
	}

	lines, err := secretLines(filepath.Join(corpusDir, "secrets.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var golden strings.Builder
	for _, l := range lines {
		if leaked(l) {
			t.Errorf("secrets.txt:%d leaks: %q", l.Line, String(l.Text))
		}
		ms := Find(l.Text)
		for i, sec := range l.Secrets {
			if !slices.Contains(Kinds(), l.Kinds[i]) {
				continue // a {{rule:<id>}} fake: not leaking is the test
			}
			if !coveredAs(l.Text, sec, l.Kinds[i], ms) {
				t.Errorf("secrets.txt:%d: %s fake not matched as %s; matches %v", l.Line, l.Kinds[i], l.Kinds[i], kindsOf(ms))
			}
		}
		fmt.Fprintf(&golden, "%d: %s\n", l.Line, String(l.Text))
	}
	goldenPath := filepath.Join(corpusDir, "secrets.golden")
	if *update {
		if err := os.WriteFile(goldenPath, []byte(golden.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("%v; run go test ./publish/redact -run TestCorpus -update", err)
	}
	if string(want) != golden.String() {
		t.Errorf("redacted corpus differs from %s; review and run with -update", goldenPath)
	}
}

// TestCleanLines lists every clean line String touches, to make the false
// positives reviewable.
func TestCleanLines(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "clean", "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for l := range strings.Lines(string(b)) {
			n++
			if out := String(l); out != l {
				t.Logf("false positive %s:%d: %q", filepath.Base(f), n, out)
			}
		}
	}
}

func coveredAs(text, sec string, k Kind, ms []Match) bool {
	i := strings.Index(text, sec)
	// A line-number prefix or string-literal glue around a key block is
	// not part of the secret.
	trimmed := strings.TrimLeft(strings.TrimLeft(sec, " \t0123456789\u2192\""), `\t`)
	i += len(sec) - len(trimmed)
	sec = strings.TrimRight(trimmed, "\"\\n +\n")
	if i < 0 {
		return false
	}
	for _, m := range ms {
		if m.Start <= i && i+len(sec) <= m.End+1 && m.Kind == k {
			return true
		}
	}
	return false
}

func kindsOf(ms []Match) []Kind {
	var ks []Kind
	for _, m := range ms {
		ks = append(ks, m.Kind)
	}
	return ks
}

// TestGitleaksCorpus draws a fake from the regex of every gitleaks rule in
// the vendored data (one per alternative, gitleaksLines) and
// checks that String leaves none of it, and that every rule in the
// generated table has a sample.
func TestGitleaksCorpus(t *testing.T) {
	lines, err := gitleaksLines()
	if err != nil {
		t.Fatal(err)
	}
	sampled := map[string]bool{}
	leaks := 0
	for _, l := range lines {
		id := string(l.Kinds[0])
		sampled[id] = true
		if leaked(l) {
			leaks++
			t.Errorf("gitleaks rule %s: sample leaks: %q -> %q", id, l.Text, String(l.Text))
		}
	}
	for id, why := range contextRules {
		t.Logf("%s: not sampled from its regex: %s", id, why)
		sampled[id] = true
	}
	for _, id := range GeneratedRules() {
		if !sampled[id] {
			t.Errorf("generated rule %s has no sample", id)
		}
	}
	t.Logf("gitleaks corpus: %d rules sampled, %d samples, %d leaks; %d rules in the generated table", len(sampled), len(lines), leaks, len(GeneratedRules()))
}

func TestFakeEveryKind(t *testing.T) {
	for _, k := range Kinds() {
		a, b := fake(k, 1), fake(k, 1)
		if a == "" || a != b {
			t.Errorf("fake(%s, 1) = %q, %q; want the same non-empty string", k, a, b)
		}
	}
}

// The measurement corpus lives in testdata/redact:
//
//	secrets.txt  one secret-bearing line per row, with each secret written as
//	             a template {{kind}} or {{kind|json}}; secretLines expands it
//	             into a deterministic fake, so the file itself holds no
//	             secret-shaped strings. Blank lines and lines starting with
//	             "# " are skipped.
//	clean/*      ordinary code, docs, logs and prose; every line of every file
//	             counts.
//
// `go test ./publish/redact -run TestCorpus -v` prints the figures.

// Stats are the corpus figures: Leaks must be 0 and FalsePositives/CleanLines
// at most 0.3 %.
type Stats struct {
	Kinds          int // distinct kinds exercised by secrets.txt
	SecretLines    int // secret-bearing template lines
	Leaks          int // secret lines where part of a secret survived String
	CleanLines     int // lines in clean/*
	FalsePositives int // clean lines that String changed
}

func (s Stats) String() string {
	rate := 0.0
	if s.CleanLines > 0 {
		rate = 100 * float64(s.FalsePositives) / float64(s.CleanLines)
	}
	return fmt.Sprintf("kinds %d, secret lines %d, leaks %d; clean lines %d, false positives %d (%.2f%%)",
		s.Kinds, s.SecretLines, s.Leaks, s.CleanLines, s.FalsePositives, rate)
}

// SecretLine is one expanded line of secrets.txt.
type SecretLine struct {
	Line    int      // 1-based line in secrets.txt
	Text    string   // the line with its templates expanded
	Secrets []string // the fakes inserted, in order
	Kinds   []Kind   // the template kind of each fake
}

// corpus measures String on the corpus in dir (testdata/redact).
func corpus(dir string) (Stats, error) {
	var st Stats
	lines, err := secretLines(filepath.Join(dir, "secrets.txt"))
	if err != nil {
		return st, err
	}
	kinds := map[Kind]bool{}
	for _, l := range lines {
		st.SecretLines++
		for _, k := range l.Kinds {
			if slices.Contains(Kinds(), k) {
				kinds[k] = true // a {{rule:<id>}} line counts in the gitleaks figures
			}
		}
		if leaked(l) {
			st.Leaks++
		}
	}
	st.Kinds = len(kinds)

	files, err := filepath.Glob(filepath.Join(dir, "clean", "*"))
	if err != nil {
		return st, err
	}
	if len(files) == 0 {
		return st, fmt.Errorf("no clean corpus files in %s; add ordinary text there", filepath.Join(dir, "clean"))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return st, fmt.Errorf("read clean corpus: %w", err)
		}
		for l := range strings.Lines(string(b)) {
			st.CleanLines++
			if String(l) != l {
				st.FalsePositives++
			}
		}
	}
	return st, nil
}

// leaked reports whether String(l.Text) still contains any 12-byte piece of
// one of l.Secrets (or a whole secret shorter than that).
func leaked(l SecretLine) bool {
	out := stripMarkers(String(l.Text))
	for _, sec := range l.Secrets {
		w := min(12, len(sec))
		for i := 0; i+w <= len(sec); i++ {
			if strings.Contains(out, sec[i:i+w]) {
				return true
			}
		}
	}
	return false
}

// stripMarkers removes the "[REDACTED:<kind>]" markers, whose kind names
// (aws-amazon-bedrock-api-key-...) may share 12 bytes with a secret.
func stripMarkers(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "[REDACTED:")
		if j := strings.Index(s, "[redacted:"); j >= 0 && (i < 0 || j < i) {
			i = j // the ledger's lower-cased search text
		}
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], ']')
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		s = s[i+j+1:]
	}
	b.WriteString(s)
	return b.String()
}

// secretLines reads and expands a secrets.txt template file.
func secretLines(path string) ([]SecretLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open secret corpus: %w", err)
	}
	defer f.Close()
	var out []SecretLine
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		t := sc.Text()
		if strings.TrimSpace(t) == "" || strings.HasPrefix(t, "# ") {
			continue
		}
		l, err := expandLine(t, n)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, l)
	}
	return out, sc.Err()
}

func expandLine(t string, n int) (SecretLine, error) {
	l := SecretLine{Line: n}
	var b strings.Builder
	for {
		i := strings.Index(t, "{{")
		if i < 0 {
			break
		}
		j := strings.Index(t[i:], "}}")
		if j < 0 {
			return l, fmt.Errorf("unclosed {{ template")
		}
		name, mod, _ := strings.Cut(t[i+2:i+j], "|")
		k := Kind(name)
		h := fnv.New64a()
		fmt.Fprintf(h, "%s/%d/%d", k, n, len(l.Secrets))
		var sec string
		if id, ok := strings.CutPrefix(name, "rule:"); ok {
			// {{rule:<id>}}: a fake drawn from a generated rule's regex.
			k = Kind(id)
			var err error
			if sec, err = ruleFake(id, h.Sum64()); err != nil {
				return l, err
			}
		} else {
			if !slices.Contains(Kinds(), k) {
				return l, fmt.Errorf("unknown kind %q in template (known: %v)", name, Kinds())
			}
			sec = fake(k, h.Sum64())
			if sec == "" {
				return l, fmt.Errorf("no fake generator for kind %q; add one to fakes", k)
			}
		}
		for _, m := range strings.Split(mod, "+") {
			if m == "" {
				continue
			}
			f, ok := modifiers[m]
			if !ok {
				return l, fmt.Errorf("unknown template modifier %q (known: json, numbered, catn, noend, nobegin, literals, b64, b64wrap, hex0x, b64url, putty, ppkread, letters, lead1, lead2, lead3)", m)
			}
			sec = f(sec)
		}
		b.WriteString(t[:i])
		b.WriteString(sec)
		l.Secrets = append(l.Secrets, sec)
		l.Kinds = append(l.Kinds, k)
		t = t[i+j+2:]
	}
	if len(l.Secrets) == 0 {
		return l, fmt.Errorf("line has no {{kind}} template")
	}
	b.WriteString(t)
	l.Text = b.String()
	return l, nil
}

// modifiers rewrite a fake into the form a transcript shows it in:
//
//	json      JSON-escaped, as inside a raw transcript line
//	numbered  each line behind a Read-style line number ("     3→")
//	catn      each line behind cat -n's number and tab ("     3\t")
//	noend     without its last two lines (a key cut before its END line)
//	nobegin   without its first two lines (the second part of a key read
//	          in two parts: END but no BEGIN)
//	b64wrap   standard base64 wrapped at 64 columns (openssl base64)
//	letters   with every digit replaced by a letter (a password without
//	          digits)
//	literals  a PEM block split across Go string literals ("...\n" +)
//	b64       standard base64 (kubeconfig client-key-data)
//	hex0x     a 256-bit key drawn from it, as 0x and 64 hex digits (an
//	          Ethereum private key)
//	b64url    the same key as 43 base64url bytes (a JWK's "d")
//	putty     the body of a PEM block as a PuTTY .ppk file
//	ppkread   (after putty) the file from its Private-Lines: line, as a
//	          read that starts past the header has it
//	lead1..3  behind a blank line, a CRLF line or a comment line, so that
//	          base64 of it does not start with the secret's header (at the
//	          three byte alignments: 1, 2 and 6 bytes before it)
var modifiers = map[string]func(string) string{
	"json": func(s string) string {
		q, _ := json.Marshal(s)
		return string(q[1 : len(q)-1])
	},
	"numbered": func(s string) string {
		ls := strings.Split(s, "\n")
		for i := range ls {
			ls[i] = fmt.Sprintf("%6d\u2192%s", i+1, ls[i])
		}
		return strings.Join(ls, "\n")
	},
	"catn": func(s string) string {
		ls := strings.Split(s, "\n")
		for i := range ls {
			ls[i] = fmt.Sprintf("%6d\t%s", i+1, ls[i])
		}
		return strings.Join(ls, "\n")
	},
	"nobegin": func(s string) string {
		ls := strings.Split(s, "\n")
		return strings.Join(ls[min(2, len(ls)-1):], "\n")
	},
	"b64wrap": func(s string) string {
		e := base64.StdEncoding.EncodeToString([]byte(s))
		var ls []string
		for len(e) > 64 {
			ls, e = append(ls, e[:64]), e[64:]
		}
		return strings.Join(append(ls, e), "\n")
	},
	"letters": func(s string) string {
		return strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return 'g' + (r - '0')
			}
			return r
		}, s)
	},
	"noend": func(s string) string {
		ls := strings.Split(s, "\n")
		return strings.Join(ls[:max(1, len(ls)-2)], "\n")
	},
	"literals": func(s string) string {
		ls := strings.Split(s, "\n")
		for i := range ls {
			ls[i] = "\t\"" + ls[i] + "\\n\""
		}
		return strings.Join(ls, " +\n")
	},
	"b64":   func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
	"hex0x": func(s string) string { h := sha256.Sum256([]byte(s)); return "0x" + hex.EncodeToString(h[:]) },
	"b64url": func(s string) string {
		h := sha256.Sum256([]byte(s))
		return base64.RawURLEncoding.EncodeToString(h[:])
	},
	"lead1":   func(s string) string { return "\n" + s },
	"lead2":   func(s string) string { return "\r\n" + s },
	"lead3":   func(s string) string { return "# key\n" + s },
	"ppkread": func(s string) string { return s[strings.Index(s, "Private-Lines:"):] }, // after putty
	"putty": func(s string) string {
		ls := strings.Split(s, "\n")
		body := ls[1 : len(ls)-1]
		return "PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nComment: deploy-key\nPublic-Lines: 1\n" +
			"AAAAB3NzaC1yc2EAAAADAQABAAABAQ\nPrivate-Lines: " + fmt.Sprint(len(body)) + "\n" +
			strings.Join(body, "\n") + "\nPrivate-MAC: " + fmt.Sprintf("%x", fnv.New64a().Sum([]byte(body[0])))
	},
}

const (
	upper   = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lowerAZ = "abcdefghijklmnopqrstuvwxyz"
	digits  = "0123456789"
	alnum   = upper + lowerAZ + digits
	urlSafe = alnum + "_-"
	b64     = alnum + "+/"
	hexLow  = "0123456789abcdef"
	bech32  = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
)

// fake returns a deterministic fake secret of kind k for seed; it has the
// shape of the real thing but is random. Every call with the same
// arguments returns the same string. It returns "" for an unknown kind.
func fake(k Kind, seed uint64) string {
	if f, ok := fakes[k]; ok {
		return f(fakeGen{rand.New(rand.NewPCG(seed, 0x5eed))})
	}
	return ""
}

// fakes draws the fake of each kind.
var fakes = map[Kind]func(g fakeGen) string{
	KindAWSAccessKeyID: func(g fakeGen) string { return g.one("AKIA", "ASIA") + g.str(upper+"234567", 16) },
	KindAWSSecret:      func(g fakeGen) string { return g.mixed(b64, 40) },
	KindAgeSecretKey:   func(g fakeGen) string { return "AGE-SECRET-KEY-1" + g.str(bech32, 58) },
	KindAnthropicKey: func(g fakeGen) string {
		return "sk-ant-" + g.one("api03-", "admin01-", "oat01-") + g.mixed(urlSafe, 93) + "AA"
	},
	KindOpenAIKey: func(g fakeGen) string { return g.one("sk-proj-", "sk-svcacct-", "sk-") + g.mixed(alnum, 48) },
	KindGitHubToken: func(g fakeGen) string {
		if g.r.IntN(6) == 0 {
			return "github_pat_" + g.mixed(alnum, 22) + "_" + g.mixed(alnum, 59)
		}
		return g.one("ghp_", "gho_", "ghu_", "ghs_", "ghr_") + g.mixed(alnum, 36)
	},
	KindGitLabToken:  func(g fakeGen) string { return "glpat-" + g.mixed(urlSafe, 20) },
	KindGoogleAPIKey: func(g fakeGen) string { return "AIza" + g.mixed(urlSafe, 35) },
	KindStripeKey: func(g fakeGen) string {
		return g.one("sk_live_", "rk_live_", "sk_test_", "whsec_") + g.mixed(alnum, 32)
	},
	KindSlackToken: func(g fakeGen) string {
		return g.one("xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-") + g.str(digits, 12) + "-" + g.str(digits, 13) + "-" + g.mixed(alnum, 24)
	},
	KindSlackWebhook: func(g fakeGen) string {
		return "T" + g.str(upper+digits, 8) + "/B" + g.str(upper+digits, 10) + "/" + g.mixed(alnum, 24)
	},
	KindTwilioKey:        func(g fakeGen) string { return g.one("SK", "AC") + "9" + g.str(hexLow, 31) },
	KindSendGridKey:      func(g fakeGen) string { return "SG." + g.mixed(urlSafe, 22) + "." + g.mixed(urlSafe, 43) },
	KindNPMToken:         func(g fakeGen) string { return "npm_" + g.mixed(alnum, 36) },
	KindPyPIToken:        func(g fakeGen) string { return "pypi-AgEIcHlwaS5vcmc" + g.mixed(urlSafe, 70) },
	KindHuggingFaceToken: func(g fakeGen) string { return "hf_" + g.mixed(upper+lowerAZ, 34) },
	KindPrivateKey: func(g fakeGen) string {
		label := g.one("RSA ", "EC ", "OPENSSH ", "", "ENCRYPTED ", "DSA ")
		var b strings.Builder
		b.WriteString("-----BEGIN " + label + "PRIVATE KEY-----\n")
		for range 5 {
			b.WriteString(g.mixed(b64, 64) + "\n")
		}
		b.WriteString(g.mixed(b64, 20) + "==\n-----END " + label + "PRIVATE KEY-----")
		return b.String()
	},
	KindJWT: func(g fakeGen) string {
		enc := base64.RawURLEncoding.EncodeToString
		hdr := enc([]byte(`{"alg":"` + g.one("HS256", "RS256", "ES256") + `","typ":"JWT"}`))
		pay := enc(fmt.Appendf(nil, `{"sub":"%s","iat":%d}`, g.mixed(alnum, 12), 1700000000+g.r.IntN(1e7)))
		return hdr + "." + pay + "." + g.mixed(urlSafe, 43)
	},
	KindURLCredentials:  func(g fakeGen) string { return g.mixed(alnum, 16) },
	KindDatabaseURL:     func(g fakeGen) string { return g.mixed(alnum, 16) },
	KindPassword:        func(g fakeGen) string { return g.mixed(alnum, 4) + g.str(alnum+"!#%*-_+", 10) },
	KindSecret:          func(g fakeGen) string { return g.mixed(alnum, 32) },
	KindToken:           func(g fakeGen) string { return g.mixed(alnum, 32) },
	KindAPIKey:          func(g fakeGen) string { return g.mixed(alnum, 32) },
	KindAzureStorageKey: func(g fakeGen) string { return g.mixed(b64, 86) + "==" },
	KindAtlassianToken:  func(g fakeGen) string { return "ATATT3" + g.mixed(alnum+"_-", 186) },
	KindAzureADSecret:   func(g fakeGen) string { return g.mixed(alnum, 3) + g.str(digits, 1) + "Q~" + g.mixed(alnum+"_~.-", 34) },
	KindAzureSAS:        func(g fakeGen) string { return g.mixed(alnum, 30) + "%2B" + g.mixed(alnum, 10) + "%3D" },
	KindDatabricksToken: func(g fakeGen) string { return "dapi" + g.str(digits, 1) + g.str(hexLow, 31) },
	KindDigitalOcean: func(g fakeGen) string {
		return g.one("dop_v1_", "doo_v1_", "dor_v1_") + g.str(digits, 1) + g.str(hexLow, 63)
	},
	KindDiscordToken: func(g fakeGen) string {
		return g.one("MT", "Nz", "OD") + g.mixed(alnum, 24) + "." + g.mixed(urlSafe, 6) + "." + g.mixed(urlSafe, 38)
	},
	KindDopplerToken: func(g fakeGen) string { return "dp." + g.one("pt.", "st.", "sa.", "ct.") + g.mixed(alnum, 43) },
	KindGoogleOAuth: func(g fakeGen) string {
		if g.r.IntN(2) == 0 {
			return "1//0" + g.mixed(urlSafe, 100)
		}
		return "ya29." + g.mixed(urlSafe, 150)
	},
	KindGrafanaToken: func(g fakeGen) string {
		if g.r.IntN(2) == 0 {
			return "glsa_" + g.mixed(alnum, 32) + "_" + g.str(hexLow, 8)
		}
		return "glc_" + g.mixed(b64, 80) + "=="
	},
	KindHerokuKey:   func(g fakeGen) string { return "HRKU-AA" + g.mixed(urlSafe, 58) },
	KindLinearKey:   func(g fakeGen) string { return "lin_api_" + g.mixed(alnum, 40) },
	KindMailgunKey:  func(g fakeGen) string { return "key-" + g.str(digits, 1) + g.str(hexLow, 31) },
	KindNewRelicKey: func(g fakeGen) string { return g.one("NRAK-", "NRII-") + g.mixed(upper+digits, 27) },
	KindPostmanKey: func(g fakeGen) string {
		return "PMAK-" + g.str(digits, 1) + g.str(hexLow, 23) + "-" + g.str(hexLow, 34)
	},
	KindShopifyToken: func(g fakeGen) string {
		return g.one("shpat_", "shpss_", "shpca_", "shppa_") + g.str(digits, 1) + g.str(hexLow, 31)
	},
	KindTelegramToken: func(g fakeGen) string { return g.str("123456789", 1) + g.str(digits, 9) + ":A" + g.mixed(urlSafe, 34) },
	KindVaultToken:    func(g fakeGen) string { return g.one("hvs.", "hvb.") + g.mixed(urlSafe, 90) },
	KindBearerToken:   func(g fakeGen) string { return g.mixed(alnum, 20) + g.str(alnum+"-._~", 19) + g.str(alnum, 1) },
}

type fakeGen struct{ r *rand.Rand }

func (g fakeGen) one(choices ...string) string { return choices[g.r.IntN(len(choices))] }

func (g fakeGen) str(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return string(b)
}

// mixed is str with an upper, a lower and a digit in the first three places,
// so every fake has the character mix of a generated credential.
func (g fakeGen) mixed(alphabet string, n int) string {
	return g.str(upper, 1) + g.str(lowerAZ, 1) + g.str(digits, 1) + g.str(alphabet, n-3)
}

// contextRules are gitleaks rules whose regex describes a context rather
// than a token: a random walk of it gives no realistic text (any byte in a
// key body, a curl line without spaces). Their shapes are lines of
// secrets.txt, masked by the hand-written detectors.
var contextRules = map[string]string{
	"curl-auth-header":       "curl -H 'Authorization: Bearer ...' lines in secrets.txt (bearer-token)",
	"curl-auth-user":         "curl -u user:pass lines in secrets.txt (password)",
	"generic-api-key":        "key=value assignments in secrets.txt (api-key, secret, token, password)",
	"hashicorp-tf-password":  "password = \"...\" in secrets.txt (password)",
	"kubernetes-secret-yaml": "a Secret's data: values in secrets.txt (private-key|b64 under tls.key)",
	"freemius-secret-key":    "'secret_key' => '...' in secrets.txt (secret)",
	"private-key":            "PEM blocks in secrets.txt (private-key, whole, cut, numbered, split)",
	"sidekiq-sensitive-url":  "https://user:pass@host in secrets.txt (url-credentials: the password is masked, user and host kept)",
}

// gitleaksLines generates one secret line per alternative of every rule
// in testdata/gitleaks.toml and extra.toml: a fake drawn at random from the
// rule's own regex (a seeded walk of its syntax tree), put bare into a
// sentence, a JSON value or an env line for a token rule, or after a key
// that names the vendor for a keyword rule. The line's Kinds hold the rule
// id. Rules without a regex (a file-name rule) and the contextRules are
// skipped.
func gitleaksLines() ([]SecretLine, error) {
	var out []SecretLine
	for _, f := range ruleFiles {
		rules, err := readRules(f)
		if err != nil {
			return nil, err
		}
		for n, r := range rules {
			if _, ok := contextRules[r.ID]; ok || r.Regex == "" {
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
	}
	return out, nil
}

// secretGroup is the sub-expression of alternative alt that is the
// secret: the rule's secretGroup of its whole regex re, else alt's first
// capture (nil: none).
func (r rule) secretGroup(re, alt *syntax.Regexp) *syntax.Regexp {
	if r.SecretGroup > 0 {
		return capture(re, r.SecretGroup)
	}
	return capture(alt, 0)
}

// line is the secret line of alternative k of rule n: a fake after a key
// naming the vendor for a keyword rule, else the whole match put bare
// into a sentence, a JSON value or an env line.
func (r rule) line(n, k int, re, alt *syntax.Regexp) (SecretLine, bool) {
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
	return SecretLine{Line: n + 1, Text: text, Secrets: []string{sec}, Kinds: []Kind{Kind(r.ID)}}, true
}

// pick is one of the forms, in turn by i.
func pick(i int, forms ...string) string { return forms[i%len(forms)] }

// ruleFake draws a fake for the generated rule id from its regex's first
// alternative.
func ruleFake(id string, seed uint64) (string, error) {
	for _, f := range ruleFiles {
		rules, err := readRules(f)
		if err != nil {
			return "", err
		}
		for _, r := range rules {
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
	return "", fmt.Errorf("no rule %q in %v", id, ruleFiles)
}

// keywordOf returns the vendor keyword of a gitleaks keyword rule
// ([\w.-]{0,50}?(?:keyword)...=...(value)), or "".
func keywordOf(alt *syntax.Regexp) string {
	seq := flatten(alt, nil)
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
		if !terminator(re) { // a boundary group is the secret's surroundings
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

// count draws how many times a repeat runs.
func (w *walker) count(re *syntax.Regexp) int {
	lo, hi := repeatBounds(re)
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

// TestCorpusExport writes both corpora, expanded, and their figures as JSON
// to the file named by $CARRYOVER_REDACT_CORPUS. cmd/e2e's egress and
// reliability tests run it with `go test`, so the corpus has one generator.
// Without the variable it writes a temporary file and reads it back, so the
// export the e2e tests rely on is checked in every run.
func TestCorpusExport(t *testing.T) {
	out := os.Getenv("CARRYOVER_REDACT_CORPUS")
	check := out == ""
	if check {
		out = filepath.Join(t.TempDir(), "corpus.json")
	}
	var x struct {
		Lines, Gitleaks             []SecretLine
		Stats                       Stats
		GitleaksLeaks, Kinds, Rules int
	}
	var err error
	if x.Lines, err = secretLines(filepath.Join(corpusDir, "secrets.txt")); err != nil {
		t.Fatal(err)
	}
	if x.Gitleaks, err = gitleaksLines(); err != nil {
		t.Fatal(err)
	}
	if x.Stats, err = corpus(corpusDir); err != nil {
		t.Fatal(err)
	}
	for _, l := range x.Gitleaks {
		if leaked(l) {
			x.GitleaksLeaks++
		}
	}
	x.Kinds, x.Rules = len(Kinds()), len(GeneratedRules())
	b, err := json.Marshal(x)
	if err == nil {
		err = os.WriteFile(out, b, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
	if check {
		back, _ := os.ReadFile(out)
		var y struct{ Lines, Gitleaks []SecretLine }
		if err := json.Unmarshal(back, &y); err != nil || len(y.Lines) != len(x.Lines) || len(y.Gitleaks) != len(x.Gitleaks) || len(y.Lines) == 0 {
			t.Errorf("export does not read back: %v (%d/%d lines, %d/%d gitleaks)", err, len(y.Lines), len(x.Lines), len(y.Gitleaks), len(x.Gitleaks))
		}
	}
}
