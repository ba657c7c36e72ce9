package hookconf

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/carryover/carryover/specs"
	"github.com/pelletier/go-toml/v2"
)

var update = flag.Bool("update", false, "update golden files in testdata/hookconf")

const exe = "/opt/carryover/bin/carryover"

var testdata = filepath.Join("..", "..", "testdata", "hookconf")

// memFS is an in-memory FS; failWrite makes every write fail.
type memFS struct {
	files     map[string][]byte
	failWrite bool
}

func newMem() *memFS { return &memFS{files: map[string][]byte{}} }

func (m *memFS) ReadFile(n string) ([]byte, error) {
	b, ok := m.files[n]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: n, Err: fs.ErrNotExist}
	}
	return slices.Clone(b), nil
}

func (m *memFS) WriteFile(n string, d []byte, _ os.FileMode) error {
	if m.failWrite {
		return &fs.PathError{Op: "open", Path: n, Err: fs.ErrPermission}
	}
	m.files[n] = slices.Clone(d)
	return nil
}

func (m *memFS) Remove(n string) error {
	if m.failWrite {
		return &fs.PathError{Op: "remove", Path: n, Err: fs.ErrPermission}
	}
	delete(m.files, n)
	return nil
}

func table(t *testing.T) *specs.Table {
	t.Helper()
	tab, err := specs.Load()
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func capFor(t *testing.T, tool, version string) specs.Capability {
	t.Helper()
	c, err := table(t).Resolve(tool, version)
	if err != nil {
		t.Fatalf("Resolve(%s, %s): %v", tool, version, err)
	}
	return c
}

var testVersions = map[string]string{
	"claude": "2.1.197", "codex": "0.169.0", "gemini": "0.61.0", "copilot-cli": "1.0.102",
	"cursor": "3.18.25", "vscode-copilot": "1.110.0", "windsurf": "1.12.0",
}

const recordPath = "/home/u/.carryover/" + RecordFile

func targetFor(tool string) Target {
	switch tool {
	case "codex":
		return withLayout(Target{Tool: tool, Path: "/home/u/.codex/hooks.json", TrustPath: "/home/u/.codex/config.toml", Record: recordPath})
	default:
		return withLayout(Target{Tool: tool, Path: "/home/u/cfg/" + tool + ".json", Record: recordPath})
	}
}

// withLayout fills in the tool's hook-file layout from the table.
func withLayout(tg Target) Target {
	tab, err := specs.Load()
	if err != nil {
		panic(err)
	}
	tl, _ := tab.Tool(tg.Tool)
	tg.Layout = tl.HookFile
	return tg
}

// TestNoLayoutIsAnError: an agent with a hook config path but no layout
// gets an error, never an empty plan reported as "unchanged".
func TestNoLayoutIsAnError(t *testing.T) {
	tg := Target{Tool: "claude", Path: "/home/u/.claude/settings.json"}
	c := capFor(t, "claude", "2.1.197")
	if _, err := PlanInstall(tg, c, exe, newMem()); err == nil {
		t.Error("PlanInstall without a layout: no error")
	}
	if _, err := PlanUninstall(tg, exe, newMem()); err == nil {
		t.Error("PlanUninstall without a layout: no error")
	}
	if _, err := Check(tg, c, exe, newMem()); err == nil {
		t.Error("Check without a layout: no error")
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n%s", path, Diff(Plan{Path: path, Before: want, After: got}))
	}
}

func apply(t *testing.T, plans []Plan, files FS) {
	t.Helper()
	if err := Apply(plans, files); err != nil {
		t.Fatalf("Apply: %v", err)
	}
}

type rtCase struct{ tool, name string }

func roundTripCases(t *testing.T) []rtCase {
	var cases []rtCase
	// Every agent the table gives a settings-file layout (whole files:
	// whole_test.go).
	for _, tl := range table(t).Tools() {
		if tl.HookFile != nil && !tl.HookFile.Whole() {
			cases = append(cases, rtCase{tl.Name, "missing"})
		}
	}
	ins, err := filepath.Glob(filepath.Join(testdata, "*", "*.in"))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range ins {
		cases = append(cases, rtCase{filepath.Base(filepath.Dir(in)), strings.TrimSuffix(filepath.Base(in), ".in")})
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].tool+cases[i].name < cases[j].tool+cases[j].name })
	return cases
}

