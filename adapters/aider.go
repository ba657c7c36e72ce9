package adapters

import (
	"bufio"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Aider is the Aider adapter. Aider has no
// hooks: `carryover handoff --source aider` reads the project's
// .aider.chat.history.md (ReadStore), one session per
// "# aider chat started at …" header.
var Aider Adapter = aider{}

// aiderAgent is what carryover knows about the agent besides its files.
var aiderAgent = &Agent{
	Name:     "aider",
	Display:  "Aider",
	Adapter:  Aider,
	Lister:   aiderLister{},
	Envelope: EnvelopeNone,
	Format: Format{Newest: "0.86.3", MajorOnly: true, Version: `(?ms)\A.*^> Aider v(\d+\.\d+\.\d+)`, Shapes: []string{
		"Aider .aider.chat.history.md, 0.4x–0.86 (# aider chat started at …, #### prompts, > tool output)",
	}},
	Sniff:            func(b []byte) bool { return containsAll(b, `# aider chat started at`) },
	ReadFlag:         "--read",
	SnapshotAfterRun: true,
	SurveyFromEnd:    true,
	DocumentStore:    func(string) bool { return true }, // a markdown history: opened only
}

var (
	_ StoreReader = aider{}
	_ Lister      = aiderLister{}
)

type aider struct{}

func (aider) Name() string { return "aider" }

// ErrAiderNoHooks is what ParseHook returns: nothing calls carryover from
// inside aider.
var ErrAiderNoHooks = errors.New("aider has no hooks; run `carryover handoff --source aider` in the project instead")

func (aider) ParseHook(string, []byte, Env) (Hook, error) {
	return Hook{}, ErrAiderNoHooks
}

// AiderSession is one "# aider chat started at" section of the history.
type AiderSession struct {
	ID          string    // stable id: start time + history file hash
	Start       time.Time // local time of the machine that ran aider
	FirstPrompt string    // first real request, "" when none
	Prompts     int
	Rows        int    // rows it yields: 0 for an aborted start or only /add, /drop
	Path        string // the history file
}

// aiderMaxRead is how much of the end of a history file is read: the file
// spans every session ever run in the repository.
const aiderMaxRead = 16 << 20

// The regexps are compiled at first use, not at process start: aider has no
// hooks, so the hook process never needs them.
var (
	aiderHeaderRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$`)
	})
	aiderCommitRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^Commit ([0-9a-f]{7,40}) (.+)$`) })
	aiderTokensRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^Tokens: ([\d.,]+)(k?) sent(?:, ([\d.,]+)(k?) cache write)?(?:, ([\d.,]+)(k?) cache hit)?, ([\d.,]+)(k?) received`)
	})
	// A model API error aider printed (base_coder.py's litellm handler): the
	// exception as "litellm.<Class>: <provider message>", or the provider
	// SDK's own class when aider let it through.
	aiderAPIErrorRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:litellm|openai|anthropic|google\.\w+)\.(?:\w+\.)?(\w*(?:Error|Exception))\b`)
	})
	aiderAddedRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^Added \d+ lines? of output to the chat\.`) })
	aiderShellRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile("(?s)```(?:bash|sh|shell|zsh|cmd|powershell)\n(.*?)\n```")
	})
	aiderNoMatchRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^## SearchReplaceNoExactMatch: .*? in (.+)$`) })
	aiderThinkRE   = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?s)<(thinking-content-[0-9a-f]+|think|thinking|reasoning)>.*?</(thinking-content-[0-9a-f]+|think|thinking|reasoning)>`)
	})
)

// Lines of aider's tool output that name a file or a command: the line is
// the prefix followed by the argument.
const (
	aiderApplied = "Applied edit to "
	aiderCreate  = "Creating empty file "
	aiderRunning = "Running "
)

// aiderIs reports whether l is prefix followed by a non-empty rest without a
// newline: exactly what `^prefix(.+)$` matches ('.' stops at \n, '$' is the
// end of the text), the group being l[len(prefix):].
func aiderIs(l, prefix string) bool {
	return len(l) > len(prefix) && strings.HasPrefix(l, prefix) && strings.IndexByte(l[len(prefix):], '\n') < 0
}

// aiderConfirm is the "(Y)es/(N)o" of a confirm prompt aider answered for
// the user.
const aiderConfirm = "(Y)es/(N)o"

// aiderHistoryPath finds the chat history file: AIDER_CHAT_HISTORY_FILE,
// chat-history-file in .aider.conf.yml (project, then cwd), else the
// default name in the project, then in cwd (--no-git). A history the
// project names or holds is read only inside the project (aiderWithin): a
// planted .aider.conf.yml pointing at /home/u/other/.aider.chat.history.md
// or ../.., or a history symlinked out, is not read ("" when nothing is left).
func aiderHistoryPath(h Hook, env Env) string {
	dirs := aiderDirs(h)
	if len(dirs) == 0 {
		return ""
	}
	rel := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dirs[0], p)
	}
	if v := envOr(env, "AIDER_CHAT_HISTORY_FILE", ""); v != "" {
		return rel(v) // the user's own environment
	}
	for i := len(dirs) - 1; i >= 0; i-- { // later files win
		if v := aiderConfValue(filepath.Join(dirs[i], ".aider.conf.yml"), "chat-history-file"); v != "" && aiderWithin(dirs[0], rel(v)) {
			return rel(v)
		}
	}
	for _, d := range dirs {
		p := filepath.Join(d, ".aider.chat.history.md")
		if fileExistsRegular(p) && aiderWithin(dirs[0], p) {
			return p
		}
	}
	if p := filepath.Join(dirs[0], ".aider.chat.history.md"); aiderWithin(dirs[0], p) {
		return p
	}
	return ""
}

// aiderDirs is the project and, when it differs, the cwd.
func aiderDirs(h Hook) []string {
	var dirs []string
	for _, d := range []string{h.Project, h.Cwd} {
		if d != "" && (len(dirs) == 0 || dirs[0] != d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// aiderWithin reports whether p, symlinks resolved, is inside dir (a file
// not there yet is judged by its directory).
func aiderWithin(dir, p string) bool {
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		if _, lerr := os.Lstat(p); lerr == nil {
			return false // a dangling or looping link
		}
		pd, err := filepath.EvalSymlinks(filepath.Dir(p))
		if err != nil {
			return false
		}
		r = filepath.Join(pd, filepath.Base(p))
	}
	return InProject(r, dir)
}

// aiderConfValue reads a top-level scalar "key: value" from a YAML file
// (no YAML library: only the one scalar is needed).
func aiderConfValue(path, key string) string {
	f, err := openRegular(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, key+":")
		if !ok {
			continue
		}
		if i := strings.Index(rest, " #"); i >= 0 {
			rest = rest[:i]
		}
		return strings.Trim(strings.TrimSpace(rest), `"'`)
	}
	return ""
}

