package resume

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/redact"
	"github.com/carryover/carryover/publish/safefile"
)

// DistillOptions distil the rows FromRows is given when the caller does: paths relative to the project, else to the
// recorded directory.
func (src Sources) DistillOptions() distill.Options {
	return distill.Options{Project: cmp.Or(src.Project, src.Recorded)}
}

// Sources are what FromRows reads besides the rows.
type Sources struct {
	Project   string // project root; "" = no project context (git, tree, diffs)
	Recorded  string // the directory the session ran in: file paths are relative to it; the project's name when Project is ""
	Tool      string // the agent that wrote the session
	SessionID string // its native id
	Ledger    ledger.Session
	Now       time.Time
	Redact    func(string) string
}

// gitBudget bounds the manual path's reads of the repository beyond the touched files' states (status, log, diffs);
// past it a part is left out.
const gitBudget = 3 * time.Second

// FromRows builds the resume session of a session's rows and h, the task state the caller distilled once (Distill, or
// the hook's Refresh): project context (git, tree, memory files), changed files with diffs, conversation.
func FromRows(rows []ledger.Row, h distill.Handoff, src Sources) Session {
	var repo *distill.Repo
	if src.Project != "" {
		repo = distill.OpenRepo(src.Project)
		h.Git, h.Files = distill.RepoFacts(repo, h.Files)
	}
	deadline := time.Now().Add(gitBudget)
	ls := src.Ledger
	s := Session{
		Version:    Version,
		Source:     src.Tool,
		CapturedAt: src.Now.UTC().Truncate(time.Second),
		SessionID:  src.SessionID,
	}
	if !ls.FirstSeen.IsZero() && len(rows) > 0 {
		s.SessionStartedAt = rows[0].Time.UTC().Format(time.RFC3339)
	}
	s.Project = projectContext(src, h, repo, deadline)
	SetTaskState(&s, h)
	s.FilesChanged = publish.Map(h.Files, func(f distill.File) FileChange { return fileChange(f, fileDiff(src, repo, f, deadline)) })
	tok := h.Tokens
	if tok.Max == 0 && ls.TokensMax > 0 {
		tok = distill.Tokens{Used: ls.TokensUsed, Max: ls.TokensMax}
	}
	if tok.Max > 0 {
		s.Tokens = &Tokens{Used: tok.Used, Max: tok.Max}
	}
	s.Conversation.Messages = messages(rows)
	s.Ended = publish.Endings[distill.Ending(rows, h)]
	if src.Redact != nil {
		s.Redact(src.Redact)
	}
	s.Normalize()
	return s
}

func fileChange(f distill.File, diff string) FileChange {
	fc := FileChange{Path: f.Path, ChangeType: "modified", Language: language(f.Path), Diff: diff, FailedAfter: f.FailedAfter}
	switch {
	case f.Deleted || f.Git == "deleted": // the session's own rm, as handoff.md says, or git's
		fc.ChangeType = "deleted"
	case f.Created:
		fc.ChangeType = "created"
	}
	return fc
}

// messages is the conversation of the main thread's rows: requests, replies, compactions, tool calls and their results.
func messages(rows []ledger.Row) []Message {
	calls := map[string]ledger.Row{}
	for _, r := range rows {
		if r.Kind == adapters.KindToolCall && r.CallID != "" {
			calls[r.CallID] = r
		}
	}
	var out []Message
	for _, r := range rows {
		if r.Sidechain {
			continue
		}
		if m, ok := message(r, calls); ok && strings.TrimSpace(m.Content) != "" {
			out = append(out, m)
		}
	}
	return out
}

// message is row r as a message; ok false for a kind not shown.
func message(r ledger.Row, calls map[string]ledger.Row) (Message, bool) {
	m := Message{Content: r.Text, Timestamp: r.Time.UTC().Format(time.RFC3339)}
	switch r.Kind {
	case adapters.KindToolCall:
		m.Role, m.ToolName = "assistant", r.ToolName
		switch {
		case r.Command != "":
			m.Content = "$ " + r.Command
		case r.FilePath != "":
			m.Content = "edit " + r.FilePath
		}
	case adapters.KindToolResult, adapters.KindError:
		m.Role, m.ToolName = "tool", r.ToolName
		if c, ok := calls[r.CallID]; ok && m.ToolName == "" {
			m.ToolName = c.ToolName
		}
		if r.Kind == adapters.KindError {
			m.Content = "ERROR: " + m.Content
		}
	default:
		m.Role = plainRoles[r.Kind]
		return m, m.Role != ""
	}
	return m, true
}

