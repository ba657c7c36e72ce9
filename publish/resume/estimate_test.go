package resume

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// estimatorCorpus is the text the estimator is checked on: the bundled
// transcripts (raw JSON, the worst case), the prose and code they carry,
// and the golden resume prompts (what the estimate is used for).
func estimatorCorpus(t *testing.T) map[string]string {
	t.Helper()
	c := map[string]string{}
	globs := []string{"../../testdata/adapters/*/*.jsonl", "../../testdata/resume/*.md", "../../testdata/resume/*.yaml", "../../testdata/resume/*.json"}
	for _, g := range globs {
		ms, _ := filepath.Glob(g)
		for _, m := range ms {
			b, err := os.ReadFile(m)
			if err != nil {
				t.Fatal(err)
			}
			c[filepath.Base(filepath.Dir(m))+"/"+filepath.Base(m)] = string(b)
		}
	}
	c["synthetic/prompt.md"] = mustBuild(t, fixtureSession(), Options{Tokens: 1 << 30}).Text
	c["synthetic/cjk.txt"] = strings.Repeat("重试逻辑需要指数退避。テストを実行してください。", 40)
	c["synthetic/prose.txt"] = strings.Repeat("Add exponential backoff to retry() and run the tests; the flaky network call in client.go fails about one time in ten. ", 30)
	return c
}

// TestEstimatorAgainstTokenizer compares Estimate with the real
// cl100k_base and o200k_base tokenizers (offline BPE ranks) and logs the
// error. Run with -v to see the table; the README quotes the totals.
func TestEstimatorAgainstTokenizer(t *testing.T) {
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	encs := map[string]*tiktoken.Tiktoken{}
	for _, name := range []string{"cl100k_base", "o200k_base"} {
		e, err := tiktoken.GetEncoding(name)
		if err != nil {
			t.Fatalf("load %s: %v", name, err)
		}
		encs[name] = e
	}
	corpus := estimatorCorpus(t)
	if len(corpus) < 5 {
		t.Fatalf("corpus has %d texts; fixtures missing?", len(corpus))
	}
	totals := map[string]int{}
	var estTotal int
	worstUnder := map[string]float64{}
	for _, name := range sortedKeys(corpus) {
		text := corpus[name]
		est := Estimate(text)
		estTotal += est
		line := name
		for _, en := range []string{"cl100k_base", "o200k_base"} {
			real := len(encs[en].Encode(text, nil, nil))
			totals[en] += real
			errPct := 100 * float64(est-real) / float64(max(real, 1))
			line += " " + en + "=" + itoa(real) + " (" + pct(errPct) + ")"
			if errPct < worstUnder[en] {
				worstUnder[en] = errPct
			}
			// An underestimate overruns the budget: keep it small.
			if errPct < -8 {
				t.Errorf("%s: estimate %d is %.1f%% under %s %d", name, est, -errPct, en, real)
			}
			// o200k_base packs CJK tighter than cl100k_base: allow more there.
			if limit := 25.0; errPct > limit && !(strings.Contains(name, "cjk") && errPct < 50) {
				t.Errorf("%s: estimate %d is %.1f%% over %s %d (too pessimistic)", name, est, errPct, en, real)
			}
		}
		t.Logf("%s est=%d", line, est)
	}
	for _, en := range []string{"cl100k_base", "o200k_base"} {
		t.Logf("TOTAL %s: estimate %d vs %d tokens: %s overall; worst single text %s", en, estTotal, totals[en],
			pct(100*float64(estTotal-totals[en])/float64(totals[en])), pct(worstUnder[en]))
	}
}

func pct(f float64) string {
	s := strings.TrimRight(strings.TrimRight(ftoa(f), "0"), ".")
	if f >= 0 {
		s = "+" + s
	}
	return s + "%"
}
