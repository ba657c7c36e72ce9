package distill

// Quality is a deterministic coverage report of a handoff (as ntm's
// QualityReport and clauditor's coverage report): which of the facts a
// resuming agent needs the handoff could fill. It measures coverage, never
// truth: a filled "next action" may still be the wrong one.

import (
	"fmt"
	"strings"
)

// QualityFields are the facts scored, in display order.
var QualityFields = []string{"goal", "latest request", "files", "failures", "decisions", "next action", "test command", "git state"}

// Quality is a handoff's coverage: Score is Filled/len(QualityFields) in
// percent; Missing lists the facts it could not fill, in QualityFields
// order.
type Quality struct {
	Score   int      `json:"score" yaml:"score"`
	Filled  int      `json:"filled" yaml:"filled"`
	Of      int      `json:"of" yaml:"of"`
	Missing []string `json:"missing,omitempty" yaml:"missing,omitempty"`
}

// Quality scores h. The latest request is filled when the handoff names
// one (the goal is the latest request when no later one is shown);
// failures count as covered when any was recorded or a test command was
// seen (a session whose tests ran green has no failure to report).
func (h Handoff) Quality() Quality {
	have := map[string]bool{
		"goal":           h.Task != "",
		"latest request": h.Task != "" || h.Latest != "",
		"files":          len(h.Files) > 0,
		"failures":       len(h.Failures) > 0 || h.Test != "",
		"decisions":      len(h.Decisions) > 0,
		"next action":    h.Next != "",
		"test command":   h.Test != "",
		"git state":      h.Git.Repo,
	}
	q := Quality{Of: len(QualityFields)}
	for _, f := range QualityFields {
		if have[f] {
			q.Filled++
		} else {
			q.Missing = append(q.Missing, f)
		}
	}
	q.Score = q.Filled * 100 / q.Of
	return q
}

// String is the one-line form: "quality 75% (6/8; missing: decisions, git state)".
func (q Quality) String() string {
	s := fmt.Sprintf("quality %d%% (%d/%d", q.Score, q.Filled, q.Of)
	if len(q.Missing) > 0 {
		s += "; missing: " + strings.Join(q.Missing, ", ")
	}
	return s + ")"
}
