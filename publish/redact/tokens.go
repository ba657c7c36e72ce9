package redact

// Vendor token formats: a fixed prefix, a delimiter and a random body. Each
// detector is triggered by the delimiter (or first letter) and checks the
// prefix behind it, so most trigger hits cost two or three comparisons.

// tokenRule is one vendor format with a fixed prefix before its delimiter:
// prefix + need (which starts with the delimiter) + a random body of at
// least min bytes of set, starting from bytes after the delimiter (default:
// len(need)). check, when set, must accept the body.
type tokenRule struct {
	prefix, need string
	from         int
	set          class
	min          int
	kind         Kind
	check        func(string) bool
}

// underscoreRules and dashRules hold the formats delimited by '_' and '-',
// indexed by the prefix's last byte: a trigger compares only the few
// prefixes that end in the byte before it. A prefix must start on a word
// boundary. The first rule whose prefix and need match decides.
var underscoreRules, dashRules [256][]tokenRule

func init() {
	under := []tokenRule{
		{prefix: "github_pat", set: setWord, min: 22, kind: KindGitHubToken},
		{prefix: "npm", set: setAlnum, min: 36, kind: KindNPMToken},
		{prefix: "hf", set: setAlnum, min: 30, kind: KindHuggingFaceToken},
		{prefix: "whsec", set: setAlnum, min: 24, kind: KindStripeKey},
		{prefix: "shpat", set: setAlnum, min: 32, kind: KindShopifyToken},
		{prefix: "shpss", set: setAlnum, min: 32, kind: KindShopifyToken},
		{prefix: "shpca", set: setAlnum, min: 32, kind: KindShopifyToken},
		{prefix: "shppa", set: setAlnum, min: 32, kind: KindShopifyToken},
		{prefix: "glc", set: setBase64, min: 32, kind: KindGrafanaToken},
		{prefix: "glsa", set: setWord, min: 32, kind: KindGrafanaToken},
		{prefix: "lin_api", set: setAlnum, min: 40, kind: KindLinearKey},
	}
	for _, c := range "pousr" { // gh[pousr]_
		under = append(under, tokenRule{prefix: "gh" + string(c), set: setWord, min: 30, kind: KindGitHubToken})
	}
	for _, c := range "por" { // do[por]_v1_
		under = append(under, tokenRule{prefix: "do" + string(c), need: "_v1_", set: setHexLower, min: 64, kind: KindDigitalOcean})
	}
	for _, p := range []string{"sk", "rk"} { // (sk|rk)_(live|test|prod)_
		for _, env := range []string{"_live_", "_test_", "_prod_"} {
			under = append(under, tokenRule{prefix: p, need: env, set: setAlnum, min: 16, kind: KindStripeKey})
		}
	}
	dash := []tokenRule{
		{prefix: "PMAK", set: setSlackTok, min: 50, kind: KindPostmanKey},
		{prefix: "HRKU", set: setURLSafe, min: 40, kind: KindHerokuKey},
		{prefix: "sk", need: "-ant-", set: setURLSafe, min: 32, kind: KindAnthropicKey},
		{prefix: "sk", set: setURLSafe, min: 20, kind: KindOpenAIKey, check: mixed},
		{prefix: "xapp", set: setSlackTok, min: 20, kind: KindSlackToken},
		{prefix: "glpat", set: setURLSafe, min: 20, kind: KindGitLabToken},
		{prefix: "glptt", set: setURLSafe, min: 20, kind: KindGitLabToken},
		{prefix: "gldt", set: setURLSafe, min: 20, kind: KindGitLabToken},
		{prefix: "glrt", set: setURLSafe, min: 20, kind: KindGitLabToken},
		{prefix: "pypi", need: "-AgE", from: 1, set: setURLSafe, min: 50, kind: KindPyPIToken},
		{prefix: "AGE", need: "-SECRET-KEY-1", set: setUpperNum, min: 50, kind: KindAgeSecretKey},
	}
	for _, t := range []string{"AK", "II", "JS", "AA"} { // NRAK-, NRII-, ...
		dash = append(dash, tokenRule{prefix: "NR" + t, set: setURLSafe, min: 19, kind: KindNewRelicKey})
	}
	for _, c := range "abeoprs" { // xox[abeoprs]-
		dash = append(dash, tokenRule{prefix: "xox" + string(c), set: setSlackTok, min: 10, kind: KindSlackToken, check: hasDigit})
	}
	index(&underscoreRules, under, "_")
	index(&dashRules, dash, "-")
}

