package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/carryover/carryover/publish"
)

// The hostile-repository suite (issue 10, files and reads): each case
// builds a repository the way an attacker would — an "upstream" with
// committed symlinks and planted files, cloned by the victim, then FIFOs,
// devices and a crafted .git made after the clone — and runs the real
// binary as a hook in it. Every case asserts that nothing outside the
// project and $CARRYOVER_HOME changed (a fake $HOME and the upstream are
// hashed before and after), that the hook exited 0 on its own with valid
// stdout, and what the log says.
//
// No case measures time. The hooks run with a 60 s internal deadline, so
// that "done in" in the log means every read returned by itself (a read
// that blocked would hold the hook until its watchdog, which logs "stopped
// waiting" instead); the outer kill at hostileKill only catches a hook that
// ignores even that.

const hostileKill = 3 * time.Minute

// hostileRepo is one case's world.
type hostileRepo struct {
	t        *testing.T
	root     string // everything below is in here
	home     string // fake $HOME with dotfiles worth stealing or clobbering
	chome    string // $CARRYOVER_HOME, inside home
	upstream string // the attacker's repository
	project  string // the victim's clone
	sid      string
}

func newHostileRepo(t *testing.T, build func(up string)) *hostileRepo {
	t.Helper()
	root := t.TempDir()
	h := &hostileRepo{t: t, root: root, home: filepath.Join(root, "home"), upstream: filepath.Join(root, "upstream"),
		project: filepath.Join(root, "src", "victim"), sid: fmt.Sprintf("5e1f00d5-hostile-%06d", time.Now().UnixNano()%1e6)}
	h.chome = filepath.Join(h.home, ".carryover")
	for p, data := range map[string]string{
		".bashrc":         "export PATH=$HOME/bin:$PATH\n",
		".profile":        "# profile\n",
		".gitconfig":      "[user]\n\tname = victim\n",
		".ssh/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----\nSECRETKEYMATERIAL\n-----END OPENSSH PRIVATE KEY-----\n",
	} {
		p = filepath.Join(h.home, p)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(h.upstream, 0o755)
	gitRun(t, h.upstream, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(h.upstream, "a.go"), []byte("package a\n"), 0o644)
	os.WriteFile(filepath.Join(h.upstream, "b.go"), []byte("package b\n"), 0o644)
	if build != nil {
		build(h.upstream)
	}
	gitRun(t, h.upstream, "add", "-A", "-f")
	gitRun(t, h.upstream, "-c", "user.email=evil@x", "-c", "user.name=evil", "commit", "-qm", "innocent")
	os.MkdirAll(filepath.Dir(h.project), 0o755)
	gitRun(t, filepath.Dir(h.project), "clone", "-q", h.upstream, h.project)
	h.transcript(h.sid)
	return h
}

// transcript writes session sid's Claude transcript: a task, edits of a.go
// and b.go in the project, a failure and a next step.
func (h *hostileRepo) transcript(sid string) {
	var b bytes.Buffer
	ts := func(i int) string {
		return time.Date(2026, 11, 23, 10, 0, i, 0, time.UTC).Format(time.RFC3339Nano)
	}
	line := func(v map[string]any) {
		j, _ := json.Marshal(v)
		b.Write(j)
		b.WriteByte('\n')
	}
	msg := func(i int, typ string, m map[string]any) {
		line(map[string]any{"parentUuid": nil, "isSidechain": false, "type": typ, "message": m, "uuid": fmt.Sprintf("h-%d", i),
			"timestamp": ts(i), "sessionId": sid, "cwd": h.project})
	}
	msg(0, "user", map[string]any{"role": "user", "content": "Refactor package a and b to share the retry helper"})
	for i, f := range []string{"a.go", "b.go"} {
		msg(1+3*i, "assistant", map[string]any{"id": fmt.Sprintf("msg_h_%d", i), "role": "assistant", "model": "m",
			"content": []any{map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_h_%d", i), "name": "Edit",
				"input": map[string]any{"file_path": filepath.Join(h.project, f), "old_string": "package", "new_string": "package"}}},
			"usage": map[string]any{"input_tokens": 10, "output_tokens": 5}})
		msg(2+3*i, "user", map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result",
			"tool_use_id": fmt.Sprintf("toolu_h_%d", i), "content": "The file has been updated."}}})
	}
	msg(9, "assistant", map[string]any{"id": "msg_h_9", "role": "assistant", "model": "m",
		"content": []any{map[string]any{"type": "text", "text": "Next: run go test ./... and fix the shared helper."}},
		"usage":   map[string]any{"input_tokens": 10, "output_tokens": 5}})
	slug := strings.NewReplacer("/", "-", ".", "-").Replace(h.project)
	p := filepath.Join(h.home, ".claude", "projects", slug, sid+".jsonl")
	os.MkdirAll(filepath.Dir(p), 0o700)
	if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
		h.t.Fatal(err)
	}
}

