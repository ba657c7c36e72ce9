package config

import (
	"fmt"
	"slices"
	"strings"
)

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
