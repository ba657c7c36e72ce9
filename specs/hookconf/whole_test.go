package hookconf

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/carryover/carryover/specs"
)

// modeMem is memFS with permission bits (modeFS).
type modeMem struct {
	*memFS
	modes map[string]os.FileMode
}

func newModeMem() *modeMem { return &modeMem{newMem(), map[string]os.FileMode{}} }

func (m *modeMem) WriteFile(n string, d []byte, perm os.FileMode) error {
	if _, ok := m.files[n]; !ok {
		m.modes[n] = perm
	}
	return m.memFS.WriteFile(n, d, perm)
}

func (m *modeMem) mode(n string) (os.FileMode, bool) {
	md, ok := m.modes[n]
	return md, ok
}

func (m *modeMem) chmod(n string, md os.FileMode) error { m.modes[n] = md; return nil }

var wholeVersions = map[string]string{"pi": "0.73.1", "cline": "3.0.65"}

// wholeTarget resolves tool's target as install does, for HOME /home/u.
func wholeTarget(t *testing.T, tool string) Target {
	t.Helper()
	tl, ok := table(t).Tool(tool)
	if !ok || !tl.HookFile.Whole() {
		t.Fatalf("%s has no whole-file layout", tool)
	}
	tg := TargetFor(tl, "linux", func(string) string { return "" }, "/home/u", nil)
	tg.Record = recordPath
	return tg
}

func wholeTools(t *testing.T) []string {
	var out []string
	for _, tl := range table(t).Tools() {
		if tl.HookFile.Whole() {
			out = append(out, tl.Name)
		}
	}
	if len(out) < 2 {
		t.Fatalf("want pi and cline with whole files, got %v", out)
	}
	return out
}

// TestWholeRoundTrip: install writes each file from its template (golden,
// with its mode), a second install changes nothing, status is present,
// doctor's stubs are listed, uninstall deletes every file and status is
// missing again.
func TestWholeRoundTrip(t *testing.T) {
	for _, tool := range wholeTools(t) {
		t.Run(tool, func(t *testing.T) {
			tg := wholeTarget(t, tool)
			c := capFor(t, tool, wholeVersions[tool])
			m := newModeMem()
			plans, err := PlanInstall(tg, c, exe, m)
			if err != nil {
				t.Fatal(err)
			}
			var listing bytes.Buffer
			for _, p := range plans {
				if !p.Created || !p.Changed() || !slices.Equal(p.Hooks, hookNames(c)) {
					t.Errorf("plan %s: created %v changed %v hooks %v", p.Path, p.Created, p.Changed(), p.Hooks)
				}
				if strings.Contains(p.Path, "{{") || !strings.HasPrefix(p.Path, "/home/u/") {
					t.Errorf("path %s is not a file in the user's folders", p.Path)
				}
				listing.WriteString(Diff(p))
			}
			apply(t, plans, m)
			for _, p := range plans {
				if m.modes[p.Path] != os.FileMode(tg.Layout.Mode) {
					t.Errorf("%s mode %#o; want %#o", p.Path, m.modes[p.Path], tg.Layout.Mode)
				}
				if _, has := m.files[p.Path+BackupSuffix]; has {
					t.Errorf("a backup of %s (carryover's own file)", p.Path)
				}
			}
			var r Record
			json.Unmarshal(m.files[recordPath], &r)
			if len(r.Files) != len(plans) || !slices.Equal(r.Exes, []string{exe}) {
				t.Errorf("record %+v; want %d file digests and %s", r, len(plans), exe)
			}
			again, err := PlanInstall(tg, c, exe, m)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range again {
				if p.Changed() {
					t.Errorf("second install changes %s", p.Path)
				}
			}
			st, err := Check(tg, c, exe, m)
			if err != nil || st.State != StatePresent || !slices.Equal(st.Hooks, hookNames(c)) {
				t.Errorf("Check = %+v, %v; want present with %v", st, err, hookNames(c))
			}
			stubs, err := Stubs(tg, m)
			if err != nil {
				t.Fatal(err)
			}
			fmtStubs, _ := json.MarshalIndent(stubs, "", "  ")
			listing.WriteString("\n# doctor runs\n" + string(fmtStubs) + "\n")
			golden(t, filepath.Join(testdata, tool, "whole.install.golden"), listing.Bytes())

			un, err := PlanUninstall(tg, exe, m)
			if err != nil {
				t.Fatal(err)
			}
			apply(t, un, m)
			for p := range m.files {
				if p != recordPath {
					t.Errorf("uninstall left %s", p)
				}
			}
			if st, err := Check(tg, c, exe, m); err != nil || st.State != StateMissing {
				t.Errorf("Check after uninstall = %+v, %v; want missing", st, err)
			}
		})
	}
}

