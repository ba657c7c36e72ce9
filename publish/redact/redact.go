// Package redact finds and masks secrets in transcript text before carryover
// stores it (every ledger row) and again before any egress (handoff.md,
// clipboard, another vendor's context).
//
// Detection is a set of small typed detectors plus a table generated from
// rule data (gitleaks' config/gitleaks.toml, MIT, and gen/extra.toml; see
// gen.go and `go generate`): no regexp runs at redaction time. One pass over
// the input looks only at a handful of trigger bytes ('_', '-', '=', ':', '@',
// 'A', 'B', 'J', 'S', '.', '/', '~', 'w', 'k'), eight bytes per branch; a trigger whose neighbour byte
// cannot belong to a token is dropped inline, the rest run a hand-written check
// on the few bytes around them. There is no regexp at all, so text without
// secrets costs a table lookup per byte, a few calls per line, no allocation.
//
// Patterns were inspired by, and cross-checked against (rule sets read, no
// code copied):
//   - gitleaks config/gitleaks.toml (MIT, gitleaks/gitleaks@b58d3f1): the
//     prefixes and lengths of aws-access-token (AKIA|ASIA|ABIA|ACCA|A3T),
//     github-pat/oauth/app-token and github-fine-grained-pat, gitlab-pat,
//     slack-bot-token and slack-webhook-url, stripe-access-token
//     (sk|rk)_(live|test|prod)_, sendgrid-api-token, npm-access-token,
//     pypi-upload-token, twilio-api-key, jwt, private-key, gcp-api-key,
//     huggingface-access-token, anthropic-api-key, openai-api-key and
//     age-secret-key; and, added for the formats below,
//     digitalocean-pat/access-token/refresh-token (do[por]_v1_ + 64 hex),
//     shopify-access-token/shared-secret/custom-access-token/private-app
//     (shp(at|ss|ca|pa)_ + 32 hex), vault-service-token/batch-token
//     (hvs./hvb.), doppler-api-token (dp.pt. and its st/sa/ct siblings),
//     postman-api-token (PMAK-), linear-api-key (lin_api_ + 40),
//     atlassian-api-token (ATATT3 + 186), new-relic-user-api-key /
//     insert-key (NRAK-, NRII-), heroku-api-key-v2 (HRKU-), grafana
//     service-account and cloud tokens (glsa_, glc_), databricks-api-token
//     (dapi + 32 hex), mailgun-private-api-token / pub-key (key-, pubkey-,
//     here only beside "mailgun" or curl's "api:"), discord bot tokens,
//     telegram-bot-api-token (digits:A + 34), azure-ad-client-secret
//     (...\dQ~...), gcp refresh and access tokens (1//0, ya29.) and
//     putty-private-key.
//   - trufflehog pkg/detectors/uri (AGPL, trufflesecurity/trufflehog@05a5fc1):
//     scheme://user:pass@host with only the password masked, and its rule that
//     a password starting with '$' is a variable.
//   - detect-secrets detect_secrets/plugins/keyword.py (Apache-2.0,
//     Yelp/detect-secrets@010e929): the keyword list for assignments
//     (password, passwd, secret, token, api_key, private_key, ...) and its
//     FALSE_POSITIVES idea (string, null, <redacted>, dummy, replace, ...).
//   - Azure storage connection strings (AccountKey=...) follow Microsoft's
//     documented format.
//
// Beyond formats and assignments, three context detectors read a command
// line or a sentence: flags (--password X, --token X, mysql -pX, sshpass -p
// X, docker login -p X, curl -u user:X; flags.go), secrets stated in words
// ("my db password is X", "the api key is X", "pw: X", a .netrc's "password
// X", "aws configure set <key> X"; prose.go), and key blocks whose END line
// is missing, read through line-number prefixes and string-literal glue
// (block.go). Triggers were added for them ('.', '/', '~', and 'w'/'k' after
// the letters of pw/password/token/key) with neighbour filters, so clean
// text still costs a table lookup per byte; "dapi" has no trigger byte and
// is found with strings.Index.
//
// Assignments keep the key name and mask only the value:
// password=hunter2 becomes password=[REDACTED:password]. A value is left alone
// when it is clearly not a literal secret: a variable or call
// (os.Getenv("X"), tokenize(x), cfg.Password), an environment or template
// reference (${SECRET}, $TOKEN, {{ .Token }}), a placeholder (xxx, ***, ...,
// <your-token>, changeme, your_api_key, EXAMPLE), a type name (string, str),
// a boolean, null or number, a value equal to its key, and prose
// ("Password: Must be at least 8 characters"). URL passwords equal to the user
// name (postgres:postgres@localhost) are treated as local defaults. See
// placeholder.go for the full list.
//
// Every result is non-overlapping and sorted; [String] is idempotent and never
// leaves anything [Find] would match.
package redact