// TestRoundTrip: install (golden) → second install changes nothing →
// status present → uninstall restores every byte (or deletes a created file).
func TestRoundTrip(t *testing.T) {
	for _, c := range roundTripCases(t) {
		t.Run(c.tool+"/"+c.name, func(t *testing.T) {
			dir := filepath.Join(testdata, c.tool)
			tg := targetFor(c.tool)
			capab := capFor(t, c.tool, testVersions[c.tool])
			m := newMem()
			orig, err := os.ReadFile(filepath.Join(dir, c.name+".in"))
			if err == nil {
				m.files[tg.Path] = orig
			}
			origTrust, errTrust := os.ReadFile(filepath.Join(dir, c.name+".config.toml"))
			if tg.TrustPath != "" && errTrust == nil {
				m.files[tg.TrustPath] = origTrust
			}

			plans, err := PlanInstall(tg, capab, exe, m)
			if err != nil {
				t.Fatalf("PlanInstall: %v", err)
			}
			if plans[0].Created != (orig == nil) {
				t.Errorf("Created = %v; want %v", plans[0].Created, orig == nil)
			}
			wantHooks := []string{}
			for _, h := range capab.Hooks() {
				wantHooks = append(wantHooks, h.Native)
			}
			if !slices.Equal(plans[0].Hooks, wantHooks) {
				t.Errorf("Hooks = %v; want %v", plans[0].Hooks, wantHooks)
			}
			apply(t, plans, m)
			golden(t, filepath.Join(dir, c.name+".install.golden"), m.files[tg.Path])
			if tg.TrustPath != "" {
				golden(t, filepath.Join(dir, c.name+".config.toml.golden"), m.files[tg.TrustPath])
			}
			if orig != nil && !bytes.Equal(m.files[tg.Path+BackupSuffix], orig) {
				t.Errorf("backup does not hold the original")
			}

			again, err := PlanInstall(tg, capab, exe, m)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range again {
				if p.Changed() {
					t.Errorf("second install changes %s:\n%s", p.Path, Diff(p))
				}
			}
			st, err := Check(tg, capab, exe, m)
			if err != nil || st.State != StatePresent {
				t.Errorf("Check = %+v, %v; want present", st, err)
			}

			un, err := PlanUninstall(tg, exe, m)
			if err != nil {
				t.Fatal(err)
			}
			apply(t, un, m)
			got, exists := m.files[tg.Path]
			if orig == nil {
				if exists {
					t.Errorf("uninstall left a file install created:\n%s", got)
				}
			} else if !bytes.Equal(got, orig) {
				t.Errorf("uninstall is not byte-identical:\n%s", Diff(Plan{Path: tg.Path, Before: orig, After: got}))
			}
			if tg.TrustPath != "" {
				gotT, ex := m.files[tg.TrustPath]
				if errTrust != nil && ex {
					t.Errorf("uninstall left config.toml install created:\n%s", gotT)
				}
				if errTrust == nil && !bytes.Equal(gotT, origTrust) {
					t.Errorf("config.toml not restored:\n%s", Diff(Plan{Path: tg.TrustPath, Before: origTrust, After: gotT}))
				}
			}
			st, err = Check(tg, capab, exe, m)
			if err != nil || st.State != StateMissing {
				t.Errorf("Check after uninstall = %+v, %v; want missing", st, err)
			}
		})
	}
}

