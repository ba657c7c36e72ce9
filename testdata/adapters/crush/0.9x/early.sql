-- A crush.db of an earlier 0.9 build, written for carryover's tests: no
-- is_summary_message or todos column, updated_at in seconds (the schema's
-- update trigger wrote strftime('%s')), a write and a multiedit call, a
-- command that fails with stderr only, and one that succeeds while its
-- output talks about exit codes. No real data.
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    parent_session_id TEXT,
    title TEXT NOT NULL,
    message_count INTEGER NOT NULL DEFAULT 0,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost REAL NOT NULL DEFAULT 0.0,
    updated_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE TABLE messages (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    role TEXT NOT NULL,
    parts TEXT NOT NULL DEFAULT '[]',
    model TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    finished_at INTEGER
);
INSERT INTO sessions VALUES ('e1', '', 'Retry flag', 6, 5000, 500, 0, 1765000100, 1765000000000);
INSERT INTO messages VALUES ('q1', 'e1', 'user', '[{"type":"text","data":{"text":"Füge dem Befehl sync eine Option --retries hinzu (Standard 3)"}}]', NULL, 1765000000000, 1765000000000, NULL);
INSERT INTO messages VALUES ('q2', 'e1', 'assistant', '[{"type":"tool_call","data":{"id":"t1","name":"write","input":"{\"file_path\":\"cmd/retry.go\",\"content\":\"package cmd\\n\\nconst defaultRetries = 3\\n\"}","finished":true}},{"type":"tool_call","data":{"id":"t2","name":"multiedit","input":"{\"file_path\":\"cmd/sync.go\",\"edits\":[{\"old_string\":\"a\",\"new_string\":\"b\"}]}","finished":true}}]', 'm', 1765000010000, 1765000010000, 1765000010000);
INSERT INTO messages VALUES ('q3', 'e1', 'tool', '[{"type":"tool_result","data":{"tool_call_id":"t1","name":"write","content":"File successfully written: cmd/retry.go","is_error":false}},{"type":"tool_result","data":{"tool_call_id":"t2","name":"multiedit","content":"old_string not found in file","is_error":true}}]', NULL, 1765000011000, 1765000011000, NULL);
INSERT INTO messages VALUES ('q4', 'e1', 'assistant', '[{"type":"tool_call","data":{"id":"t3","name":"bash","input":"{\"command\":\"make lint\"}","finished":true}},{"type":"tool_call","data":{"id":"t4","name":"bash","input":"{\"command\":\"cat docs/exit-codes.txt\"}","finished":true}}]', 'm', 1765000020000, 1765000020000, 1765000020000);
INSERT INTO messages VALUES ('q5', 'e1', 'tool', '[{"type":"tool_result","data":{"tool_call_id":"t3","name":"bash","content":"\nmake: golangci-lint: No such file or directory\nExit code 127\n\n<cwd>/srv/app</cwd>","is_error":false}},{"type":"tool_result","data":{"tool_call_id":"t4","name":"bash","content":"sync exits 2 when the remote refuses; Exit code 0 means done\n\n<cwd>/srv/app</cwd>","is_error":false}}]', NULL, 1765000021000, 1765000021000, NULL);
INSERT INTO messages VALUES ('q6', 'e1', 'assistant', '[{"type":"text","data":{"text":"golangci-lint is not installed; the flag is in place."}}]', 'm', 1765000030000, 1765000030000, 1765000030000);
