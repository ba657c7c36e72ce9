package adapters_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryover/carryover/adapters"
)

func codexLP(t testing.TB) adapters.LineParser {
	t.Helper()
	lp, ok := adapters.Codex.(adapters.LineParser)
	if !ok {
		t.Fatal("codex adapter is not a LineParser")
	}
	return lp
}

const codexHandoff = `# [CARRYOVER] Last updated 2026-11-21T08:00:00Z from claude\n\n## Task\nAdd retry`

// codexItem wraps a response_item payload in a rollout line.
func codexItem(payload string) string {
	return `{"timestamp":"2026-11-21T08:51:29.800Z","ordinal":8,"type":"response_item","payload":` + payload + `}`
}

func codexEvent(payload string) string {
	return `{"timestamp":"2026-11-21T08:51:29.800Z","ordinal":9,"type":"event_msg","payload":` + payload + `}`
}

func codexMsg(role, kinds, text string) string {
	meta := ""
	if kinds != "" {
		meta = `,"internal_chat_message_metadata_passthrough":{"content_item_kinds":[` + kinds + `]}`
	}
	return codexItem(`{"type":"message","role":"` + role + `","content":[{"type":"input_text","text":"` + text + `"}]` + meta + `}`)
}

func TestCodexParseLine(t *testing.T) {
	lp := codexLP(t)
	type want struct {
		kind             adapters.Kind
		key, text, cmd   string
		file, tool, call string
		exit             int // -99: no exit code
		used, max        int64
		textContains     string
	}
	none := -99
	cases := []struct {
		name string
		line string
		want []want
	}{
		{"real prompt", codexMsg("user", `"user.text"`, "Add a retry helper"),
			[]want{{kind: adapters.KindPrompt, key: "prompt:2026-11-21T08:51:29.8Z:210af0a25fd1aaef", text: "Add a retry helper", exit: none}}},
		{"AGENTS.md and environment are not prompts",
			codexItem(`{"type":"message","role":"user","content":[{"type":"input_text","text":"# AGENTS.md instructions for /p\n\n<INSTRUCTIONS>x</INSTRUCTIONS>"},{"type":"input_text","text":"<environment_context><cwd>/p</cwd></environment_context>"}],"internal_chat_message_metadata_passthrough":{"content_item_kinds":["agents_md.instructions","environments.environment_context"]}}`),
			nil},
		{"carryover in AGENTS.md is not a receipt", codexMsg("user", `"agents_md.instructions"`, codexHandoff), nil},
		{"carryover's own additional context is an injection", codexMsg("developer", `"hooks.additional_context"`, codexHandoff),
			[]want{{kind: adapters.KindInjection, text: "# [CARRYOVER] Last updated 2026-11-21T08:00:00Z from claude", exit: none}}},
		{"another hook's additional context is skipped", codexMsg("developer", `"hooks.additional_context"`, "[carryover] lowercase is someone else"), nil},
		{"developer instructions skipped", codexMsg("developer", `"permissions.instructions"`, "<permissions instructions>x"), nil},
		{"stop hook prompt skipped", codexMsg("user", `"unknown"`, `<hook_prompt hook_run_id=\"stop:1\">go on</hook_prompt>`), nil},
		{"turn aborted skipped", codexMsg("user", `"generic.turn_aborted"`, "<turn_aborted>x</turn_aborted>"), nil},
		{"legacy prompt without kinds", codexMsg("user", "", "Fix the parser"),
			[]want{{kind: adapters.KindPrompt, text: "Fix the parser", exit: none}}},
		{"legacy environment without kinds", codexMsg("user", "", "<environment_context><cwd>/p</cwd></environment_context>"), nil},
		{"legacy AGENTS.md without kinds", codexMsg("user", "", "# AGENTS.md instructions for /p"), nil},
		{"user prompt echo in event_msg is not double counted",
			codexEvent(`{"type":"item_completed","item":{"type":"UserMessage","id":"u1","content":[{"type":"text","text":"Add a retry helper"}]}}`), nil},
		// The same key as the response_item copy: the ledger keeps one row;
		// versions that write only this event still yield the prompt.
		{"legacy user_message event shares the prompt's key", codexEvent(`{"type":"user_message","message":"Add a retry helper"}`),
			[]want{{kind: adapters.KindPrompt, key: "prompt:2026-11-21T08:51:29.8Z:210af0a25fd1aaef", text: "Add a retry helper", exit: none}}},
		// agent_message and its response_item copy share a key (one ledger row, ~100 ms apart); a message written only
		// as the event (an aborted turn's last words) is still read.
		{"agent_message event shares the assistant text's key", codexEvent(`{"type":"agent_message","message":"I'll add it.","phase":"commentary"}`),
			[]want{{kind: adapters.KindText, key: "say:2026-11-21T08:51:29Z:46e563ad8867d23b", text: "I'll add it.", exit: none}}},
		{"assistant text", codexItem(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"I'll add it."}]}`),
			[]want{{kind: adapters.KindText, key: "say:2026-11-21T08:51:29Z:46e563ad8867d23b", text: "I'll add it.", exit: none}}},
		{"agent_message without a time is skipped", `{"type":"event_msg","payload":{"type":"agent_message","message":"done"}}`, nil},
		{"assistant quoting the handoff is still text", codexItem(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"I read [CARRYOVER]."}]}`),
			[]want{{kind: adapters.KindText, text: "I read [CARRYOVER].", exit: none}}},
		{"compaction summary output is not the answer",
			`{"timestamp":"2026-11-21T08:51:47.185Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"HANDOFF SUMMARY"}]},"metadata":{"compaction_output":true}}`, nil},
		{"exec_command call", codexItem(`{"type":"function_call","name":"exec_command","arguments":"{\"cmd\": \"pytest -q\", \"yield_time_ms\": 5000}","call_id":"call_9"}`),
			[]want{{kind: adapters.KindToolCall, key: "call:call_9", tool: "exec_command", call: "call_9", cmd: "pytest -q", exit: none}}},
		{"arguments as an object", codexItem(`{"type":"function_call","name":"exec_command","arguments":{"cmd":"ls"},"call_id":"c0"}`),
			[]want{{kind: adapters.KindToolCall, key: "call:c0", tool: "exec_command", call: "c0", cmd: "ls", exit: none}}},
		{"local_shell_call", codexItem(`{"type":"local_shell_call","call_id":"c7","action":{"type":"exec","command":["bash","-lc","go test ./..."]}}`),
			[]want{{kind: adapters.KindToolCall, key: "call:c7", tool: "local_shell", call: "c7", cmd: "go test ./...", exit: none}}},
		{"legacy shell argv call", codexItem(`{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"make test\"]}","call_id":"c1"}`),
			[]want{{kind: adapters.KindToolCall, tool: "shell", call: "c1", cmd: "make test", exit: none}}},
		{"heredoc apply_patch through the shell", codexItem(`{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"apply_patch <<'EOF'\\n*** Begin Patch\\n*** Add File: a.py\\n+x = 1\\n*** End Patch\\nEOF\"]}","call_id":"c2"}`),
			[]want{{kind: adapters.KindToolCall, tool: "apply_patch", call: "c2", file: "a.py", textContains: "x = 1", exit: none}}},
		{"apply_patch one row per file",
			codexItem(`{"type":"custom_tool_call","call_id":"call_4","name":"apply_patch","input":"*** Begin Patch\n*** Add File: retry.py\n+def retry():\n+    pass  # TODO: backoff\n*** Update File: util.py\n@@\n-old = 1\n+new = 2\n*** Move to: lib/util.py\n*** Delete File: gone.py\n*** End Patch\n"}`),
			[]want{
				{kind: adapters.KindToolCall, key: "call:call_4", tool: "apply_patch", call: "call_4", file: "retry.py", textContains: "TODO: backoff", exit: none},
				{kind: adapters.KindToolCall, key: "call:call_4#1", tool: "apply_patch", call: "call_4", file: "lib/util.py", textContains: "new = 2", exit: none},
				{kind: adapters.KindToolCall, key: "call:call_4#2", tool: "apply_patch", call: "call_4", file: "gone.py", textContains: "*** Delete File: gone.py", exit: none},
			}},
		{"shell success", codexItem(`{"type":"function_call_output","call_id":"call_8","output":"Chunk ID: ca\nWall time: 0.0 seconds\nProcess exited with code 0\nOriginal token count: 1\nOutput:\n42\n"}`),
			[]want{{kind: adapters.KindToolResult, key: "out:call_8", call: "call_8", text: "42\n", exit: 0}}},
		{"shell failure", codexItem(`{"type":"function_call_output","call_id":"call_10","output":"Chunk ID: ee\nWall time: 0.0 seconds\nProcess exited with code 1\nOriginal token count: 26\nOutput:\nAssertionError: expected 42\n"}`),
			[]want{{kind: adapters.KindError, key: "out:call_10", call: "call_10", text: "AssertionError: expected 42\n", exit: 1}}},
		{"exit code in program output does not count", codexItem(`{"type":"function_call_output","call_id":"c","output":"Chunk ID: 1\nProcess exited with code 0\nOutput:\nProcess exited with code 3\n"}`),
			[]want{{kind: adapters.KindToolResult, exit: 0}}},
		{"still running is not a failure", codexItem(`{"type":"function_call_output","call_id":"c","output":"Chunk ID: 1\nProcess running with session ID 7\nOutput:\nserver up\n"}`),
			[]want{{kind: adapters.KindToolResult, text: "server up\n", exit: none}}},
		{"legacy metadata exit_code", codexItem(`{"type":"function_call_output","call_id":"c3","output":"{\"output\":\"boom\\n\",\"metadata\":{\"exit_code\":2,\"duration_seconds\":0.1}}"}`),
			[]want{{kind: adapters.KindError, call: "c3", text: "boom\n", exit: 2}}},
		{"blocked by PreToolUse hook", codexItem(`{"type":"function_call_output","call_id":"c4","output":"Command blocked by PreToolUse hook: no. Command: rm -rf /"}`),
			[]want{{kind: adapters.KindError, call: "c4", textContains: "blocked", exit: none}}},
		{"rejected by approval policy", codexItem(`{"type":"function_call_output","call_id":"c5","output":"approval policy is Never; reject command"}`),
			[]want{{kind: adapters.KindError, call: "c5", exit: none}}},
		{"apply_patch success", codexItem(`{"type":"custom_tool_call_output","call_id":"call_4","output":"Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nA retry.py\n"}`),
			[]want{{kind: adapters.KindToolResult, key: "out:call_4", exit: 0, textContains: "A retry.py"}}},
		{"apply_patch failure", codexItem(`{"type":"custom_tool_call_output","call_id":"call_5","output":"Exit code: 1\nWall time: 0 seconds\nOutput:\nFailed to find context\n"}`),
			[]want{{kind: adapters.KindError, key: "out:call_5", exit: 1}}},
		{"output as content items", codexItem(`{"type":"function_call_output","call_id":"c6","output":[{"type":"input_text","text":"Process exited with code 0\nOutput:\nok"}]}`),
			[]want{{kind: adapters.KindToolResult, exit: 0, text: "ok"}}},
		{"token_count is usage with the window", codexEvent(`{"type":"token_count","info":{"total_token_usage":{"total_tokens":54850},"last_token_usage":{"total_tokens":11990},"model_context_window":258400}}`),
			[]want{{kind: adapters.KindUsage, used: 11990, max: 258400, exit: none}}},
		{"token_count without info", codexEvent(`{"type":"token_count","info":null,"rate_limits":{}}`), nil},
		{"api error event", codexEvent(`{"type":"error","message":"stream disconnected"}`),
			[]want{{kind: adapters.KindError, text: "stream disconnected", exit: none}}},
		{"compacted keeps only the summary",
			`{"timestamp":"2026-11-21T08:51:47.188Z","ordinal":24,"type":"compacted","payload":{"message":"Another language model started to solve this problem and produced a summary of its thinking process. Here is the summary produced by the other language model, use the information in this summary to assist with your own analysis:\nHANDOFF SUMMARY: ran steps","replacement_history":[{"type":"message","role":"user","content":[{"type":"input_text","text":"run two steps"}]}]}}`,
			[]want{{kind: adapters.KindCompaction, text: "HANDOFF SUMMARY: ran steps", exit: none}}},
		{"context compaction item is not a second compaction", codexEvent(`{"type":"item_completed","item":{"type":"ContextCompaction","id":"x"}}`), nil},
		{"task_complete carries no rows", codexEvent(`{"type":"task_complete","last_agent_message":"done"}`), nil},
		{"session_meta", `{"timestamp":"2026-11-21T08:51:29.450Z","ordinal":0,"type":"session_meta","payload":{"id":"x","forked_from_id":"y","history_base":{"end_byte_offset":100}}}`, nil},
		{"turn_context", `{"timestamp":"2026-11-21T08:51:29.450Z","ordinal":5,"type":"turn_context","payload":{"cwd":"/p"}}`, nil},
		{"reasoning", codexItem(`{"type":"reasoning","summary":[{"type":"summary_text","text":"thinking"}]}`), nil},
		{"unknown type", `{"type":"future_thing","payload":{"x":1}}`, nil},
		{"not json", `{"type":"response_item","payload":`, nil},
		{"payload not an object", `{"type":"response_item","payload":[1,2]}`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows, err := lp.ParseLine([]byte(c.line), 100)
			if err != nil {
				t.Fatalf("ParseLine: %v", err)
			}
			if len(rows) != len(c.want) {
				t.Fatalf("got %d rows, want %d: %+v", len(rows), len(c.want), rows)
			}
			for i, w := range c.want {
				r := rows[i]
				if r.Kind != w.kind {
					t.Errorf("row %d kind %q, want %q", i, r.Kind, w.kind)
				}
				if r.Key == "" || (w.key != "" && r.Key != w.key) {
					t.Errorf("row %d key %q, want %q", i, r.Key, w.key)
				}
				if w.text != "" && r.Text != w.text {
					t.Errorf("row %d text %q, want %q", i, r.Text, w.text)
				}
				if w.textContains != "" && !strings.Contains(r.Text, w.textContains) {
					t.Errorf("row %d text %q lacks %q", i, r.Text, w.textContains)
				}
				if r.Command != w.cmd {
					t.Errorf("row %d command %q, want %q", i, r.Command, w.cmd)
				}
				if r.FilePath != w.file {
					t.Errorf("row %d file %q, want %q", i, r.FilePath, w.file)
				}
				if w.tool != "" && r.ToolName != w.tool {
					t.Errorf("row %d tool %q, want %q", i, r.ToolName, w.tool)
				}
				if w.call != "" && r.CallID != w.call {
					t.Errorf("row %d call id %q, want %q", i, r.CallID, w.call)
				}
				if w.exit == none && r.ExitCode != nil {
					t.Errorf("row %d exit %d, want none", i, *r.ExitCode)
				}
				if w.exit != none && (r.ExitCode == nil || *r.ExitCode != w.exit) {
					t.Errorf("row %d exit %v, want %d", i, r.ExitCode, w.exit)
				}
				if r.TokensUsed != w.used || r.TokensMax != w.max {
					t.Errorf("row %d tokens %d/%d, want %d/%d", i, r.TokensUsed, r.TokensMax, w.used, w.max)
				}
				if r.Time.IsZero() && !strings.Contains(c.name, "unknown") {
					t.Errorf("row %d has no time", i)
				}
			}
		})
	}
}

