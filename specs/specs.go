// Package specs is carryover's versioned table of agents: how to detect each
// one, where its configuration and transcripts live, and which native hook
// events carryover registers for a given version, with the injection envelope
// the agent expects.
//
// The table is tools.toml, embedded and decoded strictly (unknown keys fail).
// Load validates it; Resolve maps (tool, version) to a Capability. What does
// not vary by version (display name, injection envelope, event meanings) is
// the agent's descriptor in adapters; every [[tool]] needs one there and
// every agent in adapters.All needs a [[tool]] here.
package specs

import (
	"bytes"
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/carryover/carryover/adapters"
	"github.com/hashicorp/go-version"
	"github.com/pelletier/go-toml/v2"
)

//go:embed tools.toml
var toolsTOML []byte

var loadOnce = sync.OnceValues(Load)

// Names lists every agent in the table, in table order.
func Names() []string {
	t, err := loadOnce()
	if err != nil {
		return nil
	}
	return t.names()
}

var (
	// ErrUnknownTool is returned for a tool name that is not in the table.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrUnsupportedVersion is returned for a version older than every row.
	ErrUnsupportedVersion = errors.New("unsupported version")
)

// Hook is one native hook event carryover registers (the tools.toml header
// says what each field means).
type Hook struct {
	Native  string `toml:"native"` // also the --event value carryover receives
	Timeout int    `toml:"timeout"`
	Matcher string `toml:"matcher"`
}

// Row is one version range of a tool.
type Row struct {
	ID       string `toml:"id"`
	Versions string `toml:"versions"`
	Tested   string `toml:"tested"`
	Inject   []Hook `toml:"inject"`
	Snapshot []Hook `toml:"snapshot"`
	// Pointer: some builds drop the start injection, so the handoff also
	// needs the pointer block in AGENTS.md.
	Pointer bool `toml:"pointer"`

	min, max *version.Version // max nil = open-ended
}

// PathSet holds path candidates per GOOS; All applies when the OS has none.
type PathSet struct {
	All     []string `toml:"all"`
	Linux   []string `toml:"linux"`
	Darwin  []string `toml:"darwin"`
	Windows []string `toml:"windows"`
}

// For returns the candidates for goos.
func (p PathSet) For(goos string) []string {
	if l := map[string][]string{"linux": p.Linux, "darwin": p.Darwin, "windows": p.Windows}[goos]; len(l) > 0 {
		return l
	}
	return p.All
}

// every lists the candidates of every OS.
func (p PathSet) every() []string { return slices.Concat(p.All, p.Linux, p.Darwin, p.Windows) }

// Tool is one agent's static facts (the tools.toml header says what each
// key means; DetectVersion reads npm_package, version_path, self_update).
type Tool struct {
	Name          string     `toml:"name"`
	Display       string     `toml:"-"` // adapters.Agent.Display
	Binaries      []string   `toml:"binaries"`
	VersionArgs   []string   `toml:"version_args"`
	VersionRegexp string     `toml:"version_regexp"`
	InstallHint   string     `toml:"install_hint"`
	NpmPackage    string     `toml:"npm_package"`
	VersionPath   string     `toml:"version_path"`
	SelfUpdate    SelfUpdate `toml:"self_update"`
	Config        PathSet    `toml:"config"`      // the file carryover writes its hook stubs into
	Trust         PathSet    `toml:"trust"`       // a second file install edits (Codex: trust hashes)
	Transcripts   PathSet    `toml:"transcripts"` // dirs or files
	HookFile      *HookFile  `toml:"hook_file"`   // the layout of Config
	Rows          []Row      `toml:"row"`

	re, pathRE *regexp.Regexp
	agent      *adapters.Agent
}

// SelfUpdate is an agent that downloads newer versions of itself into
// directories named by version and runs the newest one.
type SelfUpdate struct {
	Dirs   PathSet `toml:"dirs"`   // one directory per version; a trailing "/*": every subdirectory (one per platform)
	Marker string  `toml:"marker"` // a file every complete version directory holds
	Off    string  `toml:"off"`    // NAME=value: when the environment has it, the agent does not update
}

// Table is the parsed, validated table.
type Table struct{ tools []Tool }

// Load parses and validates the embedded table.
func Load() (*Table, error) { return parse(toolsTOML) }

