package adapters

import (
	"cmp"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LimitKind is which wall an agent ran into.
type LimitKind string

const (
	LimitUsage      LimitKind = "usage_limit" // a plan's usage cap ("resets 2pm"): minutes to days
	LimitRate       LimitKind = "rate_limit"  // an API rate limit (HTTP 429)
	LimitQuota      LimitKind = "quota"       // an exhausted quota (RESOURCE_EXHAUSTED)
	LimitOverloaded LimitKind = "overloaded"  // the provider out of capacity (HTTP 529)
)

// Limit is a rate-limit or quota signal from the agent's structured signals
// (a hook's error kind, rate_limits, an error status) or an API error's
// text the agent wrote, never from prompts, replies, tool results or files.
type Limit struct {
	Kind        LimitKind
	Reached     bool      // false: a warning that the limit is near (UsedPercent)
	UsedPercent float64   // how much of the window is used (0-100; 0 unknown)
	Window      string    // the limit's window ("5h", "weekly"; "" unknown)
	ResetsAt    time.Time // when the limit lifts (zero when unknown)
	ResetText   string    // the agent's own words for the reset ("2pm (Europe/Paris)") when it gave no timestamp; ≤ 48 bytes
}

// Resets renders when the limit lifts in loc, with the date when not today ("" unknown).
func (l *Limit) Resets(now time.Time, loc *time.Location) string {
	if l == nil {
		return ""
	}
	if l.ResetsAt.IsZero() {
		return l.ResetText
	}
	loc = cmp.Or(loc, time.Local)
	t := l.ResetsAt.In(loc)
	if y, m, d := now.In(loc).Date(); t.Year() == y && t.Month() == m && t.Day() == d {
		return t.Format("15:04")
	}
	return t.Format("Jan 2 15:04")
}

// Phrase is how the limit reads in a sentence: "usage limit reached".
func (l *Limit) Phrase() string {
	switch {
	case l == nil:
		return ""
	case !l.Reached && l.UsedPercent > 0:
		return "usage limit " + strconv.Itoa(int(l.UsedPercent)) + " % used"
	case !l.Reached:
		return "usage limit near"
	}
	return cmp.Or(limitPhrases[l.Kind], "usage limit reached")
}

var limitPhrases = map[LimitKind]string{LimitRate: "rate limit reached", LimitQuota: "quota exhausted", LimitOverloaded: "model overloaded"}

// statusLimits are the limits an HTTP status says (0: the text must say).
var statusLimits = map[int]LimitKind{0: "", 429: LimitRate, 529: LimitOverloaded}

// limitPatterns are the fallback patterns (the Braindump PRD's list), in
// order, for API error text whose status the agent did not record.
var limitPatterns = sync.OnceValue(func() []limitPattern {
	return []limitPattern{
		// out of credits or over a spend limit: a wall until the user pays
		{LimitUsage, regexp.MustCompile(`(?i)usage limit|hit your (?:[a-z-]+ )*limit|limit reached|spend limit|credit balance|insufficient (?:credits?|balance|funds)|out of credits|payment required`)},
		{LimitQuota, regexp.MustCompile(`(?i)quota exceeded|exceeded (?:your |the )?(?:current )?quota|resource[_ ]exhausted|insufficient_quota`)},
		{LimitRate, regexp.MustCompile(`(?i)rate[ _-]?limit|too many requests|\b429\b`)},
		{LimitOverloaded, regexp.MustCompile(`(?i)overloaded|\b529\b|over capacity|at capacity|capacity (?:constraints|exceeded)`)},
	}
})

type limitPattern struct {
	kind LimitKind
	re   *regexp.Regexp
}

// resetPatterns find when the limit lifts in an error text: "… · resets 2pm
// (Europe/Paris)" (Claude Code), "… try again at 3:05 PM." (Codex), and the
// relative "try again in 20s" / "retry after 30 seconds" last.
var resetPatterns = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`(?i)\bresets?(?: at| on)? ([0-9][^·\n."]{0,46})`),
		regexp.MustCompile(`(?i)try again (?:at|on) ([0-9][^\n."]{0,40})`),
		regexp.MustCompile(`(?i)(?:again|retry) (?:in|after) ([0-9]+(?:\.[0-9]+)?) ?(s|sec|secs|seconds?|m|mins?|minutes?|h|hours?)\b`),
	}
})

// LimitFromError classifies an API error's text the agent recorded (status:
// its HTTP status, else 0; at: when, for a relative reset); nil when it is
// no limit (a 400, an auth failure).
func LimitFromError(text string, status int, at time.Time) *Limit {
	kind, ok := statusLimits[status]
	if !ok {
		return nil // the status says what it is: a 400 quoting "429" is no limit
	}
	text = text[:min(len(text), 4096)]
	for _, p := range limitPatterns() {
		// The text refines a 429: a usage cap or a quota also comes as 429.
		if (kind == "" || kind == LimitRate) && p.re.MatchString(text) {
			kind = p.kind
			break
		}
	}
	if kind == "" {
		return nil
	}
	l := &Limit{Kind: kind, Reached: true}
	l.ResetsAt, l.ResetText = resetOf(text, at)
	return l
}

// resetOf finds when a limit lifts in its error text: a time, else the words.
func resetOf(text string, at time.Time) (time.Time, string) {
	// Claude Code's older form: "Claude AI usage limit reached|1736200000".
	if i := strings.LastIndexByte(text, '|'); i >= 0 {
		if n, err := strconv.ParseInt(strings.TrimSpace(text[i+1:]), 10, 64); err == nil && n > 1e9 && n < 1e11 {
			return time.Unix(n, 0).UTC(), ""
		}
	}
	res := resetPatterns()
	if m := res[2].FindStringSubmatch(text); m != nil && !at.IsZero() {
		f, _ := strconv.ParseFloat(m[1], 64)
		unit := cmp.Or(map[byte]time.Duration{'m': time.Minute, 'h': time.Hour}[m[2][0]], time.Second)
		return at.Add(time.Duration(f * float64(unit))).Truncate(time.Second), ""
	}
	for _, re := range res[:2] {
		if m := re.FindStringSubmatch(text); m != nil {
			return time.Time{}, clip(strings.TrimSpace(m[1]), 48)
		}
	}
	return time.Time{}, ""
}
