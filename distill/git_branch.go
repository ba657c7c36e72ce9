package distill

import (
	"strings"

	"github.com/carryover/carryover/publish/redact"
)

// GitString is the one door by which a string read from a repository's
// .git — a branch name, a commit subject, a remote's name or URL — enters
// carryover's state (RepoFacts, the staleness check, the ledger's handoff
// records, session.json, "Branch switched", `status`). A cloned
// repository names its branches and writes its commit messages, so such
// a string is one line without control characters, and a credential in it
// (a token pushed as a branch name, a URL with a password) is redacted
// here, once, whatever the reader that produced it (distill/git stays a
// format reader that imports nothing but safefile).
func GitString(s string) string {
	if s == "" {
		return ""
	}
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
	return redact.String(s)
}
