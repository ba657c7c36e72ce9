package redact

import (
	"encoding/base64"
	"strings"
)

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
	// The body ends at the first dashes: END, or the next block's BEGIN
	// when this one lost its END. Searching only that far keeps a text
	// made of headers linear (searching for END alone scanned 64 KB per
	// header).
	if k := strings.Index(s[bodyStart:limit], dashes); k >= 0 && hasPrefixAt(s, bodyStart+k, endMarker) {
		ts := bodyStart + k + len(endMarker)
		te := strings.Index(s[ts:min(len(s), ts+maxLabel)], dashes)
		if te < 0 || countBase64(s[bodyStart:bodyStart+k]) < minKeyBase64 {
			return Match{}, false
		}
		return Match{KindPrivateKey, i, ts + te + len(dashes)}, true
	}
	e := keyBody(s, bodyStart, limit)
	if countBase64(s[bodyStart:e]) < minKeyBase64 {
		if strings.Trim(s[bodyStart:], " \t\r\n\u2026") == "" {
			// The text ends with the header: a first line or a clip kept
			// only that much of a key. Mask the header, which says a key
			// follows.
			return Match{KindPrivateKey, i, bodyStart}, true
		}
		return Match{}, false
	}
	return Match{KindPrivateKey, i, e}, true
}

// keyBody returns the end of a key body that has no END line (a transcript
// or a tool result cut mid-key), starting at p: runs of base64 separated by
// line breaks (real or "\n"-escaped), each line maybe behind a line-number
// prefix (Claude's Read "    12→", cat -n "    12\t", grep -n "12:") and
// wrapped in string-literal glue (quotes, '+', ',', ';', ')', "\n" escapes)
// as source code splits a PEM block across literals. A run that is neither
// followed by a line break nor 16 bytes long (a word of the prose after the
// key) ends the body before it.
func keyBody(s string, p, limit int) int {
	end, i := p, p
	for first := true; i < limit; first = false {
		g, brk := skipKeyGlue(s, i, limit)
		if g >= limit || !brk && !first {
			break
		}
		k := runTo(s, g, limit, setBase64)
		if k == g {
			break
		}
		if _, brk2 := skipKeyGlue(s, k, limit); !brk2 && k < len(s) && k-g < 16 {
			break
		}
		end, i = k, k
	}
	return end
}

// skipKeyGlue skips what may sit between two lines of a key body from i; brk
// reports whether that included a line break. After a line break a
// line-number prefix is skipped too.
func skipKeyGlue(s string, i, limit int) (int, bool) {
	brk := false
	for i < limit {
		c := s[i]
		switch {
		case c == '\n':
			brk = true
			i++
			i = skipLineNumber(s, i, limit)
			continue
		case c == '\\' && i+1 < limit && (s[i+1] == 'n' || s[i+1] == 'r'):
			brk = brk || s[i+1] == 'n'
			i += 2
			if s[i-1] == 'n' {
				i = skipLineNumber(s, i, limit)
			}
			continue
		case isOneOf(c, " \t\r\"'`+,;)\\"):
			i++
			continue
		}
		break
	}
	return i, brk
}

// skipLineNumber skips "   12→", "   12\t", "12:" or "12|" at i.
func skipLineNumber(s string, i, limit int) int {
	d := skipOver(s, i, min(limit, i+8), " \t")
	j := runTo(s, d, min(limit, d+8), cDigit)
	switch {
	case j == d:
		return i
	case hasPrefixAt(s, j, "\u2192"):
		return j + len("\u2192")
	case j < limit && isOneOf(s[j], "\t:|"):
		return j + 1
	case hasPrefixAt(s, j, `\t`) && j+2 <= limit:
		return j + 2 // cat -n inside a JSON string
	}
	return i
}

