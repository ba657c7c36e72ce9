package cmd

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/config"
	"github.com/carryover/carryover/specs/hookconf"
)

// A checkbox (or radio) list for a terminal in raw mode: ↑/↓ or j/k move,
// space toggles, enter confirms, q or Ctrl-C aborts. It reads key bytes
// from r and redraws in place on w, so a test drives it through a
// pseudo-terminal with the same bytes a user's keyboard sends.

var errPickAborted = errors.New("aborted")

type pickItem struct {
	Label, Note string
	On          bool
}

// pickList shows items under title and returns their states when the user
// presses enter. With radio, exactly one item is on: the cursor starts on
// the first item that is on, and enter picks the item under the cursor.
func pickList(r io.Reader, w io.Writer, title string, items []pickItem, radio bool) ([]pickItem, error) {
	p := newPicker(title, items, radio)
	io.WriteString(w, p.frame())
	in, ok := r.(*bufio.Reader) // shared by consecutive lists: keys typed ahead stay
	if !ok {
		in = bufio.NewReader(r)
	}
	for {
		c, err := in.ReadByte()
		if err != nil {
			return nil, errPickAborted // the terminal went away: write nothing
		}
		switch p.key(c, in) {
		case keyAbort:
			return nil, errPickAborted
		case keyDone:
			return p.items, nil
		case keyMoved:
			io.WriteString(w, p.frame())
		}
	}
}

// picker is pickList's state: the items, the cursor and how many lines
// the last frame drew.
type picker struct {
	title, help string
	items       []pickItem
	radio       bool
	cur, width  int
	drawn       int
}

func newPicker(title string, items []pickItem, radio bool) *picker {
	p := &picker{title: title, items: append([]pickItem(nil), items...), radio: radio,
		help: "↑/↓ or j/k move, space toggles, enter confirms, q quits"}
	if radio {
		p.help = "↑/↓ or j/k move, enter picks, q quits"
		for i, it := range p.items {
			if it.On {
				p.cur = i
				break
			}
		}
	}
	for _, it := range p.items {
		p.width = max(p.width, len([]rune(it.Label)))
	}
	return p
}

func (p *picker) frame() string {
	var b strings.Builder
	if p.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", p.drawn) // back to the list's first line
	}
	lines := []string{p.title + " (" + p.help + ")"}
	for i, it := range p.items {
		lines = append(lines, p.line(i, it))
	}
	for _, l := range lines {
		// Raw mode: no output processing, so \r\n and clear each line.
		b.WriteString("\r\x1b[2K" + l + "\r\n")
	}
	p.drawn = len(lines)
	return b.String()
}

func (p *picker) line(i int, it pickItem) string {
	ptr, box := "  ", "[ ]"
	if i == p.cur {
		ptr = "> "
	}
	switch {
	case p.radio && i == p.cur:
		box = "(•)"
	case p.radio:
		box = "( )"
	case it.On:
		box = "[x]"
	}
	line := fmt.Sprintf("%s%s %-*s", ptr, box, p.width, it.Label)
	if it.Note != "" {
		line += "  " + it.Note
	}
	return line
}

type keyResult int

const (
	keyIgnored keyResult = iota
	keyMoved             // the list changed: draw it again
	keyDone
	keyAbort
)

// key applies one key (reading the rest of an arrow's escape from in).
func (p *picker) key(c byte, in *bufio.Reader) keyResult {
	switch c {
	case 'q', 'Q', 3, 4: // q, Ctrl-C, Ctrl-D
		return keyAbort
	case 'k', 'K', 16: // k, Ctrl-P
		p.move(-1)
	case 'j', 'J', 14: // j, Ctrl-N
		p.move(1)
	case ' ', 'x':
		if !p.radio {
			p.items[p.cur].On = !p.items[p.cur].On
		}
	case '\r', '\n':
		if p.radio {
			for i := range p.items {
				p.items[i].On = i == p.cur
			}
		}
		return keyDone
	case 0x1b:
		return p.arrow(in)
	default:
		return keyIgnored
	}
	return keyMoved
}

// arrow reads ESC [ A / ESC O A: arrows (normal and application mode).
func (p *picker) arrow(in *bufio.Reader) keyResult {
	b1, err1 := in.ReadByte()
	b2, err2 := in.ReadByte()
	if err1 != nil || err2 != nil || (b1 != '[' && b1 != 'O') {
		return keyIgnored
	}
	switch b2 {
	case 'A':
		p.move(-1)
	case 'B':
		p.move(1)
	}
	return keyMoved
}

func (p *picker) move(d int) { p.cur = (p.cur + len(p.items) + d) % len(p.items) }

var pickFlag = &cli.BoolFlag{Name: "pick", Usage: "choose the session from a list on this terminal (↑/↓, enter; q cancels)"}

// pickSession lets the user choose one of the sessions of --project (or
// the current one; all: of every project; anyIfNone: those when the
// project has none) on the terminal, newest first, like `claude
// --resume`. It needs raw mode.
func pickSession(e *Env, projectFlag string, all, anyIfNone bool, source, help string) (candidate, error) {
	project, err := listProject(e, projectFlag, all)
	if err != nil {
		return candidate{}, err
	}
	cs, _, err := gather(e, project, source)
	if err == nil && len(cs) == 0 && anyIfNone && project != "" {
		cs, _, err = gather(e, "", source)
	}
	if err != nil {
		return candidate{}, err
	}
	return pickOne(e, cs, help)
}

