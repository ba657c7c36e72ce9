package ledger

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
)

// TestSessionIDInTwoProjects: a session id seen in two projects (a hostile
// payload naming another project's session) is two sessions; neither
// project's rows reach the other's handoff.
func TestSessionIDInTwoProjects(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	now := time.Now()
	for _, p := range []string{"/a", "/b"} {
		rows := []adapters.Row{{Key: "k1", Role: "user", Kind: adapters.KindPrompt, Text: "prompt in " + p}}
		if _, err := l.Write(Batch{Session: SessionRef{Tool: "claude", NativeID: "same", Project: p}, Rows: rows}, now); err != nil {
			t.Fatal(err)
		}
	}
	sa, err := l.SessionIn("claude", "same", "/a")
	if err != nil {
		t.Fatal(err)
	}
	sb, err := l.SessionIn("claude", "same", "/b")
	if err != nil {
		t.Fatal(err)
	}
	if sa.ID == sb.ID {
		t.Fatalf("one session for two projects")
	}
	for _, p := range []string{"/a", "/b"} {
		rs, err := l.RecentRows(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 1 || rs[0].Text != "prompt in "+p {
			t.Fatalf("%s sees rows %+v", p, rs)
		}
	}
}

// TestMigratedSessionsPartition: a ledger from before sessions were keyed
// by project keeps its sessions' ids and rows, and the same id seen in a
// second project afterwards is a new session.
func TestMigratedSessionsPartition(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	v := 6 // the last schema with one session per (tool, native id)
	for _, m := range migrations[:v] {
		if _, err := db.Exec(m); err != nil {
			t.Fatal(err)
		}
	}
	db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, v))
	db.Exec(`INSERT INTO sessions (id, tool, native_id, project, first_seen, last_seen, next_seq) VALUES (7, 'claude', 's', '/a', 0, 0, 2)`)
	db.Exec(`INSERT INTO rows (session_id, key, seq, ts, role, kind, text) VALUES (7, 'k', 1, 0, 'user', 'prompt', 'old')`)
	db.Close()
	l, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s, err := l.SessionIn("claude", "s", "/a")
	if err != nil || s.ID != 7 || s.Rows != 1 {
		t.Fatalf("migrated session %+v, %v", s, err)
	}
	if _, err := l.Write(Batch{Session: SessionRef{Tool: "claude", NativeID: "s", Project: "/b"}, Rows: []adapters.Row{{Key: "k", Role: "user", Kind: adapters.KindPrompt, Text: "new"}}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if rs, _ := l.RecentRows("/a"); len(rs) != 1 || rs[0].Text != "old" {
		t.Fatalf("/a rows after /b wrote the same id: %+v", rs)
	}
}

// TestOpenByGivesUpOnALock: while another connection holds an exclusive
// transaction, a ledger opened with a deadline fails its write with an
// error IsBusy recognises (instead of waiting busyTimeout), and Ingest
// stops at it; the rows come in once the lock is gone.
func TestOpenByGivesUpOnALock(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	holder, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, FileName)+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	tx, err := holder.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO dirty (project, since) VALUES ('/x', 0)`); err != nil {
		t.Fatal(err)
	}
	l, err = OpenBy(dir, time.Now().Add(200*time.Millisecond))
	if err != nil {
		t.Fatal(err) // reads need no lock in WAL mode
	}
	defer l.Close()
	ref := SessionRef{Tool: "claude", NativeID: "s", Project: "/p"}
	rows := []adapters.Row{{Key: "k", Role: "user", Kind: adapters.KindPrompt, Text: "x"}}
	if _, err := l.Write(Batch{Session: ref, Rows: rows}, time.Now()); !IsBusy(err) {
		t.Fatalf("write under another process's lock: %v, want a busy error", err)
	}
	tx.Rollback()
	l.SetDeadline(time.Now().Add(time.Minute))
	if n, err := l.Write(Batch{Session: ref, Rows: rows}, time.Now()); err != nil || n != 1 {
		t.Fatalf("write after the lock went: %d, %v", n, err)
	}
}
