// Package distill turns ledger rows into a handoff: what the task was, which files changed, what failed, what was
// decided and what to do next. It is deterministic: no model, no network, no clock but the one passed in.
//
// This file: the state's refresh from the ledger (Refresh), its blob (Marshal, LoadState) and the repository facts.
// state.go: the State, the fold (State.Add) and the handoff read out of it, with its rules — over what people wrote
// (goal, decisions, instructions, references) and over the work (failures, shell-written files, completion, next
// action) — the shared text helpers and the phrase tables of lang/. Two files, not five: a Stop runs code in every
// file of the fold, and the refresh calls into the fold but the fold never back into the refresh (issue 23's
// footprint and call chains).
package distill

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill/git"
	"github.com/carryover/carryover/publish/redact"
)

// Distillations counts Refresh and Distill calls: tests check that one hook
// event or manual handoff distils once (nothing re-parsed from markdown).
var Distillations atomic.Int64

// MaxFold is the most new rows Refresh folds into a stored state; past it
// (a cold ingest) the state is rebuilt from the project's recent rows.
const MaxFold = 5000

// Refresh folds the rows added since the project's stored state was saved into it, or rebuilds it from recent rows
// when none, stale or too far behind, and saves it. notes are for the log.
func Refresh(l *ledger.Ledger, project string, now time.Time) (st *State, notes []string, err error) {
	Distillations.Add(1)
	sessions, err := l.ProjectSessions(project)
	if err != nil {
		return nil, nil, err
	}
	raw, seqs, version, ok := l.LoadState(project)
	st, fresh := LoadState(raw)
	if !ok || !fresh || pendingRows(sessions, seqs) > MaxFold {
		st, seqs, err = rebuild(l, project, sessions)
	} else {
		err = foldNew(l, st, sessions, seqs)
	}
	if err != nil {
		return nil, nil, err
	}
	b := st.Marshal()
	if !ok || !fresh {
		version = "" // rebuilt: replace whatever is stored
		if ok {
			_ = l.DropState(project)
		}
	}
	if saved, err := l.SaveState(project, b, seqs, version, now); err != nil {
		notes = append(notes, "save distill state: "+err.Error())
	} else if !saved {
		notes = append(notes, "distill state was saved by a concurrent snapshot; kept theirs")
	}
	return st, notes, nil
}

func pendingRows(sessions []ledger.ProjectSession, seqs ledger.Seqs) int {
	pending := 0
	for _, s := range sessions {
		pending += int(max(0, s.LastSeq-seqs[s.ID]))
	}
	return pending
}

func rebuild(l *ledger.Ledger, project string, sessions []ledger.ProjectSession) (*State, ledger.Seqs, error) {
	rows, err := l.RecentRows(project)
	if err != nil {
		return nil, nil, err
	}
	clears := clearTimes(l, project)
	st := NewState()
	for i := range rows {
		for len(clears) > 0 && rows[i].Time.After(clears[0]) { // a `carryover clear` starts a new task here too
			st.ClearTask()
			clears = clears[1:]
		}
		st.Add(&rows[i])
	}
	seqs := ledger.Seqs{}
	for _, s := range sessions {
		seqs[s.ID] = s.LastSeq
	}
	return st, seqs, nil
}

func foldNew(l *ledger.Ledger, st *State, sessions []ledger.ProjectSession, seqs ledger.Seqs) error {
	for _, s := range sessions {
		if s.LastSeq <= seqs[s.ID] {
			continue
		}
		rows, err := l.RowsAfter(s, seqs[s.ID], MaxFold)
		if err != nil {
			return err
		}
		for i := range rows {
			st.Add(&rows[i])
			seqs[s.ID] = rows[i].Seq
		}
	}
	return nil
}

