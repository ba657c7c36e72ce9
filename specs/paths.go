package specs

import (
	"slices"
	"strings"
)

// ConfigPath returns the file carryover writes hook stubs into for goos: the
// first candidate that exists, else the first usable candidate (the standard
// location), else "" (the tool has no hook config, e.g. Aider).
//
// getenv looks up environment variables, home is the user's home directory,
// exists reports whether a path exists (nil = nothing exists).
func (t Tool) ConfigPath(goos string, getenv func(string) string, home string, exists func(string) bool) string {
	return pick(t.Config.For(goos), goos, getenv, home, exists)
}

// TrustPath is like ConfigPath for the tool's second file (Codex
// config.toml); "" when the tool has none.
func (t Tool) TrustPath(goos string, getenv func(string) string, home string, exists func(string) bool) string {
	return pick(t.Trust.For(goos), goos, getenv, home, exists)
}

// TranscriptPaths returns every usable transcript location for goos, in
// table order. Relative results are relative to the project root.
func (t Tool) TranscriptPaths(goos string, getenv func(string) string, home string) []string {
	var out []string
	for _, c := range t.Transcripts.For(goos) {
		if p, ok := Expand(c, goos, getenv, home); ok {
			out = append(out, p)
		}
	}
	return out
}

func pick(cands []string, goos string, getenv func(string) string, home string, exists func(string) bool) string {
	var first string
	for _, c := range cands {
		p, ok := Expand(c, goos, getenv, home)
		if !ok {
			continue
		}
		if exists != nil && exists(p) {
			return p
		}
		if first == "" {
			first = p
		}
	}
	return first
}

// Expand expands a table path: ${NAME} (false when unset or empty),
// ${NAME:-default}, then a leading "~" to home. On windows, "/" becomes "\".
func Expand(s, goos string, getenv func(string) string, home string) (string, bool) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			break
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "", false
		}
		b.WriteString(s[:i])
		expr := s[i+2 : i+j]
		s = s[i+j+1:]
		name, def, hasDef := strings.Cut(expr, ":-")
		if v := getenv(name); v != "" {
			b.WriteString(v)
		} else if hasDef {
			b.WriteString(def)
		} else {
			return "", false
		}
	}
	p := b.String()
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home == "" {
			return "", false
		}
		p = strings.TrimRight(home, "/\\") + p[1:]
	}
	if goos == "windows" {
		p = strings.ReplaceAll(p, "/", `\`)
	}
	return p, true
}

// StoreVariables are the environment variables that move agents' session
// stores (a ${NAME:-default} in a transcripts path for goos), in table
// order: what to tell a user whose sessions were not found.
func StoreVariables(goos string) []string {
	t, err := loadOnce()
	if err != nil {
		return nil
	}
	var out []string
	for _, tl := range t.tools {
		for _, c := range tl.Transcripts.For(goos) {
			for {
				i := strings.Index(c, "${")
				j := strings.Index(c, ":-")
				if i < 0 || j < i {
					break
				}
				if name := c[i+2 : j]; !slices.Contains(out, name) {
					out = append(out, name)
				}
				c = c[j+2:]
			}
		}
	}
	return out
}
