package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/specs"
)

// agentEvents are the native hook events carryover registers per agent at
// the pinned versions; TestAgentEventsMatchSpecs keeps them equal to
// specs/tools.toml.
var agentEvents = map[string][]string{
	"claude":      claudeEvents,
	"codex":       {"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "PreCompact", "Interrupt", "SessionEnd"},
	"gemini":      {"SessionStart", "AfterAgent", "SessionEnd"},
	"copilot-cli": {"sessionStart", "userPromptSubmitted", "postToolUse", "postToolUseFailure", "agentStop", "preCompact", "sessionEnd"},
	"qwen":        {"SessionStart", "Stop", "PreCompact", "SessionEnd"},
	// written by `carryover install` itself (whole files, wholefile_test.go)
	"pi":    {"SessionStart", "Stop", "PreCompact", "SessionEnd"},
	"cline": {"TaskStart", "TaskResume", "TaskComplete", "TaskCancel"},
	// relayed by the plugin `carryover install` writes (opencode_test.go)
	"opencode": {"SessionStart", "Stop", "PreCompact", "StopFailure"},
	"kilo":     {"SessionStart", "Stop", "PreCompact", "StopFailure"},
}

// TestAgentEventsMatchSpecs: the hooks the end-to-end tests install are the
// ones `carryover install` would install for the pinned agent versions.
func TestAgentEventsMatchSpecs(t *testing.T) {
	tab, err := specs.Load()
	if err != nil {
		t.Fatal(err)
	}
	for tool, want := range agentEvents {
		c, err := tab.Resolve(tool, Pinned[tool].Version)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		var got []string
		for _, h := range c.Hooks() {
			got = append(got, h.Native)
		}
		a, b := slices.Clone(got), slices.Clone(want)
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(a, b) {
			t.Errorf("%s %s: specs register %v, the e2e tests %v", tool, Pinned[tool].Version, got, want)
		}
	}
}

// agentHooks maps each of tool's events to carryover's hook command.
func agentHooks(tool string) map[string]string {
	hooks := map[string]string{}
	for _, ev := range agentEvents[tool] {
		hooks[ev] = hookCommand(tool, ev)
	}
	return hooks
}

// workspace is a temp HOME holding carryover's hooks for some agents, and
// the projects (git repos) the agents run in.
type workspace struct {
	root, home string
}

// newWorkspace writes carryover's user-level hooks for tools into a fresh HOME.
func newWorkspace(t *testing.T, tools ...string) *workspace {
	t.Helper()
	root := t.TempDir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	w := &workspace{root: root, home: filepath.Join(root, "home")}
	for _, tool := range tools {
		var err error
		switch tool {
		case "claude":
			err = WriteClaudeHooks(w.home, agentHooks(tool))
		case "codex":
			err = WriteCodexHooks(w.home, agentHooks(tool))
		case "gemini":
			err = WriteGeminiHooks(w.home, agentHooks(tool))
		case "copilot-cli":
			err = WriteCopilotHooks(w.home, agentHooks(tool))
		case "qwen":
			err = WriteQwenHooks(w.home, agentHooks(tool))
		case "pi", "cline":
			// hook files `carryover install` writes: the tests run it
		default:
			t.Fatalf("no real CLI for %q", tool)
		}
		if err != nil {
			t.Fatalf("writing %s hooks: %v", tool, err)
		}
	}
	return w
}

// project makes a git project root/src/name (README.md "# demo").
func (w *workspace) project(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(w.root, "src", name)
	InitGitRepo(t, dir)
	return dir
}

func (w *workspace) log() string {
	b, _ := os.ReadFile(filepath.Join(w.home, ".carryover", "carryover.log"))
	return string(b)
}

// handoff returns dir's .carryover/handoff.md, failing with carryover.log.
func (w *workspace) handoff(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ".carryover", "handoff.md"))
	if err != nil {
		t.Fatalf("no handoff in %s: %v\ncarryover.log:\n%s", filepath.Base(dir), err, w.log())
	}
	return string(b)
}

// hookRuns counts carryover.log "done" lines per "tool event".
func (w *workspace) hookRuns() map[string]int {
	re := regexp.MustCompile(`snapshot tool=(\S+) event=(\S+) .*done in `)
	n := map[string]int{}
	for _, m := range re.FindAllStringSubmatch(w.log(), -1) {
		n[m[1]+" "+m[2]]++
	}
	return n
}

