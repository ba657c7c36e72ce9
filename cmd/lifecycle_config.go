package cmd

import "github.com/carryover/carryover/publish"

// lifecycleConfig applies the global config's handoff lifecycle settings.
func lifecycleConfig(p *publish.Project, cfg Config, logf func(string, ...any)) {
	if cfg.ExpireAfter != "" {
		if d, err := publish.ParseAge(cfg.ExpireAfter); err == nil {
			p.ExpireAfter = d
		} else {
			logf("config expire_after: %v (default 7d used)", err)
		}
	}
	p.HistoryKeep = cfg.HistoryKeep
}
