package service

import (
	"cmp"
	"errors"
	"fmt"
	"io"
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
	"github.com/carryover/carryover/publish/config"
	"github.com/carryover/carryover/publish/lifecycle"
	"github.com/carryover/carryover/publish/limits"
)

// Store is carryover's home as the machine-wide commands see it (status, info, doctor, gc, forget, purge): the ledger,
// when there is one. These commands never create a ledger.
type Store struct {
	env  Env
	l    *ledger.Ledger // nil: there is no ledger yet
	Path string         // the ledger's file
}

// LedgerFile is the ledger's file name under the home.
const LedgerFile = ledger.FileName

// Space is what takes the ledger's room (per project; per table on request).
type Space = ledger.Space

func OpenStore(env Env) (*Store, error) {
	s := &Store{env: env, Path: filepath.Join(env.Home, ledger.FileName)}
	var err error
	if publish.Exists(s.Path) {
		s.l, err = ledger.Open(env.Home)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Store) Exists() bool { return s.l != nil }

func (s *Store) Close() {
	if s.l != nil {
		s.l.Close()
		s.l = nil
	}
}

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

type GCResult = ledger.GCResult

// GC removes the rows of sessions last active before before (of project, "" all), then, unless dryRun, forgets `list`'s
// cached descriptions of transcripts deleted since and, with vacuum, gives the free pages back.
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

// Space is what takes the ledger's room; tables adds each table and index (dbstat reads every page).
func (s *Store) Space(tables bool) (*Space, error) {
	if s.l == nil {
		return nil, nil
	}
	sp, err := s.l.Space(tables)
	return &sp, err
}

// LedgerStats are the ledger's counts for status (Forgotten: handoff records whose session was forgotten).
type LedgerStats struct {
	Sessions, Rows, Forgotten int
	ByTool                    map[string]int
}

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
	Project     string    `json:"project"`
	Header      string    `json:"handoff"`
	From        string    `json:"from"`
	Written     time.Time `json:"written"`
	Quality     string    `json:"quality,omitempty"` // handoff.md's coverage line
	Receipts    []Receipt `json:"receipts"`
	Context     string    `json:"context,omitempty"`      // the handoff session's context level ("OK 42 %")
	NotInjected string    `json:"not_injected,omitempty"` // why handoff.md is not injected (not the file carryover published)
	// Lifecycle is the current handoff's id, status, consumers and staleness (nil before the ledger recorded one).
	Lifecycle *lifecycle.HistoryEntry `json:"lifecycle,omitempty"`
}

// Projects is each project's current handoff; cwd, the working directory's project, is added when it has none but a
// handoff.md that would not be injected.
func (s *Store) Projects(cwd string) ([]ProjectStatus, error) {
	var out []ProjectStatus
	var hs []ledger.Handoff
	var err error
	if s.l != nil {
		hs, err = lifecycle.Handoffs(s.l)
	}
	for _, h := range hs {
		p := s.project(h.Project)
		pr := ProjectStatus{Project: h.Project, Header: h.Header, From: h.Tool, Written: h.Written.UTC(), NotInjected: p.NotInjected(),
			Quality: publish.QualityLine(publish.HandoffPath(h.Project)), Lifecycle: p.Current()}
		if h.Project == cwd {
			cwd = ""
		}
		ds, _ := lifecycle.Deliveries(s.l, h.Project, 10)
		pr.Receipts = publish.Map(ds, func(d ledger.Delivery) Receipt {
			return Receipt{Handoff: d.Header, Current: d.Header == h.Header, Tool: d.Tool, Session: d.NativeID, Via: d.Via, At: d.At.UTC()}
		})
		if ls, err := s.l.SessionByID(h.SessionID); err == nil {
			pr.Context = contextLine(ls, p.Config)
		}
		out = append(out, pr)
	}
	if cwd != "" {
		p := s.project(cwd)
		if why := p.NotInjected(); why != "" {
			out = append(out, ProjectStatus{Project: cwd, NotInjected: why})
		}
	}
	return out, err
}

func (s *Store) project(root string) *Project {
	p := Open(s.env, root, nil)
	p.ledger = s.l
	return p
}

