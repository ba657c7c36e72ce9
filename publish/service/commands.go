package service

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/lifecycle"
	"github.com/carryover/carryover/publish/resume"
)

// A project's commands: the manual handoff and capture, the lifecycle (history, decide, task, clear, status:
// publish/lifecycle's operations on the project's ledger) and explain.

// OpenLedger is Open with the ledger opened for a command; create says whether a missing ledger may be created
// (commands that record): one that only reads gets a Project without a ledger (HasLedger false).
func OpenLedger(env Env, root string, create bool) (*Project, error) {
	p := Open(env, root, nil)
	if _, err := os.Stat(filepath.Join(env.Home, ledger.FileName)); err != nil && !create {
		return p, nil
	}
	var err error
	if p.ledger, err = ledger.Open(env.Home); err != nil {
		return nil, err
	}
	lifecycle.Restore(p.Project, p.ledger) // a ledger rebuilt without the project's handoffs
	return p, nil
}

func (p *Project) HasLedger() bool { return p.ledger != nil }

// Publish makes the project's handoff say what a command just changed, best effort: the next hook event publishes it
// anyway (the project is marked). Nothing happens when the ledger holds nothing of the project.
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
	r, lc, err := p.render(st)
	if err != nil || r == nil {
		return err
	}
	lc.Record(r.Text)
	return p.WriteProject(r.Text, r.Tool)
}

// Decision is one entry of the project's decisions log.
type Decision struct {
	ID, Text, Why string
	User          bool // decided by the user (`carryover decide`), else extracted
	At            time.Time
}

// DecisionID is a decision's stable id: it names the decision's text (a project's decisions are unique by text), so it
// does not shift when an older decision is dropped, as a position in the list would.
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
	return publish.Map(ds, func(d ledger.Decision) Decision {
		return Decision{ID: DecisionID(d.Text), Text: d.Text, Why: d.Why, User: d.Source == ledger.DecisionUser, At: d.At}
	}), err
}

func (p *Project) Decide(text, why string) error {
	_, err := lifecycle.AddDecision(p.ledger, p.Root, ledger.Decision{Text: text, Why: why, Source: ledger.DecisionUser, At: p.env.Now()})
	return err
}

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

func (p *Project) PinTask(text string) error {
	return lifecycle.PinTask(p.ledger, p.Root, text, p.env.Now())
}

// UnpinTask unpins the project's task (false: none was pinned).
func (p *Project) UnpinTask() (Task, bool, error) { return lifecycle.UnpinTask(p.ledger, p.Root) }

func (p *Project) History() ([]lifecycle.HistoryEntry, error) {
	return lifecycle.History(p.ledger, p.Root, p.env.Now(), p.ExpireAfter)
}

// CleanHistory forgets the handoffs older than d (dryRun: only names them) and returns their ids.
func (p *Project) CleanHistory(d time.Duration, dryRun bool) ([]string, error) {
	return lifecycle.CleanHistory(p.ledger, p.Root, p.env.Now(), d, dryRun)
}

// Clear retires the project's current handoff (lifecycle.Clear).
func (p *Project) Clear() (id string, already bool, err error) {
	return lifecycle.Clear(p.Project, p.ledger)
}

// Current is the project's current handoff as status shows it (nil: none).
func (p *Project) Current() *lifecycle.HistoryEntry {
	return lifecycle.Current(p.ledger, p.Root, p.env.Now(), p.ExpireAfter, distill.OpenRepo(p.Root))
}

// Lifecycle is the lifecycle a structured handoff carries (nil without a ledger).
func (p *Project) Lifecycle() *resume.Lifecycle {
	return resume.LifecycleOf(p.ledger, p.Root, p.env.Now(), p.ExpireAfter, distill.OpenRepo(p.Root))
}

// Pick is the session a manual command works on, as cmd's picker chose it.
type Pick struct {
	adapters.NativeSession
	LedgerOnly bool // its transcript is gone; the ledger's rows are read
	// Key is the project the session is recorded under (an imported transcript's own key: it never feeds the project's
	// handoff).
	Key      string
	Explicit bool   // a --transcript file, read as given
	Context  string // the directory its git and file context come from ("": none)
}

// Unreadable is a session that could not be read or parsed (cmd's exit code 3).
type Unreadable struct{ error }

func (u Unreadable) Unwrap() error { return u.error }

func unreadable(format string, args ...any) error { return Unreadable{fmt.Errorf(format, args...)} }

// Manual is what `carryover handoff` and `capture` get for a session.
type Manual struct {
	Session   resume.Session
	Context   string   // the session's context level line ("" when its usage is unknown)
	DrawnFrom []string // the sessions the project's fold drew from (fold only)
}

