package ledger

import (
	"time"

	"github.com/carryover/carryover/adapters"
)

// describedTable caches listers' descriptions of transcripts: `list` opens
// a transcript again only when its size, mtime or inode changed since.
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

// Descriptions is the ledger's adapters.DescriptionCache: every entry is
// read once when it is made (one query, not one per file), and what was
// described anew is written back by Flush in one transaction.
type Descriptions struct {
	l       *Ledger
	known   map[string]described
	pending []described
}

type described struct {
	tool, path string
	id         adapters.FileStamp
	s          adapters.NativeSession
	ok         bool
}

// Descriptions loads the cached descriptions.
func (l *Ledger) Descriptions() (*Descriptions, error) {
	d := &Descriptions{l: l, known: map[string]described{}}
	rows, err := l.db.Query(`SELECT tool, path, size, mtime_ns, dev, ino, ok, native_id, project, last_active, messages, estimated, preview FROM described`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var e described
		var dev, ino int64
		var active string
		if err := rows.Scan(&e.tool, &e.path, &e.id.Size, &e.id.ModNano, &dev, &ino, &e.ok, &e.s.ID, &e.s.Project, &active, &e.s.MessageCount, &e.s.CountEstimated, &e.s.Preview); err != nil {
			return nil, err
		}
		e.id.Dev, e.id.Ino = uint64(dev), uint64(ino)
		e.s.Tool, e.s.Path = e.tool, e.path
		if active != "" {
			// RFC 3339 with the offset it had: `list --json` prints the
			// same time whether described now or read back.
			e.s.LastActive, _ = time.Parse(time.RFC3339Nano, active)
		}
		d.known[e.tool+"\x00"+e.path] = e
	}
	return d, rows.Err()
}

// Lookup implements adapters.DescriptionCache.
func (d *Descriptions) Lookup(tool, path string, id adapters.FileStamp) (adapters.NativeSession, bool, bool) {
	e, found := d.known[tool+"\x00"+path]
	if !found || e.id != id {
		return adapters.NativeSession{}, false, false
	}
	return e.s, e.ok, true
}

// Store implements adapters.DescriptionCache (written by Flush).
func (d *Descriptions) Store(tool, path string, id adapters.FileStamp, s adapters.NativeSession, ok bool) {
	e := described{tool: tool, path: path, id: id, s: s, ok: ok}
	d.known[tool+"\x00"+path] = e
	d.pending = append(d.pending, e)
}

// Flush writes the descriptions stored since the last Flush.
func (d *Descriptions) Flush() error {
	if len(d.pending) == 0 {
		return nil
	}
	tx, err := d.l.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	st, err := tx.Prepare(`INSERT OR REPLACE INTO described (tool, path, size, mtime_ns, dev, ino, ok, native_id, project, last_active, messages, estimated, preview)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, e := range d.pending {
		active := ""
		if !e.s.LastActive.IsZero() {
			active = e.s.LastActive.Format(time.RFC3339Nano)
		}
		if _, err := st.Exec(e.tool, e.path, e.id.Size, e.id.ModNano, int64(e.id.Dev), int64(e.id.Ino), e.ok, e.s.ID, e.s.Project, active,
			e.s.MessageCount, e.s.CountEstimated, e.s.Preview); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	d.pending = nil
	return nil
}

// Len is how many descriptions are cached.
func (d *Descriptions) Len() int { return len(d.known) }

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
