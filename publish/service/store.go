package service

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/config"
	"github.com/carryover/carryover/publish/lifecycle"
	"github.com/carryover/carryover/publish/limits"
)

// Store is carryover's home as the machine-wide commands see it (status,
// info, doctor, gc, forget, purge): the ledger, when there is one. These
// commands never create a ledger.
type Store struct {
	env Env
	l   *ledger.Ledger // nil: there is no ledger yet
	// Path is the ledger's file.
	Path string
}

// LedgerFile is the ledger's file name under the home.
const LedgerFile = ledger.FileName

// Space is what takes the ledger's room (per project; per table on
// request).
type Space = ledger.Space

// OpenStore opens the home's ledger when there is one.
func OpenStore(env Env) (*Store, error) {
	s := &Store{env: env, Path: filepath.Join(env.Home, ledger.FileName)}
	if !fileExists(s.Path) {
		return s, nil
	}
	l, err := ledger.Open(env.Home)
	if err != nil {
		return nil, err
	}
	s.l = l
	return s, nil
}

// Exists reports whether there is a ledger.
func (s *Store) Exists() bool { return s.l != nil }

// Close closes the ledger.
func (s *Store) Close() {
	if s.l != nil {
		s.l.Close()
		s.l = nil
	}
}

// SessionCount is how many sessions the ledger holds.
func (s *Store) SessionCount() int {
	if s.l == nil {
		return 0
	}
	ss, _ := s.l.Sessions("", "", 1_000_000)
	return len(ss)
}

// KnownProjects are the projects the ledger has seen.
func (s *Store) KnownProjects() ([]string, error) {
	if s.l == nil {
		return nil, nil
	}
	return s.l.KnownProjects()
}

// Receipt is one delivery of a project's handoff to an agent's session.
type Receipt struct {
	Handoff string    `json:"handoff"`
	Current bool      `json:"current"`
	Tool    string    `json:"tool"`
	Session string    `json:"session"`
	Via     string    `json:"via"` // hook: carryover printed it; transcript: seen in the agent's own transcript
	At      time.Time `json:"at"`
}

// LastReceipts is the newest delivery receipt per agent.
func (s *Store) LastReceipts() map[string]Receipt {
	out := map[string]Receipt{}
	if s.l == nil {
		return out
	}
	ds, _ := lifecycle.Deliveries(s.l, "", 100_000)
	for _, d := range ds { // newest first
		if _, ok := out[d.Tool]; !ok {
			out[d.Tool] = Receipt{Handoff: d.Header, Tool: d.Tool, Session: d.NativeID, Via: d.Via, At: d.At}
		}
	}
	return out
}

// GCResult is what gc removed (or would).
type GCResult = ledger.GCResult

// GC removes the rows of sessions last active before before (of project,
// "" all), then, unless dryRun, forgets `list`'s cached descriptions of
// transcripts deleted since and, with vacuum, gives the free pages back.
func (s *Store) GC(before time.Time, project string, dryRun, vacuum bool) (GCResult, error) {
	r, err := s.l.GC(ledger.GCOptions{Before: before, Project: project, DryRun: dryRun})
	if err != nil || dryRun {
		return r, err
	}
	_, _ = s.l.ForgetGone(func(p string) bool { _, err := os.Lstat(p); return errors.Is(err, fs.ErrNotExist) })
	if vacuum {
		free := r.FreeBytes
		if err := s.l.Vacuum(); err != nil {
			return r, fmt.Errorf("%v (is a long `carryover handoff` running? try again after it)", err)
		}
		r.FreedBytes, r.FreeBytes = r.FreedBytes+free, 0
	}
	return r, nil
}

// Space is what takes the ledger's room; tables adds each table and index
// (dbstat reads every page).
func (s *Store) Space(tables bool) (*Space, error) {
	if s.l == nil {
		return nil, nil
	}
	sp, err := s.l.Space(tables)
	return &sp, err
}

// LedgerStats are the ledger's counts for status.
type LedgerStats struct {
	Sessions, Rows int
	ByTool         map[string]int
	Forgotten      int // handoff records whose session was forgotten
}

// Stats counts what the ledger holds.
func (s *Store) Stats() LedgerStats {
	var st LedgerStats
	if s.l == nil {
		return st
	}
	st.Forgotten = s.l.ForgottenCount()
	if c, err := s.l.Stats(); err == nil {
		st.Sessions, st.Rows, st.ByTool = c.Sessions, c.Rows, c.BySessions
	}
	return st
}

// ProjectStatus is a project's current handoff and its delivery receipts.
type ProjectStatus struct {
	Project  string    `json:"project"`
	Header   string    `json:"handoff"`
	From     string    `json:"from"`
	Written  time.Time `json:"written"`
	Quality  string    `json:"quality,omitempty"` // handoff.md's coverage line
	Receipts []Receipt `json:"receipts"`
	// Context is the handoff session's context level ("OK 42 %").
	Context string `json:"context,omitempty"`
	// NotInjected says why the project's handoff.md is not injected (it is
	// not the file carryover published).
	NotInjected string `json:"not_injected,omitempty"`
	// Lifecycle is the current handoff's id, status, consumers and
	// staleness (nil before the ledger recorded one).
	Lifecycle *lifecycle.HistoryEntry `json:"lifecycle,omitempty"`
}