// Handoff is the resume session of the picked session, read into the ledger first (the hook's sync). Its task state is
// distilled once: from the project's stored State when fold (what handoff.md says, across sessions and agents; the
// picked session's conversation stays the recent-messages layer), else from the session's own rows.
func (p *Project) Handoff(pk Pick, fold bool, progress func(string, int64)) (Manual, error) {
	var m Manual
	l, err := p.ingest(pk, progress)
	if err != nil {
		return m, err
	}
	defer l.Close()
	ls, rows, err := sessionRows(l, pk)
	if err != nil {
		return m, err
	}
	m.Context = contextLine(ls, p.Config)
	src := resume.Sources{Project: pk.Context, Recorded: pk.Project, Tool: pk.Tool, SessionID: pk.ID, Ledger: ls, Now: p.Now, Redact: p.Redact}
	var h distill.Handoff
	folded := false
	if fold && foldHasRows(l, p.Root) {
		h, m.DrawnFrom, err = distill.ProjectFold(l, p.Root, p.Now, distill.Options{Project: p.Root})
		// A project whose fold has no task yet (or cannot be read) gets the session's own: the one case left that
		// distils twice.
		if folded = err == nil && h.Task != ""; !folded {
			m.DrawnFrom = nil
		}
	}
	if !folded {
		h = distill.Distill(rows, src.DistillOptions())
	}
	m.Session = resume.FromRows(rows, h, src)
	m.Session.DrawnFrom = m.DrawnFrom
	return m, nil
}

// foldHasRows reports whether the project's fold would read any row (a session recorded under another directory leaves
// it empty; a forgotten one takes the project's stored state with it).
func foldHasRows(l *ledger.Ledger, project string) bool {
	ss, err := l.ProjectSessions(project)
	return err == nil && slices.ContainsFunc(ss, func(s ledger.ProjectSession) bool { return s.LastSeq > 0 })
}

// Ingest reads the picked session into the ledger (`carryover run` after Aider: the project's handoff is then
// Refreshed).
func (p *Project) Ingest(pk Pick) error {
	l, err := p.ingest(pk, nil)
	if err == nil {
		l.Close()
	}
	return err
}

// ingest reads the picked session into the ledger with the hook's sync (a damaged ledger is rebuilt, the project's
// other transcripts caught up, receipts recorded) and returns the ledger, open.
func (p *Project) ingest(pk Pick, progress func(string, int64)) (*ledger.Ledger, error) {
	l, err := ledger.Open(p.env.Home)
	if err != nil {
		return nil, err
	}
	logRecovered(p.log, l)
	if pk.LedgerOnly {
		return l, nil
	}
	a, err := adapters.Lookup(pk.Tool)
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("carryover cannot read %s sessions (no adapter); known: %s", pk.Tool, strings.Join(adapters.Names(), ", "))
	}
	h := adapters.Hook{Tool: pk.Tool, SessionID: pk.ID, TranscriptPath: pk.Path, Cwd: p.Root, Project: p.Root}
	o := ledger.IngestOptions{Adapter: a, Hook: h, Env: p.env.Agent, Project: pk.Key, Now: p.env.Now(), Redact: p.Redact, Progress: progress}
	if pk.Explicit {
		o.Transcripts = adapters.ExplicitTranscripts(a, h, p.env.Agent)
	}
	l, rep, err := ledger.Sync(l, o)
	p.log.Notes(rep.Notes)
	if l == nil {
		return nil, err
	}
	if err == nil {
		err = fileError(rep, pk.Path)
	} else {
		err = unreadable("could not read the %s session %s: %v", pk.Tool, publish.ShortID(pk.ID), err)
	}
	if err != nil {
		l.Close()
		return nil, err
	}
	if pk.Preview != "" {
		if s, err := l.SessionIn(pk.Tool, pk.ID, pk.Key); err == nil {
			_ = l.SetTitle(s.ID, p.Redact(pk.Preview))
		}
	}
	return l, nil
}

// fileError is the sync's error reading the picked transcript (or the agent's store), nil when it was read.
func fileError(rep ledger.SyncReport, path string) error {
	for _, f := range rep.Files {
		if f.Err != nil && !errors.Is(f.Err, fs.ErrNotExist) && (f.Path == path || f.Path == "store") {
			return unreadable("could not read %s: %v", f.Path, f.Err)
		}
	}
	return nil
}

// sessionRows are the picked session's ledger record and rows, oldest first.
func sessionRows(l *ledger.Ledger, pk Pick) (ledger.Session, []ledger.Row, error) {
	s, err := l.SessionIn(pk.Tool, pk.ID, pk.Key)
	if err != nil && pk.LedgerOnly { // recorded under the project it was seen in
		s, err = l.Session(pk.Tool, pk.ID)
	}
	if err != nil {
		return s, nil, unreadable("session %s was not recorded: %v", publish.ShortID(pk.ID), err)
	}
	rows, err := l.Rows(s.ID, 4000)
	if err != nil {
		return s, nil, fmt.Errorf("read the ledger: %v", err)
	}
	if len(rows) == 0 {
		return s, nil, unreadable("the %s session %s has nothing carryover can read (no prompts, replies or tool calls); %s", pk.Tool, publish.ShortID(pk.ID), adapters.Tried(pk.Tool))
	}
	ledger.PromoteSubagentOnly(rows)
	return s, rows, nil
}

