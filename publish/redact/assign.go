package redact

import "strings"

// Assignments and headers: KEY=value, key: value, "key": "value", key := "v",
// key => 'v', Authorization: Bearer v. Triggered on '=' or ':'; the key is read
// backwards from the separator, the value forwards. Only the value is masked.

const (
	maxKeyLen   = 64
	maxValueLen = 4096
)

func assignment(s string, i int) (Match, bool) {
	sep := s[i]
	sepEnd := i + 1
	if sep == ':' {
		if hasPrefixAt(s, i+1, "//") {
			return slackWebhook(s, i+3) // https://hooks.slack.com/...
		}
		if hasPrefixAt(s, i+1, ":") || i > 0 && s[i-1] == ':' {
			return Match{}, false // ::
		}
		if i > 0 && classes[s[i-1]]&cDigit != 0 {
			if m, ok := telegram(s, i); ok {
				return m, ok
			}
		}
		if m, ok := curlUser(s, i); ok {
			return m, ok
		}
		if hasPrefixAt(s, i+1, "=") {
			sep, sepEnd = '=', i+2 // :=
		}
	} else {
		if i > 0 && isOneOf(s[i-1], "=!<>:+-*/%&|^~?") || hasPrefixAt(s, i+1, "=") || hasPrefixAt(s, i+1, "~") {
			return Match{}, false // ==, !=, <=, +=, =~ ...
		}
		if hasPrefixAt(s, i+1, ">") {
			sepEnd = i + 2 // =>
		}
	}

	// Key, read backwards: spaces, a closing quote (maybe JSON-escaped) or
	// markdown emphasis, then [A-Za-z0-9_.-]+.
	j := i
	for j > 0 && i-j < 4 && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	spaced := j < i
	if j > 1 && s[j-1] == ']' && isOneOf(s[j-2], "\"'") {
		j-- // config["SECRET_KEY"] = ...
	}
	for n := 0; j > 0 && n < 2 && isOneOf(s[j-1], "\"'`*"); n++ {
		j--
	}
	if j > 0 && s[j-1] == '\\' {
		j--
	}
	ke := j
	// Read backwards, the key's letters (without its _ - . separators, as
	// foldKey drops them) pass a rolling window of three over keyTri: which
	// keyword families (hand-written, generated) may start in the key.
	var tri uint8
	var c1, c2 uint32
	fam := triAlways
	for lo := max(0, ke-maxKeyLen-1); j > lo && classes[s[j-1]]&setKeyName != 0; j-- {
		c := s[j-1]
		if classes[c]&cAlnum == 0 {
			continue
		}
		c0 := uint32(c & 31) // the same bits for upper and lower case
		tri++
		if tri >= 3 {
			t := c0<<10 | c1<<5 | c2
			fam |= uint8(keyTri[0][t>>6]>>(t&63)&1) | uint8(keyTri[1][t>>6]>>(t&63)&1)<<1
		}
		c1, c2 = c0, c1
	}
	if j == ke || ke-j > maxKeyLen {
		return Match{}, false
	}
	if fam&triHand == 0 && !shortKey(s[j:ke]) && !equalFold(s[j:ke], "value") {
		return genAssign(s, j, ke, sepEnd, fam)
	}
	if hasSuffixAt(s, j, "//") {
		return Match{}, false // scheme://user:pass@ belongs to urlCredentials
	}
	if sep == ':' && j > 0 && ke == i && i+1 < len(s) && isOneOf(s[j-1], "\"'") && s[i+1] == s[j-1] {
		return Match{}, false // 'passphrase:' is a string, its colon the last byte
	}
	var buf [maxKeyLen]byte
	key := foldKey(buf[:0], s[j:ke])
	var wide [maxKeyLen + 8]byte
	key = widenKey(s, j, key, wide[:0])
	if len(key) < 3 && string(key) != "pw" {
		return Match{}, false
	}

	// Value, read forwards (after a closing "**" of **Password:**).
	v := sepEnd
	if hasPrefixAt(s, v, "**") {
		v += 2
	}
	for v < len(s) && v-sepEnd < 8 && (s[v] == ' ' || s[v] == '\t') {
		v++
	}
	spaced = spaced || v > sepEnd
	if v >= len(s) || hasPrefixAt(s, v, markerPrefix) {
		return Match{}, false
	}

	if hasSuffixBytes(key, "authorization") {
		return authorization(s, v)
	}
	env := envStyle(s[j:ke])
	kind, ok := classifyKey(key, env)
	if !ok && string(key) == "value" && sep == '=' {
		kind, ok = attributeName(s, j) // <add key="DbPassword" value="...">
	}
	if !ok {
		return genAssign(s, j, ke, sepEnd, fam)
	}

	vs, ve, quoted := value(s, v)
	if ve <= vs {
		return Match{}, false
	}
	val := s[vs:ve]
	if hasPrefixAt(val, 0, markerPrefix) {
		return Match{}, false
	}
	switch kind {
	case KindAzureStorageKey, KindPrivateKey: // AccountKey=, client-key-data:
		for !quoted && len(val) > 0 && val[len(val)-1] == '.' {
			val, ve = val[:len(val)-1], ve-1 // the end of a sentence
		}
		if len(val) < 20 || run(val, 0, setBase64) != len(val) || isPlaceholder(val) {
			return Match{}, false
		}
		return Match{kind, vs, ve}, true
	case KindAzureSAS:
		if len(val) < 20 || !sasContext(s, i) || isPlaceholder(val) {
			return Match{}, false
		}
		return Match{kind, vs, ve}, true
	}
	if kind == KindPassword && sep == '=' && !spaced && env && !quoted {
		// A shell environment assignment (PGPASSWORD=word psql ...): the
		// value is a password even when it is one lower-case word; the
		// prose rules of plausible do not apply to shell.
		if len(val) >= 4 && !isPlaceholder(val) && !strings.ContainsAny(val, "([{") && !(len(val) <= len(key) && containsFold(string(key), foldValue(val))) {
			return Match{kind, vs, ve}, true
		}
		return Match{}, false
	}
	awsSecret := kind == KindSecret && len(val) == 40 && run(val, 0, setBase64) == 40 &&
		(containsBytes(key, "aws") || containsBytes(key, "secretaccesskey")) && !isPlaceholder(val)
	if !awsSecret && !plausible(s, kind, val, ve, quoted, spaced, sep) || len(val) <= len(key) && containsFold(string(key), foldValue(val)) {
		return Match{}, false // POSTGRES_PASSWORD: postgres, password: password
	}
	if awsSecret {
		kind = KindAWSSecret
	}
	return Match{kind, vs, ve}, true
}

