package cmd

// The questions `carryover install` asks on a terminal: which agents to set
// up (a checkbox list in raw mode, pre-checked with the detected ones) and
// how the next session opens (ask, brief, silent). Terminals that cannot do
// raw mode get the numbered list and a line prompt.

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/carryover/carryover/publish/config"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/carryover/carryover/specs/hookconf"
)

// chooseInstall returns the agents to set up, the resume mode, and the
// unticked agents whose carryover hooks the user chose to remove. flagMode
// (from --resume) skips the resume question; current is the mode in
// config.toml, the question's default (else ask).
func chooseInstall(e *Env, agents []AgentStatus, sel []string, flagMode, current string) ([]string, string, []string, error) {
	def := flagMode
	if def == "" {
		def = current
	}
	if !slices.Contains(config.ResumeModes, def) {
		def = config.ResumeModes[0]
	}
	if e.MakeRaw != nil {
		if restore, err := e.MakeRaw(); err == nil {
			tools, mode, remove, err := pickInstall(e.Stdin, e.Stdout, agents, sel, flagMode, def)
			restore()
			if errors.Is(err, errPickAborted) {
				return nil, "", nil, exitf(ExitCancelled, "install cancelled; nothing was written")
			}
			return tools, mode, remove, err
		}
	}
	in := bufio.NewReader(e.Stdin)
	tools := chooseTools(in, e.Stdout, agents, sel)
	for _, a := range agents {
		if hasStubs(a) && !slices.Contains(tools, a.Tool) {
			fmt.Fprintf(e.Stdout, "%s is unticked; its carryover hooks stay in %s (remove them: carryover uninstall --tools %s)\n", a.Display, a.Hooks.Path, a.Tool)
		}
	}
	mode := flagMode
	if mode == "" {
		mode = askResume(in, e.Stdout, def)
	}
	return tools, mode, nil, nil
}

// resumeNotes explains each mode in the question.
var resumeNotes = map[string]string{
	"ask":    "the agent summarises the task and next step, then asks whether to continue",
	"brief":  "one line on the task and next step, then it carries on",
	"silent": "the agent uses the handoff without mentioning it",
}

// hasStubs reports whether a's config holds carryover's stubs now.
func hasStubs(a AgentStatus) bool {
	return len(a.Hooks.Hooks) > 0 && a.Hooks.State != hookconf.StateNoHooks
}

func pickInstall(r io.Reader, w io.Writer, agents []AgentStatus, sel []string, flagMode, def string) ([]string, string, []string, error) {
	r = bufio.NewReader(r)
	items := make([]pickItem, len(agents))
	for i, a := range agents {
		note := "not detected"
		if a.Detected() {
			note = strings.TrimSpace(a.Version + " detected")
		}
		items[i] = pickItem{Label: a.Display, Note: note, On: slices.Contains(sel, a.Tool)}
	}
	got, err := pickList(r, w, "Agents to set up", items, false)
	if err != nil {
		return nil, "", nil, err
	}
	var tools, remove []string
	for i, it := range got {
		if it.On {
			tools = append(tools, agents[i].Tool)
			continue
		}
		// Unticked, but its hooks from an earlier install would go on
		// running: say so, and offer to remove them.
		if a := agents[i]; hasStubs(a) {
			q := []pickItem{
				{Label: "keep them", Note: "they go on recording " + a.Display + "'s sessions and handing off", On: true},
				{Label: "remove them", Note: "as `carryover uninstall --tools " + a.Tool + "` does"},
			}
			ans, err := pickList(r, w, a.Display+" is unticked; its carryover hooks in "+a.Hooks.Path+" stay unless removed", q, true)
			if err != nil {
				return nil, "", nil, err
			}
			if ans[1].On {
				remove = append(remove, a.Tool)
			}
		}
	}
	if flagMode != "" {
		return tools, flagMode, remove, nil
	}
	modes := make([]pickItem, len(config.ResumeModes))
	for i, m := range config.ResumeModes {
		modes[i] = pickItem{Label: m, Note: resumeNotes[m], On: m == def}
	}
	got, err = pickList(r, w, "When a new session starts with a handoff", modes, true)
	if err != nil {
		return nil, "", nil, err
	}
	for i, it := range got {
		if it.On {
			return tools, config.ResumeModes[i], remove, nil
		}
	}
	return tools, def, remove, nil
}

// chooseTools shows the numbered checkbox list and toggles entries by
// number until an empty line.
func chooseTools(in *bufio.Reader, w io.Writer, agents []AgentStatus, sel []string) []string {
	on := map[string]bool{}
	for _, s := range sel {
		on[s] = true
	}
	for {
		fmt.Fprintln(w, "Agents to set up:")
		for i, a := range agents {
			box := "[ ]"
			if on[a.Tool] {
				box = "[x]"
			}
			state := "not detected"
			if a.Detected() {
				state = strings.TrimSpace(a.Version + " detected")
			}
			fmt.Fprintf(w, "  %d %s %s %s\n", i+1, box, a.Display, state)
		}
		fmt.Fprint(w, "Toggle by number (e.g. 1 3), Enter to continue: ")
		line, err := in.ReadString('\n')
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == ',' }) {
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 || n > len(agents) {
				fmt.Fprintf(w, "ignored %q: not a number between 1 and %d\n", f, len(agents))
				continue
			}
			on[agents[n-1].Tool] = !on[agents[n-1].Tool]
		}
		if err != nil {
			break
		}
	}
	var out []string
	for _, a := range agents {
		if on[a.Tool] {
			out = append(out, a.Tool)
		}
	}
	return out
}

// askResume asks for the resume mode on one line; Enter keeps def.
func askResume(in *bufio.Reader, w io.Writer, def string) string {
	for {
		fmt.Fprintf(w, "When a new session starts with a handoff: ask, brief or silent? [%s]: ", def)
		line, err := in.ReadString('\n')
		line = strings.ToLower(strings.TrimSpace(line))
		if line == "" {
			return def
		}
		if slices.Contains(config.ResumeModes, line) {
			return line
		}
		fmt.Fprintf(w, "%q is not one of ask, brief, silent\n", line)
		if err != nil {
			return def
		}
	}
}

// saveResumeMode writes resume = mode into config.toml ("" = leave it).
func saveResumeMode(e *Env, mode string) {
	if mode == "" {
		return
	}
	if err := config.SetKeyInFile(e.ConfigPath(), "resume", strconv.Quote(mode), 0o600); err != nil {
		fmt.Fprintf(e.Stderr, "carryover: could not save resume = %q to %s: %v\n", mode, e.ConfigPath(), err)
		return
	}
	fmt.Fprintf(e.Stdout, "resume = %q saved in %s\n", mode, e.ConfigPath())
}