// TestWholePlanner is the planner's table: what install, status and
// uninstall do with what is already at the path.
func TestWholePlanner(t *testing.T) {
	const other = "/usr/local/bin/carryover"
	type tc struct {
		name, tool string
		// setup writes the files before the plans (tg, cap, files)
		setup func(Target, specs.Capability, *modeMem)
		// installErr: install refuses; state: Check's state after setup
		installErr string
		state      State
		detail     string
		// uninstall: the paths uninstall deletes (others stay), warn: in its warnings
		uninstall []string
		warn      string
	}
	put := func(tg Target, ev, content string, m *modeMem) string {
		p := tg.wholeFiles([]string{ev})[0].path
		m.files[p], m.modes[p] = []byte(content), os.FileMode(tg.Layout.Mode)
		return p
	}
	cases := []tc{
		{name: "user's own hook file", tool: "cline",
			setup: func(tg Target, _ specs.Capability, m *modeMem) {
				put(tg, "TaskStart", "#!/bin/sh\necho mine\n", m)
			},
			installErr: "is not the file carryover writes", state: StateDrifted, detail: "not the file carryover writes"},
		{name: "user's own extension", tool: "pi",
			setup: func(tg Target, _ specs.Capability, m *modeMem) {
				put(tg, "", "export default function () {}\n", m)
			},
			installErr: "is not the file carryover writes", state: StateDrifted},
		{name: "written by another carryover path", tool: "cline",
			setup: func(tg Target, c specs.Capability, m *modeMem) {
				for _, ev := range hookNames(c) {
					put(tg, ev, string(renderWhole(tg, other, ev)), m)
				}
			},
			state: StateDrifted, detail: "runs " + other, uninstall: []string{"TaskStart", "TaskResume", "TaskComplete", "TaskCancel"}},
		{name: "edited after install", tool: "pi",
			setup: func(tg Target, _ specs.Capability, m *modeMem) {
				p := put(tg, "", string(renderWhole(tg, exe, ""))+"// mine\n", m)
				m.files[recordPath], _ = json.Marshal(Record{Files: map[string]string{p: digest(renderWhole(tg, exe, ""))}})
			},
			installErr: "is not the file carryover writes", state: StateDrifted, warn: "changed since carryover wrote it"},
		{name: "an older template, recognised by its recorded digest", tool: "pi",
			setup: func(tg Target, _ specs.Capability, m *modeMem) {
				old := "// carryover 0.1's extension\n"
				p := put(tg, "", old, m)
				m.files[recordPath], _ = json.Marshal(Record{Files: map[string]string{p: digest([]byte(old))}})
			},
			state: StateDrifted, detail: "another carryover version", uninstall: []string{""}},
		{name: "not executable", tool: "cline",
			setup: func(tg Target, c specs.Capability, m *modeMem) {
				for _, ev := range hookNames(c) {
					m.modes[put(tg, ev, string(renderWhole(tg, exe, ev)), m)] = 0o644
				}
			},
			state: StateDrifted, detail: "lacks mode 0755", uninstall: []string{"TaskStart", "TaskResume", "TaskComplete", "TaskCancel"}},
		{name: "one file missing", tool: "cline",
			setup: func(tg Target, c specs.Capability, m *modeMem) {
				for _, ev := range hookNames(c)[1:] {
					put(tg, ev, string(renderWhole(tg, exe, ev)), m)
				}
			},
			state: StateDrifted, detail: "missing /home/u/.cline/hooks/TaskStart", uninstall: []string{"TaskResume", "TaskComplete", "TaskCancel"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg := wholeTarget(t, c.tool)
			capab := capFor(t, c.tool, wholeVersions[c.tool])
			m := newModeMem()
			c.setup(tg, capab, m)
			before := map[string][]byte{}
			for p, b := range m.files {
				before[p] = b
			}
			st, err := Check(tg, capab, exe, m)
			if err != nil || st.State != c.state || !strings.Contains(st.Detail, c.detail) {
				t.Errorf("Check = %+v, %v; want %s with %q", st, err, c.state, c.detail)
			}
			plans, err := PlanInstall(tg, capab, exe, m)
			switch {
			case c.installErr != "" && (err == nil || !strings.Contains(err.Error(), c.installErr)):
				t.Errorf("PlanInstall err = %v; want %q", err, c.installErr)
			case c.installErr == "" && err != nil:
				t.Errorf("PlanInstall: %v", err)
			case c.installErr == "":
				var mm = &modeMem{&memFS{files: map[string][]byte{}}, map[string]os.FileMode{}}
				for p, b := range m.files {
					mm.files[p], mm.modes[p] = b, m.modes[p]
				}
				apply(t, plans, mm)
				if st, _ := Check(tg, capab, exe, mm); st.State != StatePresent {
					t.Errorf("after install: %+v; want present", st)
				}
			}
			un, err := PlanUninstall(tg, exe, m)
			if err != nil {
				t.Fatal(err)
			}
			var warns []string
			for _, p := range un {
				warns = append(warns, p.Warnings...)
			}
			if c.warn != "" && !strings.Contains(strings.Join(warns, "\n"), c.warn) {
				t.Errorf("uninstall warnings %q; want %q", warns, c.warn)
			}
			apply(t, un, m)
			var deleted []string
			for p := range before {
				if _, ok := m.files[p]; !ok {
					deleted = append(deleted, p)
				} else if !bytes.Equal(m.files[p], before[p]) && p != recordPath {
					t.Errorf("uninstall changed %s", p)
				}
			}
			var want []string
			for _, ev := range c.uninstall {
				want = append(want, tg.wholeFiles([]string{ev})[0].path)
			}
			slices.Sort(deleted)
			slices.Sort(want)
			if !slices.Equal(deleted, want) {
				t.Errorf("uninstall deleted %v; want %v", deleted, want)
			}
		})
	}
}

