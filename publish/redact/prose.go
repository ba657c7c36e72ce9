package redact

import (
	"strings"
)

// Secrets stated in words: "my db password is Hunter2-Prod!", "the api key
// is 8f3a...", "password s3cr3t-Value" in a .netrc, "aws configure set
// aws_secret_access_key X". Triggered on the 'w' of pw/passwd/password or
// the 'k' of token/key; "key: value" and "key=value" are assignments.

// proseKey is called with s[i] == 'w' or 'k'.
func proseKey(s string, i int) (Match, bool) {
	we, ok := proseShape(s, i)
	if !ok {
		return Match{}, false
	}
	_, verb := afterVerb(s, we+1)
	ws, ok := proseWord(s, i, we, verb)
	if !ok {
		return Match{}, false
	}
	word := s[ws:we]
	var buf [2*maxKeyLen + 1]byte
	key := widenKey(s, ws, foldKey(buf[:0], word), buf[:0])
	kind, ok := proseKind(key, envStyle(word))
	if !ok {
		return Match{}, false
	}
	p, ok := proseValueStart(s, ws, we, kind)
	if !ok {
		return Match{}, false
	}
	vs, ve, ok := proseValue(s, p)
	if !ok || !proseSecret(s[vs:ve], kind) {
		return Match{}, false
	}
	if val := s[vs:ve]; kind == KindSecret && len(val) == 40 && run(val, 0, setBase64) == 40 && strings.Contains(string(key), "aws") {
		kind = KindAWSSecret
	}
	return Match{kind, vs, ve}, true
}

// proseWord returns where the keyword's word ending at we starts: not in a
// path, variable or field, and with a verb, after "set " or as .netrc's
// "password".
func proseWord(s string, i, we int, verb bool) (int, bool) {
	ws := runBack(s, i, i-maxKeyLen, setURLSafe)
	if ws > 0 && isOneOf(s[ws-1], "./$%{<@") {
		return 0, false // a path, variable or field
	}
	return ws, verb || hasSuffixAt(s, ws, "set ") || s[ws:we] == "password"
}

// proseKind classifies the folded key; "pw" and "pass" are passwords.
func proseKind(key []byte, env bool) (Kind, bool) {
	if kind, ok := classifyKey(key, env); ok {
		return kind, true
	}
	return KindPassword, string(key) == "pw" || string(key) == "pass"
}

// proseValueStart returns where the value after the keyword's word (ws to
// we) starts: after its verb, or, without one, only in "set <key> <value>"
// and .netrc's "password <value>".
func proseValueStart(s string, ws, we int, kind Kind) (int, bool) {
	p, verb := afterVerb(s, we+1)
	if !verb && !setOrNetrc(lineBefore(s, ws), kind) {
		return 0, false
	}
	p = skipOver(s, p, we+16, " ")
	return p, p < len(s) && !hasPrefixAt(s, p, markerPrefix)
}

// setOrNetrc reports whether the line before a keyword without a verb is
// "... set " or, for a password, empty or a .netrc's "machine"/"login".
func setOrNetrc(line string, kind Kind) bool {
	line = strings.TrimLeft(line, " \t")
	if strings.HasSuffix(line, "set ") {
		return true
	}
	return kind == KindPassword && (line == "" || strings.Contains(line, "login ") || strings.Contains(line, "machine "))
}

// proseValue returns the value at p without the punctuation that ends its
// sentence.
func proseValue(s string, p int) (vs, ve int, ok bool) {
	vs, ve, quoted := value(s, p)
	if !quoted {
		ve = skipBack(s, ve, vs, ".,:;)") // the end of the sentence
	}
	return vs, ve, ve > vs
}

// proseSecret reports whether a value stated in words is a literal secret:
// a password with a digit, a case change or a symbol, or a random token.
func proseSecret(val string, kind Kind) bool {
	if isPlaceholder(val) || strings.ContainsAny(val, "([{") || isMemberAccess(val) || len(val) > maxValueLen {
		return false
	}
	if kind == KindPassword {
		return len(val) >= 6 && !onlyLetters(val) && (mixed(val) || hasSymbol(val))
	}
	return len(val) >= 12 && looksRandom(val)
}

// hasSymbol reports whether v has a byte that is neither a letter nor a digit.
func hasSymbol(v string) bool { return runTo(v, 0, len(v), cAlnum) < len(v) }

// widenKey turns the key "key" into "apikey", "accesskey" or "secretkey"
// when the word before it (ending at ws-1) says so: "the API key is",
// "Here is the API key: ...". dst is scratch space.
func widenKey(s string, ws int, key, dst []byte) []byte {
	if string(key) != "key" || ws < 2 || s[ws-1] != ' ' {
		return key
	}
	p := ws - 1
	for _, w := range []string{"api", "access", "secret"} {
		if p >= len(w) && equalFold(s[p-len(w):p], w) && boundary(s, p-len(w)) {
			return append(append(dst, w...), "key"...)
		}
	}
	return key
}

// keywordShape is the first, cheap check: s[i] is the 'w' of pw/passw(or)d
// or the 'k' of token/key.
func keywordShape(s string, i int) bool {
	if i < 1 || i+2 >= len(s) {
		return false
	}
	p := lower(s[i-1])
	if s[i] == 'w' {
		return p == 'p' || i >= 4 && equalFold(s[i-4:i-1], "pas")
	}
	if p == 'o' {
		return i >= 2 && lower(s[i-2]) == 't' && s[i+1] == 'e' && s[i+2] == 'n'
	}
	return s[i+1] == 'e' && s[i+2] == 'y'
}

// operatorNext reports whether the text at p, after spaces, is a word made
// only of operator bytes (:=, =, ==, !=): a value too short for proseKey to
// accept, so the statement can be dropped before any scan.
func operatorNext(s string, p int) bool {
	p = skipOver(s, p, len(s), " ")
	q := skipOver(s, p, p+3, ":=!<>")
	return q > p && q-p <= 2 && (q == len(s) || valueStop[s[q]])
}

// proseShape is proseKey's cheap part, which Find runs before the call:
// the keyword's shape, the end of its word (returned) followed by a space,
// and no operator after it ("token := x", "password = y" are code, left to
// assignment).
func proseShape(s string, i int) (we int, ok bool) {
	if !keywordShape(s, i) {
		return 0, false
	}
	we = runTo(s, i+1, i+maxKeyLen, setURLSafe)
	if we >= len(s) || s[we] != ' ' {
		return 0, false // password), token. token, ...: not a statement
	}
	p, verb := afterVerb(s, we+1)
	if !verb && operatorNext(s, p) {
		return 0, false
	}
	p = skipOver(s, p, we+16, " ")
	if p >= len(s) || lowerWord(s, p) {
		return 0, false // "password must be", "token string", "is returned"
	}
	return we, true
}

// afterVerb returns where the text after the "is " or "was " at p starts,
// and whether one is there.
func afterVerb(s string, p int) (int, bool) {
	for _, v := range [...]string{"is ", "was "} {
		if hasPrefixAt(s, p, v) {
			return p + len(v), true
		}
	}
	return p, false
}

// lowerWord reports whether the unquoted value at p is a word of lower-case
// letters, which proseKey never accepts (onlyLetters for passwords, not
// looksRandom for the other kinds).
func lowerWord(s string, p int) bool {
	q := p
	for q < len(s) && s[q] >= 'a' && s[q] <= 'z' {
		q++
	}
	return q > p && (q == len(s) || valueStop[s[q]])
}

// promptWords are the words of a prompt for a credential, lower case
// ("pin" only as a word of its own: not ping, spinner), and the kind of
// the answer.
var promptWords = []struct {
	w    string
	kind Kind
}{
	{"assword", KindPassword}, {"asswd", KindPassword}, {"passphrase", KindPassword}, {"passcode", KindPassword},
	{"token", KindToken}, {"secret", KindSecret}, {"pin", KindPassword},
}

// promptAnswer masks what a script types at a prompt for a credential:
// expect's send "X\r" and pexpect's sendline('X') after an expect whose
// quoted pattern asks for a password, passphrase, passcode, PIN, token or
// secret. It is called at each "expect" (a needle, scan.go), not on a
// trigger byte: the prompt words share no byte the trigger table could
// filter on, and "pass" alone put a call on every 'w' after it in code.
// p is where the name "expect" ends: a quoted pattern (maybe in a list,
// behind -re/-ex, JSON-escaped) naming a credential on its line, then
// within 320 bytes the send/sendline of a quoted one-word answer.
func promptAnswer(s string, p int) (Match, bool) {
	q, ok := promptPattern(s, p)
	if !ok {
		return Match{}, false // expect(res.token): a test assertion, not a pattern
	}
	k := strings.Index(s[q:min(len(s), q+320)], "send")
	if k < 0 {
		return Match{}, false
	}
	le := strings.IndexByte(s[q:min(len(s), q+256)], '\n')
	if le < 0 {
		le = min(len(s), q+256) - q
	}
	kind, ok := promptCredential(s[q+1 : q+min(le, k)]) // the pattern: its line, up to the send
	if !ok {
		return Match{}, false
	}
	vs, ve, ok := sentAnswer(s, q+k)
	if !ok {
		return Match{}, false
	}
	val := s[vs:ve]
	if len(val) < 4 || isPlaceholder(val) || strings.ContainsAny(val, " $[") {
		return Match{}, false // $env(PIN), [exec pass show x]: a reference
	}
	return Match{kind, vs, ve}, true
}

// promptPattern returns where the quoted pattern after "expect" (ending at
// p) starts: maybe in a list, behind -re/-ex/-gl, JSON-escaped.
func promptPattern(s string, p int) (int, bool) {
	q := skipOver(s, p, p+16, " ([")
	for _, f := range []string{"-re ", "-ex ", "-gl "} {
		if hasPrefixAt(s, q, f) {
			q += len(f)
		}
	}
	return q, q < len(s) && isOneOf(s[q], "\"'\\{")
}

// sentAnswer returns the quoted answer of the send or sendline at k,
// without its typed Enter (\r, \n, maybe escaped).
func sentAnswer(s string, k int) (vs, ve int, ok bool) {
	v := k + 4
	if hasPrefixAt(s, v, "line") {
		v += 4
	}
	v = skipOver(s, v, k+16, " (")
	if hasPrefixAt(s, v, "-- ") {
		v += 3
	}
	if v >= len(s) || !isOneOf(s[v], "\"'\\") {
		return 0, 0, false
	}
	vs, ve, quoted := value(s, v)
	if !quoted || ve <= vs {
		return 0, 0, false
	}
	for _, esc := range []string{`\\r`, `\\n`, `\r`, `\n`, "\r", "\n"} {
		if e := len(s[vs:ve]) - len(esc); e > 0 && s[vs+e:ve] == esc {
			return vs, vs + e, true
		}
	}
	return vs, ve, true
}

// promptCredential reports whether an expect pattern (from after its
// opening quote) asks for a credential: a word of promptWords, then up to
// the closing quote either a ':' or '?' or no letter ("Password for
// deploy:", "*assword*", "(?i)passphrase"), so that a pattern that reports
// ("PIN accepted", "token expired") is not taken for a prompt.
func promptCredential(pat string) (Kind, bool) {
	var buf [256]byte
	n := copy(buf[:], pat)
	for j := 0; j < n; j++ {
		buf[j] = lower(buf[j])
	}
	low := string(buf[:n]) // one lower-casing, then a SIMD search a word
	pat = pat[:n]
	for _, pw := range promptWords {
		w := pw.w
		k := strings.Index(low, w)
		if k < 0 {
			continue
		}
		e := k + len(w)
		if w == "pin" && (!boundary(pat, k) || e < len(pat) && isLetter(pat[e])) {
			continue
		}
		rest := pat[e:]
		if c := strings.IndexAny(rest, "\"'"); c >= 0 {
			rest = rest[:c]
		}
		if strings.ContainsAny(rest, ":?") || !hasLetter(rest) {
			return pw.kind, true
		}
	}
	return "", false
}

func hasLetter(v string) bool {
	for i := 0; i < len(v); i++ {
		if isLetter(v[i]) {
			return true
		}
	}
	return false
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// Secrets on a command line: --password X, --token=X is an assignment,
// mysql -pX, sshpass -p X, docker login -p X. Triggered on the dash.

// flagStart are the bytes a flag may follow.
var flagStart = byteSet(" \t\n\"'`(=")

// longFlag masks the value of --<name> <value> when the name is a secret
// key (--password, --token, --api-key, --client-secret, ...); n is the index
// of the name. --name=value is left to assignment.
func longFlag(s string, n int) (Match, bool) {
	e := runTo(s, n, n+maxKeyLen+1, setURLSafe)
	if e == n || e-n > maxKeyLen || e >= len(s) || s[e] != ' ' {
		return Match{}, false
	}
	var buf [maxKeyLen]byte
	key := foldKey(buf[:0], s[n:e])
	if kind, ok := nameKind(key); ok {
		return spacedValue(s, e, kind, key)
	}
	return Match{}, false
}

// shortFlag masks the password of a single-dash flag: -p in the commands
// that take one there (mysql/mariadb -pX attached, "-p X" prompting with X
// the database; sshpass, 7z, "<tool> login ... -p X"), the one-letter
// password flags of passFlags (ssh-keygen -N/-P, zip -P, redis-cli -a), and
// single-dash long flags named like a password (openssl -passin pass:X,
// keytool -storepass X). s[i] is the dash.
func shortFlag(s string, i int) (Match, bool) {
	if i+2 >= len(s) {
		return Match{}, false
	}
	if isAlnum(s[i+2]) && s[i+1] != 'p' || s[i+1] == 'p' && hasPrefixAt(s, i+2, "ass") {
		return longSingleDash(s, i)
	}
	c := s[i+1]
	attached := !isSpaceByte(s[i+2])
	if c != 'p' && (attached || len(passFlags[c]) == 0) {
		return Match{}, false // before reading the line: "- item", "-v ", "-x"
	}
	line := lineBefore(s, i)
	if c == 'p' {
		return pFlag(s, i, attached, line)
	}
	if containsAny(line, passFlags[c]) {
		return spacedValue(s, i+2, KindPassword, nil)
	}
	return Match{}, false
}

// pFlag masks the password of -p: attached in mysql/mariadb -pX, sshpass
// -pX and 7z -pX, spaced in sshpass -p X and "<tool> login ... -p X".
func pFlag(s string, i int, attached bool, line string) (Match, bool) {
	switch {
	case attached && (s[i+2] == '-' || valueStop[s[i+2]] && !isOneOf(s[i+2], "\"'")):
		return Match{}, false
	case attached && containsAny(line, pAttachedTools):
		return spacedValue(s, i+1, KindPassword, nil)
	case !attached && containsAny(line, pSpacedTools):
		return spacedValue(s, i+2, KindPassword, nil)
	}
	return Match{}, false
}

var (
	pAttachedTools = []string{"mysql", "mariadb", "sshpass", "7z "}
	pSpacedTools   = []string{"sshpass", " login"}
)

// containsAny reports whether s contains one of words.
func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// passFlags lists, per one-letter flag, the commands in which it takes a
// password or passphrase as its next word.
var passFlags = [256][]string{
	'N': {"ssh-keygen"},
	'P': {"ssh-keygen", "zip", "unzip"},
	'a': {"redis-cli"},
	'k': {"openssl enc", "openssl aes", "openssl des"},
}

// longSingleDash masks the value of -<name> <value> (openssl's -passin,
// -passout, -pass; keytool's -storepass, -keypass, -srcstorepass) when the
// name is a password's; openssl's "pass:X" form keeps its prefix, and its
// env:/file:/fd: forms name no secret.
func longSingleDash(s string, i int) (Match, bool) {
	n := i + 1
	e, ok := singleDashName(s, n)
	if !ok {
		return Match{}, false // -name, -exec, -delete: no keyword in the name
	}
	var buf [maxKeyLen]byte
	key := foldKey(buf[:0], s[n:e])
	if _, ok := classifyKey(key, false); !ok && !hasSuffixBytes(key, "pass") && string(key) != "passin" && string(key) != "passout" {
		return Match{}, false
	}
	v := e + 1
	if hasPrefixAt(s, v, "pass:") {
		return spacedValue(s, v+4, KindPassword, nil)
	}
	for _, p := range []string{"env:", "file:", "fd:", "stdin"} {
		if hasPrefixAt(s, v, p) {
			return Match{}, false
		}
	}
	return spacedValue(s, e, KindPassword, key)
}

// singleDashName returns the end of the flag name at n, followed by a
// space, when a hand-written keyword may start in it.
func singleDashName(s string, n int) (int, bool) {
	e := runTo(s, n, n+maxKeyLen+1, cAlnum)
	return e, e-n >= 4 && e-n <= maxKeyLen && e < len(s) && s[e] == ' ' && keyFamilies(s[n:e])&triHand != 0
}

// spacedValue masks the value that starts after the spaces at p (or right
// after the flag letter p for -pX), quoted or up to the next space, if it is
// a plausible literal secret of kind k. key, when given, is the folded name.
func spacedValue(s string, p int, k Kind, key []byte) (Match, bool) {
	v := skipOver(s, p+1, p+4, " ")
	if v >= len(s) || s[v] == '-' || hasPrefixAt(s, v, markerPrefix) {
		return Match{}, false
	}
	vs, ve, quoted := value(s, v)
	if ve <= vs {
		return Match{}, false
	}
	val := s[vs:ve]
	if !plausible(s, k, val, ve, quoted, false, ' ') || keyAsValue(key, val) {
		return Match{}, false
	}
	return Match{k, vs, ve}, true
}

// lineBefore returns the text from the start of i's line (at most 256 bytes
// back) to i.
func lineBefore(s string, i int) string {
	lo := max(0, i-256)
	if k := strings.LastIndexByte(s[lo:i], '\n'); k >= 0 {
		lo += k + 1
	}
	return s[lo:i]
}
