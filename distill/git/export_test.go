package git

import (
	"crypto/sha1"
	"os"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// CommitsSinceNoRecover is CommitsSince without its recover, so a test
// sees a reader panic.
func CommitsSinceNoRecover(r *Repo, old string, deadline time.Time) CommitCount {
	o := openStore(r.gitDir, deadline)
	defer o.close()
	return o.since(r.head, old, MaxCommitWalk)
}

// ApplyDelta is applyDelta, for the fuzz test.
var ApplyDelta = applyDelta

// WalkPack walks from the one object of a pack whose bytes after the
// 12-byte header are body (written under gitDir with a valid index), for
// the fuzz test.
func WalkPack(gitDir string, body []byte) CommitCount {
	pd := gitDir + "/objects/pack"
	if err := os.MkdirAll(pd, 0o755); err != nil {
		return CommitCount{}
	}
	pack := append([]byte("PACK\x00\x00\x00\x02\x00\x00\x00\x01"), body...)
	sum := sha1.Sum(pack)
	pack = append(pack, sum[:]...)
	var id plumbing.Hash
	id[0] = 0x11
	idx := []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}
	for i := 0; i < 256; i++ {
		n := byte(0)
		if i >= 0x11 {
			n = 1
		}
		idx = append(idx, 0, 0, 0, n)
	}
	idx = append(idx, id[:]...)
	idx = append(idx, 0, 0, 0, 0, 0, 0, 0, 12)
	idx = append(idx, sum[:]...)
	isum := sha1.Sum(idx)
	idx = append(idx, isum[:]...)
	os.WriteFile(pd+"/p.pack", pack, 0o644)
	os.WriteFile(pd+"/p.idx", idx, 0o644)
	o := openStore(gitDir, time.Now().Add(time.Minute))
	defer o.close()
	if len(o.packs) != 1 {
		panic("the fuzz pack's index did not decode")
	}
	return o.since(id, "0000000", 10)
}
