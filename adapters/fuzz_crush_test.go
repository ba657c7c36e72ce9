package adapters_test

import (
	"testing"

	"github.com/carryover/carryover/adapters"
)

// FuzzCrushParts feeds a messages row's parts column to the reader: it
// must never panic, and every row must be usable.
func FuzzCrushParts(f *testing.F) {
	f.Add("tool", []byte(`[{"type":"tool_result","data":{"tool_call_id":"c","name":"bash","content":"x\nExit code 2\n\n<cwd>/p</cwd>","is_error":false}}]`))
	f.Add("assistant", []byte(`[{"type":"tool_call","data":{"id":"c","name":"edit","input":"{\"file_path\":\"a.go\",\"new_string\":\"b\"}"}},{"type":"finish","data":{"reason":"error","message":"m"}}]`))
	f.Add("user", []byte(`[{"type":"shell_command","data":{"command":"ls","output":"","exit_code":-1}},{"type":"text","data":{"text":"hi"}}]`))
	f.Add("tool", []byte(`[{"type":"tool_result","data":{"name":"bash","content":"Exit code \n<cwd>"}}]`))
	f.Fuzz(func(t *testing.T, role string, parts []byte) {
		for i, r := range adapters.CrushMessageRows("m", role, parts) {
			if r.Key == "" || r.Kind == "" || (r.Kind == adapters.KindToolCall && r.ToolName == "") {
				t.Fatalf("row %d unusable: %+v", i, r)
			}
		}
	})
}
