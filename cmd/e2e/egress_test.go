package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// secretLine is one line of publish/redact's measurement corpus, its
// templates expanded to fakes.
type secretLine struct {
	Line    int
	Text    string
	Secrets []string
}

// redactCorpus is that corpus (Lines: testdata/redact/secrets.txt;
// Gitleaks: one sample per alternative of every rule of the generated
// table's data) and its figures, as publish/redact's TestCorpusExport
// writes them.
type redactCorpus struct {
	Lines, Gitleaks []secretLine
	Stats           struct{ Kinds, SecretLines, Leaks, CleanLines, FalsePositives int }
	GitleaksLeaks   int
	Kinds, Rules    int // typed detector kinds, generated rules
}

// loadRedactCorpus runs TestCorpusExport once per process: the corpus has
// one generator, in publish/redact's tests.
var loadRedactCorpus = sync.OnceValues(func() (c redactCorpus, err error) {
	f, err := os.CreateTemp("", "redact-corpus-*.json")
	if err != nil {
		return c, err
	}
	f.Close()
	defer os.Remove(f.Name())
	cmd := exec.Command("go", "test", "-count=1", "-run", "^TestCorpusExport$", ".")
	cmd.Dir = filepath.Join("..", "..", "publish", "redact")
	cmd.Env = append(os.Environ(), "CARRYOVER_REDACT_CORPUS="+f.Name())
	if out, err := cmd.CombinedOutput(); err != nil {
		return c, fmt.Errorf("publish/redact TestCorpusExport: %v\n%s", err, out)
	}
	b, err := os.ReadFile(f.Name())
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	return c, err
})

// markers are the "[REDACTED:<kind>]" markers (lower-cased in the ledger's
// search text), whose kind names may share 12 bytes with a secret.
var markers = regexp.MustCompile(`\[(?i:redacted):[^\]]*\]`)