func parse(b []byte) (*Table, error) {
	var f struct {
		Tool []Tool `toml:"tool"`
	}
	d := toml.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&f); err != nil {
		return nil, fmt.Errorf("specs: parse tools.toml: %w", err)
	}
	t := &Table{}
	seen := map[string]bool{}
	for _, tl := range f.Tool {
		if seen[tl.Name] {
			return nil, fmt.Errorf("specs: tool %q listed twice", tl.Name)
		}
		seen[tl.Name] = true
		if err := tl.validate(); err != nil {
			return nil, fmt.Errorf("specs: tool %q: %w", tl.Name, err)
		}
		t.tools = append(t.tools, tl)
	}
	for _, a := range adapters.All {
		if !seen[a.Name] {
			return nil, fmt.Errorf("specs: agent %q (adapters.All) is missing from tools.toml", a.Name)
		}
	}
	return t, nil
}

func (tl *Tool) validate() error {
	a, ok := adapters.ByName(tl.Name)
	if !ok || a.Name != tl.Name {
		return fmt.Errorf("%w: no agent of that name in adapters.All; expected one of %v", ErrUnknownTool, adapters.Names())
	}
	tl.agent, tl.Display = a, a.Display
	if err := tl.validateDetection(); err != nil {
		return err
	}
	if tl.HookFile != nil {
		if err := tl.HookFile.validate(); err != nil {
			return fmt.Errorf("hook_file: %w", err)
		}
	}
	if (len(tl.Trust.every()) > 0) != (tl.HookFile != nil && tl.HookFile.Trust != nil) {
		return errors.New("trust paths and hook_file.trust go together")
	}
	return tl.validateRows(a)
}

// validateDetection checks what DetectVersion reads.
func (tl *Tool) validateDetection() error {
	if len(tl.Binaries) == 0 {
		return errors.New("binaries are required")
	}
	var err error
	if tl.re, err = versionRE("version_regexp", tl.VersionRegexp); err != nil {
		return err
	}
	if tl.VersionPath != "" {
		if tl.pathRE, err = versionRE("version_path", tl.VersionPath); err != nil {
			return err
		}
	}
	if tl.NpmPackage != "" && !npmName.MatchString(tl.NpmPackage) {
		return fmt.Errorf("npm_package %q is not an npm package name", tl.NpmPackage)
	}
	if u := tl.SelfUpdate; (len(u.Dirs.every()) > 0) != (u.Marker != "") {
		return errors.New("self_update needs both dirs and marker")
	}
	return nil
}

// versionRE compiles the pattern of option name, which must capture the
// version.
func versionRE(name, expr string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if re.NumSubexp() < 1 {
		return nil, fmt.Errorf("%s needs a capture group for the version", name)
	}
	return re, nil
}

// validateRows checks the rows: unique ids, each valid, in order of
// versions without overlap.
func (tl *Tool) validateRows(a *adapters.Agent) error {
	if len(tl.Rows) == 0 {
		return errors.New("no rows")
	}
	ids := map[string]bool{}
	for i := range tl.Rows {
		r := &tl.Rows[i]
		if r.ID == "" || ids[r.ID] {
			return fmt.Errorf("row %d: missing or duplicate id %q", i, r.ID)
		}
		ids[r.ID] = true
		if err := tl.validateRow(r, a); err != nil {
			return err
		}
		if i > 0 && !tl.Rows[i-1].below(r) {
			return fmt.Errorf("rows %s and %s overlap or are out of order", tl.Rows[i-1].ID, r.ID)
		}
	}
	if tl.HookFile.Whole() {
		if err := tl.validateWhole(); err != nil {
			return fmt.Errorf("hook_file: %w", err)
		}
	}
	return nil
}

// validateRow checks one row's versions and hooks against agent a.
func (tl *Tool) validateRow(r *Row, a *adapters.Agent) error {
	if err := r.parseVersions(); err != nil {
		return fmt.Errorf("row %s: %w", r.ID, err)
	}
	if a.Envelope == adapters.EnvelopeNone && len(r.Inject) > 0 {
		return fmt.Errorf("row %s: the agent's envelope is none (adapters), so it cannot have inject hooks", r.ID)
	}
	if err := r.validateHooks(a); err != nil {
		return err
	}
	if len(r.Inject)+len(r.Snapshot) == 0 {
		return nil
	}
	if tl.HookFile == nil {
		return fmt.Errorf("row %s has hooks but the tool has no hook_file layout; add one (see the rules at the top of tools.toml)", r.ID)
	}
	if len(tl.Config.every()) == 0 {
		return fmt.Errorf("row %s has hooks but the tool has no config path", r.ID)
	}
	return nil
}

