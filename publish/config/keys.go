package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/specs"
	"github.com/carryover/carryover/specs/hookconf"
	"github.com/pelletier/go-toml/v2"
)

// The configuration's keys as data: what each accepts, its default, where
// it may be set, and the checks that make a misspelt key or bad value a
// warning naming the file, the key and the closest valid key. Load decodes
// with it; `carryover config` and `config set` read the same table.

// Key describes one key of config.toml / .carryover.toml.
type Key struct {
	Name string
	// Default is the value in effect when no file sets the key (a TOML literal).
	Default string
	Doc     string
	// GlobalOnly keys are read from ~/.carryover/config.toml only.
	GlobalOnly bool
	// Sub is a table's keys (`limits.warn_percent`) and their checks.
	Sub map[string]func(v any) error
	// check validates a decoded TOML value (nil = valid).
	check func(v any) error
	// parse turns a command-line VALUE into a TOML literal for `config set`.
	parse func(s string) (string, error)
	// get is the key's effective value in a loaded Config, as a TOML literal.
	get func(c Config) string
}

// ResumeModes are the resume protocols, most visible first.
var ResumeModes = []string{publish.ModeAsk, publish.ModeBrief, publish.ModeSilent}

// keys is every key carryover documents, in display order.
var keys = []Key{
	oneOf("resume", publish.ModeAsk, ResumeModes, "how the next session opens: ask (summarise, then ask), brief (one line, then continue) or silent",
		func(c Config) string { return cmp.Or(c.Resume, publish.ModeAsk) }),
	{
		Name: "redact", Default: "true",
		Doc:   "mask secrets (keys, tokens, passwords) in handoffs and resume prompts",
		check: isBool,
		parse: func(s string) (string, error) {
			b, err := strconv.ParseBool(s)
			if err != nil {
				return "", fmt.Errorf("redact is true or false, not %q", s)
			}
			return strconv.FormatBool(b), nil
		},
		get: func(c Config) string { return strconv.FormatBool(c.RedactOn()) },
	},
	{
		Name: "tools", Default: "[]", GlobalOnly: true,
		Doc: "the agents `carryover install` and `refresh` set up (written by install)",
		check: func(v any) error {
			xs, ok := v.([]any)
			if !ok {
				return fmt.Errorf("want a list of agents (%s)", strings.Join(specs.Names(), ", "))
			}
			for _, x := range xs {
				if s, ok := x.(string); !ok || !slices.Contains(specs.Names(), s) {
					return fmt.Errorf("%v is not an agent; choose from %s", x, strings.Join(specs.Names(), ", "))
				}
			}
			return nil
		},
		parse: func(s string) (string, error) {
			var q []string
			for _, t := range strings.Split(s, ",") {
				t = strings.TrimSpace(t)
				if t == "" {
					continue
				}
				if !slices.Contains(specs.Names(), t) {
					return "", fmt.Errorf("unknown agent %q; choose from %s", t, strings.Join(specs.Names(), ", "))
				}
				q = append(q, strconv.Quote(t))
			}
			return "[" + strings.Join(q, ", ") + "]", nil
		},
		get: func(c Config) string { return Strings(c.Tools) },
	},
	oneOf("pointer", publish.PointerAuto, publish.PointerModes, "where the pointer block to .carryover/handoff.md goes: auto (only in projects where an agent needs it: no working start injection), always (AGENTS.md and the agents' memory files everywhere) or never",
		Config.PointerMode),
	{
		Name: "ignore", Default: "[]", GlobalOnly: true,
		Doc:   "projects (and everything under them) carryover leaves alone: hooks there exit at once (`carryover ignore`)",
		check: checkPathList, parse: parsePathList("ignore"),
		get: func(c Config) string { return Strings(c.Ignore) },
	},
	{
		Name: "trusted_projects", Default: "[]", GlobalOnly: true,
		Doc:   "projects whose .carryover.toml may also weaken settings (turn redaction off, make resume quieter)",
		check: checkPathList, parse: parsePathList("trusted_projects"),
		get: func(c Config) string { return Strings(c.TrustedProjects) },
	},
	{
		Name: "expire_after", Default: `"7d"`, GlobalOnly: true,
		Doc: "age after which a new session gets only a one-line notice of the project's handoff (30d, 2w, 12h)",
		check: func(v any) error {
			s, ok := v.(string)
			if !ok {
				return fmt.Errorf("want an age such as \"7d\"")
			}
			_, err := publish.ParseAge(s)
			return err
		},
		parse: func(s string) (string, error) {
			if _, err := publish.ParseAge(s); err != nil {
				return "", err
			}
			return strconv.Quote(s), nil
		},
		get: func(c Config) string { return strconv.Quote(cmp.Or(c.ExpireAfter, "7d")) },
	},
	{
		Name: "history_keep", Default: "50", GlobalOnly: true,
		Doc: "how many previous handoffs .carryover/history keeps",
		check: func(v any) error {
			if n, ok := v.(int64); !ok || n < 1 {
				return fmt.Errorf("want a whole number of handoffs, at least 1")
			}
			return nil
		},
		parse: func(s string) (string, error) {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				return "", fmt.Errorf("history_keep takes a whole number of handoffs, at least 1, not %q", s)
			}
			return strconv.Itoa(n), nil
		},
		get: func(c Config) string { return strconv.Itoa(cmp.Or(c.HistoryKeep, 50)) },
	},
	wallKeys[0], wallKeys[1], // [limits], [context]: config.go
}

