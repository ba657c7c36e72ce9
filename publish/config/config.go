package config

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/safefile"
)

// Config is the user's ~/.carryover/config.toml with what a project's
// .carryover.toml may add. A project file may only make carryover safer
// (ProjectPolicy): a repository cloned from a stranger must not turn
// redaction off or hide the resume protocol. A weakening is honoured only
// for a project the user lists in trusted_projects; what is ignored is
// reported (Ignored), logged by the hook and shown by status.
type Config struct {
	// Resume is the resume protocol: ask, brief or silent.
	Resume string `toml:"resume"`
	// Redact turns secret redaction off when false.
	Redact *bool `toml:"redact"`
	// Tools is the install selection (written by `carryover install`).
	Tools []string `toml:"tools"`
	// TrustedProjects are project directories whose .carryover.toml may
	// also weaken settings (user's file only).
	TrustedProjects []string `toml:"trusted_projects" json:"TrustedProjects,omitempty"`
	// ExpireAfter ("7d", "12h") and HistoryKeep are the handoff lifecycle
	// settings (user's file only).
	ExpireAfter string `toml:"expire_after" json:"ExpireAfter,omitempty"`
	HistoryKeep int    `toml:"history_keep" json:"HistoryKeep,omitempty"`
	// Pointer is where the pointer block is written: auto, always, never
	// (guest.go); a project file may only move it towards never.
	Pointer string `toml:"pointer" json:"Pointer,omitempty"`
	// Ignore lists projects carryover leaves alone: their hooks exit at
	// once (user's file only; `carryover ignore`).
	Ignore []string `toml:"ignore" json:"Ignore,omitempty"`
	// Limits and Context are [limits] and [context] (Walls).
	Limits  LimitsConfig  `toml:"limits" json:"Limits"`
	Context ContextConfig `toml:"context" json:"Context"`
	// Ignored says what a project file asked for that was not honoured.
	Ignored []string `toml:"-" json:"Ignored,omitempty"`
	// home expands "~/" in TrustedProjects (LoadConfig's home).
	home string
}

// RedactOn reports whether redaction is on (default true).
func (c Config) RedactOn() bool { return c.Redact == nil || *c.Redact }

// ProjectConfigName is a project's own config file.
const ProjectConfigName = ".carryover.toml"

// visibility ranks resume protocols by how plainly the user sees that a
// handoff was used: a project may move towards ask, never away from it.
var visibility = map[string]int{publish.ModeSilent: 0, publish.ModeBrief: 1, publish.ModeAsk: 2}

// Load reads the user's config at globalPath and, when project is not
// empty, the project's .carryover.toml under ProjectPolicy. A broken file,
// an unknown key or an invalid value is reported and ignored (defaults
// apply), as is each ignored project setting. home expands "~/".
func Load(globalPath, home, project string) (Config, []error) {
	return load(globalPath, home, project, decode)
}

// load is Load with the decoder of one file (tests decode without the key
// table, to reach the policy with what the table would warn about).
func load(globalPath, home, project string, dec decoder) (Config, []error) {
	c, _, errs, _ := loadFile(globalPath, true, dec)
	c.home = home
	if project == "" {
		return c, errs
	}
	path := ProjectPath(project)
	o, keys, perrs, ok := loadFile(path, false, dec)
	if errs = append(errs, perrs...); !ok {
		return c, errs
	}
	c = ProjectPolicy(c, o, keys, project, path)
	for _, why := range c.Ignored {
		errs = append(errs, errors.New(IgnoredPrefix+why))
	}
	return c, errs
}

// decoder decodes one config file (decode; global: the user's own).
type decoder func(path string, b []byte, global bool) (Config, map[string]any, []error, error)

// loadFile reads and decodes one config file; ok is false when there is
// none or it is broken (said in errs: defaults apply).
func loadFile(path string, global bool, dec decoder) (c Config, keys map[string]any, errs []error, ok bool) {
	b, err := readConfig(path, global)
	if err != nil {
		return c, nil, []error{err}, false
	} else if b == nil {
		return c, nil, nil, false
	}
	c, keys, errs, err = dec(path, b, global)
	if err != nil {
		return Config{}, nil, append(errs, fmt.Errorf("%s: %v (fix the file; defaults are used meanwhile)", path, err)), false
	}
	return c, keys, errs, true
}

// IgnoredPrefix starts each error LoadConfig returns for a project setting
// the policy did not honour (status lists those apart from key warnings).
const IgnoredPrefix = "ignored "

