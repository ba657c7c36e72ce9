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
	items = append([]pickItem(nil), items...)
	cur := 0
	if radio {
		for i, it := range items {
			if it.On {
				cur = i
				break
			}
		}
	}
	width := 0
	for _, it := range items {
		width = max(width, len([]rune(it.Label)))
	}
	help := "↑/↓ or j/k move, space toggles, enter confirms, q quits"
	if radio {
		help = "↑/↓ or j/k move, enter picks, q quits"
	}
	drawn := 0
	draw := func() {
		var b strings.Builder
		if drawn > 0 {
			fmt.Fprintf(&b, "\x1b[%dA", drawn) // back to the list's first line
		}
		lines := []string{title + " (" + help + ")"}
		for i, it := range items {
			ptr, box := "  ", "[ ]"
			if i == cur {
				ptr = "> "
			}
			switch {
			case radio && i == cur:
				box = "(•)"
			case radio:
				box = "( )"
			case it.On:
				box = "[x]"
			}
			line := fmt.Sprintf("%s%s %-*s", ptr, box, width, it.Label)
			if it.Note != "" {
				line += "  " + it.Note
			}
			lines = append(lines, line)
		}
		for _, l := range lines {
			// Raw mode: no output processing, so \r\n and clear each line.
			b.WriteString("\r\x1b[2K" + l + "\r\n")
		}
		drawn = len(lines)
		io.WriteString(w, b.String())
	}
	draw()
	in, ok := r.(*bufio.Reader) // shared by consecutive lists: keys typed ahead stay
	if !ok {
		in = bufio.NewReader(r)
	}
	for {
		c, err := in.ReadByte()
		if err != nil {
			return nil, errPickAborted // the terminal went away: write nothing
		}
		switch c {
		case 'q', 'Q', 3, 4: // q, Ctrl-C, Ctrl-D
			return nil, errPickAborted
		case 'k', 'K', 16: // k, Ctrl-P
			cur = (cur + len(items) - 1) % len(items)
		case 'j', 'J', 14: // j, Ctrl-N
			cur = (cur + 1) % len(items)
		case ' ', 'x':
			if !radio {
				items[cur].On = !items[cur].On
			}
		case '\r', '\n':
			if radio {
				for i := range items {
					items[i].On = i == cur
				}
			}
			return items, nil
		case 0x1b: // ESC [ A / ESC O A: arrows (normal and application mode)
			b1, err1 := in.ReadByte()
			b2, err2 := in.ReadByte()
			if err1 != nil || err2 != nil || (b1 != '[' && b1 != 'O') {
				continue
			}
			switch b2 {
			case 'A':
				cur = (cur + len(items) - 1) % len(items)
			case 'B':
				cur = (cur + 1) % len(items)
			}
		default:
			continue
		}
		draw()
	}
}

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
