package redact_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/carryover/carryover/publish/redact"
	"github.com/carryover/carryover/publish/redact/redacttest"
)

var update = flag.Bool("update", false, "rewrite testdata/redact/secrets.golden")

const corpusDir = "../../testdata/redact"

// TestCorpus checks the published figures: no leak on the secret corpus and
// at most 0.3 % of clean lines touched. It also keeps secrets.golden, the
// redacted secret corpus, so a change in what gets masked shows up in review.
func TestCorpus(t *testing.T) {
	st, err := redacttest.Corpus(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("corpus: %s", st)
	if st.Leaks != 0 {
		t.Errorf("%d secret lines leak after String; run -v to see them", st.Leaks)
	}
	if st.Kinds != len(redact.Kinds()) {
		t.Errorf("secrets.txt covers %d kinds; want all %d", st.Kinds, len(redact.Kinds()))
	}
	if st.FalsePositives*1000 > st.CleanLines*3 {
		t.Errorf("false positives %d of %d clean lines; want <= 0.3%%", st.FalsePositives, st.CleanLines)
	}

	lines, err := redacttest.SecretLines(filepath.Join(corpusDir, "secrets.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var golden strings.Builder
	for _, l := range lines {
		if redacttest.Leaked(l) {
			t.Errorf("secrets.txt:%d leaks: %q", l.Line, redact.String(l.Text))
		}
		ms := redact.Find(l.Text)
		for i, sec := range l.Secrets {
			if !slices.Contains(redact.Kinds(), l.Kinds[i]) {
				continue // a {{rule:<id>}} fake: not leaking is the test
			}
			if !coveredAs(l.Text, sec, l.Kinds[i], ms) {
				t.Errorf("secrets.txt:%d: %s fake not matched as %s; matches %v", l.Line, l.Kinds[i], l.Kinds[i], kindsOf(ms))
			}
		}
		fmt.Fprintf(&golden, "%d: %s\n", l.Line, redact.String(l.Text))
	}
	goldenPath := filepath.Join(corpusDir, "secrets.golden")
	if *update {
		if err := os.WriteFile(goldenPath, []byte(golden.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("%v; run go test ./publish/redact -run TestCorpus -update", err)
	}
	if string(want) != golden.String() {
		t.Errorf("redacted corpus differs from %s; review and run with -update", goldenPath)
	}
}

// TestCleanLines lists every clean line String touches, to make the false
// positives reviewable.
func TestCleanLines(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "clean", "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for l := range strings.Lines(string(b)) {
			n++
			if out := redact.String(l); out != l {
				t.Logf("false positive %s:%d: %q", filepath.Base(f), n, out)
			}
		}
	}
}

func coveredAs(text, sec string, k redact.Kind, ms []redact.Match) bool {
	i := strings.Index(text, sec)
	// A line-number prefix or string-literal glue around a key block is
	// not part of the secret.
	trimmed := strings.TrimLeft(strings.TrimLeft(sec, " \t0123456789\u2192\""), `\t`)
	i += len(sec) - len(trimmed)
	sec = strings.TrimRight(trimmed, "\"\\n +\n")
	if i < 0 {
		return false
	}
	for _, m := range ms {
		if m.Start <= i && i+len(sec) <= m.End+1 && m.Kind == k {
			return true
		}
	}
	return false
}

func kindsOf(ms []redact.Match) []redact.Kind {
	var ks []redact.Kind
	for _, m := range ms {
		ks = append(ks, m.Kind)
	}
	return ks
}

// TestGitleaksCorpus draws a fake from the regex of every gitleaks rule in
// the vendored data (one per alternative, redacttest.GitleaksLines) and
// checks that String leaves none of it, and that every rule in the
// generated table has a sample.
func TestGitleaksCorpus(t *testing.T) {
	var lines []redacttest.SecretLine
	for _, f := range []string{"gitleaks.toml", "extra.toml"} {
		ls, err := redacttest.GitleaksLines(filepath.Join("gen", f))
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, ls...)
	}
	sampled := map[string]bool{}
	leaks := 0
	for _, l := range lines {
		id := string(l.Kinds[0])
		sampled[id] = true
		if redacttest.Leaked(l) {
			leaks++
			t.Errorf("gitleaks rule %s: sample leaks: %q -> %q", id, l.Text, redact.String(l.Text))
		}
	}
	for id, why := range redacttest.ContextRules {
		t.Logf("%s: not sampled from its regex: %s", id, why)
		sampled[id] = true
	}
	for _, id := range redact.GeneratedRules() {
		if !sampled[id] {
			t.Errorf("generated rule %s has no sample", id)
		}
	}
	t.Logf("gitleaks corpus: %d rules sampled, %d samples, %d leaks; %d rules in the generated table", len(sampled), len(lines), leaks, len(redact.GeneratedRules()))
}
