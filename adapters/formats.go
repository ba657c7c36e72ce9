package adapters

import (
	"regexp"
	"strings"
	"sync"

	"github.com/hashicorp/go-version"
)

// Format is what an adapter reads, written down: the shapes by agent
// version where the transcript records one, by shape otherwise. Newest is
// the newest agent version a shape was checked against; specs/tools.toml's
// newest row says the same ("tested"), which specs_test.go holds. Each
// agent's is in its descriptor (Agent.Format).
type Format struct {
	Newest string   // "" when the agent records no version in its sessions
	Shapes []string // one line each, oldest first
}

// Formats lists every adapter's shapes (each descriptor's Format), by
// agent name. A refusal names them, so a user whose file is not one of them
// knows what was tried.
var Formats = func() map[string]Format {
	m := map[string]Format{}
	for _, a := range All {
		m[a.Name] = a.Format
	}
	return m
}()

// Tried is the sentence a refusal ends with: the shapes of tool that were
// tried (or of every agent when tool is "").
func Tried(tool string) string {
	if f, ok := Formats[tool]; ok {
		return "tried: " + strings.Join(f.Shapes, "; ")
	}
	return "tried the formats of " + strings.Join(Names(), ", ")
}

// versionRE finds the version an agent recorded in a transcript's first
// bytes: Claude's "version", Codex's "cli_version", Copilot's
// "copilotVersion", Gemini's "version" (when present).
var versionRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`"(?:version|cli_version|copilotVersion)"\s*:\s*"(\d+\.\d+\.\d+)`)
})

// RecordedVersion is the agent version a transcript's head records, "" when
// none. Only the first 64 KB are looked at.
func RecordedVersion(head []byte) string {
	head = head[:min(len(head), 64<<10)]
	if m := versionRE().FindSubmatch(head); m != nil {
		return string(m[1])
	}
	return ""
}

// NewerThanKnown reports whether v (an agent version read from a
// transcript) is newer than the newest shape tool's adapter knows: the
// reader then reads what it can and `status` warns.
func NewerThanKnown(tool, v string) bool {
	f, ok := Formats[tool]
	if !ok || f.Newest == "" || v == "" {
		return false
	}
	got, err := version.NewVersion(v)
	if err != nil {
		return false
	}
	known, err := version.NewVersion(f.Newest)
	if err != nil {
		return false
	}
	// Same major.minor as the newest known shape is the same shape: patch
	// releases do not change transcripts often enough to warn on each.
	gs, ks := got.Segments(), known.Segments()
	return gs[0] > ks[0] || (gs[0] == ks[0] && gs[1] > ks[1])
}

// DriftWarning is the one line `status` shows for a transcript written by
// a newer agent than carryover knows ("" when there is none).
func DriftWarning(tool string, head []byte) string {
	v := RecordedVersion(head)
	if !NewerThanKnown(tool, v) {
		return ""
	}
	return tool + " " + v + ": format newer than carryover knows (" + Formats[tool].Newest + "): update carryover"
}
