package redact

// The vendor formats the generated table cannot hold: those that need
// context (Twilio and Mailgun beside their name, an AWS secret after its
// key id, a Slack webhook keeping its host) or have no fixed literal to
// anchor on (Discord, Telegram bot tokens); and the '-' dispatch.

import "strings"

// dashToken handles private key blocks, flags, mailgun's key- and PuTTY
// key files.
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
	return Match{}, false
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

// awsPairedSecret matches the secret access key that follows an access key
// id (credentials.csv's "id,secret", a pasted "id secret"): 40 base64
// bytes, after at most a few separators on the same line; e is the end of
// the key id.
func awsPairedSecret(s string, e int) (Match, bool) {
	p := skipOver(s, e, e+8, " \t,;:|=\"'")
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

// twilio matches SK/AC + 32 lowercase hex when "twilio" appears within the
// 256 bytes before it (the format alone collides with hex ids).
func twilio(s string, i int) (Match, bool) {
	if !boundary(s, i) || len(s)-i < 34 {
		return Match{}, false
	}
	e := run(s, i+2, cHexLow)
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
	e := run(s, i+1, cHexLow)
	if e-(i+1) != 32 || !endBoundary(s, e) || !hasDigit(s[i+1:e]) {
		return Match{}, false
	}
	if !hasSuffixAt(s, start, "api:") && !containsFold(s[max(0, start-256):start], "mailgun") {
		return Match{}, false
	}
	return Match{KindMailgunKey, start, e}, true
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

// telegram matches a bot token, <5-16 digits>:A<34 url-safe>; s[i] is the
// colon.
func telegram(s string, i int) (Match, bool) {
	t := runBack(s, i, i-17, cDigit)
	if i-t < 5 || i-t > 16 || !boundary(s, t) && !hasSuffixAt(s, t, "/bot") || !hasPrefixAt(s, i+1, "A") {
		return Match{}, false
	}
	e := run(s, i+2, setURLSafe)
	if e-(i+2) != 34 || !endBoundary(s, e) || !mixed(s[i+2:e]) {
		return Match{}, false
	}
	return Match{KindTelegramToken, t, e}, true
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

func isOneOf(c byte, set string) bool {
	for i := 0; i < len(set); i++ {
		if set[i] == c {
			return true
		}
	}
	return false
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

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

// equalFold reports whether s equals w, ignoring ASCII case.
func equalFold(s, w string) bool {
	if len(s) != len(w) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if lower(s[i]) != lower(w[i]) {
			return false
		}
	}
	return true
}
