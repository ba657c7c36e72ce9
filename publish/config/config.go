// Package config is carryover's configuration: the user's ~/.carryover/config.toml, what a project's .carryover.toml
// may add to it (ProjectPolicy), and its keys as data (keys: what each accepts, its default, where it may be set),
// which Load decodes with and `carryover config` / `config set` read.
package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/safefile"
	"github.com/carryover/carryover/specs"
	"github.com/carryover/carryover/specs/hookconf"
	"github.com/pelletier/go-toml/v2"
)

// Config is the user's config.toml with what a project's .carryover.toml may add. A project file may only make
// carryover safer (ProjectPolicy): a repository cloned from a stranger must not turn redaction off or hide the resume
// protocol. A weakening is honoured only for a project the user lists in trusted_projects; what is ignored is reported
// (Ignored), logged by the hook and shown by status. "user's file only" keys are GlobalOnly.
type Config struct {
	Resume          string   `toml:"resume"` // ask, brief or silent
	Redact          *bool    `toml:"redact"` // false turns secret redaction off
	Tools           []string `toml:"tools"`  // the install selection (written by install)
	TrustedProjects []string `toml:"trusted_projects" json:"TrustedProjects,omitempty"`
	ExpireAfter     string   `toml:"expire_after" json:"ExpireAfter,omitempty"` // "7d", "12h"
	HistoryKeep     int      `toml:"history_keep" json:"HistoryKeep,omitempty"`
	// Pointer is auto, always or never (publish.PointerAuto…); a project file may only move it towards never.
	Pointer string   `toml:"pointer" json:"Pointer,omitempty"`
	Ignore  []string `toml:"ignore" json:"Ignore,omitempty"` // projects whose hooks exit at once (`carryover ignore`)
	// Limits and Context are [limits] and [context] (Walls).
	Limits  LimitsConfig  `toml:"limits" json:"Limits"`
	Context ContextConfig `toml:"context" json:"Context"`
	// Ignored says what a project file asked for that was not honoured.
	Ignored []string `toml:"-" json:"Ignored,omitempty"`
	home    string   // expands "~/" in TrustedProjects and Ignore (Load's home)
}

// RedactOn reports whether redaction is on (default true).
func (c Config) RedactOn() bool { return c.Redact == nil || *c.Redact }

const ProjectConfigName = ".carryover.toml"

func ProjectPath(project string) string { return filepath.Join(project, ProjectConfigName) }

// visibility ranks resume protocols by how plainly the user sees that a handoff was used, pointerRank the pointer
// settings by how much they write into the project: a project may move towards ask, and towards never.
var (
	visibility  = map[string]int{publish.ModeSilent: 0, publish.ModeBrief: 1, publish.ModeAsk: 2}
	pointerRank = map[string]int{publish.PointerAlways: 0, publish.PointerAuto: 1, publish.PointerNever: 2}
)

// Load reads the user's config at globalPath and, when project is not empty, the project's .carryover.toml under
// ProjectPolicy. A broken file, an unknown key or an invalid value is reported and ignored (defaults apply), as is each
// ignored project setting. home expands "~/".
func Load(globalPath, home, project string) (Config, []error) {
	return load(globalPath, home, project, decode)
}

// WithProject is c, the user's config as Load(…, "") read it, with project's .carryover.toml applied: a hook reads the
// user's file once per event for both the ignore list and the project's settings.
func (c Config) WithProject(project string) (Config, []error) {
	return c.withProject(project, decode)
}

// load is Load with the decoder of one file (tests decode without the key table, to reach the policy with what the
// table would warn about).
func load(globalPath, home, project string, dec decoder) (Config, []error) {
	c, _, errs, _ := loadFile(globalPath, true, dec)
	c.home = home
	if project == "" {
		return c, errs
	}
	c, perrs := c.withProject(project, dec)
	return c, append(errs, perrs...)
}

