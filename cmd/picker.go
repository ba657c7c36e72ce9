package cmd

// A checkbox (or radio) list for a terminal in raw mode: ↑/↓ or j/k move,
// space toggles, enter confirms, q or Ctrl-C aborts. It reads key bytes
// from r and redraws in place on w, so a test drives it through a
// pseudo-terminal with the same bytes a user's keyboard sends.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// errPickAborted is returned when the user quits the list.
var errPickAborted = errors.New("aborted")

// pickItem is one line of a list.
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

// frame is the list drawn over the previous frame.
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

// line is item i's line: cursor, box, label and note.
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

// keyResult is what a key did to the list.
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

// move moves the cursor by d, wrapping around.
func (p *picker) move(d int) { p.cur = (p.cur + len(p.items) + d) % len(p.items) }

// pickFlag is --pick of handoff and list.
var pickFlag = &cli.BoolFlag{Name: "pick", Usage: "choose the session from a list on this terminal (↑/↓, enter; q cancels)"}

// pickSession lets the user choose one of cs on the terminal, newest
// first, like `claude --resume`. It needs a terminal that can do raw mode.
func pickSession(e *Env, cs []candidate, help string) (candidate, error) {
	if !e.StdinTTY || !e.StdoutTTY || e.MakeRaw == nil {
		return candidate{}, usageErrorf(help, "--pick needs a terminal; pass a session id instead (see `carryover list`)")
	}
	if len(cs) == 0 {
		return candidate{}, exitf(ExitNotFound, "no sessions to pick from; run `carryover list --all`")
	}
	items := make([]pickItem, len(cs))
	for i, c := range cs {
		items[i] = pickItem{Label: c.Tool + " " + shortID(c.ID), Note: ago(e.Now(), c.LastActive) + "  " + clip(c.Preview, 60), On: i == 0}
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