// validateHooks checks the row's hook names and timeouts, and that inject
// hooks are start or prompt events of agent a.
func (r *Row) validateHooks(a *adapters.Agent) error {
	for _, h := range append(slices.Clone(r.Inject), r.Snapshot...) {
		if h.Native == "" || strings.ContainsAny(h.Native, " \t\"'") || h.Timeout < 0 {
			return fmt.Errorf("row %s: bad hook %+v", r.ID, h)
		}
	}
	for _, h := range r.Inject {
		if c := a.Class(h.Native); c != adapters.ClassStart && c != adapters.ClassPrompt {
			return fmt.Errorf("row %s: inject hook %s is not a start or prompt event of %s (adapters: %q)", r.ID, h.Native, a.Name, c)
		}
	}
	return nil
}

// parseVersions sets the row's range; its tested version must lie in it.
func (r *Row) parseVersions() (err error) {
	if r.min, r.max, err = parseRange(r.Versions); err != nil || r.Tested == "" {
		return err
	}
	tv, err := version.NewVersion(r.Tested)
	if err != nil {
		return fmt.Errorf("tested: %w", err)
	} else if !r.contains(tv) {
		return fmt.Errorf("tested version %s is outside %q", r.Tested, r.Versions)
	}
	return nil
}

// parseRange accepts ">= A" or ">= A, < B".
func parseRange(s string) (lo, hi *version.Version, err error) {
	_, err = version.NewConstraint(s)
	parts := strings.Split(s, ",")
	a, b := strings.TrimSpace(parts[0]), strings.TrimSpace(parts[len(parts)-1])
	switch {
	case err != nil:
	case len(parts) > 2:
		err = errors.New(`want ">= A" or ">= A, < B"`)
	case !strings.HasPrefix(a, ">="):
		err = errors.New("must start with >=")
	case len(parts) == 2 && (!strings.HasPrefix(b, "<") || strings.HasPrefix(b, "<=")):
		err = errors.New("upper bound must be < B")
	default:
		lo, err = version.NewVersion(strings.TrimSpace(a[2:]))
	}
	if err == nil && len(parts) == 2 {
		hi, err = upperBound(b, lo)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("versions %q: %w", s, err)
	}
	return lo, hi, nil
}

// below reports whether the row's range ends at or before next's start.
func (r Row) below(next *Row) bool { return r.max != nil && !r.max.GreaterThan(next.min) }

// upperBound parses "< B", which must lie above lo.
func upperBound(b string, lo *version.Version) (*version.Version, error) {
	hi, err := version.NewVersion(strings.TrimSpace(b[1:]))
	if err == nil && !hi.GreaterThan(lo) {
		err = errors.New("empty range")
	}
	return hi, err
}

// contains reports whether v is in the row's range. Prereleases compare by
// their core version (2.2.0-beta is in ">= 2.2.0").
func (r Row) contains(v *version.Version) bool {
	c := v.Core()
	return !c.LessThan(r.min.Core()) && (r.max == nil || c.LessThan(r.max))
}

func (t *Table) names() []string {
	var n []string
	for _, tl := range t.tools {
		n = append(n, tl.Name)
	}
	return n
}

// Tools returns every tool in table order.
func (t *Table) Tools() []Tool { return slices.Clone(t.tools) }

// Tool returns the tool called name.
func (t *Table) Tool(name string) (Tool, bool) {
	for _, tl := range t.tools {
		if tl.Name == name {
			return tl, true
		}
	}
	return Tool{}, false
}

// Capability is what carryover does for one tool at one version.
type Capability struct {
	Tool    string
	Version string // as detected; "" when unknown
	Row     string // row id
	// Fallback: the version is unknown or outside every row and the newest
	// fitting row was used; Warning says so in words.
	Fallback                     bool
	Warning                      string
	SnapshotEvents, InjectEvents []Hook
	// Envelope is the agent's, or none when the row has no inject hooks.
	Envelope adapters.Envelope
	// NeedsPointer: the handoff cannot count on a session-start injection
	// (the row injects at no start event, or is marked pointer = true).
	NeedsPointer bool
	// StartInjection: the row injects at a start event; without it the
	// handoff reaches the model only through the pointer block (Cline, Windsurf).
	StartInjection bool
}

// Hooks returns inject then snapshot hooks, one per native event (the first
// occurrence wins).
func (c Capability) Hooks() []Hook {
	var out []Hook
	for _, h := range append(slices.Clone(c.InjectEvents), c.SnapshotEvents...) {
		if !slices.ContainsFunc(out, func(o Hook) bool { return o.Native == h.Native }) {
			out = append(out, h)
		}
	}
	return out
}

