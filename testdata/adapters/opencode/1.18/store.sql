-- An OpenCode 1.18 opencode.db, reduced to the tables carryover reads, with
-- the shapes seen in real 1.18.30/1.18.33 runs. Written by hand: no real
-- session. The conformance test builds it with SQLite and reads the newest
-- top-level session (ses_fixture01); ses_fixture02 is its subagent and
-- ses_other9 another project's.
PRAGMA journal_mode = WAL;
CREATE TABLE `session` (`id` text PRIMARY KEY, `project_id` text NOT NULL, `parent_id` text, `slug` text NOT NULL,
  `directory` text NOT NULL, `title` text NOT NULL, `version` text NOT NULL, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `time_archived` integer);
CREATE TABLE `message` (`id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `data` text NOT NULL);
CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);
CREATE TABLE `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL);
CREATE INDEX `part_message_id_id_idx` ON `part` (`message_id`,`id`);
CREATE INDEX `part_session_idx` ON `part` (`session_id`);

INSERT INTO session VALUES
 ('ses_other9', 'p2', NULL, 'calm-owl', '/work/elsewhere', 'Rename the CLI flags', '1.18.30', 1790000000000, 1790000500000, NULL),
 ('ses_fixture01', 'p1', NULL, 'brave-fox', '/work/shop', 'Paginate the orders endpoint', '1.18.33', 1790001000000, 1790001090000, NULL),
 ('ses_fixture02', 'p1', 'ses_fixture01', 'quick-elk', '/work/shop', 'Find the pagination tests (@explore subagent)', '1.18.33', 1790001020000, 1790001030000, NULL);

-- ses_fixture01: a prompt typed to `opencode run` (stored in literal quotes)
INSERT INTO message VALUES ('msg_a01', 'ses_fixture01', 1790001000100, 1790001000100,
 '{"role":"user","time":{"created":1790001000100},"agent":"build","model":{"providerID":"p","modelID":"m"}}');
INSERT INTO part VALUES ('prt_a01a', 'msg_a01', 'ses_fixture01', 1790001000200, 1790001000200,
 '{"type":"text","text":"\"Paginate GET /orders with a cursor, keep the old offset parameter working\""}');
-- carryover's plugin added the handoff to the first prompt (a synthetic part: a delivery receipt)
INSERT INTO part VALUES ('prt_a01z', 'msg_a01', 'ses_fixture01', 1790001000201, 1790001000201,
 '{"type":"text","synthetic":true,"text":"# [CARRYOVER] Last updated 2026-09-21T14:20:00Z from claude · HO-3\n\n## Task\nAdd cursor pagination"}');
-- a file attached with @, expanded by OpenCode into synthetic text
INSERT INTO part VALUES ('prt_a01b', 'msg_a01', 'ses_fixture01', 1790001000210, 1790001000210,
 '{"type":"text","synthetic":true,"text":"Called the Read tool with the following input: {\"filePath\":\"/work/shop/api/orders.go\"}"}');
INSERT INTO part VALUES ('prt_a01c', 'msg_a01', 'ses_fixture01', 1790001000220, 1790001000220,
 '{"type":"file","mime":"text/plain","filename":"orders.go","url":"file:///work/shop/api/orders.go"}');

-- assistant step 1: reasoning, text, a write and a read, step-finish with tokens
INSERT INTO message VALUES ('msg_a02', 'ses_fixture01', 1790001001000, 1790001010000,
 '{"parentID":"msg_a01","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/work/shop","root":"/work/shop"},"cost":0,"tokens":{"total":9100,"input":9000,"output":100,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"m","providerID":"p","time":{"created":1790001001000,"completed":1790001010000},"finish":"tool-calls"}');
INSERT INTO part VALUES ('prt_a02a', 'msg_a02', 'ses_fixture01', 1790001001100, 1790001001100, '{"type":"step-start","snapshot":"aaaa"}');
INSERT INTO part VALUES ('prt_a02b', 'msg_a02', 'ses_fixture01', 1790001001200, 1790001001900,
 '{"type":"reasoning","text":"The handler builds the query inline.","time":{"start":1790001001200,"end":1790001001900}}');
INSERT INTO part VALUES ('prt_a02c', 'msg_a02', 'ses_fixture01', 1790001002000, 1790001002500,
 '{"type":"text","text":"I will add a cursor type first, then thread it through the handler.","time":{"start":1790001002000,"end":1790001002500}}');
