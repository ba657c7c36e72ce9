// Package redacttest holds the measurement corpus of publish/redact: the
// expansion of testdata/redact/secrets.txt into deterministic fake secrets,
// the leak check and the false-positive count. It is test support only (the
// redact tests, the e2e egress test and the README's reliability figures use
// it); no production package imports it.
package redacttest

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/carryover/carryover/publish/redact"
)

// The measurement corpus lives in testdata/redact:
//
//	secrets.txt  one secret-bearing line per row, with each secret written as
//	             a template {{kind}} or {{kind|json}}; Corpus expands it into a
//	             deterministic fake, so the file itself holds no secret-shaped
//	             strings. Blank lines and lines starting with "# " are skipped.
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
	Line    int           // 1-based line in secrets.txt
	Text    string        // the line with its templates expanded
	Secrets []string      // the fakes inserted, in order
	Kinds   []redact.Kind // the template kind of each fake
}

// Corpus measures String on the corpus in dir (testdata/redact).
func Corpus(dir string) (Stats, error) {
	var st Stats
	lines, err := SecretLines(filepath.Join(dir, "secrets.txt"))
	if err != nil {
		return st, err
	}
	kinds := map[redact.Kind]bool{}
	for _, l := range lines {
		st.SecretLines++
		for _, k := range l.Kinds {
			if slices.Contains(redact.Kinds(), k) {
				kinds[k] = true // a {{rule:<id>}} line counts in the gitleaks figures
			}
		}
		if Leaked(l) {
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
			if redact.String(l) != l {
				st.FalsePositives++
			}
		}
	}
	return st, nil
}

// Leaked reports whether redact.String(l.Text) still contains any 12-byte piece of
// one of l.Secrets (or a whole secret shorter than that).
func Leaked(l SecretLine) bool {
	out := StripMarkers(redact.String(l.Text))
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

// StripMarkers removes the "[REDACTED:<kind>]" markers, whose kind names
// (aws-amazon-bedrock-api-key-...) may share 12 bytes with a secret.
func StripMarkers(s string) string {
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

// SecretLines reads and expands a secrets.txt template file.
func SecretLines(path string) ([]SecretLine, error) {
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
		l, err := expand(t, n, filepath.Join(filepath.Dir(path), "..", "..", "publish", "redact", "gen"))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, l)
	}
	return out, sc.Err()
}

