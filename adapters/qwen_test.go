package adapters_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
)

// TestQwenAwaitFlush: a Stop hook waits until Qwen Code's queued write of
// the last reply it names reaches the chat file, and gives up at once when
// the payload names none.
func TestQwenAwaitFlush(t *testing.T) {
	a, _ := adapters.ByName("qwen")
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(`{"uuid":"u1","type":"user","message":{"role":"user","parts":[{"text":"Tidy <b> & the log"}]}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	payload := `{"session_id":"s","transcript_path":"` + path + `","cwd":"/p","hook_event_name":"Stop","last_assistant_message":"Tidied the log <b> and done."}`
	h, err := a.Adapter.ParseHook("Stop", []byte(payload), adapters.Env{})
	if err != nil || h.FlushMark != `{"text":"Tidied the log ` {
		t.Fatalf("FlushMark = %q (%v)", h.FlushMark, err)
	}
	if a.AwaitFlush(h, adapters.Env{}, time.Now()) {
		t.Fatal("the reply is not on disk yet")
	}
	done := make(chan bool)
	go func() { done <- a.AwaitFlush(h, adapters.Env{}, time.Now().Add(time.Minute)) }()
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"uuid":"u2","type":"assistant","message":{"role":"model","parts":[{"text":"Tidied the log <b> and done."}]}}` + "\n")
	f.Close()
	if !<-done {
		t.Fatal("AwaitFlush did not see the appended reply")
	}
	h, _ = a.Adapter.ParseHook("Stop", []byte(`{"session_id":"s","transcript_path":"`+path+`","last_assistant_message":"«ok»"}`), adapters.Env{})
	if h.FlushMark != "" || a.AwaitFlush(h, adapters.Env{}, time.Now().Add(time.Minute)) {
		t.Fatalf("a reply starting outside ASCII must not be awaited (mark %q)", h.FlushMark)
	}
}
