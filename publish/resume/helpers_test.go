package resume

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

func itoa(n int) string     { return strconv.Itoa(n) }
func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

func mustBuild(t *testing.T, s Session, o Options) Result {
	t.Helper()
	r, err := Build(s, o)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return r
}

// fixtureSession is a deterministic, realistically shaped session: enough
// conversation (about 30k tokens) that the smaller targets must truncate.
func fixtureSession() Session {
	at := time.Date(2026, 11, 21, 8, 51, 0, 0, time.UTC)
	s := Session{
		Version:    Version,
		Source:     "claude",
		CapturedAt: at,
		SessionID:  "6f1c2a9e-8d7b-4c3a-9e21-0b5d7c4f3a10",
		Project: Project{
			Path:               "/home/dev/src/retry-lib",
			Name:               "retry-lib",
			GitBranch:          "feature/backoff",
			GitStatus:          " M retry.py\n?? backoff.py\n M tests/test_retry.py",
			GitLog:             []string{"1522561 add retry helper", "0a1b2c3 initial commit"},
			Structure:          "retry-lib/\n├── backoff.py\n├── retry.py\n├── README.md\n└── tests/\n    └── test_retry.py",
			MemoryFileContents: "# CLAUDE.md\nUse pytest. Keep functions small. Never sleep in tests; inject a clock.",
		},
		Decisions: []string{
			"We decided to use full jitter instead of equal jitter, because it spreads retries best.",
			"We will inject the sleep function instead of monkeypatching time.sleep in tests.",
		},
		Blockers:  []string{"`pytest -q` → exit 1: AssertionError: expected 42 (×2)"},
		Questions: []string{"Should max_delay be configurable per call?"},
		Test:      "pytest -q",
		Tokens:    &Tokens{Used: 151000, Max: 200000},
		Task: Task{
			Description: "Add exponential backoff with jitter to retry() in retry.py and make the test suite pass.",
			Completed:   []string{"edited retry.py", "created backoff.py", "ran `pytest -q tests/test_backoff.py`"},
			InProgress:  "Fix test_retry_gives_up: retry() must re-raise the last exception after max attempts.",
			Remaining:   []string{"add a max_delay cap", "document the new parameters in README.md"},
			Blockers:    []string{"unresolved: `pytest -q` — AssertionError: expected 42"},
		},
		FilesChanged: []FileChange{
			{Path: "backoff.py", ChangeType: "created", Language: "python", Diff: "import random\n\n\ndef backoff(attempt, base=0.1, cap=5.0):\n    return random.uniform(0, min(cap, base * 2 ** attempt))\n"},
			{Path: "retry.py", ChangeType: "modified", Diff: "diff --git a/retry.py b/retry.py\n--- a/retry.py\n+++ b/retry.py\n@@ -1,5 +1,12 @@\n-def retry(fn, attempts=3):\n+def retry(fn, attempts=3, sleep=time.sleep):\n" + strings.Repeat("+    # keep trying\n", 150)},
		},
	}
	for i := 0; i < 120; i++ {
		ts := at.Add(time.Duration(i-120) * time.Minute).Format(time.RFC3339)
		s.Conversation.Messages = append(s.Conversation.Messages,
			Message{Role: "user", Content: fmt.Sprintf("Step %d: run the retry tests again and look at the failure in test_retry_gives_up; the assertion says expected 42 but got 41.", i), Timestamp: ts},
			Message{Role: "assistant", Content: fmt.Sprintf("Running the tests (attempt %d). The failure comes from the off-by-one in the attempt counter: `for attempt in range(1, attempts)` skips the last try. ", i) + strings.Repeat("I will change the loop bound and re-run pytest. ", 4), Timestamp: ts},
			Message{Role: "tool", ToolName: "Bash", Content: fmt.Sprintf("$ pytest -q\nF.. [100%%]\nFAILED tests/test_retry.py::test_retry_gives_up - AssertionError: expected 42\n1 failed, 2 passed in 0.0%ds", i%10), Timestamp: ts},
		)
	}
	s.Normalize()
	return s
}