// ExplainRow is one evidence row as `carryover explain` prints it.
type ExplainRow struct {
	Session string    `json:"session"`
	Agent   string    `json:"agent"`
	Seq     int64     `json:"seq"`
	Time    time.Time `json:"time"`
	Kind    string    `json:"kind"`
	Excerpt string    `json:"excerpt"`
}

// ExplainLine is one line of the handoff with the rule that chose it and the ledger rows it came from.
type ExplainLine struct {
	Section string       `json:"section"`
	Text    string       `json:"text"`
	Rule    string       `json:"rule"`
	Rows    []ExplainRow `json:"rows"`
}

// Explain is the project's handoff, each line with its evidence (`carryover explain`); nil without a ledger.
func (p *Project) Explain() ([]ExplainLine, error) {
	if p.ledger == nil {
		return nil, nil
	}
	h, _, err := distill.ProjectFold(p.ledger, p.Root, p.env.Now(), distill.Options{Project: p.Root})
	if err != nil {
		return nil, err
	}
	red := p.Redact
	sessions := map[int64]ledger.Session{}
	var lines []ExplainLine
	for _, ev := range h.Evidence {
		l := ExplainLine{Section: ev.Section, Text: red(contentOneLine(ev.Text, 200)), Rule: ev.Rule, Rows: []ExplainRow{}}
		for _, ref := range ev.Refs {
			s, ok := sessions[ref.Session]
			if !ok {
				if s, err = p.ledger.SessionByID(ref.Session); err != nil {
					continue
				}
				sessions[ref.Session] = s
			}
			rows, err := p.ledger.RowsAfter(ledger.ProjectSession{ID: s.ID, Tool: s.Tool}, ref.Seq-1, 1)
			if err != nil || len(rows) == 0 || rows[0].Seq != ref.Seq {
				continue
			}
			row := rows[0]
			text := row.Text
			if row.Command != "" {
				text = row.Command + " → " + text
			}
			l.Rows = append(l.Rows, ExplainRow{Session: s.NativeID, Agent: s.Tool, Seq: row.Seq, Time: row.Time.UTC(), Kind: string(row.Kind),
				Excerpt: red(contentOneLine(text, 160))})
		}
		lines = append(lines, l)
	}
	return append(lines, explainOwn(p.ledger, p.Root, h, lines, red)...), nil
}

// explainOwn are the handoff lines no session row wrote: the task and decisions the user set (`carryover task`,
// `carryover decide`), the decision log's earlier extractions, the Git line (read from the repository) and the Session
// lines (carryover's own summary of the fold).
func explainOwn(l *ledger.Ledger, project string, h distill.Handoff, have []ExplainLine, red func(string) string) []ExplainLine {
	var out []ExplainLine
	own := func(sec, text, rule string) {
		out = append(out, ExplainLine{Section: sec, Text: red(contentOneLine(text, 200)), Rule: rule, Rows: []ExplainRow{}})
	}
	if t, ok := lifecycle.Task(l, project); ok {
		own("Task", t.Text, "pinned by the user with `carryover task` on "+t.At.UTC().Format(time.RFC3339)+" (source: the user, not a session)")
	}
	extracted := map[string]bool{}
	for _, x := range have {
		if x.Section == "Decisions" {
			extracted[x.Text] = true
		}
	}
	decisions, _ := lifecycle.Decisions(l, project)
	for _, d := range decisions {
		if d.Source == ledger.DecisionUser {
			own("Decisions", d.Text, "set by the user with `carryover decide` on "+d.At.UTC().Format(time.RFC3339)+" (source: the user, not a session)")
		} else if !extracted[red(contentOneLine(d.Text, 200))] {
			own("Decisions", d.Text, "the project's decision log: extracted from an earlier handoff's sessions on "+d.At.UTC().Format(time.RFC3339)+" and kept until dropped (`carryover decide --list`)")
		}
	}
	h.Git, _ = distill.RepoFacts(distill.OpenRepo(project), h.Files)
	if h.Git.Repo {
		own("Git", "branch "+h.Git.Branch+" @ "+h.Git.Head, "read from the repository (.git: HEAD, refs, the index entries of the files the sessions touched), not from a session")
	}
	if h.Tokens.Max > 0 {
		own("Session", fmt.Sprintf("context: %d/%d tokens", h.Tokens.Used, h.Tokens.Max), "the agent's newest usage report")
	}
	if e := publish.Endings[h.Ended]; e != "" {
		own("Session", "the session ended "+e, "the main thread's last telling row (its kind; the agent's last reply, done or asking), as the resume prompt says it")
	}
	own("Session", h.Quality().String(), "carryover's measure of what the fold found (rows, prompts, sections filled)")
	own("Session", "ledger: "+h.Tool+" session "+publish.ShortID(h.Session), "the session of the newest row in carryover's ledger")
	return out
}

// contentOneLine is transcript text made one printable line of at most n bytes: terminal escapes with their bodies and
// invisible characters removed (publish.OneLine), white space folded.
func contentOneLine(s string, n int) string {
	s = publish.OneLine(s)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