// readAiderHistory returns the last aiderMaxRead bytes of the history file
// as valid UTF-8, starting at a line boundary.
func readAiderHistory(path string) (string, error) {
	f, err := openRegular(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	off := int64(0)
	if fi.Size() > aiderMaxRead {
		off = fi.Size() - aiderMaxRead
	}
	b := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	if off > 0 {
		if i := strings.IndexByte(string(b), '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return strings.ToValidUTF8(string(b), ""), nil
}

// aiderChunk is one session's lines.
type aiderChunk struct {
	id    string
	start time.Time
	lines []string
}

// splitAiderSessions cuts the history into sessions. Ids are the start
// time plus a hash of the file path (so two projects never share one),
// with "#n" for a repeated start second in the same file.
func splitAiderSessions(text, path string) []aiderChunk {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	sum := sha256.Sum256([]byte(path))
	tag := hex.EncodeToString(sum[:3])
	var out []aiderChunk
	seen := map[string]int{}
	if !strings.Contains(text, "# aider chat started at ") && strings.Contains(text, "#### ") {
		// A history without any start header (hand-trimmed, or written by
		// another tool in aider's format): one session.
		out = append(out, aiderChunk{id: "history-" + tag})
	}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if m := aiderHeaderRE().FindStringSubmatch(line); m != nil {
			t, _ := time.ParseInLocation("2006-01-02 15:04:05", m[1], time.Local)
			id := t.Format("20060102T150405") + "-" + tag
			seen[id]++
			if n := seen[id]; n > 1 {
				id += "#" + strconv.Itoa(n)
			}
			out = append(out, aiderChunk{id: id, start: t})
			continue
		}
		if len(out) > 0 {
			out[len(out)-1].lines = append(out[len(out)-1].lines, line)
		}
	}
	return out
}

func aiderSessionsAt(path string) ([]AiderSession, error) {
	text, err := readAiderHistory(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no aider chat history at %s (run aider in the project first): %w", path, err)
		}
		return nil, fmt.Errorf("read aider chat history: %w", err)
	}
	var out []AiderSession
	for _, c := range splitAiderSessions(text, path) {
		s := AiderSession{ID: c.id, Start: c.start, Path: path}
		rows := parseAiderSession(c)
		s.Rows = len(rows)
		for _, r := range rows {
			if r.Kind == KindPrompt {
				if s.Prompts == 0 {
					s.FirstPrompt = firstLine(r.Text)
				}
				s.Prompts++
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// ReadStore returns the rows of the session h.SessionID names (its full id
// or its start time as "2006-01-02 15:04:05"), or of the last session.
func (aider) ReadStore(h Hook, env Env) ([]Row, error) {
	path := h.TranscriptPath // handoff --transcript FILE, or the lister's file
	if path == "" {
		path = aiderHistoryPath(h, env)
	}
	if path == "" {
		return nil, errors.New("aider: no chat history inside the project (a history outside it is read only when named: --transcript FILE)")
	}
	text, err := readAiderHistory(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no aider chat history at %s (run aider in the project first): %w", path, err)
		}
		return nil, fmt.Errorf("read aider chat history: %w", err)
	}
	chunks := splitAiderSessions(text, path)
	if len(chunks) == 0 {
		return nil, nil
	}
	// Without an id: the newest session that holds something (an aborted
	// start or a session of only /add and /drop yields no rows).
	c := chunks[len(chunks)-1]
	for i := len(chunks) - 1; i >= 0; i-- {
		if len(parseAiderSession(chunks[i])) > 0 {
			c = chunks[i]
			break
		}
	}
	if h.SessionID != "" {
		found := false
		for _, x := range chunks {
			if x.id == h.SessionID || x.start.Format("2006-01-02 15:04:05") == h.SessionID || strings.HasPrefix(x.id, h.SessionID+"-") {
				c, found = x, true
			}
		}
		if !found {
			return nil, fmt.Errorf("aider session %q is not in the last %d MB of %s (see `carryover list`)", h.SessionID, aiderMaxRead>>20, path)
		}
	}
	return parseAiderSession(c), nil
}

// aiderBlock is a run of lines of one kind.
type aiderBlock struct {
	kind  byte // 'u' user, 'a' assistant, 't' tool
	line  int  // index of the first line within the session
	lines []string
}

// aiderBlocks classifies a session's lines the way aider's own reader does
// (#### user, > tool, other assistant), with two additions: a multi-line
// tool output is prefixed with "> " only on its first line and ends at the
// line carrying the "  " hard break, and blank lines separate blocks.
func aiderBlocks(lines []string, loose bool) []aiderBlock {
	var out aiderBlockList
	cont := false // inside a multi-line tool output
	for i, raw := range lines {
		isUser := strings.HasPrefix(raw, "#### ") || raw == "####"
		if cont && !isUser {
			// the hard break after the whole output ends it
			cont = !strings.HasSuffix(raw, "  ") || strings.TrimSpace(raw) == ""
			out.add('t', i, strings.TrimRight(raw, " "))
			continue
		}
		cont = false
		switch {
		case isUser:
			out.add('u', i, strings.TrimRight(strings.TrimPrefix(strings.TrimPrefix(raw, "####"), " "), " "))
		case strings.HasPrefix(raw, "> ") || raw == ">":
			body := strings.TrimPrefix(strings.TrimPrefix(raw, ">"), " ")
			// the first line of a multi-line tool output has no hard break
			cont = !loose && !strings.HasSuffix(raw, "  ") && strings.TrimSpace(body) != ""
			out.add('t', i, strings.TrimRight(body, " "))
		case strings.TrimSpace(raw) == "":
			out.blank(i)
		default:
			out.add('a', i, raw)
		}
	}
	return slices.DeleteFunc(out, func(b aiderBlock) bool { return b.kind == 0 }) // drop separators
}

// aiderBlockList is the blocks read so far; a block of kind 0 separates
// two blocks of one kind.
type aiderBlockList []aiderBlock

// add appends line s (index i) to the last block if it is of kind, else
// starts a block.
func (out *aiderBlockList) add(kind byte, i int, s string) {
	if n := len(*out); n > 0 && (*out)[n-1].kind == kind {
		(*out)[n-1].lines = append((*out)[n-1].lines, s)
		return
	}
	*out = append(*out, aiderBlock{kind: kind, line: i, lines: []string{s}})
}

// blank is a blank line at i: part of an assistant's reply, the end of a
// user or tool block.
func (out *aiderBlockList) blank(i int) {
	n := len(*out)
	switch {
	case n == 0 || (*out)[n-1].kind == 0:
	case (*out)[n-1].kind == 'a':
		(*out)[n-1].lines = append((*out)[n-1].lines, "")
	default:
		*out = append(*out, aiderBlock{line: i})
	}
}

// parseAiderSession turns one session into rows. Keys are "L<line>" (the
// line's index below the session header: the file is append-only).
func parseAiderSession(c aiderChunk) []Row {
	if rows := parseAiderBlocks(c, aiderBlocks(c.lines, false)); len(rows) > 0 {
		return rows
	}
	// Nothing readable: a history written without aider's "  " hard
	// breaks turns everything after a "> " line into tool output. Read it
	// again with every "> " line on its own, for whatever it holds.
	return parseAiderBlocks(c, aiderBlocks(c.lines, true))
}

func parseAiderBlocks(c aiderChunk, blocks []aiderBlock) []Row {
	p := aiderParse{base: Row{Time: c.start}, lastEdits: map[string]string{}}
	for _, b := range blocks {
		switch b.kind {
		case 'u':
			p.flush()
			p.user(b)
		case 'a':
			p.flush()
			p.assistant(b)
		case 't':
			for j, l := range b.lines {
				p.toolLine(l, b.line+j, b.lines[j+1:])
			}
		}
	}
	p.flush()
	return p.rows
}

// aiderParse holds what a session's later lines refer back to.
type aiderParse struct {
	base      Row
	rows      []Row
	lastEdits map[string]string // path -> new text of the last reply's edit blocks
	pend      []aiderPendingErr // failed edits a later applied edit makes moot
	openCmd   *Row              // the /run, /test or Running call awaiting its output
	cmdOut    []string
	cmdTest   bool
	lastShell string // the shell commands the last reply proposed (its ```bash blocks), for a declined confirm
}

type aiderPendingErr struct {
	row  int
	path string
}

// row is a row keyed "L<line>".
func (p *aiderParse) row(line int, role string, kind Kind) Row {
	r := p.base
	r.Key, r.Role, r.Kind = "L"+strconv.Itoa(line), role, kind
	return r
}

// call is a tool call row that is its own call id.
func (p *aiderParse) call(line int, role, tool string) Row {
	r := p.row(line, role, KindToolCall)
	r.ToolName, r.CallID = tool, r.Key
	return r
}

func (p *aiderParse) add(r Row) { p.rows = append(p.rows, r) }

// flush ends the open command with a result row of its output.
func (p *aiderParse) flush() {
	if p.openCmd == nil {
		return
	}
	r := p.base
	r.Key, r.Role, r.CallID, r.ToolName = p.openCmd.Key+"#result", "tool", p.openCmd.CallID, p.openCmd.ToolName
	r.Kind = KindToolResult
	if p.cmdTest && aiderOutputAdded(p.cmdOut) {
		r.Kind = KindError // /test adds its output to the chat only on a non-zero exit
	}
	r.Text = clip(strings.TrimSpace(strings.Join(p.cmdOut, "\n")), maxResult)
	p.add(r)
	p.openCmd, p.cmdOut, p.cmdTest = nil, nil, false
}

func (p *aiderParse) user(b aiderBlock) {
	text := strings.TrimSpace(strings.Join(b.lines, "\n"))
	if text == "" || strings.Contains(text, aiderConfirm) {
		return // empty input, or a confirm answered for the user
	}
	if strings.HasPrefix(text, "/") || strings.HasPrefix(text, "!") {
		var ok bool
		if text, ok = p.slash(text, b.line); !ok {
			return
		}
	}
	r := p.row(b.line, "user", KindPrompt)
	if IsCarryoverText(text) {
		r.Kind, r.Text = KindInjection, carryoverHeader(text)
	} else {
		r.Text = promptText(text)
	}
	p.add(r)
}

// slash reads a command: /run and /test open a command call, /ask, /code
// and the like carry a request (returned); the rest are not requests.
func (p *aiderParse) slash(text string, line int) (string, bool) {
	cmd, arg := aiderSlash(text)
	if arg == "" {
		return "", false
	}
	switch cmd {
	case "run", "test":
		r := p.call(line, "user", cmd)
		r.Command = clip(arg, maxResult)
		p.add(r)
		p.openCmd, p.cmdTest = &r, cmd == "test"
	case "ask", "code", "architect", "context", "copy-context":
		return arg, true
	}
	return "", false // /add, /drop, /undo, /clear, ...: not requests
}

func (p *aiderParse) assistant(b aiderBlock) {
	text := strings.TrimSpace(aiderThinkRE().ReplaceAllString(strings.Join(b.lines, "\n"), ""))
	if text == "" {
		return
	}
	p.lastEdits = aiderEditBlocks(text)
	var cmds []string
	for _, m := range aiderShellRE().FindAllStringSubmatch(text, -1) {
		cmds = append(cmds, strings.TrimSpace(m[1]))
	}
	p.lastShell = strings.Join(cmds, "; ")
	r := p.row(b.line, "assistant", KindText)
	r.Text = clip(text, maxText)
	p.add(r)
}

// aiderToolFailed reports a line where aider itself failed.
func aiderToolFailed(l string) bool {
	return strings.HasPrefix(l, "Unexpected error: ") || strings.HasPrefix(l, "Unable to commit: ") ||
		strings.HasPrefix(l, "Unable to write file")
}

// toolLine reads one line of tool output at line ln; rest are the lines
// after it in the block.
func (p *aiderParse) toolLine(l string, ln int, rest []string) {
	if strings.TrimSpace(l) == "^C KeyboardInterrupt" {
		p.interrupted(ln)
		return
	}
	if p.openCmd != nil && !aiderIs(l, aiderRunning) {
		p.cmdOut = append(p.cmdOut, l)
		return
	}
	switch {
	case aiderIs(l, aiderApplied):
		p.applied(strings.TrimSpace(l[len(aiderApplied):]), ln)
	case aiderIs(l, aiderCreate):
		r := p.call(ln, "assistant", "create_file")
		r.FilePath = strings.TrimSpace(l[len(aiderCreate):])
		p.add(r)
	case aiderCommitRE().MatchString(l):
		m := aiderCommitRE().FindStringSubmatch(l)
		r := p.call(ln, "tool", "git_commit")
		r.Text = m[1] + " " + clip(m[2], 200)
		p.add(r)
	case aiderIs(l, aiderRunning):
		p.flush()
		r := p.call(ln, "assistant", "shell")
		r.Command = clip(strings.TrimSpace(l[len(aiderRunning):]), maxResult)
		p.add(r)
		p.openCmd = &r
	case strings.HasPrefix(l, "Run shell command"):
		p.shellConfirm(l, ln)
	case strings.HasPrefix(l, "The LLM did not conform to the edit format."):
		p.editFormatError(l, ln, rest)
	case aiderAPIErrorRE().MatchString(l):
		p.add(aiderAPIError(p.row(ln, "system", KindError), l))
	case aiderToolFailed(l):
		r := p.row(ln, "tool", KindError)
		r.ToolName, r.Text = "aider", clip(l, maxResult)
		p.add(r)
	case aiderTokensRE().MatchString(l):
		m := aiderTokensRE().FindStringSubmatch(l)
		if used := aiderCount(m[1], m[2]) + aiderCount(m[3], m[4]) + aiderCount(m[5], m[6]) + aiderCount(m[7], m[8]); used > 0 {
			r := p.row(ln, "assistant", KindUsage)
			r.TokensUsed = used
			p.add(r)
		}
	}
}

// interrupted is Ctrl-C (aider logs "^C KeyboardInterrupt"): it stops the running command, else the reply.
func (p *aiderParse) interrupted(ln int) {
	r := p.row(ln, "user", KindInterrupted)
	r.Text = "interrupted (^C KeyboardInterrupt)"
	if p.openCmd != nil {
		r.Role, r.CallID, r.ToolName = "tool", p.openCmd.CallID, p.openCmd.ToolName
		p.openCmd, p.cmdOut, p.cmdTest = nil, nil, false
	}
	p.add(r)
}

// shellConfirm reads "Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]: n": a No or Don't-ask-again declines
// the commands the reply proposed (a Yes is followed by "Running <cmd>" lines).
func (p *aiderParse) shellConfirm(l string, ln int) {
	i := strings.LastIndex(l, "]:")
	if i < 0 || !strings.Contains(l, aiderConfirm) {
		return
	}
	if ans := strings.ToLower(strings.TrimSpace(l[i+2:])) + " "; !strings.ContainsRune("nd", rune(ans[0])) {
		return // yes (or the default): "Running <cmd>" lines follow
	}
	c := p.call(ln, "assistant", "shell")
	c.Command = clip(cmp.Or(p.lastShell, "the proposed shell command"), maxResult)
	p.add(c)
	r := p.row(ln, "tool", KindRefused)
	r.Key, r.CallID, r.Text = c.Key+"#declined", c.CallID, "the user declined: "+clip(l, 200)
	p.add(r)
}

// applied is an edit aider applied to path; an earlier failed attempt on
// this file is now moot.
func (p *aiderParse) applied(path string, ln int) {
	r := p.call(ln, "assistant", "edit")
	r.FilePath, r.Text = path, clip(p.lastEdits[path], maxResult)
	p.add(r)
	kept := p.pend[:0]
	for _, e := range p.pend {
		if e.path == "" || e.path == path {
			p.rows[e.row].Kind = KindToolResult
		} else {
			kept = append(kept, e)
		}
	}
	p.pend = kept
}

// editFormatError is a reply aider could not apply; the file and detail
// come from the first "SearchReplaceNoExactMatch" line after it.
func (p *aiderParse) editFormatError(l string, ln int, rest []string) {
	r := p.row(ln, "tool", KindError)
	r.ToolName = "edit"
	path, detail := "", l
	for _, next := range rest {
		if m := aiderNoMatchRE().FindStringSubmatch(next); m != nil {
			path, detail = strings.TrimSpace(m[1]), strings.TrimPrefix(next, "## ")
			break
		}
	}
	r.Text = clip(detail, maxResult)
	p.add(r)
	p.pend = append(p.pend, aiderPendingErr{row: len(p.rows) - 1, path: path})
}

// aiderAPIError is a failed model call (aider retries some, then gives
// up): the model's error, never a command to fix; a rate limit, quota or
// exhausted credit is a limit too.
func aiderAPIError(r Row, l string) Row {
	r.ToolName, r.Text = "model API", clip(l, maxResult)
	status := 0
	if strings.HasPrefix(aiderAPIErrorRE().FindStringSubmatch(l)[1], "RateLimit") {
		status = 429
	}
	r.Limit = LimitFromError(l, status, r.Time)
	return r
}

// aiderOutputAdded reports whether a command's output was added to the
// chat: "Added N lines of output" (current aider) or the output logged a
// second time line by line (v0.47).
func aiderOutputAdded(out []string) bool {
	first := ""
	for i, l := range out {
		if aiderAddedRE().MatchString(l) {
			return true
		}
		if strings.TrimSpace(l) == "" {
			continue
		}
		if first == "" {
			first = l
		} else if l == first && i > 0 {
			return true
		}
	}
	return false
}

// aiderCount parses "5,244" or "12.3" + "k".
func aiderCount(n, k string) int64 {
	if n == "" {
		return 0
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(n, ",", ""), 64)
	if err != nil {
		return 0
	}
	if k == "k" {
		f *= 1000
	}
	return int64(f)
}

// aiderSlash splits "/cmd args" or "!cmd" (an alias of /run).
func aiderSlash(text string) (string, string) {
	if rest, ok := strings.CutPrefix(text, "!"); ok {
		return "run", strings.TrimSpace(rest)
	}
	cmd, arg, _ := strings.Cut(strings.TrimPrefix(text, "/"), " ")
	return strings.ToLower(cmd), strings.TrimSpace(arg)
}

// aiderEditBlocks collects, per file, the REPLACE halves of the
// SEARCH/REPLACE blocks in a reply (the "diff" and "diff-fenced" formats).
func aiderEditBlocks(text string) map[string]string {
	e := aiderEdits{out: map[string]string{}}
	for _, l := range strings.Split(text, "\n") {
		e.line(l)
	}
	return e.out
}

// aiderEdits reads SEARCH/REPLACE blocks line by line: the path is the
// last line of prose before the block.
type aiderEdits struct {
	out             map[string]string // path -> replacement text
	path, candidate string
	state           int // 0 outside, 1 search, 2 replace
	buf             []string
}

func (e *aiderEdits) line(l string) {
	t := strings.TrimSpace(l)
	switch {
	case e.state == 0 && strings.HasPrefix(t, "<<<<<<< SEARCH"):
		e.state, e.path = 1, e.candidate
	case e.state == 1 && strings.HasPrefix(t, "=======") && strings.Trim(t, "=") == "":
		e.state, e.buf = 2, nil
	case e.state == 2 && strings.HasPrefix(t, ">>>>>>> REPLACE"):
		e.replaced()
		e.state = 0
	case e.state == 2:
		e.buf = append(e.buf, l)
	case e.state == 0 && t != "" && !strings.HasPrefix(t, "```"):
		e.candidate = strings.Trim(t, "`*: ")
	}
}

// replaced adds a block's replacement to its path's text.
func (e *aiderEdits) replaced() {
	if e.path == "" {
		return
	}
	if e.out[e.path] != "" {
		e.out[e.path] += "\n"
	}
	e.out[e.path] += strings.Join(e.buf, "\n")
}

// readDocument reads a session document agents rewrite whole (Gemini's
// JSON chats, Cline's messages): a regular file, never blocking on a FIFO,
// of at most max bytes.
func readDocument(path string, max int64) ([]byte, error) {
	f, err := openRegular(path)
	if errors.Is(err, ErrNotRegular) {
		return nil, fmt.Errorf("%s is not a regular file", filepath.Base(path))
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("session document over %d MB", max>>20)
	}
	return b, nil
}

// openRegular opens a file in a project (which may be hostile) for
// reading: without blocking on a FIFO (O_NONBLOCK), and only a regular
// file (ErrNotRegular otherwise).
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, ErrNotRegular
	}
	return f, nil
}
