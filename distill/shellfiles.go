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

// shellFiles parses the files a shell command line writes.
func shellFiles(cmd string) []shellFile {
	if !strings.ContainsAny(cmd, ">") && !strings.Contains(cmd, "mv ") && !strings.Contains(cmd, "rm ") &&
		!strings.Contains(cmd, "cp ") && !strings.Contains(cmd, "touch ") && !strings.Contains(cmd, " -i") &&
		!strings.Contains(cmd, "tee ") && !strings.Contains(cmd, "-o") {
		return nil
	}
	var out []shellFile
	add := func(p string, created, deleted bool) {
		p = strings.Trim(p, `'"`)
		if p == "" || strings.HasPrefix(p, "/dev/") || strings.ContainsAny(p, "$`*?{}&|<>") || p == "." || p == ".." || len(out) >= maxShellFiles {
			return
		}
		out = append(out, shellFile{path: p, created: created, deleted: deleted})
	}
	for _, line := range commandLines(cmd) {
		for _, seg := range splitSegments(line) {
			f := shellWords(seg)
			for len(f) > 0 && (strings.Contains(f[0], "=") && !strings.HasPrefix(f[0], "-") || wrappers[f[0]]) {
				f = f[1:]
			}
			// Redirections anywhere in the segment.
			for i := 0; i < len(f); i++ {
				w := f[i]
				var target string
				switch {
				case w == ">" || w == ">>" || w == ">|":
					if i+1 < len(f) {
						target = f[i+1]
						i++
					}
				case strings.HasPrefix(w, ">>") && !strings.HasPrefix(w, ">>&"):
					target = w[2:]
				case strings.HasPrefix(w, ">") && !strings.HasPrefix(w, ">&"):
					target = w[1:]
				case strings.HasPrefix(w, "1>"):
					target = strings.TrimPrefix(strings.TrimPrefix(w, "1>>"), "1>")
				}
				if target != "" {
					add(target, true, false)
				}
			}
			if len(f) == 0 {
				continue
			}
			args := plainArgs(f[1:])
			switch prog := f[0]; prog {
			case "git":
				if len(args) >= 3 && args[0] == "mv" {
					add(args[1], false, true)
					add(args[2], true, false)
				} else if len(args) >= 2 && args[0] == "rm" {
					for _, a := range args[1:] {
						add(a, false, true)
					}
				}
			case "mv":
				if len(args) >= 2 {
					for _, a := range args[:len(args)-1] {
						add(a, false, true)
					}
					add(args[len(args)-1], true, false)
				}
			case "cp":
				if len(args) >= 2 {
					add(args[len(args)-1], true, false)
				}
			case "rm", "unlink":
				for _, a := range args {
					add(a, false, true)
				}
			case "touch":
				for _, a := range args {
					add(a, true, false)
				}
			case "tee":
				for _, a := range args {
					add(a, true, false)
				}
			case "sed", "perl":
				if inPlace(f[1:]) && len(args) >= 2 {
					for _, a := range args[1:] {
						add(a, false, false)
					}
				}
			default:
				for i := 1; i+1 < len(f); i++ {
					if f[i] == "-o" || f[i] == "--output" || f[i] == "--out" {
						if p := f[i+1]; strings.Contains(p, ".") {
							add(p, true, false)
						}
					}
				}
			}
		}
	}
	return out
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
