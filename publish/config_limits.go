package publish

import "fmt"

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

// mergeWalls applies a project file's [limits] and [context] to c. They
// change when handoffs are prepared, not what leaves the machine, so a
// project may set them, except that an untrusted project may only lower
// max_restarts (a planted file must not make `carryover run` loop longer).
func (c *Config) mergeWalls(o Config, trusted bool, ignore func(string)) {
	set := func(dst **bool, src *bool) {
		if src != nil {
			*dst = src
		}
	}
	seti := func(dst **int, src *int) {
		if src != nil {
			*dst = src
		}
	}
	set(&c.Limits.AutoResume, o.Limits.AutoResume)
	if o.Limits.WarnPercent != nil {
		c.Limits.WarnPercent = o.Limits.WarnPercent
	}
	if n := o.Limits.MaxRestarts; n != nil {
		cur := 10
		if c.Limits.MaxRestarts != nil {
			cur = *c.Limits.MaxRestarts
		}
		if trusted || *n <= cur {
			c.Limits.MaxRestarts = n
		} else {
			ignore(fmt.Sprintf("[limits] max_restarts = %d (more than %d)", *n, cur))
		}
	}
	seti(&c.Context.EarlyWarn, o.Context.EarlyWarn)
	seti(&c.Context.Warn, o.Context.Warn)
	seti(&c.Context.Critical, o.Context.Critical)
	set(&c.Context.RestartAtCritical, o.Context.RestartAtCritical)
}
