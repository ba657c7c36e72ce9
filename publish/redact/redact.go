// Package redact finds and masks secrets in transcript text before carryover
// stores it (every ledger row) and again before any egress (handoff.md,
// clipboard, another vendor's context).
//
// Vendor token formats are data: gitleaks' rule file (MIT,
// gitleaks/gitleaks@b58d3f1) and ours in testdata/extra.toml, reduced by
// TestRulesGenerated to rules_gen.go (gen.go matches it). Hand-written
// detectors cover what a literal plus a byte set cannot: assignments and
// headers (assign.go), URL credentials, flags and secrets stated in words
// (prose.go), PEM/PuTTY key blocks, cut or behind line numbers, and base64
// of them (block.go), and the formats that need context (Twilio, Mailgun,
// Discord, Telegram, Slack webhooks; tokens.go). No regexp runs: one pass
// looks only at trigger bytes, eight bytes per branch, and drops a trigger
// whose neighbour cannot belong to a token (scan.go), so text without
// secrets costs a table lookup per byte and no allocation.
//
// Rule sets read, no code copied: trufflehog pkg/detectors/uri (AGPL,
// @05a5fc1: user:pass@host masks only the password; a '$' password is a
// variable) and detect-secrets plugins/keyword.py (Apache-2.0, @010e929:
// the assignment keywords and its FALSE_POSITIVES idea). Azure storage
// connection strings follow Microsoft's documented format.
//
// Assignments keep the key name and mask only the value (password=hunter2
// becomes password=[REDACTED:password]); a value that is a variable, call,
// reference, placeholder, type name, boolean, number, its own key or prose
// is left alone (placeholder.go). Every result is non-overlapping and
// sorted; [String] is idempotent and never leaves anything [Find] would
// match.
package redact

import (
	"slices"
	"strings"
)

// Kind names what a [Match] found. It appears in the replacement text
// "[REDACTED:<kind>]": one of [Kinds] or a generated rule's id.
type Kind string

// The kinds the hand-written detectors report. The generic ones (password,
// secret, token, api-key, bearer-token, url-credentials, database-url) lose
// to a vendor kind covering the same bytes.
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

// generic reports whether k comes from a context detector rather than a
// vendor token format; a specific kind wins when both cover the same bytes.
func generic(k Kind) bool {
	switch k {
	case KindPassword, KindSecret, KindToken, KindAPIKey, KindBearerToken,
		KindURLCredentials, KindDatabaseURL:
		return true
	}
	return false
}

// rank orders kinds for a merged match: one of carryover's vendor kinds
// (2) wins over a gitleaks rule's (1), which wins over a generic kind (0).
func rank(k Kind) int {
	switch {
	case generic(k):
		return 0
	case slices.Contains(allKinds, k):
		return 2
	}
	return 1
}

// Match is one secret: s[Start:End] is the sensitive part (for an assignment,
// only the value).
type Match struct {
	Kind       Kind
	Start, End int
}

// Find returns the secrets in s, non-overlapping and sorted by Start. It
// returns nil when there are none. It never panics, whatever the input.
func Find(s string) []Match {
	var ms []Match
	genericEnd := 0
	for i := 0; i < len(s); i++ {
		i = skipCold(s, i)
		if i >= len(s) {
			break
		}
		c := s[i] // past the neighbour filters (skipCold)
		switch c {
		case 'w', 'k':
			if _, ok := proseShape(s, i); !ok {
				continue
			}
		}
		m, ok := detect(s, i, i < genericEnd)
		if !ok {
			continue
		}
		ms = append(ms, m)
		if m.Kind == KindAWSAccessKeyID {
			if m2, ok := awsPairedSecret(s, m.End); ok {
				ms = append(ms, m2)
				i = m2.End - 1
				continue
			}
		}
		// Skip over a vendor token; keep scanning inside a generic match so a
		// token in an assignment's value still gets its specific kind.
		if generic(m.Kind) || rank(m.Kind) < 2 && (c == '=' || c == ':') {
			// A generic match, or a generated keyword rule's value: a
			// vendor format inside it still gets its own kind.
			genericEnd = max(genericEnd, m.End)
		} else if m.End > i+1 {
			i = m.End - 1
		}
	}
	ms = needleMatches(s, ms)
	return resolve(ms)
}

// resolve sorts ms and merges overlaps. A merged match keeps the most
// specific kind.
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

const (
	markerPrefix = "[REDACTED:"
	maxRounds    = 8
)

// String returns s with each match replaced by "[REDACTED:<kind>]".
// String(String(s)) == String(s). When s has no secret, s itself is returned
// without allocating.
func String(s string) string {
	ms := Find(s)
	for round := 0; len(ms) > 0 && round < maxRounds; round++ {
		s = replace(s, ms)
		ms = Find(s)
	}
	return s
}

func replace(s string, ms []Match) string {
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
	return b.String()
}

// ClipReach is how far past a cut [Clip] reads to find a secret that the cut
// would split. 4 KB covers every token and assignment value the detectors
// accept whole (maxRun, maxValueLen) and a PEM RSA-4096 key with line-number
// prefixes (~3.7 KB); a longer key block is still seen crossing the cut,
// because a block without its END line runs to the end of its body. A caller
// that holds only a prefix of a long text (the Claude decoder unquotes no
// more than it needs) must give Clip at least n+ClipReach bytes of it.
const ClipReach = 4 << 10

// Clip cuts s to at most n bytes, on a rune boundary, marking the cut with
// "…". It never keeps part of a secret: half a secret is something Find can
// no longer recognise, so a later redaction would let it through. A secret
// that crosses the cut, as Find sees it in s[:n+ClipReach] (the whole text
// as far as any secret can reach), is dropped whole, so clipping before
// redacting keeps exactly what redacting the whole text and then clipping
// would keep, minus the redaction markers. A cut inside a word drops the
// partial word too. Every package clips through here. The result depends
// only on s[:n+ClipReach].
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && cut < len(s) && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	for _, m := range Find(s[:min(len(s), cut+ClipReach)]) {
		if m.Start >= cut {
			break
		}
		if m.End > cut {
			cut = secretStart(s, m)
			break
		}
	}
	if cut < len(s) && !isSpaceByte(s[cut]) {
		lo := max(0, cut-256)
		if k := strings.LastIndexAny(s[lo:cut], " \n\t\r"); k >= 0 {
			cut = lo + k + 1 // the word starts here
		} else if cut < 256 {
			cut = 0 // or the text does
		}
	}
	return strings.TrimRight(s[:cut], " \t\r\n") + "…"
}

// secretStart is where the cut goes for a match that crosses it: the match
// start, moved back over an opening quote so that no dangling quote is left.
func secretStart(s string, m Match) int {
	return skipBack(s, m.Start, 0, "\"'`")
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }
