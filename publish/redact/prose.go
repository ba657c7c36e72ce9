package redact

import "strings"

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
	verb := hasPrefixAt(s, we+1, "is ") || hasPrefixAt(s, we+1, "was ")
	ws := i
	for ws > 0 && i-ws < maxKeyLen && classes[s[ws-1]]&setURLSafe != 0 {
		ws--
	}
	if ws > 0 && isOneOf(s[ws-1], "./$%{<@") {
		return Match{}, false // a path, variable or field
	}
	if !verb && !hasSuffixAt(s, ws, "set ") && s[ws:we] != "password" {
		return Match{}, false // no verb, not "set <key>" and not .netrc's keyword
	}
	word := s[ws:we]
	var buf [2*maxKeyLen + 1]byte
	key := foldKey(buf[:0], word)
	key = widenKey(s, ws, key, buf[:0])
	kind, ok := classifyKey(key, envStyle(word))
	switch {
	case ok:
	case string(key) == "pw" || string(key) == "pass":
		kind = KindPassword
	default:
		return Match{}, false
	}

	p := we + 1
	switch {
	case verb && s[p] == 'i':
		p += 3
	case verb:
		p += 4
	default:
		// No verb: only "set <key> <value>" and .netrc's "password <value>".
		line := strings.TrimLeft(lineBefore(s, ws), " \t")
		if !(line == "" && kind == KindPassword || strings.HasSuffix(line, "set ") ||
			kind == KindPassword && (strings.Contains(line, "login ") || strings.Contains(line, "machine "))) {
			return Match{}, false
		}
	}
	for p < len(s) && p-we < 16 && s[p] == ' ' {
		p++
	}
	if p >= len(s) || hasPrefixAt(s, p, markerPrefix) {
		return Match{}, false
	}
	vs, ve, quoted := value(s, p)
	if !quoted {
		for ve > vs && isOneOf(s[ve-1], ".,:;)") {
			ve-- // the end of the sentence
		}
	}
	if ve <= vs {
		return Match{}, false
	}
	val := s[vs:ve]
	if isPlaceholder(val) || strings.ContainsAny(val, "([{") || isMemberAccess(val) || len(val) > maxValueLen {
		return Match{}, false
	}
	if kind == KindPassword {
		if len(val) < 6 || onlyLetters(val) || !mixed(val) && !hasSymbol(val) {
			return Match{}, false
		}
	} else if len(val) < 12 || !looksRandom(val) {
		return Match{}, false
	}
	if kind == KindSecret && len(val) == 40 && run(val, 0, setBase64) == 40 && strings.Contains(string(key), "aws") {
		kind = KindAWSSecret
	}
	return Match{kind, vs, ve}, true
}

// hasSymbol reports whether v has a byte that is neither a letter nor a digit.
func hasSymbol(v string) bool {
	for i := 0; i < len(v); i++ {
		if !isAlnum(v[i]) {
			return true
		}
	}
	return false
}

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
	for p < len(s) && s[p] == ' ' {
		p++
	}
	q := p
	for q < len(s) && q-p < 3 && isOneOf(s[q], ":=!<>") {
		q++
	}
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
	we = i + 1
	for we < len(s) && we-i < maxKeyLen && classes[s[we]]&setURLSafe != 0 {
		we++
	}
	if we >= len(s) || s[we] != ' ' {
		return 0, false // password), token. token, ...: not a statement
	}
	p := we + 1
	switch {
	case hasPrefixAt(s, p, "is "):
		p += 3
	case hasPrefixAt(s, p, "was "):
		p += 4
	case operatorNext(s, p):
		return 0, false
	}
	for p < len(s) && p-we < 16 && s[p] == ' ' {
		p++
	}
	if p >= len(s) || lowerWord(s, p) {
		return 0, false // "password must be", "token string", "is returned"
	}
	return we, true
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

// promptWords are the words of a prompt for a credential, lower case;
// "pin" only as a word of its own (not ping, spinner).
var promptWords = []string{"assword", "asswd", "passphrase", "passcode", "token", "secret", "pin"}

// promptAnswer masks what a script types at a prompt for a credential:
// expect's send "X\r" and pexpect's sendline('X') after an expect whose
// quoted pattern asks for a password, passphrase, passcode, PIN, token or
// secret. It is called at each "expect" (a needle, needles.go), not on a
// trigger byte: the prompt words share no byte the trigger table could
// filter on, and "pass" alone put a call on every 'w' after it in code.
// p is where the name "expect" ends: a quoted pattern (maybe in a list,
// behind -re/-ex, JSON-escaped) naming a credential on its line, then
// within 320 bytes the send/sendline of a quoted one-word answer.
func promptAnswer(s string, p int) (Match, bool) {
	q := p
	for q < len(s) && q-p < 16 && isOneOf(s[q], " ([") {
		q++
	}
	for _, f := range []string{"-re ", "-ex ", "-gl "} {
		if hasPrefixAt(s, q, f) {
			q += len(f)
		}
	}
	if q >= len(s) || !isOneOf(s[q], "\"'\\{") {
		return Match{}, false // expect(res.token): a test assertion, not a pattern
	}
	le := strings.IndexByte(s[q:min(len(s), q+256)], '\n')
	if le < 0 {
		le = min(len(s), q+256) - q
	}
	w := s[q:min(len(s), q+320)]
	k := strings.Index(w, "send")
	if k < 0 {
		return Match{}, false
	}
	kind, ok := promptCredential(s[q+1 : q+min(le, k)]) // the pattern: its line, up to the send
	if !ok {
		return Match{}, false
	}
	v := q + k + 4
	if hasPrefixAt(s, v, "line") {
		v += 4
	}
	for v < len(s) && v-q-k < 16 && isOneOf(s[v], " (") {
		v++
	}
	if hasPrefixAt(s, v, "-- ") {
		v += 3
	}
	if v >= len(s) || !isOneOf(s[v], "\"'\\") {
		return Match{}, false
	}
	vs, ve, quoted := value(s, v)
	if !quoted || ve <= vs {
		return Match{}, false
	}
	for _, esc := range []string{`\\r`, `\\n`, `\r`, `\n`, "\r", "\n"} {
		if e := len(s[vs:ve]) - len(esc); e > 0 && s[vs+e:ve] == esc {
			ve = vs + e
			break
		}
	}
	val := s[vs:ve]
	if len(val) < 4 || isPlaceholder(val) || strings.ContainsAny(val, " $[") {
		return Match{}, false // $env(PIN), [exec pass show x]: a reference
	}
	return Match{kind, vs, ve}, true
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
	for _, w := range promptWords {
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
			switch w {
			case "token":
				return KindToken, true
			case "secret":
				return KindSecret, true
			}
			return KindPassword, true
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