func index(t *[256][]tokenRule, rules []tokenRule, delim string) {
	for _, r := range rules {
		if r.need == "" {
			r.need = delim
		}
		if r.from == 0 {
			r.from = len(r.need)
		}
		c := r.prefix[len(r.prefix)-1]
		t[c] = append(t[c], r)
	}
}

// prefixToken matches the rules of the delimiter at s[i].
func prefixToken(s string, i int, rules *[256][]tokenRule) (Match, bool) {
	rs := rules[s[i-1]]
	for k := range rs {
		r := &rs[k]
		start := i - len(r.prefix)
		if !hasSuffixAt(s, i, r.prefix) || !boundary(s, start) || !hasPrefixAt(s, i, r.need) {
			continue
		}
		m, ok := body(s, start, i+r.from, r.set, r.min, r.kind)
		if ok && r.check != nil && !r.check(s[i+r.from:m.End]) {
			return Match{}, false
		}
		return m, ok
	}
	return Match{}, false
}

// underscoreToken handles '_'-delimited prefixes: gh[pousr]_, github_pat_,
// npm_, hf_, (sk|rk)_(live|test|prod)_, whsec_ and the others of
// underscoreRules.
func underscoreToken(s string, i int) (Match, bool) {
	return prefixToken(s, i, &underscoreRules)
}

// dashToken handles '-'-delimited prefixes (glpat-, sk-, xox?-, pypi-,
// AGE-SECRET-KEY-1 and the others of dashRules), private key blocks,
// flags, mailgun's key- and PuTTY key files.
func dashToken(s string, i int) (Match, bool) {
	switch s[i-1] {
	case ' ', '\t':
		return shortFlag(s, i)
	case 'y':
		if hasSuffixAt(s, i, "key") {
			return mailgun(s, i)
		}
		return Match{}, false
	case 'Y':
		if hasSuffixAt(s, i, "PuTTY") && hasPrefixAt(s, i, "-User-Key-File-") {
			return puttyKey(s, i-5)
		}
		return Match{}, false
	case '-':
		return doubleDash(s, i)
	}
	return prefixToken(s, i, &dashRules)
}

// doubleDash handles a dash after a dash: a -----BEGIN or -----END line
// (triggered on its second dash) or a --long flag.
func doubleDash(s string, i int) (Match, bool) {
	if i == 1 || s[i-2] != '-' {
		if hasPrefixAt(s, i-1, "-----BEGIN ") {
			return privateKey(s, i-1)
		}
		if hasPrefixAt(s, i-1, "-----END ") {
			return privateKeyTail(s, i-1) // a key whose BEGIN was in another read
		}
	}
	if i < 2 || flagStart[s[i-2]] {
		return longFlag(s, i+1)
	}
	return Match{}, false
}

// upperAToken handles AWS access key ids, Google API keys and Twilio account
// SIDs.
func upperAToken(s string, i int) (Match, bool) {
	if !boundary(s, i) || len(s)-i < 20 {
		return Match{}, false
	}
	p := s[i : i+4]
	switch {
	case p == "AKIA" || p == "ASIA" || p == "ABIA" || p == "ACCA" || p[:3] == "A3T":
		e := run(s, i+4, setUpperNum)
		if e-i != 20 || !endBoundary(s, e) || containsFold(s[i:e], "example") {
			return Match{}, false
		}
		return Match{KindAWSAccessKeyID, i, e}, true
	case p == "ATAT" && hasPrefixAt(s, i, "ATATT3"):
		return body(s, i, i+6, setWebhook, 150, KindAtlassianToken)
	case p == "AIza":
		return body(s, i, i+4, setURLSafe, 35, KindGoogleAPIKey)
	case p[1] == 'C':
		return twilio(s, i)
	}
	return Match{}, false
}