func TestRewriteOnExeAndEventChange(t *testing.T) {
	in, err := os.ReadFile(filepath.Join(testdata, "claude", "user-hooks.in"))
	if err != nil {
		t.Fatal(err)
	}
	tg := targetFor("claude")
	m := newMem()
	m.files[tg.Path] = in
	old := capFor(t, "claude", "2.0.0")
	p, err := PlanInstall(tg, old, "/usr/local/bin/carryover", m)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, p, m)

	newCap := capFor(t, "claude", "2.1.197")
	st, _ := Check(tg, newCap, exe, m)
	if st.State != StateDrifted || !strings.Contains(st.Detail, "missing events PostToolUseFailure") || !strings.Contains(st.Detail, "do not run "+exe) {
		t.Errorf("Check = %+v; want drifted with missing event and wrong path", st)
	}
	p, err = PlanInstall(tg, newCap, exe, m)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, p, m)
	got := string(m.files[tg.Path])
	if strings.Contains(got, "/usr/local/bin/carryover") || strings.Count(got, exe) != len(newCap.Hooks()) {
		t.Errorf("rewrite left old stubs or wrong count:\n%s", got)
	}
	if !strings.Contains(got, "notify-send 'Claude finished'") || !strings.Contains(got, "~/bin/other-tool session-start") {
		t.Errorf("rewrite lost the user's hooks:\n%s", got)
	}
	p, err = PlanUninstall(tg, exe, m)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, p, m)
	if !bytes.Equal(m.files[tg.Path], in) {
		t.Errorf("uninstall after rewrite is not byte-identical:\n%s", Diff(Plan{Before: in, After: m.files[tg.Path]}))
	}
}

func TestMixedGroupKeepsUserHandler(t *testing.T) {
	in := `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}, {"type": "command", "command": "\"/x/carryover\" snapshot --tool claude --event Stop"}]}]}}`
	tg := targetFor("claude")
	m := newMem()
	m.files[tg.Path] = []byte(in)
	m.files[tg.Path+BackupSuffix] = []byte(in)
	m.files[recordPath] = []byte(`{"exes": ["/x/carryover"]}`) // an earlier install's binary
	p, err := PlanUninstall(tg, exe, m)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, p, m)
	want := `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}}`
	if got := string(m.files[tg.Path]); got != want {
		t.Errorf("uninstall = %s; want %s", got, want)
	}
}

func TestCodexTrustMatchesSamples(t *testing.T) {
	// A copy of the real config.toml captured from Codex 0.169.0 (shared agent samples).
	cfg, err := os.ReadFile(filepath.Join("..", "..", "testdata", "hookconf", "codex", "sample-config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Hooks struct {
			State map[string]struct {
				TrustedHash string `toml:"trusted_hash"`
			} `toml:"state"`
		} `toml:"hooks"`
	}
	if err := toml.Unmarshal(cfg, &doc); err != nil {
		t.Fatal(err)
	}
	samples := filepath.Join("..", "..", "testdata", "hookconf", "codex")
	files := map[string]string{
		"sample-hooks.json":         "/home/dev-b/.codex/hooks.json",
		"sample-project-hooks.json": "/home/dev-b/src/inject-demo/.codex/hooks.json",
	}
	n := 0
	for f, declared := range files {
		b, err := os.ReadFile(filepath.Join(samples, f))
		if err != nil {
			t.Fatal(err)
		}
		entries, err := codexTrust(targetFor("codex").Layout.Trust, declared, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			want, ok := doc.Hooks.State[e.Key]
			if !ok {
				t.Errorf("key %s not in the sample config.toml", e.Key)
				continue
			}
			if e.Hash != want.TrustedHash {
				t.Errorf("hash(%s) = %s; want %s", e.Key, e.Hash, want.TrustedHash)
			}
			n++
		}
	}
	if n != len(doc.Hooks.State) {
		t.Errorf("checked %d hashes; sample has %d", n, len(doc.Hooks.State))
	}
}

