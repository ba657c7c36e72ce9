package distill

import (
	"reflect"
	"strings"
	"testing"
)

// BenchmarkPhrases is the cost of parsing every lang/ file (once per
// process on the hook path).
func BenchmarkPhrases(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		_ = parseLangs()
	}
}

// TestLangFiles: no line starts or ends in white space beyond ASCII, every phrase is lower case (the rules match lower-cased
// text and parseLang does not lower-case), every list has a heading, and
// no list is empty in every language.
func TestLangFiles(t *testing.T) {
	ents, _ := langFS.ReadDir("lang")
	if len(ents) < 8 {
		t.Fatalf("%d language files, want 8", len(ents))
	}
	for _, e := range ents {
		b, _ := langFS.ReadFile("lang/" + e.Name())
		// The rules that read a decline, a negation or an announced step must read them in every language.
		for _, need := range []string{"[decline_start]", "[negation]", "[intent]", "[offer]", "[assent]", "[back]", "[supersede]", "[next_end]", "[wh]", "[hedge]"} {
			if !strings.Contains(string(b), "\n"+need+"\n") {
				t.Errorf("%s: no %s list", e.Name(), need)
			}
		}
		list := ""
		for i, l := range strings.Split(string(b), "\n") {
			if strings.TrimSpace(l) != strings.Trim(l, " \t\r\v\f") { // parseLangs trims ASCII white space only
				t.Errorf("%s:%d: white space beyond ASCII at the line's start or end", e.Name(), i+1)
			}
			l = strings.TrimSpace(l)
			switch {
			case l == "" || strings.HasPrefix(l, "#"):
			case strings.HasPrefix(l, "["):
				list = l
			case list == "":
				t.Errorf("%s:%d: a phrase before any [list] heading", e.Name(), i+1)
			case strings.ToLower(l) != l:
				t.Errorf("%s:%d: %q is not lower case", e.Name(), i+1, l)
			}
		}
	}
	for _, name := range []string{"refusal", "interrupt", "constraint", "completion", "next", "stop", "contrast", "remaining", "switch", "nudge", "ack"} {
		if len(phrases(name)) == 0 {
			t.Errorf("list %s is empty", name)
		}
	}
}

// TestParseLangsUnchanged: parseLangs gives what the one-pass map parse it
// replaced gave, list by list and in order.
func TestParseLangsUnchanged(t *testing.T) {
	want := map[string][]string{}
	ents, _ := langFS.ReadDir("lang")
	for _, e := range ents {
		b, _ := langFS.ReadFile("lang/" + e.Name())
		list := ""
		for _, l := range strings.Split(string(b), "\n") {
			switch l = strings.TrimSpace(l); {
			case l == "" || l[0] == '#':
			case l[0] == '[' && l[len(l)-1] == ']':
				list = l[1 : len(l)-1]
			case list != "":
				want[list] = append(want[list], strings.ReplaceAll(l, "␣", " "))
			}
		}
	}
	if got := parseLangs(); !reflect.DeepEqual(got, want) {
		t.Fatalf("parseLangs differs from the map parse:\n got %q\nwant %q", got, want)
	}
}