// privateKeyTail masks the second part of a key read in two parts: base64
// lines (behind line numbers and string glue, as keyBody reads them) that
// end with an END line and have no BEGIN in reach. s[i:] starts with
// "-----END ".
func privateKeyTail(s string, i int) (Match, bool) {
	ts := i + len(endMarker)
	te := strings.Index(s[ts:min(len(s), ts+maxLabel)], dashes)
	if te < 0 || !strings.Contains(s[ts:ts+te], "PRIVATE KEY") {
		return Match{}, false
	}
	lim := max(0, i-maxKeyBlock)
	b := keyBodyBack(s, skipLineNumberBack(s, i, lim), lim)
	if b >= i || countBase64(s[b:i]) < minKeyBase64 {
		return Match{}, false
	}
	return Match{KindPrivateKey, b, ts + te + len(dashes)}, true
}

// keyBodyBack is keyBody read backwards: the start of the base64 lines
// that end at p, no further back than limit.
func keyBodyBack(s string, p, limit int) int {
	start := p
	for first := true; p > limit; first = false {
		g, brk := skipKeyGlueBack(s, p, limit)
		if !brk && !first {
			break
		}
		k := runBack(s, g, limit, setBase64)
		if k < g && k > 0 && s[k-1] == '\\' && isOneOf(s[k], "ntr") {
			k++ // the letter of a "\n" or "\t" escape
		}
		if k == g {
			break
		}
		pre, brk2 := skipKeyGlueBack(s, skipLineNumberBack(s, k, limit), limit)
		if !brk2 && pre > limit && g-k < 16 {
			break // a word of the prose before the key
		}
		start, p = k, skipLineNumberBack(s, k, limit)
	}
	return start
}

// skipKeyGlueBack is skipKeyGlue read backwards from p: it returns where
// the glue before p starts and whether it held a line break.
func skipKeyGlueBack(s string, p, limit int) (int, bool) {
	brk := false
	for p > limit {
		c := s[p-1]
		switch {
		case c == '\n':
			brk = true
			p--
			continue
		case p-2 >= limit && s[p-2] == '\\' && (c == 'n' || c == 'r'):
			brk = brk || c == 'n'
			p -= 2
			continue
		case isOneOf(c, " \t\r\"'`+,;(\\"):
			p--
			continue
		}
		break
	}
	return p, brk
}

// skipLineNumberBack steps back over a line-number prefix ("   12→",
// "   12\t", "12:", "   12\\t" in JSON) that ends at p, if there is one.
func skipLineNumberBack(s string, p, limit int) int {
	j := p
	switch {
	case j-len("\u2192") >= limit && hasSuffixAt(s, j, "\u2192"):
		j -= len("\u2192")
	case j-2 >= limit && hasSuffixAt(s, j, `\t`):
		j -= 2
	case j-1 >= limit && isOneOf(s[j-1], "\t:|"):
		j--
	default:
		return p
	}
	d := runBack(s, j, max(limit, j-8), cDigit)
	if d == j {
		return p
	}
	return skipBack(s, d, limit, " ")
}

// b64Headers are the base64 spellings of headers that start a secret (a
// PEM block, a PuTTY key, an age key) at each of the three byte alignments
// (the header at a byte offset of 0, 1 or 2 mod 3 in the encoded data):
// only the 3-byte groups wholly inside the header, so they do not depend on
// the bytes around it. A base64 run holding one (a Kubernetes tls.key:, a
// base64'd id_rsa, a file with a comment or a blank line before its key) is
// decoded from its start and masked when the decoded text holds a secret.
// They are needles (scan.go).
var b64Headers = func() (hs []string) {
	for _, h := range []string{"-----BEGIN ", "PuTTY-User-Key-File-", "AGE-SECRET-KEY-1"} {
		for skip := 0; skip < 3; skip++ {
			g := h[skip:]
			hs = append(hs, base64.StdEncoding.EncodeToString([]byte(g[:len(g)/3*3])))
		}
	}
	return hs
}()

