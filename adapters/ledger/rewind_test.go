package ledger_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
)

// TestClaudeRewindIncremental: a Claude Code session read as the hook reads it, in two tails split where the user
// rewound (the new branch's first line starts the second tail, so the adapter looks up the line before it): the
// abandoned branch's rows end up abandoned, the distill state folded from them is rebuilt, and the handoff names
// only the live branch. Both fixtures: an Esc-Esc rewind and an edited prompt whose branch starts at an attachment.
func TestClaudeRewindIncremental(t *testing.T) {
	for _, c := range []struct{ file, gone, kept string }{
		{"session-esc-rewind.jsonl", "redis", "5 minute TTL"},
		{"session-edited-prompt.jsonl", "dockerignore", "npm install"},
	} {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("../../testdata/adapters/claude/rewind", c.file))
			if err != nil {
				t.Fatal(err)
			}
			cut := rewindCut(t, data, c.file)
			dir := t.TempDir()
			l, err := ledger.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			tr := filepath.Join(dir, "s.jsonl")
			o := ledger.IngestOptions{Adapter: adapters.Claude, Hook: adapters.Hook{SessionID: "s", TranscriptPath: tr}, Project: "/p", Now: now}
			for _, part := range [][]byte{data[:cut], data} {
				if err := os.WriteFile(tr, part, 0o600); err != nil {
					t.Fatal(err)
				}
				if _, err := ledger.Ingest(l, o); err != nil {
					t.Fatal(err)
				}
				if _, _, err := distill.Refresh(l, "/p", now); err != nil { // the hook's fold, saved between the tails
					t.Fatal(err)
				}
			}
			st, _, err := distill.Refresh(l, "/p", now)
			if err != nil {
				t.Fatal(err)
			}
			h := st.Handoff(distill.Options{Project: "/p"})
			all := strings.ToLower(strings.Join(append([]string{h.Task, h.Latest, h.Next}, h.Done...), "\n"))
			for _, f := range h.Failures {
				all += "\n" + strings.ToLower(f.What+" "+f.Error)
			}
			for _, f := range h.Files {
				all += "\n" + strings.ToLower(f.Path)
			}
			if strings.Contains(all, c.gone) || !strings.Contains(all, strings.ToLower(c.kept)) {
				t.Errorf("handoff should drop %q and keep %q:\n%s", c.gone, c.kept, all)
			}
			s, _ := l.SessionIn("claude", "s", "/p")
			rows, _ := l.Rows(s.ID, 1000)
			abandoned := 0
			for _, r := range rows {
				if r.Kind == adapters.KindAbandoned {
					abandoned++
				} else if strings.Contains(strings.ToLower(r.Text+r.Command+r.FilePath), c.gone) {
					t.Errorf("row %d (%s) of the abandoned branch is live: %q", r.Seq, r.Kind, r.Text)
				}
			}
			if abandoned == 0 {
				t.Error("no row was marked abandoned")
			}
		})
	}
}

// rewindCut is the offset of the line that starts the new branch: the last line whose parentUuid is not the uuid of
// the main-thread line before it (tool results aside).
func rewindCut(t *testing.T, data []byte, name string) int {
	lp := adapters.Claude.(adapters.TailParser)
	parse := lp.TailParser(bytes.NewReader(data), 0)
	off := 0
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		rows, _ := parse(bytes.TrimSuffix(line, []byte("\n")), int64(off))
		if len(rows) > 0 && rows[0].Kind == adapters.KindRewind {
			return off
		}
		off += len(line)
	}
	t.Fatalf("%s has no rewind", name)
	return 0
}