func TestCodexNormalisation(t *testing.T) {
	// the defaults and clamps of trust_hash.py
	tests := []struct {
		event string
		in    map[string]any
		want  map[string]any
	}{
		{"Stop", map[string]any{"command": "c"}, map[string]any{"type": "command", "command": "c", "timeout": 600.0, "async": false}},
		{"SessionEnd", map[string]any{"command": "c"}, map[string]any{"type": "command", "command": "c", "timeout": 1.0, "async": false}},
		{"Interrupt", map[string]any{"command": "c", "timeout": 10.0}, map[string]any{"type": "command", "command": "c", "timeout": 3.0, "async": false}},
		{"Stop", map[string]any{"command": "c", "timeout": 0.0, "async": true, "statusMessage": "s", "additionalContextLimit": 100.0},
			map[string]any{"type": "command", "command": "c", "timeout": 1.0, "async": true, "statusMessage": "s"}},
		{"SessionStart", map[string]any{"command": "c", "additionalContextLimit": 100.0},
			map[string]any{"type": "command", "command": "c", "timeout": 600.0, "async": false, "additionalContextLimit": 100.0}},
		{"SessionStart", map[string]any{"command": "c", "additionalContextLimit": 2500.0},
			map[string]any{"type": "command", "command": "c", "timeout": 600.0, "async": false}},
	}
	for _, tt := range tests {
		if got := codexNorm(targetFor("codex").Layout.Trust, tt.event, tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("codexNorm(%s, %v) = %v; want %v", tt.event, tt.in, got, tt.want)
		}
	}
	// serde_json does not escape <>& and keeps non-ASCII
	d, err := codexDigest(map[string]any{"c": "a<b>&é"})
	if err != nil {
		t.Fatal(err)
	}
	if d != "sha256:"+sha256hex(`{"c":"a<b>&é"}`) {
		t.Errorf("codexDigest escapes HTML or non-ASCII: %s", d)
	}
}

func TestCodexConflictingUserTrust(t *testing.T) {
	tg := targetFor("codex")
	m := newMem()
	m.files[tg.TrustPath] = []byte("[hooks.state.\"/home/u/.codex/hooks.json:session_start:0:0\"]\ntrusted_hash = \"sha256:dead\"\n")
	_, err := PlanInstall(tg, capFor(t, "codex", "0.169.0"), exe, m)
	if err == nil || !strings.Contains(err.Error(), "another trusted_hash") {
		t.Errorf("PlanInstall = %v; want a conflict error", err)
	}
}

func TestCodexStaleTrustIsDrift(t *testing.T) {
	tg := targetFor("codex")
	c := capFor(t, "codex", "0.169.0")
	m := newMem()
	p, err := PlanInstall(tg, c, exe, m)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, p, m)
	cfg := string(m.files[tg.TrustPath])
	i := strings.Index(cfg, "sha256:")
	m.files[tg.TrustPath] = []byte(cfg[:i+7] + "0" + cfg[i+8:])
	st, err := Check(tg, c, exe, m)
	if err != nil || st.State != StateDrifted || !strings.Contains(st.Detail, "trust") {
		t.Errorf("Check = %+v, %v; want drifted trust", st, err)
	}
	p, err = PlanInstall(tg, c, exe, m)
	if err != nil {
		t.Fatal(err)
	}
	if p[0].Changed() || !p[1].Changed() {
		t.Errorf("refresh should rewrite only config.toml: %v %v", p[0].Changed(), p[1].Changed())
	}
	apply(t, p, m)
	if st, _ := Check(tg, c, exe, m); st.State != StatePresent {
		t.Errorf("after refresh Check = %+v", st)
	}
}