// attributeName classifies the value attribute of an XML element by its
// key or name attribute (<add key="ClearTextPassword" value="...">); j is
// where "value" starts.
func attributeName(s string, j int) (Kind, bool) {
	tag := strings.LastIndexByte(s[max(0, j-256):j], '<')
	if tag < 0 {
		return "", false
	}
	head := s[max(0, j-256)+tag : j]
	for _, a := range []string{`key="`, `name="`, `key='`, `name='`} {
		k := indexFold(head, a) // NuGet writes <add key=...>, some tools <ADD KEY=...>
		if k < 0 {
			continue
		}
		n := head[k+len(a):]
		e := strings.IndexAny(n, `"'`)
		if e < 0 || e > maxKeyLen {
			continue
		}
		var buf [maxKeyLen]byte
		return classifyKey(foldKey(buf[:0], n[:e]), envStyle(n[:e]))
	}
	return "", false
}

// indexFold is strings.Index ignoring ASCII case; sub is lower case.
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if lower(s[i]) == sub[0] && equalFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// xmlElement masks the text of an element named like a secret
// (<password>x</password>, <apiToken>, Maven's and Ant's settings); s[i] is
// the '>' of the opening tag.
func xmlElement(s string, i int) (Match, bool) {
	j := i
	for j > 0 && i-j <= maxKeyLen && classes[s[j-1]]&setKeyName != 0 {
		j--
	}
	var kind Kind
	var ok bool
	var key []byte
	var buf [maxKeyLen]byte
	if j == i && i > 0 && isOneOf(s[i-1], "\"'") {
		// <entry key="db.password">x</entry>: the name is an attribute.
		t := strings.LastIndexByte(s[max(0, i-256):i], '<')
		if t < 0 {
			return Match{}, false
		}
		j = max(0, i-256) + t + 1
		n := run(s, j, setKeyName)
		if n == j {
			return Match{}, false
		}
		if kind, ok = attributeName(s, i); !ok {
			return Match{}, false
		}
		return xmlText(s, i, s[j:n], kind)
	}
	if j == i || j == 0 || s[j-1] != '<' || i-j > maxKeyLen {
		return Match{}, false
	}
	name := s[j:i]
	key = foldKey(buf[:0], name)
	kind, ok = classifyKey(key, false)
	if !ok && !hasSuffixBytes(key, "pass") && !hasSuffixBytes(key, "pwd") && string(key) != "pw" {
		return Match{}, false
	}
	if !ok {
		kind = KindPassword
	}
	return xmlText(s, i, name, kind)
}

