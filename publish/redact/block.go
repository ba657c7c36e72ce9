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
		k := g
		for k < limit && classes[s[k]]&setBase64 != 0 {
			k++
		}
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
	j := i
	for j < limit && j-i < 8 && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	d := j
	for j < limit && j-d < 8 && classes[s[j]]&cDigit != 0 {
		j++
	}
	switch {
	case j == d:
		return i
	case hasPrefixAt(s, j, "\u2192"):
		return j + len("\u2192")
	case j < limit && isOneOf(s[j], "\t:|"):
		return j + 1
	}
	return i
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
		e := p + m + len("Private-MAC:")
		for e < limit && s[e] == ' ' {
			e++
		}
		return Match{KindPrivateKey, i, runAll(s, e, setAlnum)}, true
	}
	for p < limit && (s[p] == ' ' || classes[s[p]]&cDigit != 0) {
		p++
	}
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