// clearTimes are the times of the project's `carryover clear`s (records ended EndCleared) among its newest 200
// records, oldest first. Rebuilds are rare (a new StateVersion, a cold ingest) and fold recent rows only, so this one
// query costs the common hook path nothing.
func clearTimes(l *ledger.Ledger, project string) []time.Time {
	ats, _ := ledger.All(l, ledger.ScanValue[int64],
		`SELECT ended_at FROM (SELECT ended, ended_at FROM handoff_log WHERE project = ? ORDER BY written DESC, id DESC LIMIT 200)
		WHERE ended = ? AND ended_at != 0`, project, ledger.EndCleared)
	var out []time.Time
	for _, at := range ats {
		out = append(out, time.UnixMilli(at))
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}

// ClearTask is `carryover clear` on the stored state: refreshed, then its
// task forgotten; a later rebuild honours it too (clearTimes).
func ClearTask(l *ledger.Ledger, project string, now time.Time) error {
	if _, _, err := Refresh(l, project, now); err != nil {
		return err
	}
	raw, seqs, version, ok := l.LoadState(project)
	st, fresh := LoadState(raw)
	if !ok || !fresh {
		return nil
	}
	st.ClearTask()
	_, err := l.SaveState(project, st.Marshal(), seqs, version, now)
	return err
}

// ProjectFold is the handoff across the project's sessions and agents (the stored fold, refreshed as the hook would)
// and the newest 6 sessions it drew from, oldest first. A trivial last session ("what should we work on now?") cannot
// hide the task: it is one follow-up among the fold's prompts.
func ProjectFold(l *ledger.Ledger, project string, now time.Time, o Options) (Handoff, []string, error) {
	st, _, err := Refresh(l, project, now)
	if err != nil {
		return Handoff{}, nil, err
	}
	sessions, err := l.ProjectSessions(project)
	if err != nil {
		return Handoff{}, nil, err
	}
	var from []string
	for _, s := range sessions {
		if s.LastSeq <= 0 {
			continue
		}
		label := fmt.Sprintf("%s session #%d", s.Tool, s.ID)
		if ls, err := l.SessionByID(s.ID); err == nil {
			label = fmt.Sprintf("%s session %s", ls.Tool, ls.NativeID[:min(len(ls.NativeID), 12)])
		}
		from = append(from, label)
	}
	return st.Handoff(o), last(from, 6), nil
}

// The repository reader is distill/git (go-git's decoders over files
// safefile opened; never `git`); these names keep its callers' vocabulary.
type (
	Repo        = git.Repo
	CommitCount = git.CommitCount
)

// OpenRepo reads root's .git directory (nil when root is in no repository).
func OpenRepo(root string) *Repo { return git.Open(root) }

// OpenRepoAsync starts OpenRepo on another goroutine (the hook reads .git on the other core while it tails the
// transcript); the func waits for it once. A panic in the reader yields nil, as no repository does.
func OpenRepoAsync(root string) func() *Repo {
	ch := make(chan *Repo, 1)
	go func() {
		defer func() {
			if recover() != nil {
				ch <- nil
			}
		}()
		ch <- OpenRepo(root)
	}()
	return sync.OnceValue(func() *Repo { return <-ch })
}

func RepoRoot(dir string) string { return git.Root(dir) }

// RepoFacts reads branch, short HEAD and the state of files (relative to
// r's root; nil r: no repository), setting each file's Git field.
func RepoFacts(r *Repo, files []File) (Git, []File) {
	if r == nil {
		return Git{}, files
	}
	g := Git{Repo: true, Branch: GitBranch(r.Branch()), Head: r.Head()}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Path
	}
	out := make([]File, len(files))
	copy(out, files)
	count := map[string]*int{git.Clean: &g.Clean, git.Modified: &g.Modified, git.Untracked: &g.Untracked, git.Deleted: &g.Deleted}
	for i, st := range r.States(paths) {
		out[i].Git = st
		if n := count[st]; n != nil {
			*n++
		}
	}
	return g, out
}

// ProjectRoot is a session's project: the agent's own project dir, else the
// git root of cwd, else cwd; symlinks resolved, so a project has one name.
func ProjectRoot(explicit, cwd string) string {
	p := explicit
	if p == "" {
		p = RepoRoot(cwd)
		if p == "" {
			p = cwd
		}
	}
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return p
}

// GitString is the one door by which a string from a repository's .git (a branch, a commit subject, a remote's name
// or URL) enters carryover's state. A cloned repository chose it: it becomes one line without control characters, and
// a credential in it (a token pushed as a branch name, a URL with a password) is redacted here, once, whatever read
// it (distill/git imports nothing but safefile).
func GitString(s string) string {
	if s == "" {
		return ""
	}
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
	return redact.String(s)
}