// xmlText masks the text of element name, whose opening tag ends at the
// '>' at i, when it is a plausible literal of kind.
func xmlText(s string, i int, name string, kind Kind) (Match, bool) {
	vs := i + 1
	k := strings.Index(s[vs:min(len(s), vs+maxValueLen)], "</")
	if k < 0 || !hasPrefixAt(s, vs+k+2, name) {
		return Match{}, false
	}
	ve := vs + k
	for vs < ve && s[vs] == ' ' {
		vs++
	}
	for ve > vs && s[ve-1] == ' ' {
		ve--
	}
	val := s[vs:ve]
	if len(val) < 4 || strings.ContainsAny(val, "\n<") || isPlaceholder(val) && !(val[0] == '{' && strings.HasSuffix(val, "}") && len(val) > 16) {
		return Match{}, false // ${env.PASS}; a Maven {encrypted} one is masked
	}
	if kind != KindPassword && !looksRandom(val) {
		return Match{}, false
	}
	return Match{kind, vs, ve}, true
}

// genAssign tries the generated keyword rules on key s[j:ke] and the value
// after sepEnd: a key naming a vendor (MAPBOX_TOKEN, twitter_secret,
// "okta": ...) with a value of that vendor's shape. A value shorter than
// any rule's costs nothing more than finding its end.
func genAssign(s string, j, ke, sepEnd int, fam uint8) (Match, bool) {
	if fam&triGen == 0 {
		return Match{}, false
	}
	v := sepEnd
	for v < len(s) && v-sepEnd < 8 && (s[v] == ' ' || s[v] == '\t') {
		v++
	}
	if v >= len(s) {
		return Match{}, false
	}
	vs, ve, quoted := value(s, v)
	if ve-vs < genKeyMin || hasPrefixAt(s, vs, markerPrefix) {
		return Match{}, false
	}
	var buf [maxKeyLen]byte
	key := foldKey(buf[:0], s[j:ke])
	kind, ok := genKeywordValue(key, s[vs:ve])
	for !ok && !quoted && ve-vs > genKeyMin && isOneOf(s[ve-1], ".,;:") {
		ve-- // the end of a sentence: "... is X0OsUOCc655IVhzCD43EBC6b."
		kind, ok = genKeywordValue(key, s[vs:ve])
	}
	if !ok {
		return Match{}, false
	}
	return Match{kind, vs, ve}, true
}

// keyTri[a<<10|b<<5|c] (bytes &31, so case does not matter) marks the
// first three letters of a keyword: triHand for the hand-written
// classifier's (passw, pwd, private, secret, token, apikey, accesskey,
// auth, credential, accountkey, clientkeydata), triGen for the generated
// keyword rules' (filled by initGen). A key none of whose letter triples is
// marked skips the classifiers. It replaced a letter-set filter (all
// letters of a keyword somewhere in the key) that let most keys through
// once the generated rules' short vendor names (lob, okta, etsy, sumo)
// joined it: clean-corpus assignments cost ~2x more.
//
// Two bitsets (4 KB each) rather than a byte per triple: a 32 KB table
// missed the cache at every key letter (a third of assignment's time).
var keyTri [2][1 << 15 / 64]uint64

const (
	triHand = 1 << iota
	triGen
)

// triAlways holds the families with a keyword shorter than three letters,
// which the table cannot hold: their classifier always runs.
var triAlways uint8

// keyFamilies is the keyTri test of the whole name k (letters only).
func keyFamilies(k string) uint8 {
	fam := triAlways
	var c1, c2 uint32
	n := 0
	for j := len(k) - 1; j >= 0; j-- {
		if classes[k[j]]&cAlnum == 0 {
			continue
		}
		c0 := uint32(k[j] & 31)
		if n++; n >= 3 {
			t := c0<<10 | c1<<5 | c2
			fam |= uint8(keyTri[0][t>>6]>>(t&63)&1) | uint8(keyTri[1][t>>6]>>(t&63)&1)<<1
		}
		c1, c2 = c0, c1
	}
	return fam
}