// TestCodexRolloutStory checks what the distiller will see of the real
// tools rollout (turn 1 + `exec resume` appended to the same file).
func TestCodexRolloutStory(t *testing.T) {
	rows := ParseFile(t, codexLP(t), filepath.Join(fixtureDir, "codex", "rollout-tools.jsonl"))
	var prompts, files []string
	var fails []int
	calls := map[string]adapters.Row{}
	for _, r := range rows {
		switch r.Kind {
		case adapters.KindPrompt:
			prompts = append(prompts, r.Text)
		case adapters.KindToolCall:
			calls[r.CallID] = r
			if r.FilePath != "" {
				files = append(files, r.FilePath)
			}
		case adapters.KindError:
			c, ok := calls[r.CallID]
			if !ok || !strings.Contains(c.Command, "assert retry.retry(lambda: 41)") {
				t.Errorf("error row %q not paired with the failing command", r.Key)
			}
			fails = append(fails, *r.ExitCode)
		}
	}
	if want := []string{"Add a retry helper in retry.py and check it works.", "Now add the retry test."}; strings.Join(prompts, "|") != strings.Join(want, "|") {
		t.Errorf("prompts %q, want %q (AGENTS.md, environment and hook context must not count; the event_msg copy must not double)", prompts, want)
	}
	if strings.Join(files, ",") != "retry.py,retry.py,test_retry.py" {
		t.Errorf("files %q", files)
	}
	if len(fails) != 1 || fails[0] != 1 {
		t.Errorf("failures %v, want one with exit 1", fails)
	}
}

