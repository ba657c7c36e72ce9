package redact

// Rules for values that look like secrets but are not: placeholders,
// references to variables or the environment, type names and prose. They keep
// the false-positive rate on ordinary code and docs under 1 % (see
// testdata/redact/clean and TestCorpus). When in doubt about a value that
// follows a strong key (password=...), we redact; for weaker keys (token,
// secret, credential, auth, private) the value must also look random.

// placeholderWords are whole values (any case) that are never secrets.
var placeholderWords = []string{
	"null", "nil", "none", "true", "false", "undefined", "yes", "no", "on", "off",
	"string", "str", "bool", "boolean", "int", "integer", "number", "object", "any", "bytes",
	"password", "passwd", "pass", "pwd", "secret", "secrets", "token", "apikey", "api_key", "key",
	"required", "optional", "empty", "test", "default", "value", "hidden", "masked", "prompt",
	"env", "n/a", "tbd", "todo", "unset", "omitted", "removed", "foo", "bar", "foobar", "baz",
	"secret_key", "access_token", "auth_token", "api-key", "api_token", "mysecret", "mypassword",
	"mytoken", "s3cr3t", "p@ssw0rd", "p@ssword", "passw0rd",
	"function", "func", "lambda", "async", "await", "new", "require", "import", "typeof", "self", "this",
}

const maxWordLen = 14 // longest of placeholderWords

// placeholderParts mark a value (any case) as a placeholder wherever they occur.
var placeholderParts = []string{
	"${", "{{", "$(", "<", ">", "...", "\u2026", "xxxx", "****", "####",
	"changeme", "change_me", "change-me", "changeit", "your", "example", "placeholder",
	"dummy", "redacted", "replace_me", "replace-me", "replaceme", "insert_", "insert-",
	"fixme", "todo_", "sample_", "here", ".*",
}

// partsByFirst indexes placeholderParts by their first byte, so isPlaceholder
// looks at each byte of a value once.
var partsByFirst = func() (t [256][]string) {
	for _, p := range placeholderParts {
		t[p[0]] = append(t[p[0]], p)
	}
	return t
}()

// isPlaceholder reports whether v is obviously not a real secret.
func isPlaceholder(v string) bool {
	if v == "" || allSame(v) || reference(v) || numeric(v) {
		return true
	}
	if len(v) <= maxWordLen {
		for _, w := range placeholderWords {
			if equalFold(v, w) {
				return true
			}
		}
	}
	return hasPlaceholderPart(v)
}

// reference reports a value that names another: $TOKEN, ${TOKEN}, $(cmd)
// (a $2b$... bcrypt hash stays secret), %TOKEN%, %s, {token}, <token>,
// YAML tags/aliases/anchors, @Value, arrays.
func reference(v string) bool {
	switch v[0] {
	case '$':
		return len(v) > 1 && (classes[v[1]]&(cAlnum|cUnder) != 0 && classes[v[1]]&cDigit == 0 || v[1] == '{' || v[1] == '(')
	case '%', '{', '<', '!', '*', '&', '@', '[':
		return true
	}
	return false
}

// hasPlaceholderPart reports whether a placeholder part (xxx, example,
// your_ ...) occurs in v.
func hasPlaceholderPart(v string) bool {
	for i := 0; i < len(v); i++ {
		for _, p := range partsByFirst[lower(v[i])] {
			if len(v)-i >= len(p) && equalFold(v[i:i+len(p)], p) {
				return true
			}
		}
	}
	return false
}

// numeric reports whether v is a number, a version or a duration-like value
// (digits and . - _ : only), or a hex literal (0x53c2_37).
func numeric(v string) bool {
	if len(v) > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X') {
		return hexDigits(v[2:])
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if classes[c]&cDigit == 0 && c != '.' && c != '-' && c != '_' && c != ':' {
			return false
		}
	}
	return true
}

// hexDigits reports whether v is hex digits and '_' only.
func hexDigits(v string) bool {
	for i := 0; i < len(v); i++ {
		if classes[v[i]]&cHexLow == 0 && !(v[i] >= 'A' && v[i] <= 'F') && v[i] != '_' {
			return false
		}
	}
	return true
}

// looksRandom reports whether v has the character mix of a generated
// credential rather than a word or identifier.
func looksRandom(v string) bool {
	if len(v) < 8 {
		return false
	}
	d, l, u := charKinds(v)
	return d && (l || u) || l && u && len(v) >= 12 && caseFlips(v)*3 >= len(v)
}

// caseFlips counts adjacent letter pairs that differ in case: few in
// CamelCase words (StartElement: 3), many in random base62/base64.
func caseFlips(v string) int {
	flips := 0
	for i := 1; i < len(v); i++ {
		a, b := classes[v[i-1]], classes[v[i]]
		if a&cAlnum != 0 && b&cAlnum != 0 && a&cDigit == 0 && b&cDigit == 0 && a&cUpper != b&cUpper {
			flips++
		}
	}
	return flips
}

// randomIdent reports whether an identifier-shaped value is more likely a
// generated credential than a CamelCase name: long, all three character
// classes, and the case flips often (testRSA2048PrivateKey flips 5 times in 21
// bytes; 20 random base62 bytes flip about 8 times).
func randomIdent(v string) bool {
	return len(v) >= 20 && looksRandom(v) && hasDigit(v) && caseFlips(v)*4 >= len(v)
}

// isIdent reports whether v is a single identifier: [A-Za-z_][A-Za-z0-9_]*.
func isIdent(v string) bool {
	return v != "" && classes[v[0]]&cDigit == 0 && runTo(v, 0, len(v), setWord) == len(v)
}

// isMemberAccess reports whether v is a dotted identifier path such as
// cfg.Password, os.environ or process.env.TOKEN.
func isMemberAccess(v string) bool {
	parts := 0
	start := 0
	for i := 0; i <= len(v); i++ {
		if i == len(v) || v[i] == '.' {
			if !isIdent(v[start:i]) {
				return false
			}
			parts++
			start = i + 1
		}
	}
	return parts >= 2
}

func onlyLetters(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return v != ""
}