func addKeyTri(w string, fam uint8) {
	if len(w) < 3 {
		triAlways |= fam
		return
	}
	t := uint32(w[0]&31)<<10 | uint32(w[1]&31)<<5 | uint32(w[2]&31)
	for f := 0; f < 2; f++ {
		if fam&(1<<f) != 0 {
			keyTri[f][t>>6] |= 1 << (t & 63)
		}
	}
}

func init() {
	for _, w := range []string{"pas", "pwd", "private", "secret", "token", "apikey", "accesskey", "auth", "credential", "accountkey", "clientkeydata"} {
		addKeyTri(w, triHand)
	}
}

// shortKey reports whether k is one of the short keys whose letters are too
// common for the letter filter: "pw", "sig" (Azure SAS) and "key" ("API
// key: ...").
func shortKey(k string) bool {
	return len(k) <= 3 && (equalFold(k, "pw") || equalFold(k, "sig") || equalFold(k, "key"))
}

// foldKey appends k lower-cased without its _ - . separators.
func foldKey(dst []byte, k string) []byte {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c == '_' || c == '-' || c == '.' {
			continue
		}
		dst = append(dst, lower(c))
	}
	return dst
}

// foldValue lower-cases a short value for comparison with a folded key.
func foldValue(v string) string {
	var b [maxKeyLen]byte
	return string(foldKey(b[:0], v))
}

// envStyle reports whether a raw key is an environment variable name
// (UPPER_SNAKE), whose keyword may be followed by a qualifier (_PROD).
func envStyle(k string) bool {
	upper := false
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= '0' && c <= '9' || c == '_':
		default:
			return false
		}
	}
	return upper
}

// classifyKey maps a folded key to the kind of secret its value holds. The key
// must contain a keyword followed only by an allowed tail, so DB_PASSWORD,
// clientSecret, SECRET_KEY_BASE and AWS_SECRET_ACCESS_KEY count but tokenizer,
// token_count, secretName, password_file and api_key_id do not. For
// environment-style keys (env) any tail that is not a known non-secret
// qualifier counts too, so DB_PASSWORD_PROD does.
func classifyKey(key []byte, env bool) (Kind, bool) {
	switch string(key) {
	case "accountkey", "sharedaccesskey":
		return KindAzureStorageKey, true
	case "sig": // an Azure SAS signature (sasContext decides)
		return KindAzureSAS, true
	case "clientkeydata": // kubeconfig: a base64 PEM private key
		return KindPrivateKey, true
	case "pw":
		return KindPassword, true
	}
	if env && len(key) > 4 && (hasSuffixBytes(key, "pass") || hasSuffixBytes(key, "pwd")) && string(key) != "oldpwd" && !hasSuffixBytes(key, "bypass") {
		return KindPassword, true // MYSQL_PWD, SSHPASS, SMTP_PASS
	}
	for p := 0; p < len(key); p++ {
		var w string
		var k Kind
		switch key[p] {
		case 'p':
			switch {
			case hasAt(key, p, "password"):
				w, k = "password", KindPassword
			case hasAt(key, p, "passwd"):
				w, k = "passwd", KindPassword
			case hasAt(key, p, "passphrase"):
				w, k = "passphrase", KindPassword
			case hasAt(key, p, "private"):
				w, k = "private", KindSecret
			}
		case 's':
			if hasAt(key, p, "secret") {
				w, k = "secret", KindSecret
			}
		case 't':
			if hasAt(key, p, "token") {
				w, k = "token", KindToken
			}
		case 'a':
			switch {
			case hasAt(key, p, "apikey"):
				w, k = "apikey", KindAPIKey
			case hasAt(key, p, "accesskey"):
				w, k = "accesskey", KindSecret
			case hasAt(key, p, "auth"):
				w, k = "auth", KindSecret
			}
		case 'c':
			if hasAt(key, p, "credential") {
				w, k = "credential", KindSecret
			}
		}
		if w != "" && allowedTail(string(key[p+len(w):]), w, env) {
			return k, true
		}
	}
	return "", false
}

// qualifiers follow a keyword in names whose value is not the secret itself
// (PASSWORD_FILE, TOKEN_URL, API_KEY_ID, SECRET_NAME, TOKEN_EXPIRES_AT).
var qualifiers = []string{
	"file", "path", "dir", "url", "uri", "endpoint", "host", "port", "name", "user", "id",
	"type", "length", "len", "count", "limit", "min", "max", "size", "ttl", "expir", "timeout",
	"header", "prefix", "suffix", "env", "var", "ref", "policy", "required", "enabled",
	"disabled", "mode", "method", "format", "regex", "pattern", "location", "provider",
	"store", "backend", "command", "cmd", "scope", "audience", "issuer", "alg", "version",
	"field", "param", "rotation", "reset", "hint", "label", "arn", "kms", "source",
}