// plainRoles are the roles of the kinds shown as their text.
var plainRoles = map[adapters.Kind]string{adapters.KindPrompt: "user", adapters.KindText: "assistant", adapters.KindCompaction: "system"}

// projectContext is P4: branch, status, log, tree, memory files.
func projectContext(src Sources, h distill.Handoff, repo *distill.Repo, deadline time.Time) Project {
	g := h.Git
	dir := src.Project
	if dir == "" {
		if src.Recorded == "" {
			return Project{}
		}
		return Project{Path: src.Recorded, Name: filepath.Base(src.Recorded)}
	}
	p := Project{Path: dir, Name: filepath.Base(dir), GitBranch: g.Branch}
	if g.Repo {
		p.GitStatus, p.GitLog = gitContext(h.Files, repo, deadline)
	}
	p.Structure = tree(dir, 2, MaxTreeLines)
	p.MemoryFileContents = memoryContents(dir)
	return p
}

// gitContext is the status (tracked files changed, and the session's own untracked ones: looking for others walks the
// whole tree) and the last ten commits' first lines.
func gitContext(files []distill.File, repo *distill.Repo, deadline time.Time) (status string, log []string) {
	if lines, ok := repo.Status(deadline); ok {
		for _, f := range files {
			if f.Git == "untracked" {
				lines = append(lines, "?? "+f.Path)
			}
		}
		status = firstLines(strings.Join(lines, "\n"), MaxTreeLines, "")
	}
	// The first line, not git's %s subject, which joins the first paragraph.
	for _, c := range repo.Log(10, deadline) {
		log = append(log, c.ID+" "+c.Message)
	}
	return status, publish.Map(OneLine(log), distill.GitString) // commit subjects enter through distill.GitString
}

// memoryContents is dir's agent instruction files (their descriptors'), at most MaxMemoryChars, carryover's pointer
// block taken out.
func memoryContents(dir string) string {
	var mem strings.Builder
	for _, name := range adapters.InstructionFiles() {
		b, err := safefile.ReadFile(filepath.Join(dir, name), publish.MaxUserFile) // never a FIFO or device
		if err != nil || len(b) == 0 {
			continue
		}
		text := publish.StripPointer(string(b))
		if strings.TrimSpace(text) == "" {
			continue
		}
		fmt.Fprintf(&mem, "--- %s ---\n%s\n", name, strings.TrimSpace(text))
		if mem.Len() > MaxMemoryChars {
			break
		}
	}
	if mem.Len() > MaxMemoryChars {
		return mem.String()[:MaxMemoryChars] + "…"
	}
	return mem.String()
}

// fileDiff is a changed file's diff against the index, or a new file's head.
func fileDiff(src Sources, repo *distill.Repo, f distill.File, deadline time.Time) string {
	project := src.Project
	if project == "" {
		return "" // no project here: nothing to read
	}
	abs := f.Path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(project, f.Path)
	}
	if f.Git == "modified" || f.Git == "deleted" {
		if out := repo.Diff(f.Path, deadline); out != "" {
			return redact.Clip(out, MaxDiffChars)
		}
	}
	if f.Git == "clean" {
		return ""
	}
	return fileHead(abs)
}

// fileHead is a new file's first MaxDiffChars, or "(binary file)".
func fileHead(abs string) string {
	fi, err := os.Stat(abs)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	fh, err := os.Open(abs)
	if err != nil {
		return ""
	}
	defer fh.Close()
	b := make([]byte, MaxDiffChars+1)
	n, _ := io.ReadFull(fh, b)
	b = b[:n]
	if bytes.IndexByte(b, 0) >= 0 {
		return "(binary file)"
	}
	return redact.Clip(string(b), MaxDiffChars)
}

var skipDirs = map[string]bool{".git": true, "node_modules": true, ".carryover": true, "vendor": true, "__pycache__": true, ".venv": true, "dist": true, "build": true, "target": true}

