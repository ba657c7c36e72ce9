package service

import (
	"sync"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
)

// Fallback is what the hook's watchdog needs to inject the published
// handoff when the event itself did not finish in time: the agent and
// project, once the payload named them.
type Fallback struct {
	mu    sync.Mutex
	agent *adapters.Agent
	proj  publish.Project
	ok    bool
}

// Set names the agent and project (OnHook, once the payload named them).
func (f *Fallback) Set(agent *adapters.Agent, proj *publish.Project) {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.agent, f.proj, f.ok = agent, *proj, true
	f.mu.Unlock()
}

// Inject is the session start injection from handoff.md alone, trusted by
// the digests under the carryover home (no ledger, no .git); nil for any
// other event or before the payload named the project.
func (f *Fallback) Inject(event string, log *Log) []byte {
	f.mu.Lock()
	agent, proj, ok := f.agent, f.proj, f.ok
	f.mu.Unlock()
	if !ok || agent.Class(event) != adapters.ClassStart {
		return nil
	}
	proj.Logf = log.Printf
	proj.Repo = func() *distill.Repo { return nil }              // no staleness note
	w, _ := proj.InjectFile(agent, event, proj.ReadHandoff(nil)) // the banner from the verified header
	return w
}
