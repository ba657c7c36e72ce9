package ledger

import (
	"strings"
	"time"
)

// Space is what takes the ledger's room.
type Space struct {
	FileBytes  int64 `json:"file_bytes"`
	FreeBytes  int64 `json:"free_bytes"` // free pages inside the file
	AutoVacuum bool  `json:"auto_vacuum"`
	// Tables is bytes per table and index (SQLite's dbstat; only when
	// asked, as it reads every page, and only in a build with it).
	Tables     []SpaceUse   `json:"tables,omitempty"`
	TablesNote string       `json:"tables_note,omitempty"`
	Projects   []ProjectUse `json:"projects"`
}

// SpaceUse is one table's or index's size.
type SpaceUse struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// ProjectUse is a project's share: its sessions, their rows (a project's
// share of the rows is about its share of the file), and when it was
// last active.
type ProjectUse struct {
	Project    string    `json:"project"`
	Sessions   int       `json:"sessions"`
	Rows       int64     `json:"rows"`
	LastActive time.Time `json:"last_active"`
}

// Space reports the ledger's size by project (from the sessions table:
// cheap at any size) and, when tables is set, by table and index.
func (l *Ledger) Space(tables bool) (Space, error) {
	sp := Space{FileBytes: l.fileBytes(), FreeBytes: l.pragmaInt("freelist_count") * l.pragmaInt("page_size"), AutoVacuum: l.pragmaInt("auto_vacuum") == 2}
	rows, err := l.db.Query(`SELECT project, COUNT(*), SUM(next_seq - 1 - pruned), MAX(MAX(last_active, last_seen)) FROM sessions GROUP BY project ORDER BY 3 DESC, 1`)
	if err != nil {
		return sp, err
	}
	for rows.Next() {
		var p ProjectUse
		var last int64
		if err := rows.Scan(&p.Project, &p.Sessions, &p.Rows, &last); err != nil {
			rows.Close()
			return sp, err
		}
		p.LastActive = time.UnixMilli(last)
		sp.Projects = append(sp.Projects, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return sp, err
	}
	if !tables {
		return sp, nil
	}
	trows, err := l.db.Query(`SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC, 1`)
	if err != nil {
		if strings.Contains(err.Error(), "no such table") {
			sp.TablesNote = "sizes per table need a carryover built with -tags sqlite_dbstat (just build)"
			return sp, nil
		}
		return sp, err
	}
	defer trows.Close()
	for trows.Next() {
		var u SpaceUse
		if err := trows.Scan(&u.Name, &u.Bytes); err != nil {
			return sp, err
		}
		sp.Tables = append(sp.Tables, u)
	}
	return sp, trows.Err()
}