func (c Config) withProject(project string, dec decoder) (Config, []error) {
	path := ProjectPath(project)
	o, keys, errs, ok := loadFile(path, false, dec)
	if !ok {
		return c, errs
	}
	c = ProjectPolicy(c, o, keys, project, path)
	return c, append(errs, publish.Map(c.Ignored, func(why string) error { return errors.New(IgnoredPrefix + why) })...)
}

// decoder decodes one config file (decode; global: the user's own).
type decoder func(path string, b []byte, global bool) (Config, map[string]any, []error, error)

// maxConfig is the largest config file carryover reads (a real one is a few hundred bytes).
const maxConfig = 1 << 20

// loadFile reads and decodes one config file; ok is false when there is none or it is broken (said in errs: defaults
// apply). It reads a regular file, never blocking (a project's may be a FIFO or /dev/zero); the user's own may be a
// symlink (dotfile managers), a project's is not followed.
func loadFile(path string, global bool, dec decoder) (c Config, keys map[string]any, errs []error, ok bool) {
	read := safefile.ReadFileNoFollow
	if global {
		read = safefile.ReadFile
	}
	b, err := read(path, maxConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil, nil, false
	} else if err != nil {
		return c, nil, []error{err}, false
	}
	c, keys, errs, err = dec(path, b, global)
	if err != nil {
		return Config{}, nil, append(errs, fmt.Errorf("%s: %v (fix the file; defaults are used meanwhile)", path, err)), false
	}
	return c, keys, errs, true
}

// IgnoredPrefix starts each error Load returns for a project setting the policy did not honour (status lists those
// apart from key warnings).
const IgnoredPrefix = "ignored "

// ProjectPolicy applies a project file's settings o (keys: every key the file holds) to the user's config g: what makes
// carryover safer always, a weakening only for a project g trusts.
func ProjectPolicy(g, o Config, keys map[string]any, project, path string) Config {
	c := g
	c.Ignored = nil
	trusted := g.Trusts(project)
	hint := fmt.Sprintf("(a project file may only make carryover safer; to allow it, add %q to trusted_projects in your own config.toml)", project)
	ignore := func(what string) { c.Ignored = append(c.Ignored, fmt.Sprintf("%s in %s %s", what, path, hint)) }
	if o.Resume != "" {
		c.mergeRanked("resume", &c.Resume, g.Resume, o.Resume, publish.ModeAsk, visibility, "ask, brief, silent", trusted, path, ignore)
	}
	if o.Redact != nil {
		if *o.Redact || trusted {
			c.Redact = o.Redact
		} else {
			ignore("redact = false")
		}
	}
	if o.Pointer != "" {
		c.mergeRanked("pointer", &c.Pointer, g.Pointer, o.Pointer, publish.PointerAuto, pointerRank, "auto, always, never", trusted, path, ignore)
	}
	c.mergeWalls(o, trusted, ignore)
	c.Ignored = append(c.Ignored, otherKeys(keys, path)...)
	sort.Strings(c.Ignored)
	return c
}

// mergeRanked sets *dst to the project's mode when trusted or ranked no lower than the user's cur (def when cur is
// invalid); rank's keys are the valid modes.
func (c *Config) mergeRanked(key string, dst *string, cur, mode, def string, rank map[string]int, oneOf string, trusted bool, path string, ignore func(string)) {
	if _, ok := rank[cur]; !ok {
		cur = def
	}
	if _, ok := rank[mode]; !ok {
		c.Ignored = append(c.Ignored, fmt.Sprintf("%s = %q in %s (not one of %s)", key, publish.OneLine(mode), path, oneOf))
	} else if trusted || rank[mode] >= rank[cur] {
		*dst = mode
	} else {
		ignore(fmt.Sprintf("%s = %q", key, mode))
	}
}

