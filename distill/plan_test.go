package distill

import "testing"

// TestParsePlan: the plan tools' inputs of each agent, and a Claude list
// clipped at the adapters' 2 KB.
func TestParsePlan(t *testing.T) {
	for name, tc := range map[string]struct {
		in   string
		want []PlanItem
	}{
		"claude TodoWrite": {`\n[{"content":"Add button","status":"completed","activeForm":"a"},{"content":"Write serializer","status":"in_progress","activeForm":"b"}]`,
			[]PlanItem{{"Add button", true}, {"Write serializer", false}}},
		"codex update_plan": {`{"explanation":"x","plan":[{"step":"Read the parser","status":"completed"},{"step":"Fix the tokenizer","status":"pending"}]}`,
			[]PlanItem{{"Read the parser", true}, {"Fix the tokenizer", false}}},
		"gemini write_todos": {`{"todos":[{"description":"Draft outline","status":"done"},{"description":"Check churn","status":"pending"}]}`,
			[]PlanItem{{"Draft outline", true}, {"Check churn", false}}},
		"clipped": {`[{"content":"One","status":"completed","activeForm":"o"},{"content":"Two","status":"pending","activeForm":"t"},{"content":"Thr`,
			[]PlanItem{{"One", true}, {"Two", false}}},
	} {
		got, ok := parsePlan(tc.in)
		if !ok || len(got) != len(tc.want) {
			t.Errorf("%s: parsePlan = %+v, %v", name, got, ok)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: item %d = %+v, want %+v", name, i, got[i], tc.want[i])
			}
		}
	}
}
