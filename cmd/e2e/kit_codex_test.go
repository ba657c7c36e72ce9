package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// CodexProvider is the model_provider id WriteCodexHooks configures.
const CodexProvider = "fake"

// CodexModel is the model slug used with the fake provider: it must be in
// Codex's built-in catalog, otherwise Codex drops the apply_patch tool.
const CodexModel = "gpt-5.5"

// CodexOpts describes one headless `codex exec` run.
type CodexOpts struct {
	Home    string // HOME for the agent (CODEX_HOME = Home/.codex); required
	Dir     string // project dir; required
	Prompt  string
	BaseURL string // fake server root (Responses.URL()); required
	// Args go after the exec-level options and before the prompt, e.g.
	// []string{"resume", "--last"}.
	Args []string
	// Config holds extra -c key=value overrides (value parsed as TOML), e.g.
	// "model_auto_compact_token_limit=15000".
	Config  []string
	Sandbox string   // -s value; default danger-full-access
	Bin     string   // codex executable; empty means the pinned install
	Env     []string // extra KEY=VALUE entries, override the defaults
	Timeout time.Duration
}

// CodexEnv is the environment RunCodex gives the agent.
func CodexEnv(home string, extra ...string) []string {
	env := MergeEnv(BaseEnv(home), "OPENAI_API_KEY=sk-test", "CODEX_HOME="+filepath.Join(home, ".codex"), "RUST_LOG=error")
	return MergeEnv(env, extra...)
}

// CodexArgs builds the argv (after the binary) RunCodex uses.
func CodexArgs(o CodexOpts) []string {
	sandbox := o.Sandbox
	if sandbox == "" {
		sandbox = "danger-full-access"
	}
	args := []string{"exec", "--skip-git-repo-check", "-s", sandbox,
		"-c", "model_providers." + CodexProvider + ".base_url=" + tomlString(strings.TrimRight(o.BaseURL, "/")+"/v1")}
	for _, c := range o.Config {
		args = append(args, "-c", c)
	}
	args = append(args, o.Args...)
	if o.Prompt != "" {
		args = append(args, o.Prompt)
	}
	return args
}

// RunCodex runs `codex exec` (o.Bin, else the pinned install) against the
// fake provider. It writes the provider config first if Home has none.
func RunCodex(t testing.TB, o CodexOpts) Result {
	t.Helper()
	if o.Home == "" || o.Dir == "" || o.BaseURL == "" {
		t.Fatalf("e2e kit: RunCodex needs Home, Dir and BaseURL")
	}
	bin := o.Bin
	if bin == "" {
		bin = Install(t, "codex")
	}
	if _, err := os.Stat(filepath.Join(o.Home, ".codex", "config.toml")); err != nil {
		if err := WriteCodexHooks(o.Home, nil); err != nil {
			t.Fatalf("e2e kit: writing codex config: %v", err)
		}
	}
	return RunProcess(t, o.Dir, CodexEnv(o.Home, o.Env...), o.Timeout, bin, CodexArgs(o)...)
}

// codexLabels maps Codex hook event names to the labels used in trust keys.
var codexLabels = map[string]string{
	"PreToolUse": "pre_tool_use", "PermissionRequest": "permission_request", "PostToolUse": "post_tool_use",
	"PreCompact": "pre_compact", "PostCompact": "post_compact", "SessionStart": "session_start",
	"SessionEnd": "session_end", "UserPromptSubmit": "user_prompt_submit", "SubagentStart": "subagent_start",
	"SubagentStop": "subagent_stop", "Stop": "stop", "PreModelRequest": "pre_model_request",
	"PostModelRequest": "post_model_request", "Interrupt": "interrupt",
}

// CodexEvents lists every hook event Codex 0.169 knows, sorted.
func CodexEvents() []string {
	var out []string
	for ev := range codexLabels {
		out = append(out, ev)
	}
	sort.Strings(out)
	return out
}

// CodexHandler is one command hook handler as written in hooks.json.
type CodexHandler struct {
	Command       string
	Timeout       *int // seconds; nil = unset
	Async         bool
	StatusMessage *string
	// AdditionalContextLimit in tokens; nil = unset.
	AdditionalContextLimit *int
}

