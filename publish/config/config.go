package config

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

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
	// Limits and Context are [limits] and [context] (walls.go).
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
