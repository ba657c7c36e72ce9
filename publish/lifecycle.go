package publish

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
)

// Handoff lifecycle (issue 14). Every handoff a project publishes has an
// id, HO-YYYYMMDD-HHMMSS-<first 8 of the session id>, in handoff.md's
// header and in the ledger (ledger.HandoffRecord). A session keeps its id
// while it rewrites the handoff turn after turn; the next session that
// publishes starts a new one, which supersedes it. Consumption is read
// from the delivery receipts the hooks and transcripts already record.

// Statuses of a handoff.
const (
	StatusActive     = "active"
	StatusConsumed   = "consumed"
	StatusSuperseded = "superseded"
	StatusExpired    = "expired"
	StatusCleared    = "cleared"
	// StatusForgotten: its session was forgotten (`carryover forget`);
	// the record keeps only its id, project, agent and times.
	StatusForgotten = ledger.EndForgotten
)

// DefaultExpireAfter is how old a handoff may get before a new session
// gets only a one-line notice of it (config expire_after).
const DefaultExpireAfter = 7 * 24 * time.Hour

// DefaultHistoryKeep is how many handoffs .carryover/history keeps
// (config history_keep).
const DefaultHistoryKeep = 50

var idRE = regexp.MustCompile(`HO-[0-9]{8}-[0-9]{6}-[0-9A-Za-z_-]{1,8}`)

// NewID is the id of a handoff first published at now by the session with
// native id session.
func NewID(now time.Time, session string) string {
	s := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_' {
			return r
		}
		return -1
	}, session)
	if len(s) > 8 {
		s = s[:8]
	}
	if s == "" {
		s = "nosess"
	}
	return "HO-" + now.UTC().Format("20060102-150405") + "-" + s
}

// ValidID reports whether id has the handoff id format.
func ValidID(id string) bool { return idRE.FindString(id) == id && id != "" }

// IDOf returns the handoff id in a handoff's header line ("" for a
// handoff written before ids).
func IDOf(header string) string {
	if !strings.HasPrefix(header, HeaderPrefix) {
		return ""
	}
	_, tail, ok := strings.Cut(header, " · ")
	if !ok || !ValidID(strings.TrimSpace(tail)) {
		return ""
	}
	return strings.TrimSpace(tail)
}

// Status is where a handoff stands at a moment.
type Status struct {
	ID         string
	Status     string
	ConsumedBy []ledger.Consumer
	Age        time.Duration // since its last rewrite
	EndedAt    time.Time
}

// StatusOf derives a handoff's status at now. Cleared wins; a handoff a
// session received stays consumed (who received it is the fact parallel
// sessions need) even once a newer one superseded it; an unconsumed one
// is superseded, else expired past expireAfter, else active.
func StatusOf(r ledger.HandoffRecord, consumers []ledger.Consumer, now time.Time, expireAfter time.Duration) Status {
	if expireAfter <= 0 {
		expireAfter = DefaultExpireAfter
	}
	s := Status{ID: r.ID, ConsumedBy: consumers, Age: now.Sub(r.Updated), EndedAt: r.EndedAt}
	switch {
	case r.Ended == ledger.EndForgotten:
		s.Status = StatusForgotten
	case r.Ended == ledger.EndCleared:
		s.Status = StatusCleared
	case len(consumers) > 0:
		s.Status = StatusConsumed
	case r.Ended == ledger.EndSuperseded:
		s.Status = StatusSuperseded
	case s.Age > expireAfter:
		s.Status = StatusExpired
	default:
		s.Status = StatusActive
	}
	return s
}

func short8(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// AgeWords renders a duration for the one-line notices ("3d", "5h").
func AgeWords(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "moments"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}

// ExpiredNotice is all a session gets of an expired handoff.
func ExpiredNotice(r ledger.HandoffRecord, now time.Time) string {
	return fmt.Sprintf("carryover: a handoff from %s ago exists: carryover history show %s", AgeWords(now.Sub(r.Updated)), r.ID)
}

// workingWindow is how recently a session that took a handoff must have
// had an event to count as still working on it. Hooks fire at every
// prompt, tool call and turn end, so a working session is seen every few
// minutes; a session idle for half an hour has most likely been left.
const workingWindow = 30 * time.Minute

// AlreadyResumed is the note a new session gets when another session took
// the same handoff and is still working ("" when none is).
func AlreadyResumed(cs []ledger.Consumer, self int64, now time.Time) string {
	for i := len(cs) - 1; i >= 0; i-- {
		c := cs[i]
		if c.SessionID == self || now.Sub(c.LastSeen) > workingWindow {
			continue
		}
		return fmt.Sprintf("> Note: already resumed by %s session %s %s — another agent may be on this task; confirm with the user before picking it up.",
			contentLine(c.Tool), contentLine(short8(c.NativeID)), Ago(now, c.At))
	}
	return ""
}
