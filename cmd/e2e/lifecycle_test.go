package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// TestHandoffLifecycle runs the lifecycle with the real CLIs: Claude Code
// publishes HO-x; the user records a decision and pins a task; Codex
// starts and receives HO-x (the decision and the task in its first model
// request) and, while Codex is still waiting on its model, a second Claude
// Code session starts and is told HO-x was already resumed by Codex;
// history shows HO-x consumed by Codex; with expire_after tiny,
// a Gemini CLI session gets the one-line notice only.
func TestHandoffLifecycle(t *testing.T) {
	w := newWorkspace(t, "claude", "codex", "gemini")
	dir := w.project(t, "lifecyclelib")
	env := BaseEnv(w.home)
	s := story{Word: "backoff"}

	runAgent(t, "claude", w.home, dir, s.Task(), s.turns("claude", dir), runOpts{})
	first, _, _ := strings.Cut(w.handoff(t, dir), "\n")
	id := regexp.MustCompile(`HO-\d{8}-\d{6}-[0-9A-Za-z_-]{1,8}$`).FindString(first)
	if id == "" {
		t.Fatalf("the handoff header carries no id: %q", first)
	}

	const decision, task = "Use Postgres advisory locks, not Redis", "Finish the CSV importer, then wire the admin page"
	if out, errs, code := runCarryover(t, env, dir, "decide", decision, "--why", "one service fewer"); code != 0 {
		t.Fatalf("decide exited %d: %s %s", code, out, errs)
	}
	if out, errs, code := runCarryover(t, env, dir, "task", task); code != 0 {
		t.Fatalf("task exited %d: %s %s", code, out, errs)
	}

	// Codex, held at its first model request (its SessionStart hook has
	// run by then) until the parallel Claude session is done.
	f := NewResponses(t, []Turn{{Text: "Resuming. " + s.Next()}})
	gate := newGate(t, f.URL())
	var codex Result
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		codex = RunCodex(t, CodexOpts{Home: w.home, Dir: dir, BaseURL: gate.srv.URL, Prompt: "continue"})
	}()
	gate.waitArrived()
	third := runAgent(t, "claude", w.home, dir, "continue", []Turn{{Text: "I will check with the user first."}}, runOpts{})
	gate.release()
	wg.Wait()
	if codex.ExitCode != 0 {
		t.Fatalf("codex exited %d: %s", codex.ExitCode, codex.String())
	}
	req := firstMain(t, f.MainRequests())
	for _, want := range []string{id, "carryover · lifecyclelib · handoff " + id + " from claude", decision + " (why: one service fewer)", "[pinned by the user", task, "Resuming: " + task} {
		if !strings.Contains(req, want) {
			t.Errorf("codex's first model request lacks %q:\n%.3000s", want, req)
		}
	}
	// Codex published its own handoff at its first prompt (superseding
	// HO-x): the parallel session receives that one, and is told.
	if got := third.first(t); !strings.Contains(got, "> Note: already resumed by codex session ") {
		t.Errorf("the parallel Claude session is not told codex already resumed the task:\n%.3000s", got)
	}

	out, errs, code := runCarryover(t, env, dir, "history", "--json")
	if code != 0 {
		t.Fatalf("history --json exited %d: %s", code, errs)
	}
	var doc struct {
		Handoffs []struct {
			ID         string `json:"id"`
			Status     string `json:"status"`
			Agent      string `json:"agent"`
			ConsumedBy []struct {
				Agent string `json:"agent"`
			} `json:"consumed_by"`
		} `json:"handoffs"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("history --json: %v\n%s", err, out)
	}
	var x *struct {
		ID         string `json:"id"`
		Status     string `json:"status"`
		Agent      string `json:"agent"`
		ConsumedBy []struct {
			Agent string `json:"agent"`
		} `json:"consumed_by"`
	}
	for i := range doc.Handoffs {
		if doc.Handoffs[i].ID == id {
			x = &doc.Handoffs[i]
		}
	}
	if x == nil || x.Status != "consumed" || x.Agent != "claude" || len(x.ConsumedBy) == 0 || x.ConsumedBy[0].Agent != "codex" {
		t.Fatalf("history does not show %s consumed by codex first:\n%s", id, out)
	}
	if out, _, _ := runCarryover(t, env, dir, "history", "show", id[:len(id)-3]); !strings.Contains(out, id) || !strings.Contains(out, s.Task()) {
		t.Errorf("history show %s:\n%s", id[:len(id)-3], out)
	}
	if out, errs, code := runCarryover(t, env, dir, "history", "show", "HO-19990101"); code != 2 || !strings.Contains(errs, "closest: HO-") {
		t.Errorf("history show with a bad id: exit %d, %s %s", code, out, errs)
	}

	// Past expire_after a new session gets one line.
	os.WriteFile(filepath.Join(w.home, ".carryover", "config.toml"), []byte("expire_after = \"1ms\"\n"), 0o600)
	g := runAgent(t, "gemini", w.home, dir, "what next?", []Turn{{Text: "Let me look."}}, runOpts{})
	got := g.first(t)
	if !strings.Contains(got, "carryover: a handoff from ") || !strings.Contains(got, "exists: carryover history show HO-") {
		t.Errorf("gemini did not get the expired-handoff notice:\n%.3000s", got)
	}
	if strings.Contains(got, "## Task") || strings.Contains(got, "# [CARRYOVER] Last updated") {
		t.Errorf("gemini got an expired handoff whole:\n%.3000s", got)
	}
}

// gate is a reverse proxy holding the first model request until released.
type gate struct {
	srv     *httptest.Server
	arrived chan struct{}
	open    chan struct{}
	once    sync.Once
}

func newGate(t *testing.T, target string) *gate {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{arrived: make(chan struct{}), open: make(chan struct{})}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			g.once.Do(func() { close(g.arrived) })
			<-g.open
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { g.release(); g.srv.Close() })
	return g
}

func (g *gate) waitArrived() { <-g.arrived }

func (g *gate) release() {
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}