func TestWarnings(t *testing.T) {
	tg := targetFor("claude")
	m := newMem()
	m.files[tg.Path] = []byte(`{"cleanupPeriodDays": 30}`)
	p, err := PlanInstall(tg, capFor(t, "claude", "2.1.197"), exe, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(p[0].Warnings) != 1 || !strings.Contains(p[0].Warnings[0], "cleanupPeriodDays is 30") {
		t.Errorf("Warnings = %q", p[0].Warnings)
	}
	tg = targetFor("gemini")
	m.files[tg.Path] = []byte(`{"hooksConfig": {"enabled": false}}`)
	p, err = PlanInstall(tg, capFor(t, "gemini", "0.61.0"), exe, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(p[0].Warnings) != 1 || !strings.Contains(p[0].Warnings[0], "hooksConfig.enabled") {
		t.Errorf("Warnings = %q", p[0].Warnings)
	}
}

func TestErrors(t *testing.T) {
	c := capFor(t, "claude", "2.1.197")
	tg := targetFor("claude")
	tests := []struct {
		name, content, exe, want string
	}{
		{"broken json", `{"hooks": {`, exe, "line 1"},
		{"not an object", `[1, 2]`, exe, "not a JSON object"},
		{"hooks not object", `{"hooks": []}`, exe, `"hooks" is not an object`},
		{"event not list", `{"hooks": {"Stop": {}}}`, exe, "hooks.Stop is not a list"},
		{"relative exe", `{}`, "carryover", "not absolute"},
	}
	for _, tt := range tests {
		m := newMem()
		m.files[tg.Path] = []byte(tt.content)
		_, err := PlanInstall(tg, c, tt.exe, m)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: PlanInstall err = %v; want it to mention %q", tt.name, err, tt.want)
		}
	}
}

func TestReadOnlyFile(t *testing.T) {
	tg := targetFor("cursor")
	m := newMem()
	m.files[tg.Path] = []byte(`{"version": 1}`)
	p, err := PlanInstall(tg, capFor(t, "cursor", "3.18.25"), exe, m)
	if err != nil {
		t.Fatal(err)
	}
	m.failWrite = true
	err = Apply(p, m)
	if err == nil || !strings.Contains(err.Error(), "cannot write") || !strings.Contains(err.Error(), "permissions") {
		t.Errorf("Apply = %v; want a permissions hint", err)
	}
	if string(m.files[tg.Path]) != `{"version": 1}` {
		t.Errorf("file changed despite failure")
	}
}

func TestApplyRefusesChangedFile(t *testing.T) {
	tg := targetFor("claude")
	m := newMem()
	p, err := PlanInstall(tg, capFor(t, "claude", "2.1.197"), exe, m)
	if err != nil {
		t.Fatal(err)
	}
	m.files[tg.Path] = []byte("{}")
	if err := Apply(p, m); err == nil || !strings.Contains(err.Error(), "changed since") {
		t.Errorf("Apply = %v; want changed-since error", err)
	}
}

func TestOSFS(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "settings.json")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("{\"a\": 1}\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "home", ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	c := capFor(t, "claude", "2.1.197")
	tg := withLayout(Target{Tool: "claude", Path: link})
	p, err := PlanInstall(tg, c, exe, OSFS{})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, p, OSFS{})
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("symlink replaced by a file")
	}
	if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v; want 0640 kept", fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(link + BackupSuffix); string(b) != "{\"a\": 1}\n" {
		t.Errorf("backup = %q", b)
	}
	// a new file: parent dirs created, 0600
	tg2 := withLayout(Target{Tool: "copilot-cli", Path: filepath.Join(dir, "home", ".copilot", "hooks", "carryover.json")})
	p, err = PlanInstall(tg2, capFor(t, "copilot-cli", "1.0.102"), exe, OSFS{})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, p, OSFS{})
	if fi, err := os.Stat(tg2.Path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("new file: %v %v; want mode 0600", fi, err)
	}
	if _, err := os.Stat(tg2.Path + BackupSuffix); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("backup of a created file exists: %v", err)
	}
	p, err = PlanUninstall(tg2, exe, OSFS{})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, p, OSFS{})
	if _, err := os.Stat(tg2.Path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("uninstall did not delete the file install created: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(tg2.Path))
	if len(entries) != 0 {
		t.Errorf("left-over files: %v", entries)
	}
}

func TestNoHookTools(t *testing.T) {
	c := capFor(t, "aider", "0.86.1")
	p, err := PlanInstall(Target{Tool: "aider"}, c, exe, newMem())
	if err != nil || len(p) != 0 {
		t.Errorf("PlanInstall(aider) = %v, %v; want nothing", p, err)
	}
	st, err := Check(Target{Tool: "aider"}, c, exe, newMem())
	if err != nil || st.State != StateNoHooks {
		t.Errorf("Check(aider) = %+v, %v", st, err)
	}
}

func TestQuote(t *testing.T) {
	tests := map[string]string{
		"/usr/bin/carryover":        `"/usr/bin/carryover"`,
		"/home/a b/carryover":       `"/home/a b/carryover"`,
		"/home/$x/carryover":        `'/home/$x/carryover'`,
		`/it's/carryover`:           `"/it's/carryover"`,
		`/it's "q"/carryover`:       `'/it'\''s "q"/carryover'`,
		`C:\Users\me\carryover.exe`: `'C:\Users\me\carryover.exe'`,
	}
	for in, want := range tests {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %s; want %s", in, got, want)
		}
	}
	if got := StubCommand("/usr/bin/carryover", "claude", "Stop"); got != `"/usr/bin/carryover" snapshot --tool claude --event Stop` {
		t.Errorf("StubCommand = %s", got)
	}
}