// otherKeys are the notes on a project file's keys it may not set: the user's own settings, and unknown ones (sorted).
func otherKeys(keys map[string]any, path string) []string {
	var notes, rest []string
	for k := range keys {
		if ck, ok := LookupKey(k); !ok {
			rest = append(rest, k)
		} else if ck.GlobalOnly {
			notes = append(notes, fmt.Sprintf("%s in %s (read from your own config.toml only)", k, path))
		}
	}
	sort.Strings(rest)
	return append(notes, publish.Map(rest, func(k string) string { return fmt.Sprintf("unknown setting %q in %s", publish.OneLine(k), path) })...)
}

// PointerMode is the pointer setting in effect (auto when unset).
func (c Config) PointerMode() string {
	if publish.ValidPointer(c.Pointer) {
		return c.Pointer
	}
	return publish.PointerAuto
}

// Ignores reports whether project is, or is inside, a directory the user listed in ignore; Trusts whether
// trusted_projects names it (paths compared after ~ expansion and symlinks).
func (c Config) Ignores(project string) bool { return c.lists(c.Ignore, project, true) }
func (c Config) Trusts(project string) bool  { return c.lists(c.TrustedProjects, project, false) }

// lists reports whether dirs names project (or, under, a parent of it).
func (c Config) lists(dirs []string, project string, under bool) bool {
	if project == "" {
		return false
	}
	want := publish.Canonical(project)
	for _, p := range dirs {
		if strings.HasPrefix(p, "~/") && c.home != "" {
			p = filepath.Join(c.home, p[2:])
		}
		if !filepath.IsAbs(p) {
			continue
		}
		p = publish.Canonical(p)
		if want == p || under && strings.HasPrefix(want, strings.TrimSuffix(p, string(filepath.Separator))+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// LimitsConfig is config.toml's [limits]. Pointers tell "unset" from zero, so a project file overrides only what it
// sets.
type LimitsConfig struct {
	AutoResume *bool `toml:"auto_resume"` // write RESUME.md when a limit is reached or near (default true)
	// WarnPercent is the used share of a usage window from which RESUME.md is written ahead of time and the user told
	// once (default 90).
	WarnPercent *float64 `toml:"warn_percent"`
	MaxRestarts *int     `toml:"max_restarts"` // bounds `carryover run`'s restarts (default 10)
}

// ContextConfig is config.toml's [context]: the levels' thresholds in percent of the context window.
type ContextConfig struct {
	EarlyWarn         *int  `toml:"early_warn"`
	Warn              *int  `toml:"warn"`
	Critical          *int  `toml:"critical"`
	RestartAtCritical *bool `toml:"restart_at_critical"` // `carryover run` restarts the agent at CRITICAL (default true)
}

// LimitsKeys and ContextKeys are the keys of [limits] and [context].
var (
	LimitsKeys  = []string{"auto_resume", "warn_percent", "max_restarts"}
	ContextKeys = []string{"early_warn", "warn", "critical", "restart_at_critical"}
)

// mergeWalls applies a project file's [limits] and [context] to c. An untrusted project may only make carryover less
// intrusive (issue 21: a planted `[context] critical = 3` made `carryover run` restart the agent ten times in six
// seconds): switch auto_resume and restart_at_critical off, lower max_restarts, raise warn_percent and the thresholds,
// each compared with what is in effect without it, and only to a valid value.
func (c *Config) mergeWalls(o Config, trusted bool, ignore func(string)) {
	offOnly("[limits] auto_resume", &c.Limits.AutoResume, o.Limits.AutoResume, trusted, ignore)
	offOnly("[context] restart_at_critical", &c.Context.RestartAtCritical, o.Context.RestartAtCritical, trusted, ignore)
	if p, cur := o.Limits.WarnPercent, c.Walls().WarnPercent(); p != nil && !trusted && (*p < cur || *p > 100) {
		ignore(fmt.Sprintf("[limits] warn_percent = %g (earlier than %g)", *p, cur))
	} else if p != nil {
		c.Limits.WarnPercent = p
	}
	if n, cur := o.Limits.MaxRestarts, c.Walls().MaxRestarts(); n != nil && !trusted && (*n < 0 || *n > cur) {
		ignore(fmt.Sprintf("[limits] max_restarts = %d (more than %d)", *n, cur))
	} else if n != nil {
		c.Limits.MaxRestarts = n
	}
	c.mergeThresholds(o.Context, trusted, ignore)
}

// offOnly takes src over dst when trusted, when it is false, or when true is already in effect.
func offOnly(name string, dst **bool, src *bool, trusted bool, ignore func(string)) {
	switch {
	case src == nil:
	case trusted || !*src || *dst == nil || **dst:
		*dst = src
	default:
		ignore(fmt.Sprintf("%s = true (your config has it off)", name))
	}
}

// mergeThresholds takes o's context thresholds, all or none: when trusted, or when together they rise within 1..100 and
// none is earlier than the one in effect.
func (c *Config) mergeThresholds(o ContextConfig, trusted bool, ignore func(string)) {
	if o.EarlyWarn == nil && o.Warn == nil && o.Critical == nil {
		return
	}
	cur := c.Walls().Thresholds()
	merged := c.Context
	merged.EarlyWarn, merged.Warn, merged.Critical = cmp.Or(o.EarlyWarn, merged.EarlyWarn), cmp.Or(o.Warn, merged.Warn), cmp.Or(o.Critical, merged.Critical)
	t := Walls{Context: merged}.configured()
	if trusted || (t.Valid() && t.EarlyWarn >= cur.EarlyWarn && t.Warn >= cur.Warn && t.Critical >= cur.Critical) {
		c.Context.EarlyWarn, c.Context.Warn, c.Context.Critical = merged.EarlyWarn, merged.Warn, merged.Critical
		return
	}
	ignore(fmt.Sprintf("[context] early_warn/warn/critical = %d/%d/%d (earlier than %d/%d/%d, or not rising within 1..100)",
		t.EarlyWarn, t.Warn, t.Critical, cur.EarlyWarn, cur.Warn, cur.Critical))
}

// Walls are the [limits] and [context] sections with their defaults (publish/limits reads them).
type Walls struct {
	Limits  LimitsConfig
	Context ContextConfig
}

func (c Config) Walls() Walls { return Walls{Limits: c.Limits, Context: c.Context} }

const (
	DefaultWarnPercent = 90
	DefaultMaxRestarts = 10
)

// AutoResume reports whether RESUME.md is written on a limit.
func (c Walls) AutoResume() bool { return c.Limits.AutoResume == nil || *c.Limits.AutoResume }

// WarnPercent is the approaching-limit threshold.
func (c Walls) WarnPercent() float64 {
	if p := c.Limits.WarnPercent; p != nil && *p > 0 && *p <= 100 {
		return *p
	}
	return DefaultWarnPercent
}

func (c Walls) MaxRestarts() int {
	if n := c.Limits.MaxRestarts; n != nil && *n >= 0 {
		return *n
	}
	return DefaultMaxRestarts
}

// RestartAtCritical reports whether `carryover run` restarts at CRITICAL.
func (c Walls) RestartAtCritical() bool {
	return c.Context.RestartAtCritical == nil || *c.Context.RestartAtCritical
}

// Thresholds are the context thresholds (the defaults when the configured ones do not rise strictly within 1..100).
func (c Walls) Thresholds() distill.Thresholds {
	if t := c.configured(); t.Valid() {
		return t
	}
	return distill.DefaultThresholds
}

// configured is the defaults overlaid with what the config sets, valid or not.
func (c Walls) configured() distill.Thresholds {
	t := distill.DefaultThresholds
	for _, f := range []struct{ dst, src *int }{{&t.EarlyWarn, c.Context.EarlyWarn}, {&t.Warn, c.Context.Warn}, {&t.Critical, c.Context.Critical}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	return t
}

// Problems lists what is wrong with the configuration (status and the log).
func (c Walls) Problems() []string {
	var out []string
	if p := c.Limits.WarnPercent; p != nil && (*p <= 0 || *p > 100) {
		out = append(out, fmt.Sprintf("[limits] warn_percent = %v is not within 1..100; %d is used", *p, DefaultWarnPercent))
	}
	if n := c.Limits.MaxRestarts; n != nil && *n < 0 {
		out = append(out, fmt.Sprintf("[limits] max_restarts = %d is negative; %d is used", *n, DefaultMaxRestarts))
	}
	if t := c.configured(); !t.Valid() {
		d := distill.DefaultThresholds
		out = append(out, fmt.Sprintf("[context] early_warn < warn < critical within 1..100 is required (got %d/%d/%d); %d/%d/%d are used",
			t.EarlyWarn, t.Warn, t.Critical, d.EarlyWarn, d.Warn, d.Critical))
	}
	return out
}

// Key describes one key of config.toml / .carryover.toml: a misspelt key or a bad value is a warning naming the file,
// the key and the closest valid key.
type Key struct {
	Name       string
	Default    string // the value in effect when no file sets the key (a TOML literal)
	Doc        string
	GlobalOnly bool                           // read from ~/.carryover/config.toml only
	Sub        map[string]func(v any) error   // a table's keys (`limits.warn_percent`) and their checks
	check      func(v any) error              // validates a decoded TOML value (nil = valid)
	parse      func(s string) (string, error) // a command-line VALUE as a TOML literal (`config set`)
	get        func(c Config) string          // the effective value in a loaded Config, a TOML literal
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
				if t = strings.TrimSpace(t); t != "" && !slices.Contains(specs.Names(), t) {
					return "", fmt.Errorf("unknown agent %q; choose from %s", t, strings.Join(specs.Names(), ", "))
				} else if t != "" {
					q = append(q, strconv.Quote(t))
				}
			}
			return "[" + strings.Join(q, ", ") + "]", nil
		},
		get: func(c Config) string { return Strings(c.Tools) },
	},
	oneOf("pointer", publish.PointerAuto, publish.PointerModes, "where the pointer block to .carryover/handoff.md goes: auto (only in projects where an agent needs it: no working start injection), always (AGENTS.md and the agents' memory files everywhere) or never",
		Config.PointerMode),
	pathList("ignore", "projects (and everything under them) carryover leaves alone: hooks there exit at once (`carryover ignore`)",
		func(c Config) []string { return c.Ignore }),
	pathList("trusted_projects", "projects whose .carryover.toml may also weaken settings (turn redaction off, make resume quieter)",
		func(c Config) []string { return c.TrustedProjects }),
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
			_, err := publish.ParseAge(s)
			return strconv.Quote(s), err
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
	table("limits", "{auto_resume = true, warn_percent = 90, max_restarts = 10}",
		"rate limits: write RESUME.md when one is hit (auto_resume), or ahead of time from warn_percent % of a usage window; carryover run's max_restarts",
		LimitsKeys, limitsChecks, func(w Walls) string {
			return fmt.Sprintf("{auto_resume = %t, warn_percent = %g, max_restarts = %d}", w.AutoResume(), w.WarnPercent(), w.MaxRestarts())
		}),
	table("context", "{early_warn = 65, warn = 75, critical = 85, restart_at_critical = true}",
		"context window levels in % (WARN tells the agent once; CRITICAL refreshes the handoff and lets carryover run restart the agent)",
		ContextKeys, contextChecks, func(w Walls) string {
			t := w.Thresholds()
			return fmt.Sprintf("{early_warn = %d, warn = %d, critical = %d, restart_at_critical = %t}", t.EarlyWarn, t.Warn, t.Critical, w.RestartAtCritical())
		}),
}

var (
	limitsChecks  = map[string]func(any) error{"auto_resume": isBool, "warn_percent": percent, "max_restarts": nonNegative}
	contextChecks = map[string]func(any) error{"early_warn": percent, "warn": percent, "critical": percent, "restart_at_critical": isBool}
)

// oneOf is a string key taking one of values; get is its value in effect.
func oneOf(name, def string, values []string, doc string, get func(Config) string) Key {
	return Key{Name: name, Default: strconv.Quote(def), Doc: doc,
		check: func(v any) error {
			if s, ok := v.(string); !ok || !slices.Contains(values, s) {
				return fmt.Errorf("want one of %s", strings.Join(publish.Map(values, strconv.Quote), ", "))
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

// table is a table key of keys (in display order) with their checks; on the command line it is set one key at a time
// (parse names its dotted keys); get is its value in effect.
func table(name, def, doc string, keys []string, checks map[string]func(any) error, get func(Walls) string) Key {
	return Key{Name: name, Default: def, Doc: doc, Sub: checks,
		check: func(v any) error {
			m, ok := v.(map[string]any)
			if !ok {
				return fmt.Errorf("want a [%s] table", name)
			}
			for k, x := range m {
				if !slices.Contains(keys, k) {
					return fmt.Errorf("unknown key %q in [%s]; %s", k, name, ClosestHint(k, keys))
				}
				if err := checks[k](x); err != nil {
					return fmt.Errorf("[%s] %s: %v", name, k, err)
				}
			}
			return nil
		},
		parse: func(string) (string, error) {
			return "", fmt.Errorf("%s is a table; set one of its keys: %s.%s", name, name, strings.Join(keys, ", "+name+"."))
		},
		get: func(c Config) string { return get(c.Walls()) },
	}
}

func isBool(v any) error {
	if _, ok := v.(bool); !ok {
		return fmt.Errorf("want true or false")
	}
	return nil
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func percent(v any) error {
	if f, ok := number(v); !ok || f <= 0 || f > 100 {
		return fmt.Errorf("want a percentage within 1..100")
	}
	return nil
}

func nonNegative(v any) error {
	if f, ok := number(v); !ok || f < 0 || f != float64(int64(f)) {
		return fmt.Errorf("want a whole number ≥ 0")
	}
	return nil
}

// checkPathList accepts a TOML list of strings.
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

// pathList is a user's-file-only list of directories (ignore, trusted_projects): in a file a TOML list of strings, on
// the command line absolute paths (or ~/...), comma-separated; get is its value in effect.
func pathList(name, doc string, get func(Config) []string) Key {
	return Key{Name: name, Default: "[]", GlobalOnly: true, Doc: doc,
		check: checkPathList,
		parse: func(s string) (string, error) {
			var ps []string
			for _, p := range strings.Split(s, ",") {
				if p = strings.TrimSpace(p); p != "" && !filepath.IsAbs(p) && !strings.HasPrefix(p, "~/") {
					return "", fmt.Errorf("%s takes absolute paths (or ~/...), not %q", name, p)
				} else if p != "" {
					ps = append(ps, p)
				}
			}
			return Strings(ps), nil
		},
		get: func(c Config) string { return Strings(get(c)) },
	}
}

func LookupKey(name string) (Key, bool) {
	return named(keys, func(k Key) string { return k.Name }, name)
}

// named is the item of xs whose name is want.
func named[T any](xs []T, name func(T) string, want string) (x T, ok bool) {
	if i := slices.IndexFunc(xs, func(x T) bool { return name(x) == want }); i >= 0 {
		return xs[i], true
	}
	return x, false
}

// decode reads one config file. A syntax error is err (the whole file is ignored). An unknown key, a key that file may
// not set, or an invalid value is a warning naming the file, the key and what to write instead, and only that key is
// ignored.
func decode(path string, b []byte, global bool) (Config, map[string]any, []error, error) {
	var c Config
	var m map[string]any
	if err := toml.Unmarshal(b, &m); err != nil {
		return c, nil, nil, err
	}
	known := publish.Map(keys, func(k Key) string { return k.Name }) // every field of Config has its key (TestEveryFieldIsAKey)
	var warns []error
	for _, k := range slices.Sorted(maps.Keys(m)) {
		ck, ok := LookupKey(k)
		var warn error
		switch {
		case !ok:
			warn = fmt.Errorf("%s: unknown key %q ignored; %s (valid keys: %s)", path, k, ClosestHint(k, known), strings.Join(known, ", "))
		case ck.GlobalOnly && !global:
			warn = fmt.Errorf("%s: %q is only read from the global config; set it with `carryover config set %s ...`", path, k, k)
		default:
			if err := ck.check(m[k]); err != nil {
				warn = fmt.Errorf("%s: %s = %s ignored: %v", path, k, Literal(m[k]), err)
			}
		}
		if warn != nil {
			warns = append(warns, warn)
			delete(m, k)
		}
	}
	clean, err := toml.Marshal(m)
	if err == nil {
		err = toml.Unmarshal(clean, &c)
	}
	return c, m, warns, err
}

// ClosestHint names the valid key nearest to k by edit distance.
func ClosestHint(k string, known []string) string {
	best, bestD := publish.Nearest(k, known, strings.ToLower) // the keys are lower case
	switch {
	case best == "":
		return "no keys are valid here"
	case bestD <= max(2, len(k)/2) || strings.Contains(k, best):
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
		return "[" + strings.Join(publish.Map(x, Literal), ", ") + "]"
	case map[string]any:
		return "{…}"
	}
	return fmt.Sprint(v)
}

func Strings(xs []string) string {
	return "[" + strings.Join(publish.Map(xs, strconv.Quote), ", ") + "]"
}

// Value is one resolved key of `carryover config`.
type Value struct {
	Key    string `json:"key"`
	Value  string `json:"value"`  // TOML literal
	Origin string `json:"origin"` // "default", "global" or "project"
	File   string `json:"file,omitempty"`
	Doc    string `json:"doc"`
}

// Resolve reports each documented key's effective value (Load's) and where it came from: the last file, in load order,
// that sets the key to that value (a project setting the merge policy ignores is attributed to the file that won).
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

// Warnings is every config problem of the global file and of each project's file, once each (`carryover status` shows
// them).
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

// Leaf is a key `config get/set/unset` takes: a top-level key, or a table's key written dotted (limits.warn_percent).
type Leaf struct {
	Key
	Inner string // the key inside the table; "" for a top-level key
}

func (l Leaf) Path() string {
	if l.Inner == "" {
		return l.Name
	}
	return l.Name + "." + l.Inner
}

// ParseTable is a table key's answer to a VALUE (always an error naming its dotted keys).
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
		}
		out = append(out, publish.Map(slices.Sorted(maps.Keys(k.Sub)), func(s string) Leaf { return Leaf{Key: k, Inner: s} })...)
	}
	return out
}

func LeafNames() []string { return publish.Map(Leaves(), Leaf.Path) }

func LookupLeaf(name string) (Leaf, bool) { return named(Leaves(), Leaf.Path, name) }

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

// SetKeyInFile sets key to literal in the TOML file at path, creating the file (and its directory) with perm when
// missing, every other byte kept (hookconf.SetKey, the one TOML editor).
func SetKeyInFile(path, key, literal string, perm fs.FileMode) error {
	return EditFile(path, perm, func(b []byte) ([]byte, error) { return hookconf.SetKey(b, key, literal) })
}

// EditFile applies edit to the file at path (empty when missing) and writes the result when it changed. It reads as
// loadFile does, a regular file without blocking: a project's .carryover.toml may be a FIFO.
func EditFile(path string, perm fs.FileMode, edit func([]byte) ([]byte, error)) error {
	b, err := safefile.ReadFile(path, maxConfig)
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