// lastRun is the last carryover.log "done" line of tool's event ("" if none).
func (w *workspace) lastRun(tool, event string) string {
	last := ""
	for _, ln := range strings.Split(w.log(), "\n") {
		if strings.Contains(ln, "snapshot tool="+tool+" event="+event+" ") && strings.Contains(ln, " done in ") {
			last = ln
		}
	}
	return last
}

// rowsAdded is the rows+N figure of a carryover.log line (-1 if absent).
func rowsAdded(line string) int {
	m := regexp.MustCompile(` rows\+(\d+) `).FindStringSubmatch(line)
	if m == nil {
		return -1
	}
	n := 0
	fmt.Sscan(m[1], &n)
	return n
}

// sessions lists the ledger's sessions of tool in dir.
func (w *workspace) sessions(t *testing.T, dir, tool string) []ledger.Session {
	t.Helper()
	l, err := ledger.Open(filepath.Join(w.home, ".carryover"))
	if err != nil {
		t.Fatalf("open ledger: %v", err)
	}
	defer l.Close()
	ss, err := l.Sessions(dir, tool, 50)
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

// story is a scripted working session: create a file, edit README.md, a
// shell command that really fails (ls exits 2), a decision and a next step.
type story struct {
	Word string // distinctive name: <word>.py, the task, the next step
}

func (s story) Task() string {
	return fmt.Sprintf("Add a %s helper in %s.py, document it, and run the tests", s.Word, s.Word)
}
func (s story) File() string { return s.Word + ".py" }
func (s story) Next() string {
	return fmt.Sprintf("Next I will add the %s test in tests/test_%s.py.", s.Word, s.Word)
}

const (
	storyDecision = "We decided to use a plain loop instead of a decorator because the helper must stay dependency-free."
	storyFailCmd  = "ls tests/ && python3 -m unittest"
)

func (s story) content() string {
	return "def " + s.Word + "(fn, attempts=3):\n    for i in range(attempts):\n        try:\n            return fn()\n        except Exception:\n            pass\n"
}
func (s story) docLine() string { return s.Word + "(fn) retries fn up to three times." }

// turns is the story scripted with tool's own tool names.
func (s story) turns(tool, dir string) []Turn {
	file, readme := filepath.Join(dir, s.File()), filepath.Join(dir, "README.md")
	intro := "I'll create the " + s.Word + " helper first."
	final := "The test run failed: there is no tests/ directory yet. " + s.Next()
	var create, edit, shell []Call
	switch tool {
	case "claude":
		create = []Call{{Name: "Write", Args: map[string]any{"file_path": file, "content": s.content()}}}
		edit = []Call{{Name: "Edit", Args: map[string]any{"file_path": readme, "old_string": "# demo\n", "new_string": "# demo\n\n" + s.docLine() + "\n"}}}
		shell = []Call{{Name: "Bash", Args: map[string]any{"command": storyFailCmd, "description": "Run the unit tests"}}}
	case "codex":
		var add strings.Builder
		for _, ln := range strings.SplitAfter(strings.TrimSuffix(s.content(), "\n"), "\n") {
			add.WriteString("+" + ln)
		}
		create = []Call{{Name: "apply_patch", Args: map[string]any{"input": "*** Begin Patch\n*** Add File: " + s.File() + "\n" + add.String() + "\n*** End Patch\n"}}}
		edit = []Call{{Name: "apply_patch", Args: map[string]any{"input": "*** Begin Patch\n*** Update File: README.md\n@@\n # demo\n+\n+" + s.docLine() + "\n*** End Patch\n"}}}
		shell = []Call{{Name: "shell", Args: map[string]any{"command": storyFailCmd}}}
	case "gemini":
		create = []Call{{Name: "write_file", Args: map[string]any{"file_path": file, "content": s.content()}}}
		edit = []Call{{Name: "replace", Args: map[string]any{"file_path": readme, "instruction": "Document the helper",
			"old_string": "# demo\n", "new_string": "# demo\n\n" + s.docLine() + "\n"}}}
		shell = []Call{{Name: "run_shell_command", Args: map[string]any{"command": storyFailCmd, "description": "Run the unit tests"}}}
	case "qwen":
		create = []Call{{Name: "write_file", Args: map[string]any{"file_path": file, "content": s.content()}}}
		edit = []Call{{Name: "edit", Args: map[string]any{"file_path": readme, "old_string": "# demo\n", "new_string": "# demo\n\n" + s.docLine() + "\n"}}}
		shell = []Call{{Name: "run_shell_command", Args: map[string]any{"command": storyFailCmd, "description": "Run the unit tests"}}}
	case "pi":
		create = []Call{{Name: "write", Args: map[string]any{"path": file, "content": s.content()}}}
		edit = []Call{{Name: "edit", Args: map[string]any{"path": readme, "edits": []any{map[string]any{"oldText": "# demo\n", "newText": "# demo\n\n" + s.docLine() + "\n"}}}}}
		shell = []Call{{Name: "bash", Args: map[string]any{"command": storyFailCmd}}}
	case "opencode", "kilo":
		create = []Call{{Name: "write", Args: map[string]any{"filePath": file, "content": s.content()}}}
		edit = []Call{{Name: "edit", Args: map[string]any{"filePath": readme, "oldString": "# demo\n", "newString": "# demo\n\n" + s.docLine() + "\n"}}}
		shell = []Call{{Name: "bash", Args: map[string]any{"command": storyFailCmd, "description": "Run the unit tests"}}}
	case "copilot-cli":
		create = []Call{{Name: "create", Args: map[string]any{"path": file, "file_text": s.content()}}}
		edit = []Call{{Name: "edit", Args: map[string]any{"path": readme, "old_str": "# demo\n", "new_str": "# demo\n\n" + s.docLine() + "\n"}}}
		shell = []Call{{Name: "bash", Args: map[string]any{"command": storyFailCmd, "description": "Run the unit tests"}}}
	}
	turns := []Turn{{Text: intro, Calls: create}}
	switch tool { // Edit needs a prior Read
	case "claude":
		turns = append(turns, Turn{Calls: []Call{{Name: "Read", Args: map[string]any{"file_path": readme}}}})
	case "qwen":
		turns = append(turns, Turn{Calls: []Call{{Name: "read_file", Args: map[string]any{"file_path": readme}}}})
	case "opencode", "kilo":
		turns = append(turns, Turn{Calls: []Call{{Name: "read", Args: map[string]any{"filePath": readme}}}})
	}
	return append(turns,
		Turn{Calls: edit},
		Turn{Text: storyDecision, Calls: shell},
		Turn{Text: final},
	)
}

// checkFiles fails unless the story's edits really happened in dir.
func (s story) checkFiles(t *testing.T, dir string) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(dir, s.File())); err != nil || !strings.Contains(string(b), "def "+s.Word) {
		t.Errorf("%s was not created: %v", s.File(), err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "README.md")); !strings.Contains(string(b), s.docLine()) {
		t.Errorf("README.md was not edited:\n%s", b)
	}
}

