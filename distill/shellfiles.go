package distill

// Files written by shell commands. Agents create, move and delete files
// with the shell as often as with their edit tools; the hook path has no
// time to walk the work tree, so the targets are parsed from the command
// line itself: output redirection (> and >>, tee), cp/mv/git mv
// destinations, rm/git rm, touch, sed -i/perl -i, and a generator's -o /
// --output. Heredoc bodies are skipped; /dev/* and variables are not
// files. A failed command's files are dropped like a failed edit's.

import "strings"

// shellFile is one file a command wrote.
type shellFile struct {
	path    string
	created bool
	deleted bool
}

// maxShellFiles bounds what one command contributes (rm -rf of a list).
const maxShellFiles = 8

// shellCues are what a command line that writes files contains.
var shellCues = []string{">", "mv ", "rm ", "cp ", "touch ", " -i", "tee ", "-o"}

// shellFiles parses the files a shell command line writes.
func shellFiles(cmd string) []shellFile {
	if !containsAny(cmd, shellCues) {
		return nil
	}
	var out shellWrites
	for _, line := range commandLines(cmd) {
		for _, seg := range splitSegments(line) {
			out.segment(seg)
		}
	}
	return out
}

// shellWrites collects the files of one command line.
type shellWrites []shellFile

// add records path p unless it is no file (/dev/*, a variable or glob, .)
// or the command already gave maxShellFiles.
func (o *shellWrites) add(p string, created, deleted bool) {
	p = strings.Trim(p, `'"`)
	if p == "" || strings.HasPrefix(p, "/dev/") || strings.ContainsAny(p, "$`*?{}&|<>") || p == "." || p == ".." || len(*o) >= maxShellFiles {
		return
	}
	*o = append(*o, shellFile{path: p, created: created, deleted: deleted})
}

func (o *shellWrites) addAll(ps []string, created, deleted bool) {
	for _, p := range ps {
		o.add(p, created, deleted)
	}
}

// segment reads one simple command: its redirections, then what its
// program writes.
func (o *shellWrites) segment(seg string) {
	f := skipPrefixWords(shellWords(seg))
	for i := 0; i < len(f); i++ {
		target, skip := redirection(f, i)
		i += skip
		if target != "" {
			o.add(target, true, false)
		}
	}
	if len(f) == 0 {
		return
	}
	if w, ok := programWrites[f[0]]; ok {
		w(o, f[1:], plainArgs(f[1:]))
		return
	}
	o.outputFlag(f)
}

// redirection returns the file the word f[i] redirects output to, and
// how many words after it that took.
func redirection(f []string, i int) (string, int) {
	w := f[i]
	switch {
	case w == ">" || w == ">>" || w == ">|":
		if i+1 < len(f) {
			return f[i+1], 1
		}
	case strings.HasPrefix(w, ">>") && !strings.HasPrefix(w, ">>&"):
		return w[2:], 0
	case strings.HasPrefix(w, ">") && !strings.HasPrefix(w, ">&"):
		return w[1:], 0
	case strings.HasPrefix(w, "1>"):
		return strings.TrimPrefix(strings.TrimPrefix(w, "1>>"), "1>"), 0
	}
	return "", 0
}

// outputFlag records a generator's -o / --output / --out file.
func (o *shellWrites) outputFlag(f []string) {
	for i := 1; i+1 < len(f); i++ {
		if f[i] == "-o" || f[i] == "--output" || f[i] == "--out" {
			if p := f[i+1]; strings.Contains(p, ".") {
				o.add(p, true, false)
			}
		}
	}
}

// programWrites holds, per program, what its words (flags) and plain
// arguments (args) write.
var programWrites = map[string]func(o *shellWrites, words, args []string){
	"git": func(o *shellWrites, _, args []string) {
		switch {
		case len(args) >= 3 && args[0] == "mv":
			o.add(args[1], false, true)
			o.add(args[2], true, false)
		case len(args) >= 2 && args[0] == "rm":
			o.addAll(args[1:], false, true)
		}
	},
	"mv": func(o *shellWrites, _, args []string) {
		if len(args) >= 2 {
			o.addAll(args[:len(args)-1], false, true)
			o.add(args[len(args)-1], true, false)
		}
	},
	"cp": func(o *shellWrites, _, args []string) {
		if len(args) >= 2 {
			o.add(args[len(args)-1], true, false)
		}
	},
	"rm":     func(o *shellWrites, _, args []string) { o.addAll(args, false, true) },
	"unlink": func(o *shellWrites, _, args []string) { o.addAll(args, false, true) },
	"touch":  func(o *shellWrites, _, args []string) { o.addAll(args, true, false) },
	"tee":    func(o *shellWrites, _, args []string) { o.addAll(args, true, false) },
	"sed":    inPlaceEdit,
	"perl":   inPlaceEdit,
}

// inPlaceEdit records the files of sed -i / perl -i (after the script).
func inPlaceEdit(o *shellWrites, words, args []string) {
	if inPlace(words) && len(args) >= 2 {
		o.addAll(args[1:], false, false)
	}
}

// commandLines are a command's lines without heredoc bodies.
func commandLines(cmd string) []string {
	var out []string
	var end string
	for _, l := range strings.Split(cmd, "\n") {
		if end != "" {
			if strings.TrimSpace(l) == end {
				end = ""
			}
			continue
		}
		if i := strings.Index(l, "<<"); i >= 0 && !strings.HasPrefix(l[i:], "<<<") {
			// "<<-'EOF' > file": the delimiter is the next word; the
			// rest of the line (a redirection) still counts.
			rest := strings.Fields(strings.TrimLeft(l[i+2:], "-~ "))
			if len(rest) > 0 {
				if t := strings.Trim(rest[0], `'"`); t != "" {
					end = t
				}
				rest = rest[1:]
			}
			l = l[:i] + " " + strings.Join(rest, " ")
		}
		out = append(out, l)
	}
	return out
}

// shellWords splits a segment at white space outside quotes.
func shellWords(s string) []string {
	var out []string
	var b strings.Builder
	var quote byte
	for i := 0; i < len(s); i++ { // bytes: an invalid UTF-8 byte stays itself
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
			b.WriteByte(c)
		case c == '\'' || c == '"':
			quote = c
			b.WriteByte(c)
		case c == ' ' || c == '\t':
			if b.Len() > 0 {
				out = append(out, b.String())
				b.Reset()
			}
		default:
			b.WriteByte(c)
		}
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}

// plainArgs are the arguments that are not flags (nor after a redirection).
func plainArgs(f []string) []string {
	var out []string
	for i := 0; i < len(f); i++ {
		a := f[i]
		if strings.HasPrefix(a, ">") || strings.HasPrefix(a, "1>") || strings.HasPrefix(a, "2>") || strings.HasPrefix(a, "<") {
			if a == ">" || a == ">>" || a == "2>" || a == "<" {
				i++
			}
			continue
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		out = append(out, a)
	}
	return out
}

func inPlace(f []string) bool {
	for _, a := range f {
		if a == "-i" || strings.HasPrefix(a, "-i.") || strings.HasPrefix(a, "--in-place") || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "i") && strings.Contains(a, "p")) {
			return true
		}
	}
	return false
}
