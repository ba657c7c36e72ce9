package resume

import (
	"unicode"
	"unicode/utf8"
)

// Estimate returns an estimate of how many tokens s costs a current BPE
// tokenizer (cl100k_base / o200k_base class). It follows the tokenizers'
// pre-split — letter runs with their leading space, digit groups of three,
// punctuation runs, whitespace runs — and prices each piece with weights
// fitted (non-negative least squares on relative error) against cl100k_base
// on the repository's fixtures, then adds Margin so a prompt packed to a
// budget does not overrun it. estimate_test.go measures the error against
// the real tokenizers. It allocates nothing.
func Estimate(s string) int {
	var n float64
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' && i+1 < len(s) && isWordByte(s[i+1]):
			i++ // a single space joins the word that follows
		case isSpaceByte(c):
			n, i = spaceRun(s, i, n)
		case isLetter(c):
			n, i = letterRun(s, i, n)
		case c >= '0' && c <= '9':
			n, i = digitRun(s, i, n)
		case c < utf8.RuneSelf:
			n, i = punctRun(s, i, n)
		default:
			n, i = nonASCII(s, i, n)
		}
	}
	return int(n*Margin) + 1
}

// The pieces of Estimate's pre-split: each adds its price to n and
// returns where the next piece starts.

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func spaceRun(s string, i int, n float64) (float64, int) {
	j := i
	for j < len(s) && isSpaceByte(s[j]) {
		j++
	}
	n += wSpace
	if j < len(s) && j-i > 1 && s[j-1] == ' ' {
		n += wIndent // indentation before code or JSON splits off
	}
	return n, j
}

func letterRun(s string, i int, n float64) (float64, int) {
	j := i
	for j < len(s) && isLetter(s[j]) {
		j++
	}
	n += wWord
	if j-i > 6 {
		n += wLongLetter * float64(j-i-6)
	}
	return n, j
}

// digitRun prices digits in groups of three.
func digitRun(s string, i int, n float64) (float64, int) {
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	return n + wDigits*float64((j-i+2)/3), j
}

func punctRun(s string, i int, n float64) (float64, int) {
	j := i
	for j < len(s) && s[j] < utf8.RuneSelf && !isWordByte(s[j]) && !isSpaceByte(s[j]) {
		j++
	}
	return n + (wPunct + wPunctMore*float64(j-i-1)), j
}

// nonASCII prices one rune: a CJK character, another letter, or bytes.
func nonASCII(s string, i int, n float64) (float64, int) {
	r, size := utf8.DecodeRuneInString(s[i:])
	switch {
	case unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r):
		n += wCJK
	case unicode.IsLetter(r):
		n += wLetter
	default:
		n += wOtherByte * float64(size)
	}
	return n, i + size
}

// Margin is the safety factor over the fitted estimate.
const Margin = 1.08

// Fitted weights (tokens per piece).
const (
	wSpace      = 1.188 // a whitespace run not absorbed by the next word
	wIndent     = 0.675 // extra for a run of 2+ ending in spaces (indentation)
	wWord       = 1.126 // an ASCII letter run
	wLongLetter = 0.160 // each letter of a run beyond the sixth
	wDigits     = 1.380 // a group of up to three digits
	wPunct      = 0.134 // a punctuation run
	wPunctMore  = 0.324 // each further character of a punctuation run
	wCJK        = 0.813 // a Han/Kana/Hangul character
	wLetter     = 0.5   // another non-ASCII letter (not in the fit: no fixtures)
	wOtherByte  = 0.520 // each byte of another non-ASCII rune (symbols, emoji)
)

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isWordByte(c byte) bool { return isLetter(c) || c >= '0' && c <= '9' || c >= utf8.RuneSelf }
