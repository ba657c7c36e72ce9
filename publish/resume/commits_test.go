package resume

import (
	"slices"
	"strings"
	"testing"
)

func TestCommitSubjects(t *testing.T) {
	out := "abc1234 fix the retry loop\n\nIt retried forever.\nNow it stops.\n\x1e\n" +
		"def5678 one paragraph message that\ngoes on without a blank line\n\x1e\n" +
		"0123abc " + strings.Repeat("x", 150) + "\n\x1e\n"
	got := CommitSubjects(out)
	want := []string{"abc1234 fix the retry loop", "def5678 one paragraph message that", "0123abc " + strings.Repeat("x", 91) + "…"}
	if !slices.Equal(got, want) {
		t.Errorf("CommitSubjects =\n%q\nwant\n%q", got, want)
	}
}
