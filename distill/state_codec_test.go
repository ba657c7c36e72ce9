package distill_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
)

// fixtureRows parses one JSONL fixture as rowsOf does, for benchmarks too.
func fixtureRows(tb testing.TB, tool, path string) []ledger.Row {
	tb.Helper()
	a, err := adapters.Lookup(tool)
	if err != nil {
		tb.Fatal(err)
	}
	lp, ok := a.(adapters.LineParser)
	if !ok {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var out []ledger.Row
	var off int64
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			break
		}
		rs, _ := lp.ParseLine(bytes.TrimSuffix(line, []byte("\n")), off)
		off += int64(len(line))
		for _, r := range rs {
			out = append(out, ledger.Row{Row: r, Tool: tool, SessionID: 1, Seq: int64(len(out) + 1)})
		}
	}
	return out
}

// fixtureFiles lists the JSONL fixtures of every line-parsing agent.
func fixtureFiles(tb testing.TB) []string {
	tb.Helper()
	files, _ := filepath.Glob("../testdata/adapters/*/*.jsonl")
	var out []string
	for _, f := range files {
		a, err := adapters.Lookup(filepath.Base(filepath.Dir(f)))
		if err != nil {
			continue
		}
		if _, ok := a.(adapters.LineParser); ok {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		tb.Fatal("no fixtures")
	}
	return out
}

// fixturesState folds every fixture's rows: a typical state, 18 KB as JSON.
func fixturesState(tb testing.TB) *distill.State {
	tb.Helper()
	st := distill.NewState()
	for _, f := range fixtureFiles(tb) {
		rows := fixtureRows(tb, filepath.Base(filepath.Dir(f)), f)
		for i := range rows {
			st.Add(&rows[i])
		}
	}
	return st
}

// fullState folds every fixture's rows, then synthetic ones until every
// bound of the state is reached: the largest state the hook path stores
// (bar unusually long texts).
func fullState(tb testing.TB) *distill.State {
	tb.Helper()
	st := fixturesState(tb)
	t0 := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	add := func(r adapters.Row) {
		r.Time = t0
		t0 = t0.Add(1500 * time.Millisecond)
		st.Add(&ledger.Row{Row: r, Tool: "claude", SessionID: 7})
	}
	for i := range 150 {
		id := fmt.Sprintf("toolu_%024d", i)
		add(adapters.Row{Kind: adapters.KindPrompt, Role: "user", Text: fmt.Sprintf("Please refactor the retry helper in module %d so the backoff is configurable, and keep the tests green", i)})
		add(adapters.Row{Kind: adapters.KindText, Role: "assistant", Text: fmt.Sprintf("We decided to use %s for the %s of client %d. Next I will update the call sites and run the test suite.", alpha(i), alpha(i+1000), i)})
		add(adapters.Row{Kind: adapters.KindToolCall, ToolName: "Edit", CallID: id + "e", FilePath: fmt.Sprintf("/home/dev-a/src/retrylib/pkg/retry/backoff_%d.go", i%80),
			Text: fmt.Sprintf("func backoff(n int) time.Duration {\n\t// TODO: cap the delay for attempt %d\n\treturn time.Second << n\n}", i)})
		add(adapters.Row{Kind: adapters.KindToolResult, CallID: id + "e", Text: "ok"})
		add(adapters.Row{Kind: adapters.KindToolCall, ToolName: "Bash", CallID: id + "b", Command: fmt.Sprintf("go test ./pkg/retry%d/... -run TestBackoff%d -count=1", i, i)})
		add(adapters.Row{Kind: adapters.KindError, CallID: id + "b", ExitCode: exitCode(1), Text: fmt.Sprintf("Exit code 1\n--- FAIL: TestBackoff%d (0.00s)\n    backoff_test.go:42: expected 2s, got 4s\nFAIL", i)})
		add(adapters.Row{Kind: adapters.KindUsage, TokensUsed: int64(40000 + i), TokensMax: 200000})
	}
	for i := range 60 { // a long last turn fills TurnTexts
		add(adapters.Row{Kind: adapters.KindText, Role: "assistant", Text: fmt.Sprintf("Step %d: the backoff now doubles per attempt and is capped at thirty seconds; should the cap be configurable per client?", i)})
	}
	return st
}

func exitCode(n int) *int { return &n }

// alpha is a word of six letters unique to i (decisions on distinct
// subjects do not supersede each other).
func alpha(i int) string {
	b := []byte("zzzzzz")
	for j := 5; j >= 0 && i > 0; j-- {
		b[j] = byte('a' + i%26)
		i /= 26
	}
	return string(b)
}

// benchStates are the states the benchmarks encode and decode.
var benchStates = []struct {
	name  string
	state func(testing.TB) *distill.State
}{{"fixtures", fixturesState}, {"full", fullState}}

func BenchmarkStateMarshal(b *testing.B) {
	for _, bs := range benchStates {
		b.Run(bs.name, func(b *testing.B) {
			st := bs.state(b)
			buf := st.Marshal()
			b.ReportAllocs()
			for b.Loop() {
				st.Marshal()
			}
			b.ReportMetric(float64(len(buf)), "state-bytes")
		})
	}
}

func BenchmarkStateLoad(b *testing.B) {
	for _, bs := range benchStates {
		b.Run(bs.name, func(b *testing.B) {
			buf := bs.state(b).Marshal()
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := distill.LoadState(buf); !ok {
					b.Fatal("state did not load")
				}
			}
			b.ReportMetric(float64(len(buf)), "state-bytes")
		})
	}
}