// Resolve returns the capability of tool at version. An empty version, or one
// newer than every row (or between rows), uses the newest row at or below it
// with Fallback set; a version older than every row is ErrUnsupportedVersion.
func (t *Table) Resolve(tool, ver string) (Capability, error) {
	tl, ok := t.Tool(tool)
	if !ok {
		return Capability{}, fmt.Errorf("%w %q; expected one of %v", ErrUnknownTool, tool, t.names())
	}
	newest := tl.Rows[len(tl.Rows)-1]
	if strings.TrimSpace(ver) == "" {
		c := tl.capability(newest, "")
		c.Fallback = true
		c.Warning = fmt.Sprintf("%s version not detected; assuming the newest known hooks (%s)", tl.Display, newest.Versions)
		return c, nil
	}
	v, err := version.NewVersion(strings.TrimSpace(ver))
	if err != nil {
		return Capability{}, fmt.Errorf("%s version %q is not a version number: %w", tl.Display, ver, err)
	}
	var below *Row
	for i := range tl.Rows {
		r := tl.Rows[i]
		if r.contains(v) {
			return tl.capability(r, ver), nil
		}
		if !v.Core().LessThan(r.min.Core()) {
			below = &tl.Rows[i]
		}
	}
	if below == nil {
		return Capability{}, fmt.Errorf("%w: %s %s is older than the oldest version carryover supports (%s); upgrade it (%s), then run `carryover refresh`",
			ErrUnsupportedVersion, tl.Display, ver, tl.Rows[0].Versions, tl.InstallHint)
	}
	c := tl.capability(*below, ver)
	c.Fallback = true
	if below.ID == newest.ID {
		c.Warning = fmt.Sprintf("%s %s is newer than the versions carryover knows (%s); using those hooks; update carryover, then run `carryover refresh`", tl.Display, ver, below.Versions)
	} else {
		c.Warning = fmt.Sprintf("%s %s is between known version ranges; using the hooks for %s", tl.Display, ver, below.Versions)
	}
	return c, nil
}

func (tl Tool) capability(r Row, ver string) Capability {
	env := tl.agent.Envelope
	if len(r.Inject) == 0 {
		env = adapters.EnvelopeNone
	}
	start := slices.ContainsFunc(r.Inject, func(h Hook) bool { return tl.agent.Class(h.Native) == adapters.ClassStart })
	return Capability{
		NeedsPointer:   r.Pointer || !start || env == adapters.EnvelopeNone,
		StartInjection: start && env != adapters.EnvelopeNone,
		Tool:           tl.Name,
		Version:        ver,
		Row:            r.ID,
		SnapshotEvents: slices.Clone(r.Snapshot),
		InjectEvents:   slices.Clone(r.Inject),
		Envelope:       env,
	}
}

// ParseVersion extracts the version from the output of the tool's version
// command. The error never quotes the output.
func ParseVersion(tool Tool, output string) (string, error) {
	m := tool.re.FindStringSubmatch(output)
	if m == nil || m[1] == "" {
		return "", fmt.Errorf("could not find a version in the output of `%s %s` (%d bytes); is it %s?",
			tool.Binaries[0], strings.Join(tool.VersionArgs, " "), len(output), tool.Display)
	}
	if !validVersion(m[1]) {
		return "", fmt.Errorf("%s reported version %q, which is not a version number", tool.Display, m[1])
	}
	return m[1], nil
}

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
		first = cmp.Or(first, p)
	}
	return first
}

// Expand expands a table path: ${NAME} (false when unset or empty),
// ${NAME:-default}, then a leading "~" to home. On windows, "/" becomes "\".
func Expand(s, goos string, getenv func(string) string, home string) (string, bool) {
	ok := !strings.Contains(pathVar.ReplaceAllString(s, ""), "${") // none unterminated
	p := pathVar.ReplaceAllStringFunc(s, func(m string) string {
		name, def, hasDef := strings.Cut(m[2:len(m)-1], ":-")
		v := ""
		if getenv != nil {
			v = getenv(name)
		}
		ok = ok && (v != "" || hasDef)
		return cmp.Or(v, def)
	})
	if p == "~" || strings.HasPrefix(p, "~/") {
		ok = ok && home != ""
		p = strings.TrimRight(home, "/\\") + p[1:]
	}
	if goos == "windows" {
		p = strings.ReplaceAll(p, "/", `\`)
	}
	if !ok {
		return "", false
	}
	return p, true
}

var (
	pathVar  = regexp.MustCompile(`\$\{[^}]*\}`)
	storeVar = regexp.MustCompile(`\$\{([^{}:]*):-`)
)

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
			for _, m := range storeVar.FindAllStringSubmatch(c, -1) {
				if !slices.Contains(out, m[1]) {
					out = append(out, m[1])
				}
			}
		}
	}
	return out
}
