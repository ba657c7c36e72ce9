package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkDetectRealAgents runs `carryover detect --json` and `status
// --json` as processes with the four real agent CLIs (npm installs from
// ~/.cache/carryover-e2e) on PATH. The target is well under 0.5 s per run
// (issue 16: 2.4–4.7 s when every version came from starting node). Before
// timing it checks that each pinned version is found.
func BenchmarkDetectRealAgents(b *testing.B) {
	root := b.TempDir()
	home := filepath.Join(root, "home")
	var path []string
	for _, tool := range []string{"claude", "codex", "gemini", "copilot-cli"} {
		path = append(path, filepath.Dir(Install(b, tool)))
	}
	env := MergeEnv(BaseEnv(home), "PATH="+strings.Join(path, ":")+":/usr/bin:/bin")
	run := func(args ...string) []byte {
		cmd := exec.Command(carryoverBin, args...)
		cmd.Env, cmd.Dir = env, root
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("%v: %v\n%s", args, err, out)
		}
		return out
	}
	var doc struct {
		Agents []struct {
			Tool    string `json:"agent"`
			Version string `json:"version"`
		} `json:"agents"`
	}
	if err := json.Unmarshal(run("detect", "--json"), &doc); err != nil {
		b.Fatal(err)
	}
	for _, d := range doc.Agents {
		if v, ok := installVersions[d.Tool]; ok && d.Version != v {
			b.Fatalf("detect found %s %q; want %s", d.Tool, d.Version, v)
		}
	}
	os.MkdirAll(home, 0o755)
	for _, args := range [][]string{{"detect", "--json"}, {"status", "--json"}} {
		b.Run(args[0], func(b *testing.B) {
			for range b.N {
				run(args...)
			}
		})
	}
}