// roundTrip marshals st and loads it back, failing the test unless the
// result is deeply equal to st and marshals to the same bytes.
func roundTrip(tb testing.TB, st *distill.State) *distill.State {
	tb.Helper()
	b := st.Marshal()
	got, ok := distill.LoadState(b)
	if !ok {
		tb.Fatalf("state of %d bytes did not load", len(b))
	}
	if !reflect.DeepEqual(got, st) {
		tb.Fatalf("state changed in a round trip:\n got %+v\nwant %+v", got, st)
	}
	if b2 := got.Marshal(); !bytes.Equal(b, b2) {
		tb.Fatal("a loaded state marshals to other bytes")
	}
	return got
}

// fill sets every field reachable from v to a non-zero value, distinct per
// field (n counts them), so a field the codec skips or misplaces shows.
func fill(t *testing.T, v reflect.Value, path string, n *int) {
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("%s#%d", path, *n))
	case reflect.Int, reflect.Int64:
		x := int64(*n) * 1000003
		if *n%2 == 0 {
			x = -x // zig-zag both ways
		}
		v.SetInt(x)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), path, n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(t, v.Index(i), fmt.Sprintf("%s[%d]", path, i), n)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for i := range 3 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(t, k, fmt.Sprintf("%s.key%d", path, i), n)
			fill(t, e, fmt.Sprintf("%s[key%d]", path, i), n)
			v.SetMapIndex(k, e)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			// UTC without a monotonic reading, as Add keeps times.
			v.Set(reflect.ValueOf(time.Unix(1_700_000_000+int64(*n)*86400, int64(*n)*1_000_001).UTC()))
			return
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				t.Fatalf("%s.%s is unexported: teach fill and the codec about it", path, f.Name)
			}
			fill(t, v.Field(i), path+"."+f.Name, n)
		}
	default:
		t.Fatalf("%s: fill does not know %s; teach it, and the codec in distill.go", path, v.Type())
	}
}

// TestStateCodecFields fails when a field of State (or of a type it holds)
// is not in the encoding: a State with every field set must round-trip.
func TestStateCodecFields(t *testing.T) {
	var st distill.State
	n := 0
	fill(t, reflect.ValueOf(&st).Elem(), "State", &n)
	st.Version = distill.StateVersion // the encoding's header
	st.Calls[""] = distill.Call{}     // the smallest key, and a zero value
	st.FailedCalls["false"] = false
	b := st.Marshal()
	got, ok := distill.LoadState(b)
	if !ok {
		t.Fatal("a fully populated state did not load")
	}
	want, gv := reflect.ValueOf(st), reflect.ValueOf(*got)
	for i := range want.NumField() {
		name := want.Type().Field(i).Name
		if want.Field(i).IsZero() {
			t.Errorf("State.%s is zero: fill missed it", name)
		}
		if !reflect.DeepEqual(gv.Field(i).Interface(), want.Field(i).Interface()) {
			t.Errorf("State.%s does not round-trip (add it to codec.state in distill.go):\n got %#v\nwant %#v",
				name, gv.Field(i).Interface(), want.Field(i).Interface())
		}
	}
	roundTrip(t, &st)
}

