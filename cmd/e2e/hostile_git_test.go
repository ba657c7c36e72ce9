package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The hostile-repository suite, programs part (issue 21 item 1): a
// repository arrives with a .git/config, .gitattributes, hooks or a
// relative PATH directory that names a program, the way an unpacked
// archive or a clone with a planted node_modules/.bin brings them. Each
// case's program only appends to a marker file outside the project. The
// real binary runs every hook event and the manual path (handoff with the
// clipboard, capture), and doctor and detect where a PATH entry is the
// door. Each case asserts: the marker is absent, nothing outside the
// project and $CARRYOVER_HOME changed, the git facts are still there
// (read without git), and what the log says.

// plantProgram writes an executable at p that records its run in marker.
func plantProgram(t *testing.T, p, marker string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o755)
	script := fmt.Sprintf("#!/bin/sh\necho \"$0 $*\" >> '%s'\ncat >/dev/null 2>&1 &\nexit 0\n", marker)
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestHostileGitPrograms(t *testing.T) {
	type door struct {
		name   string
		config string // appended to .git/config; %s is the planted program
		attrs  string // committed .gitattributes
		hooks  bool   // every hook name planted in .git/hooks
		signed bool   // HEAD is a commit with a gpgsig header
		path   bool   // ./node_modules/.bin (relative) first in PATH, holding fakes
	}
	doors := []door{
		{name: "gpg-program-show-signature", config: "[gpg]\n\tprogram = %[1]s\n[gpg \"ssh\"]\n\tprogram = %[1]s\n[log]\n\tshowSignature = true\n", signed: true},
		{name: "filter-clean", config: "[filter \"evil\"]\n\tclean = %[1]s\n\tsmudge = %[1]s\n\tprocess = %[1]s\n\trequired = true\n", attrs: "* filter=evil\n"},
		{name: "diff-textconv", config: "[diff \"evil\"]\n\ttextconv = %[1]s\n\tcommand = %[1]s\n", attrs: "*.go diff=evil\n"},
		{name: "core-pager", config: "[core]\n\tpager = %[1]s\n[pager]\n\tlog = %[1]s\n\tdiff = %[1]s\n\tstatus = %[1]s\n"},
		{name: "diff-external", config: "[diff]\n\texternal = %[1]s\n"},
		{name: "core-fsmonitor", config: "[core]\n\tfsmonitor = %[1]s\n\tuntrackedCache = true\n"},
		{name: "core-sshcommand", config: "[core]\n\tsshCommand = %[1]s\n[remote \"origin\"]\n\turl = ssh://evil.example/x\n"},
		{name: "credential-helper", config: "[credential]\n\thelper = !%[1]s\n"},
		{name: "hooks", hooks: true},
		{name: "relative-path-entry", path: true},
	}
	for _, d := range doors {
		t.Run(d.name, func(t *testing.T) {
			h := newHostileRepo(t, func(up string) {
				if d.attrs != "" {
					os.WriteFile(filepath.Join(up, ".gitattributes"), []byte(d.attrs), 0o644)
				}
			})
			marker := filepath.Join(h.root, "PLANTED-PROGRAM-RAN")
			prog := h.in(".git/evil.sh")
			plantProgram(t, prog, marker)
			if d.signed {
				signedHead(t, h.project)
			}
			if d.config != "" {
				f, err := os.OpenFile(h.in(".git/config"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(f, d.config, prog)
				f.Close()
			}
			if d.hooks {
				for _, n := range []string{"post-index-change", "reference-transaction", "post-checkout", "pre-commit", "post-commit",
					"pre-auto-gc", "fsmonitor-watchman", "post-rewrite", "pre-push", "push-to-checkout"} {
					plantProgram(t, h.in(".git/hooks/"+n), marker)
				}
			}
			if d.path {
				for _, n := range []string{"git", "claude", "node", "sh", "xclip", "xsel", "wl-copy", "wl-paste", "termux-clipboard-set", "carryover"} {
					plantProgram(t, h.in("node_modules/.bin/"+n), marker)
				}
				// Relative first (and an empty entry, which means "."), then
				// the system's directories only, so no real agent is found;
				// h.env() passes this PATH to every run.
				t.Setenv("PATH", "./node_modules/.bin::/usr/bin:/bin")
			}
			// The session's files changed in the work tree, so that the
			// status, the diffs and (for filters) the stat checks all run.
			os.WriteFile(h.in("a.go"), []byte("package a\n\nfunc Retry() {}\n"), 0o644)

			before := h.outsideState()
			h.around("Stop", "SessionStart", "PostToolUse", "PreCompact", "SessionEnd")
			sel := []string{"--transcript", h.transcriptPath(), "--source", "claude", "--project", h.project}
			for _, args := range [][]string{append([]string{"handoff"}, sel...), append([]string{"capture"}, sel...)} {
				out, errOut, code := runCarryover(t, h.env(), h.project, args...)
				if code != 0 {
					t.Errorf("%s exited %d:\n%s%s", args[0], code, out, errOut)
				}
			}
			resume, _ := os.ReadFile(h.in(".carryover/RESUME.md"))
			if !strings.Contains(string(resume), "innocent") || !strings.Contains(string(resume), "M a.go") {
				t.Errorf("RESUME.md lacks the git facts (commit subject, status) read without git:\n%s", clipStr(string(resume), 1500))
			}
			if !strings.Contains(string(resume), "+func Retry() {}") {
				t.Errorf("RESUME.md lacks a.go's diff against HEAD:\n%s", clipStr(string(resume), 1500))
			}
			if d.path {
				_, errOut, code := runCarryover(t, h.env(), h.project, "run", "--", "claude")
				if code == 0 || !strings.Contains(errOut, "relative entries such as ./node_modules/.bin are not searched") {
					t.Errorf("run -- claude: exit %d, want a refusal naming the rule: %s", code, errOut)
				}
				runCarryover(t, h.env(), h.project, "install", "--tools", "claude", "--yes")
				for _, c := range []string{"detect", "doctor"} {
					out, _, _ := runCarryover(t, h.env(), h.project, c)
					if strings.Contains(out, "node_modules") {
						t.Errorf("%s found a program in the relative PATH entry:\n%s", c, out)
					}
				}
			}
			if b, err := os.ReadFile(marker); err == nil {
				t.Errorf("a program the repository named ran:\n%s", b)
			}
			after := h.outsideState()
			for p, v := range after {
				if before[p] != v && !strings.HasPrefix(p, filepath.Join(h.home, ".claude")) {
					t.Errorf("outside the project: %s changed (%q -> %q)", p, before[p], v)
				}
			}
			if l := h.log(); strings.Contains(l, "evil.sh") || strings.Contains(l, "node_modules") {
				t.Errorf("the log names the planted program:\n%s", l)
			}
		})
	}
}

// signedHead replaces HEAD with a copy that carries a gpgsig header, as a
// signed commit does (written as an object: no gpg runs to make it).
func signedHead(t *testing.T, dir string) {
	t.Helper()
	tree := strings.TrimSpace(gitRun(t, dir, "rev-parse", "HEAD^{tree}"))
	body := "tree " + tree + "\nauthor evil <e@x> 1700000000 +0000\ncommitter evil <e@x> 1700000000 +0000\n" +
		"gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\ninnocent, signed\n"
	f := filepath.Join(t.TempDir(), "commit")
	os.WriteFile(f, []byte(body), 0o644)
	id := strings.TrimSpace(gitRun(t, dir, "hash-object", "-t", "commit", "-w", f))
	gitRun(t, dir, "update-ref", "HEAD", id)
}
