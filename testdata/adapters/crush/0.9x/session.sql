-- A Crush 0.9x crush.db, written for carryover's tests from Crush's schema
-- (sessions, messages with a parts JSON column; is_summary_message and
-- todos columns of the 2025-08 migrations). Times are Unix ms. No real data.
PRAGMA journal_mode = WAL;
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    parent_session_id TEXT,
    title TEXT NOT NULL,
    message_count INTEGER NOT NULL DEFAULT 0,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost REAL NOT NULL DEFAULT 0.0,
    updated_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    summary_message_id TEXT,
    todos TEXT
);
CREATE TABLE messages (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    role TEXT NOT NULL,
    parts TEXT NOT NULL DEFAULT '[]',
    model TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    finished_at INTEGER,
    provider TEXT,
    is_summary_message INTEGER DEFAULT 0 NOT NULL
);

-- An older session of the same project.
INSERT INTO sessions VALUES ('s-old', NULL, 'Rename the config loader', 2, 900, 80, 0, 1767000000000, 1767000000000, NULL, NULL);
INSERT INTO messages VALUES ('m-o1', 's-old', 'user', '[{"type":"text","data":{"text":"Rename loadCfg to loadConfig everywhere"}}]', NULL, 1767000000000, 1767000000000, NULL, NULL, 0);
INSERT INTO messages VALUES ('m-o2', 's-old', 'assistant', '[{"type":"text","data":{"text":"Renamed in four files."}},{"type":"finish","data":{"reason":"end_turn","time":1767000001}}]', 'm', 1767000001000, 1767000001000, 1767000001000, 'p', 0);

