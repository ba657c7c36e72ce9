package redact

// Vendor token formats: a fixed prefix, a delimiter and a random body. Each
// detector is triggered by the delimiter (or first letter) and checks the
// prefix behind it, so most trigger hits cost two or three comparisons.

// underscoreToken handles '_'-delimited prefixes: gh[pousr]_, github_pat_,
// npm_, hf_, (sk|rk)_(live|test|prod)_, whsec_.
func underscoreToken(s string, i int) (Match, bool) {
	if c := s[i-1]; c == 'a' || c == 'i' { // only the formats added for issue 10 end so
		switch {
		case i >= 5 && hasSuffixAt(s, i-2, "shp") && (s[i-2] == 'c' || s[i-2] == 'p') && boundary(s, i-5):
			return body(s, i-5, i+1, setAlnum, 32, KindShopifyToken)
		case hasSuffixAt(s, i, "glsa") && boundary(s, i-4):
			return body(s, i-4, i+1, setWord, 32, KindGrafanaToken)
		case hasSuffixAt(s, i, "lin_api") && boundary(s, i-7):
			return body(s, i-7, i+1, setAlnum, 40, KindLinearKey)
		}
		return Match{}, false
	}
	switch {
	case i >= 3 && s[i-3] == 'g' && s[i-2] == 'h' && isOneOf(s[i-1], "pousr") && boundary(s, i-3):
		return body(s, i-3, i+1, setWord, 30, KindGitHubToken)
	case hasSuffixAt(s, i, "github_pat") && boundary(s, i-10):
		return body(s, i-10, i+1, setWord, 22, KindGitHubToken)
	case hasSuffixAt(s, i, "npm") && boundary(s, i-3):
		return body(s, i-3, i+1, setAlnum, 36, KindNPMToken)
	case hasSuffixAt(s, i, "hf") && boundary(s, i-2):
		return body(s, i-2, i+1, setAlnum, 30, KindHuggingFaceToken)
	case hasSuffixAt(s, i, "whsec") && boundary(s, i-5):
		return body(s, i-5, i+1, setAlnum, 24, KindStripeKey)
	case (hasSuffixAt(s, i, "dop") || hasSuffixAt(s, i, "doo") || hasSuffixAt(s, i, "dor")) && boundary(s, i-3) && hasPrefixAt(s, i, "_v1_"):
		return body(s, i-3, i+4, setHexLower, 64, KindDigitalOcean)
	case i >= 5 && hasSuffixAt(s, i-2, "shp") && (hasSuffixAt(s, i, "at") || hasSuffixAt(s, i, "ss")) && boundary(s, i-5):
		return body(s, i-5, i+1, setAlnum, 32, KindShopifyToken)
	case hasSuffixAt(s, i, "glc") && boundary(s, i-3):
		return body(s, i-3, i+1, setBase64, 32, KindGrafanaToken)
	case i >= 2 && (s[i-2] == 's' || s[i-2] == 'r') && s[i-1] == 'k' && boundary(s, i-2):
		if hasPrefixAt(s, i, "_live_") || hasPrefixAt(s, i, "_test_") || hasPrefixAt(s, i, "_prod_") {
			return body(s, i-2, i+6, setAlnum, 16, KindStripeKey)
		}
	}
	return Match{}, false
}