// NotInjected says why the project's handoff.md would not be injected ("" when it would, or there is none), and which
// of carryover's own files it does not write because git tracks them (publish.TrackedOwn).
func (p *Project) NotInjected() string {
	var why []string
	if b, err := publish.ReadHandoffFile(p.Root); err != nil && !errors.Is(err, fs.ErrNotExist) {
		why = append(why, err.Error())
	} else if w := publish.CheckHandoff(b, p.Home, p.Root, p.ledger); err == nil && w != "" {
		why = append(why, "its .carryover/handoff.md is not injected: "+w)
	}
	if t := publish.TrackedOwn(p.Root); len(t) > 0 {
		why = append(why, "git tracks "+strings.Join(t, ", ")+": carryover does not write them (they came with the repository; `git rm --cached` them to let it)")
	}
	return strings.Join(why, "; ")
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
	return publish.Map(evs, func(ev limits.Event) LastLimit {
		return LastLimit{Tool: ev.Tool, Kind: string(ev.Limit.Kind), Resets: ev.Limit.Resets(s.env.Now(), time.Local),
			Project: ev.Project, Session: ev.NativeID, At: ev.At.UTC()}
	})
}

// contextLine is a session's context level with cfg's thresholds ("" when its usage is unknown).
func contextLine(s ledger.Session, cfg config.Config) string {
	if s.TokensUsed == 0 {
		return ""
	}
	a, _ := adapters.ByName(s.Tool)
	lvl, pct := limits.Level(s, a, cfg.Walls())
	return fmt.Sprintf("%s (%d %% of %d tokens)", lvl, pct, limits.Window(s, a))
}

// Root is the project a directory belongs to: its git root, else itself (distill.ProjectRoot); recorded is a session's
// recorded directory.
func Root(recorded, dir string) string { return distill.ProjectRoot(recorded, dir) }

// RepoRoot is the git root above dir ("" none).
func RepoRoot(dir string) string { return distill.RepoRoot(dir) }

// Tracker says whether the git repository at a root tracks a path, reading each repository's index once.
type Tracker map[string]*distill.Repo

func (t Tracker) Tracked(root, path string) bool {
	r, ok := t[root]
	if !ok {
		r = distill.OpenRepo(root)
		t[root] = r
	}
	return r.Tracked(path)
}

// Candidate is a session in an agent's store or only in the ledger (`list`, and what handoff and capture pick from);
// NotYours: why it is never chosen unnamed.
type Candidate struct {
	adapters.NativeSession
	InLedger   bool   `json:"in_ledger,omitempty"`
	LedgerOnly bool   `json:"ledger_only,omitempty"`
	NotYours   string `json:"not_yours,omitempty"`
}

// ListSessions lists the sessions of project ("" = all) from the stores of the listers named and the ledger's of tool
// source ("" = all), yours first, then newest first. stores: any agent store or ledger session exists at all (false = "no agents
// detected"); notes: what could not be listed or read ("" for a lister that read all). The listers' descriptions are cached in the home; the ledger is
// never created and waited for at most 2s (a busy or broken one adds nothing).
func ListSessions(env Env, aenv adapters.Env, project, source string, names []string) (out []Candidate, stores bool, notes []string) {
	seen := map[string]int{}
	descs := adapters.OpenDescriptionFile(env.Home)
	aenv.Descriptions = descs
	for _, n := range names {
		l, _ := adapters.ListerFor(n)
		stores = stores || slices.ContainsFunc(l.Stores(aenv), isDir)
		ss, err := l.ListSessions(aenv, project)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s sessions could not be listed: %v", n, err))
			continue
		}
		for _, s := range ss {
			seen[s.Tool+"\x00"+s.ID] = len(out)
			out = append(out, Candidate{NativeSession: s})
		}
		if project == "" { // "" when every file was read
			notes = append(notes, adapters.UnreadableNote(n, aenv, len(ss)))
		}
	}
	_ = descs.Flush() // a cache: a busy ledger costs the next list a re-read
	out = withLedgerSessions(out, seen, ledgerSessions(env, project, source))
	MarkNotYours(env.Now(), out)
	slices.SortStableFunc(out, func(a, b Candidate) int { // a planted session never outranks one of yours
		return cmp.Or(cmp.Compare(min(len(a.NotYours), 1), min(len(b.NotYours), 1)),
			b.LastActive.Compare(a.LastActive), cmp.Compare(a.Tool+a.ID, b.Tool+b.ID))
	})
	return out, stores || len(out) > 0, notes
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// ledgerSessions are the ledger's sessions of project ("" = all) and tool ("" = all), newest first, at most 500.
func ledgerSessions(env Env, project, tool string) []ledger.Session {
	if !publish.Exists(filepath.Join(env.Home, ledger.FileName)) {
		return nil
	}
	l, err := ledger.OpenBy(env.Home, time.Now().Add(2*time.Second))
	if err != nil {
		return nil
	}
	defer l.Close()
	ss, _ := l.Sessions(project, tool, 500)
	return ss
}

