package adapters_test

import (
	"strings"
	"testing"

	"github.com/carryover/carryover/adapters"
)

// TestClaudeSlug: the project directory names Claude Code itself computes
// (its bundle's sanitizer run under node on these paths, 2.1.330): drive
// letters, UNC shares, non-ASCII (one '-' per UTF-16 unit) and the
// 200-character cut with a base-36 hash.
func TestClaudeSlug(t *testing.T) {
	long := "/home/dev/" + strings.Repeat("very-long-directory-name/", 9) + "proj"
	longWin := `D:\` + strings.Repeat(`Ordner-mit-langem-Namen\`, 9) + "ü"
	for _, tt := range []struct{ dir, want string }{
		{`C:\Users\u\proj`, "C--Users-u-proj"},
		{`\\server\share\proj`, "--server-share-proj"},
		{"/home/dev-a/src/my_proj.v2 x", "-home-dev-a-src-my-proj-v2-x"},
		{"/home/é/😀/p", "-home------p"},
		{long, "-home-dev-" + strings.Repeat("very-long-directory-name-", 7) + "very-long-direc-gy8dsk"},
		{longWin, "D--" + strings.Repeat("Ordner-mit-langem-Namen-", 8) + "Ordne-2dmecu"},
	} {
		if got := adapters.ClaudeSlug(tt.dir); got != tt.want {
			t.Errorf("ClaudeSlug(%q) =\n%q\nwant\n%q", tt.dir, got, tt.want)
		}
	}
}