// dashToken handles '-'-delimited prefixes: private key blocks, glpat-,
// sk-/sk-proj-/sk-ant-, xox?-, xapp-, pypi-, AGE-SECRET-KEY-1.
func dashToken(s string, i int) (Match, bool) {
	switch s[i-1] { // bytes only the formats added for issue 10 put before a dash
	case ' ', '\t':
		return shortFlag(s, i)
	case 'y':
		if hasSuffixAt(s, i, "key") {
			return mailgun(s, i)
		}
		return Match{}, false
	case 'K', 'S', 'I', 'A', 'U', 'Y':
		switch {
		case hasSuffixAt(s, i, "PMAK") && boundary(s, i-4):
			return body(s, i-4, i+1, setSlackTok, 50, KindPostmanKey)
		case i >= 4 && s[i-4] == 'N' && s[i-3] == 'R' && (hasSuffixAt(s, i, "AK") || hasSuffixAt(s, i, "II") || hasSuffixAt(s, i, "JS") || hasSuffixAt(s, i, "AA")) && boundary(s, i-4):
			return body(s, i-4, i+1, setURLSafe, 19, KindNewRelicKey)
		case hasSuffixAt(s, i, "HRKU") && boundary(s, i-4):
			return body(s, i-4, i+1, setURLSafe, 40, KindHerokuKey)
		case hasSuffixAt(s, i, "PuTTY") && hasPrefixAt(s, i, "-User-Key-File-"):
			return puttyKey(s, i-5)
		}
		return Match{}, false
	}
	switch {
	case hasPrefixAt(s, i-1, "-----BEGIN ") && (i == 1 || s[i-2] != '-'):
		return privateKey(s, i-1) // triggered on the second dash
	case hasPrefixAt(s, i-1, "-----END ") && (i == 1 || s[i-2] != '-'):
		return privateKeyTail(s, i-1) // a key whose BEGIN was in another read
	case i >= 2 && s[i-2] == 's' && s[i-1] == 'k' && boundary(s, i-2):
		if hasPrefixAt(s, i, "-ant-") {
			return body(s, i-2, i+5, setURLSafe, 32, KindAnthropicKey)
		}
		m, ok := body(s, i-2, i+1, setURLSafe, 20, KindOpenAIKey)
		if ok && !mixed(s[i+1:m.End]) {
			return Match{}, false
		}
		return m, ok
	case i >= 4 && s[i-4] == 'x' && s[i-3] == 'o' && s[i-2] == 'x' && isOneOf(s[i-1], "abeoprs") && boundary(s, i-4):
		m, ok := body(s, i-4, i+1, setSlackTok, 10, KindSlackToken)
		if ok && !hasDigit(s[i+1:m.End]) {
			return Match{}, false
		}
		return m, ok
	case hasSuffixAt(s, i, "xapp") && boundary(s, i-4):
		return body(s, i-4, i+1, setSlackTok, 20, KindSlackToken)
	case (hasSuffixAt(s, i, "glpat") || hasSuffixAt(s, i, "glptt")) && boundary(s, i-5):
		return body(s, i-5, i+1, setURLSafe, 20, KindGitLabToken)
	case (hasSuffixAt(s, i, "gldt") || hasSuffixAt(s, i, "glrt")) && boundary(s, i-4):
		return body(s, i-4, i+1, setURLSafe, 20, KindGitLabToken)
	case hasSuffixAt(s, i, "pypi") && boundary(s, i-4) && hasPrefixAt(s, i, "-AgE"):
		return body(s, i-4, i+1, setURLSafe, 50, KindPyPIToken)
	case hasSuffixAt(s, i, "AGE") && boundary(s, i-3) && hasPrefixAt(s, i, "-SECRET-KEY-1"):
		return body(s, i-3, i+13, setUpperNum, 50, KindAgeSecretKey)
	case s[i-1] == '-' && (i < 2 || flagStart[s[i-2]]):
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
			j := run(s, i+1, setAlnum)
			if n := j - (i + 1); n >= 2 && n <= 5 && j < len(s) && s[j] == '.' {
				return body(s, i-2, j+1, setAlnum, 40, KindDopplerToken)
			}
		}
	case '9':
		if hasSuffixAt(s, i, "ya29") && boundary(s, i-4) {
			return body(s, i-4, i+1, setURLSafe, 20, KindGoogleOAuth)
		}
	}
	return discord(s, i)
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
	return Match{}, false
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
	if t < 0 || s[i-1] != 'Q' || classes[s[i-2]]&cDigit == 0 || t > 0 && (classes[s[t-1]]&setKeyName != 0 || s[t-1] == '~') {
		return Match{}, false
	}
	for k := t; k < i-2; k++ {
		if classes[s[k]]&(setWord|cKey) == 0 && s[k] != '~' {
			return Match{}, false
		}
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
	var d, l, u bool
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
	n := 0
	for _, b := range []bool{d, l, u} {
		if b {
			n++
		}
	}
	return n >= 2
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
