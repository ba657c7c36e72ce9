package redact

import "strings"

// ClipReach is how far past a cut [Clip] reads to find a secret that the cut
// would split. 4 KB covers every token and assignment value the detectors
// accept whole (maxRun, maxValueLen) and a PEM RSA-4096 key with line-number
// prefixes (~3.7 KB); a longer key block is still seen crossing the cut,
// because a block without its END line runs to the end of its body. A caller
// that holds only a prefix of a long text (the Claude decoder unquotes no
// more than it needs) must give Clip at least n+ClipReach bytes of it.
const ClipReach = 4 << 10

// Clip cuts s to at most n bytes, on a rune boundary, marking the cut with
// "…". It never keeps part of a secret: half a secret is something Find can
// no longer recognise, so a later redaction would let it through. A secret
// that crosses the cut, as Find sees it in s[:n+ClipReach] (the whole text
// as far as any secret can reach), is dropped whole, so clipping before
// redacting keeps exactly what redacting the whole text and then clipping
// would keep, minus the redaction markers. A cut inside a word drops the
// partial word too. Every package clips through here. The result depends
// only on s[:n+ClipReach].
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && cut < len(s) && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	for _, m := range Find(s[:min(len(s), cut+ClipReach)]) {
		if m.Start >= cut {
			break
		}
		if m.End > cut {
			cut = secretStart(s, m)
			break
		}
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

// secretStart is where the cut goes for a match that crosses it: the match
// start, moved back over an opening quote so that no dangling quote is left.
func secretStart(s string, m Match) int {
	i := m.Start
	for i > 0 && isOneOf(s[i-1], "\"'`") {
		i--
	}
	return i
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }
