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
	// MajorOnly: only a new major version may change the shape (Aider's
	// history format has not changed from 0.4x to 0.86; its minor
	// releases come weekly).
	MajorOnly bool
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
	return regexp.MustCompile(`"(?:version|cli_version|copilotVersion)"\s*:\s*"(\d+\.\d+\.\d+)|(?m)^> Aider v(\d+\.\d+\.\d+)`)
})

// RecordedVersion is the agent version a transcript records, "" when none:
// the first JSON "version" field, or the last "> Aider vX" line. Only 64 KB
// are looked at (the head of a JSONL transcript, the tail of an Aider
// history: SurveySessions passes the right end).
func RecordedVersion(head []byte) string {
	head = head[:min(len(head), 64<<10)]
	ms := versionRE().FindAllSubmatch(head, -1)
	if len(ms) == 0 {
		return ""
	}
	m := ms[len(ms)-1] // an Aider history's newest session is its last
	if len(ms[0][1]) > 0 {
		m = ms[0] // a JSON transcript records it from its first line
	}
	if len(m[1]) > 0 {
		return string(m[1])
	}
	return string(m[2])
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
	known, kerr := version.NewVersion(f.Newest)
	if err != nil || kerr != nil {
		return false
	}
	// Same major.minor as the newest known shape is the same shape: patch
	// releases do not change transcripts often enough to warn on each.
	gs, ks := got.Segments(), known.Segments()
	if f.MajorOnly {
		return gs[0] > ks[0]
	}
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