// TestCodexForkHasOnlyItsOwnHistory: a fork file references its parent by
// byte offset and must not produce the parent's prompts.
func TestCodexForkHasOnlyItsOwnHistory(t *testing.T) {
	rows := ParseFile(t, codexLP(t), filepath.Join(fixtureDir, "codex", "rollout-fork.jsonl"))
	var prompts []string
	for _, r := range rows {
		if r.Kind == adapters.KindPrompt {
			prompts = append(prompts, r.Text)
		}
	}
	if len(prompts) != 1 || prompts[0] != "fork check" {
		t.Errorf("fork prompts %q, want only \"fork check\"", prompts)
	}
}

func TestCodexCompactionFixture(t *testing.T) {
	rows := ParseFile(t, codexLP(t), filepath.Join(fixtureDir, "codex", "rollout-compact.jsonl"))
	var comp []string
	for _, r := range rows {
		if r.Kind == adapters.KindCompaction {
			comp = append(comp, r.Text)
		}
		if r.Kind == adapters.KindText && strings.HasPrefix(r.Text, "HANDOFF SUMMARY") {
			t.Error("compaction_output message recorded as assistant text")
		}
		if r.Kind == adapters.KindPrompt && r.Text != "run two steps" {
			t.Errorf("unexpected prompt %q (replacement history must not be re-read)", r.Text)
		}
	}
	if len(comp) != 2 || comp[0] != "HANDOFF SUMMARY: ran step-one and step-two; next add the retry test." {
		t.Errorf("compactions %q", comp)
	}
}

// TestCodexKeysUnique: every row of a rollout has its own key, so the
// ledger's upsert never folds two distinct events together.
func TestCodexKeysUnique(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(fixtureDir, "codex", "*.jsonl"))
	for _, f := range files {
		seen := map[string]bool{}
		for _, r := range ParseFile(t, codexLP(t), f) {
			if seen[r.Key] {
				t.Errorf("%s: duplicate key %q", filepath.Base(f), r.Key)
			}
			seen[r.Key] = true
		}
	}
}

func TestCodexHook(t *testing.T) {
	a := adapters.Codex
	env := adapters.Env{Getenv: func(string) string { return "" }}
	h, err := a.ParseHook("SessionStart", []byte(`{"session_id":"01a1fd4d-b021","transcript_path":"/h/.codex/sessions/r.jsonl","cwd":"/p","hook_event_name":"SessionStart","source":"resume","extra":{"x":1}}`), env)
	if err != nil {
		t.Fatal(err)
	}
	if h.Tool != "codex" || h.SessionID != "01a1fd4d-b021" || h.Cwd != "/p" || h.Source != "resume" || h.Event != "SessionStart" {
		t.Errorf("hook %+v", h)
	}
	ts := a.(adapters.LineParser).Transcripts(h, env)
	if len(ts) != 1 || ts[0].Path != "/h/.codex/sessions/r.jsonl" || ts[0].SessionID != h.SessionID {
		t.Errorf("transcripts %+v", ts)
	}
	h, err = a.ParseHook("", []byte(`{"session_id":"s1","transcript_path":null,"hook_event_name":"UserPromptSubmit","prompt":"hi"}`), env)
	if err != nil || h.Event != "UserPromptSubmit" || h.Prompt != "hi" || h.TranscriptPath != "" {
		t.Errorf("ephemeral hook %+v %v", h, err)
	}
	if ts := a.(adapters.LineParser).Transcripts(h, adapters.Env{Getenv: env.Getenv, Home: t.TempDir()}); ts != nil {
		t.Errorf("ephemeral session has transcripts %+v", ts)
	}
	if _, err := a.ParseHook("Stop", []byte(`not json {"secret"`), env); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("bad payload error %v", err)
	}
}