func TestDiffGolden(t *testing.T) {
	in, err := os.ReadFile(filepath.Join(testdata, "claude", "user-hooks.in"))
	if err != nil {
		t.Fatal(err)
	}
	tg := targetFor("claude")
	m := newMem()
	m.files[tg.Path] = in
	p, err := PlanInstall(tg, capFor(t, "claude", "2.1.197"), exe, m)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join(testdata, "claude", "user-hooks.diff.golden"), []byte(Diff(p[0])))
	if Diff(Plan{Before: in, After: in}) != "" {
		t.Errorf("Diff of an unchanged plan is not empty")
	}
}

func FuzzParseJSON(f *testing.F) {
	ins, _ := filepath.Glob(filepath.Join(testdata, "*", "*.in"))
	for _, in := range ins {
		if b, err := os.ReadFile(in); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"a": [1, 2.5e3, -0, true, null, "\u00e9\"x"]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		root, err := parseJSON(b)
		var want any
		stdErr := json.Unmarshal(b, &want)
		if stdErr == nil && !bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) {
			if err != nil {
				t.Fatalf("parseJSON rejects valid JSON: %v", err)
			}
			if !reflect.DeepEqual(root.value(), want) {
				t.Fatalf("value = %v; encoding/json = %v", root.value(), want)
			}
		}
		if err != nil {
			return
		}
		// removing any top-level member keeps the document parseable
		if root.kind == '{' && len(root.members) > 0 {
			if _, err := parseJSON(removeItem(b, root, len(root.members)-1)); err != nil {
				t.Fatalf("removeItem broke the document: %v", err)
			}
			if _, err := parseJSON(appendItem(b, root, "k", ordered{{"x", 1}}, detectStyle(b, root), true)); err != nil {
				t.Fatalf("appendItem broke the document: %v", err)
			}
		}
	})
}

