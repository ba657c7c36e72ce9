package publish

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseAge reads a duration as users write ages: "30d", "2w", or
// anything time.ParseDuration takes ("12h", "90m").
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			v, err := strconv.ParseFloat(n, 64)
			if err != nil || v < 0 {
				break
			}
			return time.Duration(v * float64(unit)), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid age %q (use e.g. 30d, 2w, 12h)", s)
	}
	return d, nil
}
