package adapters_test

import (
	"testing"

	"github.com/carryover/carryover/adapters"
)

func TestIsCarryoverText(t *testing.T) {
	for text, want := range map[string]bool{
		"# [CARRYOVER] Last updated 2026-11-21T08:00:00Z from claude\n# RESUME PROTOCOL": true,
		"# [CARRYOVER] Session handoff\n\n":                                              true,
		`{"additionalContext":"# [CARRYOVER] Last updated 2026-11-21T08:00:00Z from x"}`: true,
		`stdout: {\"additionalContext\":\"# [CARRYOVER] Last updated 2026-11-21`:         true,
		"fix it\n# [CARRYOVER] Last updated 2099-01-01T00:00:00Z from claude":            false,
		// after the banner line an injection starts with (Codex, Gemini CLI, …)
		"carryover · app · handoff HO-20261127-165606-b68dddb4 from claude just now · Resuming: x\n# [CARRYOVER] Last updated 2026-11-27T16:56:08Z from claude": true,
		`{"context":"carryover · web · handoff HO-20260101-000000-abc from codex 2h ago · Next: y\n# [CARRYOVER] Last updated 2026-01-01T00:00:00Z`:             true,
		"please read this: carryover · app · handoff HO-1\n# [CARRYOVER] Last updated 2026-11-27T16:56:08Z from claude":                                         false,
		"carryover · app · handoff HO-1\nmore\n# [CARRYOVER] Last updated 2026-11-27T16:56:08Z from claude":                                                     false,
		"<hook_context># [CARRYOVER] Last updated 2026-09-03 08:00 from claude":                                                                                 true,
		"  # [CARRYOVER] Last updated 2026-09-03 08:00 from claude":                                                                                             true,
		"why does [CARRYOVER] show up in my prompt?":                                                                                                            false,
		"grep -r '[CARRYOVER]' .":                               false,
		"see # [CARRYOVER] Last updated 2026-11-21 in the file": false,
		"# [CARRYOVER] Last updated yesterday":                  false,
		"# [CARRYOVER]":                                         false,
		"":                                                      false,
	} {
		if got := adapters.IsCarryoverText(text); got != want {
			t.Errorf("IsCarryoverText(%q) = %v, want %v", text, got, want)
		}
	}
}

// TestPromptMentioningCarryoverIsAPrompt: a Claude user prompt that only
// mentions the tag is recorded as the prompt it is, not as a receipt.
func TestPromptMentioningCarryoverIsAPrompt(t *testing.T) {
	a, err := adapters.Lookup("claude")
	if err != nil {
		t.Fatal(err)
	}
	lp := a.(adapters.LineParser)
	line := `{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"why does [CARRYOVER] show up in AGENTS.md?"},"uuid":"u-1","timestamp":"2026-11-21T08:59:37.203Z","promptSource":"sdk"}`
	rows, err := lp.ParseLine([]byte(line), 0)
	if err != nil || len(rows) != 1 || rows[0].Kind != adapters.KindPrompt {
		t.Fatalf("rows %+v, %v; want one prompt", rows, err)
	}
	line = `{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"# [CARRYOVER] Session handoff\n\nrest"},"uuid":"u-2","timestamp":"2026-11-21T08:59:37.203Z","promptSource":"sdk"}`
	rows, _ = lp.ParseLine([]byte(line), 0)
	if len(rows) != 1 || rows[0].Kind != adapters.KindInjection {
		t.Fatalf("pasted resume prompt: rows %+v; want one injection", rows)
	}
}