// TestCodexTranscriptLookup: without transcript_path the rollout is found
// by thread id under $CODEX_HOME/sessions.
func TestCodexTranscriptLookup(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "sessions", "2026", "11", "21")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sid := "01a1fd4d-b021-7fb2-8398-fa776910c773"
	p := filepath.Join(dir, "rollout-2026-11-21T08-51-29-"+sid+".jsonl")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	lp := codexLP(t)
	env := adapters.Env{Getenv: func(k string) string {
		if k == "CODEX_HOME" {
			return home
		}
		return ""
	}}
	if ts := lp.Transcripts(adapters.Hook{SessionID: sid}, env); len(ts) != 1 || ts[0].Path != p {
		t.Errorf("lookup %+v", ts)
	}
	if ts := lp.Transcripts(adapters.Hook{SessionID: "*"}, env); ts != nil {
		t.Errorf("glob characters in a session id must not match: %+v", ts)
	}
}

// An agent_message event and its response_item copy share a key when written in one second; the key is a function
// of the line alone (the order lines are parsed in changes nothing, so a read that stops between the two gives the
// rows a whole read does); the same words in a later turn take another key.
func TestCodexSayKeyPerLine(t *testing.T) {
	lp := codexLP(t)
	key := func(line string) string {
		rows, _ := lp.ParseLine([]byte(line), 0)
		if len(rows) != 1 {
			t.Fatalf("%d rows from %s", len(rows), line)
		}
		return rows[0].Key
	}
	event := `{"timestamp":"2026-11-21T10:00:%s","type":"event_msg","payload":{"type":"agent_message","message":"Tests pass now."}}`
	item := `{"timestamp":"2026-11-21T10:00:%s","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Tests pass now."}]}}`
	at := func(f, s string) string { return strings.Replace(f, "%s", s, 1) }
	copyKey, first := key(at(item, "00.990Z")), key(at(event, "00.950Z")) // the copy parsed first
	if first != copyKey {
		t.Errorf("event %q and its copy %q: two rows", first, copyKey)
	}
	if again := key(at(event, "00.950Z")); again != first {
		t.Errorf("the same line keyed %q, then %q", first, again)
	}
	if later := key(at(item, "41.500Z")); later == first {
		t.Errorf("a later turn's same words share the first's key %q", later)
	}
}
