package e2e

import "testing"

// Expected values are the trusted_hash entries Codex 0.169.0 itself accepted
// (samples/codex/config.toml, verified against app-server hooks/list).
func TestCodexTrustHash(t *testing.T) {
	intp := func(i int) *int { return &i }
	for _, tc := range []struct {
		event, command string
		timeout        *int
		want           string
	}{
		{"SessionStart", "/home/dev-b/bin/hooklog.py SessionStart", intp(30), "sha256:bb1e9a0f58ea85c52907e58b8547182197b00bedf85738c2df6ad755c69d7cae"},
		{"SessionEnd", "/home/dev-b/bin/hooklog.py SessionEnd", intp(3), "sha256:fdf772d1211cfea16dacbdef9cbb6af433381f1c8e0020b4c19ced5baa90693d"},
		{"Stop", "/home/dev-b/bin/hooklog.py Stop", intp(30), "sha256:4745211399a10082f075b2368d2d7e5dec4fc81e1be27bd90fead7527d496f33"},
		{"PreCompact", "/home/dev-b/bin/hooklog.py PreCompact", intp(30), "sha256:923010fbd829285e23ef02b3fd4d405cf56ed55bb86476cd28247385864d632e"},
		{"Interrupt", "/home/dev-b/bin/hooklog.py Interrupt", intp(3), "sha256:feeba2e182de5dc9423d47d4c9f5acb0910f799a899f7eeffc855ad5745dfa1b"},
	} {
		got, err := CodexTrustHash(tc.event, nil, CodexHandler{Command: tc.command, Timeout: tc.timeout})
		if err != nil || got != tc.want {
			t.Errorf("%s: got %s, %v; want %s", tc.event, got, err, tc.want)
		}
	}
	if _, err := CodexTrustHash("Nope", nil, CodexHandler{}); err == nil {
		t.Error("unknown event: want error")
	}
	if k := CodexTrustKey("/h/.codex/hooks.json", "SessionStart", 0, 1); k != "/h/.codex/hooks.json:session_start:0:1" {
		t.Errorf("key = %s", k)
	}
}