// Projects is each project's current handoff; cwd, the working
// directory's project, is added when it has none but a handoff.md that
// would not be injected.
func (s *Store) Projects(cwd string) ([]ProjectStatus, error) {
	var out []ProjectStatus
	var hs []ledger.Handoff
	var err error
	if s.l != nil {
		hs, err = lifecycle.Handoffs(s.l)
	}
	for _, h := range hs {
		p := Open(s.env, h.Project, nil)
		p.ledger = s.l
		pr := ProjectStatus{Project: h.Project, Header: h.Header, From: h.Tool, Written: h.Written.UTC(), NotInjected: p.NotInjected(),
			Quality: publish.QualityLine(publish.HandoffPath(h.Project)), Lifecycle: p.Current()}
		if h.Project == cwd {
			cwd = ""
		}
		ds, _ := lifecycle.Deliveries(s.l, h.Project, 10)
		for _, d := range ds {
			pr.Receipts = append(pr.Receipts, Receipt{Handoff: d.Header, Current: d.Header == h.Header, Tool: d.Tool, Session: d.NativeID, Via: d.Via, At: d.At.UTC()})
		}
		if ls, err := s.l.SessionByID(h.SessionID); err == nil {
			pr.Context = contextLine(ls, p.Config)
		}
		out = append(out, pr)
	}
	if cwd != "" {
		p := Open(s.env, cwd, nil)
		p.ledger = s.l
		if why := p.NotInjected(); why != "" {
			out = append(out, ProjectStatus{Project: cwd, NotInjected: why})
		}
	}
	return out, err
}

// NotInjected says why the project's handoff.md would not be injected (""
// when it would, or there is none), and which of carryover's own files it
// does not write because git tracks them (publish.TrackedOwn).
func (p *Project) NotInjected() string {
	why := ""
	if b, err := publish.ReadHandoffFile(p.Root); err != nil && !errors.Is(err, fs.ErrNotExist) {
		why = err.Error()
	} else if err == nil {
		if w := publish.CheckProjectHandoff(b, p.Home, p.Root, p.ledger); w != "" {
			why = "its .carryover/handoff.md is not injected: " + w
		}
	}
	if t := publish.TrackedOwn(p.Root); len(t) > 0 {
		note := "git tracks " + strings.Join(t, ", ") + ": carryover does not write them (they came with the repository; `git rm --cached` them to let it)"
		if why != "" {
			return why + "; " + note
		}
		return note
	}
	return why
}

// LastLimit is the newest limit an agent reached.
type LastLimit struct {
	Tool    string    `json:"tool"`
	Kind    string    `json:"kind"`
	Resets  string    `json:"resets,omitempty"`
	Project string    `json:"project"`
	Session string    `json:"session"`
	At      time.Time `json:"at"`
}

// LastLimits is the newest limit each agent reached.
func (s *Store) LastLimits() []LastLimit {
	if s.l == nil {
		return nil
	}
	evs, err := limits.LastLimits(s.l, "")
	if err != nil {
		return nil
	}
	var out []LastLimit
	for _, ev := range evs {
		out = append(out, LastLimit{Tool: ev.Tool, Kind: string(ev.Limit.Kind), Resets: ev.Limit.Resets(s.env.Now(), time.Local),
			Project: ev.Project, Session: ev.NativeID, At: ev.At.UTC()})
	}
	return out
}

// contextLine is a session's context level with cfg's thresholds ("" when
// its usage is unknown).
func contextLine(s ledger.Session, cfg config.Config) string {
	if s.TokensUsed == 0 {
		return ""
	}
	a, _ := adapters.ByName(s.Tool)
	lvl, pct := limits.Level(s, a, cfg.Walls())
	return fmt.Sprintf("%s (%d %% of %d tokens)", lvl, pct, limits.Window(s, a))
}

// Root is the project a directory belongs to: its git root, else itself
// (distill.ProjectRoot); recorded is a session's recorded directory.
func Root(recorded, dir string) string { return distill.ProjectRoot(recorded, dir) }

// RepoRoot is the git root above dir ("" none).
func RepoRoot(dir string) string { return distill.RepoRoot(dir) }

// Tracker says whether git repositories track files, reading each
// repository's index once.
type Tracker map[string]*distill.Repo

// Tracked reports whether the repository at root tracks path.
func (t Tracker) Tracked(root, path string) bool {
	r, ok := t[root]
	if !ok {
		r = distill.OpenRepo(root)
		t[root] = r
	}
	return r.Tracked(path)
}

// LedgerSession is a session the ledger knows, for listings.
type LedgerSession = ledger.Session

// OpenListing points aenv at the listers' description cache
// (adapters.DescriptionFile, in carryover's home, ledger or not) and opens
// the ledger for the sessions only it knows. A listing creates no ledger
// and waits at most 2s for another process's lock (a listing is only
// worth a short wait): a busy or broken ledger leaves the Store empty.
func OpenListing(env Env, aenv *adapters.Env) (*Store, *adapters.DescriptionFile) {
	d := adapters.OpenDescriptionFile(env.Home)
	aenv.Descriptions = d
	s := &Store{env: env, Path: filepath.Join(env.Home, ledger.FileName)}
	if !fileExists(s.Path) {
		return s, d
	}
	if l, err := ledger.OpenBy(env.Home, time.Now().Add(2*time.Second)); err == nil {
		s.l = l
	}
	return s, d
}

// ListedSessions are the ledger's sessions of project ("" = all) and tool
// ("" = all), newest first, at most limit; none without a ledger.
func (s *Store) ListedSessions(project, tool string, limit int) []LedgerSession {
	if s.l == nil {
		return nil
	}
	ss, _ := s.l.Sessions(project, tool, limit)
	return ss
}