// TestStateCodecZeroElements: elements at their smallest encoding load,
// however many, one list at a time (so the decoder's per-element minimum
// sizes are not set too high), and nil and empty slices stay as they were.
func TestStateCodecZeroElements(t *testing.T) {
	const n = 1000
	for name, set := range map[string]func(st *distill.State){
		"Edits":       func(st *distill.State) { st.Edits = make([]distill.Edit, n) },
		"Failures":    func(st *distill.State) { st.Failures, st.FailureKeys = make([]distill.Failure, n), make([]string, n) },
		"Done":        func(st *distill.State) { st.Done = make([]distill.Done, n) },
		"TestFails":   func(st *distill.State) { st.TestFails = make([]int64, n) },
		"Seen":        func(st *distill.State) { st.Seen = make([]string, n) },
		"Todos":       func(st *distill.State) { st.Edits = []distill.Edit{{Todos: make([]string, n)}} },
		"empty":       func(st *distill.State) { st.Decided, st.Edits = []string{}, []distill.Edit{{Todos: []string{}}} },
		"Calls":       func(st *distill.State) { addKeys(n, func(k string) { st.Calls[k] = distill.Call{} }) },
		"FailedCalls": func(st *distill.State) { addKeys(n, func(k string) { st.FailedCalls[k] = false }) },
	} {
		st := distill.NewState()
		set(st)
		t.Run(name, func(t *testing.T) { roundTrip(t, st) })
	}
	roundTrip(t, &distill.State{Version: distill.StateVersion, Calls: map[string]distill.Call{}, FailedCalls: map[string]bool{}})
}

// addKeys adds n keys, the shortest possible: "" and then one or two bytes.
func addKeys(n int, add func(string)) {
	add("")
	for i := range n - 1 {
		if i < 256 {
			add(string([]byte{byte(i)}))
		} else {
			add(string([]byte{byte(i >> 8), byte(i)}))
		}
	}
}

// TestStateRoundTripFixtures folds every fixture twice: once straight, once
// through Marshal and LoadState after every row. The two states stay deeply
// equal and give the same handoff.
func TestStateRoundTripFixtures(t *testing.T) {
	o := distill.Options{Project: "/home/dev-a/src/retrylib"}
	for _, f := range fixtureFiles(t) {
		t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
			rows := fixtureRows(t, filepath.Base(filepath.Dir(f)), f)
			live, hop := distill.NewState(), distill.NewState()
			for i := range rows {
				live.Add(&rows[i])
				hop.Add(&rows[i])
				hop = roundTrip(t, hop)
				if !reflect.DeepEqual(live, hop) {
					t.Fatalf("row %d: reloaded state differs from the live one", i)
				}
			}
			want := live.Handoff(o)
			if got := roundTrip(t, live).Handoff(o); !reflect.DeepEqual(got, want) {
				t.Errorf("handoff differs after a round trip:\n got %+v\nwant %+v", got, want)
			}
			if got := hop.Handoff(o); !reflect.DeepEqual(got, want) {
				t.Errorf("incremental handoff differs:\n got %+v\nwant %+v", got, want)
			}
			if want2 := distill.Distill(rows, o); !reflect.DeepEqual(want, want2) {
				t.Errorf("Distill differs from the fold")
			}
		})
	}
}

