package adapters_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
)

// limitRows parses a fixture with an agent's line parser and returns the
// limits its rows carry, in order.
func limitRows(t *testing.T, tool, file string) []adapters.Limit {
	t.Helper()
	a, err := adapters.Lookup(tool)
	if err != nil {
		t.Fatal(err)
	}
	lp := a.(adapters.LineParser)
	b, err := os.ReadFile(filepath.Join("..", "testdata", "limits", file))
	if err != nil {
		t.Fatal(err)
	}
	var out []adapters.Limit
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	var off int64
	for sc.Scan() {
		rows, err := lp.ParseLine(sc.Bytes(), off)
		if err != nil {
			t.Fatalf("%s: ParseLine: %v", file, err)
		}
		off += int64(len(sc.Bytes())) + 1
		for _, r := range rows {
			if r.Limit != nil {
				out = append(out, *r.Limit)
			}
		}
	}
	return out
}

func TestLimitDetection(t *testing.T) {
	utc := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	tests := []struct {
		tool, file string
		want       []adapters.Limit
	}{
		{"claude", "claude-limit.jsonl", []adapters.Limit{
			{Kind: adapters.LimitRate, Reached: true},
			{Kind: adapters.LimitUsage, Reached: true, ResetText: "2pm (Europe/Paris)"},
			{Kind: adapters.LimitUsage, Reached: true, ResetsAt: time.Unix(1763906400, 0).UTC()},
			{Kind: adapters.LimitOverloaded, Reached: true},
		}},
		{"codex", "codex-limit.jsonl", []adapters.Limit{
			{Kind: adapters.LimitUsage, UsedPercent: 93.5, Window: "5h", ResetsAt: time.Unix(1763906400, 0).UTC()},
			{Kind: adapters.LimitUsage, Reached: true, UsedPercent: 100, Window: "5h", ResetsAt: time.Unix(1763906400, 0).UTC()},
			{Kind: adapters.LimitUsage, Reached: true, ResetText: "2:00 PM"},
		}},
		{"gemini", "gemini-limit.jsonl", []adapters.Limit{
			{Kind: adapters.LimitQuota, Reached: true, ResetsAt: utc("2026-11-23T13:58:41Z")},
		}},
		{"copilot-cli", "copilot-cli-limit.jsonl", []adapters.Limit{
			{Kind: adapters.LimitRate, Reached: true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got := limitRows(t, tt.tool, tt.file)
			if len(got) != len(tt.want) {
				t.Fatalf("%s: %d limits %+v; want %d", tt.file, len(got), got, len(tt.want))
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("%s limit %d = %+v; want %+v", tt.file, i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestLimitFalsePositives: sessions about HTTP 429 handling, rate limiters
// in code and "quota" in file contents and tool output detect nothing.
func TestLimitFalsePositives(t *testing.T) {
	for tool, file := range map[string]string{
		"claude": "claude-false-positive.jsonl", "codex": "codex-false-positive.jsonl",
		"gemini": "gemini-false-positive.jsonl", "copilot-cli": "copilot-cli-false-positive.jsonl",
	} {
		if got := limitRows(t, tool, file); len(got) != 0 {
			t.Errorf("%s: detected %+v; want nothing", file, got)
		}
	}
}

func TestLimitFromError(t *testing.T) {
	at := time.Date(2026, 11, 23, 14, 0, 0, 0, time.UTC)
	tests := []struct {
		text   string
		status int
		kind   adapters.LimitKind // "" = not a limit
		resets string
	}{
		{"API Error: 400 bad request", 400, "", ""},
		{"API Error: 401 authentication_error", 401, "", ""},
		{"API Error: 500 internal", 500, "", ""},
		{"prompt is too long: 210000 tokens > 200000 maximum", 400, "", ""},
		{"API Error: 429 rate_limit_error", 429, adapters.LimitRate, ""},
		{"Too Many Requests", 0, adapters.LimitRate, ""},
		{"You've hit your session limit · resets 6:40pm", 429, adapters.LimitUsage, "6:40pm"},
		{"insufficient_quota: You exceeded your current quota", 429, adapters.LimitQuota, ""},
		{"rate limited, try again in 20s", 0, adapters.LimitRate, "14:00"},
		{"rate limited, retry after 90 minutes", 0, adapters.LimitRate, "15:30"},
		{"Too many requests. Try again in 2 hours", 0, adapters.LimitRate, "16:00"},
		{"server overloaded", 0, adapters.LimitOverloaded, ""},
		{"API Error: 529", 529, adapters.LimitOverloaded, ""},
	}
	for _, tt := range tests {
		l := adapters.LimitFromError(tt.text, tt.status, at)
		switch {
		case tt.kind == "" && l != nil:
			t.Errorf("LimitFromError(%q, %d) = %+v; want nil", tt.text, tt.status, l)
		case tt.kind != "" && l == nil:
			t.Errorf("LimitFromError(%q, %d) = nil; want %s", tt.text, tt.status, tt.kind)
		case l != nil && (l.Kind != tt.kind || l.Resets(at, time.UTC) != tt.resets):
			t.Errorf("LimitFromError(%q, %d) = %s resets %q; want %s resets %q", tt.text, tt.status, l.Kind, l.Resets(at, time.UTC), tt.kind, tt.resets)
		}
	}
	if got := adapters.APIErrorStatus("API Error: 429 {}"); got != 429 {
		t.Errorf("APIErrorStatus = %d; want 429", got)
	}
	if got := adapters.APIErrorStatus("API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit"); got != 429 {
		t.Errorf("APIErrorStatus(rejected) = %d; want 429", got)
	}
	if got := adapters.APIErrorStatus("API Error: 400 the body mentions (429)"); got != 400 {
		t.Errorf("APIErrorStatus(400 quoting 429) = %d; want 400", got)
	}
	if got := adapters.APIErrorStatus("the API Error: 429 happened"); got != 0 {
		t.Errorf("APIErrorStatus(mid-text) = %d; want 0", got)
	}
}

func TestClaudeStopFailureHook(t *testing.T) {
	tests := []struct {
		payload string
		want    adapters.LimitKind
	}{
		{`{"session_id":"s","hook_event_name":"StopFailure","error":"rate_limit","last_assistant_message":"You've hit your limit · resets 2pm"}`, adapters.LimitUsage},
		{`{"session_id":"s","hook_event_name":"StopFailure","error":"rate_limit","last_assistant_message":"API Error: 429"}`, adapters.LimitRate},
		{`{"session_id":"s","hook_event_name":"StopFailure","error":"overloaded","last_assistant_message":"API Error: 529 Overloaded"}`, adapters.LimitOverloaded},
		{`{"session_id":"s","hook_event_name":"StopFailure","error":"unknown","last_assistant_message":"API Error: 400 fake failure"}`, ""},
		{`{"session_id":"s","hook_event_name":"StopFailure","error":"invalid_request","last_assistant_message":"API Error: 400 the file discusses 429 rate limits"}`, ""},
		{`{"session_id":"s","hook_event_name":"Stop","error":"rate_limit"}`, ""},
	}
	for _, tt := range tests {
		h, err := adapters.Claude.ParseHook("", []byte(tt.payload), adapters.Env{})
		if err != nil {
			t.Fatal(err)
		}
		var got adapters.LimitKind
		if h.Limit != nil {
			got = h.Limit.Kind
		}
		if got != tt.want {
			t.Errorf("ParseHook(%s).Limit = %q; want %q", tt.payload, got, tt.want)
		}
	}
}

// FuzzLimitFromError: any error text classifies without panicking, to a
// known kind, with a short reset text.
func FuzzLimitFromError(f *testing.F) {
	for _, s := range []string{"API Error: 429 {}", "You've hit your limit · resets 2pm (Europe/Paris)", "Claude AI usage limit reached|1763906400",
		"rate limited, try again in 20s", "[API Error: {\"error\":{\"code\":429,\"status\":\"RESOURCE_EXHAUSTED\"}}]", "API Error: Request rejected (429) · x"} {
		f.Add(s, 0)
		f.Add(s, 429)
	}
	at := time.Date(2026, 11, 23, 14, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string, status int) {
		l := adapters.LimitFromError(s, status, at)
		_ = adapters.APIErrorStatus(s)
		if l == nil {
			return
		}
		switch l.Kind {
		case adapters.LimitUsage, adapters.LimitRate, adapters.LimitQuota, adapters.LimitOverloaded:
		default:
			t.Fatalf("kind %q", l.Kind)
		}
		if len(l.ResetText) > 48 || !l.Reached {
			t.Fatalf("%+v", l)
		}
		_ = l.Resets(at, time.UTC)
		_ = l.Phrase()
	})
}
