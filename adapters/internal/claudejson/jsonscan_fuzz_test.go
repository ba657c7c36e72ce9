package claudejson

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// The scanning primitives against their references: the lenient scan
// against its first version (scan_oracle_test.go), the strict reader,
// unquoting and key matching against encoding/json.

var jsonScanSeeds = []string{
	`{"a":"b","c":[1,2,{"d":null}],"e":true}`, `"x\"y\\"`, `"\\\\\""`, `{"k":"v\\"}`, `[}`, `{"a":tru}`,
	`"\ud83d\ude00\ud800\udc00\u00e9\n\t"`, "\"\xff\xfe\xed\xa0\x80\"", `-0.5e+10`, `01`, `1.`, `{"a" : [ ] , "b":{ }}`,
	`"` + strings.Repeat(`ab\"`, 40) + `"`, `"` + strings.Repeat(`\\`, 70) + `"`, `"` + strings.Repeat("x", 63) + `\\"`,
	`{"t\u0079pe":1,"TYPE":2,"preto\u212Aens":3,"PRETOKENS":4,"hookevent":5}`, `[[[[[[]]]]]]`,
}

func FuzzLenientScan(f *testing.F) {
	for _, s := range jsonScanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1024 {
			return // every start is scanned: keep it quick
		}
		for i := range b {
			if b[i] == '"' {
				if got, want := skipString(b, i), oracleSkipString(b, i); got != want {
					t.Fatalf("skipString(%q, %d) = %d, want %d", b, i, got, want)
				}
			}
			if got, want := skipValue(b, i), oracleSkipValue(b, i); got != want {
				t.Fatalf("skipValue(%q, %d) = %d, want %d", b, i, got, want)
			}
		}
		var got, want [][]byte
		topLevel(b, func(k, v []byte) { got = append(got, k, v) })
		oracleTopLevel(b, func(k, v []byte) { want = append(want, k, v) })
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("topLevel(%q) = %q, want %q", b, got, want)
		}
	})
}

func FuzzJSONReader(f *testing.F) {
	for _, s := range jsonScanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var r jsonReader
		r.reset(b, 0, 0)
		r.skip()
		got := !r.bad && skipWS(b, r.i) == len(b)
		if want := json.Valid(b); got != want {
			t.Fatalf("reader says valid=%v for %q, encoding/json %v", got, b, want)
		}
	})
}

func TestJSONReaderDepth(t *testing.T) {
	for _, n := range []int{maxJSONDepth - 1, maxJSONDepth, maxJSONDepth + 1} {
		for _, open := range []string{"[", `{"a":`} {
			closer := "]"
			if open != "[" {
				closer = "}"
			}
			b := []byte(strings.Repeat(open, n) + strings.Repeat(closer, n))
			var r jsonReader
			r.reset(b, 0, 0)
			r.skip()
			if got, want := !r.bad && r.i == len(b), json.Valid(b); got != want {
				t.Errorf("depth %d %q: valid=%v, encoding/json %v", n, open, got, want)
			}
		}
	}
}

func FuzzAppendUnquoted(f *testing.F) {
	for _, s := range jsonScanSeeds {
		f.Add([]byte(strings.Trim(s, `"`)), 3)
	}
	f.Fuzz(func(t *testing.T, raw []byte, limit int) {
		lit := append(append([]byte{'"'}, raw...), '"')
		var want string
		if json.Unmarshal(lit, &want) != nil {
			// Not a valid literal: only an invalid escape must be noticed,
			// and the reader must reject it.
			var r jsonReader
			r.reset(lit, 0, 0)
			r.str()
			if !r.bad && r.i == len(lit) {
				t.Fatalf("reader accepts %q, encoding/json does not", lit)
			}
			return
		}
		got, more, ok := AppendUnquoted(nil, raw, -1)
		if !ok || more || string(got) != want {
			t.Fatalf("appendUnquoted(%q) = %q %v %v, want %q", raw, got, more, ok, want)
		}
		limit %= len(want) + 8
		if limit < 0 {
			limit = -limit
		}
		pre, more, ok := AppendUnquoted([]byte("x"), raw, limit)
		pre = pre[1:]
		if !ok || !strings.HasPrefix(want, string(pre)) || more != (len(pre) < len(want)) || (more && len(pre) < limit) {
			t.Fatalf("appendUnquoted(%q, %d) = %q more=%v ok=%v; full %q", raw, limit, pre, more, ok, want)
		}
		// A literal cut anywhere decodes like encoding/json decodes the
		// cut literal, or fails like it (the old stringPrefix relied on it).
		for cut := 0; cut <= len(raw); cut++ {
			var w string
			werr := json.Unmarshal(append(append([]byte{'"'}, raw[:cut]...), '"'), &w)
			g, _, gok := AppendUnquoted(nil, raw[:cut], -1)
			if werr == nil && (!gok || string(g) != w) {
				t.Fatalf("cut %q: got %q %v, want %q", raw[:cut], g, gok, w)
			}
		}
	})
}

// fieldTest is a struct whose field names cover what the decoders match:
// snake case, camel case, and letters that fold to non-ASCII runes (k, s).
type fieldTest struct {
	Type      *int `json:"type"`
	PreTokens *int `json:"preTokens"`
	HookEvent *int `json:"hookEvent"`
	ToolUseID *int `json:"tool_use_id"`
	ID        *int `json:"id"`
}

var fieldTestSet = newFieldSet("type", "preTokens", "hookEvent", "tool_use_id", "id")

func FuzzFieldIndex(f *testing.F) {
	for _, k := range []string{"type", "TYPE", "Type", `t\u0079pe`, "preTokens", "pretokens", "PRE\u212aTOKENS", "pre\u017fTokens",
		`pre\u212Aokens`, "hookevent", "HOOKEVENT", "tool_use_id", "TOOL_USE_ID", "tool-use-id", "id", "ID", "Id", "\u0130d", "\xffid", "ids", ""} {
		f.Add([]byte(k))
	}
	f.Fuzz(func(t *testing.T, key []byte) {
		obj := append(append([]byte(`{"`), key...), `":1}`...)
		var v fieldTest
		if json.Unmarshal(obj, &v) != nil {
			return
		}
		want := -1
		for i, p := range []*int{v.Type, v.PreTokens, v.HookEvent, v.ToolUseID, v.ID} {
			if p != nil {
				want = i
			}
		}
		if got := fieldTestSet.fieldIndex(key); got != want {
			t.Fatalf("fieldIndex(%q) = %d, encoding/json decodes field %d", key, got, want)
		}
	})
}