func expand(t string, n int, genDir string) (SecretLine, error) {
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
		k := redact.Kind(name)
		h := fnv.New64a()
		fmt.Fprintf(h, "%s/%d/%d", k, n, len(l.Secrets))
		var sec string
		if id, ok := strings.CutPrefix(name, "rule:"); ok {
			// {{rule:<id>}}: a fake drawn from a generated rule's regex.
			k = redact.Kind(id)
			var err error
			if sec, err = RuleFake(genDir, id, h.Sum64()); err != nil {
				return l, err
			}
		} else {
			if !slices.Contains(redact.Kinds(), k) {
				return l, fmt.Errorf("unknown kind %q in template (known: %v)", name, redact.Kinds())
			}
			sec = Fake(k, h.Sum64())
			if sec == "" {
				return l, fmt.Errorf("no fake generator for kind %q; add one to Fake", k)
			}
		}
		for _, m := range strings.Split(mod, "+") {
			if m == "" {
				continue
			}
			f, ok := modifiers[m]
			if !ok {
				return l, fmt.Errorf("unknown template modifier %q (known: json, numbered, catn, noend, nobegin, literals, b64, b64wrap, putty, letters, lead1, lead2, lead3)", m)
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
//	putty     the body of a PEM block as a PuTTY .ppk file
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
	"lead1": func(s string) string { return "\n" + s },
	"lead2": func(s string) string { return "\r\n" + s },
	"lead3": func(s string) string { return "# key\n" + s },
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

// Fake returns a deterministic fake secret of kind k for seed; it has the
// shape of the real thing but is random. Every call with the same
// arguments returns the same string. It returns "" for an unknown kind.
func Fake(k redact.Kind, seed uint64) string {
	if f, ok := fakes[k]; ok {
		return f(gen{rand.New(rand.NewPCG(seed, 0x5eed))})
	}
	return ""
}

// fakes draws the fake of each kind.
var fakes = map[redact.Kind]func(g gen) string{
	redact.KindAWSAccessKeyID: func(g gen) string { return g.one("AKIA", "ASIA") + g.str(upper+"234567", 16) },
	redact.KindAWSSecret:      func(g gen) string { return g.mixed(b64, 40) },
	redact.KindAgeSecretKey:   func(g gen) string { return "AGE-SECRET-KEY-1" + g.str(bech32, 58) },
	redact.KindAnthropicKey: func(g gen) string {
		return "sk-ant-" + g.one("api03-", "admin01-", "oat01-") + g.mixed(urlSafe, 93) + "AA"
	},
	redact.KindOpenAIKey: func(g gen) string { return g.one("sk-proj-", "sk-svcacct-", "sk-") + g.mixed(alnum, 48) },
	redact.KindGitHubToken: func(g gen) string {
		if g.r.IntN(6) == 0 {
			return "github_pat_" + g.mixed(alnum, 22) + "_" + g.mixed(alnum, 59)
		}
		return g.one("ghp_", "gho_", "ghu_", "ghs_", "ghr_") + g.mixed(alnum, 36)
	},
	redact.KindGitLabToken:  func(g gen) string { return "glpat-" + g.mixed(urlSafe, 20) },
	redact.KindGoogleAPIKey: func(g gen) string { return "AIza" + g.mixed(urlSafe, 35) },
	redact.KindStripeKey:    func(g gen) string { return g.one("sk_live_", "rk_live_", "sk_test_", "whsec_") + g.mixed(alnum, 32) },
	redact.KindSlackToken: func(g gen) string {
		return g.one("xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-") + g.str(digits, 12) + "-" + g.str(digits, 13) + "-" + g.mixed(alnum, 24)
	},
	redact.KindSlackWebhook: func(g gen) string {
		return "T" + g.str(upper+digits, 8) + "/B" + g.str(upper+digits, 10) + "/" + g.mixed(alnum, 24)
	},
	redact.KindTwilioKey:        func(g gen) string { return g.one("SK", "AC") + "9" + g.str(hexLow, 31) },
	redact.KindSendGridKey:      func(g gen) string { return "SG." + g.mixed(urlSafe, 22) + "." + g.mixed(urlSafe, 43) },
	redact.KindNPMToken:         func(g gen) string { return "npm_" + g.mixed(alnum, 36) },
	redact.KindPyPIToken:        func(g gen) string { return "pypi-AgEIcHlwaS5vcmc" + g.mixed(urlSafe, 70) },
	redact.KindHuggingFaceToken: func(g gen) string { return "hf_" + g.mixed(upper+lowerAZ, 34) },
	redact.KindPrivateKey: func(g gen) string {
		label := g.one("RSA ", "EC ", "OPENSSH ", "", "ENCRYPTED ", "DSA ")
		var b strings.Builder
		b.WriteString("-----BEGIN " + label + "PRIVATE KEY-----\n")
		for range 5 {
			b.WriteString(g.mixed(b64, 64) + "\n")
		}
		b.WriteString(g.mixed(b64, 20) + "==\n-----END " + label + "PRIVATE KEY-----")
		return b.String()
	},
	redact.KindJWT: func(g gen) string {
		enc := base64.RawURLEncoding.EncodeToString
		hdr := enc([]byte(`{"alg":"` + g.one("HS256", "RS256", "ES256") + `","typ":"JWT"}`))
		pay := enc(fmt.Appendf(nil, `{"sub":"%s","iat":%d}`, g.mixed(alnum, 12), 1700000000+g.r.IntN(1e7)))
		return hdr + "." + pay + "." + g.mixed(urlSafe, 43)
	},
	redact.KindURLCredentials:  func(g gen) string { return g.mixed(alnum, 16) },
	redact.KindDatabaseURL:     func(g gen) string { return g.mixed(alnum, 16) },
	redact.KindPassword:        func(g gen) string { return g.mixed(alnum, 4) + g.str(alnum+"!#%*-_+", 10) },
	redact.KindSecret:          func(g gen) string { return g.mixed(alnum, 32) },
	redact.KindToken:           func(g gen) string { return g.mixed(alnum, 32) },
	redact.KindAPIKey:          func(g gen) string { return g.mixed(alnum, 32) },
	redact.KindAzureStorageKey: func(g gen) string { return g.mixed(b64, 86) + "==" },
	redact.KindAtlassianToken:  func(g gen) string { return "ATATT3" + g.mixed(alnum+"_-", 186) },
	redact.KindAzureADSecret:   func(g gen) string { return g.mixed(alnum, 3) + g.str(digits, 1) + "Q~" + g.mixed(alnum+"_~.-", 34) },
	redact.KindAzureSAS:        func(g gen) string { return g.mixed(alnum, 30) + "%2B" + g.mixed(alnum, 10) + "%3D" },
	redact.KindDatabricksToken: func(g gen) string { return "dapi" + g.str(digits, 1) + g.str(hexLow, 31) },
	redact.KindDigitalOcean: func(g gen) string {
		return g.one("dop_v1_", "doo_v1_", "dor_v1_") + g.str(digits, 1) + g.str(hexLow, 63)
	},
	redact.KindDiscordToken: func(g gen) string {
		return g.one("MT", "Nz", "OD") + g.mixed(alnum, 24) + "." + g.mixed(urlSafe, 6) + "." + g.mixed(urlSafe, 38)
	},
	redact.KindDopplerToken: func(g gen) string { return "dp." + g.one("pt.", "st.", "sa.", "ct.") + g.mixed(alnum, 43) },
	redact.KindGoogleOAuth: func(g gen) string {
		if g.r.IntN(2) == 0 {
			return "1//0" + g.mixed(urlSafe, 100)
		}
		return "ya29." + g.mixed(urlSafe, 150)
	},
	redact.KindGrafanaToken: func(g gen) string {
		if g.r.IntN(2) == 0 {
			return "glsa_" + g.mixed(alnum, 32) + "_" + g.str(hexLow, 8)
		}
		return "glc_" + g.mixed(b64, 80) + "=="
	},
	redact.KindHerokuKey:   func(g gen) string { return "HRKU-AA" + g.mixed(urlSafe, 58) },
	redact.KindLinearKey:   func(g gen) string { return "lin_api_" + g.mixed(alnum, 40) },
	redact.KindMailgunKey:  func(g gen) string { return "key-" + g.str(digits, 1) + g.str(hexLow, 31) },
	redact.KindNewRelicKey: func(g gen) string { return g.one("NRAK-", "NRII-") + g.mixed(upper+digits, 27) },
	redact.KindPostmanKey:  func(g gen) string { return "PMAK-" + g.str(digits, 1) + g.str(hexLow, 23) + "-" + g.str(hexLow, 34) },
	redact.KindShopifyToken: func(g gen) string {
		return g.one("shpat_", "shpss_", "shpca_", "shppa_") + g.str(digits, 1) + g.str(hexLow, 31)
	},
	redact.KindTelegramToken: func(g gen) string { return g.str("123456789", 1) + g.str(digits, 9) + ":A" + g.mixed(urlSafe, 34) },
	redact.KindVaultToken:    func(g gen) string { return g.one("hvs.", "hvb.") + g.mixed(urlSafe, 90) },
	redact.KindBearerToken:   func(g gen) string { return g.mixed(alnum, 20) + g.str(alnum+"-._~", 19) + g.str(alnum, 1) },
}

type gen struct{ r *rand.Rand }

func (g gen) one(choices ...string) string { return choices[g.r.IntN(len(choices))] }

func (g gen) str(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return string(b)
}

// mixed is str with an upper, a lower and a digit in the first three places,
// so every fake has the character mix of a generated credential.
func (g gen) mixed(alphabet string, n int) string {
	return g.str(upper, 1) + g.str(lowerAZ, 1) + g.str(digits, 1) + g.str(alphabet, n-3)
}
