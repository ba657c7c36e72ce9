package redact

import (
	"strings"
)

// Assignments and headers: KEY=value, key: value, "key": "value", key := "v",
// key => 'v', Authorization: Bearer v. Triggered on '=' or ':'; the key is read
// backwards from the separator, the value forwards. Only the value is masked.

const (
	maxKeyLen   = 64
	maxValueLen = 4096
)

func assignment(s string, i int) (Match, bool) {
	if s[i] == ':' {
		if m, ok, done := colonForms(s, i); done {
			return m, ok
		}
	}
	a, ok := readAssign(s, i)
	if !ok {
		return Match{}, false
	}
	if !a.handKey(s) {
		return genAssign(s, a.j, a.ke, a.sepEnd, a.fam)
	}
	var buf [maxKeyLen]byte
	var wide [maxKeyLen + 8]byte
	key := widenKey(s, a.j, foldKey(buf[:0], s[a.j:a.ke]), wide[:0])
	return a.keyed(s, key)
}

// assign is an assignment being read: the operator sep at i ending at
// sepEnd, the key s[j:ke] and the keyword families its letters may start.
type assign struct {
	i, j, ke, sepEnd int
	sep              byte
	spaced           bool // spaces around the operator
	fam              uint8
}

// colonForms reads what a ':' starts besides "key: value": a Slack
// webhook URL, a Telegram bot token, curl's -u user:password, or "::".
// done says the colon was decided.
func colonForms(s string, i int) (m Match, ok, done bool) {
	if m, ok := colonVendor(s, i); ok || hasPrefixAt(s, i+1, "//") || hasPrefixAt(s, i+1, ":") || i > 0 && s[i-1] == ':' {
		return m, ok, true
	}
	m, ok = curlUser(s, i)
	return m, ok, ok
}

// operator reads the assignment operator at i: ':', ':=' (read as '='),
// '=' or '=>'. Comparisons and compound assignments (==, !=, <=, +=, =~)
// are not assignments.
func operator(s string, i int) (sep byte, end int, ok bool) {
	if s[i] == ':' {
		if hasPrefixAt(s, i+1, "=") {
			return '=', i + 2, true
		}
		return ':', i + 1, true
	}
	if i > 0 && isOneOf(s[i-1], "=!<>:+-*/%&|^~?") || hasPrefixAt(s, i+1, "=") || hasPrefixAt(s, i+1, "~") {
		return 0, 0, false
	}
	if hasPrefixAt(s, i+1, ">") {
		return '=', i + 2, true
	}
	return '=', i + 1, true
}

// readAssign reads the operator at i and the key before it.
func readAssign(s string, i int) (a assign, ok bool) {
	a.i = i
	if a.sep, a.sepEnd, ok = operator(s, i); !ok {
		return a, false
	}
	a.ke, a.spaced = keyEnd(s, i)
	a.j, a.fam = keyStart(s, a.ke)
	return a, a.j < a.ke && a.ke-a.j <= maxKeyLen
}

// keyEnd reads backwards from the operator at i over spaces, a closing
// quote (maybe JSON-escaped), a closing ']' of config["KEY"] or markdown
// emphasis, to where the key's name ends.
func keyEnd(s string, i int) (ke int, spaced bool) {
	j := skipBack(s, i, i-4, " \t")
	spaced = j < i
	if j > 1 && s[j-1] == ']' && isOneOf(s[j-2], "\"'") {
		j-- // config["SECRET_KEY"] = ...
	}
	j = skipBack(s, j, j-2, "\"'`*")
	if j > 0 && s[j-1] == '\\' {
		j--
	}
	return j, spaced
}

// keyStart reads the key's name [A-Za-z0-9_.-]+ backwards from ke, and
// which keyword families may start in it (keyFamilies).
func keyStart(s string, ke int) (j int, fam uint8) {
	j = runBack(s, ke, ke-maxKeyLen-1, setKeyName)
	return j, keyFamilies(s[j:ke])
}

// handKey reports whether the hand-written classifier may know the key;
// the others are left to the generated rules.
func (a *assign) handKey(s string) bool {
	k := s[a.j:a.ke]
	return a.fam&triHand != 0 || shortKey(k) || equalFold(k, "value")
}

