package ledger

import (
	"testing"
)

// TestForgetGone: gc drops the descriptions of deleted transcripts only.
func TestForgetGone(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, p := range []string{"/gone", "/here"} {
		if _, err := l.db.Exec(`INSERT INTO described VALUES ('claude', ?, 1, 0, 0, 0, 1, 'a', '', '', 0, 0, '')`, p); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := l.ForgetGone(func(p string) bool { return p == "/gone" }); n != 1 || err != nil {
		t.Fatal(n, err)
	}
	var left int
	l.db.QueryRow(`SELECT COUNT(*) FROM described`).Scan(&left)
	if left != 1 {
		t.Errorf("%d descriptions left, want 1", left)
	}
}