// GitBranch is GitString for a branch name: git refuses an ASCII space in one but not U+2002 or U+3000, with which a
// repository's branch reads as a sentence in the handoff's git line, outside its quoted block; a run of Unicode spaces
// shows as '_'.
func GitBranch(s string) string {
	return GitString(strings.Join(strings.FieldsFunc(s, unicode.IsSpace), "_"))
}

// The stored State is a compact binary blob (JSON cost a millisecond of each
// snapshot): "CS", the uvarint StateVersion, then State's fields in
// declaration order (codec.state, one walk for both directions):
//
//	int, int64     zig-zag varint
//	string         uvarint length, then the bytes
//	bool           one byte, 0 or 1
//	time.Time      uvarint 0 for the zero time; else uvarint 1+nanoseconds,
//	               then the varint Unix seconds (times are UTC, see Add)
//	*int           bool (present), then the int
//	slice          uvarint 0 for nil, else 1+len, then the elements
//	map            uvarint len, then key and value per entry, keys ascending
//
// The same State always gives the same bytes, and the decoder accepts only
// that canonical form (minimal varints, ascending unique keys, 0/1 bools, no
// trailing bytes), so what LoadState accepts Marshal writes back byte for
// byte. A layout change bumps StateVersion.
const stateMagic = "CS"

// Marshal encodes the state; a first, counting pass sizes the blob exactly.
func (st *State) Marshal() []byte {
	size := codec{sizing: true}
	size.header(st)
	size.state(st)
	c := codec{b: make([]byte, size.n)}
	c.header(st)
	c.state(st)
	return c.b
}

func (c *codec) header(st *State) {
	c.raw(stateMagic)
	c.putUvarint(uint64(st.Version))
}

// LoadState decodes a stored state; ok is false when it is missing, broken,
// not canonical or of another version (JSON included). It never panics and
// allocates no more than len(b) allows for.
func LoadState(b []byte) (*State, bool) {
	if len(b) < len(stateMagic) || string(b[:len(stateMagic)]) != stateMagic {
		return nil, false
	}
	c := codec{decoding: true, b: b, n: len(stateMagic)}
	if c.uvarint() != StateVersion || c.err != nil {
		return nil, false
	}
	// Decoded strings slice one string copy of the blob rather than
	// allocating each (keeping it alive: no loss, it is loaded once).
	c.s = string(b)
	st := &State{Version: StateVersion}
	c.state(st)
	if c.err == nil && c.n != len(b) {
		c.fail("trailing bytes")
	}
	if c.err != nil || len(st.FailureKeys) != len(st.Failures) { // Add indexes one by the other
		return nil, false
	}
	return st, true
}

// state walks State's fields in order; the codeList/codeMap sizes are the
// elements' minimum encoded bytes.
func (c *codec) state(st *State) {
	c.str(&st.Tool)
	c.varint(&st.SessionID)
	c.time(&st.LastAt)
	c.int(&st.Rows)
	c.int(&st.Prompts)
	c.str(&st.Task)
	c.time(&st.TaskAt)
	c.str(&st.Fallback)
	c.time(&st.FallbackAt)
	c.varint(&st.Tokens.Used)
	c.varint(&st.Tokens.Max)
	c.varint(&st.Seq)
	codeMap(c, &st.Calls, 3, (*codec).call)
	codeList(c, &st.CallOrder, 1, (*codec).str)
	codeMap(c, &st.FailedCalls, 1, (*codec).bool)
	codeList(c, &st.Edits, 9, (*codec).edit)
	codeList(c, &st.TestFails, 1, (*codec).varint)
	codeList(c, &st.Failures, 13, (*codec).failure)
	codeList(c, &st.FailureKeys, 1, (*codec).str)
	codeList(c, &st.Done, 2, (*codec).done)
	codeList(c, &st.Decided, 1, (*codec).str)
	codeList(c, &st.Seen, 1, (*codec).str)
	codeList(c, &st.TurnTexts, 1, (*codec).str)
	c.str(&st.LastText)
	c.bool(&st.GoalWeak)
	c.str(&st.Latest)
	c.time(&st.LatestAt)
	codeList(c, &st.SetAside, 1, (*codec).str)
	c.varint(&st.PromptSession)
	c.bool(&st.AfterBreak)
	c.str(&st.Ended)
	c.str(&st.Queued)
	c.bool(&st.Answered)
	codeList(c, &st.Plan, 2, (*codec).plan)
	codeList(c, &st.Refs, 1, (*codec).str)
	codeList(c, &st.Actions, 1, (*codec).str)
	c.str(&st.CauseKey)
	c.str(&st.LastTest)
	codeList(c, &st.Instructions, 3, (*codec).note)
	codeList(c, &st.Refused, 3, (*codec).note)
	c.note(&st.Interrupted)
	c.ref(&st.TaskRef)
	c.ref(&st.LatestRef)
	c.ref(&st.LastTextRef)
	c.varint(&st.LastTextSeq)
	c.varint(&st.LastPassSeq)
	c.varint(&st.AskSeq)
	c.varint(&st.LastCallSeq)
	c.varint(&st.PlanSession)
	c.str(&st.PendingCall)
	c.varint(&st.StopSeq)
	c.ref(&st.RowRef)
	codeList(c, &st.TurnRefs, 2, (*codec).ref)
	codeList(c, &st.Sources, 3, (*codec).note)
	c.note(&st.Accepted)
	codeList(c, &st.Background, 1, (*codec).str)
	codeList(c, &st.Shells, 1, (*codec).str)
}

