package resume

import (
	"time"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish/lifecycle"
)

// Lifecycle is what the structured handoff says about the project's
// current handoff: its id and status, who received it, what changed
// since, the decisions log and the task the user pinned.
type Lifecycle struct {
	ID         string                     `yaml:"id" json:"id"`
	Status     string                     `yaml:"status" json:"status"`
	ConsumedBy []lifecycle.ConsumerReport `yaml:"consumed_by" json:"consumed_by"`
	Staleness  []string                   `yaml:"staleness,omitempty" json:"staleness,omitempty"`
	Decisions  []Decision                 `yaml:"decisions,omitempty" json:"decisions,omitempty"`
	PinnedTask *PinnedTask                `yaml:"pinned_task,omitempty" json:"pinned_task,omitempty"`
}

// Decision is one entry of the project's decisions log.
type Decision struct {
	Text   string `yaml:"text" json:"text"`
	Why    string `yaml:"why,omitempty" json:"why,omitempty"`
	Source string `yaml:"source" json:"source"` // user or extracted
}

// PinnedTask is the task the user pinned (carryover task).
type PinnedTask struct {
	Task  string    `yaml:"task" json:"task"`
	SetBy string    `yaml:"set_by" json:"set_by"`
	At    time.Time `yaml:"at" json:"at"`
}

// LifecycleOf reads the project's lifecycle from the ledger (nil when it
// recorded nothing of the project).
func LifecycleOf(l *ledger.Ledger, project string, now time.Time, expireAfter time.Duration, repo *distill.Repo) *Lifecycle {
	if l == nil {
		return nil
	}
	lc := &Lifecycle{}
	if cur := lifecycle.Current(l, project, now, expireAfter, repo); cur != nil {
		lc.ID, lc.Status, lc.ConsumedBy, lc.Staleness = cur.ID, cur.Status, cur.ConsumedBy, cur.Staleness
	}
	ds, _ := lifecycle.Decisions(l, project)
	for _, d := range ds {
		lc.Decisions = append(lc.Decisions, Decision{Text: d.Text, Why: d.Why, Source: d.Source})
	}
	if t, ok := lifecycle.Task(l, project); ok {
		lc.PinnedTask = &PinnedTask{Task: t.Text, SetBy: "user", At: t.At.UTC()}
	}
	if lc.ID == "" && len(lc.Decisions) == 0 && lc.PinnedTask == nil {
		return nil
	}
	return lc
}

// WithLifecycle attaches lc to h; a pinned task becomes the goal (it has
// priority over the extracted one, which stays in the resume prompt).
func (h Handoff) WithLifecycle(lc *Lifecycle) Handoff {
	h.Lifecycle = lc
	if lc != nil && lc.PinnedTask != nil {
		h.Goal = oneLine(lc.PinnedTask.Task)
	}
	return h
}

// ApplyLifecycle makes the resume prompt agree with handoff.md: the task
// the user pinned is the task, and the project's decisions log comes
// before the session's own decisions.
func (s *Session) ApplyLifecycle(lc *Lifecycle) {
	if lc == nil {
		return
	}
	if lc.PinnedTask != nil {
		s.Task.Description = lc.PinnedTask.Task + " (pinned by the user; the session's own goal was: " + s.Task.Description + ")"
	}
	var ds []string
	seen := map[string]bool{}
	for _, d := range lc.Decisions {
		t := d.Text
		if d.Why != "" {
			t += " (why: " + d.Why + ")"
		}
		if !seen[d.Text] {
			seen[d.Text] = true
			ds = append(ds, t)
		}
	}
	for _, d := range s.Decisions {
		if !seen[d] {
			seen[d] = true
			ds = append(ds, d)
		}
	}
	s.Decisions = ds
}
