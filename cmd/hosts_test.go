package cmd

import "testing"

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
		if got := foreignHost(c.tool, c.getenv) != ""; got != c.foreign {
			t.Errorf("%s: foreign = %v", c.tool, got)
		}
	}
}
