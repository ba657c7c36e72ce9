package redact

import "strings"

// Secrets on a command line: --password X, --token=X is an assignment,
// mysql -pX, sshpass -p X, docker login -p X. Triggered on the dash.

// flagStart are the bytes a flag may follow.
var flagStart = byteSet(" \t\n\"'`(=")

// longFlag masks the value of --<name> <value> when the name is a secret
// key (--password, --token, --api-key, --client-secret, ...); n is the index
// of the name. --name=value is left to assignment.
func longFlag(s string, n int) (Match, bool) {
	e := n
	for e < len(s) && e-n <= maxKeyLen && (isAlnum(s[e]) || s[e] == '-' || s[e] == '_') {
		e++
	}
	if e == n || e-n > maxKeyLen || e >= len(s) || s[e] != ' ' {
		return Match{}, false
	}
	var buf [maxKeyLen]byte
	key := foldKey(buf[:0], s[n:e])
	kind, ok := classifyKey(key, false)
	if !ok && string(key) != "pw" && !hasSuffixBytes(key, "pass") && !hasSuffixBytes(key, "pwd") {
		return Match{}, false // --pass, --db-pass, --pwd, --admin-pwd count too
	}
	if !ok {
		kind = KindPassword
	}
	return spacedValue(s, e, kind, key)
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
	e := n
	for e < len(s) && e-n <= maxKeyLen && isAlnum(s[e]) {
		e++
	}
	return e, e-n >= 4 && e-n <= maxKeyLen && e < len(s) && s[e] == ' ' && keyFamilies(s[n:e])&triHand != 0
}

// spacedValue masks the value that starts after the spaces at p (or right
// after the flag letter p for -pX), quoted or up to the next space, if it is
// a plausible literal secret of kind k. key, when given, is the folded name.
func spacedValue(s string, p int, k Kind, key []byte) (Match, bool) {
	v := p + 1
	for v < len(s) && v-p < 4 && s[v] == ' ' {
		v++
	}
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