func (c *codec) note(x *Note) {
	c.str(&x.Text)
	c.time(&x.At)
	codeList(c, &x.Refs, 2, (*codec).ref)
}

func (c *codec) ref(x *Ref) {
	c.varint(&x.Session)
	c.varint(&x.Seq)
}

func (c *codec) edit(x *Edit) {
	c.str(&x.Path)
	c.str(&x.Call)
	c.time(&x.At)
	c.varint(&x.Seq)
	c.bool(&x.Created)
	c.bool(&x.Deleted)
	codeList(c, &x.Todos, 1, (*codec).str)
	c.ref(&x.Ref)
}

func (c *codec) failure(x *Failure) {
	c.str(&x.What)
	c.str(&x.Error)
	has := x.ExitCode != nil
	c.bool(&has)
	if has {
		if x.ExitCode == nil {
			x.ExitCode = new(int)
		}
		c.int(x.ExitCode)
	}
	c.int(&x.Count)
	c.bool(&x.Resolved)
	c.time(&x.At)
	codeList(c, &x.Errors, 1, (*codec).str)
	c.str(&x.Cause)
	c.varint(&x.Seq)
	codeList(c, &x.Refs, 2, (*codec).ref)
	c.bool(&x.Superseded)
	c.bool(&x.Declined)
	c.int(&x.Tests)
}

func (c *codec) done(x *Done) {
	c.str(&x.Text)
	c.str(&x.Call)
}

func (c *codec) call(x *Call) {
	c.str(&x.ToolName)
	c.str(&x.Command)
	c.str(&x.FilePath)
}

func (c *codec) plan(x *PlanItem) {
	c.str(&x.Text)
	c.bool(&x.Done)
}

// codec encodes into b, which it does not grow (n: bytes written; sizing:
// only count them), or with decoding set decodes from b (n: bytes read). A
// decoder keeps its first error; every read after it gives the zero value,
// so callers check err once at the end.
type codec struct {
	b        []byte
	n        int
	sizing   bool
	decoding bool
	s        string // decoding: b as a string, which decoded strings share
	err      error
}

func (c *codec) putUvarint(v uint64) {
	if c.sizing {
		c.n += (bits.Len64(v|1) + 6) / 7
		return
	}
	c.n += binary.PutUvarint(c.b[c.n:], v)
}

func (c *codec) raw(s string) {
	if !c.sizing {
		copy(c.b[c.n:], s)
	}
	c.n += len(s)
}

func (c *codec) fail(why string) {
	if c.err == nil {
		c.err = errors.New("distill state: " + why)
	}
}