// CodexTrustHash is the `trusted_hash` Codex 0.169 expects in
// [hooks.state."<file>:<label>:<group>:<handler>"] for handler h declared
// under event with the given matcher (nil = none). See codex.md §3.3.
func CodexTrustHash(event string, matcher *string, h CodexHandler) (string, error) {
	label, ok := codexLabels[event]
	if !ok {
		return "", fmt.Errorf("unknown codex hook event %q", event)
	}
	timeout := 600
	if h.Timeout != nil {
		timeout = *h.Timeout
	}
	if event == "SessionEnd" || event == "Interrupt" {
		if h.Timeout == nil {
			timeout = 1
		}
		timeout = min(max(timeout, 1), 3)
	} else {
		timeout = max(timeout, 1)
	}
	handler := map[string]any{"type": "command", "command": h.Command, "timeout": timeout, "async": h.Async}
	if h.StatusMessage != nil {
		handler["statusMessage"] = *h.StatusMessage
	}
	switch event {
	case "PreToolUse", "PostToolUse", "SessionStart", "UserPromptSubmit", "SubagentStart":
		if h.AdditionalContextLimit != nil && *h.AdditionalContextLimit != 2500 {
			handler["additionalContextLimit"] = *h.AdditionalContextLimit
		}
	}
	identity := map[string]any{"event_name": label, "hooks": []any{handler}}
	switch event {
	case "UserPromptSubmit", "Stop", "SessionEnd", "Interrupt", "PreModelRequest", "PostModelRequest":
	default:
		if matcher != nil {
			identity["matcher"] = *matcher
		}
	}
	// serde_json canonical form: sorted keys (Go maps marshal sorted), compact,
	// UTF-8 raw, <>& not escaped.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(identity); err != nil {
		return "", err
	}
	sum := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// CodexTrustKey is the [hooks.state] key for handler hi of group gi of event
// declared in the file at path (absolute).
func CodexTrustKey(path, event string, gi, hi int) string {
	return fmt.Sprintf("%s:%s:%d:%d", path, codexLabels[event], gi, hi)
}

// codexHookTimeout returns the timeout WriteCodexHooks gives an event.
func codexHookTimeout(event string) int {
	if event == "SessionEnd" || event == "Interrupt" {
		return 3
	}
	return 30
}

// WriteCodexHooks writes home/.codex/hooks.json with one command hook per
// event (event name → shell command) and home/.codex/config.toml with the
// fake model provider (base_url is set per run by RunCodex) and a trusted_hash
// entry for every hook, so the hooks run in `codex exec` without prompting.
// hooks may be nil (provider config only).
func WriteCodexHooks(home string, hooks map[string]string) error {
	dir := filepath.Join(home, ".codex")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	hooksPath, err := filepath.Abs(filepath.Join(dir, "hooks.json"))
	if err != nil {
		return err
	}
	events := make([]string, 0, len(hooks))
	for ev := range hooks {
		if _, ok := codexLabels[ev]; !ok {
			return fmt.Errorf("unknown codex hook event %q (known: %s)", ev, strings.Join(CodexEvents(), ", "))
		}
		events = append(events, ev)
	}
	sort.Strings(events)

	var cfg strings.Builder
	fmt.Fprintf(&cfg, "model = %s\nmodel_provider = %s\ncheck_for_update_on_startup = false\n\n", tomlString(CodexModel), tomlString(CodexProvider))
	fmt.Fprintf(&cfg, "[model_providers.%s]\nname = %s\nbase_url = %s\nwire_api = \"responses\"\nenv_key = \"OPENAI_API_KEY\"\nrequest_max_retries = 0\nstream_max_retries = 0\n\n",
		CodexProvider, tomlString(CodexProvider), tomlString("http://127.0.0.1:9/v1"))
	fmt.Fprintf(&cfg, "[analytics]\nenabled = false\n\n")

	h := map[string]any{}
	for _, ev := range events {
		timeout := codexHookTimeout(ev)
		h[ev] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": hooks[ev], "timeout": timeout}}}}
		hash, err := CodexTrustHash(ev, nil, CodexHandler{Command: hooks[ev], Timeout: &timeout})
		if err != nil {
			return err
		}
		fmt.Fprintf(&cfg, "[hooks.state.%s]\ntrusted_hash = %s\n\n", tomlString(CodexTrustKey(hooksPath, ev, 0, 0)), tomlString(hash))
	}
	if len(hooks) > 0 {
		b, err := json.MarshalIndent(map[string]any{"hooks": h}, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(hooksPath, append(b, '\n'), 0o644); err != nil {
			return err
		}
	} else if err := os.Remove(hooksPath); err != nil && !os.IsNotExist(err) {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.toml"), []byte(cfg.String()), 0o644)
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// CodexRollouts lists the rollout files under home/.codex/sessions, sorted.
func CodexRollouts(home string) []string {
	m, _ := filepath.Glob(filepath.Join(home, ".codex", "sessions", "*", "*", "*", "rollout-*.jsonl"))
	sort.Strings(m)
	return m
}
