package git

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// CommitCount is how far HEAD moved from an older commit.
type CommitCount struct {
	N           int
	More        bool // the walk stopped at its bound: at least N
	NotAncestor bool // the old commit is not in HEAD's history (rebased, reset, another branch)
	Known       bool // false: it could not be told (objects unreadable or missing, out of time)
}

// String renders the count as the staleness line says it ("12 commits",
// "1000+ commits"); "" when unknown.
func (c CommitCount) String() string {
	switch {
	case !c.Known || c.NotAncestor:
		return ""
	case c.More:
		return fmt.Sprintf("%d+ commits", c.N)
	case c.N == 1:
		return "1 commit"
	}
	return fmt.Sprintf("%d commits", c.N)
}

// MaxCommitWalk is how many commits CommitsSince reads before answering
// "1000+".
const MaxCommitWalk = 1000

// CommitsSince counts the commits in HEAD's history that are not in the
// history of old (a hex prefix of a commit id, as handoffs record HEAD),
// like `git rev-list --count old..HEAD`, stopping at MaxCommitWalk or the
// deadline. A hostile .git gives an unknown count, never a hang or a
// panic (fuzzed: FuzzPackObject).
func (r *Repo) CommitsSince(old string, deadline time.Time) (c CommitCount) {
	if r == nil || r.head.IsZero() || len(old) < 4 || len(old) > 40 || strings.Trim(old, "0123456789abcdef") != "" {
		return CommitCount{}
	}
	if strings.HasPrefix(r.head.String(), old) {
		return CommitCount{Known: true}
	}
	defer recoverTo(&c, CommitCount{})
	o := openStore(r.gitDir, deadline)
	defer o.close()
	return o.since(r.head, old, MaxCommitWalk)
}

// since walks HEAD's history breadth first, not past old.
func (o *store) since(head plumbing.Hash, old string, limit int) CommitCount {
	var oldID plumbing.Hash
	walked, more, ok := o.walk(head, limit, func(id plumbing.Hash) bool {
		found := strings.HasPrefix(id.String(), old)
		if found {
			oldID = id
		}
		return found
	})
	switch {
	case !ok:
		return CommitCount{}
	case more:
		return CommitCount{N: limit, More: true, Known: true}
	case oldID.IsZero():
		return CommitCount{Known: true, NotAncestor: true}
	case !slices.ContainsFunc(walked, func(c *commit) bool { return len(c.parents) == 0 }):
		// Every path down from HEAD stopped at old: all walked commits are new.
		return CommitCount{N: len(walked), Known: true}
	}
	// Some path went around old (a merged branch that forked before it)
	// down to the root: old's own history is not new. It is walked as far
	// as the bound allows; what it does not reach is counted (an upper
	// bound, for histories of more than the bound).
	ancestors, _, _ := o.walk(oldID, 2*limit, nil)
	in := map[plumbing.Hash]bool{}
	for _, a := range ancestors {
		in[a.id] = true
	}
	n := 0
	for _, c := range walked {
		if !in[c.id] {
			n++
		}
	}
	return CommitCount{N: n, Known: true}
}