-- The newest session: a task, a file read and edited, a failing test run
-- (stored is_error false, the exit code in the output's last line), a plan,
-- a sub-agent, the user's own shell command, a refused call, a summary.
INSERT INTO sessions VALUES ('s-new', NULL, 'CSV export quoting', 14, 21000, 1800, 0.04, 1767100090000, 1767100000000, NULL, '[{"content":"Quote fields with commas","status":"in_progress"}]');
INSERT INTO sessions VALUES ('m-n2$$call_agent', 's-new', 'Find the CSV writer', 2, 300, 40, 0, 1767100012000, 1767100011000, NULL, NULL);
INSERT INTO messages VALUES ('m-n1', 's-new', 'user', '[{"type":"text","data":{"text":"The CSV export breaks when a field contains a comma: quote such fields, and keep the header row unchanged"}}]', NULL, 1767100000000, 1767100000000, NULL, NULL, 0);
INSERT INTO messages VALUES ('m-n2', 's-new', 'assistant', '[{"type":"reasoning","data":{"thinking":"Look at the writer first.","signature":""}},{"type":"text","data":{"text":"I will find the writer and read it."}},{"type":"tool_call","data":{"id":"call_agent","name":"agent","input":"{\"prompt\":\"Where is the CSV writer?\"}","provider_executed":false,"finished":true}},{"type":"tool_call","data":{"id":"call_view","name":"view","input":"{\"file_path\":\"/home/dev/ledgerly/export/csv.go\"}","provider_executed":false,"finished":true}},{"type":"finish","data":{"reason":"tool_use","time":1767100010}}]', 'm', 1767100010000, 1767100010000, 1767100010000, 'p', 0);
INSERT INTO messages VALUES ('m-a1', 'm-n2$$call_agent', 'user', '[{"type":"text","data":{"text":"Where is the CSV writer?"}}]', NULL, 1767100011000, 1767100011000, NULL, NULL, 0);
INSERT INTO messages VALUES ('m-a2', 'm-n2$$call_agent', 'assistant', '[{"type":"text","data":{"text":"export/csv.go, func writeRow."}},{"type":"finish","data":{"reason":"end_turn","time":1767100012}}]', 'm', 1767100012000, 1767100012000, 1767100012000, 'p', 0);
INSERT INTO messages VALUES ('m-n3', 's-new', 'tool', '[{"type":"tool_result","data":{"tool_call_id":"call_agent","name":"agent","content":"export/csv.go, func writeRow.","metadata":"","is_error":false}},{"type":"tool_result","data":{"tool_call_id":"call_view","name":"view","content":"<file>\n     1|package export\n     2|\n     3|func writeRow(w io.Writer, fields []string) error {\n</file>","metadata":"","is_error":false}}]', NULL, 1767100013000, 1767100013000, NULL, NULL, 0);
INSERT INTO messages VALUES ('m-n4', 's-new', 'assistant', '[{"type":"tool_call","data":{"id":"call_todos","name":"todos","input":"{\"todos\":[{\"content\":\"Quote fields with commas\",\"status\":\"in_progress\",\"active_form\":\"Quoting fields\"},{\"content\":\"Add a test with a comma in a field\",\"status\":\"pending\",\"active_form\":\"Adding a test\"}]}","provider_executed":false,"finished":true}},{"type":"tool_call","data":{"id":"call_edit","name":"edit","input":"{\"file_path\":\"/home/dev/ledgerly/export/csv.go\",\"old_string\":\"strings.Join(fields, \\\",\\\")\",\"new_string\":\"joinQuoted(fields) // TODO: quote newlines too\"}","provider_executed":false,"finished":true}},{"type":"finish","data":{"reason":"tool_use","time":1767100020}}]', 'm', 1767100020000, 1767100020000, 1767100020000, 'p', 0);
INSERT INTO messages VALUES ('m-n5', 's-new', 'tool', '[{"type":"tool_result","data":{"tool_call_id":"call_todos","name":"todos","content":"Todo list updated","metadata":"{\"is_new\":true}","is_error":false}},{"type":"tool_result","data":{"tool_call_id":"call_edit","name":"edit","content":"<result>\nContent replaced in file: /home/dev/ledgerly/export/csv.go\n</result>","metadata":"{\"diff\":\"\"}","is_error":false}}]', NULL, 1767100021000, 1767100021000, NULL, NULL, 0);
INSERT INTO messages VALUES ('m-n6', 's-new', 'assistant', '[{"type":"tool_call","data":{"id":"call_test","name":"bash","input":"{\"command\":\"go test ./export/...\",\"description\":\"Run export tests\"}","provider_executed":false,"finished":true}},{"type":"finish","data":{"reason":"tool_use","time":1767100030}}]', 'm', 1767100030000, 1767100030000, 1767100030000, 'p', 0);
INSERT INTO messages VALUES ('m-n7', 's-new', 'tool', '[{"type":"tool_result","data":{"tool_call_id":"call_test","name":"bash","content":"--- FAIL: TestWriteRowComma (0.00s)\n    csv_test.go:21: got a,b want \"a,b\"\nFAIL\nFAIL\tledgerly/export\t0.004s\n\nExit code 1\n\n<cwd>/home/dev/ledgerly</cwd>","metadata":"{\"start_time\":1767100030100,\"end_time\":1767100031200,\"output\":\"--- FAIL: TestWriteRowComma (0.00s)\\n    csv_test.go:21: got a,b want \\\"a,b\\\"\\nFAIL\\nFAIL\\tledgerly/export\\t0.004s\\n\\nExit code 1\",\"description\":\"Run export tests\",\"working_directory\":\"/home/dev/ledgerly\"}","is_error":false}}]', NULL, 1767100031000, 1767100031000, NULL, NULL, 0);
INSERT INTO messages VALUES ('m-n8', 's-new', 'assistant', '[{"type":"text","data":{"text":"The test still fails: joinQuoted is not defined yet. Next I will add joinQuoted to export/csv.go."}},{"type":"tool_call","data":{"id":"call_push","name":"bash","input":"{\"command\":\"git push\",\"description\":\"Push\"}","provider_executed":false,"finished":true}},{"type":"finish","data":{"reason":"tool_use","time":1767100040}}]', 'm', 1767100040000, 1767100040000, 1767100040000, 'p', 0);
INSERT INTO messages VALUES ('m-n9', 's-new', 'tool', '[{"type":"tool_result","data":{"tool_call_id":"call_push","name":"bash","content":"User denied permission","metadata":"","is_error":true}}]', NULL, 1767100041000, 1767100041000, NULL, NULL, 0);
INSERT INTO messages VALUES ('m-n10', 's-new', 'user', '[{"type":"shell_command","data":{"command":"go vet ./export/","output":"export/csv.go:9:9: undefined: joinQuoted","exit_code":1}}]', NULL, 1767100050000, 1767100050000, NULL, NULL, 0);
INSERT INTO messages VALUES ('m-n11', 's-new', 'assistant', '[{"type":"text","data":{"text":"The conversation so far: CSV quoting is half done; joinQuoted is missing."}},{"type":"finish","data":{"reason":"end_turn","time":1767100060}}]', 'm', 1767100060000, 1767100060000, 1767100060000, 'p', 1);
INSERT INTO messages VALUES ('m-n12', 's-new', 'user', '[{"type":"text","data":{"text":"go on"}}]', NULL, 1767100070000, 1767100070000, NULL, NULL, 0);
INSERT INTO messages VALUES ('m-n13', 's-new', 'assistant', '[{"type":"text","data":{"text":"Adding joinQuoted"}},{"type":"finish","data":{"reason":"canceled","time":1767100080}}]', 'm', 1767100080000, 1767100080000, 1767100080000, 'p', 0);
INSERT INTO messages VALUES ('m-n14', 's-new', 'assistant', '[{"type":"finish","data":{"reason":"error","time":1767100090,"message":"Provider error","details":"429 Too Many Requests"}}]', 'm', 1767100090000, 1767100090000, 1767100090000, 'p', 0);