func (h *hostileRepo) transcriptPath() string {
	slug := strings.NewReplacer("/", "-", ".", "-").Replace(h.project)
	return filepath.Join(h.home, ".claude", "projects", slug, h.sid+".jsonl")
}

func (h *hostileRepo) env() []string {
	return []string{"HOME=" + h.home, "CARRYOVER_HOME=" + h.chome, "CLAUDE_PROJECT_DIR=" + h.project,
		"PATH=" + os.Getenv("PATH"), "CARRYOVER_DEADLINE_MS=60000"}
}

// outsideState hashes every file below root except the project and
// $CARRYOVER_HOME: type, mode, link target, content.
func (h *hostileRepo) outsideState() map[string]string {
	h.t.Helper()
	st := map[string]string{}
	filepath.WalkDir(h.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			st[p] = "error: " + err.Error()
			return nil
		}
		if p == h.project || p == h.chome {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			st[p] = "error: " + err.Error()
			return nil
		}
		v := fi.Mode().String()
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			v += " -> " + l
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			sum := sha256.Sum256(b)
			v += " " + hex.EncodeToString(sum[:])
		}
		st[p] = v
		return nil
	})
	return st
}

// hookResult is one finished hook process.
type hookResult struct {
	stdout, stderr, log string
	code                int
}

// hook runs `carryover snapshot --tool claude --event event` in the
// project and checks the hook contract: it ended by itself, exit 0, stdout
// empty or one valid injection, and every read returned ("done in", no
// watchdog).
func (h *hostileRepo) hook(event string) hookResult {
	h.t.Helper()
	payload, _ := json.Marshal(map[string]any{"session_id": h.sid, "transcript_path": h.transcriptPath(), "cwd": h.project,
		"hook_event_name": event, "source": "startup"})
	ctx, cancel := context.WithTimeout(context.Background(), hostileKill)
	defer cancel()
	cmd := exec.CommandContext(ctx, carryoverBin, "snapshot", "--tool", "claude", "--event", event)
	cmd.Env, cmd.Dir, cmd.Stdin = h.env(), h.root, bytes.NewReader(payload)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		h.t.Fatalf("%s hook did not exit on its own (killed after %s)\nlog:\n%s", event, hostileKill, h.log())
	}
	r := hookResult{stdout: out.String(), stderr: errb.String(), log: h.log()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		h.t.Fatal(err)
	}
	if r.code != 0 {
		h.t.Errorf("%s hook exited %d (stderr %q)", event, r.code, r.stderr)
	}
	if err := validInjection(r.stdout); err != nil {
		h.t.Errorf("%s hook stdout: %v: %q", event, err, clipStr(r.stdout, 300))
	}
	if strings.Contains(r.log, "stopped waiting") {
		h.t.Errorf("%s hook needed its watchdog (a read blocked):\n%s", event, r.log)
	}
	if !strings.Contains(r.log, "done in") {
		h.t.Errorf("%s hook did not finish its snapshot:\n%s", event, r.log)
	}
	for _, s := range []string{"SECRETKEYMATERIAL", "export PATH"} {
		if strings.Contains(r.stdout, s) || strings.Contains(r.log, s) {
			h.t.Errorf("%s hook leaked %q from $HOME", event, s)
		}
	}
	return r
}

func (h *hostileRepo) log() string {
	b, _ := os.ReadFile(filepath.Join(h.chome, "carryover.log"))
	return string(b)
}

// wantLog fails unless the log contains each of subs.
func (h *hostileRepo) wantLog(subs ...string) {
	h.t.Helper()
	l := h.log()
	for _, s := range subs {
		if !strings.Contains(l, s) {
			h.t.Errorf("log lacks %q:\n%s", s, l)
		}
	}
}

