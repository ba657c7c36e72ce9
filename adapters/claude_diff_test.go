package adapters

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// Differential tests: the hand-rolled Claude decoder against the frozen
// encoding/json implementation (claude_oracle_test.go).

// claudeCorpusLines returns every line of the Claude fixtures and of the
// shared samples of real transcripts (when present).
func claudeCorpusLines(t testing.TB) [][]byte {
	t.Helper()
	var files []string
	seen := map[string]bool{}
	for _, pat := range []string{
		"../testdata/adapters/claude/*.jsonl",
		"../testdata/adapters/claude/*/*.jsonl", // per-version shapes (1.0.x)
		"../../shared/agents/samples/claude-code/*.jsonl",
		"../../shared/realworld/claude/*.jsonl", // other people's sessions, read in place (never copied)
		"/work/shared/agents/samples/claude-code/*.jsonl",
	} {
		m, _ := filepath.Glob(pat)
		for _, f := range m {
			real, err := filepath.EvalSymlinks(f)
			if err != nil {
				real = f
			}
			if abs, err := filepath.Abs(real); err == nil {
				real = abs
			}
			if !seen[real] {
				seen[real] = true
				files = append(files, f)
			}
		}
	}
	if len(files) == 0 {
		t.Fatal("no Claude transcripts found")
	}
	var lines [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(l) > 0 {
				lines = append(lines, l)
			}
		}
	}
	return lines
}

// claudeDiff parses line with both parsers and describes any difference.
// It also checks that the new parser's rows do not share memory with the
// line (a caller reuses its line buffer).
func claudeDiff(line []byte, off int64) string {
	want, werr := oracleParseLine(bytes.Clone(line), off)
	buf := bytes.Clone(line)
	got, gerr := claude{}.ParseLine(buf, off)
	if (werr != nil) != (gerr != nil) {
		return fmt.Sprintf("error: got %v, want %v", gerr, werr)
	}
	for i := range buf {
		buf[i] = 'X'
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Sprintf("rows differ:\n got  %#v\n want %#v", got, want)
	}
	return ""
}

func TestClaudeDifferentialCorpus(t *testing.T) {
	lines := claudeCorpusLines(t)
	for i, l := range lines {
		if d := claudeDiff(l, int64(i)*1000); d != "" {
			t.Errorf("line %d %.200q: %s", i, l, d)
		}
	}
	t.Logf("%d lines", len(lines))
}

// TestClaudeDifferentialNasty runs hand-made corner cases: every one of
// them once broke an assumption or is an encoding/json subtlety the
// decoder must reproduce.
func TestClaudeDifferentialNasty(t *testing.T) {
	for i, l := range claudeNastyLines() {
		if d := claudeDiff([]byte(l), int64(i)); d != "" {
			t.Errorf("case %d %.300q: %s", i, l, d)
		}
	}
}

