package cmd

import (
	"bufio"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/carryover/carryover/adapters"
)

const module = "github.com/carryover/carryover"

// allowedImports are the import rules (README, Architecture): the pipeline
// runs adapters → adapters/ledger → distill → publish → cmd and a package
// imports only packages to its left, plus the leaves, which import nothing
// of ours. specs sits beside the pipeline and knows only adapters. Nothing
// imports cmd but main. A package missing here fails the test: place it.
var allowedImports = map[string][]string{
	"":                  {"cmd"},
	"publish/redact":    {}, // leaf: secret detectors and Clip
	"publish/safefile":  {}, // leaf: the one atomic writer, bounded regular-only reads
	"adapters":          {"adapters/internal/claudejson", "publish/redact", "publish/safefile"},
	"adapters/ledger":   {"adapters", "publish/redact"},
	"specs":             {"adapters"},
	"specs/hookconf":    {"specs", "publish/safefile"},
	"distill":           {"adapters", "adapters/ledger", "distill/git", "publish/redact", "publish/safefile"},
	"distill/git":       {"publish/safefile"}, // git's data by go-git's decoders; never runs git
	"publish":           {"adapters", "adapters/ledger", "distill", "publish/redact", "publish/safefile"},
	"publish/resume":    {"adapters", "adapters/ledger", "distill", "publish", "publish/lifecycle", "publish/redact", "publish/safefile"},
	"publish/lifecycle": {"adapters", "adapters/ledger", "distill", "publish", "publish/redact"},                     // handoff ids' records, receipts, decisions, pinned task, history, staleness + their queries
	"publish/limits":    {"adapters", "adapters/ledger", "distill", "publish", "publish/resume", "publish/safefile"}, // rate limits, context levels, the run signal
	// configuration: the Config type, its key table, load/merge/project
	// policy, `config get/set/unset` editing; below the features, which
	// read their keys from it, and it imports none of them
	"publish/config": {"distill", "publish", "publish/safefile", "specs", "specs/hookconf"},
	// the project service: one project's ledger, repository, config, clock
	// and log; the hook event and the commands' operations
	"publish/service": {"adapters", "adapters/ledger", "distill", "publish", "publish/config", "publish/lifecycle", "publish/limits", "publish/redact", "publish/resume", "publish/safefile"},
	"cmd":             {"adapters", "adapters/ledger", "publish", "publish/config", "publish/lifecycle", "publish/limits", "publish/redact", "publish/resume", "publish/safefile", "publish/service", "specs", "specs/hookconf"},
	"cmd/e2e":         {}, // test files only: the kit (fake models, agent installers) is kit_*_test.go

	"adapters/internal/claudejson": {}, // leaf: the Claude line decoder and its JSON scanner, behind adapters' wall
}

// TestImportRules checks every package's imports (go list) against
// allowedImports.
func TestImportRules(t *testing.T) {
	c := exec.Command("go", "list", "-json", module+"/...")
	c.Dir = ".."
	out, err := c.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		seen++
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		allowed, ok := allowedImports[rel]
		if !ok {
			t.Errorf("package %q has no place in the import rules; add it to allowedImports (and README's Architecture)", rel)
			continue
		}
		for _, imp := range p.Imports {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			if strings.Contains(dep, "/internal/") && strings.HasPrefix(dep, rel+"/") {
				continue // a package's own internals
			}
			if !slices.Contains(allowed, dep) {
				t.Errorf("%s imports %s, which the import rules do not allow (allowed: %v)", rel, dep, allowed)
			}
		}
	}
	if seen < len(allowedImports) {
		t.Errorf("go list saw %d packages; the rules name %d", seen, len(allowedImports))
	}
}

// cmdNever are the packages cmd does not import (issue 23): it parses
// flags, calls the project service (publish/service) and formats output.
var cmdNever = []string{module + "/adapters/ledger", module + "/distill"}