func sha256hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestRoundTripWithoutBackup: the same round trips with CRLF line endings,
// with the user's own edit made after install (a key added at the top), and
// with the backup gone (cleaned up, or the file copied to another machine):
// uninstall removes
// exactly what install added, so the result is the original plus the
// user's edit, byte for byte, whatever its line endings and its empty
// hook lists and objects.
func TestRoundTripWithoutBackup(t *testing.T) {
	for _, c := range roundTripCases(t) {
		if c.name == "missing" {
			continue
		}
		for _, mode := range []string{"crlf", "crlf, user edit", "user edit", "no backup", "user edit, no backup", "crlf, no backup"} {
			t.Run(c.tool+"/"+c.name+"/"+mode, func(t *testing.T) {
				tg := targetFor(c.tool)
				orig, err := os.ReadFile(filepath.Join(testdata, c.tool, c.name+".in"))
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(mode, "crlf") {
					if bytes.Contains(orig, []byte("\r\n")) {
						t.Skip("already CRLF")
					}
					orig = bytes.ReplaceAll(orig, []byte("\n"), []byte("\r\n"))
				}
				root, err := parseJSON(orig)
				if err != nil || blank(orig) || root.kind != '{' {
					t.Skip("not an object")
				}
				m := newMem()
				m.files[tg.Path] = orig
				apply(t, must(PlanInstall(tg, capFor(t, c.tool, testVersions[c.tool]), exe, m)), m)
				want := orig
				edit := func(b []byte) []byte {
					i := bytes.IndexByte(b, '{') + 1
					nl := ""
					if bytes.Contains(b, []byte("\r\n")) {
						nl = "\r\n"
					} else if bytes.Contains(b, []byte("\n")) {
						nl = "\n"
					}
					return slices.Concat(b[:i], []byte(nl+`"userEdit": 1,`), b[i:])
				}
				if strings.Contains(mode, "user edit") {
					if len(root.members) == 0 {
						t.Skip("no member to add a key before")
					}
					m.files[tg.Path] = edit(m.files[tg.Path])
					want = edit(orig)
				}
				if strings.Contains(mode, "no backup") {
					delete(m.files, tg.Path+BackupSuffix)
				}
				apply(t, must(PlanUninstall(tg, exe, m)), m)
				got, exists := m.files[tg.Path]
				if strings.Contains(mode, "no backup") && (emptyHookContainer(orig) || len(root.members) == 0) {
					// Without the backup nothing says an emptied list was
					// there before: the value is the same, the bytes may
					// not be (or the file goes, as install created it).
					if exists && !sameJSON(got, want) {
						t.Errorf("uninstall without backup changed the value:\n%s", Diff(Plan{Path: tg.Path, Before: want, After: got}))
					}
					return
				}
				if !bytes.Equal(got, want) {
					t.Errorf("uninstall is not byte-identical:\n%s", Diff(Plan{Path: tg.Path, Before: want, After: got}))
				}
			})
		}
	}
}

// emptyHookContainer reports whether b has an empty "hooks" object or an
// empty list or object in it.
func emptyHookContainer(b []byte) bool {
	var v map[string]any
	if json.Unmarshal(b, &v) != nil {
		return false
	}
	h, ok := v["hooks"].(map[string]any)
	if !ok {
		return false
	}
	if len(h) == 0 {
		return true
	}
	for _, e := range h {
		if a, ok := e.([]any); ok && len(a) == 0 {
			return true
		}
		if o, ok := e.(map[string]any); ok && len(o) == 0 {
			return true
		}
	}
	return false
}