func allowedTail(tail, word string, env bool) bool {
	if word == "auth" {
		return tail == "" || tail == "key"
	}
	switch tail {
	case "", "s", "key", "keys", "keybase", "accesskey", "value", "plain", "plaintext", "hash", "str", "secret":
		return true
	}
	if !env {
		return false
	}
	for _, q := range qualifiers {
		if strings.HasPrefix(tail, q) || strings.HasSuffix(tail, q) {
			return false
		}
	}
	return true
}

// valueStop ends an unquoted value.
var valueStop = func() (t [256]bool) {
	for _, c := range []byte(" \t\r\n\"'`,;)]}<>\\|") {
		t[c] = true
	}
	return t
}()

// value returns the bounds of the value starting at v: inside quotes
// ('..', "..", `..`, or JSON-escaped \"..\") on one line, or up to the first
// space or delimiter.
func value(s string, v int) (vs, ve int, quoted bool) {
	c := s[v]
	switch {
	case c == '"' || c == '\'' || c == '`':
		vs = v + 1
		for e := vs; e < len(s) && e-vs <= maxValueLen; e++ {
			switch s[e] {
			case '\n':
				return 0, 0, false
			case '\\':
				e++ // escaped character
			case c:
				return vs, e, true
			}
		}
		return 0, 0, false
	case c == '\\' && hasPrefixAt(s, v+1, "\""):
		vs = v + 2
		k := strings.Index(s[vs:min(len(s), vs+maxValueLen)], `\"`)
		if k < 0 {
			return 0, 0, false
		}
		return vs, vs + k, true
	}
	e := v
	for e < len(s) && e-v <= maxValueLen && !valueStop[s[e]] {
		if s[e] == '&' && nextParam(s, e+1) {
			break // ?password=x&user=y
		}
		e++
	}
	return v, e, false
}

// plausible reports whether val, the value of a key of kind k, is a literal
// secret rather than code, a reference, a placeholder or prose.
func plausible(s string, k Kind, val string, ve int, quoted, spaced bool, sep byte) bool {
	strong := k == KindPassword
	minLen := 8
	if strong {
		minLen = 4
	}
	if len(val) < minLen || len(val) > maxValueLen {
		return false
	}
	if quoted {
		if n := strings.Count(val, " "); n >= 2 || n == 1 && !strong {
			return false // a sentence, not a secret
		}
		return (strong || looksRandom(val)) && !isPlaceholder(val)
	}
	if strings.ContainsAny(val, "([{") || isMemberAccess(val) || spaced && sep == '=' && strings.IndexByte(val, '*') >= 0 {
		return false // call, index, member access or arithmetic
	}
	if strings.HasPrefix(val, "./") || strings.HasPrefix(val, "../") || strings.HasPrefix(val, "~/") {
		return false // a file holding the secret (--from-file=password=./pw.txt)
	}
	if sep == ':' && !spaced && strings.IndexByte(val, ':') >= 0 {
		return false // a format such as name:password:GID:users
	}
	if !strong && !looksRandom(val) {
		return false
	}
	if isIdent(val) && !randomIdent(val) {
		next := ve
		for next < len(s) && (s[next] == ' ' || s[next] == '\t') {
			next++
		}
		if spaced && sep == '=' {
			return false // token = tokenize  /  password := pw
		}
		if next < len(s) && isOneOf(s[next], ",);}") {
			return false // Password: pw,  f(password=pw)
		}
		if next > ve && next < len(s) && isAlnum(s[next]) && onlyLetters(val) {
			return false // Password: must be at least 8 characters
		}
	}
	return !isPlaceholder(val)
}