// TestCmdImportsNeitherLedgerNorDistill: no non-test file of cmd imports
// adapters/ledger or distill.
func TestCmdImportsNeitherLedgerNorDistill(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range cmdNever {
			if strings.Contains(string(b), strconv.Quote(imp)) {
				t.Errorf("cmd/%s imports %s: call the project service (publish/service) instead", f, strings.TrimPrefix(imp, module+"/"))
			}
		}
	}
}

// processReads are calls that read the process's environment, working
// directory, home, terminals or clipboard. Only cmd/snapshot.go makes them;
// everything else gets them through Env (or adapters.Env).
var processReads = regexp.MustCompile(`\bos\.(Getenv|LookupEnv|Environ|Getwd|UserHomeDir|Chdir)\(|\bterm\.IsTerminal\(|\bclipboard\.[A-Z]|\bos\.Std(in|out|err)\b`)

// TestOnlyEnvReadsTheProcess: outside cmd/snapshot.go (its Windows half
// cmd/env_windows.go, main.go, tests and the e2e harness) no production file
// reads the process's environment.
func TestOnlyEnvReadsTheProcess(t *testing.T) {
	for _, f := range goFiles(t) {
		if strings.HasSuffix(f, "_test.go") || f == "cmd/snapshot.go" || f == "cmd/env_windows.go" || f == "main.go" || strings.HasPrefix(f, "cmd/e2e/") || strings.HasPrefix(f, "testdata/") {
			continue
		}
		fh, err := os.Open(filepath.Join("..", f))
		if err != nil {
			continue // deleted in the work tree
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			if processReads.MatchString(line) {
				t.Errorf("%s:%d reads the process environment outside cmd/snapshot.go: %s", f, n, strings.TrimSpace(line))
			}
		}
		fh.Close()
	}
}

// goFiles is every .go file of the module, relative to its root: git's
// list in a checkout, else a walk of the tree (a source archive), so the
// rule is checked either way.
func goFiles(t *testing.T) []string {
	c := exec.Command("git", "ls-files", "*.go")
	c.Dir = ".."
	if out, err := c.Output(); err == nil {
		return strings.Fields(string(out))
	}
	var fs []string
	err := filepath.WalkDir("..", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			rel, _ := filepath.Rel("..", p)
			fs = append(fs, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// TestAgentNamesStayInAdapters: adding an agent is its adapter file, its
// fixtures and its specs row, so an agent's name or alias as a Go string
// literal appears only in per-agent adapter files (adapters/<name>*.go,
// e.g. copilot_list.go; an agent that shares another's reader, as Kilo
// shares OpenCode's, may be named in that one), in specs/ and in tests
// (and the end-to-end harness). Anywhere else it is a per-agent fact that
// belongs in the agent's descriptor.
func TestAgentNamesStayInAdapters(t *testing.T) {
	owner := map[string]*adapters.Agent{}
	for _, a := range adapters.All {
		for _, n := range append([]string{a.Name}, a.Aliases...) {
			owner[n] = a
		}
	}
	for _, f := range goFiles(t) {
		if strings.HasSuffix(f, "_test.go") || strings.HasPrefix(f, "specs/") || strings.HasPrefix(f, "cmd/e2e/") || strings.HasPrefix(f, "testdata/") || agentFile(f, owner) {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", f), nil, 0)
		if err != nil {
			continue // deleted in the work tree
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && owner[s] != nil {
				t.Errorf("%s: the agent name %q outside adapters/%s*.go: move the per-agent fact into its descriptor (adapters.Agent)", f, s, owner[s].Name)
			}
			return true
		})
	}
}

// agentFile reports whether f is a per-agent adapter file: in adapters/,
// named by a prefix of an agent's name or alias, up to "_" or ".go"
// (claude_list.go, copilot.go for copilot-cli).
func agentFile(f string, owner map[string]*adapters.Agent) bool {
	dir, base := path.Split(f)
	if dir != "adapters/" {
		return false
	}
	stem := strings.TrimSuffix(base, ".go")
	if i := strings.IndexByte(stem, '_'); i > 0 {
		stem = stem[:i]
	}
	for n := range owner {
		if strings.HasPrefix(n, stem) {
			return true
		}
	}
	return false
}
