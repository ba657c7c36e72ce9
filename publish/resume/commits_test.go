package resume

import (
	"slices"
	"strings"
	"testing"
)

func TestOneLineSubjects(t *testing.T) {
	got := OneLine([]string{"abc1234 fix the retry loop\n\nIt retried forever.\nNow it stops.\n",
		"def5678 one paragraph message that\ngoes on without a blank line\n",
		"0123abc " + strings.Repeat("x", 150) + "\n"})
	want := []string{"abc1234 fix the retry loop", "def5678 one paragraph message that", "0123abc " + strings.Repeat("x", 91) + "…"}
	if !slices.Equal(got, want) {
		t.Errorf("OneLine =\n%q\nwant\n%q", got, want)
	}
}