// TestStateFull: the benchmark's state reaches every bound and round-trips.
func TestStateFull(t *testing.T) {
	st := fullState(t)
	for name, n := range map[string][2]int{
		"Calls": {len(st.Calls), 64}, "CallOrder": {len(st.CallOrder), 64}, "Edits": {len(st.Edits), 60},
		"Failures": {len(st.Failures), 100}, "Done": {len(st.Done), 40}, "Decided": {len(st.Decided), 6},
		"Seen": {len(st.Seen), 120}, "TurnTexts": {len(st.TurnTexts), 50}, "TestFails": {len(st.TestFails), 8},
	} {
		if n[0] != n[1] {
			t.Errorf("full state has %d %s, want %d", n[0], name, n[1])
		}
	}
	o := distill.Options{Project: "/home/dev-a/src/retrylib"}
	if got, want := roundTrip(t, st).Handoff(o), st.Handoff(o); !reflect.DeepEqual(got, want) {
		t.Errorf("handoff differs after a round trip")
	}
	b := st.Marshal()
	j, _ := json.Marshal(st)
	t.Logf("full state: %d bytes (JSON %d)", len(b), len(j))
}

// TestStateTimesNormalised: rows with monotonic readings or other zones
// fold into UTC times, so the state round-trips exactly and the handoff
// reports the same instants.
func TestStateTimesNormalised(t *testing.T) {
	zone := time.FixedZone("CET", 3600)
	st := distill.NewState()
	times := []time.Time{time.Now(), time.Date(2026, 3, 1, 9, 30, 0, 123456789, zone), time.Date(2026, 3, 1, 9, 31, 0, 0, time.Local), {}}
	for i, at := range times {
		id := fmt.Sprint(i)
		for _, r := range []adapters.Row{
			{Kind: adapters.KindPrompt, Text: "Rewrite the config loader to read TOML files"},
			{Kind: adapters.KindToolCall, ToolName: "Bash", CallID: id, Command: "go test ./..."},
			{Kind: adapters.KindError, CallID: id, Text: "FAIL config_test.go"},
			{Kind: adapters.KindToolCall, ToolName: "Write", CallID: id + "w", FilePath: "/p/config.go"},
			{Kind: adapters.KindCompaction, Text: "Summary: the config loader now reads TOML files and the tests are green."},
		} {
			r.Time = at
			st.Add(&ledger.Row{Row: r, Tool: "claude", SessionID: 1})
		}
	}
	if !st.LastAt.Equal(times[0]) || st.LastAt.Location() != time.UTC {
		t.Errorf("LastAt = %v, want %v in UTC", st.LastAt, times[0])
	}
	got := roundTrip(t, st)
	if !reflect.DeepEqual(got.Handoff(distill.Options{Project: "/p"}), st.Handoff(distill.Options{Project: "/p"})) {
		t.Error("handoff differs after a round trip")
	}
	// Times a UnixNano could not hold survive too.
	for _, at := range []time.Time{time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Unix(-1, 999999999).UTC()} {
		st := distill.NewState()
		st.TaskAt = at
		if got := roundTrip(t, st); !got.TaskAt.Equal(at) {
			t.Errorf("time %v came back as %v", at, got.TaskAt)
		}
	}
}

// TestStateDeterministic: the same state gives the same bytes, whatever
// order its maps were filled in.
func TestStateDeterministic(t *testing.T) {
	a, b := distill.NewState(), distill.NewState()
	keys := make([]string, 200)
	for i := range keys {
		keys[i] = fmt.Sprintf("claude\x00toolu_%d", i*7919%1000)
	}
	for i := range keys {
		a.Calls[keys[i]] = distill.Call{ToolName: "Bash", Command: keys[i]}
		a.FailedCalls[keys[i]] = i%3 == 0
		j := len(keys) - 1 - i
		b.Calls[keys[j]] = distill.Call{ToolName: "Bash", Command: keys[j]}
		b.FailedCalls[keys[j]] = j%3 == 0
	}
	want := a.Marshal()
	for range 20 {
		if x := a.Marshal(); !bytes.Equal(x, want) {
			t.Fatal("Marshal is not deterministic")
		}
		if x := b.Marshal(); !bytes.Equal(x, want) {
			t.Fatal("map insertion order changes the encoding")
		}
	}
	full := fullState(t)
	x := full.Marshal()
	y := fullState(t).Marshal()
	z := roundTrip(t, full).Marshal()
	if !bytes.Equal(x, y) || !bytes.Equal(x, z) {
		t.Fatal("the same rows give different bytes")
	}
}