// claudeNastyLines are corner cases for the decoder, also used as fuzz
// seeds.
func claudeNastyLines() []string {
	const (
		user   = `{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":%s},"uuid":"u-1","timestamp":"2026-11-21T08:59:37.203Z","promptSource":"sdk"}`
		userTR = `{"parentUuid":"p","type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":%s,"is_error":%s}]},"uuid":"u-2","timestamp":"2026-11-21T08:59:38Z","toolUseResult":{"stdout":"x"}}`
		asst   = `{"parentUuid":"p","type":"assistant","message":{"model":"claude-x","id":"msg_1","type":"message","role":"assistant","content":%s,"usage":{"input_tokens":3,"cache_creation_input_tokens":10,"cache_read_input_tokens":100,"output_tokens":7}},"uuid":"a-1","timestamp":"2026-11-21T09:00:00.5+02:00"}`
	)
	long := strings.Repeat("word ", 1000)
	esc := strings.Repeat(`caf\u00e9 \"q\" \\ `, 400)
	var out []string
	add := func(f string, args ...any) { out = append(out, fmt.Sprintf(f, args...)) }

	// Prompts: escapes, surrogates, invalid UTF-8, control escapes.
	for _, c := range []string{
		`"hello"`, `""`, `"  "`, `"a\nb"`, `"\ud83d\ude00 smile"`, `"\ud83d alone"`, `"\ude00 low"`,
		`"\ud83d\ud83d\ude00"`, `"\u0000\u001f\b\f\r\t\/"`, "\"bad \xff\xfe utf8 \xe2\x82\"", "\"trunc \xe2\x82\xac ok \xed\xa0\x80 surrogate-utf8\"",
		`"<command-name>x</command-name>"`, `"<local-command-stdout>"`, `"\u003ccommand-x"`,
		`"# [CARRYOVER] Last updated now\n\nbody"`, `"\u005bCARRYOVER] escaped"`, `"` + long + `"`, `"` + esc + `"`,
		`"x[CARRYOVER]` + long + `"`, `"[CARRYOVER] ` + strings.Repeat("y", 300) + `\nrest"`,
		`null`, `5`, `true`, `{}`, `{"a":1}`, `[]`, `[null]`, `["str"]`, `[1]`, `[[]]`,
		`[{"type":"text","text":"hi"}]`, `[{"TYPE":"text","Text":"folded keys"}]`, `[{"t\u0079pe":"text","text":"escaped key"}]`,
		`[{"type":"text","text":"a"},"str"]`, `[{"type":"text","text":5}]`, `[{"type":"text","text":null}]`,
	} {
		add(user, c)
	}
	// Prompt variants of the envelope.
	out = append(out, []string{
		`{"type":"user","isMeta":true,"message":{"content":"meta"},"uuid":"u","promptSource":"sdk"}`,
		`{"type":"user","isMeta":"yes","message":{"content":"meta-typed"},"uuid":"u","promptSource":"sdk"}`,
		`{"type":"user","message":{"content":"late meta error"},"isMeta":"yes","uuid":"u","promptSource":"sdk"}`,
		`{"type":"user","uuid":5,"message":{"content":"uuid typed"},"promptSource":"sdk"}`,
		`{"type":"user","UUID":"upper","message":{"content":"upper key"},"promptSource":"sdk"}`,
		`{"type":"user","message":{"content":"no source"},"uuid":"u"}`,
		`{"type":"user","isSidechain":true,"message":{"content":"task prompt"},"uuid":"u"}`,
		`{"type":"user","isSidechain":true,"parentUuid":"p","message":{"content":"not task"},"uuid":"u"}`,
		`{"type":"user","isSidechain":true,"parentUuid":5,"message":{"content":"typed parent"},"uuid":"u"}`,
		`{"type":"user","isSidechain":true,"parentUuid":"p","parentUuid":null,"message":{"content":"reset parent"},"uuid":"u"}`,
		`{"type":"user","isCompactSummary":true,"message":{"content":"summary ` + long + `"},"uuid":"u"}`,
		`{"type":"user","message":{"content":"a","content":null},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":"a","content":[]},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":"a"},"message":{"content":"b"},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":"a"},"message":null,"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":"a"},"message":5,"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":"a"},"message":{"content":5},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"usage":"x","content":"a"},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":"a","usage":"x"},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"Content":"folded"},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":"str","uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":"x"},"uuid":"u","promptSource":"s","timestamp":"bad"}`,
		`{"type":"user","message":{"content":"x"},"uuid":"","promptSource":"s"}`,
		`{"type":"us\u0065r","message":{"content":"escaped type"},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":"x"},"uuid":"u\u00e9\ud800","promptSource":"s"}`,
		`{"type":"user","message":{"content":"x"},"uuid":"u","promptSource":"s"` + "\n",
		`{"type":"user","message":{"content":"x"},"uuid":"u","promptSource":"s","junk":tru}`,
		`{"type":"user","message":{"content":"x"},"uuid":"u","promptSource":"s","junk":{]}`,
		`{"type":"user","message":{"content":"x","bad":tru},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":"x","bad":[1,}},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":"x"},"uuid":"u","promptSource":"s","isMeta":tru}`,
		`{"type":"user","message":{"content":"x"},"uuid":"u","promptSource":"s","isMeta":`,
		`{"type":"user","message":{"content":"x"},"uuid":"u","promptSource":"s","isMeta":true `,
		`{"type":"user","message":{"content":"x"},"uuid":"u","promptSource":"s","isMeta":false}garbage`,
		`{"type":"user","message":{"content":"x"} "uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":"x"},"uuid":"u\"","promptSource":"s"}`,
		`{"type":"user","message":{"content":"x\u12"},"uuid":"u","promptSource":"s"}`,
		"{\"type\":\"user\",\"message\":{\"content\":\"ctl \x01\"},\"uuid\":\"u\",\"promptSource\":\"s\"}",
		`{"type":"user","message":{"content":"x","n":01},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":"x","n":-},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":"x","n":1.},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":"x","n":1e},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":"x","n":-0.5e+3},"uuid":"u","promptSource":"s"}`,
		` {"type" : "user" , "message" : { "content" : "spaces" } , "uuid" : "u" , "promptSource" : "s" } `,
		`[{"type":"user"}]`, `{}`, ``, `{`, `{"type":"user"`, `"str"`,
		`{"type":"user","message":{"content":[{"type":"text","text":"p"}]},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":[{"type":"text","text":"p"}]},"uuid":"u"}`,
		`{"type":"user","message":{"content":[{"type":"image","source":{}}]},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":[{"x":` + strings.Repeat("[", 9996) + strings.Repeat("]", 9996) + `}]},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":[{"x":` + strings.Repeat("[", 9997) + strings.Repeat("]", 9997) + `}]},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":[{"type":"text","text":"p"}],"content":[{"text":"q"}]},"uuid":"u","promptSource":"s"}`,
		// Repeated lists: the third reuses the second element the second list cut off.
		`{"type":"user","message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"content":[{"text":"c"}],"content":[{},{}]},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"content":[],"content":[{},{}]},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"content":null,"content":[{},{}]},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},"message":{"content":[{"text":"c"}]},"message":{"content":[null,null]},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},"message":null,"message":{"content":[null,null]},"uuid":"u","promptSource":"s"}`,
	}...)
	// Tool results: string, list, wrong types, long strings cut at
	// every kind of unit, exit codes.
	cutAt := func(tail string) string { // a long literal whose cut point lands in tail
		pad := strings.Repeat("a", 2*maxResult-1-3)
		return `"` + pad + tail + strings.Repeat("b", 200) + `"`
	}
	for _, c := range []string{
		`"ok"`, `""`, `null`, `5`, `{}`, `[]`, `true`, `"` + long + `"`, `"` + esc + `"`,
		`[{"type":"text","text":"a"},{"type":"text","text":"b"}]`, `[{"type":"text","text":""},{"type":"text","text":"b"}]`,
		`[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":""},{"type":"text","text":"c"}]`,
		`[{"type":"text","text":"a"},"x"]`, `[{"type":"text","text":"a"},null]`, `[{"type":"text","text":"a","input":5}]`,
		`[{"type":"text","text":"a","input":{"edits":[{"new_string":1}]}}]`, `[{"type":"text","text":"a","is_error":"no"}]`,
		`[{"type":"text","text":"a","content":{"anything":[1,2]}}]`, `[{"TYPE":"TEXT","text":"case"}]`, `[{"Type":"text","TEXT":"case2"}]`,
		`[{"type":"text","text":"` + long + `"},{"type":"text","text":"` + esc + `"}]`,
		`"Exit code 2\nboom"`, `"exited with code: -17 then"`, `"EXIT CODE: 99999999999999999999"`, `"exit code x exit code 3"`,
		`[{"type":"text","text":"Exit code 1"}]`, `"` + strings.Repeat("z", 5000) + ` exit code 4"`,
		cutAt(`\u00e9`), cutAt(`x\u00e9`), cutAt(`xx\u00e9`), cutAt(`xxx\u00e9`), cutAt(`\ud83d\ude00`), cutAt(`x\ud83d\ude00`),
		cutAt(`xx\ud83d\ude00`), cutAt(`xxx\ud83d\ude00`), cutAt(`xxxx\ud83d\ude00`), cutAt(`xxxxx\ud83d\ude00`), cutAt(`xxxxxx\ud83d\ude00`),
		cutAt("\xe2\x82\xac"), cutAt("x\xe2\x82\xac"), cutAt("xx\xe2\x82\xac"), cutAt(`\n\n`), cutAt(`x\n\n`),
		`"` + strings.Repeat(`\u00e9`, 1500) + `"`, `"` + strings.Repeat(`\ud83d\ude00`, 800) + `"`,
	} {
		add(userTR, c, "false")
		add(userTR, c, "true")
	}
	add(userTR, `"x"`, `"yes"`)
	add(userTR, `"x"`, `null`)
	// Assistant lines.
	for _, c := range []string{
		`[{"type":"text","text":"answer"}]`, `[{"type":"text","text":"  \n "}]`, `[{"type":"text","text":"\u00a0\u2003"}]`,
		`[{"type":"text","text":"` + strings.Repeat(" ", 5000) + `x"}]`, `[{"type":"text","text":"` + strings.Repeat(`\n`, 5000) + `"}]`,
		`[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"a"},{"type":"text","text":"b"}]`,
		`[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls -la","description":"list"}}]`,
		`[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"` + long + `","description":"` + long + `"}}]`,
		`[{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"/a\u00e9","content":"` + esc + `"}}]`,
		`[{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"/a","content":""}}]`,
		`[{"type":"tool_use","id":"t1","name":"Edit","input":{"file_path":"/a","new_string":"TODO: x","old_string":"y"}}]`,
		`[{"type":"tool_use","id":"t1","name":"MultiEdit","input":{"file_path":"/a","edits":[{"new_string":"a"},{"new_string":"b"}]}}]`,
		`[{"type":"tool_use","id":"t1","name":"MultiEdit","input":{"file_path":"/a","edits":[]}}]`,
		`[{"type":"tool_use","id":"t1","name":"MultiEdit","input":{"file_path":"/a","edits":[null,{"new_string":""}]}}]`,
		`[{"type":"tool_use","id":"t1","name":"MultiEdit","input":{"file_path":"/a","edits":[{"new_string":"` + long + `"},{"new_string":"b"}]}}]`,
		`[{"type":"tool_use","id":"t1","name":"MultiEdit","input":{"edits":[{"new_string":"a"},{"new_string":"b"}],"edits":[{"x":1}],"edits":[{},{}]}}]`,
		`[{"type":"tool_use","id":"t1","name":"MultiEdit","input":{"edits":[{"new_string":"a"},{"NEW_STRING":"b"}],"edits":null,"edits":[{},{}]}}]`,
		`[{"type":"tool_use","id":"t1","name":"MultiEdit","input":{"edits":"x"}}]`, `[{"type":"tool_use","id":"t1","name":"MultiEdit","input":{"edits":[1,"x"]}}]`,
		`[{"type":"tool_use","id":"t1","name":"NotebookEdit","input":{"notebook_path":"/n.ipynb","new_source":"x"}}]`,
		`[{"type":"tool_use","id":"t1","name":"Bash","input":"notobject"}]`, `[{"type":"tool_use","id":"t1","name":"Bash","input":null}]`,
		`[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"a"},"input":{"description":"merged"}}]`,
		`[{"type":"tool_use","id":"t1","name":"Ba\u0073h","input":{"Command":"folded","DESCRIPTION":"d"}}]`,
		`[{"type":"tool_use","id":"t1","name":"Write","input":{"file_\u0070ath":"/x","conten\u0074":"c"}}]`,
		`[{"type":"tool_use","id":"t1","name":"Write","input":{"FILE_PATH":"/x","CONTENT":"c"}}]`,
		`[{"type":"tool_use","name":"Write","input":{"file_path":"/x","content":"` + strings.Repeat(`\u00e9`, 1000) + `"}}]`,
		`[{"type":"tool_use","id":"t1","name":5}]`, `[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"text","text":"c"}]`,
		`"string content"`, `null`, `[]`,
	} {
		add(asst, c)
	}
	out = append(out, []string{
		`{"type":"assistant","isApiErrorMessage":true,"message":{"model":"<synthetic>","id":"m","content":[{"type":"text","text":"API Error: 500"}],"usage":{"input_tokens":1}},"uuid":"a"}`,
		`{"type":"assistant","message":{"model":"<synth\u0065tic>","id":"m","content":[],"usage":{"input_tokens":1}},"uuid":"a"}`,
		`{"type":"assistant","message":{"id":"m","usage":{"input_tokens":1.5,"output_tokens":2}},"uuid":"a"}`,
		`{"type":"assistant","message":{"id":"m","usage":{"input_tokens":1e2,"output_tokens":2}},"uuid":"a"}`,
		`{"type":"assistant","message":{"id":"m","usage":{"input_tokens":99999999999999999999,"output_tokens":2}},"uuid":"a"}`,
		`{"type":"assistant","message":{"id":"m","usage":{"input_tokens":9223372036854775807,"output_tokens":1}},"uuid":"a"}`,
		`{"type":"assistant","message":{"id":"m","usage":{"input_tokens":-9223372036854775808,"output_tokens":-1}},"uuid":"a"}`,
		`{"type":"assistant","message":{"id":"m","usage":{"input_tokens":-0,"output_tokens":"2"}},"uuid":"a"}`,
		`{"type":"assistant","message":{"id":"m","usage":{"INPUT_TOKENS":5,"input_to\u212aens":6}},"uuid":"a"}`,
		`{"type":"assistant","message":{"id":"m","usage":{"input_tokens":5},"usage":null},"uuid":"a"}`,
		`{"type":"assistant","message":{"id":"m","usage":{"input_tokens":5},"usage":{"output_tokens":1}},"uuid":"a"}`,
		`{"type":"assistant","message":{"id":"m","usage":5},"uuid":"a"}`,
		`{"type":"assistant","message":{"id":"","usage":{"input_tokens":5}},"uuid":"a"}`,
		`{"type":"assistant","message":{"ID":"upper","usage":{"input_tokens":5}},"uuid":"a"}`,
		`{"type":"assistant","message":{"id":"m\u00e9","usage":{"input_tokens":5}}}`,
		`{"type":"assistant","message":null,"uuid":"a"}`,
		`{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"auto","preTokens":12345},"uuid":"s"}`,
		`{"type":"system","subtype":"compact_boundary","uuid":"s"}`,
		`{"type":"system","subtype":"compact_boundary","compactMetadata":null,"uuid":"s"}`,
		`{"type":"system","subtype":"compact_boundary","compactMetadata":"x","uuid":"s"}`,
		`{"type":"system","subtype":"compact_boundary","compactMetadata":{"TRIGGER":"manual","pretokens":1.5},"uuid":"s"}`,
		`{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"a"},"compactMetadata":{"preTokens":7},"uuid":"s"}`,
		`{"type":"system","subtype":"other","uuid":"s"}`,
		`{"type":"attachment","attachment":{"type":"hook_success","stdout":"# [CARRYOVER] Last updated x\nbody","hookEvent":"SessionStart"},"uuid":"at"}`,
		`{"type":"attachment","attachment":{"type":"hook_success","stdout":"{\"additionalContext\":\"# [CARRYOVER] Last updated y\\n\"}","hookEvent":"SessionStart"},"uuid":"at"}`,
		`{"type":"attachment","attachment":{"type":"hook_additional_context","content":["# [CARRYOVER] z","more"],"hookEvent":"UserPromptSubmit"},"uuid":"at"}`,
		`{"type":"attachment","attachment":{"type":"hook_additional_context","content":["# [CARRYOVER] z",null,5],"hookEvent":"U"},"uuid":"at"}`,
		`{"type":"attachment","attachment":{"type":"hook_additional_context","content":["# [CARRYOVER] z",null],"hookEvent":"U"},"uuid":"at"}`,
		`{"type":"attachment","attachment":{"type":"hook_additional_context","content":"# [CARRYOVER] str","hookEvent":"U"},"uuid":"at"}`,
		`{"type":"attachment","attachment":{"type":"hook_success","stdout":"[CARRYOVER]","hookEvent":5},"uuid":"at"}`,
		`{"type":"attachment","attachment":{"TYPE":"hook_success","STDOUT":"[CARRYOVER] folded","HookEvent":"E"},"uuid":"at"}`,
		`{"type":"attachment","attachment":{"type":"queued_command","prompt":"and the \u003ctests\u003e too","commandMode":"prompt","origin":{"kind":"human"}},"uuid":"at"}`,
		`{"type":"attachment","attachment":{"type":"queued_command","prompt":[{"type":"text","text":"see"},{"type":"image"}],"CommandMode":null},"uuid":"at"}`,
		`{"type":"attachment","attachment":{"type":"queued_command","prompt":"<task-notification>x</task-notification>","commandMode":"task-notification"},"uuid":"at"}`,
		`{"type":"attachment","attachment":{"type":"queued_command","prompt":"ls","commandMode":"bash","origin":5},"uuid":"at"}`,
		`{"type":"attachment","attachment":null,"uuid":"at","x":"[CARRYOVER]"}`,
		`{"type":"attachment","attachment":"[CARRYOVER]","uuid":"at"}`,
		`{"type":"attachment","uuid":"at","x":"[CARRYOVER]"}`,
		`{"type":"attachment","attachment":{"type":"skill_listing","content":"x"},"uuid":"at"}`,
		`{"type":"queue-operation","message":{"content":"x"}}`,
		`{"type":"user","message":{"content":[{"type":"text","text":"a"}],"content":"b"},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":"b","content":[{"type":"text","text":"a"}]},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"id":5,"content":"x"},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":"x","id":5},"uuid":"u","promptSource":"s"}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"exit code 3","i\u017f_error":true}]},"uuid":"u"}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"exit code 3","IS_ERROR":true,"is_error":null}]},"uuid":"u"}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"a","content":[{"type":"text","text":"b"}]}]},"uuid":"u"}`,
		`{"type":"user","message":{"content":"x"},"uuid":"u","promptSource":"s","timestamp":"2026-11-21T08:59:37\u002e203Z"}`,
		`{"type":"user","message":{"content":"x"},"uuid":"u","promptSource":"s","timestamp":"2026-11-21T08:59:37.203z"}`,
		`{"type":"user","message":{"content":"x"},"uuid":"u","promptSource":"s","timestamp":5}`,
		`{"type":"user","message":{"content":"[CARRYOVER] late type"},"uuid":"u","promptSource":"s","type":"last-prompt"}`,
	}...)
	// Truncations of a typical line at every byte.
	full := fmt.Sprintf(asst, `[{"type":"text","text":"caf\u00e9 \ud83d\ude00"},{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls","description":"d"}}]`)
	for i := 0; i < len(full); i++ {
		out = append(out, full[:i])
	}
	return out
}

