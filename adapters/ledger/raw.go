package ledger

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"io"
)

// rawTx is a write transaction on the driver connection itself, below
// database/sql. Ingest binds 15 values per row; database/sql's per-argument
// conversion (reflection) cost more than SQLite's own work, so the batch
// writer talks to the driver directly. Everything else uses database/sql.
type rawTx struct {
	conn  driver.Conn
	tx    driver.Tx
	stmts []driver.Stmt
	args  []driver.NamedValue
}

// prepare returns a statement closed when the transaction ends.
func (t *rawTx) prepare(q string) (driver.Stmt, error) {
	s, err := t.conn.Prepare(q)
	if err != nil {
		return nil, err
	}
	t.stmts = append(t.stmts, s)
	return s, nil
}

// bind fills t.args from values (nil, int64, string, bool, float64, []byte).
func (t *rawTx) bind(values ...any) []driver.NamedValue {
	t.args = t.args[:0]
	for i, v := range values {
		switch x := v.(type) {
		case int:
			v = int64(x)
		case bool:
			if x {
				v = int64(1)
			} else {
				v = int64(0)
			}
		}
		t.args = append(t.args, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	return t.args
}

// exec runs a prepared statement and returns the rows it changed.
func (t *rawTx) exec(s driver.Stmt, values ...any) (int64, error) {
	r, err := s.(driver.StmtExecContext).ExecContext(context.Background(), t.bind(values...))
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

// execOnce prepares, runs and closes one statement.
func (t *rawTx) execOnce(q string, values ...any) (int64, error) {
	s, err := t.conn.Prepare(q)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	return t.exec(s, values...)
}

// queryRow runs a one-off query and scans its first row's columns into
// dest (*int64 or *string); sql.ErrNoRows when there is none.
func (t *rawTx) queryRow(q string, args []any, dest ...any) error {
	s, err := t.conn.Prepare(q)
	if err != nil {
		return err
	}
	defer s.Close()
	rows, err := s.(driver.StmtQueryContext).QueryContext(context.Background(), t.bind(args...))
	if err != nil {
		return err
	}
	defer rows.Close()
	vals := make([]driver.Value, len(rows.Columns()))
	if err := rows.Next(vals); err != nil {
		if err == io.EOF {
			return sql.ErrNoRows
		}
		return err
	}
	for i, d := range dest {
		switch p := d.(type) {
		case *int64:
			n, _ := vals[i].(int64)
			*p = n
		case *string:
			switch v := vals[i].(type) {
			case string:
				*p = v
			case []byte:
				*p = string(v)
			}
		}
	}
	return nil
}