// ProjectPolicy applies a project file's settings o (keys: every key the
// file holds) to the user's config g: what makes carryover safer always,
// a weakening only for a project g trusts.
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
		switch {
		case *o.Redact || trusted:
			c.Redact = o.Redact
		default:
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

// mergeRanked sets *dst to the project's mode when trusted or ranked no
// lower than the user's cur (def when cur is invalid): resume by
// visibility, pointer towards never. rank's keys are the valid modes.
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

// otherKeys are the notes on a project file's keys it may not set: the
// user's own settings, and unknown ones (sorted).
func otherKeys(keys map[string]any, path string) []string {
	var notes, rest []string
	for k := range keys {
		switch k {
		case "resume", "redact", "limits", "context", "pointer":
		case "tools", "trusted_projects", "expire_after", "history_keep", "ignore":
			notes = append(notes, fmt.Sprintf("%s in %s (read from your own config.toml only)", k, path))
		default:
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		notes = append(notes, fmt.Sprintf("unknown setting %q in %s", publish.OneLine(k), path))
	}
	return notes
}

// PointerMode is the pointer setting in effect (auto when unset).
func (c Config) PointerMode() string {
	if publish.ValidPointer(c.Pointer) {
		return c.Pointer
	}
	return publish.PointerAuto
}

// Ignores reports whether project is, or is inside, a directory the user
// listed in ignore (paths compared after ~ expansion and symlinks).
func (c Config) Ignores(project string) bool { return c.lists(c.Ignore, project, true) }

// Trusts reports whether the user's config names project in
// trusted_projects (paths compared after ~ expansion and symlinks).
func (c Config) Trusts(project string) bool { return c.lists(c.TrustedProjects, project, false) }

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

// pointerRank orders the settings by how much they write into the
// project: a project file may only move towards never.
var pointerRank = map[string]int{publish.PointerAlways: 0, publish.PointerAuto: 1, publish.PointerNever: 2}

// maxConfig is the largest config file carryover reads (a real one is a
// few hundred bytes).
const maxConfig = 1 << 20

// readConfig reads a config file: nil when there is none; a regular file
// of at most maxConfig bytes, never blocking (a project's may be a FIFO or
// /dev/zero). The user's own may be a symlink (dotfile managers); a
// project's is not followed out of the project.
func readConfig(path string, follow bool) ([]byte, error) {
	read := safefile.ReadFileNoFollow
	if follow {
		read = safefile.ReadFile
	}
	b, err := read(path, maxConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// LimitsConfig is config.toml's [limits] (publish/limits reads it).
// Pointers tell "unset" from zero so a project file overrides only what it
// sets.
type LimitsConfig struct {
	// AutoResume writes RESUME.md when a limit is reached or near (default true).
	AutoResume *bool `toml:"auto_resume"`
	// WarnPercent is the used share of a usage window from which RESUME.md
	// is written ahead of time and the user told once (default 90).
	WarnPercent *float64 `toml:"warn_percent"`
	// MaxRestarts bounds `carryover run`'s restarts (default 10).
	MaxRestarts *int `toml:"max_restarts"`
}

// ContextConfig is config.toml's [context]: the levels' thresholds in
// percent of the context window.
type ContextConfig struct {
	EarlyWarn *int `toml:"early_warn"`
	Warn      *int `toml:"warn"`
	Critical  *int `toml:"critical"`
	// RestartAtCritical lets `carryover run` restart the agent at CRITICAL (default true).
	RestartAtCritical *bool `toml:"restart_at_critical"`
}

// LimitsKeys and ContextKeys are the keys of [limits] and [context].
var (
	LimitsKeys  = []string{"auto_resume", "warn_percent", "max_restarts"}
	ContextKeys = []string{"early_warn", "warn", "critical", "restart_at_critical"}
)

// mergeWalls applies a project file's [limits] and [context] to c. An
// untrusted project may only make carryover less intrusive (issue 21: a
// planted `[context] critical = 3` made `carryover run` restart the agent
// ten times in six seconds): switch auto_resume and restart_at_critical
// off, lower max_restarts, raise warn_percent and the thresholds, each
// compared with what is in effect without it, and only to a valid value.
func (c *Config) mergeWalls(o Config, trusted bool, ignore func(string)) {
	offOnly("[limits] auto_resume", &c.Limits.AutoResume, o.Limits.AutoResume, trusted, ignore)
	offOnly("[context] restart_at_critical", &c.Context.RestartAtCritical, o.Context.RestartAtCritical, trusted, ignore)
	c.mergeWarnPercent(o.Limits.WarnPercent, trusted, ignore)
	c.mergeMaxRestarts(o.Limits.MaxRestarts, trusted, ignore)
	c.mergeThresholds(o.Context, trusted, ignore)
}

// offOnly takes src over dst when trusted, when it is false, or when true
// is already in effect.
func offOnly(name string, dst **bool, src *bool, trusted bool, ignore func(string)) {
	switch {
	case src == nil:
	case trusted || !*src || *dst == nil || **dst:
		*dst = src
	default:
		ignore(fmt.Sprintf("%s = true (your config has it off)", name))
	}
}

// mergeWarnPercent takes p when trusted or no earlier than the warning in
// effect (and at most 100).
func (c *Config) mergeWarnPercent(p *float64, trusted bool, ignore func(string)) {
	if cur := c.Walls().WarnPercent(); p != nil && !trusted && (*p < cur || *p > 100) {
		ignore(fmt.Sprintf("[limits] warn_percent = %g (earlier than %g)", *p, cur))
	} else if p != nil {
		c.Limits.WarnPercent = p
	}
}

// mergeMaxRestarts takes n when trusted or no more than the limit in
// effect (and not negative).
func (c *Config) mergeMaxRestarts(n *int, trusted bool, ignore func(string)) {
	if cur := c.Walls().MaxRestarts(); n != nil && !trusted && (*n < 0 || *n > cur) {
		ignore(fmt.Sprintf("[limits] max_restarts = %d (more than %d)", *n, cur))
	} else if n != nil {
		c.Limits.MaxRestarts = n
	}
}

// mergeThresholds takes o's context thresholds, all or none: when trusted,
// or when together they rise within 1..100 and none is earlier than the
// one in effect.
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

// Walls are the [limits] and [context] sections with their defaults
// (publish/limits reads them).
type Walls struct {
	Limits  LimitsConfig
	Context ContextConfig
}

// Walls is c's [limits]/[context] configuration.
func (c Config) Walls() Walls { return Walls{Limits: c.Limits, Context: c.Context} }

// Defaults.
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

// MaxRestarts is `carryover run`'s bound.
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

// Thresholds are the context thresholds (the defaults when the configured
// ones do not rise strictly within 1..100).
func (c Walls) Thresholds() distill.Thresholds {
	if t := c.configured(); t.Valid() {
		return t
	}
	return distill.DefaultThresholds
}

// configured is the defaults overlaid with what the config sets, valid or not.
func (c Walls) configured() distill.Thresholds {
	t := distill.DefaultThresholds
	for _, f := range []struct {
		dst *int
		src *int
	}{{&t.EarlyWarn, c.Context.EarlyWarn}, {&t.Warn, c.Context.Warn}, {&t.Critical, c.Context.Critical}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	return t
}

// Problems lists what is wrong with the configuration (for status and the log).
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

// wallKeys are [limits] and [context] in the key table (keys.go):
// a misspelt key or a bad value inside them is warned, naming the table.
var wallKeys = []Key{
	{
		Name: "limits", Default: "{auto_resume = true, warn_percent = 90, max_restarts = 10}",
		Doc:   "rate limits: write RESUME.md when one is hit (auto_resume), or ahead of time from warn_percent % of a usage window; carryover run's max_restarts",
		Sub:   limitsChecks,
		check: tableCheck("limits", LimitsKeys, limitsChecks),
		parse: tableParse("limits", LimitsKeys),
		get: func(c Config) string {
			w := c.Walls()
			return fmt.Sprintf("{auto_resume = %t, warn_percent = %g, max_restarts = %d}", w.AutoResume(), w.WarnPercent(), w.MaxRestarts())
		},
	},
	{
		Name: "context", Default: "{early_warn = 65, warn = 75, critical = 85, restart_at_critical = true}",
		Doc:   "context window levels in % (WARN tells the agent once; CRITICAL refreshes the handoff and lets carryover run restart the agent)",
		Sub:   contextChecks,
		check: tableCheck("context", ContextKeys, contextChecks),
		parse: tableParse("context", ContextKeys),
		get: func(c Config) string {
			w := c.Walls()
			t := w.Thresholds()
			return fmt.Sprintf("{early_warn = %d, warn = %d, critical = %d, restart_at_critical = %t}", t.EarlyWarn, t.Warn, t.Critical, w.RestartAtCritical())
		},
	},
}

var (
	limitsChecks  = map[string]func(any) error{"auto_resume": isBool, "warn_percent": percent, "max_restarts": nonNegative}
	contextChecks = map[string]func(any) error{"early_warn": percent, "warn": percent, "critical": percent, "restart_at_critical": isBool}
)

func tableCheck(name string, keys []string, checks map[string]func(any) error) func(any) error {
	return func(v any) error {
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
	}
}

func tableParse(name string, keys []string) func(string) (string, error) {
	return func(string) (string, error) {
		dotted := make([]string, len(keys))
		for i, k := range keys {
			dotted[i] = name + "." + k
		}
		return "", fmt.Errorf("%s is a table; set one of its keys: %s", name, strings.Join(dotted, ", "))
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
