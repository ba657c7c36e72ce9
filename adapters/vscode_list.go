package adapters

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// vscodeLister lists VS Code Copilot Chat sessions for the manual path,
// straight from VS Code's stores (a session its hooks never saw can be
// handed off): every User dir's workspaceStorage/<hash>/chatSessions/
// <id>.jsonl|.json and GitHub.copilot-chat/transcripts/<id>.jsonl. A
// workspace's project is the folder its workspace.json names.
type vscodeLister struct{}

func (vscodeLister) Stores(env Env) []string {
	var out []string
	for _, d := range vscodeUserDirs(env) {
		out = append(out, filepath.Join(d, "workspaceStorage"))
	}
	return out
}

func (l vscodeLister) ListSessions(env Env, project string) ([]NativeSession, error) {
	var out []NativeSession
	seen := map[string]bool{}
	for _, root := range vscodeUserDirs(env) {
		wss, _ := filepath.Glob(filepath.Join(globEscape(root), "workspaceStorage", "*"))
		for _, ws := range wss {
			folder := vscodeWorkspaceFolder(ws)
			if project != "" && (folder == "" || !InProject(folder, project)) {
				continue
			}
			stores, _ := filepath.Glob(filepath.Join(globEscape(ws), "chatSessions", "*.json*"))
			trans, _ := filepath.Glob(filepath.Join(globEscape(ws), "GitHub.copilot-chat", "transcripts", "*.jsonl"))
			for _, f := range append(stores, trans...) {
				s, err := DescribeCached(env, "vscode-copilot", f, l.Describe)
				if err != nil || seen[s.ID] {
					continue // a transcript of a session whose store was listed
				}
				seen[s.ID] = true
				s.Project = folder
				out = append(out, s)
			}
		}
	}
	return out, nil
}

// vscodeWorkspaceFolder is the local folder a workspaceStorage dir
// belongs to ("" for remote or multi-root workspaces).
func vscodeWorkspaceFolder(ws string) string {
	b, err := os.ReadFile(filepath.Join(ws, "workspace.json"))
	if err != nil {
		return ""
	}
	var w struct {
		Folder string `json:"folder"`
	}
	if json.Unmarshal(b, &w) != nil || !strings.HasPrefix(w.Folder, "file://") {
		return ""
	}
	u, err := url.Parse(w.Folder)
	if err != nil {
		return ""
	}
	return filepath.FromSlash(u.Path)
}

func (vscodeLister) Describe(path string) (NativeSession, error) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return NativeSession{}, errNoSession
	}
	id := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".jsonl"), ".json")
	store := vscodeIsStore(path)
	if store {
		id = vscodeStoreID(path, id)
	}
	s := NativeSession{Tool: "vscode-copilot", ID: id, Path: path, LastActive: fi.ModTime()}
	var rows []Row
	if store {
		rows, err = vscode{}.ReadStore(Hook{TranscriptPath: path, SessionID: id}, Env{})
	} else {
		rows, s.CountEstimated, err = vscodeHeadRows(path)
	}
	if err != nil {
		return s, err
	}
	s.noteRows(rows)
	if len(rows) == 0 {
		return s, errNoSession
	}
	return s, nil
}

// vscodeHeadRows are the rows of a transcript's head; estimated is true
// when the file goes on past it.
func vscodeHeadRows(path string) (rows []Row, estimated bool, err error) {
	fs, err := sampleFile(path)
	if err != nil {
		return nil, false, err
	}
	for _, ln := range lines(fs.head) {
		rs, _ := vscode{}.ParseLine(ln, 0)
		rows = append(rows, rs...)
	}
	return rows, fs.tail != nil, nil
}

// vscodeStoreID names a store file's session: its sessionId when the first
// 64 KiB hold one (chatSessions files do), else the file name when it is a
// plain id, else a hash of it (an export is named by the user: "chat.json",
// "bug 123 (copy).json").
func vscodeStoreID(path, base string) string {
	if b, err := readHead(path, 64<<10); err == nil {
		if i := bytes.Index(b, []byte(`"sessionId"`)); i >= 0 {
			rest := bytes.TrimLeft(b[i+len(`"sessionId"`):], " \t\r\n")
			if len(rest) > 0 && rest[0] == ':' {
				rest = bytes.TrimLeft(rest[1:], " \t\r\n")
				var id string
				if dec := json.NewDecoder(bytes.NewReader(rest)); dec.Decode(&id) == nil && plainID(id) {
					return id
				}
			}
		}
	}
	if plainID(base) {
		return base
	}
	sum := sha256.Sum256([]byte(base))
	return "export-" + hex.EncodeToString(sum[:6])
}

// readHead reads up to n bytes of path's start.
func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	m, err := io.ReadFull(f, b)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return b[:m], err
}
