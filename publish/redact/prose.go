package redact

import "strings"

// Secrets stated in words: "my db password is Hunter2-Prod!", "the api key
// is 8f3a...", "password s3cr3t-Value" in a .netrc, "aws configure set
// aws_secret_access_key X". Triggered on the 'w' of pw/passwd/password or
// the 'k' of token/key; "key: value" and "key=value" are assignments.

// proseKey is called with s[i] == 'w' or 'k'.
func proseKey(s string, i int) (Match, bool) {
	we := i + 1
	for we < len(s) && we-i < maxKeyLen && classes[s[we]]&setURLSafe != 0 {
		we++
	}
	if we >= len(s) || s[we] != ' ' {
		return Match{}, false // password), token. token, ...: not a statement
	}
	ws := i
	for ws > 0 && i-ws < maxKeyLen && classes[s[ws-1]]&setURLSafe != 0 {
		ws--
	}
	if ws > 0 && isOneOf(s[ws-1], "./$%{<@") {
		return Match{}, false // a path, variable or field
	}
	verb := hasPrefixAt(s, we+1, "is ") || hasPrefixAt(s, we+1, "was ")
	lineStart := ws
	for lineStart > 0 && (s[lineStart-1] == ' ' || s[lineStart-1] == '\t') {
		lineStart--
	}
	if !verb && lineStart > 0 && s[lineStart-1] != '\n' && ws > 0 && s[ws-1] != ' ' {
		return Match{}, false // no verb, and not "set <key>", "login x password" or a line of its own
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
