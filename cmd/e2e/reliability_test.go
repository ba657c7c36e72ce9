package e2e

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"testing"
)

var reportFile = flag.String("report", "", "TestReliabilityReport: also write the figures as markdown to this file")

// TestReliabilityReport produces the README's RELIABILITY figures:
//
//	go test ./cmd/e2e -run TestReliabilityReport -v -report RELIABILITY.md
//
// It runs the fault matrix (unless TestFaultMatrix already ran in this
// process) and the redaction corpus, prints a markdown table with -v, and
// writes it to -report when given.
func TestReliabilityReport(t *testing.T) {
	if faultTally.cases == 0 {
		runMatrix(t)
	}
	rc, err := loadRedactCorpus()
	st := rc.Stats
	if err != nil {
		t.Fatalf("redaction corpus: %v", err)
	}
	ft := &faultTally
	ft.mu.Lock()
	defer ft.mu.Unlock()
	var b bytes.Buffer
	b.WriteString("| Figure | Value |\n|---|---|\n")
	fmt.Fprintf(&b, "| Faults survived (hook exits 0, stdout empty or one valid injection, reason logged, rows exact afterwards) | %d/%d |\n", ft.survived, ft.cases)
	fmt.Fprintf(&b, "| Rows lost (vs. a fresh ingest of the same transcripts; %d rows checked) | %d |\n", ft.expected, ft.lost)
	fmt.Fprintf(&b, "| Duplicate or foreign rows | %d |\n", ft.extra)
	fmt.Fprintf(&b, "| Logs echoing transcript content (%d logs grepped) | %d |\n", ft.logs, ft.echoes)
	fmt.Fprintf(&b, "| Secret kinds covered by the detectors | %d typed + %d rules generated from data (gitleaks' rule file and publish/redact/testdata/extra.toml) |\n", rc.Kinds, rc.Rules)
	fmt.Fprintf(&b, "| Samples drawn from gitleaks' rule regexes (one per alternative, every rule) | %d, %d leaks |\n", len(rc.Gitleaks), rc.GitleaksLeaks)
	fmt.Fprintf(&b, "| Secret kinds exercised by the corpus (%d secret lines) | %d |\n", st.SecretLines, st.Kinds)
	fmt.Fprintf(&b, "| Secret leaks after redaction | %d |\n", st.Leaks)
	rate := 0.0
	if st.CleanLines > 0 {
		rate = 100 * float64(st.FalsePositives) / float64(st.CleanLines)
	}
	fmt.Fprintf(&b, "| False positives on ordinary code and prose | %d of %d lines (%.2f %%) |\n", st.FalsePositives, st.CleanLines, rate)
	if len(ft.failed) > 0 {
		fmt.Fprintf(&b, "\nFaults not survived: %v\n", ft.failed)
	}
	t.Logf("\n%s", b.String())
	if *reportFile != "" {
		if err := os.WriteFile(*reportFile, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if ft.survived != ft.cases || ft.lost != 0 || ft.extra != 0 || st.Leaks != 0 {
		t.Errorf("reliability targets missed: %d/%d faults survived, %d rows lost, %d extra, %d leaks", ft.survived, ft.cases, ft.lost, ft.extra, st.Leaks)
	}
}