// withLedgerSessions marks the sessions the ledger also holds and appends those only it has (transcripts gone).
func withLedgerSessions(out []Candidate, seen map[string]int, ls []ledger.Session) []Candidate {
	for _, s := range ls {
		if i, ok := seen[s.Tool+"\x00"+s.NativeID]; ok {
			out[i].InLedger = true
		} else if s.Rows > 0 {
			out = append(out, Candidate{NativeSession: adapters.NativeSession{Tool: s.Tool, ID: s.NativeID, Path: s.Transcript, Project: s.Project,
				LastActive: s.LastActive, MessageCount: s.Rows, CountEstimated: true, Preview: cmp.Or(s.Title, "(transcript gone; kept in the ledger)")},
				InLedger: true, LedgerOnly: true})
		}
	}
	return out
}

// Planted sessions (issue 21): public repositories commit .aider.chat.history.md files, one dated 2099 would lead every
// later handoff, and an archive unpacked outside git ships them too (Aider's history, Crush's .crush/crush.db: any agent
// whose sessions live in the project). A session file in the project that git tracks, that was unpacked or copied there
// rather than written (notWritten), or that another user owns, or a session dated in the future, is listed (marked) but
// chosen only when named (--transcript; --session for all but a tracked one). Accepted false positives: the user's own
// history copied with its times (cp -a, rsync -a, a backup restored, a folder synced from another machine) or chmod-ed
// after its last write, until the agent writes to it again.
const (
	NotYoursTracked  = "its file is tracked by git"
	NotYoursFuture   = "dated in the future"
	NotYoursUnpacked = "its file was unpacked or copied here, not written by an agent"
	NotYoursOwner    = "its file belongs to another user"
)

// NotYoursWhy are the reasons in the order handoff names them.
var NotYoursWhy = []string{NotYoursTracked, NotYoursUnpacked, NotYoursOwner, NotYoursFuture}

// writeSlack: how far apart a written file's modified and changed times may be (coarse clocks of network and FAT
// file systems); an archive's times miss the moment it is unpacked by more.
const writeSlack = 2 * time.Second

// futureSlack: how far ahead of the clock a chosen session may be dated (clock steps, a file just written). Aider dates
// in local time without a zone: a history from a zone ahead looks future-dated, and is not yours.
const futureSlack = 10 * time.Minute

// MarkNotYours sets NotYours on the candidates never chosen unnamed; the git index is read once per repository.
func MarkNotYours(now time.Time, cs []Candidate) {
	repos := Tracker{}
	limit := now.Add(futureSlack)
	for i := range cs {
		c := &cs[i]
		if c.LastActive.After(limit) {
			c.NotYours = NotYoursFuture
		}
		if c.Project == "" || !adapters.InProject(c.Path, c.Project) { // InProject("", p) is false
			continue // the agent's own store, outside any repository
		}
		c.NotYours = cmp.Or(FileNotYours(repos, c.Path), c.NotYours)
	}
}

// FileNotYours says why a session file the user did not name is not the user's: git tracks it, or it was not written
// where it is (notWritten); "" when nothing says so.
func FileNotYours(repos Tracker, path string) string {
	if root := RepoRoot(filepath.Dir(path)); root != "" && repos.Tracked(root, path) {
		return NotYoursTracked
	}
	return notWritten(path)
}

// NotFound is a session, handoff or decision that matches nothing (exit 2).
type NotFound struct{ error }

func (n NotFound) Unwrap() error { return n.error }