// notKey reports a key that is no assignment's: the user of
// scheme://user:pass@ (urlCredentials' match), or a string whose colon is
// its last byte ('passphrase:').
func (a *assign) notKey(s string) bool {
	if hasSuffixAt(s, a.j, "//") {
		return true
	}
	return a.sep == ':' && a.j > 0 && a.ke == a.i && a.i+1 < len(s) && isOneOf(s[a.j-1], "\"'") && s[a.i+1] == s[a.j-1]
}

// keyed reads the value of the folded key key.
func (a *assign) keyed(s string, key []byte) (Match, bool) {
	if len(key) < 3 && string(key) != "pw" || a.notKey(s) {
		return Match{}, false
	}
	v := a.valueStart(s)
	if v >= len(s) || hasPrefixAt(s, v, markerPrefix) {
		return Match{}, false
	}
	if hasSuffixBytes(key, "authorization") {
		return authorization(s, v)
	}
	env := envStyle(s[a.j:a.ke])
	kind, ok := classifyKey(key, env)
	if !ok && string(key) == "value" && a.sep == '=' {
		kind, ok = attributeName(s, a.j) // <add key="DbPassword" value="...">
	}
	if !ok {
		return genAssign(s, a.j, a.ke, a.sepEnd, a.fam)
	}
	return a.literal(s, v, key, kind, env)
}

// valueStart skips the closing "**" of **Password:** and up to 8 spaces
// after the operator.
func (a *assign) valueStart(s string) int {
	v := a.sepEnd
	if hasPrefixAt(s, v, "**") {
		v += 2
	}
	v = skipOver(s, v, a.sepEnd+8, " \t")
	a.spaced = a.spaced || v > a.sepEnd
	return v
}

// literal matches the value at v of a key of kind when it is a literal
// secret.
func (a *assign) literal(s string, v int, key []byte, kind Kind, env bool) (Match, bool) {
	vs, ve, quoted := value(s, v)
	if ve <= vs || hasPrefixAt(s[vs:ve], 0, markerPrefix) {
		return Match{}, false
	}
	val := s[vs:ve]
	switch {
	case kind == KindAzureStorageKey || kind == KindPrivateKey: // AccountKey=, client-key-data:
		if !quoted {
			ve = vs + len(strings.TrimRight(val, ".")) // the end of a sentence
		}
		return Match{kind, vs, ve}, base64Literal(s[vs:ve])
	case kind == KindAzureSAS:
		return Match{kind, vs, ve}, len(val) >= 20 && sasContext(s, a.i) && !isPlaceholder(val)
	case kind == KindPassword && a.shell(env, quoted):
		return Match{kind, vs, ve}, shellPassword(key, val)
	case awsSecret(kind, key, val):
		return Match{KindAWSSecret, vs, ve}, !keyAsValue(key, val)
	}
	return Match{kind, vs, ve}, plausible(s, kind, val, ve, quoted, a.spaced, a.sep) && !keyAsValue(key, val)
}

// shell reports an assignment written as in a shell environment
// (PGPASSWORD=word psql): KEY=value, unspaced and unquoted.
func (a *assign) shell(env, quoted bool) bool {
	return a.sep == '=' && !a.spaced && env && !quoted
}

// base64Literal reports a base64 key of at least 20 bytes.
func base64Literal(val string) bool {
	return len(val) >= 20 && run(val, 0, setBase64) == len(val) && !isPlaceholder(val)
}

// shellPassword reports the value of a shell environment assignment
// (PGPASSWORD=word psql ...): it is a password even when it is one
// lower-case word; the prose rules of plausible do not apply to shell.
func shellPassword(key []byte, val string) bool {
	return len(val) >= 4 && !isPlaceholder(val) && !strings.ContainsAny(val, "([{") && !keyAsValue(key, val)
}

// keyAsValue reports a value that repeats its key (POSTGRES_PASSWORD:
// postgres, password: password).
func keyAsValue(key []byte, val string) bool {
	return len(val) <= len(key) && containsFold(string(key), foldValue(val))
}