func pickOne(e *Env, cs []candidate, help string) (candidate, error) {
	if !e.StdinTTY || !e.StdoutTTY || e.MakeRaw == nil {
		return candidate{}, usageErrorf(help, "--pick needs a terminal; pass a session id instead (see `carryover list`)")
	}
	if len(cs) == 0 {
		return candidate{}, exitf(ExitNotFound, "no sessions to pick from; run `carryover list --all`")
	}
	items := make([]pickItem, len(cs))
	for i, c := range cs {
		items[i] = pickItem{Label: c.Tool + " " + publish.ShortID(c.ID), Note: ago(e.Now(), c.LastActive) + "  " + clip(c.Preview, 60), On: i == 0}
	}
	restore, err := e.MakeRaw()
	if err != nil {
		return candidate{}, usageErrorf(help, "--pick needs a terminal (%v); pass a session id instead", err)
	}
	got, err := pickList(e.Stdin, e.Stdout, "Session", items, true)
	restore()
	if errors.Is(err, errPickAborted) {
		return candidate{}, exitf(ExitCancelled, "cancelled; nothing was picked")
	}
	if err != nil {
		return candidate{}, err
	}
	for i, it := range got {
		if it.On {
			return cs[i], nil
		}
	}
	return candidate{}, exitf(ExitCancelled, "cancelled; nothing was picked")
}

// The questions `carryover install` asks on a terminal: which agents to set
// up (a checkbox list in raw mode, pre-checked with the detected ones) and
// how the next session opens (ask, brief, silent). Terminals that cannot do
// raw mode get the numbered list and a line prompt.

// chooseInstall returns the agents to set up, the resume mode, and the
// unticked agents whose carryover hooks the user chose to remove. flagMode
// (from --resume) skips the resume question; current is the mode in
// config.toml, the question's default (else ask).
func chooseInstall(e *Env, agents []AgentStatus, sel []string, flagMode, current string) ([]string, string, []string, error) {
	def := cmp.Or(flagMode, current)
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

var resumeNotes = map[string]string{
	"ask":    "the agent summarises the task and next step, then asks whether to continue",
	"brief":  "one line on the task and next step, then it carries on",
	"silent": "the agent uses the handoff without mentioning it",
}

func hasStubs(a AgentStatus) bool {
	return len(a.Hooks.Hooks) > 0 && a.Hooks.State != hookconf.StateNoHooks
}

func detectedNote(a AgentStatus) string {
	if a.Detected() {
		return strings.TrimSpace(a.Version + " detected")
	}
	return "not detected"
}

func pickInstall(r io.Reader, w io.Writer, agents []AgentStatus, sel []string, flagMode, def string) ([]string, string, []string, error) {
	r = bufio.NewReader(r)
	items := make([]pickItem, len(agents))
	for i, a := range agents {
		items[i] = pickItem{Label: a.Display, Note: detectedNote(a), On: slices.Contains(sel, a.Tool)}
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
			rm, err := askRemove(r, w, a)
			if err != nil {
				return nil, "", nil, err
			} else if rm {
				remove = append(remove, a.Tool)
			}
		}
	}
	if flagMode != "" {
		return tools, flagMode, remove, nil
	}
	mode, err := pickMode(r, w, def)
	if err != nil {
		return nil, "", nil, err
	}
	return tools, mode, remove, nil
}

// pickMode asks for the resume mode in a radio list; def is ticked first.
func pickMode(r io.Reader, w io.Writer, def string) (string, error) {
	modes := make([]pickItem, len(config.ResumeModes))
	for i, m := range config.ResumeModes {
		modes[i] = pickItem{Label: m, Note: resumeNotes[m], On: m == def}
	}
	got, err := pickList(r, w, "When a new session starts with a handoff", modes, true)
	for i, it := range got {
		if it.On && err == nil {
			return config.ResumeModes[i], nil
		}
	}
	return def, err
}

// askRemove asks whether to remove the hooks of unticked agent a.
func askRemove(r io.Reader, w io.Writer, a AgentStatus) (bool, error) {
	q := []pickItem{
		{Label: "keep them", Note: "they go on recording " + a.Display + "'s sessions and handing off", On: true},
		{Label: "remove them", Note: "as `carryover uninstall --tools " + a.Tool + "` does"},
	}
	ans, err := pickList(r, w, a.Display+" is unticked; its carryover hooks in "+a.Hooks.Path+" stay unless removed", q, true)
	return err == nil && ans[1].On, err
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
			fmt.Fprintf(w, "  %d %s %s %s\n", i+1, box, a.Display, detectedNote(a))
		}
		fmt.Fprint(w, "Toggle by number (e.g. 1 3), Enter to continue: ")
		line, err := in.ReadString('\n')
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		toggle(w, line, agents, on)
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

// toggle flips the agents whose numbers line holds (space or comma apart).
func toggle(w io.Writer, line string, agents []AgentStatus, on map[string]bool) {
	for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == ',' }) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > len(agents) {
			fmt.Fprintf(w, "ignored %q: not a number between 1 and %d\n", f, len(agents))
			continue
		}
		on[agents[n-1].Tool] = !on[agents[n-1].Tool]
	}
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