// base64Secret decodes the base64 data holding the header spelling at p
// (see b64Headers) and masks it when the decoded text holds a secret.
func base64Secret(s string, p int) (Match, bool) {
	if hasPrefixAt(s, p, "LS0t") && !b64PrivateLabel(s, p) {
		return Match{}, false // a certificate or public key: not decoded
	}
	st := b64RunStart(s, p)
	if !boundary(s, st) {
		return Match{}, false
	}
	return decodedSecret(s, st, keyBody(s, st, min(len(s), st+4*maxKeyBlock/3)))
}

// b64PrivateLabel decodes the 20 base64 groups at p (a PEM header's
// dashes, aligned on a group) and reports whether they name a private
// key: Kubernetes secrets and kubeconfigs carry base64 certificates far
// more often than keys, and a certificate decoded whole cost an
// allocation and a Find of its text (~10 us for a 1 KB one).
func b64PrivateLabel(s string, p int) bool {
	var enc [80]byte
	n := 0
	for i := p; i < len(s) && n < len(enc); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++ // a "\n" escape between lines
		case classes[c]&setBase64 != 0:
			enc[n] = c
			n++
		case c == '\n' || c == '\r' || c == ' ':
		default:
			i = len(s)
		}
	}
	var dec [60]byte
	k, _ := base64.StdEncoding.Decode(dec[:], enc[:n/4*4])
	return strings.Contains(string(dec[:k]), "PRIVATE KEY")
}

// b64RunStart returns where the base64 data holding the header spelling
// at p starts: back over its lines (keyBodyBack) to a 4-byte group
// boundary that keeps p on one, or p when there is none.
func b64RunStart(s string, p int) int {
	lim := max(0, p-maxKeyBlock)
	st := p
	for st > lim && classes[s[st-1]]&setBase64 != 0 && s[st-1] != '=' {
		st-- // the line holding p, however short its start ('=' only pads its end)
	}
	if _, brk := skipKeyGlueBack(s, st, lim); brk {
		st = min(st, keyBodyBack(s, st, lim)) // and the lines before it
	}
	for n := countBase64(s[st:p]) % 4; n > 0 && st < p; st++ {
		if classes[s[st]]&setBase64 != 0 {
			n--
		}
	}
	return st
}

// decodedSecret decodes the base64 lines s[p:e] (glue and line breaks
// dropped) and reports a match over them when the decoded text has a
// secret.
func decodedSecret(s string, p, e int) (Match, bool) {
	var b strings.Builder
	for i := p; i < e; i++ {
		switch {
		case s[i] == '\\':
			i++ // a "\n" escape between lines, not base64
		case classes[s[i]]&setBase64 != 0:
			b.WriteByte(s[i])
		}
	}
	enc := b.String()
	enc = enc[:len(enc)/4*4]
	dec, err := base64.StdEncoding.DecodeString(enc)
	if err != nil && len(dec) == 0 {
		if dec, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(enc, "=")); err != nil {
			return Match{}, false
		}
	}
	ms := Find(string(dec))
	if len(ms) == 0 {
		return Match{}, false
	}
	return Match{ms[0].Kind, p, e}, true
}

// puttyKey masks a PuTTY .ppk key file from its header ("PuTTY-User-Key-File-",
// at i) through its Private-MAC line or, cut short, its private lines.
func puttyKey(s string, i int) (Match, bool) {
	if !boundary(s, i) {
		return Match{}, false
	}
	limit := min(len(s), i+maxKeyBlock)
	k := strings.Index(s[i:limit], "Private-Lines:")
	if k < 0 {
		return Match{}, false // no private part (yet)
	}
	p := i + k + len("Private-Lines:")
	if m := strings.Index(s[p:limit], "Private-MAC:"); m >= 0 {
		e := skipOver(s, p+m+len("Private-MAC:"), limit, " ")
		return Match{KindPrivateKey, i, runAll(s, e, cAlnum)}, true
	}
	p = skipOver(s, p, limit, " 0123456789")
	return Match{KindPrivateKey, i, max(p, keyBody(s, p, limit))}, true
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
