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
	if !ok && string(key) != "pass" && string(key) != "pw" {
		return Match{}, false
	}
	if !ok {
		kind = KindPassword
	}
	return spacedValue(s, e, kind, key)
}

// shortFlag masks the password of -p in the commands that take one there:
// mysql/mariadb -pX (attached; "-p X" prompts, X being the database),
// sshpass -p X and -pX, and "<tool> login ... -p X" (docker, podman, helm,
// oras). s[i] is the dash.
func shortFlag(s string, i int) (Match, bool) {
	if !hasPrefixAt(s, i+1, "p") || i+2 >= len(s) {
		return Match{}, false
	}
	line := lineBefore(s, i)
	attached := !isSpaceByte(s[i+2])
	switch {
	case attached && (s[i+2] == '-' || valueStop[s[i+2]] && !isOneOf(s[i+2], "\"'")):
		return Match{}, false
	case attached && (strings.Contains(line, "mysql") || strings.Contains(line, "mariadb") || strings.Contains(line, "sshpass")):
		return spacedValue(s, i+1, KindPassword, nil)
	case !attached && (strings.Contains(line, "sshpass") || strings.Contains(line, " login")):
		return spacedValue(s, i+2, KindPassword, nil)
	}
	return Match{}, false
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
	if !plausible(s, k, val, ve, quoted, false, ' ') || key != nil && len(val) <= len(key) && strings.Contains(string(key), foldValue(val)) {
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