// checkHandoff asserts a handoff written after the story by tool.
func (s story) checkHandoff(t *testing.T, h, tool string) {
	t.Helper()
	if testing.Verbose() {
		t.Logf("handoff:\n%s", h)
	}
	for _, want := range []string{
		"# [CARRYOVER] Last updated ", " from " + tool + " · HO-", s.Task(), s.File(), "README.md",
		storyFailCmd, "exit 2", "cannot access", storyDecision, s.Next(),
	} {
		if !strings.Contains(h, want) {
			t.Errorf("handoff lacks %q:\n%s", want, h)
		}
	}
	if n := strings.Count(h, "\n"); n > 50 {
		t.Errorf("handoff has %d lines, want ≤ 50", n)
	}
}

// contextRE is the token line of a handoff's Session section.
var contextRE = regexp.MustCompile(`context: [0-9,]+/[0-9,]+ tokens \(\d+% full\)`)

// runOpts are per-run extras: Args go to the agent (Codex: after the exec
// options, e.g. "resume", "--last"); Config are Codex -c overrides.
type runOpts struct {
	Args   []string
	Config []string
	Bin    string // the agent's executable when not the pinned one (Codex, OpenCode, Kilo)
}

// agentResult is one headless agent run against its fake model.
type agentResult struct {
	Exit     int
	Output   string   // stdout+stderr tail, for failure messages
	Main     [][]byte // requests that played a scripted turn
	Compacts int      // compaction requests (Codex)
	Played   int
	All      []RecordedRequest // every request in order (Claude, Codex)
}

