package adapters_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
)

// aiderUTC makes aider's local-time session headers read as UTC so that
// golden files do not depend on the machine's zone.
func aiderUTC(t *testing.T) {
	old := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = old })
}

func aiderRead(t *testing.T, dir, session string) []adapters.Row {
	t.Helper()
	rows, err := adapters.Aider.(adapters.StoreReader).ReadStore(adapters.Hook{Project: dir, SessionID: session}, adapters.Env{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestAiderSessionsRealSample(t *testing.T) {
	aiderUTC(t)
	dir := filepath.Join(fixtureDir, "aider", "project")
	ss, err := adapters.AiderSessions(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 12 {
		t.Fatalf("%d sessions, want 12", len(ss))
	}
	if got := ss[1].Start.Format("2006-01-02 15:04:05"); got != "2024-08-05 19:33:32" || ss[1].FirstPrompt != "Use the Spinner instead of the inlined custom spinner" {
		t.Errorf("session 1: %+v", ss[1])
	}
	ids := map[string]bool{}
	var applied, commits, prompts int
	for _, s := range ss {
		if ids[s.ID] {
			t.Errorf("duplicate id %s", s.ID)
		}
		ids[s.ID] = true
		for _, r := range aiderRead(t, dir, s.ID) {
			switch {
			case r.ToolName == "edit" && r.Kind == adapters.KindToolCall:
				applied++
			case r.ToolName == "git_commit":
				commits++
			case r.Kind == adapters.KindPrompt:
				prompts++
			}
			if r.Time.IsZero() || r.Key == "" {
				t.Errorf("%s: row without time or key: %+v", s.ID, r)
			}
		}
	}
	// README: 14 "Applied edit to" lines and 22 "Commit <sha>" lines.
	if applied != 14 || commits != 22 {
		t.Errorf("applied %d (want 14), commits %d (want 22)", applied, commits)
	}
	if prompts == 0 || prompts >= 48 {
		t.Errorf("prompts %d: slash commands must not count as requests", prompts)
	}
	// The default session is the last one; a start time names one too.
	last := aiderRead(t, dir, "")
	golden(t, filepath.Join(fixtureDir, "aider", "project.last-session.rows.golden"), last)
	if !equalJSON(last, aiderRead(t, dir, ss[len(ss)-1].ID)) {
		t.Error("empty session id should read the last session")
	}
	if !equalJSON(aiderRead(t, dir, "2024-08-05 19:33:32"), aiderRead(t, dir, ss[1].ID)) {
		t.Error("a start time should name the session")
	}
	if _, err := adapters.Aider.(adapters.StoreReader).ReadStore(adapters.Hook{Project: dir, SessionID: "1999-01-01 00:00:00"}, adapters.Env{}); err == nil {
		t.Error("unknown session should be an error")
	}
}

func TestAiderQuirks(t *testing.T) {
	aiderUTC(t)
	dir := filepath.Join(fixtureDir, "aider", "project")
	ss, _ := adapters.AiderSessions(dir)
	find := func(start string) []adapters.Row {
		for _, s := range ss {
			if s.Start.Format("2006-01-02 15:04:05") == start {
				return aiderRead(t, dir, s.ID)
			}
		}
		t.Fatalf("no session %s", start)
		return nil
	}
	// /test whose output was added to the chat (logged twice in v0.47) is a failure.
	var testFail bool
	for _, r := range find("2024-08-06 08:47:10") {
		if r.Kind == adapters.KindError && strings.Contains(r.Text, "1 failed, 6 passed") {
			testFail = true
		}
	}
	if !testFail {
		t.Error("failing /test not recorded as an error")
	}
	// An edit that failed to match and was then applied is not a failure.
	var unresolved int
	for _, r := range find("2024-08-06 08:55:14") {
		if r.Kind == adapters.KindError && r.ToolName == "edit" {
			unresolved++
		}
	}
	if unresolved != 0 {
		t.Errorf("%d edit errors left though a later edit applied", unresolved)
	}

	cur := aiderRead(t, filepath.Join(fixtureDir, "aider", "current"), "")
	golden(t, filepath.Join(fixtureDir, "aider", "current.rows.golden"), cur)
	var kinds []string
	for _, r := range cur {
		kinds = append(kinds, string(r.Kind)+":"+r.ToolName)
		if strings.Contains(r.Text, "secret reasoning") {
			t.Error("reasoning tags not stripped")
		}
		if strings.Contains(r.Text, "(Y)es/(N)o") && r.Kind == adapters.KindPrompt {
			t.Error("confirm echo taken as a prompt")
		}
	}
	want := "prompt: text: usage: tool_call:edit tool_call:git_commit tool_call:shell tool_result:shell tool_call:test error:test tool_call:run tool_result:run prompt: text: usage:"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("kinds\n got %s\nwant %s", got, want)
	}
	if cur[0].Text != "add a --dry-run flag to sync.py\nand print what would be copied" {
		t.Errorf("multi-line prompt %q", cur[0].Text)
	}
	if cur[3].FilePath != "sync.py" || !strings.Contains(cur[3].Text, "TODO: wire into copy()") {
		t.Errorf("edit row %+v", cur[3])
	}
	if cur[2].TokensUsed != 2500+1100+604 {
		t.Errorf("usage %d", cur[2].TokensUsed)
	}
}

// TestAiderDeclinedInterrupted: a No (or Don't-ask-again) to "Run shell command?" refuses the commands the reply
// proposed, and "^C KeyboardInterrupt" interrupts the running command, else the turn. The held-out history is the
// same class in German, another edit format, a "d" answer and Ctrl-C during /test.
func TestAiderDeclinedInterrupted(t *testing.T) {
	aiderUTC(t)
	for _, c := range []struct{ dir, refused, stopped string }{
		{"declined-interrupted", "rm config.ini", ""},
		{"heldout-declined-interrupted-de", "docker compose down -v", "test"},
	} {
		rows := aiderRead(t, filepath.Join(fixtureDir, "aider", c.dir), "")
		golden(t, filepath.Join(fixtureDir, "aider", c.dir+".rows.golden"), rows)
		calls := map[string]adapters.Row{}
		var refused, stopped bool
		for _, r := range rows {
			switch r.Kind {
			case adapters.KindToolCall:
				calls[r.CallID] = r
			case adapters.KindRefused:
				refused = strings.Contains(calls[r.CallID].Command, c.refused)
			case adapters.KindInterrupted:
				stopped = calls[r.CallID].ToolName == c.stopped
			}
		}
		if !refused || !stopped {
			t.Errorf("%s: refused %v (want a call running %q), interrupted %v (want call %q)", c.dir, refused, c.refused, stopped, c.stopped)
		}
	}
}

func TestAiderHistoryLocation(t *testing.T) {
	aiderUTC(t)
	dir := t.TempDir()
	hist := "\n# aider chat started at 2026-01-02 03:04:05\n\n#### do the thing  \n\nDone.\n\n"
	os.WriteFile(filepath.Join(dir, "custom.md"), []byte(hist), 0o644)
	os.WriteFile(filepath.Join(dir, ".aider.conf.yml"), []byte("chat-history-file: custom.md # mine\n"), 0o644)
	rows := aiderRead(t, dir, "")
	if len(rows) != 2 || rows[0].Text != "do the thing" {
		t.Fatalf("conf override: %+v", rows)
	}
	env := adapters.Env{Getenv: func(k string) string {
		if k == "AIDER_CHAT_HISTORY_FILE" {
			return filepath.Join(dir, "missing.md")
		}
		return ""
	}}
	if _, err := adapters.Aider.(adapters.StoreReader).ReadStore(adapters.Hook{Project: dir}, env); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("env override: %v", err)
	}
	// CRLF and bytes aider dropped with errors="ignore" are tolerated.
	os.WriteFile(filepath.Join(dir, "custom.md"), []byte(strings.ReplaceAll(hist, "\n", "\r\n")+"#### caf\xe9  \r\n"), 0o644)
	rows = aiderRead(t, dir, "")
	if len(rows) != 3 || rows[0].Text != "do the thing" || rows[2].Text != "caf" {
		t.Fatalf("crlf: %+v", rows)
	}
}

func TestAiderHasNoHooks(t *testing.T) {
	_, err := adapters.Aider.ParseHook("Stop", nil, adapters.Env{})
	if !errors.Is(err, adapters.ErrAiderNoHooks) || !strings.Contains(err.Error(), "carryover handoff --source aider") {
		t.Errorf("ParseHook: %v", err)
	}
}

// TestAiderAPIErrors: the model API errors aider printed (litellm's
// exception lines) are error rows of the model API, with a limit when the
// text or the class says so; the last one is the session's last row.
func TestAiderAPIErrors(t *testing.T) {
	aiderUTC(t)
	rows := aiderRead(t, filepath.Join(fixtureDir, "aider", "api-errors"), "")
	var got []string
	for _, r := range rows {
		if r.Kind != adapters.KindError {
			continue
		}
		lim := ""
		if r.Limit != nil {
			lim = string(r.Limit.Kind)
		}
		if r.ToolName != "model API" || r.Role != "system" {
			t.Errorf("API error row %+v is not the model API's", r)
		}
		got = append(got, lim)
	}
	// (LimitFromError reads OpenAI's "Rate limit reached for …" as a usage
	// cap: a limit either way.)
	if len(got) != 3 || got[0] == "" || got[1] != "quota" || got[2] != "" {
		t.Errorf("API error limits = %q, want a limit, quota, none", got)
	}
	if last := rows[len(rows)-1]; last.Kind != adapters.KindError || !strings.Contains(last.Text, "AuthenticationError") {
		t.Errorf("the last row is %s %q, want the final API error", last.Kind, last.Text)
	}
}

// TestAiderHistoryOutsideProject: a project's .aider.conf.yml naming a
// history outside the project (absolute, through .., through a symlink),
// or a default history that is a symlink out, is not read (issue 21).
func TestAiderHistoryOutsideProject(t *testing.T) {
	aiderUTC(t)
	root := t.TempDir()
	dir, other := filepath.Join(root, "proj"), filepath.Join(root, "other")
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.MkdirAll(other, 0o755)
	secret := filepath.Join(other, "notes.md")
	os.WriteFile(secret, []byte("\n# aider chat started at 2026-01-02 03:04:05\n\n#### someone else's task  \n\nOk.\n\n"), 0o644)
	os.Symlink(other, filepath.Join(dir, "sub", "out"))
	for _, v := range []string{secret, "../other/notes.md", "sub/../../other/notes.md", "sub/out/notes.md"} {
		os.WriteFile(filepath.Join(dir, ".aider.conf.yml"), []byte("chat-history-file: "+v+"\n"), 0o644)
		rows, err := adapters.Aider.(adapters.StoreReader).ReadStore(adapters.Hook{Project: dir}, adapters.Env{})
		if len(rows) != 0 || err == nil {
			t.Errorf("chat-history-file: %s was read: %d rows, %v", v, len(rows), err)
		}
	}
	os.Remove(filepath.Join(dir, ".aider.conf.yml"))
	os.Symlink(secret, filepath.Join(dir, ".aider.chat.history.md"))
	if rows, err := adapters.Aider.(adapters.StoreReader).ReadStore(adapters.Hook{Project: dir}, adapters.Env{}); len(rows) != 0 || err == nil {
		t.Errorf("a history symlinked out of the project was read: %d rows, %v", len(rows), err)
	}
	if ss, _ := adapters.AiderSessions(dir); len(ss) != 0 {
		t.Errorf("the lister listed %d sessions through a symlink out", len(ss))
	}
	// Inside the project, through a link that stays inside, is read.
	os.Remove(filepath.Join(dir, ".aider.chat.history.md"))
	os.WriteFile(filepath.Join(dir, "sub", "h.md"), mustReadFile(t, secret), 0o644)
	os.WriteFile(filepath.Join(dir, ".aider.conf.yml"), []byte("chat-history-file: sub/h.md\n"), 0o644)
	if rows := aiderRead(t, dir, ""); len(rows) != 2 {
		t.Errorf("a history inside the project: %d rows", len(rows))
	}
}

func mustReadFile(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
