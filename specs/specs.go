// Package specs is carryover's versioned table of agents, tools.toml (embedded, decoded strictly; its header states
// every key and rule): how to detect each agent, where its files live, and which native hook events carryover registers
// per version range. Load validates it; Resolve maps (tool, version) to a Capability. What does not vary by version is
// the agent's descriptor in adapters; each [[tool]] needs one there and each agent there a [[tool]] here.
package specs

import (
	"bytes"
	"cmp"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
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

// Hook is one native hook event carryover registers; Native is also the --event value carryover receives.
type Hook struct {
	Native  string `toml:"native"`
	Timeout int    `toml:"timeout"`
	Matcher string `toml:"matcher"`
}

// Row is one version range of a tool (max nil: open-ended).
type Row struct {
	ID       string `toml:"id"`
	Versions string `toml:"versions"`
	Tested   string `toml:"tested"`
	Inject   []Hook `toml:"inject"`
	Snapshot []Hook `toml:"snapshot"`
	Pointer  bool   `toml:"pointer"`

	min, max *version.Version
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

// Tool is one agent's static facts. Config is the file carryover writes its hook stubs into, laid out as HookFile;
// Trust a second file install edits (Codex: trust hashes); Transcripts dirs or files.
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
	Config        PathSet    `toml:"config"`
	Trust         PathSet    `toml:"trust"`
	Transcripts   PathSet    `toml:"transcripts"`
	HookFile      *HookFile  `toml:"hook_file"`
	Rows          []Row      `toml:"row"`

	re, pathRE *regexp.Regexp
	agent      *adapters.Agent
}

// SelfUpdate is an agent that downloads newer versions of itself into directories named by version (Dirs; a trailing
// "/*": every subdirectory, one per platform), each complete one holding Marker, and runs the newest unless the
// environment has Off (NAME=value).
type SelfUpdate struct {
	Dirs   PathSet `toml:"dirs"`
	Marker string  `toml:"marker"`
	Off    string  `toml:"off"`
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
	var err error
	switch u := tl.SelfUpdate; {
	case len(tl.Binaries) == 0:
		return errors.New("binaries are required")
	case tl.NpmPackage != "" && !npmName().MatchString(tl.NpmPackage):
		return fmt.Errorf("npm_package %q is not an npm package name", tl.NpmPackage)
	case (len(u.Dirs.every()) > 0) != (u.Marker != ""):
		return errors.New("self_update needs both dirs and marker")
	}
	if tl.re, err = versionRE("version_regexp", tl.VersionRegexp); err != nil || tl.VersionPath == "" {
		return err
	}
	tl.pathRE, err = versionRE("version_path", tl.VersionPath)
	return err
}

// versionRE compiles option name's pattern, which must capture the version.
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

// validateRows checks the rows: unique ids, each valid, ordered, no overlap.
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
	switch err := r.validateHooks(a); {
	case err != nil:
		return err
	case len(r.Inject)+len(r.Snapshot) == 0:
	case tl.HookFile == nil:
		return fmt.Errorf("row %s has hooks but the tool has no hook_file layout; add one (see the rules at the top of tools.toml)", r.ID)
	case len(tl.Config.every()) == 0:
		return fmt.Errorf("row %s has hooks but the tool has no config path", r.ID)
	}
	return nil
}

// validateHooks checks the row's hook names and timeouts, and that inject hooks are start or prompt events of agent a.
func (r *Row) validateHooks(a *adapters.Agent) error {
	for i, h := range append(slices.Clone(r.Inject), r.Snapshot...) {
		if h.Native == "" || strings.ContainsAny(h.Native, " \t\"'") || h.Timeout < 0 {
			return fmt.Errorf("row %s: bad hook %+v", r.ID, h)
		}
		if c := a.Class(h.Native); i < len(r.Inject) && c != adapters.ClassStart && c != adapters.ClassPrompt {
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

// parseRange accepts ">= A" or ">= A, < B" with B above A.
func parseRange(s string) (lo, hi *version.Version, err error) {
	m := regexp.MustCompile(`^\s*>=\s*([^\s,<>=]+)\s*(?:,\s*<\s*([^\s,<>=]+)\s*)?$`).FindStringSubmatch(s)
	if m == nil {
		return nil, nil, fmt.Errorf(`versions %q: want ">= A" or ">= A, < B"`, s)
	}
	if lo, err = version.NewVersion(m[1]); err == nil && m[2] != "" {
		if hi, err = version.NewVersion(m[2]); err == nil && !hi.GreaterThan(lo) {
			err = errors.New("empty range")
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("versions %q: %w", s, err)
	}
	return lo, hi, nil
}

// below reports whether the row's range ends at or before next's start.
func (r Row) below(next *Row) bool { return r.max != nil && !r.max.GreaterThan(next.min) }

// contains reports whether v is in the row's range. Prereleases compare by their core version (2.2.0-beta is in ">=
// 2.2.0").
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
	if i := slices.IndexFunc(t.tools, func(tl Tool) bool { return tl.Name == name }); i >= 0 {
		return t.tools[i], true
	}
	return Tool{}, false
}

// Capability is what carryover does for one tool at one version ("" when unknown) by row Row. Fallback: the version is
// unknown or outside every row and the newest fitting row was used (Warning says so). Envelope is the agent's, or none
// when the row has no inject hooks. NeedsPointer: the handoff cannot count on a session-start injection (none, or the
// row says pointer = true); without StartInjection it reaches the model only through the pointer block (Cline).
type Capability struct {
	Tool, Version, Row           string
	Fallback                     bool
	Warning                      string
	SnapshotEvents, InjectEvents []Hook
	Envelope                     adapters.Envelope
	NeedsPointer, StartInjection bool
}

// Hooks returns inject then snapshot hooks, one per native event (the first occurrence wins).
func (c Capability) Hooks() []Hook {
	var out []Hook
	for _, h := range append(slices.Clone(c.InjectEvents), c.SnapshotEvents...) {
		if !slices.ContainsFunc(out, func(o Hook) bool { return o.Native == h.Native }) {
			out = append(out, h)
		}
	}
	return out
}

// Resolve returns the capability of tool at version. An empty version, or one newer than every row (or between rows),
// uses the newest row at or below it with Fallback set; a version older than every row is ErrUnsupportedVersion.
func (t *Table) Resolve(tool, ver string) (Capability, error) {
	tl, ok := t.Tool(tool)
	if !ok {
		return Capability{}, fmt.Errorf("%w %q; expected one of %v", ErrUnknownTool, tool, t.names())
	}
	newest := tl.Rows[len(tl.Rows)-1]
	if strings.TrimSpace(ver) == "" {
		return tl.fallback(newest, "", fmt.Sprintf("%s version not detected; assuming the newest known hooks (%s)", tl.Display, newest.Versions)), nil
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
	switch {
	case below == nil:
		return Capability{}, fmt.Errorf("%w: %s %s is older than the oldest version carryover supports (%s); upgrade it (%s), then run `carryover refresh`",
			ErrUnsupportedVersion, tl.Display, ver, tl.Rows[0].Versions, tl.InstallHint)
	case below.ID == newest.ID:
		return tl.fallback(*below, ver, fmt.Sprintf("%s %s is newer than the versions carryover knows (%s); using those hooks; update carryover, then run `carryover refresh`", tl.Display, ver, below.Versions)), nil
	}
	return tl.fallback(*below, ver, fmt.Sprintf("%s %s is between known version ranges; using the hooks for %s", tl.Display, ver, below.Versions)), nil
}

// fallback is row r's capability for a version no row holds, with warning saying so.
func (tl Tool) fallback(r Row, ver, warning string) Capability {
	c := tl.capability(r, ver)
	c.Fallback, c.Warning = true, warning
	return c
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

// ParseVersion extracts the version from the output of the tool's version command. The error never quotes the output.
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

// ConfigPath is the file carryover writes hook stubs into for goos: the first candidate that exists (exists nil: none
// does), else the first usable one (the standard location), else "" (no hook config, e.g. Aider).
func (t Tool) ConfigPath(goos string, getenv func(string) string, home string, exists func(string) bool) string {
	return pick(t.Config.For(goos), goos, getenv, home, exists)
}

// TrustPath is like ConfigPath for the tool's second file (Codex config.toml); "" when the tool has none.
func (t Tool) TrustPath(goos string, getenv func(string) string, home string, exists func(string) bool) string {
	return pick(t.Trust.For(goos), goos, getenv, home, exists)
}

// TranscriptPaths returns every usable transcript location for goos, in table order; relative ones are to the project.
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

// Expand expands a table path: ${NAME} (false when unset or empty), ${NAME:-default}, then a leading "~" to home. On
// windows, "/" becomes "\".
func Expand(s, goos string, getenv func(string) string, home string) (string, bool) {
	ok := !strings.Contains(pathVar().ReplaceAllString(s, ""), "${") // none unterminated
	p := pathVar().ReplaceAllStringFunc(s, func(m string) string {
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
	pathVar  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{[^}]*\}`) })
	storeVar = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([^{}:]*):-`) })
)

// StoreVariables are the variables that move agents' session stores (each ${NAME:-default} in a transcripts path for
// goos), in table order: what to tell a user whose sessions were not found.
func StoreVariables(goos string) []string {
	t, err := loadOnce()
	if err != nil {
		return nil
	}
	var out []string
	for _, tl := range t.tools {
		for _, c := range tl.Transcripts.For(goos) {
			for _, m := range storeVar().FindAllStringSubmatch(c, -1) {
				if !slices.Contains(out, m[1]) {
					out = append(out, m[1])
				}
			}
		}
	}
	return out
}

// HookFile is the layout of an agent's hook config file as data (the tools.toml header describes it), so a new agent
// whose file has a known shape needs no Go code: settings JSON, "grouped" (Claude Code, Codex, Gemini CLI) or "flat"
// (Copilot CLI, Cursor, VS Code, Windsurf), or a file of its own, "whole" (Pi, Cline, OpenCode, Kilo).
type HookFile struct {
	Shape    string `toml:"shape"`
	Template string `toml:"template"`
	Mode     int    `toml:"mode"`

	content     string        // the template's text, set by validate
	CommandKeys []string      `toml:"command_keys"`
	Skeleton    []string      `toml:"skeleton"`
	Handler     []string      `toml:"handler"`
	Warnings    []HookWarning `toml:"warnings"`
	Trust       *TrustHash    `toml:"trust"`
}

// TrustHash is how an agent (Codex) hashes each handler it runs only once trusted: each hashed event's label, and the
// events whose matcher it ignores, whose timeout it clamps to 1-3 s, that keep additionalContextLimit.
type TrustHash struct {
	Labels    map[string]string `toml:"labels"`
	NoMatcher []string          `toml:"no_matcher"`
	Clamp3s   []string          `toml:"clamp_3s"`
	Context   []string          `toml:"context_limit"`
}

// HookWarning is something to tell the user about the settings file: Set when Key (dotted) holds a value (Is: only that
// JSON value; "{value}" names it), Unset when it is absent.
type HookWarning struct {
	Key, Is, Set, Unset string
	Off                 bool // while it holds the agent runs no hook: doctor fails on it, not just says it
}

// Shapes of a hook file.
const (
	ShapeGrouped = "grouped"
	ShapeFlat    = "flat"
	ShapeWhole   = "whole"
)

// Placeholder is a handler field's value filled in per hook; a field whose placeholder has no value (timeout 0, no
// matcher) is left out.
type Placeholder string

const (
	PhCommand   Placeholder = "$command"
	PhTimeout   Placeholder = "$timeout" // seconds
	PhTimeoutMs Placeholder = "$timeout_ms"
	PhMatcher   Placeholder = "$matcher"
)

// Slots of a whole file's template: carryover's absolute path as one shell word and as a JSON (also JS/TS) string
// literal, the tool's name, and the native event (per-event files only; in the config path too).
const (
	SlotExeSh   = "{{exe_sh}}"
	SlotExeJSON = "{{exe_json}}"
	SlotTool    = "{{tool}}"
	EventSlot   = "{{event}}"
)

var (
	placeholders = []Placeholder{PhCommand, PhTimeout, PhTimeoutMs, PhMatcher}
	wholeSlots   = []string{SlotExeSh, SlotExeJSON, SlotTool, EventSlot}
	slotRE       = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{[^{}]*\}\}`) })
)

//go:embed hookfiles
var hookFiles embed.FS

// Whole reports whether carryover writes the hook file whole.
func (h *HookFile) Whole() bool { return h != nil && h.Shape == ShapeWhole }

// Content is a whole file's template text.
func (h *HookFile) Content() string { return h.content }

// Field parses one "key=value" layout field: a Placeholder ("$…"), a bool, an integer, or else a string.
func Field(s string) (key string, val any, err error) {
	key, v, ok := strings.Cut(s, "=")
	switch n, nerr := strconv.Atoi(v); {
	case !ok || key == "":
		return "", nil, fmt.Errorf("field %q: want key=value", s)
	case strings.HasPrefix(v, "$") && !slices.Contains(placeholders, Placeholder(v)):
		return "", nil, fmt.Errorf("field %q: unknown placeholder; expected one of %v", s, placeholders)
	case strings.HasPrefix(v, "$"):
		return key, Placeholder(v), nil
	case v == "true" || v == "false":
		return key, v == "true", nil
	case nerr == nil:
		return key, n, nil
	}
	return key, v, nil
}

func (h *HookFile) validate() error {
	switch {
	case h.Shape == ShapeWhole:
		return h.validateWhole()
	case h.Shape != ShapeGrouped && h.Shape != ShapeFlat:
		return fmt.Errorf("shape %q: expected %q, %q or %q", h.Shape, ShapeGrouped, ShapeFlat, ShapeWhole)
	case h.Template != "" || h.Mode != 0:
		return fmt.Errorf("template and mode belong to shape %q", ShapeWhole)
	case len(h.CommandKeys) == 0:
		return errors.New("command_keys is empty")
	}
	return h.validateFields()
}

// validateFields checks the skeleton's and the handler's fields.
func (h *HookFile) validateFields() error {
	for _, f := range h.Skeleton {
		if _, v, err := Field(f); err != nil {
			return fmt.Errorf("skeleton: %w", err)
		} else if _, ok := v.(Placeholder); ok {
			return fmt.Errorf("skeleton field %q: placeholders belong in handler", f)
		}
	}
	cmd := false
	for _, f := range h.Handler {
		k, v, err := Field(f)
		if err != nil {
			return fmt.Errorf("handler: %w", err)
		}
		if v == PhCommand && !slices.Contains(h.CommandKeys, k) {
			return fmt.Errorf("handler writes the command to %q, which is not in command_keys", k)
		}
		cmd = cmd || v == PhCommand
	}
	if !cmd {
		return errors.New("handler has no $command field")
	}
	return h.validateNotes()
}

// validateNotes checks the warnings and the trust rules.
func (h *HookFile) validateNotes() error {
	for _, e := range h.Trust.events() {
		if _, ok := h.Trust.Labels[e]; !ok {
			return fmt.Errorf("trust: event %s has no label", e)
		}
	}
	for _, w := range h.Warnings {
		if w.Key == "" || w.Set+w.Unset == "" {
			return fmt.Errorf("warning %+v: want key and set or unset", w)
		}
	}
	return nil
}

func (h *HookFile) validateWhole() error {
	if len(h.CommandKeys)+len(h.Skeleton)+len(h.Handler)+len(h.Warnings) > 0 {
		return fmt.Errorf("shape %q takes template and mode, not command_keys, skeleton or handler", ShapeWhole)
	}
	if h.Template == "" || strings.ContainsAny(h.Template, `/\`) {
		return fmt.Errorf("shape %q needs template, a file name in specs/hookfiles", ShapeWhole)
	}
	if err := h.readTemplate(); err != nil {
		return fmt.Errorf("template %q%w", h.Template, err)
	}
	// the owner reads and writes it, nobody else writes it (it runs with the user's rights)
	if h.Mode&0o600 != 0o600 || h.Mode&^0o755 != 0 {
		return fmt.Errorf("mode %#o: want the owner's read and write bits and no write bit for group or others (e.g. 0o644, 0o755)", h.Mode)
	}
	return nil
}

// readTemplate loads the whole file's template and checks its slots.
func (h *HookFile) readTemplate() error {
	b, err := fs.ReadFile(hookFiles, "hookfiles/"+h.Template)
	if err != nil {
		return fmt.Errorf(": %w", err)
	}
	h.content = string(b)
	for _, s := range slotRE().FindAllString(h.content, -1) {
		if !slices.Contains(wholeSlots, s) {
			return fmt.Errorf(": unknown placeholder %s; expected one of %v", s, wholeSlots)
		}
	}
	if !strings.Contains(h.content, SlotExeSh) && !strings.Contains(h.content, SlotExeJSON) {
		return fmt.Errorf(" never names carryover (%s or %s)", SlotExeSh, SlotExeJSON)
	}
	return nil
}

// validateWhole checks a whole-file tool: one file per event exactly when the template names the event, else a single
// file naming every event its rows hook (it relays them itself).
func (tl *Tool) validateWhole() error {
	h := tl.HookFile
	perEvent, err := tl.wholePaths()
	if err != nil {
		return err
	}
	if !perEvent && strings.Contains(h.content, EventSlot) {
		return fmt.Errorf("template %q names %s but the config path writes one file for every event", h.Template, EventSlot)
	}
	for _, r := range tl.Rows {
		for _, hk := range append(slices.Clone(r.Inject), r.Snapshot...) {
			switch {
			case perEvent && strings.ContainsAny(hk.Native, `/\.:*?<>|`):
				return fmt.Errorf("row %s: event %q cannot be a file name", r.ID, hk.Native)
			case !perEvent && !strings.Contains(h.content, `"`+hk.Native+`"`):
				return fmt.Errorf("row %s hooks %s but template %q never relays it (no %q in it)", r.ID, hk.Native, h.Template, `"`+hk.Native+`"`)
			}
		}
	}
	return nil
}

// wholePaths checks the config paths of a whole-file tool and reports whether they name one file per event.
func (tl *Tool) wholePaths() (perEvent bool, err error) {
	for _, p := range tl.Config.every() {
		if !strings.HasPrefix(p, "~/") && !strings.HasPrefix(p, "${") {
			return false, fmt.Errorf("config %q: a whole hook file lives in the user's folders (start it with ~/ or ${VAR}), never in a project", p)
		}
		if strings.Contains(p, EventSlot) {
			if !strings.HasSuffix(p, "/"+EventSlot) {
				return false, fmt.Errorf("config %q: %s must be the file name", p, EventSlot)
			}
			perEvent = true
		}
	}
	return perEvent, nil
}

// events lists every event the trust rules name but the labels.
func (t *TrustHash) events() []string {
	if t == nil {
		return nil
	}
	return slices.Concat(t.NoMatcher, t.Clamp3s, t.Context)
}
