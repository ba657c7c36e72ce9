package specs

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeBin writes an executable script.
func fakeBin(t *testing.T, path, script string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func link(t *testing.T, target, name string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(name), 0o755)
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

// npmInstall lays out what `npm install -g pkg` makes under prefix and
// returns the bin link. Running the script records that it ran.
func npmInstall(t *testing.T, prefix, pkg, version, bin string) string {
	t.Helper()
	dir := filepath.Join(prefix, "lib", "node_modules", filepath.FromSlash(pkg))
	fakeBin(t, filepath.Join(dir, "bin", "cli.js"), "touch "+filepath.Join(prefix, "ran")+"; exit 1")
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name": "`+pkg+`", "version": "`+version+`", "bin": {"`+bin+`": "bin/cli.js"}}`), 0o644)
	// A dependency's manifest below the binary must not be taken for it.
	os.MkdirAll(filepath.Join(dir, "bin", "node_modules", "dep"), 0o755)
	os.WriteFile(filepath.Join(dir, "bin", "package.json"), []byte(`{"name": "helper", "version": "9.9.9"}`), 0o644)
	l := filepath.Join(prefix, "bin", bin)
	link(t, "../lib/node_modules/"+pkg+"/bin/cli.js", l)
	return l
}

func tool(t *testing.T, name string) Tool {
	t.Helper()
	tl, ok := mustLoad(t).Tool(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	return tl
}

func probeEnv(home string, vars map[string]string) ProbeEnv {
	return ProbeEnv{GOOS: "linux", Home: home, Getenv: func(k string) string { return vars[k] }, Environ: []string{"PATH=/usr/bin:/bin"}}
}

func TestDetectVersionSources(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	prefix := filepath.Join(root, "npm")
	for _, tc := range []struct{ tool, pkg, bin, version string }{
		{"claude", "@anthropic-ai/claude-code", "claude", "2.1.197"},
		{"codex", "@openai/codex", "codex", "0.169.0"},
		{"gemini", "@google/gemini-cli", "gemini", "0.61.0"},
		{"copilot-cli", "@github/copilot", "copilot", "1.0.102"},
	} {
		t.Run("npm/"+tc.tool, func(t *testing.T) {
			bin := npmInstall(t, prefix, tc.pkg, tc.version, tc.bin)
			p := DetectVersion(tool(t, tc.tool), bin, probeEnv(home, nil))
			if p.Version != tc.version || p.Source != SourcePackageJSON || p.Err != nil {
				t.Errorf("DetectVersion = %+v; want %s from package.json", p, tc.version)
			}
			if _, err := os.Stat(filepath.Join(prefix, "ran")); err == nil {
				t.Errorf("the agent was started although package.json has the version")
			}
		})
	}

	t.Run("claude native installer", func(t *testing.T) {
		v := filepath.Join(home, ".local", "share", "claude", "versions", "2.1.200")
		fakeBin(t, v, "exit 1")
		bin := filepath.Join(home, ".local", "bin", "claude")
		link(t, v, bin)
		if p := DetectVersion(tool(t, "claude"), bin, probeEnv(home, nil)); p.Version != "2.1.200" || p.Source != SourceInstallPath {
			t.Errorf("DetectVersion = %+v", p)
		}
	})

	t.Run("package.json of another package", func(t *testing.T) {
		dir := filepath.Join(root, "other", "node_modules", "claude-wrapper")
		fakeBin(t, filepath.Join(dir, "cli.js"), `echo "2.0.5 (Claude Code)"`)
		os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name": "claude-wrapper", "version": "7.0.0"}`), 0o644)
		if p := DetectVersion(tool(t, "claude"), filepath.Join(dir, "cli.js"), probeEnv(home, nil)); p.Version != "2.0.5" || p.Source != SourceCommand {
			t.Errorf("DetectVersion = %+v; want 2.0.5 from the version command", p)
		}
	})

	t.Run("package.json is a FIFO", func(t *testing.T) {
		dir := filepath.Join(root, "fifo", "node_modules", "@google", "gemini-cli")
		fakeBin(t, filepath.Join(dir, "gemini.js"), `echo 0.60.1`)
		if err := syscall.Mkfifo(filepath.Join(dir, "package.json"), 0o644); err != nil {
			t.Fatalf("mkfifo: %v", err)
		}
		if p := DetectVersion(tool(t, "gemini"), filepath.Join(dir, "gemini.js"), probeEnv(home, nil)); p.Version != "0.60.1" {
			t.Errorf("DetectVersion = %+v", p)
		}
	})

	t.Run("windows npm shim", func(t *testing.T) {
		dir := filepath.Join(root, "AppData", "npm")
		pkg := filepath.Join(dir, "node_modules", "@openai", "codex")
		os.MkdirAll(pkg, 0o755)
		os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name": "@openai/codex", "version": "0.170.1"}`), 0o644)
		fakeBin(t, filepath.Join(dir, "codex.cmd"), "exit 1")
		env := probeEnv(home, nil)
		env.GOOS = "windows"
		if p := DetectVersion(tool(t, "codex"), filepath.Join(dir, "codex.cmd"), env); p.Version != "0.170.1" {
			t.Errorf("DetectVersion = %+v", p)
		}
	})
}

// TestDetectCopilotSelfUpdate: Copilot CLI runs the newest complete version
// in its package cache, not the npm package's, unless updates are off.
func TestDetectCopilotSelfUpdate(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	bin := npmInstall(t, filepath.Join(root, "npm"), "@github/copilot", "1.0.102", "copilot")
	cache := filepath.Join(root, "xdg-cache", "copilot", "pkg")
	for dir, complete := range map[string]bool{
		"linux-x64/1.0.102":             true,  // its own unpacked copy
		"linux-x64/1.0.110":             true,  // downloaded update
		"linux-x64/1.0.120":             false, // still downloading: no index.js
		"universal/0.9.0":               true,
		"linux-x64/.extracting-1.0.130": true,
	} {
		os.MkdirAll(filepath.Join(cache, dir), 0o755)
		if complete {
			os.WriteFile(filepath.Join(cache, dir, "index.js"), nil, 0o644)
		}
	}
	vars := map[string]string{"XDG_CACHE_HOME": filepath.Join(root, "xdg-cache")}
	tl := tool(t, "copilot-cli")
	if p := DetectVersion(tl, bin, probeEnv(home, vars)); p.Version != "1.0.110" || p.Source != SourceSelfUpdate {
		t.Errorf("DetectVersion = %+v; want 1.0.110 from the self-update cache", p)
	}
	vars["COPILOT_AUTO_UPDATE"] = "false"
	if p := DetectVersion(tl, bin, probeEnv(home, vars)); p.Version != "1.0.102" || p.Source != SourcePackageJSON {
		t.Errorf("with updates off: %+v; want the npm package's 1.0.102", p)
	}
}

// TestDetectVersionRetriesATimeout: a version command that runs out of time
// once (a loaded machine) is asked again with the next, longer bound; one
// that never answers is an error naming the bounds, never a hang. The
// bounds that must expire are 1 ns (always expired, however fast the
// machine) or hold a command that never ends; none depends on how quickly a
// process starts (a 200 ms first bound used to, on a busy machine).
func TestDetectVersionRetriesATimeout(t *testing.T) {
	dir := t.TempDir()
	fakeBin(t, filepath.Join(dir, "answers"), `echo "codex-cli 0.169.0"`)
	env := probeEnv(dir, nil)
	env.Timeouts = []time.Duration{time.Nanosecond, time.Minute}
	p := DetectVersion(tool(t, "codex"), filepath.Join(dir, "answers"), env)
	if p.Version != "0.169.0" || p.Source != SourceCommand {
		t.Errorf("DetectVersion = %+v; want 0.169.0 on the retry", p)
	}
	fakeBin(t, filepath.Join(dir, "hung"), `exec sleep 300`)
	env.Timeouts = []time.Duration{time.Nanosecond, 100 * time.Millisecond}
	p = DetectVersion(tool(t, "codex"), filepath.Join(dir, "hung"), env)
	if p.Version != "" || p.Err == nil || !strings.Contains(p.Err.Error(), "no answer in 2 tries") {
		t.Errorf("DetectVersion = %+v; want a no-answer error", p)
	}
}

func TestSpecsVersionData(t *testing.T) {
	tab := mustLoad(t)
	for name, pkg := range map[string]string{"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex", "gemini": "@google/gemini-cli", "copilot-cli": "@github/copilot"} {
		tl, _ := tab.Tool(name)
		if tl.NpmPackage != pkg || !strings.Contains(tl.InstallHint, pkg) {
			t.Errorf("%s: npm_package %q, install hint %q; want %s in both", name, tl.NpmPackage, tl.InstallHint, pkg)
		}
	}
	bad := strings.Replace(string(toolsTOML), `npm_package = "@openai/codex"`, `npm_package = "../../etc"`, 1)
	if _, err := parse([]byte(bad)); err == nil || !strings.Contains(err.Error(), "npm_package") {
		t.Errorf("bad npm_package accepted: %v", err)
	}
}