INSERT INTO part VALUES ('prt_a02d', 'msg_a02', 'ses_fixture01', 1790001003000, 1790001004000,
 '{"type":"tool","tool":"write","callID":"call_w1","state":{"status":"completed","input":{"filePath":"/work/shop/api/cursor.go","content":"package api\n\n// TODO: sign the cursor\ntype Cursor struct{ After int64 }\n"},"output":"Wrote file successfully.","metadata":{"filepath":"/work/shop/api/cursor.go","exists":false},"title":"api/cursor.go","time":{"start":1790001003000,"end":1790001004000}}}');
INSERT INTO part VALUES ('prt_a02e', 'msg_a02', 'ses_fixture01', 1790001004100, 1790001004300,
 '{"type":"tool","tool":"read","callID":"call_r1","state":{"status":"completed","input":{"filePath":"/work/shop/api/orders.go"},"output":"<path>/work/shop/api/orders.go</path>\n<content>\n1: package api\n</content>","metadata":{"truncated":false},"title":"api/orders.go","time":{"start":1790001004100,"end":1790001004300}}}');
INSERT INTO part VALUES ('prt_a02f', 'msg_a02', 'ses_fixture01', 1790001009000, 1790001009000,
 '{"type":"step-finish","reason":"tool-calls","snapshot":"bbbb","tokens":{"total":9100,"input":9000,"output":100,"reasoning":0,"cache":{"write":200,"read":3000}},"cost":0}');
INSERT INTO part VALUES ('prt_a02g', 'msg_a02', 'ses_fixture01', 1790001009500, 1790001009500,
 '{"type":"patch","hash":"aaaa","files":["/work/shop/api/cursor.go"]}');

-- assistant step 2: an edit, a subagent task, a passing and a failing command (completed, exit 1),
-- a command OpenCode stopped (status error), a call refused by a deny rule, one still running
INSERT INTO message VALUES ('msg_a03', 'ses_fixture01', 1790001011000, 1790001060000,
 '{"parentID":"msg_a01","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/work/shop","root":"/work/shop"},"cost":0,"tokens":{"total":12100,"input":12000,"output":100,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"m","providerID":"p","time":{"created":1790001011000},"finish":"tool-calls"}');
INSERT INTO part VALUES ('prt_a03a', 'msg_a03', 'ses_fixture01', 1790001011100, 1790001011900,
 '{"type":"tool","tool":"edit","callID":"call_e1","state":{"status":"completed","input":{"filePath":"/work/shop/api/orders.go","oldString":"offset := q.Get(\"offset\")","newString":"cur, err := ParseCursor(q.Get(\"cursor\"))"},"output":"Edit applied successfully.","metadata":{"diff":"@@ -1 +1 @@"},"title":"api/orders.go","time":{"start":1790001011100,"end":1790001011900}}}');
INSERT INTO part VALUES ('prt_a03b', 'msg_a03', 'ses_fixture01', 1790001012000, 1790001030000,
 '{"type":"tool","tool":"task","callID":"call_t1","state":{"status":"completed","input":{"description":"Find pagination tests","prompt":"List the tests that cover /orders pagination","subagent_type":"explore"},"output":"api/orders_test.go covers offset paging only.","metadata":{"sessionId":"ses_fixture02"},"title":"Find pagination tests","time":{"start":1790001012000,"end":1790001030000}}}');
INSERT INTO part VALUES ('prt_a03c', 'msg_a03', 'ses_fixture01', 1790001031000, 1790001032000,
 '{"type":"tool","tool":"bash","callID":"call_b1","state":{"status":"completed","input":{"command":"gofmt -l api","description":"Check formatting"},"output":"","metadata":{"output":"","exit":0,"description":"Check formatting","truncated":false},"title":"gofmt -l api","time":{"start":1790001031000,"end":1790001032000}}}');
INSERT INTO part VALUES ('prt_a03d', 'msg_a03', 'ses_fixture01', 1790001033000, 1790001040000,
 '{"type":"tool","tool":"bash","callID":"call_b2","state":{"status":"completed","input":{"command":"go test ./api/...","description":"Run the API tests"},"output":"--- FAIL: TestOrdersCursor (0.00s)\n    orders_test.go:41: got 20 orders, want 10\nFAIL\n","metadata":{"output":"--- FAIL: TestOrdersCursor (0.00s)\n","exit":1,"description":"Run the API tests","truncated":false},"title":"go test ./api/...","time":{"start":1790001033000,"end":1790001040000}}}');
INSERT INTO part VALUES ('prt_a03e', 'msg_a03', 'ses_fixture01', 1790001041000, 1790001051000,
 '{"type":"tool","tool":"bash","callID":"call_b3","state":{"status":"error","input":{"command":"go test -run TestLoad ./...","description":"Load test"},"error":"Tool execution aborted","metadata":{"exit":null},"time":{"start":1790001041000,"end":1790001051000}}}');
