package ledger

// describedTable cached listers' descriptions of transcripts (schema 10)
// until the cache moved to a file in carryover's home that works before
// any hook made a ledger (adapters.DescriptionFile); gc still empties it.
const describedTable = `CREATE TABLE described (
		tool        TEXT NOT NULL,
		path        TEXT NOT NULL,
		size        INTEGER NOT NULL,
		mtime_ns    INTEGER NOT NULL,
		dev         INTEGER NOT NULL,
		ino         INTEGER NOT NULL,
		ok          INTEGER NOT NULL,
		native_id   TEXT NOT NULL,
		project     TEXT NOT NULL,
		last_active TEXT NOT NULL,
		messages    INTEGER NOT NULL,
		estimated   INTEGER NOT NULL,
		preview     TEXT NOT NULL,
		PRIMARY KEY (tool, path)
	) WITHOUT ROWID;`

// ForgetGone drops the cached descriptions of transcripts that no longer
// exist (gone reports that of a path); `gc` runs it. It returns how many.
func (l *Ledger) ForgetGone(gone func(path string) bool) (int, error) {
	rows, err := l.db.Query(`SELECT tool, path FROM described`)
	if err != nil {
		return 0, err
	}
	var drop [][2]string
	for rows.Next() {
		var tool, path string
		if err := rows.Scan(&tool, &path); err != nil {
			rows.Close()
			return 0, err
		}
		if gone(path) {
			drop = append(drop, [2]string{tool, path})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, d := range drop {
		if _, err := l.db.Exec(`DELETE FROM described WHERE tool = ? AND path = ?`, d[0], d[1]); err != nil {
			return 0, err
		}
	}
	return len(drop), nil
}