func (c *codec) uvarint() uint64 {
	if c.err != nil {
		return 0
	}
	if c.n < len(c.b) && c.b[c.n] < 0x80 { // one byte: most counts and lengths
		c.n++
		return uint64(c.b[c.n-1])
	}
	v, n := binary.Uvarint(c.b[c.n:])
	if n <= 0 {
		c.fail("bad varint")
		return 0
	}
	if c.b[c.n+n-1] == 0 { // a trailing zero group: not the shortest form
		c.fail("overlong varint")
		return 0
	}
	c.n += n
	return v
}

// varint codes v zig-zag, as binary.AppendVarint.
func (c *codec) varint(p *int64) {
	if !c.decoding {
		c.putUvarint(uint64(*p<<1) ^ uint64(*p>>63))
		return
	}
	u := c.uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	*p = v
}

func (c *codec) int(p *int) {
	v := int64(*p)
	c.varint(&v)
	if !c.decoding {
		return
	}
	if int64(int(v)) != v {
		c.fail("int out of range")
		v = 0
	}
	*p = int(v)
}

func (c *codec) bool(p *bool) {
	if !c.decoding {
		c.putUvarint(uint64(btoi(*p)))
		return
	}
	v := c.uvarint()
	if v > 1 {
		c.fail("bad bool")
	}
	*p = v == 1
}

func (c *codec) str(p *string) {
	if !c.decoding {
		c.putUvarint(uint64(len(*p)))
		c.raw(*p)
		return
	}
	n := c.fits(c.uvarint(), 1) // 0 after an error: ""
	*p = c.s[c.n : c.n+n]
	c.n += n
}

func (c *codec) time(p *time.Time) {
	if !c.decoding {
		if p.IsZero() {
			c.putUvarint(0)
			return
		}
		c.putUvarint(uint64(p.Nanosecond()) + 1)
		sec := p.Unix()
		c.varint(&sec)
		return
	}
	*p = time.Time{}
	h := c.uvarint()
	if h == 0 {
		return
	}
	if h > 1e9 {
		c.fail("bad nanoseconds")
		return
	}
	var sec int64
	c.varint(&sec)
	if c.err != nil {
		return
	}
	*p = time.Unix(sec, int64(h-1)).UTC()
	if p.IsZero() { // the zero time has its own, shorter encoding
		c.fail("overlong zero time")
	}
}

// fits checks a length just read of elements of at least minSize bytes: one
// the remaining bytes cannot hold is an error, so a broken blob never makes
// the decoder allocate more than its size implies.
func (c *codec) fits(n uint64, minSize int) int {
	if c.err == nil && n > uint64((len(c.b)-c.n)/minSize) {
		c.fail("length past the end")
	}
	if c.err != nil {
		return 0
	}
	return int(n)
}

func codeList[T any](c *codec, p *[]T, minSize int, each func(*codec, *T)) {
	if !c.decoding {
		if *p == nil {
			c.putUvarint(0)
			return
		}
		c.putUvarint(uint64(len(*p)) + 1)
		for i := range *p {
			each(c, &(*p)[i])
		}
		return
	}
	*p = nil
	h := c.uvarint()
	if h == 0 {
		return
	}
	n := c.fits(h-1, minSize)
	if c.err != nil {
		return
	}
	s := make([]T, n)
	for i := range s {
		if c.err != nil {
			break
		}
		each(c, &s[i])
	}
	*p = s
}

// codeMap codes a map by ascending key (keys take a byte at least); a
// decoded map is never nil.
func codeMap[V any](c *codec, p *map[string]V, minSize int, each func(*codec, *V)) {
	v := new(V)   // one per map: each may keep its argument, so it is on the heap
	if c.sizing { // the order does not change the size
		c.putUvarint(uint64(len(*p)))
		for k, x := range *p {
			*v = x
			c.str(&k)
			each(c, v)
		}
		return
	}
	if !c.decoding {
		c.putUvarint(uint64(len(*p)))
		keys := make([]string, 0, len(*p))
		for k := range *p {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			*v = (*p)[k]
			c.str(&k)
			each(c, v)
		}
		return
	}
	n := c.fits(c.uvarint(), 1+minSize)
	m := make(map[string]V, n)
	var prev, k string
	for i := 0; i < n && c.err == nil; i++ {
		c.str(&k)
		if i > 0 && k <= prev {
			c.fail("map keys out of order")
		}
		*v = *new(V)
		each(c, v)
		m[k] = *v
		prev = k
	}
	*p = m
}
