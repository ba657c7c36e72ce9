package distill

import "testing"

// BenchmarkPhrases is the cost of parsing every lang/ file (once per
// process on the hook path).
func BenchmarkPhrases(b *testing.B) {
	for range b.N {
		out := map[string][]string{}
		ents, _ := langFS.ReadDir("lang")
		for _, e := range ents {
			t, _ := langFS.ReadFile("lang/" + e.Name())
			parseLang(string(t), out)
		}
	}
}