INSERT INTO part VALUES ('prt_a03f', 'msg_a03', 'ses_fixture01', 1790001052000, 1790001052100,
 '{"type":"tool","tool":"bash","callID":"call_b4","state":{"status":"error","input":{"command":"git push --force","description":"Push"},"error":"The user has specified a rule which prevents you from using this specific tool call. Here are some of the relevant rules [{\"permission\":\"bash\",\"pattern\":\"git push *\",\"action\":\"deny\"}]","time":{"start":1790001052000,"end":1790001052100}}}');
INSERT INTO part VALUES ('prt_a03g', 'msg_a03', 'ses_fixture01', 1790001053000, 1790001053000,
 '{"type":"tool","tool":"bash","callID":"call_b5","state":{"status":"running","input":{"command":"go vet ./...","description":"Vet"},"title":"go vet ./...","time":{"start":1790001053000}}}');

-- a second prompt typed in the TUI (no quotes), the reply failing with a rate limit
INSERT INTO message VALUES ('msg_a04', 'ses_fixture01', 1790001070000, 1790001070000,
 '{"role":"user","time":{"created":1790001070000},"agent":"build","model":{"providerID":"p","modelID":"m"}}');
INSERT INTO part VALUES ('prt_a04a', 'msg_a04', 'ses_fixture01', 1790001070100, 1790001070100,
 '{"type":"text","text":"\"cursor\" must stay opaque to clients; base64 it"}');
INSERT INTO message VALUES ('msg_a05', 'ses_fixture01', 1790001071000, 1790001072000,
 '{"parentID":"msg_a04","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/work/shop","root":"/work/shop"},"cost":0,"tokens":{"total":0,"input":0,"output":0,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"m","providerID":"p","time":{"created":1790001071000,"completed":1790001072000},"error":{"name":"APIError","data":{"message":"Rate limit reached for requests","statusCode":429,"isRetryable":true}}}');

-- the session is compacted: a compaction part, the summary reply, then an interrupted turn
INSERT INTO message VALUES ('msg_a06', 'ses_fixture01', 1790001080000, 1790001080000,
 '{"role":"user","time":{"created":1790001080000},"agent":"build","model":{"providerID":"p","modelID":"m"}}');
INSERT INTO part VALUES ('prt_a06a', 'msg_a06', 'ses_fixture01', 1790001080100, 1790001080100, '{"type":"compaction","auto":true}');
INSERT INTO message VALUES ('msg_a07', 'ses_fixture01', 1790001081000, 1790001085000,
 '{"parentID":"msg_a06","role":"assistant","mode":"compaction","agent":"compaction","summary":true,"path":{"cwd":"/work/shop","root":"/work/shop"},"cost":0,"tokens":{"total":0,"input":0,"output":0,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"m","providerID":"p","time":{"created":1790001081000,"completed":1790001085000},"finish":"stop"}');
INSERT INTO part VALUES ('prt_a07a', 'msg_a07', 'ses_fixture01', 1790001081100, 1790001084000,
 '{"type":"text","text":"Summary: cursor type added, handler edited, TestOrdersCursor fails (20 vs 10 orders)."}');
INSERT INTO message VALUES ('msg_a08', 'ses_fixture01', 1790001086000, 1790001090000,
 '{"parentID":"msg_a06","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/work/shop","root":"/work/shop"},"cost":0,"tokens":{"total":0,"input":0,"output":0,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"m","providerID":"p","time":{"created":1790001086000},"error":{"name":"MessageAbortedError","data":{"message":"The operation was aborted."}}}');
INSERT INTO part VALUES ('prt_a08a', 'msg_a08', 'ses_fixture01', 1790001086500, 1790001087000,
 '{"type":"text","text":"Next I will fix the limit in ParseCursor and rerun go test ./api/..."}');

-- the subagent's own session and another project's
INSERT INTO message VALUES ('msg_b01', 'ses_fixture02', 1790001020000, 1790001020000, '{"role":"user","time":{"created":1790001020000}}');
INSERT INTO part VALUES ('prt_b01a', 'msg_b01', 'ses_fixture02', 1790001020100, 1790001020100, '{"type":"text","text":"List the tests that cover /orders pagination"}');
INSERT INTO message VALUES ('msg_c01', 'ses_other9', 1790000000100, 1790000000100, '{"role":"user","time":{"created":1790000000100}}');
INSERT INTO part VALUES ('prt_c01a', 'msg_c01', 'ses_other9', 1790000000200, 1790000000200, '{"type":"text","text":"Rename --verbose to --debug"}');