// awsPairedSecret matches the secret access key that follows an access key
// id (credentials.csv's "id,secret", a pasted "id secret"): 40 base64
// bytes, after at most a few separators on the same line; e is the end of
// the key id.
func awsPairedSecret(s string, e int) (Match, bool) {
	p := e
	for p < len(s) && p-e < 8 && isOneOf(s[p], " \t,;:|=\"'") {
		p++
	}
	if p == e || p >= len(s) || !boundary(s, p) {
		return Match{}, false
	}
	q := run(s, p, setBase64)
	v := s[p:q]
	if len(v) != 40 || !endBoundary(s, q) || !mixed(v) || isPlaceholder(v) {
		return Match{}, false
	}
	return Match{KindAWSSecret, p, q}, true
}

// upperSToken handles Twilio API key SIDs (SK + 32 hex) and SendGrid keys
// (SG.<22>.<43>).
func upperSToken(s string, i int) (Match, bool) {
	if !boundary(s, i) || len(s)-i < 20 {
		return Match{}, false
	}
	switch s[i+1] {
	case 'K':
		return twilio(s, i)
	case 'G':
		if s[i+2] != '.' {
			return Match{}, false
		}
		e1 := run(s, i+3, setURLSafe)
		if e1-(i+3) < 16 || e1 >= len(s) || s[e1] != '.' {
			return Match{}, false
		}
		e2 := run(s, e1+1, setURLSafe)
		if e2-(e1+1) < 16 {
			return Match{}, false
		}
		return Match{KindSendGridKey, i, runAll(s, e2, setURLSafe)}, true
	}
	return Match{}, false
}

// twilio matches SK/AC + 32 lowercase hex when "twilio" appears within the
// 256 bytes before it (the format alone collides with hex ids).
func twilio(s string, i int) (Match, bool) {
	e := run(s, i+2, setHexLower)
	if e-(i+2) != 32 || !endBoundary(s, e) || !hasDigit(s[i+2:e]) {
		return Match{}, false
	}
	if !containsFold(s[max(0, i-256):i], "twilio") {
		return Match{}, false
	}
	return Match{KindTwilioKey, i, e}, true
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
	e := run(s, i+1, setHexLower)
	if e-(i+1) != 32 || !endBoundary(s, e) || !hasDigit(s[i+1:e]) {
		return Match{}, false
	}
	if !hasSuffixAt(s, start, "api:") && !containsFold(s[max(0, start-256):start], "mailgun") {
		return Match{}, false
	}
	return Match{KindMailgunKey, start, e}, true
}

// dotToken handles '.'-delimited formats: Vault hvs./hvb., Doppler
// dp.<type>., Google OAuth ya29. access tokens and Discord bot tokens
// (<base64 user id>.<6>.<27-38>). There is no neighbour filter for '.', so
// each check starts with one or two byte comparisons.
func dotToken(s string, i int) (Match, bool) {
	if i < 2 || i+1 >= len(s) || classes[s[i+1]]&setURLSafe == 0 {
		return Match{}, false
	}
	switch s[i-1] {
	case 's', 'b':
		if i >= 3 && s[i-3] == 'h' && s[i-2] == 'v' && boundary(s, i-3) {
			return body(s, i-3, i+1, setURLSafe, 24, KindVaultToken)
		}
	case 'p':
		if s[i-2] == 'd' && boundary(s, i-2) {
			return doppler(s, i)
		}
	case '9':
		if hasSuffixAt(s, i, "ya29") && boundary(s, i-4) {
			return body(s, i-4, i+1, setURLSafe, 20, KindGoogleOAuth)
		}
	}
	return discord(s, i)
}

// doppler matches dp.<type>.<40+>, the '.' after dp at i.
func doppler(s string, i int) (Match, bool) {
	j := run(s, i+1, setAlnum)
	if n := j - (i + 1); n < 2 || n > 5 || j >= len(s) || s[j] != '.' {
		return Match{}, false
	}
	return body(s, i-2, j+1, setAlnum, 40, KindDopplerToken)
}

