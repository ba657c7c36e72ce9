package cmd

import (
	"fmt"

	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/service"
)

// ledgerSpace adds what takes the ledger's room to a status report: per
// project always (the sessions table: cheap at any size), per table and
// index when asked (dbstat reads every page). Status never creates a ledger.
func ledgerSpace(e *Env, st *StatusReport, tables bool) {
	if !st.Ledger.Exists {
		return
	}
	store, err := service.OpenStore(e.service())
	if err != nil {
		return
	}
	defer store.Close()
	sp, err := store.Space(tables)
	if err != nil {
		st.Problems = append(st.Problems, "ledger space: "+err.Error())
		return
	}
	st.Ledger.Space = sp
}

// spaceProjects is how many projects status names (the biggest).
const spaceProjects = 5

func printSpace(e *Env, sp *service.Space) {
	if sp == nil {
		return
	}
	w := e.Stdout
	var rows int64
	for _, p := range sp.Projects {
		rows += p.Rows
	}
	used := sp.FileBytes - sp.FreeBytes
	for i, p := range sp.Projects {
		if i == spaceProjects {
			fmt.Fprintf(w, "    … %d more projects\n", len(sp.Projects)-i)
			break
		}
		share := int64(0)
		if rows > 0 {
			share = used * p.Rows / rows
		}
		fmt.Fprintf(w, "    ~%-9s %s: %d sessions, %d rows, last active %s\n", humanBytes(share), p.Project, p.Sessions, p.Rows, publish.Ago(e.Now(), p.LastActive))
	}
	for _, t := range sp.Tables {
		fmt.Fprintf(w, "    %-9s %s\n", humanBytes(t.Bytes), t.Name)
	}
	if sp.TablesNote != "" {
		fmt.Fprintf(w, "    %s\n", sp.TablesNote)
	}
	if sp.FreeBytes > 0 {
		hint := "`carryover gc` gives it back"
		if !sp.AutoVacuum {
			hint = "reused by new rows; the ledger predates auto-vacuum: `carryover gc --vacuum` once gives it back"
		}
		fmt.Fprintf(w, "    %s free inside the file (%s)\n", humanBytes(sp.FreeBytes), hint)
	}
	fmt.Fprintln(w, "    `carryover gc --older-than 180d` removes old sessions' rows (never handoffs or decisions)")
}