// FuzzClaudeDifferential: the decoder and the oracle agree on every line.
//
//	go test ./adapters/ -run XXX -fuzz FuzzClaudeDifferential -fuzztime 120s
func FuzzClaudeDifferential(f *testing.F) {
	for _, l := range claudeCorpusLines(f) {
		f.Add(l)
	}
	for _, l := range claudeNastyLines() {
		if len(l) < 4096 { // keep the seed corpus quick to mutate
			f.Add([]byte(l))
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if d := claudeDiff(line, 42); d != "" {
			t.Fatalf("%q: %s", line, d)
		}
	})
}

// BenchmarkClaudeOracle runs the old and the new parser over the
// fixtures of bench_test.go, to compare them on the same (possibly busy)
// machine: go test -run XXX -bench ClaudeOracle ./adapters/
func BenchmarkClaudeOracle(b *testing.B) {
	tools, err := os.ReadFile("../testdata/adapters/claude/session-tools.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	files, _ := filepath.Glob("../testdata/adapters/claude/*.jsonl")
	var all []byte
	for _, f := range files {
		d, _ := os.ReadFile(f)
		all = append(all, d...)
	}
	var file bytes.Buffer
	for i := 0; file.Len() < 256<<10; i++ {
		fmt.Fprintf(&file, `    if x%d := f(\"%d\"); x%d != nil {\n        return fmt.Errorf(\"step %d: %%w\", x%d)\n    }\n`, i, i, i, i, i)
	}
	content := file.String()
	big := []byte(`{"parentUuid":"p","isSidechain":false,"message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"tool_use","id":"toolu_1","name":"Write","input":{"file_path":"/src/big.go","content":"` + content + `"}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5}},"type":"assistant","uuid":"a-1","timestamp":"2026-11-21T08:59:37.583Z","sessionId":"s"}` + "\n" +
		`{"parentUuid":"a-1","isSidechain":false,"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_2","type":"tool_result","content":"` + content + `"}]},"uuid":"u-1","timestamp":"2026-11-21T08:59:38.935Z","toolUseResult":{"type":"text","file":{"filePath":"/src/big.go","content":"` + content + `","numLines":9999}},"sessionId":"s"}`)
	for _, set := range []struct {
		name string
		data []byte
	}{{"tools", tools}, {"all", all}, {"big", big}} {
		lines := bytes.Split(bytes.TrimSpace(set.data), []byte("\n"))
		for _, p := range []struct {
			name  string
			parse func([]byte, int64) ([]Row, error)
		}{{"old", oracleParseLine}, {"new", claude{}.ParseLine}} {
			b.Run(set.name+"/"+p.name, func(b *testing.B) {
				b.SetBytes(int64(len(set.data)))
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					for _, l := range lines {
						p.parse(l, 0)
					}
				}
			})
		}
	}
}

// TestClaudeParseLineConcurrent: decoders are pooled; lines parsed on
// several goroutines at once give the rows they give alone.
func TestClaudeParseLineConcurrent(t *testing.T) {
	lines := claudeCorpusLines(t)
	want := make([][]Row, len(lines))
	for i, l := range lines {
		want[i], _ = claude{}.ParseLine(l, int64(i))
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for g := range 4 {
		wg.Go(func() {
			for k := range lines {
				i := (k + g*len(lines)/4) % len(lines)
				got, _ := claude{}.ParseLine(lines[i], int64(i))
				if !reflect.DeepEqual(got, want[i]) {
					errs <- fmt.Sprintf("line %d differs when parsed concurrently", i)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
