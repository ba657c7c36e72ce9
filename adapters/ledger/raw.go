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
	if err == nil {
		t.stmts = append(t.stmts, s)
	}
	return s, err
}

// bind fills t.args from values (nil, int64, int, bool, string, []byte).
func (t *rawTx) bind(values []any) []driver.NamedValue {
	t.args = t.args[:0]
	for i, v := range values {
		switch x := v.(type) {
		case int:
			v = int64(x)
		case bool:
			v = int64(0)
			if x {
				v = int64(1)
			}
		}
		t.args = append(t.args, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	return t.args
}

// exec runs a prepared statement.
func (t *rawTx) exec(s driver.Stmt, values ...any) error {
	_, err := s.(driver.StmtExecContext).ExecContext(context.Background(), t.bind(values))
	return err
}

// query runs a prepared query.
func (t *rawTx) query(s driver.Stmt, values ...any) (driver.Rows, error) {
	return s.(driver.StmtQueryContext).QueryContext(context.Background(), t.bind(values))
}

// execOnce prepares and runs one statement.
func (t *rawTx) execOnce(q string, values ...any) error {
	s, err := t.prepare(q)
	if err != nil {
		return err
	}
	return t.exec(s, values...)
}

// queryRow runs a one-off query and scans its first row's columns into
// dest (*int64 or *string); sql.ErrNoRows when there is none.
func (t *rawTx) queryRow(q string, args []any, dest ...any) error {
	s, err := t.prepare(q)
	if err != nil {
		return err
	}
	rows, err := t.query(s, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	vals := make([]driver.Value, len(rows.Columns()))
	if err := rows.Next(vals); err == io.EOF {
		return sql.ErrNoRows
	} else if err != nil {
		return err
	}
	for i, d := range dest {
		switch p := d.(type) {
		case *int64:
			*p, _ = vals[i].(int64)
		case *string:
			*p = text(vals[i])
		}
	}
	return nil
}

// text is a TEXT column's value.
func text(v driver.Value) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	s, _ := v.(string)
	return s
}