// oneOf is a string key taking one of values; get is its value in effect.
func oneOf(name, def string, values []string, doc string, get func(Config) string) Key {
	return Key{Name: name, Default: strconv.Quote(def), Doc: doc,
		check: func(v any) error {
			if s, ok := v.(string); !ok || !slices.Contains(values, s) {
				return fmt.Errorf("want one of %s", strings.Join(quoteAll(values), ", "))
			}
			return nil
		},
		parse: func(s string) (string, error) {
			if !slices.Contains(values, s) {
				return "", fmt.Errorf("%s is one of %s, not %q", name, strings.Join(values, ", "), s)
			}
			return strconv.Quote(s), nil
		},
		get: func(c Config) string { return strconv.Quote(get(c)) },
	}
}

// LookupKey is the documented key (or table) name.
func LookupKey(name string) (Key, bool) {
	for _, k := range keys {
		if k.Name == name {
			return k, true
		}
	}
	return Key{}, false
}

// knownKeys is every key Config decodes (its toml tags, so a field
// added to Config is never reported as unknown) plus the documented ones.
func knownKeys() []string {
	var out []string
	t := reflect.TypeOf(Config{})
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	for _, k := range keys {
		if !slices.Contains(out, k.Name) {
			out = append(out, k.Name)
		}
	}
	return out
}

// decode reads one config file. A syntax error is err (the whole
// file is ignored, as before). An unknown key, a key that file may not set,
// or an invalid value is a warning naming the file, the key and what to
// write instead, and only that key is ignored.
func decode(path string, b []byte, global bool) (Config, map[string]any, []error, error) {
	var c Config
	var m map[string]any
	if err := toml.Unmarshal(b, &m); err != nil {
		return c, nil, nil, err
	}
	known := knownKeys()
	var warns []error
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(known, k) {
			warns = append(warns, fmt.Errorf("%s: unknown key %q ignored; %s (valid keys: %s)", path, k, ClosestHint(k, known), strings.Join(known, ", ")))
			delete(m, k)
			continue
		}
		ck, ok := LookupKey(k)
		if !ok {
			continue
		}
		if ck.GlobalOnly && !global {
			warns = append(warns, fmt.Errorf("%s: %q is only read from the global config; set it with `carryover config set %s ...`", path, k, k))
			delete(m, k)
			continue
		}
		if err := ck.check(m[k]); err != nil {
			warns = append(warns, fmt.Errorf("%s: %s = %s ignored: %v", path, k, Literal(m[k]), err))
			delete(m, k)
		}
	}
	clean, err := toml.Marshal(m)
	if err != nil {
		return c, m, warns, err
	}
	if err := toml.Unmarshal(clean, &c); err != nil {
		return c, m, warns, err
	}
	return c, m, warns, nil
}

// ClosestHint names the valid key nearest to k by edit distance.
func ClosestHint(k string, known []string) string {
	best, bestD := "", -1
	for _, c := range known {
		if d := publish.EditDistance(strings.ToLower(k), c); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" {
		return "no keys are valid here"
	}
	if bestD <= max(2, len(k)/2) || strings.Contains(k, best) {
		return fmt.Sprintf("did you mean %q?", best)
	}
	return fmt.Sprintf("the closest valid key is %q", best)
}

// Literal renders a decoded TOML value back as TOML (basic strings).
func Literal(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case []any:
		parts := make([]string, len(x))
		for i, y := range x {
			parts[i] = Literal(y)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		return "{…}"
	}
	return fmt.Sprint(v)
}

// Strings is a TOML list of strings.
func Strings(xs []string) string {
	return "[" + strings.Join(quoteAll(xs), ", ") + "]"
}

func quoteAll(xs []string) []string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return q
}

// Value is one resolved key of `carryover config`.
type Value struct {
	Key   string `json:"key"`
	Value string `json:"value"` // TOML literal
	// Origin is "default", "global" or "project"; File the file it came from.
	Origin string `json:"origin"`
	File   string `json:"file,omitempty"`
	Doc    string `json:"doc"`
}

