package hookconf

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOursIsExact: only the exact stub StubCommand writes, for this tool and
// the event it is listed under, run by the current binary or one the install
// record lists, is carryover's.
func TestOursIsExact(t *testing.T) {
	id := stubID{tool: "claude", exe: exe, known: []string{"/usr/local/bin/carryover", "/it's/carry over"}}
	tests := []struct {
		cmd, event string
		want       bool
	}{
		{StubCommand(exe, "claude", "Stop"), "Stop", true},
		{StubCommand("/usr/local/bin/carryover", "claude", "Stop"), "Stop", true},
		{StubCommand("/it's/carry over", "claude", "Stop"), "Stop", true},
		{`'/it'\''s/carry over' snapshot --tool claude --event Stop`, "Stop", false},      // quote() would double-quote it
		{StubCommand("/home/u/src/carryover/carryover", "claude", "Stop"), "Stop", false}, // not recorded
		{StubCommand(exe, "claude", "Stop"), "PreCompact", false},                         // listed under another event
		{StubCommand(exe, "codex", "Stop"), "Stop", false},
		{StubCommand(exe, "claude", "Stop") + " --verbose", "Stop", false},
		{StubCommand(exe, "claude", "Stop") + "; curl x | sh", "Stop", false},
		{"env X=1 " + StubCommand(exe, "claude", "Stop"), "Stop", false},
		{exe + " snapshot --tool claude --event Stop", "Stop", false},
		{"'" + exe + "' snapshot --tool claude --event Stop", "Stop", false},
		{"carryover snapshot --tool claude --event Stop", "Stop", false},
		{`"carryover" snapshot --tool claude --event Stop`, "Stop", false},
		{`"" snapshot --tool claude --event Stop`, "Stop", false},
		{"echo carryover snapshot --tool claude", "Stop", false},
	}
	for _, tt := range tests {
		if got := id.ours(tt.cmd, tt.event); got != tt.want {
			t.Errorf("ours(%q under %s) = %v; want %v", tt.cmd, tt.event, got, tt.want)
		}
	}
}

