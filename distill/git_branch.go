package distill

// Branch is the repository's current branch ("" for a nil Repo or a
// detached HEAD): the staleness check compares it with the handoff's.
func (r *Repo) Branch() string {
	if r == nil {
		return ""
	}
	return r.git.Branch
}
