package adapters_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryover/carryover/adapters"
)

func TestForeignHost(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	cases := []struct {
		tool    string
		getenv  func(string) string
		foreign bool
	}{
		{"claude", env(), false},
		{"claude", env("CURSOR_VERSION", "2.4.1"), true},
		{"vscode-copilot", env("COPILOT_CLI", "1"), true},
		{"vscode-copilot", env("VSCODE_PID", "1"), false},
		{"copilot-cli", env("COPILOT_CLI", "1", "TERM_PROGRAM", "vscode"), false},
		{"copilot-cli", env("VSCODE_PID", "12"), true},
		{"cursor", env("CURSOR_VERSION", "2.4.1"), false},
	}
	for _, c := range cases {
		a, _ := adapters.ByName(c.tool)
		got := a.ForeignHost != nil && a.ForeignHost(c.getenv) != ""
		if got != c.foreign {
			t.Errorf("%s: foreign = %v", c.tool, got)
		}
	}
}

// TestAll: names and aliases are unique, every descriptor names its adapter,
// has a display name and envelope, and no event is listed twice.
func TestAll(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range adapters.All {
		for _, n := range append([]string{a.Name}, a.Aliases...) {
			if seen[n] {
				t.Errorf("name or alias %q is used twice in adapters.All", n)
			}
			seen[n] = true
		}
		if a.Adapter == nil || a.Adapter.Name() != a.Name {
			t.Errorf("%s: descriptor's Adapter is missing or named otherwise", a.Name)
		}
		if a.Display == "" || !containsEnvelope(a.Envelope) {
			t.Errorf("%s: display name %q, envelope %q", a.Name, a.Display, a.Envelope)
		}
		lower := map[string]bool{}
		for ev := range a.Events {
			if lower[strings.ToLower(ev)] {
				t.Errorf("%s: event %s listed twice", a.Name, ev)
			}
			lower[strings.ToLower(ev)] = true
		}
		if (a.Envelope != adapters.EnvelopeNone) != (a.Class("SessionStart") == adapters.ClassStart) && a.Name != "windsurf" {
			t.Errorf("%s: an agent with an injection envelope needs a start event", a.Name)
		}
	}
}

func containsEnvelope(e adapters.Envelope) bool {
	for _, x := range adapters.Envelopes {
		if x == e {
			return true
		}
	}
	return false
}

// TestSniff: every transcript fixture is recognised as its own agent's,
// and only as that.
func TestSniff(t *testing.T) {
	for _, a := range adapters.All {
		if a.Sniff == nil {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(fixtureDir, a.Name, "*.jsonl"))
		if a.Name == "aider" {
			files, _ = filepath.Glob(filepath.Join(fixtureDir, a.Name, "*", ".aider.chat.history.md"))
		}
		if a.Name == "cline" {
			// one JSON document per session, rewritten whole
			files, _ = filepath.Glob(filepath.Join(fixtureDir, a.Name, "*", "*.messages.json"))
		}
		if a.Name == "opencode" {
			// its database is found by path; `opencode export` documents are sniffed
			files, _ = filepath.Glob(filepath.Join(fixtureDir, a.Name, "*", "export.json"))
		}
		if a.Name == "vscode-copilot" {
			// Its transcripts are Copilot CLI's vocabulary (read as that);
			// its stores are its own, in chatSessions/ or exported anywhere.
			files, _ = filepath.Glob(filepath.Join(fixtureDir, a.Name, "*", "workspaceStorage", "*", "chatSessions", "*.json*"))
			exports, _ := filepath.Glob(filepath.Join(fixtureDir, a.Name, "exports", "*.json"))
			files = append(files, exports...)
		}
		if a.Name == "crush" {
			// its database (SQL text, built here) is recognised by its schema
			scripts, _ := filepath.Glob(filepath.Join(fixtureDir, a.Name, "*", "*.sql"))
			for _, s := range scripts {
				files = append(files, BuildSQLite(t, s))
			}
		}
		if len(files) == 0 {
			t.Errorf("%s has a Sniff but no transcript fixtures", a.Name)
		}
		for _, f := range files {
			if strings.Contains(f, ".sidechain.") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) > 64<<10 {
				b = b[:64<<10]
			}
			if got := adapters.SniffTranscript(b); got != a.Name && !sniffExempt[filepath.Base(f)] {
				t.Errorf("%s: sniffed as %q, want %s", f, got, a.Name)
			}
		}
	}
}

// sniffExempt are fixtures that are deliberately not whole transcripts.
var sniffExempt = map[string]bool{}

// TestCheckAgents: the table's rules hold for All, and a table that breaks
// one is refused when it loads (adapters' init panics with the reason).
func TestCheckAgents(t *testing.T) {
	if err := adapters.CheckAgents(adapters.All); err != nil {
		t.Fatal(err)
	}
	claude, _ := adapters.ByName("claude")
	noLister := *claude
	noLister.Lister = nil
	dup := *claude
	dup.Name, dup.Aliases = "claude-twin", []string{"claude"}
	for name, table := range map[string][]*adapters.Agent{
		"a sniffing, reading agent without a lister": {&noLister},
		"an alias used twice":                        {claude, &dup},
		"no display name":                            {{Name: "x", Adapter: claude.Adapter}},
	} {
		if err := adapters.CheckAgents(table); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := adapters.CheckAgents([]*adapters.Agent{&noLister}); err == nil || !strings.Contains(err.Error(), "Lister") {
		t.Errorf("the error does not say a lister is needed: %v", err)
	}
}