// TestTrustRoundTrip: Codex's config.toml comes back byte for byte after
// install and uninstall, with LF or CRLF line endings, with or without a
// final newline, with or without a blank line at its end.
func TestTrustRoundTrip(t *testing.T) {
	hooks, err := os.ReadFile(filepath.Join(testdata, "codex", "user-hooks.in"))
	if err != nil {
		t.Fatal(err)
	}
	base, err := os.ReadFile(filepath.Join(testdata, "codex", "user-hooks.config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	base = bytes.TrimRight(base, "\n")
	for name, toml := range map[string][]byte{
		"lf":                     append(slices.Clone(base), '\n'),
		"lf, no final newline":   slices.Clone(base),
		"lf, blank line at end":  append(slices.Clone(base), "\n\n"...),
		"crlf":                   append(bytes.ReplaceAll(base, []byte("\n"), []byte("\r\n")), "\r\n"...),
		"crlf, no final newline": bytes.ReplaceAll(base, []byte("\n"), []byte("\r\n")),
	} {
		t.Run(name, func(t *testing.T) {
			tg := targetFor("codex")
			m := newMem()
			m.files[tg.Path] = hooks
			m.files[tg.TrustPath] = toml
			apply(t, must(PlanInstall(tg, capFor(t, "codex", testVersions["codex"]), exe, m)), m)
			if bytes.Equal(m.files[tg.TrustPath], toml) {
				t.Fatal("install did not add the trust entries")
			}
			installed := slices.Clone(m.files[tg.TrustPath])
			apply(t, must(PlanUninstall(tg, exe, m)), m)
			if got := m.files[tg.TrustPath]; !bytes.Equal(got, toml) {
				t.Errorf("config.toml not byte-identical: %q\nwant %q", got, toml)
			}
			// Without the backup only a final newline install added may
			// stay: nothing else tells it was not there.
			m.files[tg.TrustPath] = installed
			apply(t, must(PlanUninstall(tg, exe, m)), m)
			if got := m.files[tg.TrustPath]; !bytes.Equal(bytes.TrimRight(got, "\r\n"), bytes.TrimRight(toml, "\r\n")) {
				t.Errorf("config.toml without backup: %q\nwant %q", got, toml)
			}
		})
	}
}

// TestLayoutWarnings: warnings are data in the layout (tools.toml), checked
// here on a layout no agent has: a nested key, a value to match, {value}.
func TestLayoutWarnings(t *testing.T) {
	f := format{warns: []specs.HookWarning{
		{Key: "x.level", Is: "3", Set: "level is {value}", Off: true},
		{Key: "keep", Set: "keep is {value}", Unset: "keep is unset"},
	}}
	for in, want := range map[string][]string{
		`{"x": {"level": 3}, "keep": true}`:  {"level is 3", "keep is true"},
		`{"x": {"level": "3"}}`:              {"keep is unset"},
		`{"x": 3, /* JSONC */ "keep": null}`: {"keep is <nil>"},
		`[1]`:                                {"keep is unset"},
	} {
		got, off := f.warnings([]byte(in))
		if !slices.Equal(got, want) {
			t.Errorf("warnings(%s) = %q; want %q", in, got, want)
		}
		// Off: only the warnings marked off, here the level's.
		if wantOff := slices.DeleteFunc(slices.Clone(want), func(w string) bool { return !strings.HasPrefix(w, "level") }); !slices.Equal(off, wantOff) {
			t.Errorf("warnings(%s) off = %q; want %q", in, off, wantOff)
		}
	}
}

// TestTrustRulesAreData: the hashing rules come from the layout; other
// rules (no agent's) change the label, the clamp and the matcher as stated.
func TestTrustRulesAreData(t *testing.T) {
	th := &specs.TrustHash{Labels: map[string]string{"Stop": "halt"}, Clamp3s: []string{"Stop"}, NoMatcher: []string{"Stop"}}
	if got := codexNorm(th, "Stop", map[string]any{"command": "c", "timeout": 10.0}); got["timeout"] != 3.0 {
		t.Errorf("clamped timeout = %v; want 3", got["timeout"])
	}
	doc := []byte(`{"hooks": {"Stop": [{"matcher": "x", "hooks": [{"type": "command", "command": "c"}]}], "Other": [{"hooks": [{"command": "d"}]}]}}`)
	es, err := codexTrust(th, "/h.json", doc, nil)
	if err != nil || len(es) != 1 || es[0].Key != "/h.json:halt:0:0" {
		t.Fatalf("codexTrust = %v, %v; want one entry labelled halt", es, err)
	}
	th.NoMatcher = nil
	if es2, _ := codexTrust(th, "/h.json", doc, nil); es2[0].Hash == es[0].Hash {
		t.Error("a matcher the rules keep did not change the hash")
	}
}