import (
	"slices"
	"strings"
)

// Kind names what a [Match] found. It appears in the replacement text
// "[REDACTED:<kind>]".
type Kind string

// The detector kinds. Specific kinds (one vendor's token format) win over the
// generic ones (password, secret, token, api-key, bearer-token,
// url-credentials, database-url) when both match the same text.
const (
	KindAWSAccessKeyID   Kind = "aws-access-key-id"
	KindAWSSecret        Kind = "aws-secret"
	KindAgeSecretKey     Kind = "age-secret-key"
	KindAnthropicKey     Kind = "anthropic-key"
	KindAPIKey           Kind = "api-key"
	KindAzureStorageKey  Kind = "azure-storage-key"
	KindBearerToken      Kind = "bearer-token"
	KindDatabaseURL      Kind = "database-url"
	KindGitHubToken      Kind = "github-token"
	KindGitLabToken      Kind = "gitlab-token"
	KindGoogleAPIKey     Kind = "google-api-key"
	KindHuggingFaceToken Kind = "huggingface-token"
	KindJWT              Kind = "jwt"
	KindNPMToken         Kind = "npm-token"
	KindOpenAIKey        Kind = "openai-key"
	KindPassword         Kind = "password"
	KindPrivateKey       Kind = "private-key"
	KindPyPIToken        Kind = "pypi-token"
	KindSecret           Kind = "secret"
	KindSendGridKey      Kind = "sendgrid-key"
	KindSlackToken       Kind = "slack-token"
	KindSlackWebhook     Kind = "slack-webhook"
	KindStripeKey        Kind = "stripe-key"
	KindToken            Kind = "token"
	KindTwilioKey        Kind = "twilio-key"
	KindURLCredentials   Kind = "url-credentials"

	KindAtlassianToken  Kind = "atlassian-token"
	KindAzureADSecret   Kind = "azure-ad-secret"
	KindAzureSAS        Kind = "azure-sas"
	KindDatabricksToken Kind = "databricks-token"
	KindDigitalOcean    Kind = "digitalocean-token"
	KindDiscordToken    Kind = "discord-token"
	KindDopplerToken    Kind = "doppler-token"
	KindGoogleOAuth     Kind = "google-oauth-token"
	KindGrafanaToken    Kind = "grafana-token"
	KindHerokuKey       Kind = "heroku-key"
	KindLinearKey       Kind = "linear-key"
	KindMailgunKey      Kind = "mailgun-key"
	KindNewRelicKey     Kind = "newrelic-key"
	KindPostmanKey      Kind = "postman-key"
	KindShopifyToken    Kind = "shopify-token"
	KindTelegramToken   Kind = "telegram-token"
	KindVaultToken      Kind = "vault-token"
)

var allKinds = []Kind{
	KindAWSAccessKeyID, KindAWSSecret, KindAgeSecretKey, KindAnthropicKey, KindAPIKey,
	KindAzureStorageKey, KindBearerToken, KindDatabaseURL, KindGitHubToken, KindGitLabToken,
	KindGoogleAPIKey, KindHuggingFaceToken, KindJWT, KindNPMToken, KindOpenAIKey,
	KindPassword, KindPrivateKey, KindPyPIToken, KindSecret, KindSendGridKey,
	KindSlackToken, KindSlackWebhook, KindStripeKey, KindToken, KindTwilioKey,
	KindURLCredentials,
	KindAtlassianToken, KindAzureADSecret, KindAzureSAS, KindDatabricksToken, KindDigitalOcean,
	KindDiscordToken, KindDopplerToken, KindGoogleOAuth, KindGrafanaToken, KindHerokuKey,
	KindLinearKey, KindMailgunKey, KindNewRelicKey, KindPostmanKey, KindShopifyToken,
	KindTelegramToken, KindVaultToken,
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

// rank orders kinds for a merged match: a hand-written vendor kind (2) wins
// over a generated one (1), which wins over a generic kind (0).
func rank(k Kind) int {
	switch {
	case generic(k):
		return 0
	case slices.Contains(allKinds, k):
		return 2
	}
	return 1
}

// Kinds returns every detector kind, sorted.
func Kinds() []Kind {
	ks := slices.Clone(allKinds)
	slices.Sort(ks)
	return ks
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