// authorization masks the credential of an Authorization header value:
// "Bearer <t>", "Basic <t>", "token <t>" or a bare token.
func authorization(s string, v int) (Match, bool) {
	p := v
	q := byte(0)
	if isOneOf(s[p], "\"'`") {
		q = s[p]
		p++
	} else if s[p] == '\\' && hasPrefixAt(s, p+1, "\"") {
		p += 2
	}
	w := p
	for w < len(s) && w-p < 16 && (s[w] >= 'a' && s[w] <= 'z' || s[w] >= 'A' && s[w] <= 'Z' || s[w] == '-') {
		w++
	}
	scheme := s[p:w]
	if w < len(s) && s[w] == ' ' && scheme != "" {
		if equalFold(scheme, "digest") {
			return Match{}, false
		}
		for w < len(s) && s[w] == ' ' {
			w++
		}
		p = w
	} else {
		scheme = ""
	}
	e := bearerEnd(s, p, maxValueLen)
	if q != 0 && (e >= len(s) || s[e] != q) {
		return Match{}, false
	}
	tok := s[p:e]
	if e < len(s) && s[e] == '(' || scheme == "" && isMemberAccess(tok) {
		return Match{}, false // authorization = base64.decodebytes(x)
	}
	if len(tok) < 8 || !looksRandom(tok) || isPlaceholder(tok) || scheme == "" && len(tok) < 16 {
		return Match{}, false
	}
	return Match{KindBearerToken, p, bearerEnd(s, p, len(s))}, true
}

// bearer matches "Bearer <token>" anywhere (curl -H, logs, prose); triggered
// on the 'B'.
func bearer(s string, i int) (Match, bool) {
	if !hasPrefixAt(s, i, "Bearer ") || !boundary(s, i) {
		return Match{}, false
	}
	p := i + 7
	for p < len(s) && s[p] == ' ' {
		p++
	}
	e := bearerEnd(s, p, maxValueLen)
	tok := s[p:e]
	if len(tok) < 16 || !looksRandom(tok) || isPlaceholder(tok) {
		return Match{}, false
	}
	return Match{KindBearerToken, p, bearerEnd(s, p, len(s))}, true
}

// bearerEnd returns the end of an RFC 6750 b64token ([A-Za-z0-9._~+/-]+=*)
// starting at p, without a trailing '.', looking at most limit bytes.
func bearerEnd(s string, p, limit int) int {
	e := p
	for e < len(s) && e-p < limit && (classes[s[e]]&setBearerTok != 0 || s[e] == '~') {
		e++
	}
	for e > p && s[e-1] == '.' {
		e--
	}
	return e
}

// nextParam reports whether s[p:] starts like a query parameter, "name=".
func nextParam(s string, p int) bool {
	e := run(s, p, setWord)
	return e > p && e < len(s) && s[e] == '='
}

func hasAt(b []byte, p int, w string) bool {
	return len(b)-p >= len(w) && string(b[p:p+len(w)]) == w
}

func hasSuffixBytes(b []byte, w string) bool {
	return len(b) >= len(w) && string(b[len(b)-len(w):]) == w
}

func containsBytes(b []byte, w string) bool {
	return strings.Contains(string(b), w)
}

// sasContext reports whether the sig= at i belongs to an Azure shared
// access signature: its signed version (sv=) is within 512 bytes.
func sasContext(s string, i int) bool {
	w := s[max(0, i-512):min(len(s), i+512)]
	return strings.Contains(w, "sv=") || strings.Contains(w, "sv%3D")
}

// curlUser masks the password of curl's basic auth, -u user:password or
// --user user:password; s[i] is the colon.
func curlUser(s string, i int) (Match, bool) {
	if i+1 >= len(s) || isSpaceByte(s[i+1]) || isOneOf(s[i+1], "=/\"'") || i > 0 && isOneOf(s[i-1], "\"'") {
		return Match{}, false // "key": value, x := y, scheme://, "a":"b"
	}
	j := i
	for j > 0 && i-j < maxKeyLen && !isSpaceByte(s[j-1]) && !isOneOf(s[j-1], "\"'=:[") {
		j--
	}
	if j == i || j > 0 && s[j-1] == '[' || hasPrefixAt(s, i+1, markerPrefix) {
		return Match{}, false // no user, or a redaction marker
	}
	u := j
	if u > 0 && isOneOf(s[u-1], "\"'") {
		u--
	}
	if !hasSuffixAt(s, u, "-u ") && !hasSuffixAt(s, u, "--user ") && !hasSuffixAt(s, u, "--user=") && !hasSuffixAt(s, u, " -u") {
		return Match{}, false
	}
	ve := i + 1
	for ve < len(s) && ve-i <= maxValueLen && !valueStop[s[ve]] {
		ve++
	}
	val := s[i+1 : ve]
	if len(val) < 3 || isPlaceholder(val) || val == s[j:i] {
		return Match{}, false
	}
	return Match{KindPassword, i + 1, ve}, true
}