// awsSecret reports a 40-byte base64 secret under an AWS key name.
func awsSecret(kind Kind, key []byte, val string) bool {
	return kind == KindSecret && len(val) == 40 && run(val, 0, setBase64) == 40 &&
		(strings.Contains(string(key), "aws") || strings.Contains(string(key), "secretaccesskey")) && !isPlaceholder(val)
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
		k := strings.Index(strings.ToLower(head), a) // NuGet writes <add key=...>, some tools <ADD KEY=...>
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

// xmlElement masks the text of an element named like a secret
// (<password>x</password>, <apiToken>, Maven's and Ant's settings); s[i] is
// the '>' of the opening tag.
func xmlElement(s string, i int) (Match, bool) {
	j := runBack(s, i, i-maxKeyLen-1, setKeyName)
	if j == i && i > 0 && isOneOf(s[i-1], "\"'") {
		return xmlKeyAttr(s, i)
	}
	if j == i || j == 0 || s[j-1] != '<' || i-j > maxKeyLen {
		return Match{}, false
	}
	var buf [maxKeyLen]byte
	if kind, ok := nameKind(foldKey(buf[:0], s[j:i])); ok {
		return xmlText(s, i, s[j:i], kind)
	}
	return Match{}, false
}

// nameKind classifies a flag's or an element's folded name: a secret's
// key, or a password's abbreviation (--db-pass, --admin-pwd, <userPwd>, <pw>).
func nameKind(key []byte) (Kind, bool) {
	if kind, ok := classifyKey(key, false); ok {
		return kind, true
	}
	return KindPassword, hasSuffixBytes(key, "pass") || hasSuffixBytes(key, "pwd") || string(key) == "pw"
}

// xmlKeyAttr reads <entry key="db.password">x</entry>, whose name is an
// attribute; s[i] is the '>' after its closing quote.
func xmlKeyAttr(s string, i int) (Match, bool) {
	t := strings.LastIndexByte(s[max(0, i-256):i], '<')
	if t < 0 {
		return Match{}, false
	}
	j := max(0, i-256) + t + 1
	n := run(s, j, setKeyName)
	if n == j {
		return Match{}, false
	}
	kind, ok := attributeName(s, i)
	if !ok {
		return Match{}, false
	}
	return xmlText(s, i, s[j:n], kind)
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
	vs = skipOver(s, vs, ve, " ")
	ve = skipBack(s, ve, vs, " ")
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
	v := skipOver(s, sepEnd, sepEnd+8, " \t")
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

// keyFamilies is the keyTri test of the whole name k (letters only).
func keyFamilies(k string) uint8 {
	var fam uint8
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
	if env && envPassword(key) {
		return KindPassword, true // MYSQL_PWD, SSHPASS, SMTP_PASS
	}
	for p := range key {
		if kw, ok := keywordAt(key, p); ok && allowedTail(string(key[p+len(kw.word):]), kw.word, env) {
			return kw.kind, true
		}
	}
	return "", false
}

// envPassword reports an environment name ending in pass or pwd.
func envPassword(key []byte) bool {
	return len(key) > 4 && (hasSuffixBytes(key, "pass") || hasSuffixBytes(key, "pwd")) && string(key) != "oldpwd" && !hasSuffixBytes(key, "bypass")
}

// keywords are the words of a secret's key, and the kind of its value.
var keywords = []keyword{
	{"password", KindPassword}, {"passwd", KindPassword}, {"passphrase", KindPassword},
	{"private", KindSecret}, {"secret", KindSecret}, {"token", KindToken},
	{"apikey", KindAPIKey}, {"accesskey", KindSecret}, {"auth", KindSecret},
	{"credential", KindSecret},
}

// keywordsAt indexes keywords by their first letter.
var keywordsAt = func() (t [256][]keyword) {
	for _, kw := range keywords {
		t[kw.word[0]] = append(t[kw.word[0]], kw)
	}
	return t
}()

// keywordAt returns the keyword that starts at key[p].
func keywordAt(key []byte, p int) (keyword, bool) {
	for _, kw := range keywordsAt[key[p]] {
		if hasAt(key, p, kw.word) {
			return kw, true
		}
	}
	return keyword{}, false
}

type keyword struct {
	word string
	kind Kind
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
		return quotedValue(s, v+1, c)
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

// quotedValue returns the bounds of a value quoted with q, from vs to the
// closing quote on the same line.
func quotedValue(s string, vs int, q byte) (int, int, bool) {
	for e := vs; e < len(s) && e-vs <= maxValueLen; e++ {
		switch s[e] {
		case '\n':
			return 0, 0, false
		case '\\':
			e++ // escaped character
		case q:
			return vs, e, true
		}
	}
	return 0, 0, false
}

// plausible reports whether val, the value of a key of kind k, is a literal
// secret rather than code, a reference, a placeholder or prose.
func plausible(s string, k Kind, val string, ve int, quoted, spaced bool, sep byte) bool {
	strong := k == KindPassword
	minLen := 8
	if strong {
		minLen = 4
	}
	switch {
	case len(val) < minLen || len(val) > maxValueLen:
		return false
	case quoted:
		return plausibleQuoted(val, strong)
	case notLiteral(val, spaced, sep):
		return false
	case !strong && !looksRandom(val):
		return false
	case isIdent(val) && !randomIdent(val) && identInCode(s, val, ve, spaced, sep):
		return false
	}
	return !isPlaceholder(val)
}

// plausibleQuoted is plausible for a quoted value: not a sentence.
func plausibleQuoted(val string, strong bool) bool {
	if n := strings.Count(val, " "); n >= 2 || n == 1 && !strong {
		return false // a sentence, not a secret
	}
	return (strong || looksRandom(val)) && !isPlaceholder(val)
}

// notLiteral reports an unquoted value that is code or a reference: a
// call, index, member access or arithmetic, a file holding the secret
// (--from-file=password=./pw.txt), or a format such as
// name:password:GID:users.
func notLiteral(val string, spaced bool, sep byte) bool {
	switch {
	case strings.ContainsAny(val, "([{") || isMemberAccess(val):
		return true
	case spaced && sep == '=' && strings.IndexByte(val, '*') >= 0:
		return true
	case strings.HasPrefix(val, "./") || strings.HasPrefix(val, "../") || strings.HasPrefix(val, "~/"):
		return true
	}
	return sep == ':' && !spaced && strings.IndexByte(val, ':') >= 0
}

// identInCode reports an identifier value ending at ve that reads as code
// or prose rather than a password.
func identInCode(s, val string, ve int, spaced bool, sep byte) bool {
	if spaced && sep == '=' {
		return true // token = tokenize  /  password := pw
	}
	next := skipOver(s, ve, len(s), " \t")
	if next >= len(s) {
		return false
	}
	if isOneOf(s[next], ",);}") {
		return true // Password: pw,  f(password=pw)
	}
	return next > ve && isAlnum(s[next]) && onlyLetters(val) // Password: must be at least 8 characters
}

// authorization masks the credential of an Authorization header value:
// "Bearer <t>", "Basic <t>", "token <t>" or a bare token.
func authorization(s string, v int) (Match, bool) {
	p, q := skipQuote(s, v)
	scheme, p, ok := authScheme(s, p)
	if !ok {
		return Match{}, false
	}
	e := bearerEnd(s, p, maxValueLen)
	if q != 0 && (e >= len(s) || s[e] != q) {
		return Match{}, false
	}
	if !authToken(s, s[p:e], e, scheme) {
		return Match{}, false
	}
	return Match{KindBearerToken, p, bearerEnd(s, p, len(s))}, true
}

// skipQuote steps over an opening quote (maybe JSON-escaped) at p; q is
// the quote that must close the value (0: none or escaped).
func skipQuote(s string, p int) (int, byte) {
	if isOneOf(s[p], "\"'`") {
		return p + 1, s[p]
	}
	if s[p] == '\\' && hasPrefixAt(s, p+1, "\"") {
		return p + 2, 0
	}
	return p, 0
}

// authScheme reads an authentication scheme and its spaces at p
// ("Bearer ", "Basic ", "token "); "" when the token is bare. A digest's
// parameters are not a token (ok false).
func authScheme(s string, p int) (scheme string, next int, ok bool) {
	w := skipOver(s, p, p+16, letters+"-")
	if w == p || w >= len(s) || s[w] != ' ' {
		return "", p, true
	}
	if equalFold(s[p:w], "digest") {
		return "", p, false
	}
	return s[p:w], skipOver(s, w, len(s), " "), true
}

// authToken reports whether tok, ending at e, is a credential rather than
// code (authorization = base64.decodebytes(x)) or a placeholder; a bare
// one needs 16 bytes.
func authToken(s, tok string, e int, scheme string) bool {
	if e < len(s) && s[e] == '(' || scheme == "" && isMemberAccess(tok) {
		return false
	}
	return len(tok) >= 8 && looksRandom(tok) && !isPlaceholder(tok) && (scheme != "" || len(tok) >= 16)
}

// bearer matches "Bearer <token>" anywhere (curl -H, logs, prose); triggered
// on the 'B'.
func bearer(s string, i int) (Match, bool) {
	if !hasPrefixAt(s, i, "Bearer ") || !boundary(s, i) {
		return Match{}, false
	}
	p := skipOver(s, i+7, len(s), " ")
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

// sasContext reports whether the sig= at i belongs to an Azure shared
// access signature: its signed version (sv=) is within 512 bytes.
func sasContext(s string, i int) bool {
	w := s[max(0, i-512):min(len(s), i+512)]
	return strings.Contains(w, "sv=") || strings.Contains(w, "sv%3D")
}

// curlUser masks the password of curl's basic auth, -u user:password or
// --user user:password; s[i] is the colon.
func curlUser(s string, i int) (Match, bool) {
	if !userColon(s, i) {
		return Match{}, false
	}
	j := userStart(s, i)
	if j == i || j > 0 && s[j-1] == '[' || !afterUserFlag(s, j) {
		return Match{}, false // no user, or a redaction marker
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

// userStart reads the user name back from the colon at i.
func userStart(s string, i int) int {
	j := i
	for j > 0 && i-j < maxKeyLen && !isSpaceByte(s[j-1]) && !isOneOf(s[j-1], "\"'=:[") {
		j--
	}
	return j
}

// userColon reports whether the colon at i may join a user and a
// password: not "key": value, x := y, scheme:// or "a":"b".
func userColon(s string, i int) bool {
	return i+1 < len(s) && !isSpaceByte(s[i+1]) && !isOneOf(s[i+1], "=/\"'") && (i == 0 || !isOneOf(s[i-1], "\"'")) &&
		!hasPrefixAt(s, i+1, markerPrefix) // a redaction marker
}

// afterUserFlag reports whether the user at u, maybe quoted, follows
// curl's -u or --user.
func afterUserFlag(s string, u int) bool {
	if u > 0 && isOneOf(s[u-1], "\"'") {
		u--
	}
	return hasSuffixAt(s, u, "-u ") || hasSuffixAt(s, u, "--user ") || hasSuffixAt(s, u, "--user=") || hasSuffixAt(s, u, " -u")
}

// URL credentials: scheme://user:password@host. Only the password is masked,
// so the scheme, user and host stay readable. Database schemes get their own
// kind.

const maxUserinfo = 256

var databaseSchemes = []string{
	"postgres", "postgresql", "mysql", "mariadb", "mongodb", "mongodb+srv", "redis", "rediss",
	"amqp", "amqps", "mssql", "sqlserver", "clickhouse", "cockroachdb", "oracle", "couchdb",
	"memcached", "neo4j", "neo4j+s", "bolt", "cassandra", "influxdb",
}

// urlCredentials is triggered on the '@' ending the userinfo.
func urlCredentials(s string, at int) (Match, bool) {
	j, colon, ok := userinfo(s, at)
	if !ok || colon < 0 || !hasSuffixAt(s, j, "://") {
		return Match{}, false
	}
	user, pass := s[j:colon], s[colon+1:at]
	if pass == "" || hasPrefixAt(pass, 0, markerPrefix) || pass == user || isPlaceholder(pass) {
		return Match{}, false
	}
	kind := KindURLCredentials
	if databaseScheme(s, j-3) {
		kind = KindDatabaseURL
	}
	return Match{kind, colon + 1, at}, true
}

// userinfo reads back from the '@' at at to the start of the userinfo
// (after a '/'), and where its first ':' is (-1: none); ok is false for a
// byte no userinfo holds.
func userinfo(s string, at int) (j, colon int, ok bool) {
	colon = -1
	for j = at; j > 0 && at-j < maxUserinfo; j-- {
		c := s[j-1]
		if c == '/' {
			break
		}
		if c <= ' ' || isOneOf(c, "\"'`<>?#\\") {
			return 0, 0, false
		}
		if c == ':' {
			colon = j - 1
		}
	}
	return j, colon, true
}

// databaseScheme reports whether the scheme ending at se names a
// database.
func databaseScheme(s string, se int) bool {
	sb := se
	for sb > 0 && se-sb < 16 && (isAlnum(s[sb-1]) || isOneOf(s[sb-1], "+.-")) {
		sb--
	}
	for _, d := range databaseSchemes {
		if equalFold(s[sb:se], d) {
			return true
		}
	}
	return false
}
