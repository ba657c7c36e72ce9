package cmd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/redact"
)

// A checkbox (or radio) list for a terminal in raw mode: ↑/↓ or j/k move,
// space toggles, enter confirms, q or Ctrl-C aborts. It reads key bytes
// from r and redraws in place on w, so a test drives it through a
// pseudo-terminal with the bytes a keyboard sends.

var errPickAborted = errors.New("aborted")

type pickItem struct {
	Label, Note string
	On          bool
}

// pickList shows items under title and returns their states at enter.
// With radio exactly one item is on: the cursor starts on the first that
// is, and enter picks the item under the cursor.
func pickList(r io.Reader, w io.Writer, title string, items []pickItem, radio bool) ([]pickItem, error) {
	p := &picker{title: title, items: slices.Clone(items), radio: radio, help: "↑/↓ or j/k move, space toggles, enter confirms, q quits"}
	if radio {
		p.help = "↑/↓ or j/k move, enter picks, q quits"
		p.cur = max(0, slices.IndexFunc(p.items, func(it pickItem) bool { return it.On }))
	}
	for _, it := range p.items {
		p.width = max(p.width, len([]rune(it.Label)))
	}
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

// picker is pickList's state; drawn is how many lines the last frame drew.
type picker struct {
	title, help       string
	items             []pickItem
	radio             bool
	cur, width, drawn int
}

func (p *picker) frame() string {
	var b strings.Builder
	if p.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", p.drawn) // back to the list's first line
	}
	// Raw mode: no output processing, so \r\n and clear each line.
	b.WriteString("\r\x1b[2K" + p.title + " (" + p.help + ")\r\n")
	for i, it := range p.items {
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
		b.WriteString("\r\x1b[2K" + line + "\r\n")
	}
	p.drawn = len(p.items) + 1
	return b.String()
}

type keyResult int

const (
	keyIgnored keyResult = iota
	keyMoved             // the list changed: draw it again
	keyDone
	keyAbort
)

// key applies one key, reading the rest of an arrow's escape (ESC [ A or,
// in application mode, ESC O A) from in.
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
		for i := range p.items {
			p.items[i].On = p.items[i].On && !p.radio || p.radio && i == p.cur
		}
		return keyDone
	case 0x1b:
		return p.arrow(in)
	default:
		return keyIgnored
	}
	return keyMoved
}

func (p *picker) arrow(in *bufio.Reader) keyResult {
	b1, err1 := in.ReadByte()
	b2, err2 := in.ReadByte()
	if err1 != nil || err2 != nil || (b1 != '[' && b1 != 'O') {
		return keyIgnored
	}
	p.move(map[byte]int{'A': -1, 'B': 1}[b2])
	return keyMoved
}

func (p *picker) move(d int) { p.cur = (p.cur + len(p.items) + d) % len(p.items) }

// pickSession lets the user choose, newest first like `claude --resume`,
// one of the sessions of --project (or the current one; all: of every
// project; anyIfNone: those when the project has none). It needs raw mode.
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
	switch {
	case !e.StdinTTY || !e.StdoutTTY || e.MakeRaw == nil:
		return candidate{}, usageErrorf(help, "--pick needs a terminal; pass a session id instead (see `carryover list`)")
	case len(cs) == 0:
		return candidate{}, exitf(ExitNotFound, "no sessions to pick from; run `carryover list --all`")
	}
	items := make([]pickItem, len(cs))
	for i, c := range cs {
		items[i] = pickItem{Label: c.Tool + " " + publish.ShortID(c.ID), Note: ago(e.Now(), c.LastActive) + "  " + redact.Clip(c.Preview, 60), On: i == 0}
	}
	restore, err := e.MakeRaw()
	if err != nil {
		return candidate{}, usageErrorf(help, "--pick needs a terminal (%v); pass a session id instead", err)
	}
	got, err := pickList(e.Stdin, e.Stdout, "Session", items, true)
	restore()
	if i := slices.IndexFunc(got, func(it pickItem) bool { return it.On }); err == nil && i >= 0 {
		return cs[i], nil
	}
	return candidate{}, exitf(ExitCancelled, "cancelled; nothing was picked")
}
