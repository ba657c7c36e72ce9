package distill

import "time"

// CommitsSinceNoRecover is CommitsSince without its recover, so a test
// sees a reader panic.
func CommitsSinceNoRecover(r *Repo, old string, deadline time.Time) CommitCount {
	o := openObjects(commonDir(r.gitDir), deadline)
	defer o.close()
	return o.since(r.headFull, old, MaxCommitWalk)
}

// ApplyDelta is applyDelta, for the fuzz test.
var ApplyDelta = applyDelta