// runAgent runs tool headless in dir with prompt against a fake model that
// plays turns, and fails the test when the agent exits non-zero.
func runAgent(t *testing.T, tool, home, dir, prompt string, turns []Turn, o runOpts) agentResult {
	t.Helper()
	var r agentResult
	switch tool {
	case "claude":
		f := NewAnthropic(t, turns)
		res := RunClaude(t, ClaudeOpts{Home: home, Dir: dir, BaseURL: f.URL(), Prompt: prompt, Args: o.Args})
		r = agentResult{Exit: res.ExitCode, Output: res.String(), Main: f.MainRequests(), Played: f.Played(), All: f.All()}
	case "codex":
		f := NewResponses(t, turns)
		res := RunCodex(t, CodexOpts{Bin: o.Bin, Home: home, Dir: dir, BaseURL: f.URL(), Prompt: prompt, Args: o.Args, Config: o.Config})
		r = agentResult{Exit: res.ExitCode, Output: res.String() + fmt.Sprintf("\nrequests: %v", f.Kinds()), Main: f.MainRequests(),
			Compacts: len(f.RequestsOfKind(KindCompact)), Played: f.Played(), All: f.All()}
	case "gemini":
		f := NewGeminiServer(t, turns)
		res := RunGemini(t, GeminiOpts{Home: home, Dir: dir, BaseURL: f.URL(), Prompt: prompt, Args: o.Args})
		r = agentResult{Exit: res.ExitCode, Output: outTail(res), Main: f.MainRequests(), Played: min(f.TurnsUsed(), len(turns))}
	case "copilot-cli":
		f := NewChatServer(t, turns)
		res := RunCopilot(t, CopilotOpts{Home: home, Dir: dir, BaseURL: f.URL(), Prompt: prompt, Args: o.Args})
		r = agentResult{Exit: res.ExitCode, Output: outTail(res), Main: f.MainRequests(), Played: min(f.TurnsUsed(), len(turns))}
	case "qwen":
		f := NewChatServer(t, turns)
		res := RunQwen(t, QwenOpts{Home: home, Dir: dir, BaseURL: f.URL(), Prompt: prompt, Args: o.Args})
		r = agentResult{Exit: res.ExitCode, Output: outTail(res), Main: f.MainRequests(), Played: min(f.TurnsUsed(), len(turns))}
	case "pi":
		f := NewChatServer(t, turns)
		res := RunPi(t, PiOpts{Home: home, Dir: dir, BaseURL: f.URL(), Prompt: prompt, Args: o.Args})
		r = agentResult{Exit: res.ExitCode, Output: outTail(res), Main: f.MainRequests(), Played: min(f.TurnsUsed(), len(turns))}
	case "opencode", "kilo":
		f := NewChatServer(t, turns)
		res := RunOpenCode(t, OpenCodeOpts{Tool: tool, Bin: o.Bin, Home: home, Dir: dir, BaseURL: f.URL(), Prompt: prompt, Args: o.Args})
		r = agentResult{Exit: res.ExitCode, Output: outTail(res), Main: f.MainRequests(), Played: min(f.TurnsUsed(), len(turns))}
	default:
		t.Fatalf("no real CLI for %q", tool)
	}
	if r.Exit != 0 {
		t.Fatalf("%s exited %d: %s", tool, r.Exit, r.Output)
	}
	if r.Played != len(turns) {
		t.Fatalf("%s played %d of %d scripted turns: %s", tool, r.Played, len(turns), r.Output)
	}
	return r
}

func outTail(o AgentOutput) string {
	s := "stdout:\n" + o.Stdout + "\nstderr:\n" + o.Stderr
	if len(s) > 4000 {
		s = "…" + s[len(s)-4000:]
	}
	return s
}

// first is the first main request with JSON newlines unescaped.
func (r agentResult) first(t *testing.T) string {
	t.Helper()
	return firstMain(t, r.Main)
}

// handoffCount counts carryover handoffs in a request body.
func handoffCount(body string) int { return strings.Count(body, "# [CARRYOVER] Last updated") }

// checkDelivered asserts that req (a model request) carries the story's
// handoff from tool exactly once.
func checkDelivered(t *testing.T, req string, s story, from string) {
	t.Helper()
	for _, want := range []string{"[CARRYOVER]", s.Task(), s.Next(), "Z from " + from} {
		if !strings.Contains(req, want) {
			t.Errorf("the first model request lacks %q:\n%.3000s", want, req)
		}
	}
	if n := handoffCount(req); n != 1 {
		t.Errorf("the first model request carries %d handoffs, want 1", n)
	}
}
