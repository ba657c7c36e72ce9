package ledger

// PromoteSubagentOnly clears the sidechain mark when every row of a session
// is a subagent's: the user handed over a subagent's own file (an old
// <slug>/agent-*.jsonl or a subagents/ file), so its prompt is the task.
func PromoteSubagentOnly(rows []Row) {
	for i := range rows {
		if !rows[i].Sidechain {
			return
		}
	}
	for i := range rows {
		rows[i].Sidechain = false
	}
}
