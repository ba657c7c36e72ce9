package e2e

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// The -record test flag makes the smoke tests copy transcripts and hook
// payloads into testdata/recorded/<tool>/. Several files of this package use
// it, so each defines it only if nobody has yet and reads it via flag.Lookup.
var _ = ccDefineRecordFlag()

func ccDefineRecordFlag() bool {
	if flag.Lookup("record") == nil {
		flag.Bool("record", false, "copy real agent transcripts and hook payloads into testdata/recorded/")
	}
	return true
}

// ccRecording reports whether the test run was started with -record.
func ccRecording() bool {
	f := flag.Lookup("record")
	return f != nil && f.Value.String() == "true"
}

// ccRecordedDir is testdata/recorded/<tool> at the repository root.
func ccRecordedDir(t *testing.T, tool string) string {
	t.Helper()
	d := filepath.Join("..", "..", "testdata", "recorded", tool)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

var ccNonAlnum = regexp.MustCompile(`[^A-Za-z0-9]`)

// ccStabilize replaces the test's temp root (and its Claude-style slug) with
// /tmp/e2e so recordings do not change from run to run because of paths.
func ccStabilize(b []byte, root string) []byte {
	b = bytes.ReplaceAll(b, []byte(root), []byte("/tmp/e2e"))
	return bytes.ReplaceAll(b, []byte(ccNonAlnum.ReplaceAllString(root, "-")), []byte("-tmp-e2e"))
}

// ccRecordFile copies src to testdata/recorded/<tool>/name with stable paths.
func ccRecordFile(t *testing.T, tool, root, src, name string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatalf("record %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(ccRecordedDir(t, tool), name), ccStabilize(b, root), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ccRecordBytes writes b to testdata/recorded/<tool>/name with stable paths.
func ccRecordBytes(t *testing.T, tool, root string, b []byte, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(ccRecordedDir(t, tool), name), ccStabilize(b, root), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ccRecordReadme writes testdata/recorded/<tool>/README.md.
func ccRecordReadme(t *testing.T, tool, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(ccRecordedDir(t, tool), "README.md"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

const ccClaudeReadme = `# Recorded Claude Code 2.1.197 sessions (real CLI, fake model)

Produced by ` + "`go test ./cmd/e2e -run TestClaudeSmoke -record`" + ` (cmd/e2e/kit_claude_smoke_check_test.go).
The pinned ` + "`@anthropic-ai/claude-code`" + ` ran headless (` + "`claude -p … --dangerously-skip-permissions`" + `,
IS_SANDBOX=1, ANTHROPIC_API_KEY=sk-test, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1) against the e2e kit's fake
Anthropic Messages API on 127.0.0.1 (NewAnthropic), in a temp HOME and a temp git repo. The model turns are scripted
in the test; Claude Code really ran every tool. Hooks in ~/.claude/settings.json appended each stdin payload to a log;
the SessionStart hook also printed an additionalContext JSON carrying MARKER-123.

The test's temp root is replaced by /tmp/e2e (and its path slug by -tmp-e2e); nothing else is edited. Session ids,
uuids and timestamps change on every recording.

| File | What |
|---|---|
| session-tools.jsonl | the transcript after ` + "`claude -p \"Add a retry helper in retry.py and run the tests\"`" + `: Write retry.py, Edit it, a failing Bash (` + "`ls tests/ && python3 -m unittest`" + `, exit 2, is_error), a decision sentence, and the final "Next I will add the retry test." |
| session-resumed.jsonl | the same file after ` + "`claude -p \"Now add the retry test file\" --resume <id>`" + ` (Write tests/test_retry.py) |
| session-compact.jsonl | the same file after ` + "`claude -p /compact --resume <id>`" + ` (compact_boundary + isCompactSummary) |
| hook-payloads.jsonl | every hook stdin payload of the three runs, in order (SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PostToolUseFailure, Stop, SessionEnd, PreCompact, PostCompact) |
`

const ccCodexReadme = `# Recorded Codex CLI 0.169.0 sessions (real CLI, fake model)

Produced by ` + "`go test ./cmd/e2e -run TestCodexSmoke -record`" + ` (cmd/e2e/kit_codex_smoke_check_test.go).
The pinned ` + "`@openai/codex`" + ` ran ` + "`codex exec --skip-git-repo-check -s danger-full-access`" + ` against the e2e kit's
fake Responses API on 127.0.0.1 (NewResponses) as model_provider "fake" (model gpt-5.5, wire_api responses,
OPENAI_API_KEY=sk-test), in a temp HOME (CODEX_HOME=$HOME/.codex) and a temp git repo. Hooks for all 14 events were in
~/.codex/hooks.json and pre-trusted with [hooks.state] trusted_hash entries in config.toml (computed by
CodexTrustHash), so they ran in codex exec without --dangerously-bypass-hook-trust. Each hook appended its stdin
payload to a log; the SessionStart hook also printed an additionalContext JSON carrying MARKER-123.

The test's temp root is replaced by /tmp/e2e; nothing else is edited (rollouts are not trimmed, so base instructions
are included in full). Thread ids, turn ids and timestamps change on every recording.

| File | What |
|---|---|
| session-tools.jsonl | the rollout after ` + "`codex exec \"Add a retry helper in retry.py and run the tests\"`" + `: apply_patch add retry.py, apply_patch update, a failing exec_command (` + "`ls tests/ && python3 -m unittest`" + `, exit 2), a decision sentence, the final "Next I will add the retry test." |
| session-resumed.jsonl | the same file after ` + "`codex exec resume --last \"Now add the retry test file\"`" + ` (apply_patch add tests/test_retry.py) |
| session-compact.jsonl | the same file after ` + "`codex exec -c model_auto_compact_token_limit=20000 resume --last \"run two steps\"`" + ` where the fake reported 30000 input tokens: automatic compaction (compacted line, ContextCompaction item, SessionStart source compact) |
| hook-payloads.jsonl | every hook stdin payload of the three runs, in order |
`
