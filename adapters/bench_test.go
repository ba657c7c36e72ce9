package adapters_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
)

// BenchmarkClaudeParseLine measures parsing throughput over a real transcript.
func BenchmarkClaudeParseLine(b *testing.B) {
	data, err := os.ReadFile("../testdata/adapters/claude/session-tools.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	benchClaudeLines(b, data)
}

// BenchmarkClaudeParseLineAll measures it over every Claude fixture
// (compactions, subagents, injections, resumed sessions).
func BenchmarkClaudeParseLineAll(b *testing.B) {
	files, _ := filepath.Glob("../testdata/adapters/claude/*.jsonl")
	var data []byte
	for _, f := range files {
		d, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		data = append(data, d...)
	}
	benchClaudeLines(b, data)
}

func benchClaudeLines(b *testing.B, data []byte) {
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	lp := adapters.Claude.(adapters.LineParser)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, l := range lines {
			lp.ParseLine(l, 0)
		}
	}
}

// BenchmarkClaudeParseLineBig measures big lines: a 256 KB file written
// by the assistant, then read back (the result repeats it twice: in the
// message and in toolUseResult).
func BenchmarkClaudeParseLineBig(b *testing.B) {
	var file bytes.Buffer
	for i := 0; file.Len() < 256<<10; i++ {
		fmt.Fprintf(&file, `    if x%d := f(\"%d\"); x%d != nil {\n        return fmt.Errorf(\"step %d: %%w\", x%d)\n    }\n`, i, i, i, i, i)
	}
	content := file.String()
	lines := []string{
		`{"parentUuid":"p","isSidechain":false,"message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"tool_use","id":"toolu_1","name":"Write","input":{"file_path":"/src/big.go","content":"` + content + `"}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5}},"type":"assistant","uuid":"a-1","timestamp":"2026-11-21T08:59:37.583Z","sessionId":"s"}`,
		`{"parentUuid":"a-1","isSidechain":false,"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_2","type":"tool_result","content":"` + content + `"}]},"uuid":"u-1","timestamp":"2026-11-21T08:59:38.935Z","toolUseResult":{"type":"text","file":{"filePath":"/src/big.go","content":"` + content + `","numLines":9999}},"sessionId":"s"}`,
	}
	benchClaudeLines(b, []byte(strings.Join(lines, "\n")))
}

// BenchmarkTail measures the hook's read path: Tail over a Claude
// transcript of every fixture repeated to about 4 MB, each line parsed,
// from the start (a cold ingest) and from a cursor 64 KB before the end
// (a hook's usual read).
func BenchmarkTail(b *testing.B) {
	files, _ := filepath.Glob("../testdata/adapters/claude/*.jsonl")
	var one []byte
	for _, f := range files {
		d, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		one = append(one, bytes.TrimSpace(d)...)
		one = append(one, '\n')
	}
	data := bytes.Repeat(one, max(1, (4<<20)/len(one)))
	p := filepath.Join(b.TempDir(), "t.jsonl")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		b.Fatal(err)
	}
	lp := adapters.Claude.(adapters.LineParser)
	parse := func(l []byte, off int64) { lp.ParseLine(l, off) }
	full, err := adapters.Tail(p, adapters.Cursor{}, time.Time{}, func([]byte, int64) {})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		cur  adapters.Cursor
	}{{"cold", adapters.Cursor{}}, {"warm", full.Cursor}} {
		b.Run(c.name, func(b *testing.B) {
			cur := c.cur
			if cur.Offset > 0 {
				cur.Offset -= 64 << 10
				cur.Head = adapters.HeadPart(cur.Head) // no hash of the bytes before this offset
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				res, err := adapters.Tail(p, cur, time.Time{}, parse)
				if err != nil || res.Reset {
					b.Fatal(err, res.Reset)
				}
				b.SetBytes(res.Bytes)
			}
		})
	}
}

// BenchmarkClaudeStopTail is a Stop's read of a TUI session's last turn (after its compaction) by ParseLine alone and
// by the TailParser the ingest uses: the rewind check's cost is the gap (a look-up of the line before the tail, a
// uuid per line).
func BenchmarkClaudeStopTail(b *testing.B) {
	data, err := os.ReadFile("../testdata/adapters/claude/session-tui.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	from := bytes.Index(data, []byte(`"content":"Mark the helper done"`))
	from = bytes.LastIndexByte(data[:from], '\n') + 1
	lines := bytes.SplitAfter(data[from:], []byte("\n"))
	tp := adapters.Claude.(adapters.TailParser)
	for _, c := range []struct {
		name  string
		parse func() func([]byte, int64) ([]adapters.Row, error)
	}{
		{"ParseLine", func() func([]byte, int64) ([]adapters.Row, error) { return tp.ParseLine }},
		{"TailParser", func() func([]byte, int64) ([]adapters.Row, error) {
			return tp.TailParser(bytes.NewReader(data), int64(from))
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				parse, off := c.parse(), from
				for _, l := range lines {
					parse(bytes.TrimSuffix(l, []byte("\n")), int64(off))
					off += len(l)
				}
			}
		})
	}
}