// around runs the hooks of one turn (Stop publishes, SessionStart injects)
// and asserts that nothing outside the project and $CARRYOVER_HOME changed.
func (h *hostileRepo) around(events ...string) []hookResult {
	h.t.Helper()
	before := h.outsideState()
	var rs []hookResult
	for _, ev := range events {
		rs = append(rs, h.hook(ev))
	}
	after := h.outsideState()
	var diff []string
	for p, v := range before {
		if after[p] != v {
			diff = append(diff, fmt.Sprintf("%s: %q -> %q", p, v, after[p]))
		}
	}
	for p, v := range after {
		if _, ok := before[p]; !ok {
			diff = append(diff, fmt.Sprintf("%s: new %q", p, v))
		}
	}
	sort.Strings(diff)
	if len(diff) > 0 {
		h.t.Errorf("files outside the project changed:\n%s", strings.Join(diff, "\n"))
	}
	return rs
}

func (h *hostileRepo) in(p string) string { return filepath.Join(h.project, p) }

func (h *hostileRepo) mkfifo(p string) {
	h.t.Helper()
	os.RemoveAll(h.in(p))
	if err := syscall.Mkfifo(h.in(p), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func isSymlink(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

func TestHostileFiles(t *testing.T) {
	t.Run("handoff-symlink-to-bashrc", func(t *testing.T) {
		h := newHostileRepo(t, func(up string) {
			os.MkdirAll(filepath.Join(up, ".carryover"), 0o755)
			// ../../../home/.bashrc from <root>/src/victim/.carryover
			os.Symlink(filepath.Join("..", "..", "..", "home", ".bashrc"), filepath.Join(up, ".carryover", "handoff.md"))
		})
		rs := h.around("Stop", "SessionStart")
		if rs[1].stdout != "" {
			t.Errorf("injected through a planted symlink: %q", clipStr(rs[1].stdout, 200))
		}
		if !isSymlink(h.in(".carryover/handoff.md")) {
			t.Errorf("the planted link was replaced or removed")
		}
		h.wantLog("handoff.md: is a symlink")
	})

	t.Run("resume-and-session-symlinks", func(t *testing.T) {
		// The files `handoff` and `capture` write, planted as links into
		// $HOME (RESUME.yaml/.json take the same path as RESUME.md).
		h := newHostileRepo(t, func(up string) {
			os.MkdirAll(filepath.Join(up, ".carryover"), 0o755)
			for name, target := range map[string]string{"RESUME.md": ".profile", "session.json": ".gitconfig"} {
				os.Symlink(filepath.Join("..", "..", "..", "home", target), filepath.Join(up, ".carryover", name))
			}
		})
		before := h.outsideState()
		sel := []string{"--transcript", h.transcriptPath(), "--source", "claude", "--project", h.project}
		for _, args := range [][]string{
			append([]string{"handoff", "--no-clipboard"}, sel...),
			append([]string{"capture"}, sel...),
		} {
			_, errOut, code := runCarryover(t, h.env(), h.project, args...)
			if code == 0 || !strings.Contains(errOut, "is a symlink") {
				t.Errorf("%v: exit %d, want a clear refusal: %s", args, code, errOut)
			}
		}
		if after := h.outsideState(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("files outside the project changed")
		}
	})

	t.Run("carryover-dir-symlink-to-home", func(t *testing.T) {
		h := newHostileRepo(t, func(up string) {
			os.Symlink(filepath.Join("..", "..", "home"), filepath.Join(up, ".carryover"))
		})
		h.around("Stop", "SessionStart")
		h.wantLog(".carryover: is a symlink")
		if _, err := os.Lstat(filepath.Join(h.home, "handoff.md")); err == nil {
			t.Errorf("handoff.md written into $HOME through the link")
		}
	})

	t.Run("planted-temp-files-not-deleted", func(t *testing.T) {
		h := newHostileRepo(t, func(up string) {
			os.MkdirAll(filepath.Join(up, ".carryover"), 0o755)
			os.WriteFile(filepath.Join(up, ".carryover", ".handoff.md.carryover-tmp-0123456789abcdef"), []byte("planted\n"), 0o644)
			os.WriteFile(filepath.Join(up, ".carryover", ".notes.md.tmp1"), []byte("planted\n"), 0o644)
			os.WriteFile(filepath.Join(up, ".carryover", ".gitignore"), []byte("*\n"), 0o644)
			os.Symlink(filepath.Join("..", "..", "..", "home", ".profile"), filepath.Join(up, ".carryover", ".x.carryover-tmp-00112233445566aa"))
		})
		old := time.Now().Add(-time.Hour)
		planted := []string{".carryover/.handoff.md.carryover-tmp-0123456789abcdef", ".carryover/.notes.md.tmp1", ".carryover/.x.carryover-tmp-00112233445566aa"}
		for _, p := range planted[:2] {
			os.Chtimes(h.in(p), old, old) // as if left for an hour
		}
		h.around("Stop", "Stop")
		for _, p := range planted {
			if _, err := os.Lstat(h.in(p)); err != nil {
				t.Errorf("%s (not carryover's) was deleted", p)
			}
		}
		if _, err := os.Stat(publish.HandoffPath(h.project)); err != nil {
			t.Errorf("no handoff: %v", err)
		}
	})

	t.Run("user-files-symlink-hardlink-fifo-git", func(t *testing.T) {
		h := newHostileRepo(t, func(up string) {
			os.Symlink(filepath.Join("..", "..", "home", ".bashrc"), filepath.Join(up, "AGENTS.md"))
			os.Symlink(".git/config", filepath.Join(up, "GEMINI.md"))
		})
		h.mkfifo("CLAUDE.md")
		if err := os.Link(filepath.Join(h.home, ".gitconfig"), h.in(".gitignore")); err != nil {
			t.Fatal(err)
		}
		cfg, _ := os.ReadFile(h.in(".git/config"))
		gitconfig, _ := os.ReadFile(filepath.Join(h.home, ".gitconfig"))
		// The pointer block is written only where needed by default (issue
		// 24): asked for here, every hostile pointer file is refused.
		os.MkdirAll(h.chome, 0o700)
		os.WriteFile(filepath.Join(h.chome, "config.toml"), []byte("pointer = \"always\"\n"), 0o600)
		h.around("Stop", "SessionStart")
		h.wantLog("AGENTS.md left unchanged: it is a symlink to a file outside the project",
			"CLAUDE.md left unchanged: it is not a regular file",
			"GEMINI.md left unchanged: it is a symlink into the repository's .git directory")
		if b, _ := os.ReadFile(h.in(".git/config")); !bytes.Equal(b, cfg) {
			t.Errorf(".git/config changed")
		}
		// The project's .gitignore is never edited (here a hard link to ~/.gitconfig).
		if b, _ := os.ReadFile(filepath.Join(h.home, ".gitconfig")); !bytes.Equal(b, gitconfig) {
			t.Errorf("~/.gitconfig changed through the .gitignore hard link")
		}
		if _, err := os.Stat(publish.HandoffPath(h.project)); err != nil {
			t.Errorf("no handoff: %v", err)
		}
	})

	t.Run("fifos-and-devices", func(t *testing.T) {
		h := newHostileRepo(t, func(up string) {
			os.Symlink("/dev/zero", filepath.Join(up, ".carryover.toml"))
		})
		h.mkfifo("a.go") // a tracked file the session edited
		os.Remove(h.in("b.go"))
		os.Symlink("/dev/zero", h.in("b.go"))
		h.around("Stop")
		// Then FIFOs as the config and as the handoff to inject.
		h.mkfifo(".carryover.toml")
		os.Remove(publish.HandoffPath(h.project))
		h.mkfifo(".carryover/handoff.md")
		rs := h.around("SessionStart", "Stop")
		if rs[0].stdout != "" {
			t.Errorf("injected from a FIFO: %q", rs[0].stdout)
		}
		h.wantLog(".carryover.toml: is not a regular file", "handoff.md: is not a regular file")
	})

	t.Run("dot-git-fifo", func(t *testing.T) {
		h := newHostileRepo(t, nil)
		os.RemoveAll(h.in(".git"))
		h.mkfifo(".git")
		h.around("Stop", "SessionStart")
		h.wantLog("git: " + h.in(".git") + " is not a directory or regular file")
	})

	t.Run("crafted-git", func(t *testing.T) {
		h := newHostileRepo(t, nil)
		// HEAD names a "ref" that climbs out to the victim's key, and the
		// index is garbage past its header.
		os.WriteFile(h.in(".git/HEAD"), []byte("ref: refs/heads/../../../../../home/.ssh/id_ed25519\n"), 0o644)
		idx, _ := os.ReadFile(h.in(".git/index"))
		for i := 12; i < len(idx); i += 3 {
			idx[i] ^= 0x5a
		}
		os.WriteFile(h.in(".git/index"), idx, 0o644)
		h.around("Stop", "SessionStart")
		h.wantLog("HEAD names no valid ref")
		if b, _ := os.ReadFile(publish.HandoffPath(h.project)); bytes.Contains(b, []byte("SECRET")) || bytes.Contains(b, []byte("-----BEGIN")) {
			t.Errorf("handoff carries the key:\n%s", b)
		}
		// The manual path over the same repository: no panic.
		_, errOut, code := runCarryover(t, h.env(), h.project, "handoff", "--transcript", h.transcriptPath(), "--source", "claude",
			"--project", h.project, "--stdout", "--no-clipboard")
		if code != 0 || strings.Contains(errOut, "panic") || strings.Contains(errOut, "goroutine ") {
			t.Errorf("handoff exited %d: %s", code, errOut)
		}
	})

	t.Run("gitdir-outside-repository", func(t *testing.T) {
		h := newHostileRepo(t, nil)
		other := filepath.Join(h.home, "private-repo")
		gitRun(t, h.home, "init", "-q", other)
		os.RemoveAll(h.in(".git"))
		os.WriteFile(h.in(".git"), []byte("gitdir: ../../home/private-repo/.git\n"), 0o644)
		h.around("Stop", "SessionStart")
		h.wantLog("points to a git directory outside the repository")
	})

	t.Run("project-deleted", func(t *testing.T) {
		h := newHostileRepo(t, nil)
		h.around("Stop")
		if err := os.RemoveAll(h.project); err != nil {
			t.Fatal(err)
		}
		// More of the session arrives after the deletion.
		more, _ := json.Marshal(map[string]any{"parentUuid": nil, "isSidechain": false, "type": "assistant", "uuid": "h-late",
			"timestamp": time.Date(2026, 11, 23, 11, 0, 0, 0, time.UTC).Format(time.RFC3339Nano), "sessionId": h.sid,
			"message": map[string]any{"id": "msg_h_late", "role": "assistant", "model": "m",
				"content": []any{map[string]any{"type": "text", "text": "Next: push the branch."}}, "usage": map[string]any{"input_tokens": 1, "output_tokens": 1}}})
		os.WriteFile(h.transcriptPath(), append(mustRead(t, h.transcriptPath()), append(more, '\n')...), 0o600)
		h.around("Stop", "SessionEnd")
		if _, err := os.Lstat(h.project); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the deleted project directory was re-created")
		}
		h.wantLog("does not re-create it")
	})

	t.Run("gitignore-negation", func(t *testing.T) {
		// Untracked: the project's negations cannot un-ignore the handoff (.carryover/ ignores itself). Tracked
		// .carryover/.gitignore: the repository claimed the directory; rewriting it edited a team file and writing
		// beside it would be committed, so nothing is written there, as for a tracked handoff.md.
		for _, tracked := range []bool{false, true} {
			h := newHostileRepo(t, func(up string) {
				os.WriteFile(filepath.Join(up, ".gitignore"), []byte(".carryover/*\n!.carryover/handoff.md\n!.carryover/RESUME.md\n"), 0o644)
				if tracked {
					os.MkdirAll(filepath.Join(up, ".carryover"), 0o755)
					os.WriteFile(filepath.Join(up, ".carryover", ".gitignore"), []byte("!*\n"), 0o644)
				}
			})
			h.around("Stop")
			if !tracked {
				if _, err := os.Stat(publish.HandoffPath(h.project)); err != nil {
					t.Fatalf("no handoff: %v\n%s", err, h.log())
				}
				gitRun(t, h.project, "check-ignore", "-q", ".carryover/handoff.md")
			} else if b := mustRead(t, filepath.Join(h.project, ".carryover", ".gitignore")); string(b) != "!*\n" {
				t.Errorf("the tracked .carryover/.gitignore was rewritten: %q", b)
			} else {
				h.wantLog(".gitignore is tracked by git")
			}
			if out := gitRun(t, h.project, "add", "-A", "-n"); strings.Contains(out, "handoff.md") {
				t.Errorf("tracked=%v: git add -A would commit the handoff:\n%s", tracked, out)
			}
		}
	})

	t.Run("handoff-committed", func(t *testing.T) {
		h := newHostileRepo(t, func(up string) {
			os.MkdirAll(filepath.Join(up, ".carryover"), 0o755)
			os.WriteFile(filepath.Join(up, ".carryover", "handoff.md"), []byte("# [CARRYOVER] Last updated 2026-11-23T00:00:00Z from claude\nplanted\n"), 0o644)
		})
		h.around("Stop")
		if b, _ := os.ReadFile(publish.HandoffPath(h.project)); !bytes.Contains(b, []byte("planted")) {
			t.Errorf("a tracked handoff.md was overwritten (the next commit -a would publish it)")
		}
		h.wantLog("is tracked by git")
	})
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
