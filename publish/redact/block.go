package redact

import "strings"

const (
	beginMarker  = "-----BEGIN "
	endMarker    = "-----END "
	dashes       = "-----"
	maxLabel     = 64       // "ENCRYPTED PRIVATE KEY", "PGP PRIVATE KEY BLOCK"
	maxKeyBlock  = 64 << 10 // an armored RSA-16384 key is ~13 KB
	minKeyBase64 = 32
)

// privateKey masks a whole PEM/OpenSSH/PGP private key block, header to
// trailer, across real or JSON-escaped ("\n") newlines. s[i:] starts with
// "-----BEGIN ". When the END line is missing (a transcript tail cut mid-key),
// the block runs to the end of the base64 body (lines, or "\n"-escaped lines,
// of base64; the first space ends it). Certificates and public keys
// are not matched.
func privateKey(s string, i int) (Match, bool) {
	hs := i + len(beginMarker)
	he := strings.Index(s[hs:min(len(s), hs+maxLabel)], dashes)
	if he < 0 {
		return Match{}, false
	}
	if !strings.Contains(s[hs:hs+he], "PRIVATE KEY") {
		return Match{}, false
	}
	bodyStart := hs + he + len(dashes)
	limit := min(len(s), bodyStart+maxKeyBlock)
	if k := strings.Index(s[bodyStart:limit], endMarker); k >= 0 {
		ts := bodyStart + k + len(endMarker)
		te := strings.Index(s[ts:min(len(s), ts+maxLabel)], dashes)
		if te < 0 || countBase64(s[bodyStart:bodyStart+k]) < minKeyBase64 {
			return Match{}, false
		}
		return Match{KindPrivateKey, i, ts + te + len(dashes)}, true
	}
	e := bodyStart
	for e < limit && (classes[s[e]]&setBase64 != 0 || isOneOf(s[e], "\r\n\\")) {
		e++
	}
	for e > bodyStart && (s[e-1] == '\r' || s[e-1] == '\n' || hasSuffixAt(s, e, "\\n")) {
		if s[e-1] == 'n' {
			e--
		}
		e--
	}
	if countBase64(s[bodyStart:e]) < minKeyBase64 {
		return Match{}, false
	}
	return Match{KindPrivateKey, i, e}, true
}

func countBase64(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if classes[s[i]]&setBase64 != 0 {
			n++
		}
	}
	return n
}
