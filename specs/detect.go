package specs

// Version detection without starting the agent where possible: a node CLI takes 0.3–1 s to answer --version idle and
// over 15 s on a loaded machine (issue 16: Gemini "not detected"), while its package.json is one small read.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-version"
)

var npmName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$`) })

// VersionTimeouts bounds each attempt at the version command: one patient retry for a machine so loaded that node
// starts slower than the first bound. A probe that runs out is an error (the caller falls back to the newest hooks),
// never a hidden agent.
var VersionTimeouts = []time.Duration{10 * time.Second, 30 * time.Second}

// ProbeEnv is what DetectVersion needs from the environment; Environ is the version command's, Timeouts overrides
// VersionTimeouts (tests).
type ProbeEnv struct {
	GOOS     string
	Getenv   func(string) string
	Home     string
	Environ  []string
	Timeouts []time.Duration
}

// Source names where a version came from.
type Source string

const (
	SourcePackageJSON Source = "package.json"
	SourceInstallPath Source = "install path"
	SourceSelfUpdate  Source = "self-update"
	SourceCommand     Source = "version command"
)

// Probe is the outcome of DetectVersion; Err (why no version was found) never quotes the agent's output.
type Probe struct {
	Version string
	Source  Source
	Err     error
}

// maxManifest bounds a package.json read (the agents' are under 10 KB).
const maxManifest = 1 << 20

// DetectVersion finds the version of tool's binary bin (from PATH): from the resolved binary's install path or npm
// package.json, raised to the newest self-updated version the agent would run; else by the version command.
func DetectVersion(tl Tool, bin string, env ProbeEnv) Probe {
	if v, src := installedVersion(tl, bin, env.GOOS); v != "" {
		if nv := selfUpdated(tl.SelfUpdate, v, env); nv != "" {
			v, src = nv, SourceSelfUpdate
		}
		return Probe{Version: v, Source: src}
	}
	out, err := runVersion(bin, tl.VersionArgs, env)
	if err != nil {
		return Probe{Err: fmt.Errorf("`%s %s` failed (%v)", filepath.Base(bin), strings.Join(tl.VersionArgs, " "), err)}
	}
	v, err := ParseVersion(tl, out)
	if err != nil {
		return Probe{Err: err}
	}
	return Probe{Version: v, Source: SourceCommand}
}

// installedVersion is the version the resolved binary's install path or npm package.json names ("" for none).
func installedVersion(tl Tool, bin, goos string) (string, Source) {
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		real = bin
	}
	if tl.pathRE != nil {
		if m := tl.pathRE.FindStringSubmatch(filepath.ToSlash(real)); m != nil && validVersion(m[1]) {
			return m[1], SourceInstallPath
		}
	}
	if tl.NpmPackage != "" {
		return npmVersion(tl.NpmPackage, bin, real, goos), SourcePackageJSON
	}
	return "", ""
}

func validVersion(s string) bool {
	_, err := version.NewVersion(s)
	return err == nil
}

// npmVersion is the version of package pkg that bin runs: npm links <prefix>/bin/x to
// <prefix>/lib/node_modules/<pkg>/<script>, so pkg's package.json is above the resolved binary; on Windows npm writes
// shims beside a node_modules directory instead.
func npmVersion(pkg, bin, real, goos string) string {
	// stop at node_modules (above every package) or the root
	for i, dir, up := 0, filepath.Dir(real), ""; i < 8 && dir != up && filepath.Base(dir) != "node_modules"; i++ {
		if v := manifestVersion(filepath.Join(dir, "package.json"), pkg); v != "" {
			return v
		}
		dir, up = filepath.Dir(dir), dir
	}
	if goos == "windows" {
		return manifestVersion(filepath.Join(filepath.Dir(bin), "node_modules", filepath.FromSlash(pkg), "package.json"), pkg)
	}
	return ""
}

// manifestVersion is the version in the package.json at path when its name is pkg ("" otherwise); only a regular file,
// at most maxManifest bytes.
func manifestVersion(path, pkg string) string {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var m struct{ Name, Version string }
	if json.NewDecoder(io.LimitReader(f, maxManifest)).Decode(&m) != nil || m.Name != pkg || !validVersion(m.Version) {
		return ""
	}
	return m.Version
}

// selfUpdated is the newest version above base in u's directories holding the marker ("" for none, or when updates are
// off).
func selfUpdated(u SelfUpdate, base string, env ProbeEnv) string {
	best, err := version.NewVersion(base)
	if u.Marker == "" || err != nil || u.off(env.Getenv) {
		return ""
	}
	found := ""
	for _, root := range updateRoots(u, env) {
		best, found = newestIn(root, u.Marker, best, found)
	}
	return found
}

// newestIn raises best (named found) to root's newest directory above it that holds marker.
func newestIn(root, marker string, best *version.Version, found string) (*version.Version, string) {
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		v, err := version.NewVersion(e.Name())
		if err != nil || !e.IsDir() || !v.GreaterThan(best) {
			continue
		}
		if fi, err := os.Stat(filepath.Join(root, e.Name(), marker)); err == nil && fi.Mode().IsRegular() {
			best, found = v, e.Name()
		}
	}
	return best, found
}

// off reports whether the environment turns self-updates off.
func (u SelfUpdate) off(getenv func(string) string) bool {
	name, val, ok := strings.Cut(u.Off, "=")
	return ok && getenv != nil && strings.EqualFold(getenv(name), val)
}

// updateRoots are u's directories on env's OS, a trailing "/*" expanded.
func updateRoots(u SelfUpdate, env ProbeEnv) []string {
	var roots []string
	for _, c := range u.Dirs.For(env.GOOS) {
		p, ok := Expand(c, env.GOOS, env.Getenv, env.Home)
		switch {
		case !ok:
		case strings.HasSuffix(filepath.ToSlash(p), "/*"):
			ms, _ := filepath.Glob(p)
			roots = append(roots, ms...)
		default:
			roots = append(roots, p)
		}
	}
	return roots
}

// runVersion runs bin with args once per timeout, retrying when an attempt ran out of time (and, at once, when the
// binary was busy being written).
func runVersion(bin string, args []string, env ProbeEnv) (string, error) {
	timeouts := env.Timeouts
	if len(timeouts) == 0 {
		timeouts = VersionTimeouts
	}
	var total time.Duration
	for _, d := range timeouts {
		out, err := runOnce(bin, args, env.Environ, d)
		// ETXTBSY: the binary was just written and a process forked meanwhile still holds it open for writing (an agent
		// updating itself; parallel tests copying a fake agent, golang/go#22315): it clears within milliseconds.
		for try := 0; try < 3 && errors.Is(err, syscall.ETXTBSY); try++ {
			time.Sleep(50 * time.Millisecond)
			out, err = runOnce(bin, args, env.Environ, d)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			return out, err
		}
		total += d
	}
	return "", fmt.Errorf("no answer in %d tries over %s", len(timeouts), total)
}

func runOnce(bin string, args, environ []string, d time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env, cmd.WaitDelay = environ, time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return "", context.DeadlineExceeded
	}
	if err != nil {
		return "", err
	}
	return string(out[:min(len(out), 4096)]), nil
}