// egressTranscript is a Claude transcript in which one secret-bearing line
// is the task, a failing command and its error, a decision and the next
// step — so every egress would carry it if redaction missed it.
func egressTranscript(sid, text string) string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	lines := []string{
		`{"type":"user","uuid":"u1","sessionId":"` + sid + `","timestamp":"2026-11-21T08:00:00Z","promptSource":"sdk","message":{"role":"user","content":` + q("Deploy the service with this config: "+text) + `}}`,
		`{"type":"assistant","uuid":"a1","sessionId":"` + sid + `","timestamp":"2026-11-21T08:00:01Z","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":` + q("deploy --config '"+text+"'") + `}}]}}`,
		`{"type":"user","uuid":"u2","sessionId":"` + sid + `","timestamp":"2026-11-21T08:00:02Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":` + q("Exit code 1\nerror: rejected "+text) + `}]}}`,
		`{"type":"assistant","uuid":"a2","sessionId":"` + sid + `","timestamp":"2026-11-21T08:00:03Z","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":` + q("We decided to use the staging key because "+text+". Next I will retry with "+text+".") + `}]}}`,
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestSecretEgress runs every line of the seeded secret corpus (every
// detector kind, the command-line and prose forms, key blocks behind line
// numbers or cut before their END line) through the hook path and the manual
// path and counts leaks at each egress: handoff.md (project and global), the
// SessionStart injection, AGENTS.md/CLAUDE.md, carryover.log, the ledger
// file and its WAL, RESUME.md/.yaml/.json, the handoff stdout, capture's
// session.json and stdout, list --json and status --json. Target: 0. A
// control run with `redact = false` proves the secrets do reach those
// egresses when redaction is off.
func TestSecretEgress(t *testing.T) {
	rc, err := loadRedactCorpus()
	if err != nil {
		t.Fatal(err)
	}
	lines := rc.Lines
	leaks := map[string]int{}
	check := func(egress, content string, secrets []string) {
		content = markers.ReplaceAllString(content, "")
		for _, s := range secrets {
			w := min(12, len(s))
			for i := 0; i+w <= len(s); i++ {
				if j := strings.Index(content, s[i:i+w]); j >= 0 {
					if os.Getenv("EGRESS_DEBUG") != "" {
						t.Logf("%s: %q", egress, content[max(0, j-80):min(len(content), j+60)])
					}
					leaks[egress]++
					return
				}
			}
		}
	}
	run := func(t *testing.T, l secretLine, redactOn bool) map[string]string {
		return egressRun(t, fmt.Sprintf("egress-%d", l.Line), redactOn, func(sid string) string { return egressTranscript(sid, l.Text) })
	}
	// Control: without redaction the secret reaches the handoff and the injection.
	ctl := run(t, lines[0], false)
	if len(ctl) != egresses {
		t.Fatalf("egressRun collected %d outputs; egresses says %d", len(ctl), egresses)
	}
	if !strings.Contains(ctl["handoff.md"], lines[0].Secrets[0]) || !strings.Contains(strings.ReplaceAll(ctl["injection"], `\u0026`, "&"), lines[0].Secrets[0][:8]) {
		t.Fatalf("control run: the secret did not reach handoff.md/injection with redact = false, so this test would prove nothing")
	}
	for _, l := range lines {
		for egress, content := range run(t, l, true) {
			check(egress, content, l.Secrets)
		}
	}
	// One sample per alternative of every rule in the generated table's
	// data (publish/redact/testdata: gitleaks.toml and extra.toml), six to a transcript.
	gl := rc.Gitleaks
	for i := 0; i < len(gl); i += 6 {
		batch := gl[i:min(i+6, len(gl))]
		var texts, secrets []string
		for _, l := range batch {
			texts = append(texts, l.Text)
			secrets = append(secrets, l.Secrets...)
		}
		text := strings.Join(texts, " ; ")
		for egress, content := range egressRun(t, fmt.Sprintf("egress-gitleaks-%d", i), true, func(sid string) string { return egressTranscript(sid, text) }) {
			check(egress, content, secrets)
		}
	}
	total := 0
	for egress, n := range leaks {
		t.Errorf("%s leaked %d of %d secret lines", egress, n, len(lines)+len(gl))
		total += n
	}
	t.Logf("%d secret lines and %d gitleaks rule samples × %d egresses: %d leaks", len(lines), len(gl), egresses, total)
}

// egresses is how many outputs egressRun collects.
const egresses = 16

// egressRun writes the transcript made by tr, runs the Stop and SessionStart
// hooks, handoff (md, yaml, json), capture, list --json and status --json
// on it, and returns every output carryover produced, by egress name.
func egressRun(t *testing.T, sid string, redactOn bool, tr func(sid string) string) map[string]string {
	// Removed as soon as its outputs are read: TestSecretEgress makes ~340
	// of these (~0.56 MB each, mostly the ledger), which held 192 MB of
	// TMPDIR until the test's end.
	root := t.TempDir()
	defer os.RemoveAll(root)
	home, project := filepath.Join(root, "home"), filepath.Join(root, "proj")
	os.MkdirAll(project, 0o755)
	os.MkdirAll(filepath.Join(home, ".carryover"), 0o700)
	if !redactOn {
		os.WriteFile(filepath.Join(home, ".carryover", "config.toml"), []byte("redact = false\n"), 0o600)
	}
	path := filepath.Join(root, sid+".jsonl")
	os.WriteFile(path, []byte(tr(sid)), 0o600)
	env := []string{"HOME=" + home, "CARRYOVER_HOME=" + filepath.Join(home, ".carryover"), "CLAUDE_PROJECT_DIR=" + project, "PATH=" + os.Getenv("PATH")}
	runHook(t, env, "claude", "Stop", map[string]any{"session_id": sid, "transcript_path": path, "cwd": project})
	inj := runHook(t, env, "claude", "SessionStart", map[string]any{"session_id": sid + "-next", "transcript_path": path + ".next", "cwd": project, "source": "startup"})
	out := map[string]string{"injection": inj.Stdout}
	sel := []string{"--transcript", path, "--source", "claude", "--project", project}
	out["handoff stdout"], _, _ = runCarryover(t, env, project, append([]string{"handoff", "--stdout", "--no-clipboard"}, sel...)...)
	for _, f := range []string{"yaml", "json"} {
		runCarryover(t, env, project, append([]string{"handoff", "--no-clipboard", "--format", f}, sel...)...)
	}
	out["capture stdout"], _, _ = runCarryover(t, env, project, append([]string{"capture", "--stdout"}, sel...)...)
	out["list --json"], _, _ = runCarryover(t, env, project, "list", "--json", "--all")
	out["status --json"], _, _ = runCarryover(t, env, project, "status", "--json")
	for name, p := range map[string]string{
		"handoff.md": filepath.Join(project, ".carryover", "handoff.md"), "global handoff.md": filepath.Join(home, ".carryover", "handoff.md"),
		"AGENTS.md": filepath.Join(project, "AGENTS.md"), "CLAUDE.md": filepath.Join(project, "CLAUDE.md"),
		"carryover.log": filepath.Join(home, ".carryover", "carryover.log"), "RESUME.md": filepath.Join(project, ".carryover", "RESUME.md"),
		"RESUME.yaml": filepath.Join(project, ".carryover", "RESUME.yaml"), "RESUME.json": filepath.Join(project, ".carryover", "RESUME.json"),
		"session.json": filepath.Join(project, ".carryover", "session.json"), "ledger": filepath.Join(home, ".carryover", "ledger.sqlite"),
		"ledger WAL": filepath.Join(home, ".carryover", "ledger.sqlite-wal"),
	} {
		b, _ := os.ReadFile(p)
		out[name] = string(b)
	}
	return out
}

// TestSecretEgressClippedRead is the regression test for a key cut in half
// by the 2 KB clip of a tool result: Claude's Read shows a private key
// behind line numbers ("    12→MIIE..."), starting 1.5 KB into the
// result so that the clip falls inside it. Before redaction ran on the whole
// text, the half before the cut had no END line and the line numbers broke
// its body, so 20 key lines reached the ledger, RESUME.md and session.json.
// No line of the key may reach any egress; the part of the file before the
// key must (the clip still keeps what it can).
func TestSecretEgressClippedRead(t *testing.T) {
	var key strings.Builder
	key.WriteString("-----BEGIN RSA " + "PRIVATE KEY-----\n")
	var keyLines []string
	for i := range 25 {
		l := fmt.Sprintf("MIIEow%02dIBAAKCAQEAx4Gd0JmQk9Zq9Ab3Xy7Lp2Wv8Rt5Nm1Ks6Hj4Df0Gh3Cb9Ve2Tu7Yi%02d", i, i)
		keyLines = append(keyLines, l)
		key.WriteString(l + "\n")
	}
	key.WriteString("-----END RSA " + "PRIVATE KEY-----\n")
	var file strings.Builder
	n := 0
	line := func(s string) { n++; fmt.Fprintf(&file, "%6d\u2192%s\n", n, s) }
	for file.Len() < 1500 {
		line(fmt.Sprintf("# deploy notes, step %d: build, push, roll out", n))
	}
	for l := range strings.Lines(key.String()) {
		line(strings.TrimSuffix(l, "\n"))
	}
	for range 40 {
		line("# after the key")
	}
	tr := func(sid string) string {
		q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		return strings.Join([]string{
			`{"type":"user","uuid":"u1","sessionId":"` + sid + `","timestamp":"2026-11-21T08:00:00Z","promptSource":"sdk","message":{"role":"user","content":"Check the deploy key file and fix the rollout"}}`,
			`{"type":"assistant","uuid":"a1","sessionId":"` + sid + `","timestamp":"2026-11-21T08:00:01Z","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/srv/deploy/notes.txt"}}]}}`,
			`{"type":"user","uuid":"u2","sessionId":"` + sid + `","timestamp":"2026-11-21T08:00:02Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":` + q(file.String()) + `}]}}`,
			`{"type":"assistant","uuid":"a2","sessionId":"` + sid + `","timestamp":"2026-11-21T08:00:03Z","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"Next I will rotate the deploy key."}]}}`,
		}, "\n") + "\n"
	}
	out := egressRun(t, "clipped-read", true, tr)
	for egress, content := range out {
		for i, l := range keyLines {
			if strings.Contains(content, l[:12]) || strings.Contains(content, l[len(l)-12:]) {
				t.Errorf("%s: key line %d leaked", egress, i+1)
			}
		}
	}
	if !strings.Contains(out["ledger"]+out["ledger WAL"], "deploy notes, step 3") {
		t.Errorf("the text before the key did not reach the ledger: the clip dropped more than the key")
	}
}
