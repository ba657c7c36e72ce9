package ledger

import "database/sql"

// Store is what the ledger offers the features that keep their own
// queries over its tables (publish/lifecycle, publish/limits): statements
// on its database, or on a transaction (Tx). The ledger keeps the schema,
// the migrations and the salvage of those tables.
type Store interface {
	Exec(q string, args ...any) (sql.Result, error)
	Query(q string, args ...any) (*sql.Rows, error)
	QueryRow(q string, args ...any) *sql.Row
}

// Exec runs a statement on the ledger.
func (l *Ledger) Exec(q string, args ...any) (sql.Result, error) { return l.db.Exec(q, args...) }

// Query runs a query on the ledger.
func (l *Ledger) Query(q string, args ...any) (*sql.Rows, error) { return l.db.Query(q, args...) }

// QueryRow runs a query for one row on the ledger.
func (l *Ledger) QueryRow(q string, args ...any) *sql.Row { return l.db.QueryRow(q, args...) }

// Begin starts a transaction (a Store the caller commits, or rolls back
// on every path). Every Stop records what it published in one: as
// separate statements it paid one WAL commit each, and every later hook
// process reads the WAL's frames back. Not a callback, so no call chain
// leaves a feature's file and enters it again through the ledger.
func (l *Ledger) Begin() (*sql.Tx, error) { return l.db.Begin() }

// Scanner is a *sql.Row or *sql.Rows.
type Scanner interface{ Scan(...any) error }

// Changed runs a statement and reports whether it changed a row.
func Changed(s Store, q string, args ...any) (bool, error) {
	res, err := s.Exec(q, args...)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// Has reports whether a COUNT(*) query counts anything.
func Has(s Store, q string, args ...any) bool {
	var n int
	_ = s.QueryRow(q, args...).Scan(&n)
	return n > 0
}

// ForProject is the WHERE condition on column for one project, or every
// project when project is empty (forProject).
func ForProject(column, project string) (string, []any) { return forProject(column, project) }
