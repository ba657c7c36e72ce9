package redact

import "strings"

// Clip cuts s to at most n bytes, on a rune boundary, marking the cut with
// "…". A cut inside a word drops the partial word: half a secret is
// something Find can no longer recognise, so it must never survive a clip
// that happens before redaction. Every package clips through here.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	if cut < len(s) && !isSpaceByte(s[cut]) {
		for back := cut; cut-back < 256; back-- {
			if back == 0 || isSpaceByte(s[back-1]) {
				cut = back // the word starts here (or the text does)
				break
			}
		}
	}
	return strings.TrimRight(s[:cut], " \t\r\n") + "…"
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }
