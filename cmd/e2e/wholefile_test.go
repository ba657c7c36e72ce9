package e2e

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Helpers for agents whose hooks are files carryover writes whole (Pi's
// extension, Cline's hook files): a tree fingerprint to prove uninstall
// leaves the user's folders byte for byte as they were.

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// treeOf maps every entry under root (relative path) to its type, mode
// and content digest ("" map when root does not exist).
func treeOf(t *testing.T, root string, skip ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if slices.Contains(skip, rel) {
			return filepath.SkipDir
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		v := fi.Mode().String()
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			v += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		out[rel] = v
		return nil
	})
	return out
}

// treeDiff lists the entries that differ between two treeOf maps.
func treeDiff(a, b map[string]string) []string {
	var d []string
	for k, v := range a {
		if b[k] != v {
			d = append(d, fmt.Sprintf("%s: %q → %q", k, v, b[k]))
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			d = append(d, fmt.Sprintf("%s: new (%s)", k, v))
		}
	}
	slices.Sort(d)
	return d
}

// installAndUndo checks carryover's install for tool end to end before any
// session: --dry-run writes nothing, install reports want, status says the
// hooks are present, uninstall leaves root exactly as before (bytes, modes,
// directories), and a last install wires the hooks for the test's sessions.
// It returns that install's output.
func installAndUndo(t *testing.T, env []string, dir, tool, root string, before map[string]string, want string, skip ...string) string {
	t.Helper()
	out, errOut, code := runCarryover(t, env, dir, "install", "--tools", tool, "--dry-run")
	if code != 0 || !strings.Contains(out, "would    ") || !strings.Contains(out, "+++ ") {
		t.Errorf("install --tools %s --dry-run (exit %d):\n%s%s", tool, code, out, errOut)
	}
	if d := treeDiff(before, treeOf(t, root, skip...)); len(d) > 0 {
		t.Errorf("install --dry-run changed %s:\n%s", root, strings.Join(d, "\n"))
	}
	out, errOut, code = runCarryover(t, env, dir, "install", "--tools", tool)
	if code != 0 || !strings.Contains(out, "ok       "+want) {
		t.Fatalf("install --tools %s (exit %d), want %q:\n%s%s", tool, code, want, out, errOut)
	}
	var st struct {
		Agents []struct {
			Tool, Hooks, Restore string
		}
	}
	js, _, _ := runCarryover(t, env, dir, "status", "--json")
	if err := json.Unmarshal([]byte(js), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, js)
	}
	for _, a := range st.Agents {
		if a.Tool == tool && a.Hooks != "present" {
			t.Errorf("status: %s hooks %q after install, want present", tool, a.Hooks)
		}
	}
	if o, e, c := runCarryover(t, env, dir, "uninstall", "--tools", tool); c != 0 {
		t.Errorf("uninstall --tools %s (exit %d):\n%s%s", tool, c, o, e)
	}
	if d := treeDiff(before, treeOf(t, root, skip...)); len(d) > 0 {
		t.Errorf("uninstall did not restore %s byte for byte:\n%s", root, strings.Join(d, "\n"))
	}
	out, errOut, code = runCarryover(t, env, dir, "install", "--tools", tool)
	if code != 0 {
		t.Fatalf("install --tools %s again (exit %d):\n%s%s", tool, code, out, errOut)
	}
	return out
}