// TestWholeStaleEvents: a version hooking fewer events deletes carryover's
// files for the others, and only those.
func TestWholeStaleEvents(t *testing.T) {
	tg := wholeTarget(t, "cline")
	full := capFor(t, "cline", "3.0.65")
	m := newModeMem()
	plans, err := PlanInstall(tg, full, exe, m)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, plans, m)
	mine := tg.wholeFiles([]string{"PreToolUse"})[0].path
	m.files[mine] = []byte("#!/bin/sh\n")
	fewer := full
	fewer.SnapshotEvents = full.SnapshotEvents[:1]
	plans, err = PlanInstall(tg, fewer, exe, m)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, plans, m)
	var left []string
	for p := range m.files {
		if p != recordPath {
			left = append(left, filepath.Base(p))
		}
	}
	slices.Sort(left)
	if want := []string{"PreToolUse", fewer.SnapshotEvents[0].Native}; !slices.Equal(left, want) {
		t.Errorf("files after install with fewer events: %v; want %v", left, want)
	}
}

// TestWholeOSFS runs install and uninstall on the real file system: the
// hook files get their mode, the directories install created go again,
// and the record forgets the deleted files.
func TestWholeOSFS(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no execute bits")
	}
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".pi", "agent"), 0o755) // Pi's folder is there, extensions/ is not
	tab := table(t)
	for _, tool := range wholeTools(t) {
		tl, _ := tab.Tool(tool)
		tg := TargetFor(tl, "linux", func(string) string { return "" }, home, nil)
		tg.Record = filepath.Join(home, ".carryover", RecordFile)
		c := capFor(t, tool, wholeVersions[tool])
		plans, err := PlanInstall(tg, c, exe, OSFS{})
		if err != nil {
			t.Fatal(err)
		}
		if err := Apply(plans, OSFS{}); err != nil {
			t.Fatal(err)
		}
		for _, p := range plans {
			fi, err := os.Stat(p.Path)
			if err != nil || fi.Mode().Perm() != os.FileMode(tl.HookFile.Mode) {
				t.Errorf("%s: %v, mode %v; want %#o", p.Path, err, fi.Mode(), tl.HookFile.Mode)
			}
		}
		if st, err := Check(tg, c, exe, OSFS{}); err != nil || st.State != StatePresent {
			t.Errorf("%s: Check = %+v, %v", tool, st, err)
		}
		un, err := PlanUninstall(tg, exe, OSFS{})
		if err != nil {
			t.Fatal(err)
		}
		if err := Apply(un, OSFS{}); err != nil {
			t.Fatal(err)
		}
		if notes := Cleanup(un, OSFS{}, tg.Record); len(notes) > 0 {
			t.Errorf("cleanup notes: %v", notes)
		}
	}
	var left []string
	filepath.Walk(home, func(p string, _ os.FileInfo, _ error) error {
		left = append(left, strings.TrimPrefix(p, home))
		return nil
	})
	want := []string{"", "/.carryover", "/.carryover/" + RecordFile, "/.pi", "/.pi/agent"}
	if !slices.Equal(left, want) {
		t.Errorf("left after uninstall: %v; want %v", left, want)
	}
	var r Record
	b, _ := os.ReadFile(filepath.Join(home, ".carryover", RecordFile))
	if json.Unmarshal(b, &r); len(r.Files)+len(r.Dirs) > 0 {
		t.Errorf("record still lists %+v", r)
	}
}