// discord matches a bot token, [MNO] + 23-27, '.', 6, '.', 27-38 url-safe
// bytes, triggered on its first dot.
func discord(s string, i int) (Match, bool) {
	if i < 24 || i+7 >= len(s) || s[i+7] != '.' {
		return Match{}, false // the middle part is exactly 6 bytes
	}
	for l := 24; l <= 28 && l <= i; l++ {
		t := i - l
		if !isOneOf(s[t], "MNO") || !boundary(s, t) {
			continue
		}
		if run(s, t, setURLSafe) != i || !mixed(s[t:i]) {
			return Match{}, false
		}
		return discordTail(s, t, i)
	}
	return Match{}, false
}

// discordTail reads a Discord token's 6-byte middle part and its 27-38
// byte last part after its first dot at i.
func discordTail(s string, t, i int) (Match, bool) {
	e2 := run(s, i+1, setURLSafe)
	if e2-(i+1) != 6 || e2 >= len(s) || s[e2] != '.' {
		return Match{}, false
	}
	e3 := run(s, e2+1, setURLSafe)
	if n := e3 - (e2 + 1); n < 27 || n > 38 || !endBoundary(s, e3) {
		return Match{}, false
	}
	return Match{KindDiscordToken, t, e3}, true
}

// slashToken matches Google OAuth refresh tokens, 1//0<url-safe>, triggered
// on the first '/'.
func slashToken(s string, i int) (Match, bool) {
	if !hasPrefixAt(s, i, "//") || !boundary(s, i-1) {
		return Match{}, false
	}
	return body(s, i-1, i+2, setURLSafe, 40, KindGoogleOAuth)
}

// tildeToken matches Azure AD client secrets: 3 bytes, a digit, "Q~", then
// 31-34 of [A-Za-z0-9_~.-] (gitleaks azure-ad-client-secret).
func tildeToken(s string, i int) (Match, bool) {
	t := i - 5
	if !azureHead(s, t, i) {
		return Match{}, false
	}
	e := i + 1
	for e < len(s) && e-i <= 40 && (classes[s[e]]&(setURLSafe|cKey) != 0 || s[e] == '~') {
		e++
	}
	for e > i+32 && s[e-1] == '.' {
		e-- // the end of a sentence
	}
	if n := e - (i + 1); n < 31 || n > 34 || !mixed(s[i+1:e]) {
		return Match{}, false
	}
	return Match{KindAzureADSecret, t, e}, true
}

// azureHead reports whether s[t:i+1] is an Azure AD secret's head: 3
// bytes of a name, a digit and "Q~", not inside a longer name.
func azureHead(s string, t, i int) bool {
	if t < 0 || s[i-1] != 'Q' || classes[s[i-2]]&cDigit == 0 || t > 0 && (classes[s[t-1]]&setKeyName != 0 || s[t-1] == '~') {
		return false
	}
	for k := t; k < i-2; k++ {
		if classes[s[k]]&(setWord|cKey) == 0 && s[k] != '~' {
			return false
		}
	}
	return true
}

// databricks matches dapi<32 hex>, with an optional -<digit> suffix. "dapi"
// has no delimiter to trigger on, so Find looks for it with strings.Index.
func databricks(s string, p int) (Match, bool) {
	if !boundary(s, p) {
		return Match{}, false
	}
	e := run(s, p+4, setHexLower)
	if e-(p+4) != 32 || !hasDigit(s[p+4:e]) {
		return Match{}, false
	}
	if e+1 < len(s) && s[e] == '-' && classes[s[e+1]]&cDigit != 0 {
		e += 2
	}
	if !endBoundary(s, e) {
		return Match{}, false
	}
	return Match{KindDatabricksToken, p, e}, true
}

// telegram matches a bot token, <5-16 digits>:A<34 url-safe>; s[i] is the
// colon.
func telegram(s string, i int) (Match, bool) {
	t := i
	for t > 0 && i-t <= 16 && classes[s[t-1]]&cDigit != 0 {
		t--
	}
	if i-t < 5 || i-t > 16 || !boundary(s, t) && !hasSuffixAt(s, t, "/bot") || !hasPrefixAt(s, i+1, "A") {
		return Match{}, false
	}
	e := run(s, i+2, setURLSafe)
	if e-(i+2) != 34 || !endBoundary(s, e) || !mixed(s[i+2:e]) {
		return Match{}, false
	}
	return Match{KindTelegramToken, t, e}, true
}

