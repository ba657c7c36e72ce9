package adapters

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
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
	Format: Format{Newest: "0.86.3", MajorOnly: true, Shapes: []string{
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
	aiderAddedRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^Added \d+ lines? of output to the chat\.`) })
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
	dirs := []string{}
	for _, d := range []string{h.Project, h.Cwd} {
		if d != "" && (len(dirs) == 0 || dirs[0] != d) {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		return ""
	}
	rel := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dirs[0], p)
	}
	if env.Getenv != nil {
		if v := env.Getenv("AIDER_CHAT_HISTORY_FILE"); v != "" {
			return rel(v) // the user's own environment
		}
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
	var out []aiderBlock
	add := func(kind byte, i int, s string) {
		if n := len(out); n > 0 && out[n-1].kind == kind {
			out[n-1].lines = append(out[n-1].lines, s)
			return
		}
		out = append(out, aiderBlock{kind: kind, line: i, lines: []string{s}})
	}
	cont := false // inside a multi-line tool output
	for i, raw := range lines {
		isUser := strings.HasPrefix(raw, "#### ") || raw == "####"
		if cont && !isUser {
			if strings.HasSuffix(raw, "  ") && strings.TrimSpace(raw) != "" { // the hard break after the whole output
				cont = false
			}
			add('t', i, strings.TrimRight(raw, " "))
			continue
		}
		cont = false
		switch {
		case isUser:
			add('u', i, strings.TrimRight(strings.TrimPrefix(strings.TrimPrefix(raw, "####"), " "), " "))
		case strings.HasPrefix(raw, "> ") || raw == ">":
			body := strings.TrimPrefix(strings.TrimPrefix(raw, ">"), " ")
			if !loose && !strings.HasSuffix(raw, "  ") && strings.TrimSpace(body) != "" {
				cont = true // first line of a multi-line tool output
			}
			add('t', i, strings.TrimRight(body, " "))
		case strings.TrimSpace(raw) == "":
			if n := len(out); n > 0 && out[n-1].kind == 'a' {
				out[n-1].lines = append(out[n-1].lines, "")
			} else if n > 0 && out[n-1].kind != 0 {
				out = append(out, aiderBlock{line: i}) // a blank line ends a user or tool block
			}
		default:
			add('a', i, raw)
		}
	}
	// drop separators
	var blocks []aiderBlock
	for _, b := range out {
		if b.kind != 0 {
			blocks = append(blocks, b)
		}
	}
	return blocks
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
	base := Row{Time: c.start}
	var rows []Row
	lastEdits := map[string]string{} // path -> new text of the last reply's edit blocks
	type pendingErr struct {
		row  int
		path string
	}
	var pend []pendingErr
	var openCmd *Row // the /run, /test or Running call awaiting its output
	var cmdOut []string
	var cmdTest bool
	flush := func() {
		if openCmd == nil {
			return
		}
		r := base
		r.Key, r.Role, r.CallID, r.ToolName = openCmd.Key+"#result", "tool", openCmd.CallID, openCmd.ToolName
		r.Kind = KindToolResult
		if cmdTest && aiderOutputAdded(cmdOut) {
			r.Kind = KindError // /test adds its output to the chat only on a non-zero exit
		}
		r.Text = clip(strings.TrimSpace(strings.Join(cmdOut, "\n")), maxResult)
		rows = append(rows, r)
		openCmd, cmdOut, cmdTest = nil, nil, false
	}
	key := func(line int, suffix string) string { return "L" + strconv.Itoa(line) + suffix }
	for _, b := range blocks {
		switch b.kind {
		case 'u':
			flush()
			text := strings.TrimSpace(strings.Join(b.lines, "\n"))
			if text == "" || strings.Contains(text, aiderConfirm) {
				continue // empty input, or a confirm answered for the user
			}
			if strings.HasPrefix(text, "/") || strings.HasPrefix(text, "!") {
				cmd, arg := aiderSlash(text)
				switch cmd {
				case "run", "test":
					if arg == "" {
						continue
					}
					r := base
					r.Key, r.Role, r.Kind, r.ToolName = key(b.line, ""), "user", KindToolCall, cmd
					r.CallID, r.Command = r.Key, clip(arg, maxResult)
					rows = append(rows, r)
					openCmd, cmdTest = &r, cmd == "test"
					continue
				case "ask", "code", "architect", "context", "copy-context":
					if arg == "" {
						continue
					}
					text = arg
				default:
					continue // /add, /drop, /undo, /clear, ...: not requests
				}
			}
			r := base
			r.Key, r.Role = key(b.line, ""), "user"
			if IsCarryoverText(text) {
				r.Kind, r.Text = KindInjection, carryoverHeader(text)
			} else {
				r.Kind, r.Text = KindPrompt, promptText(text)
			}
			rows = append(rows, r)
		case 'a':
			flush()
			text := strings.TrimSpace(aiderThinkRE().ReplaceAllString(strings.Join(b.lines, "\n"), ""))
			if text == "" {
				continue
			}
			lastEdits = aiderEditBlocks(text)
			r := base
			r.Key, r.Role, r.Kind, r.Text = key(b.line, ""), "assistant", KindText, clip(text, maxText)
			rows = append(rows, r)
		case 't':
			for j, l := range b.lines {
				ln := b.line + j
				if openCmd != nil && !aiderIs(l, aiderRunning) {
					cmdOut = append(cmdOut, l)
					continue
				}
				switch {
				case aiderIs(l, aiderApplied):
					p := strings.TrimSpace(l[len(aiderApplied):])
					r := base
					r.Key, r.Role, r.Kind, r.ToolName, r.FilePath = key(ln, ""), "assistant", KindToolCall, "edit", p
					r.CallID, r.Text = r.Key, clip(lastEdits[p], maxResult)
					rows = append(rows, r)
					// an earlier failed attempt on this file is now moot
					kept := pend[:0]
					for _, e := range pend {
						if e.path == "" || e.path == p {
							rows[e.row].Kind = KindToolResult
						} else {
							kept = append(kept, e)
						}
					}
					pend = kept
				case aiderIs(l, aiderCreate):
					p := strings.TrimSpace(l[len(aiderCreate):])
					r := base
					r.Key, r.Role, r.Kind, r.ToolName, r.FilePath = key(ln, ""), "assistant", KindToolCall, "create_file", p
					r.CallID = r.Key
					rows = append(rows, r)
				case aiderCommitRE().MatchString(l):
					m := aiderCommitRE().FindStringSubmatch(l)
					r := base
					r.Key, r.Role, r.Kind, r.ToolName = key(ln, ""), "tool", KindToolCall, "git_commit"
					r.CallID, r.Text = r.Key, m[1]+" "+clip(m[2], 200)
					rows = append(rows, r)
				case aiderIs(l, aiderRunning):
					flush()
					r := base
					r.Key, r.Role, r.Kind, r.ToolName = key(ln, ""), "assistant", KindToolCall, "shell"
					r.CallID, r.Command = r.Key, clip(strings.TrimSpace(l[len(aiderRunning):]), maxResult)
					rows = append(rows, r)
					openCmd = &r
				case strings.HasPrefix(l, "The LLM did not conform to the edit format."):
					r := base
					r.Key, r.Role, r.Kind, r.ToolName = key(ln, ""), "tool", KindError, "edit"
					path, detail := "", l
					for _, next := range b.lines[j+1:] {
						if m := aiderNoMatchRE().FindStringSubmatch(next); m != nil {
							path, detail = strings.TrimSpace(m[1]), strings.TrimPrefix(next, "## ")
							break
						}
					}
					r.FilePath, r.Text = "", clip(detail, maxResult)
					rows = append(rows, r)
					pend = append(pend, pendingErr{row: len(rows) - 1, path: path})
				case aiderAPIErrorRE().MatchString(l):
					// The model call failed (aider retries some, then gives up):
					// the model's error, never a command to fix; a rate
					// limit, quota or exhausted credit is a limit too.
					r := base
					r.Key, r.Role, r.Kind, r.ToolName, r.Text = key(ln, ""), "system", KindError, "model API", clip(l, maxResult)
					status := 0
					if strings.HasPrefix(aiderAPIErrorRE().FindStringSubmatch(l)[1], "RateLimit") {
						status = 429
					}
					r.Limit = LimitFromError(l, status, r.Time)
					rows = append(rows, r)
				case strings.HasPrefix(l, "Unexpected error: "), strings.HasPrefix(l, "Unable to commit: "), strings.HasPrefix(l, "Unable to write file"):
					r := base
					r.Key, r.Role, r.Kind, r.Text = key(ln, ""), "tool", KindError, clip(l, maxResult)
					r.ToolName = "aider"
					rows = append(rows, r)
				case aiderTokensRE().MatchString(l):
					m := aiderTokensRE().FindStringSubmatch(l)
					used := aiderCount(m[1], m[2]) + aiderCount(m[3], m[4]) + aiderCount(m[5], m[6]) + aiderCount(m[7], m[8])
					if used > 0 {
						r := base
						r.Key, r.Role, r.Kind, r.TokensUsed = key(ln, ""), "assistant", KindUsage, used
						rows = append(rows, r)
					}
				}
			}
		}
	}
	flush()
	return rows
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
	out := map[string]string{}
	var path, candidate string
	state := 0 // 0 outside, 1 search, 2 replace
	var buf []string
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case state == 0 && strings.HasPrefix(t, "<<<<<<< SEARCH"):
			state, path = 1, candidate
		case state == 1 && strings.HasPrefix(t, "=======") && strings.Trim(t, "=") == "":
			state, buf = 2, nil
		case state == 2 && strings.HasPrefix(t, ">>>>>>> REPLACE"):
			if path != "" {
				if out[path] != "" {
					out[path] += "\n"
				}
				out[path] += strings.Join(buf, "\n")
			}
			state = 0
		case state == 2:
			buf = append(buf, l)
		case state == 0 && t != "" && !strings.HasPrefix(t, "```"):
			candidate = strings.Trim(t, "`*: ")
		}
	}
	return out
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
