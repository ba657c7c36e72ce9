package git

import (
	"fmt"
	"sort"
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
	defer func() {
		if recover() != nil { // a decoder bug on hostile data: unknown, never a crash
			c = CommitCount{}
		}
	}()
	o := openStore(r.gitDir, deadline)
	defer o.close()
	return o.since(r.head, old, MaxCommitWalk)
}

func (o *store) parents(id plumbing.Hash) ([]plumbing.Hash, error) {
	c, err := o.commit(id)
	if err != nil {
		return nil, err
	}
	return c.parents, nil
}

// since walks HEAD's history breadth first, not past old.
func (o *store) since(head plumbing.Hash, old string, limit int) CommitCount {
	seen := map[plumbing.Hash]bool{head: true}
	queue := []plumbing.Hash{head}
	var walked []plumbing.Hash
	var oldID plumbing.Hash
	found, rooted := false, false
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if strings.HasPrefix(c.String(), old) {
			found, oldID = true, c
			continue
		}
		if len(walked) == limit {
			return CommitCount{N: limit, More: true, Known: true}
		}
		ps, err := o.parents(c)
		if err != nil {
			return CommitCount{} // missing (a shallow clone), damaged, or out of time
		}
		walked = append(walked, c)
		rooted = rooted || len(ps) == 0
		for _, p := range ps {
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	if !found {
		return CommitCount{Known: true, NotAncestor: true}
	}
	if !rooted { // every path down from HEAD stopped at old: all walked commits are new
		return CommitCount{N: len(walked), Known: true}
	}
	// Some path went around old (a merged branch that forked before it)
	// down to the root: old's own history is not new. It is walked as far
	// as the bound allows; what it does not reach is counted (an upper
	// bound, for histories of more than the bound).
	ancestors := map[plumbing.Hash]bool{}
	queue = []plumbing.Hash{oldID}
	for len(queue) > 0 && len(ancestors) < 2*limit {
		ps, err := o.parents(queue[0])
		queue = queue[1:]
		if err != nil {
			break
		}
		for _, p := range ps {
			if !ancestors[p] {
				ancestors[p] = true
				queue = append(queue, p)
			}
		}
	}
	n := 0
	for _, c := range walked {
		if !ancestors[c] {
			n++
		}
	}
	return CommitCount{N: n, Known: true}
}

// Commit is one entry of Log.
type Commit struct {
	ID      string // short id, 7 digits
	Message string
	When    time.Time
}

// Log is HEAD's n newest commits, newest first by committer time (as
// `git log -n` lists them), reading at most 4n commits; nil when HEAD is
// unknown or its history unreadable before the first.
func (r *Repo) Log(n int, deadline time.Time) (out []Commit) {
	if r == nil || r.head.IsZero() || n <= 0 {
		return nil
	}
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	o := openStore(r.gitDir, deadline)
	defer o.close()
	type item struct {
		id   plumbing.Hash
		when time.Time
		msg  string
		ps   []plumbing.Hash
	}
	var frontier []item
	seen := map[plumbing.Hash]bool{}
	push := func(id plumbing.Hash) {
		if seen[id] || len(seen) >= 4*n {
			return
		}
		seen[id] = true
		if c, err := o.commit(id); err == nil {
			frontier = append(frontier, item{id, c.when, c.message, c.parents})
		}
	}
	push(r.head)
	for len(frontier) > 0 && len(out) < n {
		sort.SliceStable(frontier, func(i, j int) bool { return frontier[i].when.After(frontier[j].when) })
		c := frontier[0]
		frontier = frontier[1:]
		out = append(out, Commit{ID: c.id.String()[:7], Message: c.msg, When: c.when})
		for _, p := range c.ps {
			push(p)
		}
	}
	return out
}