// jwt matches eyJ<header>.ey<payload>.<signature>; triggered on the 'J'.
func jwt(s string, i int) (Match, bool) {
	start := i - 2
	if start < 0 || s[start] != 'e' || s[start+1] != 'y' || !boundary(s, start) {
		return Match{}, false
	}
	e1 := run(s, i+1, setURLSafe)
	if e1-start < 10 || e1+3 > len(s) || s[e1] != '.' || s[e1+1:e1+3] != "ey" {
		return Match{}, false
	}
	e2 := run(s, e1+3, setURLSafe)
	if e2-(e1+1) < 10 || e2 >= len(s) || s[e2] != '.' {
		return Match{}, false
	}
	e3 := run(s, e2+1, setURLSafe)
	if e3-(e2+1) < 8 {
		return Match{}, false
	}
	return Match{KindJWT, start, runAll(s, e3, setURLSafe)}, true
}

// slackWebhook masks the path of https://hooks.slack.com/services/..., keeping
// the host; h is the index just after "://".
func slackWebhook(s string, h int) (Match, bool) {
	if !hasPrefixAt(s, h, "hooks.slack.com/") {
		return Match{}, false
	}
	i := h + len("hooks.slack.com")
	var from int
	switch {
	case hasPrefixAt(s, i, "/services/"):
		from = i + 10
	case hasPrefixAt(s, i, "/workflows/"):
		from = i + 11
	case hasPrefixAt(s, i, "/triggers/"):
		from = i + 10
	default:
		return Match{}, false
	}
	e := run(s, from, setWebhook)
	if e-from < 20 || isPlaceholder(s[from:e]) {
		return Match{}, false
	}
	return Match{KindSlackWebhook, from, runAll(s, e, setWebhook)}, true
}

// body matches a token that starts at start, whose random part begins at from
// and is a run of set at least minLen long. Tokens that are visibly
// placeholders (xxxx, EXAMPLE) are not matched.
func body(s string, start, from int, set class, minLen int, k Kind) (Match, bool) {
	if from > len(s) {
		return Match{}, false
	}
	e := run(s, from, set)
	if e-from < minLen {
		return Match{}, false
	}
	b := s[from:e]
	if containsFold(b, "xxxx") || containsFold(b, "example") || allSame(b) && (b[0] == '0' || b[0] == 'x' || b[0] == 'X') {
		return Match{}, false
	}
	return Match{k, start, runAll(s, e, set)}, true
}

func isOneOf(c byte, set string) bool {
	for i := 0; i < len(set); i++ {
		if set[i] == c {
			return true
		}
	}
	return false
}

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if classes[s[i]]&cDigit != 0 {
			return true
		}
	}
	return false
}

// mixed reports whether s has at least two of: digit, lower, upper.
func mixed(s string) bool {
	d, l, u := charKinds(s)
	return d && (l || u) || l && u
}

// charKinds reports whether s has a digit, a lower-case and an upper-case
// ASCII letter.
func charKinds(s string) (d, l, u bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			d = true
		case c >= 'a' && c <= 'z':
			l = true
		case c >= 'A' && c <= 'Z':
			u = true
		}
	}
	return d, l, u
}

func allSame(s string) bool {
	for i := 1; i < len(s); i++ {
		if s[i] != s[0] {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// containsFold reports whether s contains sub, ASCII case-insensitively; sub
// must be lower case.
func containsFold(s, sub string) bool {
	n := len(sub)
	if n == 0 {
		return true
	}
	for i := 0; i+n <= len(s); i++ {
		if lower(s[i]) != sub[0] {
			continue
		}
		j := 1
		for j < n && lower(s[i+j]) == sub[j] {
			j++
		}
		if j == n {
			return true
		}
	}
	return false
}

// equalFold reports whether s equals the lower-case word w, ignoring ASCII case.
func equalFold(s, w string) bool {
	if len(s) != len(w) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if lower(s[i]) != w[i] {
			return false
		}
	}
	return true
}