func validBlob(t *testing.T) []byte {
	t.Helper()
	st := distill.NewState()
	rows := fixtureRows(t, "claude", "../testdata/adapters/claude/session-tools.jsonl")
	for i := range rows {
		st.Add(&rows[i])
	}
	b := st.Marshal()
	return b
}

// checkLoad loads b, which must not panic; a state it accepts re-encodes to
// b exactly.
func checkLoad(t testing.TB, b []byte) bool {
	t.Helper()
	st, ok := distill.LoadState(b)
	if !ok {
		if st != nil {
			t.Fatal("LoadState returned a state with ok false")
		}
		return false
	}
	if b2 := st.Marshal(); !bytes.Equal(b, b2) {
		t.Fatalf("accepted %x but it re-encodes as %x", b, b2)
	}
	return true
}

func TestLoadStateRejects(t *testing.T) {
	valid := validBlob(t)
	header := binary.AppendUvarint([]byte("CS"), distill.StateVersion)
	old := distill.NewState()
	old.Task = "Add a retry helper"
	oldJSON, _ := json.Marshal(old)
	for name, b := range map[string][]byte{
		"nil":             nil,
		"empty":           {},
		"JSON v1":         bytes.Replace(oldJSON, []byte(`"Version":2`), []byte(`"Version":1`), 1),
		"JSON v2":         oldJSON,
		"JSON null":       []byte("null"),
		"magic only":      []byte("CS"),
		"header only":     header,
		"version 1":       append(binary.AppendUvarint([]byte("CS"), 1), valid[len(header):]...),
		"version 2":       append(binary.AppendUvarint([]byte("CS"), 2), valid[len(header):]...),
		"version 3":       append(binary.AppendUvarint([]byte("CS"), 3), valid[len(header):]...),
		"overlong header": append([]byte{'C', 'S', 0x80 | distill.StateVersion, 0}, valid[len(header):]...),
		"bad magic":       append([]byte("CT"), valid[2:]...),
		"trailing byte":   append(bytes.Clone(valid), 0),
		"huge string":     binary.AppendUvarint(bytes.Clone(header), 1<<62),
		"max string":      binary.AppendUvarint(bytes.Clone(header), 1<<64-1),
		"overflow varint": append(bytes.Clone(header), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
		// The empty state with one field broken (see emptyWith).
		"huge map":        emptyWith(header, map[int][]byte{12: uv(16)}),
		"huge list":       emptyWith(header, map[int][]byte{13: uv(1 << 34)}),
		"overlong length": emptyWith(header, map[int][]byte{13: {0x81, 0}}),
		"bad bool":        emptyWith(header, map[int][]byte{14: {1, 0, 2}}),
		"keys unsorted":   emptyWith(header, map[int][]byte{14: {2, 1, 'b', 1, 1, 'a', 1}}),
		"duplicate keys":  emptyWith(header, map[int][]byte{14: {2, 1, 'a', 1, 1, 'a', 1}}),
		"long zero time":  emptyWith(header, map[int][]byte{2: append(uv(1), vi(zeroSec)...)}),
		"nanos too big":   emptyWith(header, map[int][]byte{2: append(uv(1e9+1), vi(0)...)}),
		"keys mismatched": emptyWith(header, map[int][]byte{17: append([]byte{2}, make([]byte, 11)...)}),
	} {
		if checkLoad(t, b) {
			t.Errorf("%s: accepted", name)
		}
	}
	// The empty state's encoding, and near misses of the broken blobs
	// above that are fine, so those fail for the reason they name.
	empty := distill.NewState().Marshal()
	if want := emptyWith(header, nil); !bytes.Equal(empty, want) {
		t.Errorf("empty state encodes as %x, want %x", empty, want)
	}
	for name, b := range map[string][]byte{
		"list":      emptyWith(header, map[int][]byte{13: {1}}),
		"bool":      emptyWith(header, map[int][]byte{14: {1, 0, 1}}),
		"keys":      emptyWith(header, map[int][]byte{14: {2, 1, 'a', 1, 1, 'b', 1}}),
		"time":      emptyWith(header, map[int][]byte{2: append(uv(1), vi(zeroSec+1)...)}),
		"nanos":     emptyWith(header, map[int][]byte{2: append(uv(1e9), vi(0)...)}),
		"keys same": emptyWith(header, map[int][]byte{17: append([]byte{2}, make([]byte, 13)...), 18: {2, 0}}), // one zero Failure (13 fields)
	} {
		if !checkLoad(t, b) {
			t.Errorf("%s: a valid blob was rejected: %x", name, b)
		}
	}
	for i := range valid {
		if checkLoad(t, valid[:i]) {
			t.Fatalf("accepted the blob cut at %d of %d bytes", i, len(valid))
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, rng.IntN(200))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		if rng.IntN(2) == 0 && len(b) >= len(header) {
			copy(b, header)
		}
		checkLoad(t, b)
	}
	// Single-byte corruptions must not panic; what loads re-encodes exactly.
	for i := range valid {
		b := bytes.Clone(valid)
		b[i] ^= byte(1 << rng.IntN(8))
		checkLoad(t, b)
	}
}

// emptyWith is the empty state's encoding (one zero byte per value) with
// the values numbered in set encoded as given. The 24 values in order:
// Tool, SessionID, LastAt, Rows, Prompts, Task, TaskAt, Fallback,
// FallbackAt, Tokens.Used, Tokens.Max, Seq, Calls (12), CallOrder,
// FailedCalls, Edits, TestFails, Failures (17), FailureKeys, Done, Decided,
// Seen, TurnTexts, LastText.
func emptyWith(header []byte, set map[int][]byte) []byte {
	b := bytes.Clone(header)
	for i := range 65 { // State's fields (codec.state; a Note is 3 bytes, a Ref 2)
		if f, ok := set[i]; ok {
			b = append(b, f...)
		} else {
			b = append(b, 0)
		}
	}
	return b
}

func uv(x uint64) []byte { return binary.AppendUvarint(nil, x) }
func vi(x int64) []byte  { return binary.AppendVarint(nil, x) }

// zeroSec is the zero time's Unix seconds.
var zeroSec = time.Time{}.Unix()

// FuzzLoadState: no input panics LoadState, and whatever it accepts
// re-encodes to the same bytes, loads again equal, and folds rows in.
func FuzzLoadState(f *testing.F) {
	f.Add([]byte(nil))
	f.Add([]byte(`{"Version":1}`))
	empty := distill.NewState().Marshal()
	f.Add(empty)
	for _, name := range []string{"session-tools.jsonl", "session-misc-denied-apierror.jsonl", "session-tui-after-clear.jsonl"} {
		rows := fixtureRows(f, "claude", "../testdata/adapters/claude/"+name)
		st := distill.NewState()
		for i := range rows {
			st.Add(&rows[i])
			if i%20 == 0 || i == len(rows)-1 {
				b := st.Marshal()
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !checkLoad(t, b) {
			return
		}
		st, _ := distill.LoadState(b)
		again, ok := distill.LoadState(b)
		if !ok || !reflect.DeepEqual(st, again) {
			t.Fatal("LoadState is not deterministic")
		}
		_ = st.Handoff(distill.Options{Project: "/p"})
		for _, r := range []adapters.Row{
			{Kind: adapters.KindToolCall, ToolName: "Bash", CallID: "x", Command: "go test ./..."},
			{Kind: adapters.KindError, CallID: "x", Text: "FAIL"},
			{Kind: adapters.KindToolResult, CallID: "x"},
			{Kind: adapters.KindPrompt, Text: "we decided to go with plan B"},
		} {
			st.Add(&ledger.Row{Row: r, Tool: "claude"})
		}
		_ = st.Handoff(distill.Options{})
		roundTrip(t, st)
	})
}