// tree is the project's directory tree to depth, at most max lines.
func tree(root string, depth, maxLines int) string {
	var lines []string
	var walk func(dir, indent string, d int)
	walk = func(dir, indent string, d int) {
		shown := treeEntries(dir)
		for i, en := range shown {
			if len(lines) >= maxLines+1 {
				return
			}
			branch, next := "├── ", "│   "
			if i == len(shown)-1 {
				branch, next = "└── ", "    "
			}
			name := en.Name()
			if en.IsDir() {
				name += "/"
			}
			lines = append(lines, indent+branch+name)
			if en.IsDir() && d < depth {
				walk(filepath.Join(dir, en.Name()), indent+next, d+1)
			}
		}
	}
	walk(root, "", 1)
	if len(lines) == 0 {
		return ""
	}
	if len(lines) > maxLines {
		lines = append(lines[:maxLines], "…")
	}
	return filepath.Base(root) + "/\n" + strings.Join(lines, "\n")
}

// treeEntries is what tree shows of dir: no hidden entry but .github, no skipDirs.
func treeEntries(dir string) (shown []os.DirEntry) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil // also none of a partial read
	}
	return slices.DeleteFunc(ents, func(en os.DirEntry) bool {
		n := en.Name()
		return skipDirs[n] || strings.HasPrefix(n, ".") && n != ".github"
	})
}

// languages are the code fence languages of file extensions.
var languages = map[string]string{".go": "go", ".py": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
	".ts": "typescript", ".tsx": "typescript", ".rs": "rust", ".rb": "ruby", ".java": "java", ".md": "markdown", ".json": "json",
	".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".sh": "bash", ".c": "c", ".h": "c", ".cpp": "cpp", ".cc": "cpp", ".hpp": "cpp"}

func language(p string) string { return languages[strings.ToLower(filepath.Ext(p))] }

// maxSubject clips a commit subject (runes).
const maxSubject = 100

// OneLine keeps each entry's first line, at most maxSubject runes: "Recent commits" shows subjects, whatever a session
// file carries.
func OneLine(entries []string) []string {
	return publish.Map(entries, func(e string) string {
		first, _, _ := strings.Cut(strings.TrimSpace(e), "\n")
		first = strings.TrimRight(first, "\r ")
		if r := []rune(first); len(r) > maxSubject {
			first = string(r[:maxSubject-1]) + "…"
		}
		return first
	})
}

// SetTaskState fills s's task state from a distilled handoff, one session's (--session) or the project's fold
// (handoff.md's), so both say the same.
func SetTaskState(s *Session, h distill.Handoff) {
	s.Task = Task{Description: h.Task, Latest: h.Latest, SetAside: append([]string(nil), h.SetAside...), InProgress: h.Next}
	s.Task.Asked = append([]string(nil), h.Instructions...) // a request between the first and the latest is lost otherwise
	s.Task.Completed = distill.Dedupe(h.Done)
	s.Decisions = append([]string(nil), h.Decisions...)
	s.References, s.Actions = slices.Clone(h.Refs), slices.Clone(h.Actions)
	s.Test, s.LastWords = h.Test, h.LastWords
	for _, p := range h.Plan {
		if p.Done {
			s.Task.Completed = append(s.Task.Completed, p.Text)
		} else if p.Text != h.Next {
			s.Task.Remaining = append(s.Task.Remaining, p.Text)
		}
	}
	s.Questions = nil
	for _, q := range h.Questions {
		switch {
		case strings.HasPrefix(q, "unresolved: "):
			// the failure itself is listed below
		case todoMarker(q):
			s.Task.Remaining = append(s.Task.Remaining, q)
		default:
			s.Questions = append(s.Questions, q)
		}
	}
	s.Blockers, s.Task.Blockers = blockerLines(h)
	s.Task.Stopped = publish.StopTexts(h, whole)
	q := h.Quality()
	s.Quality = &q
}

// blockerLines are the failures, all and the open ones.
func blockerLines(h distill.Handoff) (all, open []string) {
	for _, f := range h.Failures {
		b := publish.FailureLine(f, whole)
		all = append(all, b)
		if publish.FailureStatus(f) == "" {
			open = append(open, b)
		}
	}
	return all, open
}

// todoMarker reports a to-do an edit added (TODO:, FIXME:, XXX:, HACK:).
func todoMarker(q string) bool {
	return slices.ContainsFunc([]string{"TODO:", "FIXME:", "XXX:", "HACK:"}, func(m string) bool { return strings.HasPrefix(q, m) })
}