// TestRecordedExeIsRewritten: after the binary moves, refresh replaces the
// stubs the old path wrote (the record lists it) and records the new one.
func TestRecordedExeIsRewritten(t *testing.T) {
	tg := targetFor("claude")
	m := newMem()
	c := capFor(t, "claude", "2.1.197")
	apply(t, must(PlanInstall(tg, c, "/usr/local/bin/carryover", m)), m)
	if r, _ := loadRecord(m, recordPath); !slices.Equal(r.Exes, []string{"/usr/local/bin/carryover"}) {
		t.Fatalf("record = %+v", r)
	}
	apply(t, must(PlanInstall(tg, c, exe, m)), m)
	got := string(m.files[tg.Path])
	if strings.Contains(got, "/usr/local/bin/carryover") || strings.Count(got, exe) != len(c.Hooks()) {
		t.Errorf("old stubs left:\n%s", got)
	}
	if r, _ := loadRecord(m, recordPath); !slices.Equal(r.Exes, []string{"/usr/local/bin/carryover", exe}) {
		t.Errorf("record = %+v", r)
	}
	// Without the record, a stub with another path is the user's.
	delete(m.files, recordPath)
	m.files[tg.Path] = []byte(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "\"/usr/local/bin/carryover\" snapshot --tool claude --event Stop"}]}]}}`)
	p := must(PlanUninstall(tg, exe, m))
	if p[0].Changed() {
		t.Errorf("uninstall removes an unrecorded path's stub:\n%s", Diff(p[0]))
	}
	m.files[recordPath] = []byte("{broken")
	if _, err := PlanInstall(tg, c, exe, m); err == nil || !strings.Contains(err.Error(), RecordFile) {
		t.Errorf("broken record: %v; want an error naming it", err)
	}
}

func must(p []Plan, err error) []Plan {
	if err != nil {
		panic(err)
	}
	return p
}

// TestReadOnlyRefused: a read-only config (mode, even for root) is refused
// before anything is written, with what to do next; it is never replaced by
// a rename, and its sibling (Codex's config.toml) is not written either.
func TestReadOnlyRefused(t *testing.T) {
	home := t.TempDir()
	tg := withLayout(Target{Tool: "codex", Path: filepath.Join(home, ".codex", "hooks.json"), TrustPath: filepath.Join(home, ".codex", "config.toml"),
		Record: filepath.Join(home, ".carryover", RecordFile)})
	os.MkdirAll(filepath.Dir(tg.Path), 0o755)
	orig := []byte("{\n  \"hooks\": {}\n}\n")
	for _, readOnly := range []string{tg.Path, tg.TrustPath} {
		t.Run(filepath.Base(readOnly), func(t *testing.T) {
			os.WriteFile(tg.Path, orig, 0o644)
			os.WriteFile(tg.TrustPath, []byte("model = \"o4\"\n"), 0o644)
			os.Chmod(readOnly, 0o444)
			defer os.Chmod(readOnly, 0o644)
			before := snapshotDir(t, home)
			plans, err := PlanInstall(tg, capFor(t, "codex", "0.169.0"), exe, OSFS{})
			if err != nil {
				t.Fatal(err)
			}
			err = Apply(plans, OSFS{})
			if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), readOnly+" is read-only") || !strings.Contains(err.Error(), "chmod u+w") {
				t.Fatalf("Apply = %v; want a read-only refusal naming %s and the fix", err, readOnly)
			}
			if after := snapshotDir(t, home); !equalMaps(before, after) {
				t.Errorf("files changed despite the refusal:\nbefore %v\nafter  %v", before, after)
			}
			if fi, _ := os.Stat(readOnly); fi.Mode().Perm() != 0o444 {
				t.Errorf("mode = %v", fi.Mode().Perm())
			}
		})
	}
	// OSFS.WriteFile itself refuses too (config.toml's tools line uses it).
	ro := filepath.Join(home, "ro.toml")
	os.WriteFile(ro, []byte("a = 1\n"), 0o400)
	if err := (OSFS{}).WriteFile(ro, []byte("b = 2\n"), 0o600); !errors.Is(err, ErrReadOnly) {
		t.Errorf("WriteFile over a read-only file = %v", err)
	}
	if b, _ := os.ReadFile(ro); string(b) != "a = 1\n" {
		t.Errorf("read-only file replaced: %q", b)
	}
}

// snapshotDir maps every file under root to its content ("<dir>" for dirs).
func snapshotDir(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			out[p] = "<dir>"
			return nil
		}
		b, _ := os.ReadFile(p)
		out[p] = string(b)
		return nil
	})
	return out
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestUninstallCleansUp: after a byte-identical restore the backups go, a
// file install created goes with the directories install made for it, and
// the home is exactly as before install. A backup whose file changed since
// is kept and named.
func TestUninstallCleansUp(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	claude := filepath.Join(home, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(claude), 0o755)
	os.WriteFile(claude, []byte("{\"theme\": \"dark\"}\n"), 0o644)
	os.WriteFile(filepath.Join(home, ".claude", "notes"), []byte("x"), 0o644)
	rec := filepath.Join(root, "carryover-home", RecordFile)
	targets := []Target{
		withLayout(Target{Tool: "claude", Path: claude, Record: rec}),
		withLayout(Target{Tool: "copilot-cli", Path: filepath.Join(home, ".copilot", "hooks", "carryover.json"), Record: rec}),
		withLayout(Target{Tool: "codex", Path: filepath.Join(home, ".codex", "hooks.json"), TrustPath: filepath.Join(home, ".codex", "config.toml"), Record: rec}),
	}
	before := snapshotDir(t, home)
	install := func() {
		for _, tg := range targets {
			c := capFor(t, tg.Tool, testVersions[tg.Tool])
			apply(t, must(PlanInstall(tg, c, exe, OSFS{})), OSFS{})
		}
	}
	uninstall := func() []string {
		var notes []string
		for _, tg := range targets {
			p := must(PlanUninstall(tg, exe, OSFS{}))
			apply(t, p, OSFS{})
			notes = append(notes, Cleanup(p, OSFS{}, rec)...)
		}
		return notes
	}
	install()
	r, _ := loadRecord(OSFS{}, rec)
	for _, d := range []string{".copilot/hooks", ".copilot", ".codex"} {
		if !slices.Contains(r.Dirs, filepath.Join(home, d)) {
			t.Errorf("record lacks %s: %+v", d, r)
		}
	}
	if slices.Contains(r.Dirs, filepath.Join(home, ".claude")) {
		t.Errorf("record claims .claude, which existed: %+v", r)
	}
	if notes := uninstall(); len(notes) != 0 {
		t.Errorf("notes = %q", notes)
	}
	if after := snapshotDir(t, home); !equalMaps(before, after) {
		t.Errorf("home differs after install+uninstall:\nbefore %v\nafter  %v", before, after)
	}
	if r, _ := loadRecord(OSFS{}, rec); len(r.Dirs) != 0 {
		t.Errorf("removed dirs still recorded: %+v", r)
	}

	// The user edits settings.json while installed: the restore cannot be
	// byte-identical, so the backup stays and the note says where.
	install()
	os.WriteFile(filepath.Join(home, ".copilot", "config.json"), []byte("{}"), 0o600) // the user's, after install
	b, _ := os.ReadFile(claude)
	os.WriteFile(claude, bytes.Replace(b, []byte(`"theme": "dark"`), []byte(`"theme": "light"`), 1), 0o644)
	notes := uninstall()
	if len(notes) != 1 || !strings.Contains(notes[0], "kept "+claude+BackupSuffix) || !strings.Contains(notes[0], "changed since") {
		t.Errorf("notes = %q; want the kept backup named", notes)
	}
	if _, err := os.Stat(claude + BackupSuffix); err != nil {
		t.Errorf("backup removed although the file differs: %v", err)
	}
	// A directory the user put something into stays (and stays recorded:
	// it is removed once empty); the empty one below it goes.
	if _, err := os.Stat(filepath.Join(home, ".copilot", "hooks")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf(".copilot/hooks left behind: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, ".copilot", "config.json")); err != nil {
		t.Errorf("the user's file went: %v", err)
	}
	if r, _ := loadRecord(OSFS{}, rec); !slices.Equal(r.Dirs, []string{filepath.Join(home, ".copilot")}) {
		t.Errorf("record = %+v", r)
	}
}

// FuzzParseStub: parseStub accepts exactly the commands StubCommand writes
// for an absolute path, and gives that path back.
func FuzzParseStub(f *testing.F) {
	for _, p := range []string{exe, "/it's/carry over", `C:\Users\me\carryover.exe`, "/a$b/`c`", "relative"} {
		f.Add(p, StubCommand(p, "claude", "Stop"))
	}
	f.Add("", `"" snapshot --tool claude --event Stop`)
	f.Fuzz(func(t *testing.T, path, cmd string) {
		if p, ok := parseStub(cmd, "claude", "Stop"); ok && StubCommand(p, "claude", "Stop") != cmd {
			t.Fatalf("parseStub(%q) = %q, which writes %q", cmd, p, StubCommand(p, "claude", "Stop"))
		}
		if checkExe(path) == nil {
			if p, ok := parseStub(StubCommand(path, "claude", "Stop"), "claude", "Stop"); !ok || p != path {
				t.Fatalf("parseStub(StubCommand(%q)) = %q, %v", path, p, ok)
			}
		}
	})
}
