package service

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish/lifecycle"
	"github.com/carryover/carryover/publish/resume"
)

// The handoff's lifecycle as the commands see it (history, decide, task,
// clear, status): publish/lifecycle's operations on the project's ledger.

// OpenLedger is Open with the ledger opened for a command; create says
// whether a missing ledger may be created (commands that record): one
// that only reads gets a Project without a ledger (HasLedger false).
func OpenLedger(env Env, root string, create bool) (*Project, error) {
	p := Open(env, root, nil)
	if _, err := os.Stat(filepath.Join(env.Home, ledger.FileName)); err != nil && !create {
		return p, nil
	}
	l, err := ledger.Open(env.Home)
	if err != nil {
		return nil, err
	}
	p.ledger = l
	lifecycle.Restore(p.Project, l) // a ledger rebuilt without the project's handoffs
	return p, nil
}

// HasLedger reports whether the project's ledger is open.
func (p *Project) HasLedger() bool { return p.ledger != nil }

// Publish makes the project's handoff say what a command just changed,
// best effort: the next hook event publishes it anyway (the project is
// marked). Nothing happens when the ledger holds nothing of the project.
func (p *Project) Publish() error {
	_ = p.ledger.MarkDirty(p.Root, p.env.Now())
	if p.Repo == nil {
		repo := distill.OpenRepo(p.Root)
		p.Repo = func() *distill.Repo { return repo }
	}
	st, err := p.distilled()
	if err != nil {
		return err
	}
	r, err := p.Prepare(p.ledger, st)
	if err != nil || r == nil {
		return err
	}
	return p.WriteProject(r.Text, r.Tool)
}

// Decision is one entry of the project's decisions log.
type Decision struct {
	ID, Text, Why string
	User          bool // decided by the user (`carryover decide`), else extracted
	At            time.Time
}

// DecisionID is a decision's stable id: it names the decision's text (a
// project's decisions are unique by text), so it does not shift when an
// older decision is dropped, as a position in the list would.
func DecisionID(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "d-" + hex.EncodeToString(sum[:3])
}

// Decisions is the project's decisions log, the user's first.
func (p *Project) Decisions() ([]Decision, error) {
	if p.ledger == nil {
		return nil, nil
	}
	ds, err := lifecycle.Decisions(p.ledger, p.Root)
	out := make([]Decision, len(ds))
	for i, d := range ds {
		out[i] = Decision{ID: DecisionID(d.Text), Text: d.Text, Why: d.Why, User: d.Source == ledger.DecisionUser, At: d.At}
	}
	return out, err
}

// Decide adds the user's decision to the log.
func (p *Project) Decide(text, why string) error {
	_, err := lifecycle.AddDecision(p.ledger, p.Root, ledger.Decision{Text: text, Why: why, Source: ledger.DecisionUser, At: p.env.Now()})
	return err
}

// DropDecision drops the decision with text from the log.
func (p *Project) DropDecision(text string) error {
	return lifecycle.DropDecision(p.ledger, p.Root, text)
}

// Task is the task the user pinned.
type Task = ledger.PinnedTask

// Task is the project's pinned task.
func (p *Project) Task() (Task, bool) {
	if p.ledger == nil {
		return Task{}, false
	}
	return lifecycle.Task(p.ledger, p.Root)
}

// PinTask pins text as the project's task.
func (p *Project) PinTask(text string) error {
	return lifecycle.PinTask(p.ledger, p.Root, text, p.env.Now())
}

// UnpinTask unpins the project's task (false: none was pinned).
func (p *Project) UnpinTask() (Task, bool, error) { return lifecycle.UnpinTask(p.ledger, p.Root) }

// History lists the project's handoffs, newest first.
func (p *Project) History() ([]lifecycle.HistoryEntry, error) {
	return lifecycle.History(p.ledger, p.Root, p.env.Now(), p.ExpireAfter)
}

// StaleHistory are the ids of the handoffs older than d.
func (p *Project) StaleHistory(d time.Duration) ([]string, error) {
	return lifecycle.CleanHistory(p.ledger, p.Root, p.env.Now(), d, true)
}

// CleanHistory forgets the handoffs older than d and returns their ids.
func (p *Project) CleanHistory(d time.Duration) ([]string, error) {
	return lifecycle.CleanHistory(p.ledger, p.Root, p.env.Now(), d, false)
}

// Clear retires the project's current handoff (lifecycle.Clear).
func (p *Project) Clear() (id string, already bool, err error) {
	return lifecycle.Clear(p.Project, p.ledger)
}

// Current is the project's current handoff as status shows it (nil: none).
func (p *Project) Current() *lifecycle.HistoryEntry {
	return lifecycle.Current(p.ledger, p.Root, p.env.Now(), p.ExpireAfter, distill.OpenRepo(p.Root))
}

// Lifecycle is the lifecycle a structured handoff carries (nil without a
// ledger).
func (p *Project) Lifecycle() *resume.Lifecycle {
	return resume.LifecycleOf(p.ledger, p.Root, p.env.Now(), p.ExpireAfter, distill.OpenRepo(p.Root))
}
