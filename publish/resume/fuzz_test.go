package resume

import (
	"strings"
	"testing"
)

// FuzzParse: Parse never panics, and its errors never quote the input.
func FuzzParse(f *testing.F) {
	b, _ := fixtureSession().Marshal()
	f.Add(b)
	y, _ := Structured(fixtureSession()).Encode("yaml")
	f.Add(y)
	f.Add([]byte("version: \"1.0\"\ngoal: g\nnow: n\nstatus: done\n"))
	f.Add([]byte(`{"version":"1.0","source":"x","conversation":{"messages":[{"role":"r","content":"c"}]}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		l, err := Parse(in)
		if err != nil {
			const mark = "SECRETMARK"
			if strings.Contains(string(in), mark) && strings.Contains(err.Error(), mark) {
				t.Fatalf("error quotes the input: %v", err)
			}
			return
		}
		s := l.AsSession()
		if _, err := Build(s, Options{Tokens: 2000}); err != nil {
			if _, ok := err.(*BudgetError); !ok {
				t.Fatal(err)
			}
		}
	})
}
