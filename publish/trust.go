package publish

import (
	"crypto/sha256"
	"encoding/hex"
	"github.com/carryover/carryover/adapters/ledger"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/carryover/carryover/publish/safefile"
)

// A .carryover/handoff.md that came with a repository is not a previous
// session: it is injected only when its hash is one carryover recorded when
// it published it, in the home: the ledger's `published` table, and a
// sidecar per project ($CARRYOVER_HOME/published/<hash of the path>) that
// a session start reads when another process holds the ledger.

// keepDigests is how many published digests a rewritten sidecar keeps
// (concurrent hooks may finish their writes in another order than they
// recorded them).
const keepDigests = 8

// sidecarMax is the most of a sidecar carryover reads; appends stop short
// of it, and the next record rewrites the file with the newest
// keepDigests (about 60 appends of a 65-byte line).
const sidecarMax = 4096

// Digest is the content hash recorded for a published handoff.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// SidecarPath is the file under home that lists the digests of project's
// published handoffs.
func SidecarPath(home, project string) string {
	sum := sha256.Sum256([]byte(project))
	return filepath.Join(home, "published", hex.EncodeToString(sum[:16]))
}

// RecordPublished adds digest to project's sidecar, newest last. Every
// Stop publishes, so the common case is one line appended to the file
// (safefile.Append: no temp file, no rename, ~0.2 ms less); a missing,
// full or odd file is rewritten atomically with the newest keepDigests.
// Like the rewrite, the append is not synced: the digests are what this
// carryover home published, and a crash loses at most the newest line
// (that handoff is then published again, not injected).
func RecordPublished(home, project, digest string) error {
	path := SidecarPath(home, project)
	if ok, err := safefile.Append(path, []byte(digest+"\n"), sidecarMax); ok || err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	var lines []string
	for _, d := range sidecarDigests(path) {
		if d != digest {
			lines = append(lines, d)
		}
	}
	lines = append(lines[max(0, len(lines)-(keepDigests-1)):], digest)
	// The first line names the project, for a person reading the file.
	return WriteAtomic(path, []byte("# "+OneLine(project)+"\n"+strings.Join(lines, "\n")+"\n"))
}

func sidecarDigests(path string) []string {
	b, err := safefile.ReadFile(path, sidecarMax) // under the home: a symlink there is the user's
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if len(l) == 64 && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// CheckHandoff says why b, read from project's handoff.md, must not be
// injected ("" when it is carryover's own): its digest is in the ledger
// (l, when not nil), or else in the sidecar under home (a ledger locked by
// another process, or rebuilt after damage).
func CheckHandoff(b []byte, home, project string, l *ledger.Ledger) string {
	if !strings.HasPrefix(string(b), HeaderPrefix) {
		return "it does not start with the carryover header"
	}
	d := Digest(b)
	if l != nil {
		if ok, err := l.HandoffTrusted(project, d); err == nil && ok {
			return ""
		}
	}
	if slices.Contains(sidecarDigests(SidecarPath(home, project)), d) {
		return ""
	}
	return "carryover did not write it, or it changed since (its content matches none of the handoffs carryover published for this project; a repository may have shipped it)"
}