// Resolve reports each documented key's effective value and where it
// came from. The value is LoadConfig's; the origin is the last file, in
// load order, that sets the key to that value (so a project setting the
// merge policy ignores is attributed to the file that won).
func Resolve(globalPath, home, project string) ([]Value, []error) {
	type file struct {
		origin, path string
		keys         map[string]any // what decode kept: known, allowed there, valid
	}
	var files []file
	cfg, errs := load(globalPath, home, project, func(path string, b []byte, global bool) (Config, map[string]any, []error, error) {
		c, m, warns, err := decode(path, b, global)
		files = append(files, file{map[bool]string{true: "global", false: "project"}[global], path, m})
		return c, m, warns, err
	})
	var out []Value
	for _, k := range keys {
		v := Value{Key: k.Name, Value: k.get(cfg), Origin: "default", Doc: k.Doc}
		for _, f := range files {
			if x, ok := f.keys[k.Name]; ok && Literal(x) == v.Value {
				v.Origin, v.File = f.origin, f.path
			}
		}
		out = append(out, v)
	}
	return out, errs
}

// ProjectPath is a project's override file.
func ProjectPath(project string) string { return filepath.Join(project, ProjectConfigName) }

// Warnings is every config problem of the global file and of each
// project's file, once each (`carryover status` shows them).
func Warnings(globalPath, home string, projects []string) []string {
	var out []string
	seen := map[string]bool{}
	if len(projects) == 0 {
		projects = []string{""}
	}
	for _, p := range projects {
		_, errs := Load(globalPath, home, p)
		for _, err := range errs {
			if s := err.Error(); !seen[s] && !strings.HasPrefix(s, IgnoredPrefix) {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// Leaf is a key `config get/set/unset` takes: a top-level key, or a
// table's key written dotted (limits.warn_percent).
type Leaf struct {
	Key
	Inner string // the key inside the table; "" for a top-level key
}

// Path is the leaf's dotted name (limits.warn_percent).
func (l Leaf) Path() string {
	if l.Inner == "" {
		return l.Name
	}
	return l.Name + "." + l.Inner
}

// ParseTable is a table key's answer to a VALUE (always an error naming
// its dotted keys: a table is set one key at a time).
func (k Key) ParseTable() error {
	_, err := k.parse("")
	return err
}

// Leaves is every key `config get/set/unset` takes, in display order.
func Leaves() []Leaf {
	var out []Leaf
	for _, k := range keys {
		if k.Sub == nil {
			out = append(out, Leaf{Key: k})
			continue
		}
		for _, s := range slices.Sorted(maps.Keys(k.Sub)) {
			out = append(out, Leaf{Key: k, Inner: s})
		}
	}
	return out
}

// LeafNames are the keys `config get/set/unset` take.
func LeafNames() []string {
	var out []string
	for _, l := range Leaves() {
		out = append(out, l.Path())
	}
	return out
}

// LookupLeaf is the key `config get/set/unset` takes by name.
func LookupLeaf(name string) (Leaf, bool) {
	for _, l := range Leaves() {
		if l.Path() == name {
			return l, true
		}
	}
	return Leaf{}, false
}

// Parse turns a command-line VALUE into the TOML literal to write.
func (l Leaf) Parse(s string) (string, error) {
	if l.Inner == "" {
		return l.parse(s)
	}
	var m map[string]any
	if err := toml.Unmarshal([]byte("v = "+s), &m); err != nil {
		return "", fmt.Errorf("%s takes a number or true/false, not %q", l.Path(), s)
	}
	if err := l.Sub[l.Inner](m["v"]); err != nil {
		return "", fmt.Errorf("%s: %v, not %q", l.Path(), err, s)
	}
	return Literal(m["v"]), nil
}

// checkPathList accepts a TOML list of strings (the directory keys:
// ignore, trusted_projects).
func checkPathList(v any) error {
	xs, ok := v.([]any)
	if !ok {
		return fmt.Errorf("want a list of absolute directory paths")
	}
	for _, x := range xs {
		if _, ok := x.(string); !ok {
			return fmt.Errorf("%v is not a path", x)
		}
	}
	return nil
}

// parsePathList reads `config set KEY a,b` for a directory key: absolute
// paths (or ~/...), comma-separated.
func parsePathList(key string) func(string) (string, error) {
	return func(s string) (string, error) {
		var ps []string
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			if !filepath.IsAbs(p) && !strings.HasPrefix(p, "~/") {
				return "", fmt.Errorf("%s takes absolute paths (or ~/...), not %q", key, p)
			}
			ps = append(ps, p)
		}
		return Strings(ps), nil
	}
}

// config.toml and .carryover.toml are edited key by key through the one
// TOML editor (hookconf.SetKey/UnsetKey), every other byte kept.

// SetKeyInFile sets key to literal in the TOML file at path, creating the
// file (and its directory) with perm when missing.
func SetKeyInFile(path, key, literal string, perm fs.FileMode) error {
	return EditFile(path, perm, func(b []byte) ([]byte, error) { return hookconf.SetKey(b, key, literal) })
}

// EditFile applies edit to the file at path (empty when missing) and
// writes the result when it changed.
func EditFile(path string, perm fs.FileMode, edit func([]byte) ([]byte, error)) error {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	out, err := edit(b)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(out, b) {
		return nil
	}
	return hookconf.OSFS{}.WriteFile(path, out, perm)
}