// Forget removes a session (an id or a unique prefix) from the ledger, its handoff records marked forgotten, and the
// handoff files it wrote (current handoff.md, global copy, history); dryRun only says so. What it does goes to out,
// what it could not to errw.
func (s *Store) Forget(id string, dryRun bool, out, errw io.Writer) error {
	if s.l == nil {
		return NotFound{fmt.Errorf("no session %q: there is no ledger yet (%s)", id, s.Path)}
	}
	ss, err := s.l.FindSessions(id)
	if err != nil {
		return err
	}
	if len(ss) == 0 {
		return NotFound{fmt.Errorf("no session %q in the ledger (`carryover list --all` shows the sessions)", id)}
	}
	natives := map[string]bool{}
	for _, se := range ss {
		natives[se.NativeID] = true
	}
	if len(natives) > 1 {
		return fmt.Errorf("%q starts %d session ids (%s…); give more of it", id, len(natives), ss[0].NativeID)
	}
	f := forgetting{Store: s, dryRun: dryRun, out: out, errw: errw}
	for _, se := range ss {
		if err := f.session(se); err != nil {
			return err
		}
	}
	return nil
}

// forgetting is one `carryover forget`.
type forgetting struct {
	*Store
	dryRun    bool
	out, errw io.Writer
}

// session forgets one ledger session and the handoff files it wrote.
func (f forgetting) session(se ledger.Session) error {
	plan, err := f.l.ForgetPlan(se)
	if err != nil {
		return err
	}
	verb := "forgot"
	if f.dryRun {
		verb = "would forget"
	}
	fmt.Fprintf(f.out, "%s %s session %s in %s: %d rows, %d cursors; %d handoff records marked forgotten\n",
		verb, se.Tool, se.NativeID, se.Project, plan.Rows, plan.Cursors, plan.Handoffs)
	f.removeFiles(se, f.handoffIDs(se))
	if f.dryRun {
		return nil
	}
	if err := f.l.Forget(se); err != nil {
		return fmt.Errorf("%v (nothing of the session was removed; try again when no agent is running)", err)
	}
	// `list`'s cache of the session's description goes with it.
	if err := adapters.OpenDescriptionFile(f.env.Home).Forget(se.NativeID, se.Transcript); err != nil {
		fmt.Fprintf(f.errw, "carryover: could not drop the session from %s: %v\n", filepath.Join(f.env.Home, adapters.ListCacheName), err)
	}
	return nil
}

// removeFiles removes the handoff files of the session's handoffs (ids): the project's handoff.md and the global copy
// when they are one of them, and their history files.
func (f forgetting) removeFiles(se ledger.Session, ids []string) {
	if b, err := publish.ReadHandoffFile(se.Project); err == nil && slices.Contains(ids, publish.IDOf(publish.HeaderOf(string(b)))) {
		f.remove(publish.HandoffPath(se.Project), func() error { return publish.RemoveOwnFile(se.Project, "handoff.md") })
	}
	global := filepath.Join(f.env.Home, "handoff.md") // the global copy of the last handoff
	if b, err := os.ReadFile(global); err == nil && slices.Contains(ids, publish.IDOf(publish.HeaderOf(string(b)))) {
		f.remove(global, func() error { return os.Remove(global) })
	}
	held, _ := publish.HistoryIDs(se.Project)
	if ids = slices.DeleteFunc(ids, func(id string) bool { return !slices.Contains(held, id) }); len(ids) > 0 {
		where := filepath.Join(publish.Dir(se.Project), publish.HistoryDir)
		f.remove(fmt.Sprintf("%d handoff(s) from %s", len(ids), where), func() error { return publish.RemoveHistory(se.Project, ids) })
	}
}

// handoffIDs are the ids of the handoffs the session published.
func (f forgetting) handoffIDs(se ledger.Session) []string {
	recs, _ := lifecycle.Records(f.l, se.Project, -1)
	var ids []string
	for _, r := range recs {
		if r.SessionID == se.ID {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// remove deletes what (or says it would), saying why it could not.
func (f forgetting) remove(what string, del func() error) {
	if f.dryRun {
		fmt.Fprintf(f.out, "would delete %s\n", what)
	} else if err := del(); err == nil {
		fmt.Fprintf(f.out, "deleted %s\n", what)
	} else if !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(f.errw, "carryover: could not delete %s: %v\n", what, err)
	}
}
