package cmd

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestListJSON lists the fixture stores of all four agents through the
// command: newest first, limit, source filter, short ids.
func TestListJSON(t *testing.T) {
	home, _ := filepath.Abs("../testdata/stores/home")
	e, out, _ := manualEnv(t, map[string]string{"HOME": home}, nil)
	if err := runList(e, "", "", true, 0, true); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Sessions []listEntry `json:"sessions"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	got := doc.Sessions
	agents := map[string]bool{}
	for i, s := range got {
		agents[s.Tool] = true
		if len(s.ShortID) < 8 || len(s.ShortID) > 12 || !strings.HasPrefix(s.ID, s.ShortID) {
			t.Errorf("short id %q of %q", s.ShortID, s.ID)
		}
		if i > 0 && s.LastActive.After(got[i-1].LastActive) {
			t.Errorf("not newest first at %d", i)
		}
	}
	if len(got) != 7 || len(agents) != 4 {
		t.Errorf("%d sessions of %d agents", len(got), len(agents))
	}
	out.Reset()
	if err := runList(e, "copilot-cli", "", true, 1, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "copilot-cli  e50d4665-4b9") {
		t.Errorf("table:\n%s", out)
	}
	if err := runList(e, "notanagent", "", true, 1, false); err == nil {
		t.Error("unknown --source accepted")
	}
}
