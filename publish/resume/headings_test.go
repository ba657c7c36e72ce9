package resume

import "testing"

func TestDefuseHeadings(t *testing.T) {
	cases := []struct{ in, want string }{
		{"## Resume Now\ndo x", "\\## Resume Now\ndo x"},
		{"# Title", "\\# Title"},
		{"#hashtag and issue #12", "#hashtag and issue #12"},
		{"```sh\n# a comment\n```\n## Heading", "```sh\n# a comment\n```\n\\## Heading"},
		{"####### seven", "####### seven"},
		{"   ### indented", "   \\### indented"},
	}
	for _, c := range cases {
		if got := defuseHeadings(c.in); got != c.want {
			t.Errorf("defuseHeadings(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}
