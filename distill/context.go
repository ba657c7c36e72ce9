package distill

// ContextLevel is how full a session's context window is.
type ContextLevel string

const (
	ContextOK        ContextLevel = "OK"
	ContextEarlyWarn ContextLevel = "EARLY_WARN"
	ContextWarn      ContextLevel = "WARN"
	ContextCritical  ContextLevel = "CRITICAL"
)

// Thresholds are the context levels' lower bounds in percent of the window.
type Thresholds struct {
	EarlyWarn, Warn, Critical int
}

// DefaultThresholds are 65 / 75 / 85 %: Claude Code auto-compacts at about
// 92 % of its window (it summarises at 87k of a 100k test window), so
// CRITICAL leaves room for one more turn and the handoff before it does.
var DefaultThresholds = Thresholds{EarlyWarn: 65, Warn: 75, Critical: 85}

// Valid reports whether the thresholds rise strictly within 1..100.
func (t Thresholds) Valid() bool {
	return t.EarlyWarn > 0 && t.EarlyWarn < t.Warn && t.Warn < t.Critical && t.Critical <= 100
}

// Rank orders levels: OK 0 … CRITICAL 3 ("" is 0).
func (l ContextLevel) Rank() int {
	switch l {
	case ContextEarlyWarn:
		return 1
	case ContextWarn:
		return 2
	case ContextCritical:
		return 3
	}
	return 0
}

// Level is the context level of used tokens out of window, and the whole
// percentage (floor, capped at 100). The usage is what the model was last
// sent (input + cache + output of the latest response), not the transcript's
// size; window 0 (unknown) is OK.
func Level(used, window int64, t Thresholds) (ContextLevel, int) {
	if !t.Valid() {
		t = DefaultThresholds
	}
	if window <= 0 || used <= 0 {
		return ContextOK, 0
	}
	pct := int(min(used*100/window, 100))
	switch {
	case pct >= t.Critical:
		return ContextCritical, pct
	case pct >= t.Warn:
		return ContextWarn, pct
	case pct >= t.EarlyWarn:
		return ContextEarlyWarn, pct
	}
	return ContextOK, pct
}