// FuzzParseWhole: a rendered file parses back to the (UTF-8) path it was
// rendered for (install refuses any other), and any other content is carryover's only when it is byte for byte
// the rendering of the path it names.
func FuzzParseWhole(f *testing.F) {
	f.Add("/opt/carryover/bin/carryover", []byte("#!/bin/sh\nexec \"/x\" snapshot --tool cline --event TaskStart\n"))
	f.Add(`/home/o'neil/bin/carry"over`, []byte("const CARRYOVER = \"/a\\\"b\";"))
	f.Add("/tmp/$HOME/`x`\\ y", []byte{})
	tab, err := specs.Load()
	if err != nil {
		f.Fatal(err)
	}
	var targets []Target
	for _, tl := range tab.Tools() {
		if tl.HookFile.Whole() {
			targets = append(targets, TargetFor(tl, "linux", nil, "/home/u", nil))
		}
	}
	f.Fuzz(func(t *testing.T, path string, content []byte) {
		for _, tg := range targets {
			ev := ""
			if tg.perEvent() {
				ev = tg.Events[0]
			}
			if checkExe(path) == nil && utf8.ValidString(path) {
				got, ok := parseWhole(tg, ev, renderWhole(tg, path, ev))
				if !ok || got != path {
					t.Errorf("%s: rendered for %q parses as %q, %v", tg.Tool, path, got, ok)
				}
			}
			if got, ok := parseWhole(tg, ev, content); ok && !bytes.Equal(renderWhole(tg, got, ev), content) {
				t.Errorf("%s: %q recognised as carryover's for %q", tg.Tool, content, got)
			}
		}
	})
}
